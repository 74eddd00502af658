"""The Milvus server code path (MilvusDenseIndex over http://…, chosen by $SAKSI_MILVUS_URI) against
a real Milvus standalone server that these tests start (tests/milvus_server.py, the `milvus` package).

Covered: dense search through the corpus and the retriever; two retriever replicas sharing one
server and one data directory; readers answering while another writer ingests; the server killed
and restarted mid-run (answers resume, nothing lost). The sparse lane needs Milvus >= 2.4
(SPARSE_FLOAT_VECTOR); the embedded 2.3 server refuses it, which must surface as one clear error.
"""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.config import load_profile
from pipeline.corpus import Corpus
from pipeline.errors import CorpusIndexError
from pipeline.index.dense import MilvusDenseIndex
from serve.deployments import RetrieverDeployment

from ..conftest import SAMPLE
from ..milvus_server import MilvusTestServer

pytestmark = pytest.mark.integration

QUESTION = "tarif pajak penghasilan atas sewa tanah dan bangunan"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with MilvusTestServer(tmp_path_factory.mktemp("milvus-server")) as s:
        yield s


@pytest.fixture
def env(server, monkeypatch):
    """The server for every Corpus in the test, and the fake embedder on every side (the state file
    names the embedder, and readers and writers must agree)."""
    monkeypatch.setenv("SAKSI_MILVUS_URI", server.uri)
    monkeypatch.setattr("pipeline.corpus.corpus.make_embedder", lambda profile: FakeHashEmbedder())
    monkeypatch.setattr("pipeline.corpus.corpus.embedder_name", lambda settings: FakeHashEmbedder().name)
    # every data directory's default collection is "chunks" on the server: each test starts it afresh
    from pymilvus import MilvusClient
    client = MilvusClient(server.uri)
    client.drop_collection("chunks")
    client.close()
    return server


def _query() -> "object":
    return asyncio.run(FakeHashEmbedder().embed_queries([QUESTION]))[0]


def _eventually(predicate, timeout: float = 15.0, every: float = 0.1):
    """Milvus collections are created with Bounded consistency: a write is visible to other
    clients within a few hundred milliseconds, not at once."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(every)


def _another_document(tmp_path, prefix: str):
    """A copy of a sample document under another id (so it adds chunks)."""
    extra = tmp_path / f"more-{prefix}"
    extra.mkdir()
    src = next(p for p in SAMPLE.iterdir() if p.suffix == ".md" and p.name != "README.md")
    text = src.read_text(encoding="utf-8")
    (extra / f"{prefix}-copy.md").write_text(text.replace("id: ", f"id: {prefix}-", 1), encoding="utf-8")
    return extra


def _ingest(data, paths):
    with Corpus(data, load_profile()) as c:
        report = c.ingest(paths)
        assert report.ingested and not report.errors, report.as_dict()
        assert c.dense.uri == c.milvus_uri and c.dense.uri.startswith("http://127.0.0.1:")
        # reads are Strong: right after the ingest the server counts every vector (with its default,
        # Bounded, count() lagged, and a replica reloading then refused the corpus)
        assert c.dense.count() == c.store.count() == report.total_chunks
        return report


def test_dense_search_and_two_replicas_share_one_server(env, tmp_path):
    data = tmp_path / "data"
    report = _ingest(data, [SAMPLE])
    assert not (data / "milvus.db").exists()  # the server holds the vectors, not a Lite file here

    # two retriever replicas (two MilvusClients) on one server and one shared data directory
    a = RetrieverDeployment.func_or_class("lite", str(data))
    b = RetrieverDeployment.func_or_class("lite", str(data))
    try:
        assert a.library.corpus.dense.uri == env.uri
        for replica in (a, b):
            state = asyncio.run(replica.ready())
            assert state["ready"], state
            assert state["chunks"] == report.total_chunks
        q = _query()
        hits_a = asyncio.run(a.library.indexes().dense.search(q, 10))
        hits_b = asyncio.run(b.library.indexes().dense.search(q, 10))
        assert len(hits_a) == min(10, report.total_chunks)
        assert [cid for cid, _ in hits_a] == [cid for cid, _ in hits_b]
        assert all(-1.0001 <= s <= 1.0001 for _, s in hits_a)
        assert hits_a == sorted(hits_a, key=lambda h: -h[1])
        # exact scores agree with the index's own
        scores = asyncio.run(a.library.indexes().dense.score(q, [cid for cid, _ in hits_a]))
        for cid, s in hits_a:
            assert scores[cid] == pytest.approx(s, abs=1e-4)
        # every chunk the store holds has its vector on the server
        chunks = asyncio.run(a.library.indexes().chunks.get([cid for cid, _ in hits_a]))
        assert set(chunks) == {cid for cid, _ in hits_a}
        assert a.library.corpus.dense.all_ids() == set(a.library.corpus.store.ids())
    finally:
        a.library.corpus.close()
        b.library.corpus.close()


def test_readers_keep_answering_while_another_writer_ingests(env, tmp_path):
    data = tmp_path / "data"
    first = _ingest(data, [SAMPLE])
    replicas = [RetrieverDeployment.func_or_class("lite", str(data)) for _ in range(2)]
    q = _query()
    stop = threading.Event()
    errors: list[BaseException] = []
    answers = [0, 0]

    def read(i: int) -> None:
        loop = asyncio.new_event_loop()
        try:
            while not stop.is_set():
                hits = loop.run_until_complete(replicas[i].library.indexes().dense.search(q, 5))
                assert len(hits) == 5
                answers[i] += 1
        except BaseException as e:  # reported below
            errors.append(e)
        finally:
            loop.close()

    readers = [threading.Thread(target=read, args=(i,)) for i in range(2)]
    for t in readers:
        t.start()
    try:
        second = _ingest(data, [SAMPLE, _another_document(tmp_path, "x")])
        time.sleep(0.5)
    finally:
        stop.set()
        for t in readers:
            t.join(timeout=60)
    try:
        assert not errors, errors
        assert all(n > 0 for n in answers), answers
        assert second.total_chunks > first.total_chunks
        # each replica follows the ingest made by someone else, whole
        for replica in replicas:
            state = _eventually(lambda: (s := asyncio.run(replica.ready()))["ready"]
                                and s["chunks"] == second.total_chunks and s, timeout=3)
            assert state, asyncio.run(replica.ready())
            ids = {cid for cid, _ in asyncio.run(replica.library.indexes().dense.search(q, 200))}
            chunks = asyncio.run(replica.library.indexes().chunks.get(list(ids)))
            assert any(ch.doc_id.startswith("x-") for ch in chunks.values())
    finally:
        for replica in replicas:
            replica.library.corpus.close()


def test_server_restart_mid_run_loses_nothing(env, tmp_path):
    data = tmp_path / "data"
    _ingest(data, [SAMPLE])
    replica = RetrieverDeployment.func_or_class("lite", str(data))
    try:
        q = _query()
        assert len(asyncio.run(replica.library.indexes().dense.search(q, 10))) == 10
        # an ingest the server has acknowledged but not flushed, then SIGKILL: nothing acknowledged is lost
        second = _ingest(data, [SAMPLE, _another_document(tmp_path, "y")])
        before = asyncio.run(replica.library.indexes().dense.search(q, 10))
        env.restart(hard=True)
        # the same replica (its client made before the restart) answers again, the same answers: a
        # collection the server brought back released is loaded again by the read that finds it so
        after = _eventually(lambda: _try(lambda: asyncio.run(replica.library.indexes().dense.search(q, 10))), timeout=60)
        assert [cid for cid, _ in after] == [cid for cid, _ in before]
        assert replica.library.corpus.dense.all_ids() == set(replica.library.corpus.store.ids())
        assert replica.library.corpus.dense.count() == second.total_chunks
        replica.library.corpus.check()
        state = asyncio.run(replica.ready())
        assert state["ready"] and state["chunks"] == second.total_chunks, state
    finally:
        replica.library.corpus.close()


def _try(fn):
    try:
        return fn()
    except Exception:  # the server is still coming back
        return None


def test_sparse_lane_is_refused_by_this_server_with_one_clear_error(env):
    # SPARSE_FLOAT_VECTOR arrived in Milvus 2.4; the embedded server is 2.3
    with pytest.raises(CorpusIndexError, match=r"cannot use Milvus at http://127\.0\.0\.1:\d+: .*not supported"):
        MilvusDenseIndex(env.uri, dim=8, collection="sparse_probe", sparse=True)


# -- reads that must see the last write (issue 17: Strong consistency) ------------------------------

def test_collections_are_created_strong(env):
    from pymilvus import MilvusClient

    index = MilvusDenseIndex(env.uri, dim=8, collection="strong_probe")
    try:
        client = MilvusClient(env.uri)
        level = client.describe_collection("strong_probe").get("consistency_level")
        client.drop_collection("strong_probe")
        client.close()
        assert level in (0, "Strong"), level  # ConsistencyLevel.Strong == 0
    finally:
        index.close()


def test_another_client_sees_every_write_at_once(env, monkeypatch):
    """A writer and a reader, two clients; after each write the reader counts, gets and lists at
    once, with no waiting: the reads are Strong. `all_ids` is also made to page through the query
    iterator (its requests carry the collection's default level, Strong as created here)."""
    import numpy as np

    monkeypatch.setattr("pipeline.index.dense._MAX_LIMIT", 50)
    writer = MilvusDenseIndex(env.uri, dim=8, collection="strong_rw")
    reader = MilvusDenseIndex(env.uri, dim=8, collection="strong_rw")
    rng = np.random.default_rng(0)
    expected: set[str] = set()
    try:
        for round_ in range(4):
            ids = [f"r{round_}-{i}" for i in range(120)]
            vectors = rng.normal(size=(len(ids), 8)).astype(np.float32)
            writer.upsert(ids, ["d"] * len(ids), vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
            expected |= set(ids)
            assert reader.count() == len(expected)
            assert reader.present(ids) == set(ids)
            assert reader.all_ids() == expected
            gone = sorted(expected)[:30]
            writer.delete(gone)
            expected -= set(gone)
            assert reader.count() == len(expected)  # a delete, verified at once
            assert reader.present(gone) == set()
            assert reader.all_ids() == expected
    finally:
        writer.close()
        reader.close()
        from pymilvus import MilvusClient
        client = MilvusClient(env.uri)
        client.drop_collection("strong_rw")
        client.close()


def test_a_replica_checks_the_corpus_right_after_another_process_ingests_or_deletes(env, tmp_path):
    """The reader (a retriever's Corpus, opened before) runs corpus.check() the moment the writer's
    ingest or delete returns, with no waiting: it passes and counts every chunk."""
    data = tmp_path / "data"
    _ingest(data, [SAMPLE])
    reader = Corpus(data, load_profile())
    try:
        reader.check()
        second = _ingest(data, [SAMPLE, _another_document(tmp_path, "z")])
        reader.check()
        assert reader.dense.count() == reader.store.count() == second.total_chunks
        with Corpus(data, load_profile()) as writer:
            doc = next(d for d, _ in writer.store.documents() if d.doc_id.startswith("z-"))
            assert writer.delete(doc.doc_id)
        reader.check()
        assert reader.dense.count() == reader.store.count() < second.total_chunks
        assert reader.dense.all_ids() == set(reader.store.ids())
    finally:
        reader.close()


def test_a_collection_under_the_index_threshold_is_searched_whole_once_served(env):
    """A sealed segment under 1,024 rows is never indexed: the server answers it from its interim IVF index, searched
    at nprobe 16 by the package's config (recall@30 0.815 for these 1,000 vectors) and at nprobe = nlist by the test
    server's and k8s/milvus's (whole). `wait_served` returns for it (it waited for an index that never comes)."""
    import numpy as np

    from ..milvus_server import wait_served

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(1000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = MilvusDenseIndex(env.uri, dim=384, collection="small_whole")
    try:
        index.upsert([f"v{i}" for i in range(len(vectors))], ["d"] * len(vectors), vectors)
        assert wait_served(index._client, "small_whole", len(vectors), timeout=120) < 120
        segments = index._client.list_loaded_segments("small_whole")
        assert sum(s.num_rows for s in segments) == 1000 and not any(s.index_name for s in segments)
        queries = vectors[:40] + 0.1 * rng.normal(size=(40, 384)).astype(np.float32)
        for q in queries:
            exact = {f"v{i}" for i in np.argsort(-(vectors @ q))[:30]}
            got = {i for i, _ in asyncio.run(index.search(q / np.linalg.norm(q), 30))}
            assert got == exact
    finally:
        index.close()
        from pymilvus import MilvusClient
        client = MilvusClient(env.uri)
        client.drop_collection("small_whole")
        client.close()
