"""Sufficiency, conflicts and the per-part decision."""
from __future__ import annotations

from dataclasses import replace

import pytest

from pipeline.config import ConfidenceSettings, Route
from pipeline.decision import (MISSING_EVIDENCE, NO_CANDIDATES, NO_SUPPORTED_CLAIMS, OTHER_DEFINITIONS, AttemptSummary,
                               decide_part, find_ambiguity, find_conflicts, definitions_capped, sufficiency)
from pipeline.restatements import stated_citation
from pipeline.types import Candidate, Chunk, CitationCheck, Confidence, Span, Sufficiency, VerifiedClaim

pytestmark = pytest.mark.unit


def chunk(cid, doc, categories, published=None, is_example=False, text="t"):
    return Chunk(chunk_id=cid, doc_id=doc, title=f"Dok {doc}", location="Pasal 1", text=text, lang="id",
                 unit=f"{doc}#1", ordinal=0, start=0, end=1, categories=tuple(categories), published=published,
                 is_example=is_example)


def supported(text, cid, is_example=False):
    conf = Confidence(judge=1.0, retrieval=1.0, generator=1.0, weights={}, raw=1.0, cap=None, value=1.0, band="TINGGI")
    return VerifiedClaim(text=text, status="supported", citations=(CitationCheck(cid, text, "Dok", "Pasal 1", True),),
                         is_example=is_example, confidence=conf)


RATE = Route(name="rate", required=("rate",))


def test_sufficiency_names_what_is_missing():
    chunks = {"a": chunk("a", "d1", ["definition"])}
    s = sufficiency(RATE, [supported("Wajib Pajak adalah ...", "a")], chunks)
    assert s.missing == ("rate",) and not s.ok


def test_sufficiency_satisfied_by_a_cited_chunk_with_the_category():
    chunks = {"a": chunk("a", "d1", ["rate"])}
    s = sufficiency(RATE, [supported("Tarifnya 10%.", "a")], chunks)
    assert s.ok and s.satisfied == {"rate": "a"}


def test_examples_do_not_satisfy_a_requirement_unless_the_route_says_so():
    chunks = {"a": chunk("a", "d1", ["rate"], is_example=True)}
    claims = [supported("Contoh: tarif 10%.", "a", is_example=True)]
    assert sufficiency(RATE, claims, chunks).missing == ("rate",)
    lenient = Route(name="example", required=("rate",), examples_satisfy=True)
    assert sufficiency(lenient, claims, chunks).ok


def test_unsupported_claims_never_satisfy_anything():
    chunks = {"a": chunk("a", "d1", ["rate"])}
    demoted = VerifiedClaim(text="x", status="unsupported", citations=(CitationCheck("a", "x", "D", "L", False),))
    assert sufficiency(RATE, [demoted], chunks).missing == ("rate",)


def _summary(supported=0, missing=(), failure=None, had=True):
    return AttemptSummary(supported, Sufficiency(("rate",), {}, tuple(missing)), failure, had)


def test_first_successful_attempt_answers():
    out = decide_part(0, "q", RATE, [_summary(0, ["rate"]), _summary(2)])
    assert out.answered and out.attempt_used == 1


@pytest.mark.parametrize("attempt,code", [
    (_summary(0, ["rate"]), NO_SUPPORTED_CLAIMS),
    (_summary(2, ["rate"]), MISSING_EVIDENCE),
    (_summary(0, ["rate"], had=False), NO_CANDIDATES),
    (_summary(0, ["rate"], failure="generator_output_invalid_json"), "generator_output_invalid_json"),
])
def test_refusal_reason_comes_from_the_last_attempt(attempt, code):
    out = decide_part(0, "q", RATE, [_summary(0, ["rate"]), attempt])
    assert not out.answered and out.reason == code and out.missing_categories == ("rate",)


def _tokens(text):
    return frozenset(text.lower().replace(".", "").split())


def test_conflicting_rates_from_two_records_are_surfaced_with_both_citations():
    chunks = {"new": chunk("new", "pmi-7", ["rate"], "2025-03-01"), "old": chunk("old", "pmi-3", ["rate"], "2022-06-01")}
    claims = [supported("Besarnya pajak atas persewaan adalah 10% dari jumlah bruto.", "new"),
              supported("Besarnya pajak atas persewaan adalah 15% dari jumlah bruto.", "old")]
    (conflict,) = find_conflicts(claims, chunks, _tokens, 0.3)
    assert conflict.claims == (0, 1) and set(conflict.chunk_ids) == {"new", "old"}
    assert "10%" in conflict.detail and "15%" in conflict.detail and "2022-06-01" in conflict.detail


def test_a_conflict_with_an_upload_says_who_uploaded_it():
    from dataclasses import replace

    chunks = {"new": replace(chunk("new", "pmi-7", ["rate"], "2025-03-01"), uploaded_by="local"),
              "up": replace(chunk("up", "salinan", ["rate"]), uploaded_by="key:a77ac0000001", authority="unknown")}
    claims = [supported("Besarnya pajak atas persewaan adalah 10% dari jumlah bruto.", "new"),
              supported("Besarnya pajak atas persewaan adalah 1% dari jumlah bruto.", "up")]
    (conflict,) = find_conflicts(claims, chunks, _tokens, 0.3)
    left, right = conflict.detail.split(" ≠ ")
    assert "uploaded by" not in left and "uploaded by key:a77ac0000001, authority unknown" in right


def test_different_figures_about_different_things_are_not_a_conflict():
    chunks = {"a": chunk("a", "d1", []), "b": chunk("b", "d2", [])}
    claims = [supported("Besarnya pajak atas persewaan adalah 10% dari jumlah bruto.", "a"),
              supported("Denda keterlambatan SPT Masa sebesar 2% per bulan.", "b")]
    assert find_conflicts(claims, chunks, _tokens, 0.3) == []


def test_article_references_alone_do_not_make_a_conflict():
    chunks = {"a": chunk("a", "d1", []), "b": chunk("b", "d2", [])}
    claims = [supported("Pajak sebagaimana dimaksud dalam Pasal 4 ayat (1) wajib disetor paling lambat.", "a"),
              supported("Pajak sebagaimana dimaksud dalam Pasal 2 ayat (1) wajib disetor paling lambat.", "b")]
    assert find_conflicts(claims, chunks, _tokens, 0.3) == []


def test_list_item_labels_are_not_figures_that_conflict():
    """Two regulations' definitions of one term quoted as lead-in [...] item: '1.' and '2.' are labels."""
    chunks = {"a": chunk("a", "d1", []), "b": chunk("b", "d2", [])}
    claims = [supported("Dalam Peraturan ini yang dimaksud dengan: [...] 1. TKA adalah warga negara asing.", "a"),
              supported("Dalam Undang-Undang ini yang dimaksud dengan: [...] 2. TKA adalah warga negara asing.", "b")]
    assert find_conflicts(claims, chunks, _tokens, 0.3) == []
    # the same claims with differing quantities still conflict
    claims = [supported("Dalam Peraturan ini yang dimaksud dengan: [...] 1. Denda adalah 10 hari upah.", "a"),
              supported("Dalam Undang-Undang ini yang dimaksud dengan: [...] 2. Denda adalah 12 hari upah.", "b")]
    (conflict,) = find_conflicts(claims, chunks, _tokens, 0.3)
    assert conflict.detail.startswith("10 (") and " ≠ 12 (" in conflict.detail  # the labels are not listed


def test_same_sentence_with_a_different_day_is_a_conflict():
    chunks = {"a": chunk("a", "d1", []), "b": chunk("b", "d2", [])}
    claims = [supported("Pajak wajib disetor paling lambat tanggal 15 bulan berikutnya.", "a"),
              supported("Pajak wajib disetor paling lambat tanggal 10 bulan berikutnya.", "b")]
    (conflict,) = find_conflicts(claims, chunks, _tokens, 0.3)
    assert "15" in conflict.detail and "10" in conflict.detail


def test_the_stated_citation_is_the_innermost_quote_of_what_the_claim_says_not_one_quoted_beside_it():
    lead, item = "Pengawasan penggunaan TKA dilaksanakan oleh:", "b. pejabat imigrasi."
    cites = (CitationCheck("a", lead, "PP", "Pasal 2 ayat (1)", True, path="PP › Pasal 2 › ayat (1)"),
             CitationCheck("a", item, "PP", "Pasal 2 ayat (1) huruf b", True, path="PP › Pasal 2 › ayat (1) › huruf b"),
             # an ayat bound to it, and a provision it refers to: quoted beside the claim, not what it states
             CitationCheck("a", "Hasil pengawasan sebagaimana dimaksud pada ayat (1) dilaporkan.", "PP",
                           "Pasal 2 ayat (2)", True, path="PP › Pasal 2 › ayat (2)"),
             CitationCheck("b", "Menteri menetapkan pejabat.", "PP", "Pasal 5", True, path="PP › Pasal 5"))
    claim = VerifiedClaim(text=f"{lead} [...] {item}", status="supported", citations=cites)
    assert stated_citation(claim).path == "PP › Pasal 2 › ayat (1) › huruf b"
    # a claim in other words than its quotes (an LLM's): its first citation
    assert stated_citation(VerifiedClaim(text="Pejabat imigrasi mengawasi.", status="supported",
                                         citations=cites)).path == "PP › Pasal 2 › ayat (1)"
    # the same sentence quoted again from another place of the regulation: the claim still states its own first one
    rule = "Data calon TKA dan dokumen dilakukan verifikasi oleh Menteri paling lama 2 (dua) hari kerja."
    twice = (CitationCheck("a", rule, "PP", "Pasal 14 ayat (4)", True, path="PP › Pasal 14 › ayat (4)"),
             CitationCheck("b", rule, "PP", "Pasal 15 ayat (4)", True, path="PP › Pasal 15 › ayat (4)"))
    assert stated_citation(VerifiedClaim(text=rule, status="supported", citations=twice)).location == "Pasal 14 ayat (4)"


@pytest.mark.parametrize("other, same", [
    ("(4) Data calon TKA dan dokumen dilakukan verifikasi oleh Menteri paling lama 2 (dua) hari kerja.", True),
    ("Data calon TKA dan dokumen dilakukan verifikasi oleh Menteri paling lama 2 (dua) hari kerja", True),
    ("Data calon TKA dan dokumen dilakukan verifikasi oleh Menteri paling lama 3 (tiga) hari kerja.", False),
    ("Data calon TKA dan dokumen tidak dilakukan verifikasi oleh Menteri paling lama 2 (dua) hari kerja.", False),
    ("Data calon TKA dilakukan verifikasi oleh Menteri paling lama 2 (dua) hari kerja.", False),
])
def test_a_quote_restates_another_only_in_the_same_words(other, same):
    from pipeline.restatements import own_pasal_reference, restates

    rule = "Data calon TKA dan dokumen dilakukan verifikasi oleh Menteri paling lama 2 (dua) hari kerja."
    assert restates(rule, other) is same
    assert not restates("Cukup jelas.", "Cukup jelas.")  # too short to be one rule stated twice
    # the same words that point into their own Pasal say something else in each Pasal that writes them
    further = "Ketentuan lebih lanjut mengenai tata cara sebagaimana dimaksud pada ayat (1) diatur dengan Peraturan Menteri."
    assert own_pasal_reference(further) and not restates(further, further)
    # a reference that names its Pasal means the same wherever it is written
    named = "Data calon TKA sebagaimana dimaksud dalam Pasal 14 ayat (2) dilakukan verifikasi paling lama 2 (dua) hari."
    assert not own_pasal_reference(named) and restates(named, named)
    assert own_pasal_reference("Pemberi Kerja sebagaimana dimaksud dalam huruf a wajib melapor setiap tahun kepada Menteri.")


# --- a term several regulations define ----------------------------------------------------------------------------

def _definition(doc: str, published: str) -> tuple[Chunk, CitationCheck]:
    text = "Pasal 1\n1. Iuran adalah sejumlah uang yang dibayar secara teratur."
    c = Chunk(chunk_id=f"{doc}:1", doc_id=doc, title=doc, location="Pasal 1", text=text, lang="id", unit=f"{doc}#1",
              ordinal=0, start=0, end=len(text), spans=(Span("Pasal 1 angka 1", 8, len(text)),), published=published,
              path=f"{doc.upper()} › BAB I")
    return c, CitationCheck(c.chunk_id, text[8:], doc, "Pasal 1 angka 1", True, doc_id=doc,
                            path=f"{doc.upper()} › BAB I › Pasal 1 › angka 1")


def test_every_regulation_that_defines_the_asked_term_is_named_and_the_answer_that_quotes_one_is_not_tinggi():
    (ua, cite_a), (pp, _), (ub, _) = (_definition("uu-24-2011", "2011-11-25"), _definition("pp-44-2015", "2015-06-30"),
                                      _definition("uu-40-2004", "2004-10-19"))
    conf = Confidence(1.0, 0.95, 0.95, {"judge": 0.45, "retrieval": 0.35, "generator": 0.2}, 0.97, None, 0.97, "TINGGI")
    claim = VerifiedClaim(cite_a.quote, "supported", (cite_a,), confidence=conf)
    chunks = {c.chunk_id: c for c in (ua, pp, ub)}
    definers = [Candidate(ua, defines="Pasal 1 angka 1"), Candidate(ub, defines="Pasal 1 angka 1"),
                Candidate(pp, defines="Pasal 1 angka 1"), Candidate(ua, rerank_score=0.1)]
    (amb,) = find_ambiguity([claim], chunks, "Apa yang dimaksud dengan iuran?", "id", definers)
    # the quoted one first, the others newest first, each at its entry and dated
    assert amb.detail == ("«iuran» didefinisikan dalam 3 peraturan: UU-24-2011 › BAB I › Pasal 1 › angka 1 (2011-11-25); "
                          "PP-44-2015 › BAB I › Pasal 1 › angka 1 (2015-06-30); UU-40-2004 › BAB I › Pasal 1 › angka 1 "
                          "(2004-10-19) — jawaban ini mengutip 1; periksa definisi peraturan yang mengatur perkara Anda.")
    assert (amb.claims, amb.unquoted) == ((0,), 2) and amb.chunk_ids == ("uu-24-2011:1", "pp-44-2015:1", "uu-40-2004:1")
    settings = ConfidenceSettings()
    # one document defines the term and the claim is another's: not the answer (several definers: test_release.py)
    capped = definitions_capped(claim, frozenset({"pp-44-2015"}), chunks, settings)
    assert capped.confidence.band != "TINGGI" and capped.confidence.capped_by == OTHER_DEFINITIONS
    assert capped.confidence.value < settings.top(True) and capped.citations == claim.citations
    assert definitions_capped(claim, frozenset({"uu-24-2011"}), chunks, settings) == claim  # the definer's own
    assert definitions_capped(claim, frozenset(), chunks, settings) == claim  # no term asked, or a document named
    # defined by one regulation only, or every definer quoted: no conflict, nothing capped
    assert find_ambiguity([claim], chunks, "Apa yang dimaksud dengan iuran?", "id", definers[:1]) == []
    (whole,) = find_ambiguity([claim, replace(claim, citations=(replace(cite_a, chunk_id="pp-44-2015:1"),)),
                               replace(claim, citations=(replace(cite_a, chunk_id="uu-40-2004:1"),))],
                              chunks, "Apa yang dimaksud dengan iuran?", "en", definers)
    assert whole.unquoted == 0 and "is defined in 3 regulations" in whole.detail and "quotes" not in whole.detail
    # a question that is not about a term's meaning does not count the definers
    assert find_ambiguity([claim], chunks, "Berapa iuran jaminan kesehatan?", "id", definers) == []
