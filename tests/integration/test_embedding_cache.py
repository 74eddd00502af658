"""Unchanged text is never embedded twice: a rebuild, a copy under another id, new rules."""
from __future__ import annotations

import asyncio
import re

import numpy as np
import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.corpus import Corpus
from pipeline.index.embedding_cache import EmbeddingCache, embed_passages

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration


class CountingEmbedder(FakeHashEmbedder):
    """A fake embedder (test double) that counts the texts the model was asked to embed."""

    def __init__(self):
        super().__init__()
        self.embedded: list[str] = []

    async def embed_passages(self, texts):
        self.embedded += list(texts)
        return await super().embed_passages(texts)


def test_a_rebuild_and_a_copy_under_another_id_embed_nothing_new(tmp_path, profile):
    model = CountingEmbedder()
    with Corpus(tmp_path / "data", profile, embedder=model) as corpus:
        first = corpus.ingest([SAMPLE])
        n = len(model.embedded)
        assert n == first.total_chunks > 0

        model.embedded.clear()
        rebuilt = corpus.ingest([SAMPLE], rebuild=True)
        assert model.embedded == [] and rebuilt.total_chunks == first.total_chunks
        assert first.from_cache == 0 and rebuilt.from_cache == rebuilt.embedded == n
        assert corpus.dense.count() == corpus.store.count()
        assert corpus.embedding_cache.hits >= n

        src = next(p for p in sorted(SAMPLE.glob("*.md")) if p.name != "README.md")
        moved = tmp_path / "moved"
        moved.mkdir()
        text = src.read_text(encoding="utf-8")
        (moved / "copy.md").write_text(text.replace("id: ", "id: copy-", 1), encoding="utf-8")
        model.embedded.clear()
        report = corpus.ingest([moved])
        assert report.ingested and model.embedded == []  # same title, places and words: the vectors are known

        retitled = re.sub(r"(?m)^title: .*$", "title: Judul Baru", text.replace("id: ", "id: copy-", 1), count=1)
        (moved / "copy.md").write_text(retitled, encoding="utf-8")
        report = corpus.ingest([moved])
        assert report.ingested and len(model.embedded) == report.chunks_written > 0  # a new title is new text


def test_cached_vectors_are_the_model_s_own(tmp_path):
    model = FakeHashEmbedder()
    cache = EmbeddingCache(tmp_path)
    texts = ["Pasal 3 ayat (1) tarif 10%", "Pasal 7 denda Rp100.000", "Pasal 3 ayat (1) tarif 10%"]
    direct = asyncio.run(model.embed_passages(texts))
    first, _ = asyncio.run(embed_passages(model, texts[:2], cache, hybrid=False))
    again, _ = asyncio.run(embed_passages(model, texts, cache, hybrid=False))
    assert np.allclose(first, direct[:2]) and np.allclose(again, direct)
    assert (cache.hits, cache.misses) == (3, 2)
    other = EmbeddingCache(tmp_path)  # kept on disk, per model name
    assert set(other.get(model.name, texts)) == {0, 1, 2} and other.get("another-model", texts) == {}
    empty, sparse = asyncio.run(embed_passages(model, [], cache, hybrid=False))
    assert empty.shape == (0, model.dim) and sparse is None
