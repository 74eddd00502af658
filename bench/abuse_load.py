"""Normal users' latency with and without an abusive caller: a locust load run on 127.0.0.1.

One `saksi serve` (lite profile) over corpus/sample, started here as a subprocess on a free
loopback port, then phases of the same length, run with locust's library API (headless,
in this process, gevent greenlets):

- A: N normal users (default 4), each with a reader key of its own (separate clients, separate
  rate-limit buckets), asking a rotating set of real questions about the sample corpus
  (POST /v1/answer) with 2–4 s of think time: about 20 questions a minute each, inside the answer
  budget's 30 units a minute (a plain answer costs ~1.2), so a normal user is never refused for its
  own use;
- B_questions, B_references, B_uploads: the same number of normal users plus one attacker alone
  (`--attack each`, the default), then B_all: all three at once. Every phase has fresh keys, the
  attackers' too, so each starts with full budgets as phase A did. The attackers (one of each kind
  by default, `--attackers N`) are paced at about the per-key rate limit, 600/min:
  - `QuestionAttacker` (its own reader key): questions of 500 characters, one long part (the
    costliest question accepted: full pipeline), the costly "1,"×249 (little text, much work: charged by
    its measured work since issue 27) and the sample questions glued together (many
    parts: refused 422 `too_many_parts`, cheaply), of 2,500 and 20,000 characters (422), and
    requests without a key (401);
  - `ReferenceBombReader` (the attacker's reader key): the evidence view and document page of the
    reference bomb (`reference_bomb()`: the densest regulation one upload may add, ~4,000
    cross-references, uploaded by the curator attacker before phase A), as fast as the key's
    request rate allows;
  - `UploadAttacker` (a curator key): 80 KB uploads of blanks and whitespace, ~1.9 MB uploads of
    real-looking text (under the 2,000,000-byte cap, parsed, but past the 300 passages one upload
    may add: skipped, not embedded), and ~100 MB
    bodies, with Content-Length and chunked (must be 413 before the body is read; the client
    stops sending as soon as a response arrives). Uploads time out client-side after 20 s and
    the attacker moves on (Ray Serve then cancels the request, the Embedder calls included).

Reported per phase: normal users' request count, p50/p95/max latency (every normal request,
whatever its status; a client timeout counts at its elapsed time) and counts by status; the
attackers' requests by kind and status; status 500 across everything; each B phase's p95 over
phase A's. The target (issue 27: an attacker inside its budgets cannot raise another key's p95
more than 2×) is each attacker alone at most 2×, met only if no normal request was refused (a
refusal is fast and would pull p95 down); all three at once is reported beside it (three keys'
budgets add up: what they may take together is a capacity question, not one key's budget). The machine's load average is recorded before each phase: on a shared,
noisy machine compare the ratio, and rerun before trusting a single number.

It is a measurement, not a test: it exits nonzero only when some response was a 500 or the
server died (or could not be set up). The server is always stopped (SIGTERM to its process
group, then SIGKILL to whatever of its session is left) and the temp dir removed.

    .venv/bin/python bench/abuse_load.py [--users 4] [--attackers 1] [--seconds 75]
                                         [--attack each|all|questions|references|uploads]
                                         [--out bench/results/abuse_load.json]

About 8 minutes with the defaults on a 2-core machine (ingest and server start ~20 s, the
reference bomb's upload ~60 s, five 75 s phases, shutdown).
"""
from __future__ import annotations

# locust monkey-patches the standard library for gevent when imported: import it first
import locust  # noqa: I001
from locust import HttpUser, between, task
from locust.env import Environment

import argparse
import http.client
import itertools
import json
import logging
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from pathlib import Path

import gevent
from served_process import free_port, get, pct, stop_server, wait_ready

ROOT = Path(__file__).resolve().parent.parent
SAKSI = ROOT / ".venv" / "bin" / "saksi"
CORPUS = ROOT / "corpus" / "sample"

QUESTIONS = [
    "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?",
    "What is the penalty for filing the SPT Masa late?",
    "Berapa tarif bea masuk untuk impor mobil listrik?",  # not in the corpus: a refusal
    "Kapan Pajak Penghasilan atas sewa wajib disetor?",
    "Kapan entitas mengakui pendapatan dari kontrak dengan pelanggan?",
    "How are lease payments presented in the statement of cash flows?",
]
MAX_QUESTION_CHARS = 500
MAX_UPLOAD_BYTES = 2_000_000
NORMAL_TIMEOUT_S = 60
NORMAL_THINK_S = (2.0, 4.0)  # ~20 questions a minute: inside one key's answer budget
UPLOAD_TIMEOUT_S = 20
MIB = 1024 * 1024


def long_question(n: int) -> str:
    """The sample questions glued together: many parts (refused past `limits.max_parts`)."""
    base = " ".join(QUESTIONS) + " "
    return (base * (n // len(base) + 1))[:n - 1] + "?"


_WORDS = ("berapa tarif pajak penghasilan atas persewaan tanah bangunan gedung kantor gudang rumah toko apartemen "
          "yang dibayar oleh penyewa badan usaha koperasi yayasan bentuk usaha tetap kepada pemilik orang pribadi "
          "menurut peraturan menteri keuangan terbaru termasuk sanksi denda keterlambatan pelaporan surat "
          "pemberitahuan masa").split()


def one_part_question(n: int) -> str:
    """One long question (no part boundary) of about `n` characters: the costliest one accepted."""
    words, i = [], 0
    while len(" ".join(words)) < n - 12:
        words.append(_WORDS[i % len(_WORDS)])
        i += 1
    return " ".join(words) + "?"


def big_document(size: int) -> str:
    """~`size` bytes of Markdown that looks like a regulation: the sample corpus's paragraphs,
    numbered, so nothing is a duplicate."""
    paras = []
    for f in sorted(CORPUS.glob("*.md")):
        text = f.read_text(encoding="utf-8")
        if text.startswith("---"):
            text = text.split("---", 2)[2]
        paras += [p.strip() for p in text.split("\n\n") if p.strip() and not p.lstrip().startswith("#")]
    out, total = ["# Dokumen Ilustratif Besar\n"], 0
    for i in itertools.count():
        part = f"## Pasal {i + 1}\n\n{paras[i % len(paras)]} (salinan {i + 1})\n"
        if total + len(part.encode()) > size:
            break
        out.append(part)
        total += len(part.encode())
    return "\n".join(out)


BOMB_ID = "rujukan-padat"


def reference_bomb() -> str:
    """The densest regulation an upload may add (`pipeline.eval.poisoning.densest_regulation`: 289 passages, ~4,000
    cross-references): the reference bomb of issue 27, as far as the caps let it go."""
    from pipeline.eval.poisoning import densest_regulation

    return densest_regulation(BOMB_ID)


PAYLOADS: dict[str, bytes] = {}


def payloads() -> dict[str, bytes]:
    """Bodies built once (the attacker's client should not spend the CPU the server needs)."""
    if not PAYLOADS:
        blank = (" \n\t\r\n" * 20_000)[:80_000]
        PAYLOADS["upload_blank_80KB"] = json.dumps({"files": [{"name": "kosong.md", "content": blank}]}).encode()
        doc = big_document(1_900_000)
        PAYLOADS["upload_text_1.9MB"] = json.dumps({"files": [{"name": "besar.md", "content": doc}]}).encode()
        for n in (MAX_QUESTION_CHARS, 2_500, 20_000):
            PAYLOADS[f"question_{n}_chars"] = json.dumps({"question": long_question(n)}).encode()
        PAYLOADS["question_one_part"] = json.dumps({"question": one_part_question(MAX_QUESTION_CHARS)}).encode()
        # the costly question the probe of issue 27 found: short of the cap, little text, ~21 s of work under the
        # old length-based budget (now charged by its measured work)
        PAYLOADS["question_costly"] = json.dumps({"question": "1," * 249}).encode()
    return PAYLOADS


def send_big_body(host: str, port: int, path: str, token: str, total: int, chunked: bool,
                  piece: int = MIB, timeout: float = 30) -> dict:
    """POST a `total`-byte JSON body (valid base64 content, never held in memory); stop sending
    the moment a response is readable (as bench/body_limit.py does)."""
    head, tail = b'{"files":[{"name":"besar.pdf","content_base64":"', b'"}]}'
    n = total - len(head) - len(tail)
    n -= n % 4
    filler = b"A" * piece

    def pieces():
        yield head
        left = n
        while left > 0:
            yield filler[:min(piece, left)]
            left -= piece
        yield tail

    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    conn.putrequest("POST", path, skip_accept_encoding=True)
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Authorization", f"Bearer {token}")
    if chunked:
        conn.putheader("Transfer-Encoding", "chunked")
    else:
        conn.putheader("Content-Length", str(len(head) + n + len(tail)))
    t0 = time.perf_counter()
    sent, status, error = 0, 0, None
    try:
        conn.endheaders()
        sock = conn.sock
        sock.setblocking(False)
        frames = ((b"%x\r\n" % len(p) + p + b"\r\n") if chunked else p for p in pieces())
        if chunked:
            frames = itertools.chain(frames, [b"0\r\n\r\n"])
        answered = False
        for frame in frames:
            view, off = memoryview(frame), 0
            while off < len(view):
                readable, writable, _ = select.select([sock], [sock], [], timeout)
                if readable:
                    answered = True
                    break
                if not writable:
                    raise TimeoutError("the server stopped reading")
                try:
                    off += sock.send(view[off:])
                except BlockingIOError:
                    continue
            sent += off
            if answered:
                break
    except (BrokenPipeError, ConnectionResetError, TimeoutError) as e:
        error = type(e).__name__
    try:
        if conn.sock is None:
            raise ConnectionError("not connected")
        conn.sock.setblocking(True)
        conn.sock.settimeout(timeout)
        resp = conn.getresponse()
        resp.read()
        status, error = resp.status, None
    except (OSError, http.client.HTTPException) as e:
        error = error or type(e).__name__
    finally:
        conn.close()
    return {"status": status, "error": error, "ms": 1000 * (time.perf_counter() - t0), "sent_bytes": sent}


# --- the simulated users ----------------------------------------------------------------------------

class Keys:
    normal: list[str] = []
    next_normal = itertools.count()
    attacker_reader = ""
    attacker_curator = ""


class NormalUser(HttpUser):
    wait_time = between(*NORMAL_THINK_S)

    def on_start(self):
        i = next(Keys.next_normal)
        self.token = Keys.normal[i % len(Keys.normal)]
        self.questions = itertools.cycle(QUESTIONS[i % len(QUESTIONS):] + QUESTIONS[:i % len(QUESTIONS)])

    @task
    def ask(self):
        self.client.post("/v1/answer", json={"question": next(self.questions)}, name="normal answer",
                         headers={"Authorization": f"Bearer {self.token}"}, timeout=NORMAL_TIMEOUT_S)


class QuestionAttacker(HttpUser):
    """Long questions (its own reader key) and requests without a key, about as fast as one
    key's rate limit allows."""
    fixed_count = 1
    wait_time = between(0.05, 0.15)

    def _ask(self, n: int | str):
        payload, name = ((f"question_{n}_chars", f"attack question {n} chars") if isinstance(n, int)
                         else (n, "attack question ~500 chars, one part"))
        self.client.post("/v1/answer", data=payloads()[payload], name=name,
                         headers={"Authorization": f"Bearer {Keys.attacker_reader}",
                                  "Content-Type": "application/json"}, timeout=NORMAL_TIMEOUT_S)

    @task(3)
    def question_at_cap(self):
        self._ask(MAX_QUESTION_CHARS)

    @task(3)
    def question_at_cap_one_part(self):
        self._ask("question_one_part")

    @task(3)
    def question_costly(self):
        self.client.post("/v1/answer", data=payloads()["question_costly"], name="attack costly question '1,'*249",
                         headers={"Authorization": f"Bearer {Keys.attacker_reader}",
                                  "Content-Type": "application/json"}, timeout=NORMAL_TIMEOUT_S)

    @task(2)
    def question_too_long(self):
        self._ask(2_500)

    @task(1)
    def question_past_schema(self):
        self._ask(20_000)

    @task(1)
    def no_key_answer(self):
        self.client.post("/v1/answer", json={"question": QUESTIONS[0]}, name="attack no key /v1/answer", timeout=10)

    @task(1)
    def no_key_corpus(self):
        self.client.get("/v1/corpus", name="attack no key /v1/corpus", timeout=10)


class ReferenceBombReader(HttpUser):
    """A reader key reading the reference bomb (uploaded by the curator attacker before phase A) as fast as its
    request rate allows: its text from the beginning, around a passage in the middle, a later window, and its
    document page with every reference listed (a page at a time since issue 27)."""
    fixed_count = 1
    wait_time = between(0.05, 0.15)
    PAGES = [f"/ui/documents/default/{BOMB_ID}/text", f"/ui/documents/default/{BOMB_ID}/text?chunk={BOMB_ID}-0150",
             f"/ui/documents/default/{BOMB_ID}/text?at=100000", f"/ui/documents/default/{BOMB_ID}"]

    def on_start(self):
        self.pages = itertools.cycle(self.PAGES)

    @task
    def read(self):
        page = next(self.pages)
        kind = "document page" if page.endswith(BOMB_ID) else "evidence view"
        self.client.get(page, name=f"attack reference bomb: {kind}", timeout=NORMAL_TIMEOUT_S,
                        headers={"Authorization": f"Bearer {Keys.attacker_reader}"})


class UploadAttacker(HttpUser):
    """A curator key's uploads, in a fixed rotation: blanks, 100 MB (length), blanks,
    100 MB (chunked), 1.9 MB of text."""
    fixed_count = 1
    wait_time = between(0.05, 0.15)
    ROTATION = ["upload_blank_80KB", "body_100MB_length", "upload_blank_80KB", "body_100MB_chunked",
                "upload_text_1.9MB"]

    def on_start(self):
        self.rotation = itertools.cycle(self.ROTATION)

    @task
    def upload(self):
        kind = next(self.rotation)
        if kind.startswith("body_100MB"):
            host, port = self.host.split("//", 1)[1].split(":")
            r = send_big_body(host, int(port), "/v1/ingest", Keys.attacker_curator, 100_000_000,
                              chunked=kind.endswith("chunked"))
            self.environment.events.request.fire(
                request_type="POST", name=f"attack {kind}", response_time=r["ms"], response_length=0,
                response=None, context={"status": r["status"], "sent_bytes": r["sent_bytes"]},
                exception=RuntimeError(r["error"]) if r["error"] else None)
            return
        self.client.post("/v1/ingest", data=payloads()[kind], name=f"attack {kind}", timeout=UPLOAD_TIMEOUT_S,
                         headers={"Authorization": f"Bearer {Keys.attacker_curator}",
                                  "Content-Type": "application/json"})


# --- recording ----------------------------------------------------------------------------------------

class Recorder:
    """Every request of one phase: (name, status, ms, bytes sent before the response)."""

    def __init__(self):
        self.rows: list[tuple[str, str, float, int | None]] = []

    def __call__(self, request_type, name, response_time, response_length, response=None, context=None,
                 exception=None, **_):
        status = getattr(response, "status_code", None) or (context or {}).get("status") or 0
        if not status:
            text = repr(exception)
            status = "timeout" if "Timeout" in text or "timed out" in text else (
                type(exception).__name__ if exception is not None else "no response")
        self.rows.append((name, str(status), float(response_time), (context or {}).get("sent_bytes")))

    def summary(self) -> dict:
        normal = [r for r in self.rows if r[0].startswith("normal")]
        lat = [r[2] for r in normal]
        out = {"normal": {"n": len(normal), "statuses": dict(Counter(r[1] for r in normal))}}
        if lat:
            out["normal"].update(p50_ms=round(statistics.median(lat), 1), p95_ms=round(pct(lat, 95), 1),
                                 max_ms=round(max(lat), 1))
        by_kind: dict[str, list] = defaultdict(list)
        for r in self.rows:
            if r[0].startswith("attack"):
                by_kind[r[0].removeprefix("attack ")].append(r)
        attack = {}
        for kind, rows in sorted(by_kind.items()):
            attack[kind] = {"n": len(rows), "statuses": dict(Counter(r[1] for r in rows)),
                            "p50_ms": round(statistics.median(r[2] for r in rows), 1)}
            sent = [r[3] for r in rows if r[3] is not None]
            if sent:
                attack[kind]["max_mb_sent_before_response"] = round(max(sent) / 1e6, 2)
        out["attacker"] = attack
        out["status_500"] = sum(1 for r in self.rows if r[1] == "500")
        return out


def run_phase(url: str, user_classes: list, users: int, seconds: float) -> dict:
    env = Environment(user_classes=user_classes, host=url)
    rec = Recorder()
    env.events.request.add_listener(rec)
    runner = env.create_local_runner()
    load = os.getloadavg()
    t0 = time.perf_counter()
    runner.start(users, spawn_rate=users)
    gevent.sleep(seconds)
    runner.quit()
    result = {"users": users, "classes": [c.__name__ for c in user_classes],
              "seconds": round(time.perf_counter() - t0, 1), "loadavg_1m_before": round(load[0], 2),
              **rec.summary()}
    print(json.dumps(result), flush=True)
    return result


# --- the server ----------------------------------------------------------------------------------------

def saksi(*args: str, data: Path) -> str:
    r = subprocess.run([str(SAKSI), *args, "--data-dir", str(data)], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"saksi {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r.stdout


def create_key(data: Path, role: str, name: str) -> str:
    return json.loads(saksi("keys", "create", "--role", role, "--name", name, "--json", data=data))["token"]


def start_server(data: Path, port: int, log: Path) -> subprocess.Popen:
    return subprocess.Popen([str(SAKSI), "serve", "--data-dir", str(data), "--port", str(port)], cwd=ROOT,
                            stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)


def table(result: dict) -> str:
    lines = [f"{'phase':16} {'normal n':>8} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'p95 x A':>8} {'load1m':>6}  "
             "statuses", "-" * 96]
    for label, ph in result["phases"].items():
        n = ph["normal"]
        ratio = result["p95_ratios"].get(label)
        lines.append(f"{label:16} {n['n']:>8} {n.get('p50_ms', 0):>8.0f} {n.get('p95_ms', 0):>8.0f} "
                     f"{n.get('max_ms', 0):>8.0f} {ratio if ratio is not None else '':>8} "
                     f"{ph['loadavg_1m_before']:>6.1f}  {n['statuses']}")
    lines.append(f"target: each attacker alone at most {result['target_p95_ratio']}x p95 and no normal request refused: "
                 f"{'met' if result['p95_target_met'] else 'MISSED'}")
    for label, ph in result["phases"].items():
        if not ph["attacker"]:
            continue
        lines += ["", f"{'attacker request (' + label + ')':42} {'n':>5} {'p50 ms':>8}  statuses", "-" * 96]
        for kind, a in ph["attacker"].items():
            extra = (f"  (sent at most {a['max_mb_sent_before_response']} MB before the response)"
                     if "max_mb_sent_before_response" in a else "")
            lines.append(f"{kind:42} {a['n']:>5} {a['p50_ms']:>8.0f}  {a['statuses']}{extra}")
    lines.append("")
    lines.append(f"status 500 across everything: {result['status_500_total']}; server alive after every phase: "
                 f"{result['server_alive_after']}")
    return "\n".join(lines)


ATTACKS = {"questions": [QuestionAttacker], "references": [ReferenceBombReader], "uploads": [UploadAttacker]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=4, help="normal users (each with its own reader key)")
    ap.add_argument("--attackers", type=int, default=1, help="attackers of each kind (question, upload)")
    ap.add_argument("--seconds", type=float, default=75, help="length of each phase")
    ap.add_argument("--attack", choices=["each", "all", *ATTACKS], default="each",
                    help="each: a phase B per attacker alone, then one with all three (the default); or one kind")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "abuse_load.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    QuestionAttacker.fixed_count = UploadAttacker.fixed_count = ReferenceBombReader.fixed_count = args.attackers

    tmp = Path(tempfile.mkdtemp(prefix="saksi-abuse-"))
    data, log = tmp / "data", tmp / "serve.log"
    proc = None
    started = time.perf_counter()
    try:
        t = time.perf_counter()
        saksi("ingest", str(CORPUS), data=data)
        ingest_s = time.perf_counter() - t
        Keys.normal = [create_key(data, "reader", f"normal-{i}") for i in range(args.users)]
        first = Keys.normal[0]
        Keys.attacker_reader = create_key(data, "reader", "attacker")
        Keys.attacker_curator = create_key(data, "curator", "attacker")
        payloads()

        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start_server(data, port, log)
        ready_s = wait_ready(proc, url, first)
        print(f"corpus ingested in {ingest_s:.0f} s; server ready in {ready_s:.0f} s at {url}", flush=True)
        bomb_s = None
        if args.attack in ("each", "all", "references"):  # the curator attacker's upload, before any phase
            t = time.perf_counter()
            req = urllib.request.Request(
                f"{url}/v1/ingest", data=json.dumps({"files": [{"name": f"{BOMB_ID}.md",
                                                                "content": reference_bomb()}]}).encode(),
                headers={"Authorization": f"Bearer {Keys.attacker_curator}", "Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=600) as r:
                report = json.loads(r.read())
            if len(report.get("ingested") or []) != 1:
                raise RuntimeError(f"the reference bomb was not ingested: {json.dumps(report)[:2000]}")
            bomb_s = time.perf_counter() - t
            print(f"reference bomb uploaded in {bomb_s:.0f} s", flush=True)
        for q in QUESTIONS:  # warm-up: first-question costs are not the attacker's
            req = urllib.request.Request(f"{url}/v1/answer", data=json.dumps({"question": q}).encode(),
                                         headers={"Authorization": f"Bearer {first}",
                                                  "Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=120) as r:
                r.read()

        phases = {"A_no_attacker": run_phase(url, [NormalUser], args.users, args.seconds)}
        alive = proc.poll() is None and get(f"{url}/healthz") == 200
        everyone = [c for kind in ATTACKS.values() for c in kind]
        runs = ({**{f"B_{k}": v for k, v in ATTACKS.items()}, "B_all": everyone} if args.attack == "each" else
                {"B_all": everyone} if args.attack == "all" else {f"B_{args.attack}": ATTACKS[args.attack]})
        for label, attackers in runs.items():  # every phase with fresh keys: each starts with full budgets
            Keys.normal = [create_key(data, "reader", f"normal-{label}-{i}") for i in range(args.users)]
            Keys.attacker_reader = create_key(data, "reader", f"attacker-{label}")
            Keys.attacker_curator = create_key(data, "curator", f"attacker-{label}")
            Keys.next_normal = itertools.count()  # the same users and questions
            phases[label] = run_phase(url, [NormalUser, *attackers], args.users + len(attackers) * args.attackers,
                                      args.seconds)
            alive = alive and proc.poll() is None and get(f"{url}/healthz") == 200
        ready_after = get(f"{url}/readyz", first)
        if not alive:
            print(f"the server died:\n{log.read_text(errors='replace')[-4000:]}", file=sys.stderr)

        p95a = phases["A_no_attacker"]["normal"].get("p95_ms")
        ratios = {label: round(ph["normal"]["p95_ms"] / p95a, 2) if p95a and ph["normal"].get("p95_ms") else None
                  for label, ph in phases.items() if label != "A_no_attacker"}
        alone = [label for label in ratios if label != "B_all"] or ["B_all"]
        refused = {label: sum(n for st, n in ph["normal"]["statuses"].items() if st != "200")
                   for label, ph in phases.items()}
        result = {
            "what": "normal users' latency without (A) and with (B_*) attackers, one phase per attacker alone and one "
                    "with all three at once, from one server; lite profile, corpus/sample",
            "locust": locust.__version__, "cpus": os.cpu_count(), "seconds_per_phase": args.seconds,
            "normal_users": args.users, "normal_think_time_s": list(NORMAL_THINK_S),
            "attackers_per_kind": args.attackers,
            "keys": "one reader key per normal user and, for the attackers, one reader key (questions, reading) "
                    "and one curator key (uploads): all fresh for each phase",
            "upload_timeout_s": UPLOAD_TIMEOUT_S, "upload_text_bytes": len(payloads()["upload_text_1.9MB"]),
            "ingest_s": round(ingest_s, 1), "ready_s": round(ready_s, 1),
            "reference_bomb": {"doc_id": BOMB_ID, "characters": len(reference_bomb()),
                               "upload_s": round(bomb_s, 1) if bomb_s else None} if bomb_s else None,
            "phases": phases, "p95_ratios": ratios, "target_p95_ratio": 2.0,
            "target": "each attacker alone (its key inside its budgets): normal users' p95 at most 2x phase A's, "
                      "no normal request refused; all three at once is reported beside it",
            "normal_not_200": refused,
            "p95_target_met": all(ratios[k] is not None and ratios[k] <= 2.0 and not refused[k] for k in alone),
            "status_500_total": sum(p["status_500"] for p in phases.values()),
            "server_alive_after": alive, "readyz_after": ready_after,
        }
    except Exception as e:
        print(f"abuse_load: {e}", file=sys.stderr)
        if log.exists():
            print(log.read_text(errors="replace")[-4000:], file=sys.stderr)
        return 1
    finally:
        if proc is not None:
            print(f"server stopped: {stop_server(proc)}", flush=True)
        shutil.rmtree(tmp, ignore_errors=True)
    result["total_s"] = round(time.perf_counter() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(table(result))
    return 1 if result["status_500_total"] or not result["server_alive_after"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
