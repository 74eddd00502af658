"""A claim quoting one ayat also quotes the ayat of its Pasal bound to it by a reference back.

"(1) Pemberi Kerja TKA wajib …" is read with "(2) Kewajiban sebagaimana dimaksud pada ayat (1) tidak berlaku bagi …":
a rule shown without its exception misleads the reader who relies on it; "(2) Jabatan … sebagaimana dimaksud pada ayat
(1) …" names its subject only in ayat (1). The extractive generator adds such ayat as further quotes of the claim
(reader/answers.bound_ayat), each cited to its own ayat and checked by the real gates.
"""
from __future__ import annotations

import asyncio
import json

import pytest

from pipeline.analysis import QueryAnalyzer, build_analyzers
from pipeline.backends.lite import ExtractiveGenerator, VerbatimJudge
from pipeline.claims import MAX_CITATIONS
from pipeline.config import ConfidenceSettings, JudgeSettings
from pipeline.gates import verify
from pipeline.answer_reader import answer_candidates
from pipeline.answer_reader.answers import ayat_referred, bound_ayat
from pipeline.types import GenerationRequest

from .regulation_chunks import chunks_of, context_item

pytestmark = pytest.mark.unit

REGULATION = """PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 34 TAHUN 2021

Pasal 11
(1) Pemberi Kerja TKA dilarang mempekerjakan TKA pada jabatan yang mengurusi personalia.
(2) Jabatan yang mengurusi personalia sebagaimana dimaksud pada ayat (1) ditetapkan oleh Menteri setelah mendapat masukan dari kementerian terkait.

Pasal 26
(1) Pemberi Kerja TKA wajib mendaftarkan TKA dalam program jaminan sosial nasional paling lambat 30 (tiga puluh) hari.
(2) Pemberi Kerja TKA wajib melaporkan penggunaan TKA kepada Menteri setiap tahun.
(3) Kewajiban sebagaimana dimaksud pada ayat (1) tidak berlaku bagi TKA yang bekerja kurang dari 6 (enam) bulan.
(4) Pengecualian sebagaimana dimaksud pada ayat (3) dicatat oleh Pengawas Ketenagakerjaan.
(5) Ketentuan lebih lanjut mengenai jaminan sosial sebagaimana dimaksud dalam Pasal 11 ayat (1) diatur dengan Peraturan Menteri.
"""


@pytest.fixture(scope="module")
def chunks():
    return chunks_of(REGULATION)


_item = context_item


def _quotes(chunk, start_words):
    """The bound ayat of the sentence candidate that starts with `start_words`."""
    (cand,) = [c for c in answer_candidates([_item(chunk)], 30, 700, max_unit_chars=1200)
               if c.kind == "sentence" and c.quote.startswith(start_words)]
    return [chunk.text[a:b] for a, b in bound_ayat(chunk.text, chunk.spans, cand.segments, 1200)]


@pytest.mark.parametrize("text,referred", [
    ("Jabatan sebagaimana dimaksud pada ayat (1) ditetapkan oleh Menteri", {"1"}),
    ("Kewajiban sebagaimana dimaksud pada ayat (1) dan ayat (3) berlaku", {"1", "3"}),
    ("sebagaimana dimaksud pada ayat (1), ayat (2), dan ayat (5)", {"1", "2", "5"}),
    ("sebagaimana dimaksud pada ayat (2) sampai dengan ayat (4)", {"2", "3", "4"}),
    ("sebagaimana dimaksud pada ayat (1) huruf a diberikan", {"1"}),
    ("the obligation referred to in paragraph (2) does not apply", {"2"}),
    # another Pasal's ayat is not this Pasal's
    ("sebagaimana dimaksud dalam Pasal 5 ayat (1) diatur dengan Peraturan Menteri", set()),
    ("Pemberi Kerja TKA wajib melaporkan penggunaan TKA", set()),
])
def test_the_ayat_a_text_refers_back_to(text, referred):
    assert ayat_referred(text) == referred


def test_a_rule_is_quoted_with_the_ayat_that_qualify_it_and_theirs_in_turn(chunks):
    pasal = chunks["Pasal 26"]
    assert _quotes(pasal, "Pemberi Kerja TKA wajib mendaftarkan") == [
        "Kewajiban sebagaimana dimaksud pada ayat (1) tidak berlaku bagi TKA yang bekerja kurang dari 6 (enam) bulan.",
        "Pengecualian sebagaimana dimaksud pada ayat (3) dicatat oleh Pengawas Ketenagakerjaan."]
    # ayat (2) is referred to by none; ayat (5) refers to another Pasal's ayat (1), not this one's
    assert _quotes(pasal, "Pemberi Kerja TKA wajib melaporkan") == []


def test_an_ayat_that_names_its_subject_by_a_reference_back_is_quoted_with_that_ayat(chunks):
    # ayat (4) refers to (3), which refers to (1): both are what (4) speaks of; (2) and (5) are not bound to it
    assert _quotes(chunks["Pasal 26"], "Pengecualian sebagaimana") == [
        "Pemberi Kerja TKA wajib mendaftarkan TKA dalam program jaminan sosial nasional paling lambat 30 (tiga puluh) "
        "hari.",
        "Kewajiban sebagaimana dimaksud pada ayat (1) tidak berlaku bagi TKA yang bekerja kurang dari 6 (enam) bulan."]
    assert _quotes(chunks["Pasal 11"], "Jabatan yang mengurusi") == [
        "Pemberi Kerja TKA dilarang mempekerjakan TKA pada jabatan yang mengurusi personalia."]


def test_a_whole_pasal_needs_no_qualifier(chunks):
    pasal = chunks["Pasal 26"]
    (whole,) = [c for c in answer_candidates([_item(pasal)], 30, 700, max_unit_chars=1200) if c.kind == "pasal"]
    assert bound_ayat(pasal.text, pasal.spans, whole.segments, 1200) == ()


def test_a_qualifier_longer_than_the_unit_limit_is_left_out(chunks):
    pasal = chunks["Pasal 11"]
    (cand,) = [c for c in answer_candidates([_item(pasal)], 30, 700) if c.quote.startswith("Pemberi Kerja TKA")]
    assert bound_ayat(pasal.text, pasal.spans, cand.segments, 1200)
    assert bound_ayat(pasal.text, pasal.spans, cand.segments, 50) == ()


@pytest.fixture(scope="module")
def qa(profile):
    return QueryAnalyzer(build_analyzers(profile.analysis), profile.glossary, profile.normalisation)


def _claims(qa, profile, chunk, question, **update):
    settings = profile.settings.generator.model_copy(update={"min_coverage": 0.75, "reader": None, **update})
    req = GenerationRequest(question, "id", (_item(chunk),), tuple(qa.term_groups(qa.normalise(question), "id")))
    out = asyncio.run(ExtractiveGenerator(settings, qa).generate(req))
    verified = asyncio.run(verify(out, {chunk.chunk_id: chunk}, {chunk.chunk_id: chunk.text}, {chunk.chunk_id: 0.8},
                                  VerbatimJudge(), JudgeSettings(backend="verbatim"), ConfidenceSettings()))
    return json.loads(out.raw)["claims"], verified.claims


def test_the_generator_quotes_the_exception_after_the_rule_and_the_gates_pass_it(qa, profile, chunks):
    raw, verified = _claims(qa, profile, chunks["Pasal 26"],
                            "Kapan pemberi kerja TKA wajib mendaftarkan TKA dalam program jaminan sosial nasional?")
    (claim,) = [c for c in verified if c.text.startswith("Pemberi Kerja TKA wajib mendaftarkan")]
    assert claim.status == "supported" and all(x.ok for x in claim.citations)
    assert [x.path for x in claim.citations] == ["PP 34/2021 › Pasal 26 › ayat (1)", "PP 34/2021 › Pasal 26 › ayat (3)",
                                                 "PP 34/2021 › Pasal 26 › ayat (4)"]
    # the claim states the rule only: the exception is a quote beside it, not words put into the claim
    assert "tidak berlaku" not in claim.text and claim.verdict.label == "entailed"
    assert all(len(c["citations"]) <= MAX_CITATIONS for c in raw)


def test_the_qualifiers_can_be_turned_off(qa, profile, chunks):
    raw, verified = _claims(qa, profile, chunks["Pasal 26"],
                            "Kapan pemberi kerja TKA wajib mendaftarkan TKA dalam program jaminan sosial nasional?",
                            bound_ayat=False)
    (claim,) = [c for c in verified if c.text.startswith("Pemberi Kerja TKA wajib mendaftarkan")]
    assert [x.path for x in claim.citations] == ["PP 34/2021 › Pasal 26 › ayat (1)"]
