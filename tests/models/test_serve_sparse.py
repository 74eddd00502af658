"""The sparse lane through the Serve layer, in process: the Retriever deployment's class
answers sparse searches, the Embedder deployment's class gives both vectors, and the
handle adapters (serve/handles.py) carry them — over a fake handle that calls the
deployment objects directly (no Ray cluster needed for the plumbing)."""
from __future__ import annotations

import asyncio

import numpy as np

from pipeline.corpus import Corpus
from pipeline.config import load_profile
from pipeline.protocols import SparseEmbedder, SparseIndex
from serve.deployments import EmbedderDeployment, RetrieverDeployment
from serve.handles import HandleSparseEmbedder, HandleSparseIndex

from ..conftest import SAMPLE


class _FakeMethod:
    def __init__(self, fn):
        self.fn = fn

    def remote(self, *args, **kwargs):
        return self.fn(*args, **kwargs)  # a coroutine, awaitable like a DeploymentResponse


class FakeHandle:
    """Stands in for a DeploymentHandle: `h.method.remote(*args)` calls the object in process."""

    def __init__(self, target):
        self._target = target

    def __getattr__(self, name):
        return _FakeMethod(getattr(self._target, name))


def test_sparse_search_through_the_deployments_and_handles(tiny_config_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("SAKSI_CONFIG_DIR", str(tiny_config_dir))
    data = tmp_path / "data"
    with Corpus(data, load_profile("tiny")) as c:
        c.ingest([SAMPLE])
    embedder = EmbedderDeployment.func_or_class("tiny")
    handle_emb = HandleSparseEmbedder(FakeHandle(embedder), embedder.model.name, embedder.model.dim, timeout=60)
    assert isinstance(handle_emb, SparseEmbedder)
    dense, (weights,) = asyncio.run(handle_emb.embed_queries_hybrid(["tarif pajak sewa tanah"]))
    assert dense.shape == (1, embedder.model.dim) and weights

    retriever = RetrieverDeployment.func_or_class("tiny", str(data))
    assert asyncio.run(retriever.ready())["ready"]
    index = HandleSparseIndex(FakeHandle(retriever), timeout=60)
    assert isinstance(index, SparseIndex)
    hits = asyncio.run(index.sparse_search(weights, 5))
    assert hits and all(s > 0 for _, s in hits)
    again = asyncio.run(index.sparse_score(weights, [i for i, _ in hits]))
    assert np.allclose([again[i] for i, _ in hits], [s for _, s in hits], atol=1e-3)
    retriever.corpus.close()
