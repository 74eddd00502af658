"""`saksi bulk-ingest` and the embedding cache: the actors embed only what the cache lacks, the driver
stores what they embedded, and the report counts `embedded` and `from_cache` as `saksi ingest` does."""
from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.config import load_profile
from pipeline.corpus import Corpus
from pipeline.index.embedding_cache import EmbeddingCache
from pipeline.text import embedding_text
from serve.bulk_ingest import EmbedActor, bulk_ingest

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration


def counting(log: Path):
    """A factory of fake embedders that note in `log` how many texts they embed (the actors are
    other processes). A closure: Ray's pickling carries it by value to the workers."""
    def make():
        class Counting(FakeHashEmbedder):
            async def embed_passages(self, texts):
                with open(log, "a", encoding="utf-8") as f:
                    f.write(f"{len(texts)}\n")
                return await super().embed_passages(texts)
        return Counting()
    return make


def embedded(log: Path) -> int:
    return sum(int(n) for n in log.read_text().split()) if log.exists() else 0


def batch_of(texts: list[str]) -> dict:
    n = len(texts)
    return {"path": np.array(["a.md"] * n, dtype=object), "chunk_id": np.array([f"c{i}" for i in range(n)], dtype=object),
            "text": np.array(texts, dtype=object), "prepared": np.array([b""] * n, dtype=object),
            "error": np.array([""] * n, dtype=object)}


def test_an_actor_embeds_only_what_the_cache_lacks(tmp_path):
    texts = ["Pasal 1 ketentuan umum", "Pasal 2 tarif 10%", "Pasal 3 denda Rp100.000", "Pasal 4 mulai berlaku"]
    model = FakeHashEmbedder()
    expected = asyncio.run(model.embed_passages(texts))
    EmbeddingCache(tmp_path).put(model.name, texts[1:3], expected[1:3], None)
    log = tmp_path / "embedded.log"
    actor = EmbedActor("lite", counting(log), cache_dir=str(tmp_path))
    out = actor(batch_of(texts))
    assert out["cached"].tolist() == [False, True, True, False] and embedded(log) == 2
    np.testing.assert_allclose(out["vector"], expected, atol=1e-6)
    assert list(out["text"]) == texts and list(out["embedder"]) == [model.name] * 4
    blind = EmbedActor("lite", counting(log), cache_dir=str(tmp_path / "not-here"))  # another node's view
    assert not blind(batch_of(texts))["cached"].any() and embedded(log) == 6
    assert not (tmp_path / "not-here").exists()


def test_a_second_bulk_ingest_of_unchanged_text_embeds_nothing(ray_session, tmp_path, profile):
    data, log = tmp_path / "data", tmp_path / "embedded.log"
    first = bulk_ingest([SAMPLE], "lite", data, batch_size=8, embedder_factory=counting(log))
    n = first.total_chunks
    assert n > 0 and first.embedded == n and first.from_cache == 0 and embedded(log) == n
    with Corpus(data, load_profile(), embedder=FakeHashEmbedder()) as corpus:  # the driver kept the vectors
        texts = [embedding_text(c) for c in corpus.store.get(corpus.store.ids()).values()]
        assert len(EmbeddingCache(data).get(FakeHashEmbedder.name, texts)) == n

    again = bulk_ingest([SAMPLE], "lite", data, batch_size=8, rebuild=True, embedder_factory=counting(log))
    assert embedded(log) == n  # the model was asked for nothing
    assert again.embedded == again.from_cache == n and again.total_chunks == n
    assert again.as_dict()["from_cache"] == n

    model = counting(log)()  # and `saksi ingest` reads what bulk-ingest stored
    with Corpus(data, profile, embedder=model) as corpus:
        local = corpus.ingest([SAMPLE], rebuild=True)
        assert corpus.check() == corpus.store.fingerprint()
    assert embedded(log) == n and local.embedded == local.from_cache == n
