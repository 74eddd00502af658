"""One rule written for many subjects, end to end through the real orchestrator, extractive generator, reader, gates,
decision and stream (the fake embedder keeps ingest fast). Three fictional regional-formation laws, written for this
test from the template such laws share, each name their own governor and regency in the same sentence: a question that
does not say which regency it means is refused, naming each law and what it says there; one that names the regency, or
the law, is answered from that law."""
from __future__ import annotations

import asyncio

import pytest

from pipeline.backends.fakes import FakeHashEmbedder
from pipeline.corpus import Corpus
from pipeline.decision import SEVERAL_SUBJECTS

pytestmark = pytest.mark.integration

LAWS = {  # doc id: (number, province, regency)
    "uu-81-2031": (81, "Tanah Rekaan", "Sungai Fiktif"),
    "uu-82-2031": (82, "Laut Contoh", "Bukit Karangan"),
    "uu-83-2031": (83, "Laut Contoh", "Lembah Umpama"),
}


def _law(number: int, province: str, regency: str) -> str:
    title = f"Undang-Undang Nomor {number} Tahun 2031 tentang Pembentukan Kabupaten {regency} di Provinsi {province}"
    supervises = (f"(2) Gubernur {province} melakukan pembinaan, pengawasan, evaluasi, dan fasilitasi terhadap kinerja "
                  f"Penjabat Bupati {regency} dalam penyelenggaraan pemerintahan daerah.")
    return f"""---
title: {title} (fiktif, untuk pengujian)
cite_as: UU {number}/2031
---
{title.upper()}

Pasal 1
Dalam Undang-Undang ini yang dimaksud dengan:
1. Kabupaten {regency} adalah daerah otonom yang dibentuk dengan Undang-Undang ini.

Pasal 2
Dengan Undang-Undang ini dibentuk Kabupaten {regency} di wilayah Provinsi {province}.

Pasal 3
(1) Untuk pertama kali Penjabat Bupati {regency} diangkat oleh Menteri Dalam Negeri atas usul Gubernur {province}.
{supervises}

Pasal 4
Undang-Undang ini mulai berlaku pada tanggal diundangkan.
"""


@pytest.fixture(scope="module")
def formation_laws(tmp_path_factory, profile):
    src = tmp_path_factory.mktemp("formation")
    for doc_id, law in LAWS.items():
        (src / f"{doc_id}.md").write_text(_law(*law), encoding="utf-8")
    corpus = Corpus(tmp_path_factory.mktemp("formation-data"), profile, embedder=FakeHashEmbedder())
    report = corpus.ingest([src])
    assert not report.errors and report.total_documents == len(LAWS)
    yield corpus
    corpus.close()


def _ask(corpus: Corpus, question: str):
    heard: list[tuple[str, dict]] = []
    result, _ = asyncio.run(corpus.orchestrator(write_traces=False).run(
        question, emit=lambda kind, data: heard.append((kind, data))))
    return result, [d["claim"] for k, d in heard if k == "claim"]


def test_a_question_that_does_not_say_which_regency_is_refused_naming_each_law(formation_laws):
    result, streamed = _ask(formation_laws, "Siapa yang melakukan pembinaan, pengawasan, evaluasi, dan fasilitasi "
                                            "terhadap kinerja Penjabat Bupati?")
    assert result.outcome == "refusal" and result.reason_code == SEVERAL_SUBJECTS
    for number, province, regency in LAWS.values():  # each law, with what its sentence says there
        assert f"UU {number}/2031 Pasal 3 ayat (2) ({province}, {regency})" in result.reason
    assert {n.chunk_id for n in result.nearest} >= {c.citations[0].chunk_id for c in result.claims[:1]}
    assert len({n.path.split(" › ")[0] for n in result.nearest}) == 3  # each law's record, to pick from
    supported = [c for c in result.claims if c.status == "supported"]
    assert supported and all(c.confidence.band != "TINGGI" for c in supported)  # its claim kept, not in the top band
    assert streamed == []  # nothing was shown as the answer while it was decided


@pytest.mark.parametrize("question", [
    "Siapa yang melakukan pembinaan terhadap kinerja Penjabat Bupati Bukit Karangan?",  # the regency
    "Menurut UU 82/2031, siapa yang melakukan pembinaan terhadap kinerja Penjabat Bupati?",  # the law
])
def test_a_question_that_names_the_regency_or_the_law_is_answered_from_it(formation_laws, question):
    result, streamed = _ask(formation_laws, question)
    assert result.outcome == "answer", result.reason
    lead = next(c for c in result.claims if c.status == "supported")
    assert lead.citations[-1].doc_id == "uu-82-2031" and "Gubernur Laut Contoh" in lead.citations[-1].quote
    assert streamed == [c for c in result.claims if c.status == "supported"]
