"""Ingest into real Milvus Lite and bm25s files: idempotence, bad input, consistency, repair."""
from __future__ import annotations

import asyncio
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.corpus import Corpus
from pipeline.errors import CorpusIndexError
from pipeline.index import Bm25LexicalIndex
from pipeline.text import embedding_text

from ..conftest import SAMPLE

pytestmark = pytest.mark.integration


@pytest.fixture
def corpus(tmp_path, profile):
    c = Corpus(tmp_path / "data", profile, embedder=FakeHashEmbedder())
    yield c
    c.close()


def counts(c: Corpus) -> tuple[int, int, int, int]:
    lexical = Bm25LexicalIndex.load(c.data_dir / "bm25")
    return len(c.store.documents()), c.store.count(), c.dense.count(), len(lexical.ids)


def test_ingesting_the_same_files_twice_changes_nothing(corpus):
    first = corpus.ingest([SAMPLE])
    before = counts(corpus)
    ids = sorted(corpus.store.ids())
    second = corpus.ingest([SAMPLE])
    assert len(first.ingested) == 4 and not first.errors
    assert second.ingested == [] and len(second.unchanged) == 4 and second.embedded == 0
    assert counts(corpus) == before and before[1] == before[2] == before[3] > 0
    assert sorted(corpus.store.ids()) == ids
    corpus.check()


def test_a_changed_file_replaces_its_chunks_without_duplicates(corpus, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    corpus.ingest([src])
    _, n_before, _, _ = counts(corpus)
    reg = src / "peraturan-ilustratif-7-2025-pph-sewa.md"
    reg.write_text(reg.read_text(encoding="utf-8").replace("10% (sepuluh persen)", "11% (sebelas persen)"),
                   encoding="utf-8")
    report = corpus.ingest([src])
    assert report.ingested == [str(reg)]
    docs, n, dense, lexical = counts(corpus)
    assert n == n_before == dense == lexical  # one chunk replaced, none added
    texts = [c.text for c in corpus.store.get(corpus.store.ids()).values()]
    assert any("11% (sebelas persen)" in t for t in texts)
    assert not any("10% (sepuluh persen)" in t and "Nomor 7" in t for t in texts)
    corpus.check()


def test_bad_files_are_reported_and_skipped_and_the_rest_ingests(corpus, tmp_path):
    src = tmp_path / "mixed"
    shutil.copytree(SAMPLE, src)
    (src / "binary.md").write_bytes(b"\x00\x01\x02PNG")
    (src / "latin1.txt").write_bytes("Pajak atas sewa \xe9t\xe9".encode("latin-1"))
    (src / "bad-front-matter.md").write_text("---\ntitle: [unclosed\n---\nIsi.\n", encoding="utf-8")
    (src / "bad-authority.md").write_text("---\nauthority: rumor\n---\nIsi dokumen.\n", encoding="utf-8")
    (src / "empty.md").write_text("---\ntitle: kosong\n---\n", encoding="utf-8")
    report = corpus.ingest([src, tmp_path / "missing-dir"])
    reasons = {Path(e.path).name: e.reason for e in report.errors}
    assert set(reasons) == {"binary.md", "latin1.txt", "bad-front-matter.md", "bad-authority.md", "empty.md",
                            "missing-dir"}
    assert "binary" in reasons["binary.md"] and "UTF-8" in reasons["latin1.txt"]
    assert "YAML" in reasons["bad-front-matter.md"] and "authority" in reasons["bad-authority.md"]
    assert len(report.ingested) == 4 and report.total_documents == 4
    corpus.check()


def test_two_files_claiming_one_document_id_are_not_merged(corpus, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    text = "---\nid: same-id\n---\n1. Pendapatan diakui ketika kendali beralih kepada pelanggan.\n"
    (a / "x.md").write_text(text, encoding="utf-8")
    (b / "y.md").write_text(text.replace("Pendapatan", "Beban"), encoding="utf-8")
    report = corpus.ingest([a, b])
    assert len(report.ingested) == 1 and len(report.errors) == 1
    assert "same-id" in report.errors[0].reason


def test_inconsistent_indexes_are_refused_and_a_reingest_repairs_them(corpus):
    corpus.ingest([SAMPLE])
    victim = corpus.store.ids()[0]
    corpus.dense.delete([victim])  # as if an ingest died after the store was written
    with pytest.raises(CorpusIndexError, match="dense index"):
        corpus.check()
    report = corpus.ingest([SAMPLE])
    assert report.embedded == 1
    corpus.check()


def test_querying_an_empty_data_dir_says_how_to_fix_it(tmp_path, profile):
    with Corpus(tmp_path / "nothing", profile, embedder=FakeHashEmbedder()) as c:
        with pytest.raises(CorpusIndexError, match="saksi ingest"):
            c.orchestrator()


def test_dense_ann_matches_numpy_brute_force(fake_corpus):
    """Milvus HNSW top-k equals exact cosine top-k on this small corpus."""
    store, dense, emb = fake_corpus.store, fake_corpus.dense, fake_corpus.embedder
    ids = store.ids()
    chunks = store.get(ids)
    matrix = asyncio.run(emb.embed_passages([embedding_text(chunks[i]) for i in ids]))
    for q in ["tarif pajak penghasilan persewaan", "pendapatan diakui pelanggan", "lease payments cash flows"]:
        v = asyncio.run(emb.embed_queries([q]))[0]
        exact = matrix @ v
        want = [ids[i] for i in np.argsort(-exact, kind="stable")[:5]]
        got = asyncio.run(dense.search(v, 5))
        assert [i for i, _ in got] == want
        for cid, score in got:
            assert score == pytest.approx(float(exact[ids.index(cid)]), abs=1e-4)


def test_bm25s_matches_a_straightforward_bm25(fake_corpus):
    """bm25s (lucene variant) against BM25 written out by hand over the stored tokens."""
    ids, docs = fake_corpus.store.all_tokens()
    lexical = Bm25LexicalIndex.load(fake_corpus.data_dir / "bm25")
    k1, b, n = 1.5, 0.75, len(docs)
    avgdl = sum(map(len, docs)) / n
    df = {}
    for d in docs:
        for t in set(d):
            df[t] = df.get(t, 0) + 1

    def naive(query, doc):
        score = 0.0
        for t in query:
            if t not in df:
                continue
            tf = doc.count(t)
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            score += idf * tf / (tf + k1 * (1 - b + b * len(doc) / avgdl))  # Lucene >= 8: no (k1 + 1)
        return score

    for query in [["tarif", "pajak", "sewa"], ["pendapatan", "akui", "pelanggan"], ["lease", "cash"], ["tidakada"]]:
        got = asyncio.run(lexical.score(query, ids))
        for cid, doc in zip(ids, docs):
            assert got[cid] == pytest.approx(naive(query, doc), rel=1e-4, abs=1e-5)


def test_changed_category_rules_require_and_trigger_reprocessing(tmp_path, profile):
    """Tags depend on configs/categories.yaml: a corpus tagged under other rules is not used silently."""
    with Corpus(tmp_path / "data", profile, embedder=FakeHashEmbedder()) as c:
        c.ingest([SAMPLE])
    categories = profile.categories.model_copy(update={"categories": {
        **profile.categories.categories, "rate": profile.categories.categories["amount"]}})
    changed = profile.model_copy(update={"categories": categories})
    with Corpus(tmp_path / "data", changed, embedder=FakeHashEmbedder()) as c:
        with pytest.raises(CorpusIndexError, match="other chunking, category or analysis rules"):
            c.check()
        report = c.ingest([SAMPLE])
        assert len(report.ingested) == 4 and report.embedded == 0  # same chunks, new tags, no re-embedding
        c.check()


def test_a_file_that_breaks_a_stage_unexpectedly_is_reported_and_the_rest_ingests(corpus, monkeypatch):
    """A bug or an odd input deep in cleaning must cost that one file, not the ingest."""
    import pipeline.ingest.source as source

    real = source.clean_text

    def breaks_on_the_standard(text, extracted=None):
        if "Tujuan Standar ini" in text:
            raise ValueError("boom")
        return real(text, extracted=extracted)

    monkeypatch.setattr(source, "clean_text", breaks_on_the_standard)
    report = corpus.ingest([SAMPLE])
    assert [(Path(e.path).name, e.reason) for e in report.errors] == [
        ("standar-ilustratif-172-pendapatan.md", "could not be read (ValueError: boom)")]
    assert len(report.ingested) == 3
    corpus.check()
