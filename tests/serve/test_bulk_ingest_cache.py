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
from pipeline.corpus.ingestor import SilentMeter
from serve.bulk_ingest import REMEMBER_EVERY, EmbedActor, bulk_ingest

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


def _long_regulation(folder: Path, pasal: int = 60) -> Path:
    """A fictional regulation of `pasal` one-sentence Pasal: one long document, many passages."""
    folder.mkdir(parents=True, exist_ok=True)
    body = "\n\n".join(f"Pasal {k}\nWajib Pajak golongan {k} menyampaikan laporan kepada Menteri paling lambat tanggal "
                       f"{k % 28 + 1} setiap bulan dengan melampirkan bukti pembayaran golongan {k}." for k in
                       range(1, pasal + 1))
    path = folder / "pmc-1-2030.md"
    path.write_text(f"---\ntitle: Peraturan Menteri Contoh Nomor 1 Tahun 2030 (fiktif, untuk pengujian)\ncite_as: "
                    f"PMC 1/2030\n---\nPERATURAN MENTERI CONTOH NOMOR 1 TAHUN 2030\n\n{body}\n", encoding="utf-8")
    return path


def _texts_of(src: Path) -> list[str]:
    """The texts the actors embed for the file's passages (as `saksi ingest` prepares it)."""
    from pipeline.ingest.prepare import DocumentPreparer

    prepared = DocumentPreparer(load_profile(), src.parent / "scratch").prepare(src)
    return [embedding_text(c) for c in prepared.chunks]


class _StopWithin(SilentMeter):
    """Stops the job (as Ctrl-C would) when `after` vectors of the document being embedded have reached the driver."""

    def __init__(self, after: int):
        self.after, self.doc, self.heard, self.total = after, None, 0, 0

    def embedding(self, doc_id, chunks):
        self.doc, self.heard, self.total = doc_id, 0, chunks

    def embedded(self, chunks):
        self.heard += chunks
        if self.heard == self.after:
            raise KeyboardInterrupt


def test_a_job_stopped_inside_a_long_document_keeps_the_vectors_that_reached_the_driver(ray_session, tmp_path):
    """The vectors of a long document reach the embedding cache as its batches arrive, not when the whole
    document is in: stopped 40 passages into it, the cache holds those the driver had stored (a multiple of
    REMEMBER_EVERY, none past where it stopped), and a run again asks the model only for the rest."""
    src, data, log = _long_regulation(tmp_path / "src"), tmp_path / "data", tmp_path / "embedded.log"
    stop = _StopWithin(40)
    with pytest.raises(KeyboardInterrupt):
        bulk_ingest([src], "lite", data, batch_size=8, embedder_factory=counting(log), meter=stop)
    assert stop.doc == "pmc-1-2030" and stop.total >= 60
    with Corpus(data, load_profile(), embedder=FakeHashEmbedder()) as corpus:
        assert corpus.store.count() == 0  # the document itself was not committed
    kept = len(EmbeddingCache(data).get(FakeHashEmbedder.name, _texts_of(src)))
    assert kept == 40 // REMEMBER_EVERY * REMEMBER_EVERY > 0
    before = embedded(log)
    again = bulk_ingest([src], "lite", data, batch_size=8, embedder_factory=counting(log))
    assert again.total_chunks == stop.total and again.from_cache == kept
    assert embedded(log) - before == stop.total - kept  # the model embedded only what the cache lacked


def waiting(log: Path, signal: Path):
    """Fake embedders (as `counting`) that, from their third batch on, wait until the driver has heard of a
    passage (`signal` exists); a wait that runs out is noted in `log`."""
    def make():
        import time

        class Waiting(FakeHashEmbedder):
            calls = 0

            async def embed_passages(self, texts):
                self.calls += 1
                if self.calls >= 3:
                    deadline = time.monotonic() + 30
                    while not signal.exists() and time.monotonic() < deadline:
                        time.sleep(0.05)
                    if not signal.exists():  # say which batch waited, to tell a late driver from a batch run early
                        with open(log, "a", encoding="utf-8") as f:
                            f.write(f"call {self.calls} ran out, its first passage: {texts[0][:80]!r}\n")
                return await super().embed_passages(texts)
        return Waiting()
    return make


def test_the_driver_hears_a_long_document_batch_by_batch(ray_session, tmp_path, monkeypatch):
    """Rows leave the actor as its batches finish (blocks of about STREAM_BLOCK_BYTES, here set so that one batch
    fills one), so the driver hears of a long document's first passages while the actor still embeds the rest: the
    actor's third batch waits for the driver to hear one, and never has to wait it out (with Ray Data's default
    128 MiB blocks it does: the whole document is one block)."""
    import serve.bulk_ingest as bulk

    monkeypatch.setattr(bulk, "STREAM_BLOCK_BYTES", 2 * 1024)
    src, data, log, signal = _long_regulation(tmp_path / "src"), tmp_path / "data", tmp_path / "log", tmp_path / "go"

    class Heard(SilentMeter):
        def embedded(self, chunks):
            signal.touch()
    report = bulk_ingest([src], "lite", data, batch_size=8, embedder_factory=waiting(log, signal), meter=Heard())
    assert report.total_chunks >= 60 and signal.exists()
    assert not log.exists(), log.read_text()  # no wait ran out
