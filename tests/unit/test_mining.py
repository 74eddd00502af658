"""Questions mined from laws (reader/mining.py): each pattern reads the provision it is for, asks
about it without naming the law, and points at the unit that answers; the same law always
gives the same questions."""
from __future__ import annotations

import pytest

from pipeline.analysis import build_analyzers
from pipeline.ingest.chunker import Chunker
from pipeline.answer_reader.mining import Law, mine_law
from pipeline.answer_reader.mining_patterns import nominalise
from pipeline.answer_reader.mining_words import Translator, to_active
from pipeline.types import Document

pytestmark = pytest.mark.unit

LAW = """UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 99 TAHUN 2030 TENTANG KETENAGAKERJAAN PERCOBAAN

BAB I
KETENTUAN UMUM

Pasal 1
Dalam Undang-Undang ini yang dimaksud dengan:
1. Tenaga Kerja Asing yang selanjutnya disingkat TKA adalah warga negara asing pemegang visa dengan maksud bekerja di wilayah Indonesia.
2. Pemberi Kerja adalah badan hukum yang mempekerjakan tenaga kerja dengan membayar upah.

Pasal 2
(1) Rencana penggunaan TKA terdiri atas:
a. rencana untuk pekerjaan bersifat sementara;
b. rencana untuk pekerjaan lebih dari 6 (enam) bulan; dan
c. rencana untuk kegiatan penelitian.
(2) Pemberi Kerja wajib melaporkan penggunaan TKA kepada Menteri setiap tahun.

Pasal 3
Izin penggunaan TKA diterbitkan oleh Menteri paling lama 5 (lima) hari kerja sejak permohonan diterima.

Pasal 4
Setiap orang yang mempekerjakan TKA tanpa izin dipidana dengan pidana penjara paling lama 1 (satu) tahun.

Pasal 5
Undang-Undang ini mulai berlaku pada tanggal diundangkan.
"""


@pytest.fixture(scope="module")
def mined(profile):
    doc = Document(doc_id="uu-2030-99", title="UNDANG-UNDANG NOMOR 99 TAHUN 2030 TENTANG KETENAGAKERJAAN PERCOBAAN",
                   original="uu.md", lang="id", content_hash="x", cite_as="UU 99/2030", rendition="uu.txt")
    chunks = tuple(Chunker(1500).chunks(doc, LAW))
    law = Law("uu/2030/99.md", "UU 99/2030", doc.title, chunks)
    tr = Translator(profile.glossary, build_analyzers(profile.analysis)["id"])
    return law, mine_law(law, profile, tr), mine_law(law, profile, tr)


def _by(questions, pattern):
    return [q for q in questions if q.pattern == pattern]


def test_the_same_law_gives_the_same_questions(mined):
    _, first, second = mined
    assert first == second and len(first) >= 8
    assert len({q.qid for q in first}) == len(first)


def test_definitions_are_asked_by_their_term_and_answered_by_their_entry(mined):
    law, questions, _ = mined
    defs = _by(questions, "definition")
    assert {q.kind for q in defs} == {"item"} and len(defs) == 2
    tka = next(q for q in defs if "Tenaga Kerja Asing" in q.answer)
    assert ("tka" in tka.question.lower() or "tenaga kerja asing" in tka.question.lower()
            or "foreign worker" in tka.question.lower())
    # the gold is the lead-in and the entry, two pieces of the same chunk (each cited to its own span)
    assert tka.answer.startswith("Dalam Undang-Undang ini yang dimaksud dengan: [...] 1. Tenaga Kerja Asing")
    assert len(tka.segments) == 2
    chunk = next(c for c in law.chunks if c.chunk_id == tka.chunk_id)
    assert chunk.location == "Pasal 1"


def test_a_list_is_asked_for_whole_and_item_by_item(mined):
    _, questions, _ = mined
    (enum,) = _by(questions, "enumeration")
    assert enum.kind == "enumeration" and "Rencana penggunaan TKA terdiri atas:" in enum.answer
    assert "rencana penggunaan tka" in enum.question.lower() or "what" in enum.question.lower()
    items = _by(questions, "item")
    assert items and all(q.kind == "item" and "[...]" in q.answer or q.answer.count("\n") >= 1 for q in items)


def test_durations_who_obligations_sanctions_and_entry_into_force(mined):
    _, questions, _ = mined
    patterns = {q.pattern for q in questions}
    assert {"duration", "obligation", "sanction", "in_force"} <= patterns
    (duration,) = _by(questions, "duration")
    assert "5 (lima) hari kerja" in duration.answer and "5" not in duration.question  # the question asks, not tells
    (sanction,) = _by(questions, "sanction")
    assert "dipidana" in sanction.answer and "dipidana" not in sanction.question
    (in_force,) = _by(questions, "in_force")
    assert "ketenagakerjaan percobaan" in in_force.question.lower() or "law on" in in_force.question.lower()
    assert all("UU 99/2030" not in q.question and "99" not in q.question for q in questions)  # never named


@pytest.mark.parametrize("passive,active", [("dilaksanakan", "melaksanakan"), ("ditetapkan", "menetapkan"),
                                            ("diberikan", "memberikan"), ("disampaikan", "menyampaikan"),
                                            ("dikeluarkan", "mengeluarkan"), ("diajukan", "mengajukan"),
                                            ("dipekerjakan", "mempekerjakan")])
def test_the_active_form_of_a_passive_verb(passive, active):
    assert to_active(passive) == active


@pytest.mark.parametrize("verb,noun", [("memberikan", "pemberian"), ("dilaksanakan", "pelaksanaan"),
                                       ("mengawasi", "pengawasan"), ("memberi", "pemberian"), ("membayar", "pembayaran"),
                                       ("didaftarkan", "pendaftaran"), ("menyampaikan", "penyampaian"),
                                       ("mengajukan", "pengajuan"), ("menetapkan", "penetapan")])
def test_the_noun_of_an_action(profile, verb, noun):
    assert nominalise(verb, build_analyzers(profile.analysis)["id"].stem) == noun


def test_a_list_of_what_a_term_consists_of_is_also_asked_as_its_meaning(mined, profile):
    # "X terdiri atas: a. … b. …" says what X covers: among its phrasings is "Apa yang dimaksud dengan X?", a question
    # the definition route sends to the candidates that state a meaning, this list among them
    from pipeline.categories import CategoryTagger
    from pipeline.answer_reader import answer_candidates
    from pipeline.answer_reader.mining import context_item
    from pipeline.answer_reader.mining_patterns import _enumeration

    law, _, _ = mined
    chunk = next(c for c in law.chunks if c.location.startswith("Pasal 2"))
    tr = Translator(profile.glossary, build_analyzers(profile.analysis)["id"])
    (enum,) = [c for c in answer_candidates([context_item(chunk)], 30, 700, None, (), 1200) if c.kind == "enumeration"]
    asked = {_enumeration(enum, chunk, f"k{i}", tr) for i in range(40)}
    assert ("Apa yang dimaksud dengan rencana penggunaan TKA?", False) in asked
    route = profile.routes.route("Apa yang dimaksud dengan rencana penggunaan TKA?")
    kept = answer_candidates([context_item(chunk)], 30, 700, CategoryTagger(profile.categories), route.required, 1200)
    assert any(c.segments == enum.segments for c in kept)
