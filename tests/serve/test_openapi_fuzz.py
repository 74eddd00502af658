"""OpenAPI fuzz (schemathesis) of a real `saksi serve`: the published /openapi.json is a contract.

A client generated from the schema must never see a 5xx, an undocumented status code or content type,
or a body the documented response model does not describe; a request the schema allows must not be
rejected, and one it forbids must be (negative data).

Run as a subprocess with its own Ray, so the server is exactly what `saksi serve` starts and cannot
share state with the Ray cluster the other tests in this directory run in process.

Bounds (this must stay cheap on a 2-core machine):
- fuzzing phase: MAX_EXAMPLES generated cases per operation, derandomized (same cases every run), no
  Hypothesis database (nothing replayed from earlier runs); plus schemathesis's deterministic
  coverage phase (boundary and schema-violating values of every field);
- a generated question longer than QUESTION_LIMIT characters but within the schema's 2,000 is dropped:
  answering one takes seconds (2,000 characters: ~9 s) and exercises nothing the API layer would
  not see with a short one; longer than 2,000 is kept (it must be rejected, quickly, with a 4xx);
- half of the schema-valid questions (even length) are asked of collection "default": a generated
  collection name is never the one this deployment serves, so otherwise every valid question would
  end in 404 and no answer body would be checked;
- the operations that write (ingest, delete) are fuzzed too, never into the collection the others read:
  a schema-valid case on a collection route is sent to the throwaway collection FUZZ_COLLECTION, and the
  routes of the default collection are called with a curator key of FUZZ_COLLECTION only (a 403 there,
  documented); `test_an_upload_and_its_deletion_are_validated` validates the 200 bodies of both;
- every request has a REQUEST_TIMEOUT_S timeout.

Every distinct failure (operation, check, status) is collected instead of stopping at the first, and
`test_schema_and_server_agree` reports them all, each with its first reproducing request.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
import schemathesis
from schemathesis import GenerationMode
from schemathesis.errors import FailureGroup

from ..conftest import ROOT, SAMPLE
from .conftest import free_port

pytestmark = pytest.mark.integration

MAX_EXAMPLES = 30          # fuzzing-phase cases per operation
QUESTION_LIMIT = 200       # characters; see the module docstring
REQUEST_TIMEOUT_S = 30     # per HTTP call (the lite ingress answers a refusal at its own 30 s deadline)
READY_TIMEOUT_S = 180      # Ray + every deployment on a slow 2-core machine
START_ATTEMPTS = 2         # a loaded machine can make Ray's own start-up time out (as in conftest.start_ray)
STOP_TIMEOUT_S = 60        # graceful SIGTERM (serve.shutdown, ray.shutdown), then SIGKILL of the group
CHECKS = [                 # explicit, so a schemathesis upgrade cannot silently change what is asserted
    "not_a_server_error", "status_code_conformance", "content_type_conformance",
    "response_schema_conformance", "response_headers_conformance",
    "positive_data_acceptance", "negative_data_rejection",
    "unsupported_method", "allow_header_conformance", "missing_required_header",
]
# the operations that write into a collection, or take documents out of it: see the module docstring
WRITES = {"POST /v1/ingest", "POST /v1/collections/{name}/ingest", "DELETE /v1/documents/{doc_id}",
          "DELETE /v1/collections/{name}/documents/{doc_id}"}
FUZZ_COLLECTION = "fuzz"
RATE_FOR_FUZZ = {"rate_per_minute": 10_000_000, "rate_burst": 1_000_000,  # one key sends every case
                 "answer_units_per_minute": 10_000_000, "answer_units_burst": 1_000_000}


def _saksi() -> list[str]:
    """The venv's `saksi` script (what a user runs); the module when the script is not installed."""
    script = Path(sys.executable).with_name("saksi")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "serve.cli"]


def _tail(path: Path, n: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError as e:
        return f"(no log: {e})"


def _ready(base: str, token: str) -> bool:
    try:
        req = urllib.request.Request(base + "/readyz", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="module")
def saksi_server(tmp_path_factory):
    """`saksi ingest` + `saksi keys create` + `saksi serve` as subprocesses on a fresh corpus, its
    per-key rate raised (one key sends every case: SAKSI_CONFIG_DIR points at a copy of configs/);
    yields the base URL, an admin key and a curator key of FUZZ_COLLECTION only.

    The child gets its own RAY_TMPDIR and no RAY_ADDRESS: its `ray.init()` must start a private local
    cluster, never join the one `start_ray` runs in this process (or any other on the machine).
    """
    root = tmp_path_factory.mktemp("openapi-fuzz")
    data, log_path = root / "data", root / "serve.log"
    # short path: Ray puts unix sockets under it (108-byte limit), so not under pytest's tmp dir
    ray_tmp = tempfile.mkdtemp(prefix="saksi-fuzz-ray-")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    configs = root / "configs"
    shutil.copytree(ROOT / "configs", configs)
    serve_cfg = configs / "serve" / "lite.yaml"
    text = serve_cfg.read_text()
    for name, value in RATE_FOR_FUZZ.items():
        text, n = re.subn(rf"(?m)^(\s*{name}:)\s*\S+", rf"\g<1> {value}", text)
        assert n == 1, f"{name} not in {serve_cfg}"
    serve_cfg.write_text(text)
    env.update(RAY_TMPDIR=ray_tmp, PYTHONUNBUFFERED="1", RAY_raylet_start_wait_time_s="120",
               SAKSI_CONFIG_DIR=str(configs))

    try:
        ingest = subprocess.run([*_saksi(), "ingest", str(SAMPLE), "--data-dir", str(data)], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=300)
        if ingest.returncode != 0:
            pytest.fail(f"saksi ingest exited {ingest.returncode}:\n{(ingest.stdout + ingest.stderr)[-4000:]}")
        keys = subprocess.run([*_saksi(), "keys", "create", "--role", "admin", "--data-dir", str(data)], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=60)
        assert keys.returncode == 0, keys.stderr
        token = keys.stdout.strip()
        keys = subprocess.run([*_saksi(), "keys", "create", "--role", "curator", "--collection", FUZZ_COLLECTION,
                               "--data-dir", str(data)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert keys.returncode == 0, keys.stderr
        writer = keys.stdout.strip()
        for attempt in range(1, START_ATTEMPTS + 1):
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            # own process group: if SIGTERM is not enough, SIGKILL reaches the Ray processes it started too
            with open(log_path, "wb") as log:
                proc = subprocess.Popen([*_saksi(), "serve", "--data-dir", str(data), "--port", str(port)],
                                        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
            try:
                problem = _wait_ready(base, proc, token)
                if problem is None:
                    yield base, token, writer
                    return
                # Ray's own start-up races on a busy machine ("timed out during startup", "Timed out
                # waiting for file …/gcs_server_port…"): those, and only those, get another start
                if attempt == START_ATTEMPTS or not _RAY_START_RACE.search(_tail(log_path)):
                    pytest.fail(f"{problem}; log {log_path}:\n{_tail(log_path)}")
            finally:
                _stop(proc)
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)


_RAY_START_RACE = re.compile(r"timed out during startup|Timed out waiting for file .*gcs_server_port")


def _wait_ready(base: str, proc: subprocess.Popen, token: str) -> str | None:
    """None once /readyz is 200, else why not."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not _ready(base, token):
        if proc.poll() is not None:
            return f"saksi serve exited {proc.returncode} before /readyz was 200"
        if time.monotonic() > deadline:
            return f"/readyz not 200 after {READY_TIMEOUT_S} s"
        time.sleep(1)
    return None


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM (the CLI shuts Serve and Ray down), then SIGKILL to its process group."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_TIMEOUT_S)
            return
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)   # Ray processes left behind by a crash or a kill
    except ProcessLookupError:
        pass
    proc.wait(30)


@pytest.fixture(scope="module")
def api_schema(saksi_server):
    """The schema as the running server publishes it, with this module's bounds and checks."""
    base = saksi_server[0]
    schema = schemathesis.openapi.from_url(base + "/openapi.json", config=schemathesis.Config())
    schema.config.update(base_url=base, request_timeout=REQUEST_TIMEOUT_S)
    schema.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
                                    max_examples=MAX_EXAMPLES, deterministic=True, database="none")
    schema.config.phases.update(phases=["examples", "coverage", "fuzzing"])
    schema.config.checks.update(included_check_names=CHECKS)

    @schema.hook
    def filter_case(context, case):
        """Drop schema-length questions over QUESTION_LIMIT (slow to answer, nothing new to the API)."""
        body = case.body
        question = body.get("question") if isinstance(body, dict) else None
        return not (isinstance(question, str) and QUESTION_LIMIT < len(question) <= 2000)

    @schema.hook
    def map_case(context, case):
        """Ask half the schema-valid questions of the collection that exists; send every schema-valid write on a
        collection route to the throwaway collection (see the module docstring)."""
        body = case.body
        positive = case.meta is not None and case.meta.generation.mode is GenerationMode.POSITIVE
        if (positive and isinstance(body, dict) and isinstance(body.get("question"), str)
                and len(body["question"]) % 2 == 0 and "collection" in body):
            body["collection"] = "default"
        if positive and case.operation.label in WRITES and "name" in (case.path_parameters or {}):
            case.path_parameters["name"] = FUZZ_COLLECTION
        return case

    return schema


@dataclass
class Finding:
    operation: str
    code: str
    check: str
    title: str
    status: int
    report: str       # schemathesis's report of the first case: failure, response, curl to reproduce
    count: int = 1


@dataclass
class Findings:
    session: requests.Session = field(default_factory=requests.Session)
    cases: Counter = field(default_factory=Counter)               # operation -> cases sent
    found: dict[tuple[str, str, int], Finding] = field(default_factory=dict)

    def validate(self, case, response) -> None:
        """Count the case and run the checks on its response; failures are recorded, not raised."""
        self.cases[case.operation.label] += 1
        try:
            case.validate_response(response)
        except FailureGroup as group:
            self.record(case.operation.label, response.status_code, group)

    def record(self, operation: str, status: int, group: FailureGroup) -> None:
        for failure in group.exceptions:
            key = (operation, failure.code, status)
            if key in self.found:
                self.found[key].count += 1
            else:
                self.found[key] = Finding(operation, failure.code, ",".join(failure.checks), failure.title,
                                          status, group.message.strip())


@pytest.fixture(scope="module")
def findings(saksi_server):
    f = Findings()
    f.session.headers["Authorization"] = f"Bearer {saksi_server[1]}"  # every case as an admin
    yield f
    f.session.close()


@pytest.fixture(autouse=True)
def _node_id_for_schemathesis(request):
    """schemathesis 4.32's lazy schema reads `request.node._nodeid`, which pytest 9.2 no longer has
    (it is `nodeid`, read-only): give it the attribute so `from_fixture` works."""
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
def test_generated_cases(case, findings, saksi_server):
    """One subtest per operation; a failing check is recorded (not raised) so every operation gets its
    full budget and every distinct disagreement is found in one run. A write on the default collection's routes
    goes with the throwaway collection's curator key (refused 403: nothing the other operations read changes)."""
    default_write = case.operation.label in WRITES and "{name}" not in case.operation.path
    headers = {"Authorization": f"Bearer {saksi_server[2]}"} if default_write else None
    findings.validate(case, case.call(session=findings.session, headers=headers))


def test_an_upload_and_its_deletion_are_validated(api_schema, findings):
    """Generated uploads are rarely documents and generated ids never exist, so the 200 bodies of ingest and delete
    are checked here: one Markdown file into the throwaway collection, then its deletion, both validated."""
    doc = "fuzz-catatan"
    content = (f"---\nid: {doc}\ntitle: Catatan uji fuzz\ndoc_type: guidance\nlang: id\n---\n\n"
               "1. Catatan ini hanya dipakai oleh uji skema dan dihapus lagi sesudahnya.\n")
    upload = api_schema["/v1/collections/{name}/ingest"]["POST"].Case(
        path_parameters={"name": FUZZ_COLLECTION}, body={"files": [{"name": f"{doc}.md", "content": content}]})
    response = upload.call(session=findings.session)
    findings.validate(upload, response)
    assert response.status_code == 200 and response.json()["ingested"], response.text[:1000]
    delete = api_schema["/v1/collections/{name}/documents/{doc_id}"]["DELETE"].Case(
        path_parameters={"name": FUZZ_COLLECTION, "doc_id": doc})
    response = delete.call(session=findings.session)
    findings.validate(delete, response)
    assert response.status_code == 200 and response.json()["doc_id"] == doc, response.text[:1000]


def test_recorded_answer_trace_and_replay(api_schema, findings):
    """Generated trace ids never exist, so the 200 bodies of the trace and replay operations are only
    checked here: answer one real question, then fetch and replay its trace, all validated."""
    answer = api_schema["/v1/answer"]["POST"].Case(
        body={"question": "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"})
    calls = [answer]
    response = answer.call(session=findings.session)
    trace_id = response.json().get("trace_id") if response.status_code == 200 else None
    if trace_id:
        calls += [api_schema["/v1/traces/{trace_id}"]["GET"].Case(path_parameters={"trace_id": trace_id}),
                  api_schema["/v1/replay"]["POST"].Case(body={"trace_id": trace_id})]
    for n, case in enumerate(calls):
        if n:
            response = case.call(session=findings.session)
        findings.validate(case, response)
    assert trace_id, f"POST /v1/answer gave no trace id: {response.status_code} {response.text[:500]}"
    assert response.status_code == 200, f"replay of {trace_id}: {response.status_code} {response.text[:500]}"


# Requests on edges that generation reaches only by chance: (method, path, path parameters, body).
EDGES = [
    ("POST", "/v1/answer", None, {"question": " "}),                                          # blank, length 1
    ("POST", "/v1/answer", None, {"question": "Tarif PPh sewa?", "options": {"include_trace": 0}}),
    ("POST", "/v1/answer", None, {"question": "Tarif PPh sewa?", "options": {"include_trace": "true"}}),
    ("GET", "/v1/traces/{trace_id}", {"trace_id": "0"}, None),                               # not 32 hex digits
    ("POST", "/v1/replay", None, {"trace_id": "0"}),
]


def _schema_violations(raw: dict, method: str, path: str, params: dict | None, body) -> list[str]:
    """Why the published schema forbids this request (empty: it allows it)."""
    from jsonschema import Draft202012Validator

    op = raw["paths"][path][method.lower()]
    parts = [(p["schema"], params[p["name"]], f"path {p['name']}") for p in op.get("parameters", [])
             if p["in"] == "path"]
    if body is not None:
        parts.append((op["requestBody"]["content"]["application/json"]["schema"], body, "body"))
    return [f"{where} {e.json_path}: {e.message}" for sub, value, where in parts
            for e in Draft202012Validator({**sub, "components": raw["components"]}).iter_errors(value)]


@pytest.mark.parametrize("method,path,params,body", EDGES,
                         ids=[f"{m} {p} {pp or b}" for m, p, pp, b in EDGES])
def test_edge_request_agrees_with_schema(saksi_server, api_schema, findings, method, path, params, body):
    """The server rejects (400/422) a request exactly when the schema it publishes forbids it."""
    violations = _schema_violations(api_schema.raw_schema, method, path, params, body)
    url = saksi_server[0] + path.format(**(params or {}))
    response = findings.session.request(method, url, json=body, timeout=REQUEST_TIMEOUT_S)
    rejected = response.status_code in (400, 422)
    assert rejected == bool(violations), (
        f"{method} {url} {body if body is not None else ''} -> {response.status_code} {response.text[:300]}; "
        f"schema: {'forbids it (' + '; '.join(violations) + ')' if violations else 'allows it'}")


def test_schema_and_server_agree(api_schema, findings):
    """Fails with every distinct (operation, check, status) the cases above found."""
    methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
    expected = {f"{m.upper()} {path}" for path, item in api_schema.raw_schema["paths"].items()
                for m in item if m in methods}
    assert set(findings.cases) == expected, (
        f"operations without cases: {sorted(expected - set(findings.cases))} (run the whole module)")
    if findings.found:
        lines = [f"{len(findings.found)} distinct failures in {sum(findings.cases.values())} cases "
                 f"({dict(findings.cases)}):"]
        for f in sorted(findings.found.values(), key=lambda f: (f.operation, f.code, f.status)):
            lines.append(f"\n=== {f.operation}: {f.code} {f.title} [{f.check}] -> {f.status} "
                         f"({f.count} case{'s' if f.count > 1 else ''})\n{f.report}")
        pytest.fail("\n".join(lines), pytrace=False)
