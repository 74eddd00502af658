"""`saksi bulk-ingest` across several Ray nodes, writing to a Milvus server, with a worker node killed
mid-job: the job completes and the corpus equals a single-node ingest of the same files.

Opt-in (marker `cluster`, not in the default suite: five Ray nodes and a Milvus server on one
machine take a few minutes):  .venv/bin/python -m pytest -m cluster tests/cluster

The nodes are Ray's own cluster utilities (`ray.cluster_utils.Cluster`): a head that runs only the
driver (0 CPUs) and four worker nodes of one CPU, each a raylet with its own object store, as separate hosts
would be. The node killed is one that hosts an embedding actor, after the driver has committed its
first documents; Ray restarts the actor on a live node and re-runs the lost tasks, and whatever the
driver had not committed is written when it arrives.
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.config import load_profile
from pipeline.corpus import Corpus, DataDir
from pipeline.corpus.ingestor import SilentMeter
from serve.bulk_ingest import bulk_ingest

from ..conftest import SAMPLE, SHARED_DATA, ROOT, require_regulations
from ..milvus_server import MilvusTestServer

pytestmark = pytest.mark.cluster

# as slow as a model (20 passages/s per actor), so the pool is still at work when a node goes
SLOW = functools.partial(FakeHashEmbedder, seconds_per_text=0.05)
# laws of the statute book (about 800 passages), beside the sample and three regulations
LAWS = ("uu-43-1999", "uu-21-2000", "uu-2-2004", "uu-39-2004", "uu-40-2004", "uu-24-2011", "uu-18-2017")


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> list[Path]:
    import importlib.util

    archive = SHARED_DATA / "peraturan" / "uu.tar.xz"
    if not archive.is_file():
        pytest.fail(f"the statute book is missing: {archive}")
    spec = importlib.util.spec_from_file_location("statute_book", ROOT / "scripts" / "statute_book.py")
    statute_book = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(statute_book)
    laws = {p.stem: p for p in statute_book.lay_out(archive, tmp_path_factory.mktemp("laws"))}
    regulations = require_regulations()
    return [SAMPLE, *sorted(regulations.glob("*.md"))[:3], *(laws[n] for n in LAWS)]


@pytest.fixture(scope="module")
def milvus(tmp_path_factory):
    with MilvusTestServer(tmp_path_factory.mktemp("milvus")) as server:
        yield server


@pytest.fixture(scope="module")
def cluster():
    import ray
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    workers = [c.add_node(num_cpus=1) for _ in range(4)]  # one CPU each: the pool's two actors on two nodes
    c.wait_for_nodes()
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False)
    yield c, workers
    ray.shutdown()
    c.shutdown()


class _KillANodeAfter(SilentMeter):
    """A meter that, once `after` documents are committed, kills (no grace) the worker node that
    hosts an embedding actor, and counts the documents committed after that."""

    def __init__(self, cluster, workers, after: int):
        self.cluster, self.workers, self.after = cluster, workers, after
        self.done, self.killed, self.after_kill, self.hosts = 0, None, 0, set()

    def file_done(self):
        self.done += 1
        if self.killed is not None:
            self.after_kill += 1
        elif self.done == self.after:
            from ray.util.state import list_actors

            hosts = {a.node_id for a in list_actors(filters=[("state", "=", "ALIVE")])
                     if "EmbedActor" in (a.class_name or "")}
            self.hosts = hosts
            victim = next(n for n in self.workers if n.node_id in hosts)
            self.cluster.remove_node(victim, allow_graceful=False)
            self.killed = victim.node_id


def _fingerprint(data_dir: Path, milvus_uri: str | None, monkeypatch) -> dict:
    """What must be equal: ids, chunks, manifest, references, state, renditions and every vector's hash."""
    if milvus_uri:
        monkeypatch.setenv("SAKSI_MILVUS_URI", milvus_uri)
    else:
        monkeypatch.delenv("SAKSI_MILVUS_URI", raising=False)
    with Corpus(DataDir(data_dir), load_profile(), embedder=FakeHashEmbedder()) as c:
        ids = c.store.ids()
        chunks = {k: asdict(v) for k, v in c.store.get(ids).items()}
        manifest = [{k: v for k, v in m.as_dict().items() if k != "ingested_at"} | {"document": asdict(m.document)}
                    for m in c.store.manifest()]
        vectors = {}
        for k in range(0, len(ids), 1000):
            rows = c.dense._client.get(c.dense.collection, ids=ids[k:k + 1000], output_fields=["vector"])
            vectors.update({r["id"]: hashlib.sha256(np.asarray(r["vector"], np.float32).tobytes()).hexdigest()
                            for r in rows})
        text = json.dumps({"chunks": chunks, "manifest": manifest}, ensure_ascii=False, sort_keys=True, default=str)
        text = re.sub(r'"uploaded_at": "[^"]*"', '"uploaded_at": "<when>"', text.replace(str(data_dir.resolve()), "<data>"))
        return {"ids": ids, "fingerprint": c.store.fingerprint(), "text": text, "vectors": vectors,
                "references": c.store.references(), "near_duplicates": c.store.near_duplicates(),
                "dense_count": c.dense.count(), "lexical": c.check(),
                "state": json.loads((data_dir / "state.json").read_text()),
                "texts": sorted(p.name for p in (data_dir / "texts").iterdir())}


def test_a_worker_node_killed_mid_job_leaves_the_corpus_a_single_node_ingest_makes(
        cluster, milvus, sources, tmp_path, monkeypatch):
    c, workers = cluster
    single = tmp_path / "single"
    with Corpus(DataDir(single), load_profile(), embedder=FakeHashEmbedder()) as corpus:  # one node, no Ray
        reference = corpus.ingest(sources)

    monkeypatch.setenv("SAKSI_MILVUS_URI", milvus.uri)
    meter = _KillANodeAfter(c, workers, after=1)
    bulk = tmp_path / "bulk"
    done = {}

    def run():
        done["report"] = bulk_ingest(sources, "lite", bulk, concurrency=2, batch_size=8,
                                     embedder_factory=SLOW, meter=meter)

    job = threading.Thread(target=run, daemon=True)  # a hung job fails the test instead of hanging it
    job.start()
    job.join(timeout=600)
    assert not job.is_alive(), "bulk-ingest did not finish within 10 minutes of a node's loss"
    report = done["report"]

    assert meter.killed is not None and meter.after_kill > 0  # killed mid-job, documents committed after it
    assert len(meter.hosts) == 2  # the pool's two actors were on two nodes when one of them went
    assert report.as_dict() == reference.as_dict()
    assert report.total_chunks > 500

    a = _fingerprint(single, None, monkeypatch)
    b = _fingerprint(bulk, milvus.uri, monkeypatch)
    assert b["ids"] == a["ids"] and b["fingerprint"] == a["fingerprint"]
    assert b["text"] == a["text"]
    assert b["vectors"] == a["vectors"] and len(b["vectors"]) == len(a["ids"]) == b["dense_count"]
    assert b["references"] == a["references"] and b["near_duplicates"] == a["near_duplicates"]
    assert b["state"] == a["state"] and b["texts"] == a["texts"]
