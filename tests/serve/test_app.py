"""The Ray Serve application over real HTTP on this machine (lite profile): every endpoint,
typed errors, concurrency; and, on applications that give each model its own deployment (as
full-cpu and gpu do), the same answers, a killed judge replica, and the judge taken away."""
from __future__ import annotations

import asyncio
import base64
import io
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pipeline.responses import result_json
from pipeline.text import contains_normalised

from .conftest import Http, lite_with_model_deployments

pytestmark = pytest.mark.integration

RATE = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
PENALTY_EN = "What is the penalty for filing the SPT Masa late?"
UNRELATED = "Berapa tarif bea masuk untuk impor mobil listrik?"


def answer(app: Http, question: str, **extra):
    status, body, _ = app.call("POST", "/v1/answer", {"question": question, **extra})
    assert status == 200, body
    return body


def test_health_and_readiness(app):
    assert app.call("GET", "/healthz")[:2] == (200, {"status": "ok", "version": "0.1.0"})
    status, body, _ = app.call("GET", "/readyz")
    assert status == 200 and body["ready"], body
    # lite runs the reranker in the Retriever and the generator and judge in the Ingress (runtime.placement)
    assert set(body["deployments"]) == {"Embedder", "Retriever"}
    assert body["deployments"]["Retriever"]["chunks"] > 0


def test_openapi_describes_every_endpoint(app):
    status, spec, _ = app.call("GET", "/openapi.json")
    assert status == 200
    paths = spec["paths"]
    assert {"/v1/answer", "/v1/traces/{trace_id}", "/v1/replay", "/v1/corpus", "/v1/ingest", "/healthz",
            "/readyz"} <= set(paths)
    assert "AnswerRequest" in spec["components"]["schemas"] and "ErrorResponse" in spec["components"]["schemas"]
    assert "503" in paths["/v1/answer"]["post"]["responses"]
    req = __import__("urllib.request").request.urlopen(app.base + "/docs", timeout=30)
    assert req.status == 200 and b"swagger" in req.read().lower()


def test_answer_has_receipts_found_verbatim_in_the_source(app, served_corpus):
    data, _ = served_corpus
    body = answer(app, RATE)
    assert body["outcome"] == "answer" and body["trace_id"]
    assert body["trace_path"] == f"traces/{body['trace_id']}.json"  # relative to the data directory
    supported = [c for c in body["claims"] if c["status"] == "supported"]
    assert supported
    for c in supported:
        for cit in c["citations"]:
            assert not Path(cit["source"]).is_absolute() and not Path(cit["original"]).is_absolute()
            text = (data / cit["source"]).read_text(encoding="utf-8")
            start, end = cit["source_span"]
            assert contains_normalised(text[start:end], cit["quote"])
    assert any("10%" in c["text"] for c in supported)


def test_an_answer_as_of_a_date_shows_the_rule_then_in_force_and_the_revoked_one_as_history(app):
    then = answer(app, RATE, as_of="2024-06-30")
    assert then["as_of"] == {"date": "2024-06-30", "source": "request", "words": None}
    first = then["claims"][0]
    assert "15%" in first["text"] and first["standing"]["state"] == "in_force"
    assert then["direct_answer"]["text"].startswith("15% [1]")
    now = answer(app, RATE)
    assert now["as_of"]["source"] == "today"
    old = next(c for c in now["claims"] if "15%" in c["text"])
    assert old["standing"]["state"] == "ended" and old["band"] != "TINGGI"
    assert old["standing"]["edge"]["kind"] == "revokes" and "Pasal 9" in old["standing"]["edge"]["source_path"]
    assert old["confidence_breakdown"]["capped_by"] in ("not_in_force", "answerability", "no_verdict")
    docs = {d["doc_id"]: d for d in now["documents"]}  # every cited document, as its receipts show it
    assert {x["doc_id"] for c in now["claims"] if c["status"] == "supported" for x in c["citations"]} <= set(docs)
    revoked = docs[old["citations"][0]["doc_id"]]
    assert revoked["cite_as"] == "PMI 3/2022" and revoked["effective"] == "2022-07-01"
    assert revoked["standing"]["state"] == "ended"


def test_unrelated_question_is_refused_with_nearest_records(app):
    body = answer(app, UNRELATED)
    assert body["outcome"] == "refusal" and body["reason"] and body["nearest"]
    assert not [c for c in body["claims"] if c["status"] == "supported"]


def test_served_answers_equal_the_in_process_pipeline(app, in_process):
    for q in (RATE, PENALTY_EN, UNRELATED):
        served = answer(app, q)
        local = result_json(asyncio.run(in_process.answer(q)))
        assert set(served) - {"trace"} == set(local)
        assert served["outcome"] == local["outcome"] and served["reason_code"] == local["reason_code"]
        assert ([(c["text"], c["status"], c["band"]) for c in served["claims"]]
                == [(c["text"], c["status"], c["band"]) for c in local["claims"]])


def test_trace_and_replay(app):
    body = answer(app, RATE, options={"include_trace": True})
    assert body["trace"]["trace_id"] == body["trace_id"]
    status, trace, _ = app.call("GET", f"/v1/traces/{body['trace_id']}")
    assert status == 200 and trace["decision"]["outcome"] == "answer" and trace["parts"]
    status, rep, _ = app.call("POST", "/v1/replay", {"trace_id": body["trace_id"]})
    assert status == 200 and rep["same"] and rep["recorded"] == rep["replayed"] == "answer"


def test_a_damaged_trace_file_is_a_typed_error_not_a_500(app, served_corpus):
    data, _ = served_corpus
    trace_id = "f" * 32
    (data / "traces").mkdir(exist_ok=True)
    (data / "traces" / f"{trace_id}.json").write_text("{not a trace", encoding="utf-8")
    for method, path, body in (("GET", f"/v1/traces/{trace_id}", None), ("POST", "/v1/replay", {"trace_id": trace_id})):
        status, got, _ = app.call(method, path, body)
        assert status == 422 and got["error"]["type"] == "unreadable_trace", got
        assert str(data) not in got["error"]["message"]  # no server path in what a caller sees


def test_corpus_reports_what_is_ingested(app, served_corpus):
    status, body, _ = app.call("GET", "/v1/corpus")
    assert status == 200 and body["ready"] and body["documents"] >= 4
    assert all({"doc_id", "title", "chunks"} <= set(d) for d in body["items"])
    data, _ = served_corpus  # no server paths: the directory's name, files relative to it (or just their name)
    assert body["data_dir"] == data.name and not any(Path(d["original"]).is_absolute() for d in body["items"])
    assert str(data.parent) not in json.dumps(body)


@pytest.mark.parametrize("method, path, payload, code, kind", [
    ("POST", "/v1/answer", {}, 422, "invalid_request"),
    ("POST", "/v1/answer", {"question": ""}, 422, "invalid_request"),
    ("POST", "/v1/answer", {"question": "   "}, 422, "invalid_request"),
    ("POST", "/v1/answer", {"question": "x", "lang": "fr"}, 422, "invalid_request"),
    ("POST", "/v1/answer", {"question": "x", "surprise": 1}, 422, "invalid_request"),
    ("POST", "/v1/answer", {"question": "x", "options": {"include_trace": 0}}, 422, "invalid_request"),
    ("POST", "/v1/answer", {"question": "x", "as_of": "2025-02-30"}, 422, "invalid_request"),
    ("POST", "/v1/answer", {"question": "x", "as_of": "kemarin"}, 422, "invalid_request"),
    ("POST", "/v1/answer", {"question": 7}, 422, "invalid_request"),
    ("POST", "/v1/answer", {"question": "x" * 501}, 422, "question_too_long"),  # the profile's cap (500)
    ("POST", "/v1/answer", {"question": "x" * 2001}, 422, "question_too_long"),
    ("POST", "/v1/answer", {"question": "x" * 10_001}, 422, "question_too_long"),  # the schema's ceiling
    ("POST", "/v1/answer", {"question": "x", "collection": "other"}, 404, "unknown_collection"),
    ("GET", "/v1/traces/not-a-trace", None, 400, "invalid_trace_id"),
    ("GET", "/v1/traces/" + "0" * 32, None, 404, "not_found"),
    ("POST", "/v1/replay", {"trace_id": "0" * 32}, 404, "not_found"),
    ("POST", "/v1/replay", {"trace_id": "../../etc/passwd"}, 422, "invalid_request"),
    ("POST", "/v1/ingest", {"files": []}, 422, "invalid_request"),
    ("POST", "/v1/ingest", {"files": [{"name": "../evil.md", "content": "x"}]}, 422, "invalid_request"),
    ("POST", "/v1/ingest", {"files": [{"name": "a.pdf", "content": "x"}]}, 422, "invalid_request"),
    ("POST", "/v1/ingest", {"files": [{"name": "big.md", "content": "x" * 2_000_001}]}, 413, "too_large"),
    ("POST", "/v1/ingest", {"files": [{"name": "a.pdf", "content_base64": "not base64!"}]}, 422, "invalid_request"),
    ("POST", "/v1/ingest", {"files": [{"name": "a.md", "content": "x", "content_base64": "eA=="}]}, 422,
     "invalid_request"),
])
def test_bad_requests_get_typed_errors_with_a_message(app, method, path, payload, code, kind):
    status, body, _ = app.call(method, path, payload)
    assert status == code, body
    assert body["error"]["type"] == kind and body["error"]["message"]


@pytest.mark.parametrize("method, path, code, kind", [
    ("GET", "/v1/nothing-here", 404, "not_found"),
    ("GET", "/v1/answer", 405, "method_not_allowed"),
])
def test_unknown_paths_and_methods_get_the_same_error_shape(app, method, path, code, kind):
    status, body, _ = app.call(method, path)
    assert status == code and body["error"]["type"] == kind and body["error"]["message"]


def test_malformed_json_is_a_4xx_not_a_500(app):
    status, body, _ = app.call("POST", "/v1/answer", raw=b"{not json")
    assert status == 422 and body["error"]["type"] == "invalid_request"


def test_small_upload_is_ingested_and_answerable(app):
    doc = ("---\nid: upload-test\ntitle: Catatan Uji Unggahan\nlang: id\n---\n"
           "1. Bea meterai atas dokumen perjanjian sewa gedung adalah Rp10.000 per dokumen.\n")
    status, report, _ = app.call("POST", "/v1/ingest", {"files": [{"name": "uji-unggahan.md", "content": doc}]})
    assert status == 200, report
    assert report["errors"] == [] and report["embedded"] >= 1
    body = answer(app, "Berapa bea meterai atas dokumen perjanjian sewa gedung?")
    assert body["outcome"] == "answer"
    assert any("Rp10.000" in c["text"] for c in body["claims"] if c["status"] == "supported")
    # idempotent; a second file of the same name in one request is reported and skipped, the first goes in
    status, again, _ = app.call("POST", "/v1/ingest", {"files": [{"name": "uji-unggahan.md", "content": doc},
                                                                 {"name": "uji-unggahan.md", "content": doc + "2.\n"}]})
    assert status == 200 and again["unchanged"] and again["embedded"] == 0 and again["files"] == 2, again
    assert again["errors"] == [{"path": "uji-unggahan.md",
                                "reason": "a file of this name is earlier in this request; skipped"}]


def test_a_pdf_upload_is_ingested_with_its_pages_and_a_corrupt_one_reported(app, served_corpus, admin_key):
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=A4)
    y = 800
    for line in ("PERATURAN MENTERI KEUANGAN REPUBLIK INDONESIA", "NOMOR 41 TAHUN 2024", "TENTANG",
                 "BEA METERAI ELEKTRONIK UJI", "Pasal 1",
                 "Bea meterai elektronik uji atas dokumen lelang gudang adalah Rp12.000 per dokumen."):
        pdf.drawString(60, y, line)
        y -= 18
    pdf.showPage()
    pdf.save()
    files = [{"name": "pmk-41-2024.pdf", "content_base64": base64.b64encode(buf.getvalue()).decode()},
             {"name": "rusak.pdf", "content_base64": base64.b64encode(b"%PDF-1.4 rusak").decode()}]
    status, report, _ = app.call("POST", "/v1/ingest", {"files": files})
    assert status == 200, report
    key_id = admin_key.split("_")[1]  # each key's uploads in a folder of their own
    assert [e["path"] for e in report["errors"]] == [f"uploads/{key_id}/rusak.pdf"] and len(report["ingested"]) == 1
    assert report["ingested"] == [f"uploads/{key_id}/pmk-41-2024.pdf"]
    uploads = served_corpus[0] / "uploads" / key_id  # the rejected upload is not kept
    assert (uploads / "pmk-41-2024.pdf").is_file() and not (uploads / "rusak.pdf").exists()
    body = answer(app, "Berapa bea meterai elektronik uji atas dokumen lelang gudang?")
    assert body["outcome"] == "answer", body["reason"]
    cited = [x for c in body["claims"] if c["status"] == "supported" for x in c["citations"]]
    assert any(x["path"] == "PMK 41/2024 › Pasal 1" and x["pages"] == [1, 1] for x in cited), [(x["path"], x["pages"]) for x in cited]


def test_32_concurrent_questions_are_all_answered_or_refused_correctly(app, in_process):
    questions = [RATE, PENALTY_EN, UNRELATED, "Kapan Pajak Penghasilan atas sewa wajib disetor?"] * 8
    expected = {q: asyncio.run(in_process.answer(q)).outcome for q in set(questions)}
    with ThreadPoolExecutor(32) as pool:
        got = list(pool.map(lambda q: app.call("POST", "/v1/answer", {"question": q}), questions))
    assert all(status == 200 for status, _, _ in got), [b for s, b, _ in got if s != 200][:2]
    for q, (_, body, _) in zip(questions, got):
        assert body["outcome"] == expected[q], (q, body["reason"])


def _no_claim_uncapped_without_a_verdict(body: dict) -> None:
    for c in body["claims"]:
        if c["status"] != "supported":
            continue
        if not (c["verdict"] and c["verdict"]["label"] == "entailed"):
            assert c["confidence"] <= 0.79 and c["band"] != "TINGGI", c


@pytest.fixture(scope="module")
def models_app(app, served_corpus, tmp_path_factory):
    """A second application, on its own copy of the corpus, with every model in its own deployment
    (two Judge replicas), under /models."""
    import shutil

    from ray import serve

    from serve.app import build_app

    copy = tmp_path_factory.mktemp("models") / "data"
    shutil.copytree(served_corpus[0], copy, ignore=shutil.ignore_patterns("traces", "uploads"))
    serve.run(build_app("lite", copy, config=lite_with_model_deployments(answer_units_per_minute=1e6,
                                                                         answer_units_burst=1e6)),
              name="models", route_prefix="/models")
    yield "/models"
    serve.delete("models")


def test_models_in_their_own_deployments_give_the_same_answers(app, models_app):
    """One orchestrator, two placements: the same claims, bands and confidences either way."""
    status, ready, _ = app.call("GET", f"{models_app}/readyz")
    assert status == 200 and set(ready["deployments"]) == {"Embedder", "Retriever", "Reranker", "Generator", "Judge"}
    for q in (RATE, PENALTY_EN, UNRELATED):
        inside = answer(app, q)
        status, apart, _ = app.call("POST", f"{models_app}/v1/answer", {"question": q})
        assert status == 200, apart
        assert inside["outcome"] == apart["outcome"] and inside["reason_code"] == apart["reason_code"]
        assert ([(c["text"], c["status"], c["band"], c["confidence"]) for c in inside["claims"]]
                == [(c["text"], c["status"], c["band"], c["confidence"]) for c in apart["claims"]])
        if q == RATE:  # the Generator deployment streamed it over its handle: claims gated as they closed
            status, trace, _ = app.call("GET", f"{models_app}/v1/traces/{apart['trace_id']}")
            assert status == 200 and "first_supported_claim" in trace["parts"][0]["attempts"][0]["timings_ms"]


def test_a_killed_judge_replica_while_requests_flow(app, models_app):
    import ray

    judges = [a for a in ray.util.list_named_actors(all_namespaces=True)
              if "Judge" in a["name"] and a["name"].startswith("SERVE_REPLICA")]
    assert len(judges) >= 2
    victim = ray.get_actor(judges[0]["name"], namespace=judges[0]["namespace"])
    results = []

    def fire():
        for q in (RATE, PENALTY_EN, UNRELATED, RATE):
            results.append(app.call("POST", f"{models_app}/v1/answer", {"question": q}))

    threads = [threading.Thread(target=fire) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    ray.kill(victim, no_restart=False)
    for t in threads:
        t.join(timeout=300)
    assert len(results) == 16
    for status, body, _ in results:
        assert status == 200, body
        assert body["outcome"] in ("answer", "refusal")
        _no_claim_uncapped_without_a_verdict(body)


def test_without_a_judge_answers_are_capped_or_refused_never_uncapped(app, served_corpus, tmp_path):
    """A second application, on its own copy of the corpus, whose judge always fails (a test double)."""
    import shutil

    from ray import serve

    from serve.app import build_app

    @serve.deployment(name="Judge")
    class FakeUnavailableJudge:
        def __init__(self, profile: str, batch=None):
            pass

        def info(self) -> dict:
            return {"name": "fake-unavailable"}

        def ready(self) -> bool:
            return True

        async def judge(self, items):
            raise RuntimeError("judge is down (fake)")

    data, _ = served_corpus
    copy = tmp_path / "data"
    shutil.copytree(data, copy, ignore=shutil.ignore_patterns("traces", "uploads"))
    serve.run(build_app("lite", copy, config=lite_with_model_deployments(), overrides={"Judge": FakeUnavailableJudge}),
              name="nojudge",
              route_prefix="/nojudge")
    try:
        bodies = []
        for q in (RATE, PENALTY_EN, UNRELATED):
            status, body, _ = app.call("POST", "/nojudge/v1/answer", {"question": q})
            assert status == 200, body
            bodies.append(body)
        shown = [c for b in bodies for c in b["claims"] if c["status"] == "supported"]
        assert shown  # still answered, from the quotes …
        for b in bodies:
            _no_claim_uncapped_without_a_verdict(b)  # … but never in the top band
        for c in shown:  # no verdict, and it says why
            assert c["verdict"]["label"] is None and c["verdict"]["score"] is None
            # capped at 0.79 for want of a verdict, or lower still by the reader's own probability
            b = c["confidence_breakdown"]
            assert b["cap"] == pytest.approx(min(0.79, b["generator"]), abs=1e-4)
    finally:
        serve.delete("nojudge")


def test_overload_is_503_with_retry_after_and_a_timeout_is_a_refusal(app, served_corpus, tmp_path):
    """A third application: room for 2 questions at once, a 1 s deadline, and a generator
    that takes 3 s (a test double). The admitted questions time out into refusals; the
    rest are turned away with 503 and Retry-After."""
    import asyncio as aio
    import shutil

    from ray import serve

    from serve.app import build_app

    @serve.deployment(name="Generator")
    class FakeSlowGenerator:
        def __init__(self, profile: str):
            pass

        def info(self) -> dict:
            return {"name": "fake-slow"}

        def ready(self) -> bool:
            return True

        async def generate(self, request):
            await aio.sleep(3)
            raise RuntimeError("too late (fake)")

    cfg = lite_with_model_deployments(max_in_flight=2, request_timeout_s=1.0)
    data, _ = served_corpus
    copy = tmp_path / "data"
    shutil.copytree(data, copy, ignore=shutil.ignore_patterns("traces", "uploads"))
    serve.run(build_app("lite", copy, config=cfg, overrides={"Generator": FakeSlowGenerator}), name="slow",
              route_prefix="/slow")
    try:
        with ThreadPoolExecutor(6) as pool:
            got = list(pool.map(lambda q: app.call("POST", "/slow/v1/answer", {"question": q}), [RATE] * 6))
        busy = [(b, h) for s, b, h in got if s == 503]
        done = [b for s, b, h in got if s == 200]
        assert busy and done and len(busy) + len(done) == 6
        for body, headers in busy:
            assert body["error"]["type"] == "overloaded" and int(headers["retry-after"]) >= 1
        for body in done:
            assert body["outcome"] == "refusal" and body["reason_code"] == "timeout" and body["claims"] == []
            status, trace, _ = app.call("GET", f"/slow/v1/traces/{body['trace_id']}")
            assert status == 200 and trace["decision"]["reason_code"] == "timeout"
    finally:
        serve.delete("slow")
