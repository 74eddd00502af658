"""The service layer without Ray (issue 28): what a request may do, with the key and the collection resolved once,
over the corpus in this process; and the same app the Ingress serves, built around it and called in process."""
from __future__ import annotations

import asyncio
import sys

import pytest
from fastapi.testclient import TestClient

from pipeline.config import load_profile
from pipeline.corpus import Corpus
from pipeline.keys import KeyStore
from serve.auth import Guard
from serve.config import RuntimeSettings
from serve.errors import ApiError
from serve.http_app import make_app
from serve.rates import RateLimiter
from serve.schemas import CollectionAnswerRequest, UploadFile
from serve.service import Service

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration

ANSWERED = "Berapa tarif pajak penghasilan atas persewaan tanah dan bangunan?"
NOTE = ("---\nid: catatan-layanan\ntitle: Catatan Uji Layanan\ndoc_type: guidance\nlang: id\n---\n\n"
        "1. Bea meterai atas kuitansi sewa gudang uji layanan adalah Rp10.000 per dokumen.\n")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("service") / "data"
    with Corpus(root, load_profile()) as c:
        c.ingest([SAMPLE])
    return root


@pytest.fixture(scope="module")
def svc(data):
    service = Service.in_process("lite", data, RuntimeSettings())
    yield service
    service.corpus.corpus.close()


@pytest.fixture(scope="module")
def keys(data):
    store = KeyStore(data)
    return {role: store.authenticate(store.create(role, ["default"], name=f"service {role}")[1])
            for role in ("reader", "curator", "admin")}


def test_the_service_imports_neither_ray_nor_fastapi():
    """A plain-Python layer: checked in a fresh interpreter, since this test process has both loaded."""
    import subprocess

    code = ("import sys, serve.service; bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('ray', 'fastapi', 'starlette')); print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_key_learns_nothing_of_collections_it_may_not_use(svc, keys):
    with pytest.raises(ApiError) as e:
        svc.where(keys["reader"], "elsewhere")  # not its collection, whether or not it exists: 403 first
    assert e.value.status == 403
    with pytest.raises(ApiError) as e:
        svc.where(keys["reader"], "default", "curator")  # its collection, not its role
    assert e.value.status == 403 and "curator" in e.value.message
    admin = KeyStore(svc.data_dir.root).create("admin", ["*"], name="all")[1]
    with pytest.raises(ApiError) as e:
        svc.where(KeyStore(svc.data_dir.root).authenticate(admin), "nothing-here")
    assert (e.value.status, e.value.type) == (404, "unknown_collection")
    assert svc.where(keys["reader"], "default").name == "default"


def test_an_answer_through_the_service_is_the_orchestrators_and_leaves_a_trace_that_replays(svc, keys, lite_corpus):
    where = svc.where(keys["reader"], "default")
    out = asyncio.run(svc.answer(where, CollectionAnswerRequest(question=ANSWERED)))
    local, _ = asyncio.run(lite_corpus.orchestrator(write_traces=False).run(ANSWERED))
    assert out.outcome == local.outcome == "answer"
    assert [c.text for c in out.claims] == [c.text for c in local.claims]
    assert not out.trace_path.startswith("/")  # no server path in a response
    trace = asyncio.run(svc.read_trace(where, out.trace_id))
    assert trace.trace_id == out.trace_id and svc.checked_trace(where, out.trace_id).state == "verified"
    assert asyncio.run(svc.replay(where, out.trace_id)).same
    assert svc.recent_answers(keys["reader"], ["default"])[0]["trace_id"] == out.trace_id
    with pytest.raises(ApiError) as e:
        asyncio.run(svc.read_trace(where, "0" * 32))
    assert e.value.status == 404


def test_questions_past_the_in_flight_cap_are_a_typed_503(svc, keys):
    where = svc.where(keys["reader"], "default")
    svc.in_flight = svc.runtime.max_in_flight
    try:
        with pytest.raises(ApiError) as e:
            asyncio.run(svc.answer(where, CollectionAnswerRequest(question=ANSWERED)))
    finally:
        svc.in_flight = 0
    assert (e.value.status, e.value.type) == (503, "overloaded") and e.value.headers["Retry-After"]


def test_a_curator_uploads_and_removes_only_its_own(svc, keys):
    curator = svc.where(keys["curator"], "default", "curator", create=True)
    files = [UploadFile(name="catatan-layanan.md", content=NOTE), UploadFile(name="catatan-layanan.md", content=NOTE)]
    report = asyncio.run(svc.ingest(curator, files))
    assert [p.rsplit("/", 1)[-1] for p in report.ingested] == ["catatan-layanan.md"] and report.files == 2
    assert [e.path for e in report.errors] == ["catatan-layanan.md"]  # the second of the same name: reported
    listing = asyncio.run(svc.coverage(curator))
    theirs = next(d.doc_id for d in listing.items if d.doc_id != "catatan-layanan")
    with pytest.raises(ApiError) as e:  # the operator's ingest: not a curator's to remove
        asyncio.run(svc.delete(curator, theirs))
    assert e.value.status == 403
    assert asyncio.run(svc.delete(curator, "catatan-layanan")).doc_id == "catatan-layanan"
    with pytest.raises(ApiError) as e:
        asyncio.run(svc.delete(curator, "catatan-layanan"))
    assert e.value.status == 404


def test_a_corpus_that_fails_is_a_typed_503_not_a_500(data, keys):
    class FakeDownCorpus:
        def __getattr__(self, name):
            async def down(*args, **kwargs):
                raise ConnectionError("retriever gone")
            return down

    svc = Service(load_profile(), data, RuntimeSettings(), FakeDownCorpus(), stages=None)
    with pytest.raises(ApiError) as e:
        asyncio.run(svc.coverage(svc.where(keys["reader"], "default")))
    assert (e.value.status, e.value.type) == (503, "unavailable") and "ConnectionError" in e.value.message


def test_the_served_app_runs_in_process_around_the_service(svc, keys, data):
    """The app an Ingress replica serves, built around a service here: both paths of a collection route answer."""
    token = KeyStore(data).create("reader", ["default"], name="app in process")[1]
    app = make_app(svc, Guard(svc.keys, RateLimiter(600, 100)))
    with TestClient(app) as client:
        auth = {"Authorization": f"Bearer {token}"}
        bare, named = client.get("/v1/corpus", headers=auth), client.get("/v1/collections/default/corpus", headers=auth)
        assert bare.status_code == named.status_code == 200 and bare.json() == named.json()
        assert client.get("/v1/corpus").status_code == 401
        missing = client.get("/v1/collections/nope/corpus", headers=auth)
        assert missing.status_code == 403 and missing.json()["error"]["type"] == "forbidden"
        ops = client.get("/openapi.json").json()["paths"]
        assert ops["/v1/answer"]["post"]["operationId"] == "answer_v1_answer_post"
        assert ops["/v1/collections/{name}/answer"]["post"]["operationId"] == \
            "answer_in_v1_collections__name__answer_post"

