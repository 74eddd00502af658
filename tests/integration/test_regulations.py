"""Real regulations no one here wrote (../shared/data/regulations/pmk, pdftotext output).

The fake embedder keeps this fast; the chunker, store, Milvus Lite, bm25s, the lite
reranker, generator, judge and gates are the real ones.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.corpus import Corpus

from ..conftest import require_regulations

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def regulations(tmp_path_factory, profile):
    corpus = Corpus(tmp_path_factory.mktemp("regs"), profile, embedder=FakeHashEmbedder())
    report = corpus.ingest([require_regulations()])
    yield corpus, report
    corpus.close()


def test_every_regulation_ingests(regulations):
    corpus, report = regulations
    files = sorted(require_regulations().glob("*.md"))
    assert not report.errors and len(report.ingested) == len(files) == report.total_documents
    corpus.check()


def test_answer_quotes_are_verbatim_in_the_source_files(regulations):
    corpus, _ = regulations
    question = "Berapa besaran Bea Masuk Tindakan Pengamanan untuk kain tenunan dari kapas?"
    result = asyncio.run(corpus.orchestrator().answer(question))
    assert result.outcome == "answer"
    for claim in result.claims:
        for cit in claim.citations:
            if not cit.ok:
                continue
            source = Path(cit.source).read_text(encoding="utf-8")
            start, end = cit.span
            assert cit.quote in source[start:end]
    cited = [(x.doc_id, x.location) for c in result.claims if c.status == "supported" for x in c.citations]
    assert any(doc == "pmk-098-2025" and loc.startswith("Pasal") for doc, loc in cited)


def test_unrelated_question_is_refused_over_real_regulations(regulations):
    corpus, _ = regulations
    result = asyncio.run(corpus.orchestrator().answer("Berapa harga tiket pesawat dari Jakarta ke Bali?"))
    assert result.outcome == "refusal" and result.nearest
    assert not [c for c in result.claims if c.status == "supported"]


def test_real_lite_profile_cites_the_definition_pasal(tmp_path, profile):
    """With the real embedder, on three real regulations: the definition comes from Pasal 1."""
    regs = require_regulations()
    src = [regs / "pmk-098-2025.md", regs / "pmk-009-2025.md", regs / "pmk-117-2025.md"]
    with Corpus(tmp_path / "data", profile) as corpus:
        corpus.ingest(src)
        result = asyncio.run(corpus.orchestrator().answer("Apa yang dimaksud dengan Bea Masuk Tindakan Pengamanan?"))
    assert result.outcome == "answer"
    first = result.claims[0]
    assert "yang dimaksud dengan Bea Masuk Tindakan Pengamanan adalah" in first.text
    assert first.citations[0].doc_id == "pmk-098-2025" and first.citations[0].location == "Pasal 1"
    source = Path(first.citations[0].source).read_text(encoding="utf-8")
    assert first.citations[0].quote in source
