"""The sparse lane through the Serve layer, in process: the Embedder deployment's class gives
both vectors, the Retriever deployment's class answers sparse searches and builds a context with
all three lanes, and the handle adapters (serve/handles.py) carry them — over a fake handle that
calls the deployment objects directly (no Ray cluster needed for the plumbing)."""
from __future__ import annotations

import asyncio

import numpy as np

from pipeline.corpus import Corpus
from pipeline.config import load_profile
from pipeline.context import ContextRequest
from pipeline.protocols import SparseEmbedder, SparseIndex
from pipeline.query import Part
from serve.config import Batch, Placement, RuntimeSettings
from serve.deployments import EmbedderDeployment, RerankerDeployment, RetrieverDeployment
from serve.handles import HandleSparseEmbedder

from ..conftest import SAMPLE
from ..fake_handles import FakeHandle, fake_replica_context


def test_sparse_search_through_the_deployments_and_handles(tiny_config_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("SAKSI_CONFIG_DIR", str(tiny_config_dir))
    fake_replica_context(monkeypatch)
    data = tmp_path / "data"
    with Corpus(data, load_profile("tiny")) as c:
        c.ingest([SAMPLE])
    embedder = EmbedderDeployment.func_or_class("tiny")
    handle_emb = HandleSparseEmbedder(FakeHandle(embedder), embedder.model.name, embedder.model.dim, timeout=60)
    assert isinstance(handle_emb, SparseEmbedder)
    dense, (weights,) = asyncio.run(handle_emb.embed_queries_hybrid(["tarif pajak sewa tanah"]))
    assert dense.shape == (1, embedder.model.dim) and weights

    reranker = RerankerDeployment.func_or_class("tiny", Batch(max_batch_size=4, batch_wait_timeout_s=0.001))
    retriever = RetrieverDeployment.func_or_class("tiny", str(data), RuntimeSettings(placement=Placement(query_embedder="embedder")),
                                                  FakeHandle(embedder), FakeHandle(reranker))
    assert asyncio.run(retriever.ready())["ready"]
    index = retriever.library.indexes().sparse
    assert isinstance(index, SparseIndex)
    hits = asyncio.run(index.sparse_search(weights, 5))
    assert hits and all(s > 0 for _, s in hits)
    again = asyncio.run(index.sparse_score(weights, [i for i, _ in hits]))
    assert np.allclose([again[i] for i, _ in hits], [s for _, s in hits], atol=1e-3)

    # the whole context in one call: the question embedded by the Embedder (both vectors), three lanes fused
    profile = load_profile("tiny")
    ctx = asyncio.run(retriever.context(ContextRequest(Part("tarif pajak sewa tanah"), "id", profile.routes.default)))
    assert ctx.context and ctx.plan.text == "tarif pajak sewa tanah"
    assert any(c.sparse_rank is not None for c in ctx.candidates)
    assert all(c.rerank_score is not None for c in ctx.context)
    retriever.library.corpus.close()
