"""An answer several regulations give (pipeline/ambiguity.py): none of its claims above RENDAH when the question names
none of them, decided alike for the whole answer (decision.conclude) and for the streamed one (pipeline/release.py)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from pipeline.ambiguity import (SEVERAL_REGULATIONS, answering_regulations, find_ambiguity, regulation_documents,
                                regulations_capped, restating_regulations)
from pipeline.config import ConfidenceSettings, Route
from pipeline.release import Release
from pipeline.types import (Chunk, CitationCheck, Confidence, DocumentStatus, QueryPlan, Span, Standing,
                            VerifiedClaim)

pytestmark = pytest.mark.unit

SETTINGS = ConfidenceSettings()
HIGH = Confidence(1.0, 0.95, 0.95, {"judge": 0.45, "retrieval": 0.35, "generator": 0.2}, 0.97, None, 0.97, "TINGGI")
MEDIUM = replace(HIGH, value=0.8, raw=0.8, band="SEDANG")
# two regional-formation laws of one template (fictional places), and a third's consideration (no Pasal)
STAFF = "Personel meliputi pegawai negeri sipil yang diperlukan oleh Kabupaten {}."


def chunk(doc: str, location: str = "Pasal 14 ayat (4)") -> Chunk:
    text = STAFF.format(doc)
    return Chunk(f"{doc}:14", doc, f"PEMBENTUKAN KABUPATEN {doc.upper()}", location, text, "id", f"{doc}#14", 14, 0,
                 len(text))


def claim(doc: str, confidence: Confidence = HIGH, standing: Standing | None = None) -> VerifiedClaim:
    text = STAFF.format(doc)
    return VerifiedClaim(text, "supported", (CitationCheck(f"{doc}:14", text, doc, "Pasal 14 ayat (4)", True,
                                                           doc_id=doc),), confidence=confidence, standing=standing)


CHUNKS = {c.chunk_id: c for c in (chunk("fiktif"), chunk("karangan"), chunk("umpama", location="Menimbang"))}


def test_claims_of_two_regulations_for_a_question_naming_none_are_kept_in_rendah():
    both = [claim("fiktif"), claim("karangan", MEDIUM)]
    capped = regulations_capped(both, CHUNKS, (), SETTINGS)
    assert [c.confidence.band for c in capped] == ["RENDAH", "RENDAH"]
    # at most one in as many as answer: the regulation meant is any of them, as far as anything says
    assert all(c.confidence.capped_by == SEVERAL_REGULATIONS and c.confidence.value == 0.5 for c in capped)
    chunks = {**CHUNKS, "lain:14": replace(CHUNKS["fiktif:14"], chunk_id="lain:14", doc_id="lain")}
    three = [*both, replace(both[0], citations=(replace(both[0].citations[0], chunk_id="lain:14"),))]
    assert {c.confidence.value for c in regulations_capped(three, chunks, (), SETTINGS)} == {0.3333}
    low = replace(MEDIUM, value=0.6, raw=0.6, band="RENDAH")  # already RENDAH: still at most 1/n
    assert regulations_capped([both[0], claim("karangan", low)], CHUNKS, (), SETTINGS)[1].confidence.value == 0.5
    assert [c.citations for c in capped] == [c.citations for c in both]  # the receipts are the claims' own
    # the question names a regulation: its answer is that regulation's, not one of several
    assert regulations_capped(both, CHUNKS, (("UU 1/2031", "fiktif"),), SETTINGS) == both
    # one regulation answers: nothing capped; a second whose provision ended answers nothing
    assert regulations_capped(both[:1], CHUNKS, (), SETTINGS) == both[:1]
    ended = Standing("ended", "2031-01-01", until="2030-01-01")
    assert regulations_capped([both[0], claim("karangan", standing=ended)], CHUNKS, (), SETTINGS)[0] == both[0]
    # beside two regulations in force, history keeps the cap it has (it is shown as history, not as one answer)
    three = [*both, claim("umpama", standing=ended)]
    chunks = {**CHUNKS, "umpama:14": chunk("umpama")}
    assert regulations_capped(three, chunks, (), SETTINGS)[2] == three[2]
    # a claim that does not quote a regulation's unit (a consideration) is no regulation's answer
    assert answering_regulations([both[0], claim("umpama")], CHUNKS) == {"fiktif"}
    assert regulations_capped(both, CHUNKS, (), None) == both  # no confidence settings: no bands to keep


def test_the_regulations_a_context_could_answer_from_are_its_documents_in_force():
    statuses = {"karangan": DocumentStatus("karangan", "2030-01-01", ())}
    assert regulation_documents(CHUNKS.values(), statuses, "2031-06-01") == {"fiktif", "karangan"}
    assert regulation_documents(CHUNKS.values(), statuses, "2029-06-01") == {"fiktif"}  # not yet in force then


PLAN = QueryPlan("Siapa personel?", "siapa personel", "id", "Siapa personel?", ("personel",), ())


def streamed(chunks: dict, claims: list[VerifiedClaim], named=()) -> list[list[VerifiedClaim]]:
    """What a stream releases after each claim is gated, then after the attempt settles."""
    out = []
    r = Release(lambda kind, data: out.append(data["claim"]) if kind == "claim" else None, "Siapa personel?",
                [Route(name="who", required=())], None, SETTINGS, named)
    r.context(0, 0, PLAN, chunks, (), len(chunks))
    seen = []
    for i, c in enumerate(claims):
        r.gated(0, 0, i, c)
        seen.append(list(out))
    r.settled(0, 0, claims)
    return [*seen, list(out)]


def test_a_stream_whose_context_holds_two_regulations_waits_for_the_answer_and_shows_it_as_decided():
    both = [claim("fiktif"), claim("karangan", MEDIUM)]
    steps = streamed(CHUNKS, both)
    assert steps[:-1] == [[], []]  # a later claim could make it several regulations' answer
    assert steps[-1] == regulations_capped(both, CHUNKS, (), SETTINGS)
    # settled with one regulation's claims: released as gated, once settled
    assert streamed(CHUNKS, both[:1])[-1] == both[:1]


def test_a_stream_whose_context_holds_one_regulation_or_names_it_releases_at_once():
    one = {k: v for k, v in CHUNKS.items() if v.doc_id != "karangan"}  # a Pasal of one law, a consideration of another
    assert streamed(one, [claim("fiktif")])[0] == [claim("fiktif")]
    assert streamed(CHUNKS, [claim("fiktif")], named=(("UU 1/2031", "fiktif"),))[0] == [claim("fiktif")]


# each year's budget law writes one sentence word for word (fictional years)
SAL = "SAL dapat digunakan dalam hal realisasi anggaran pengeluaran melebihi realisasi anggaran penerimaan."


def budget(year: int, location: str = "Pasal 8 ayat (1)") -> Chunk:
    text = f"(1) {SAL}"
    return Chunk(f"apbn-{year}:8", f"apbn-{year}", f"ANGGARAN PENDAPATAN DAN BELANJA NEGARA TAHUN ANGGARAN {year}",
                 location, text, "id", f"apbn-{year}#8", 8, 0, len(text))


def budget_claim(year: int) -> VerifiedClaim:
    return VerifiedClaim(SAL, "supported", (CitationCheck(f"apbn-{year}:8", SAL, f"APBN {year}", "Pasal 8 ayat (1)",
                                                          True, doc_id=f"apbn-{year}"),), confidence=HIGH)


def test_a_regulation_of_the_context_writing_the_answers_sentence_word_for_word_answers_it_too():
    """One budget law's "SAL dapat digunakan …" is another year's too: a question naming no year is answered by each,
    so the answer is several regulations' although its claim quotes one (on the mined questions of issue 30 a 2023
    budget law's sentence stood TINGGI for the 2022 law's question)."""
    context = {c.chunk_id: c for c in (budget(2030), budget(2031))}
    statuses = {d: DocumentStatus(d, "2030-01-01") for d in ("apbn-2030", "apbn-2031")}
    one = [budget_claim(2030)]
    assert set(restating_regulations(one, context, context, statuses, "2031-06-01")) == {"apbn-2031"}
    found = restating_regulations(one, context, context, statuses, "2031-06-01")
    capped = regulations_capped(one, context, (), SETTINGS, found)
    assert capped[0].confidence.band == "RENDAH" and capped[0].confidence.capped_by == SEVERAL_REGULATIONS
    assert capped[0].confidence.value == 0.5 and capped[0].citations == one[0].citations  # its receipts as they were
    note, = find_ambiguity(one, context, "Dapatkah SAL digunakan?", "id", (), found)
    assert note.kind == "ambiguous" and "apbn-2031" not in note.detail and "2 peraturan" in note.detail
    assert "apbn-2031:8" in note.chunk_ids
    # without the context's statuses (what the pipeline read of its documents) nothing more is counted
    assert regulations_capped(one, context, (), SETTINGS, restating_regulations(one, context, context, {},
                                                                                "2031-06-01")) == one
    # a law referring to the answer's (an implementing regulation, a law enacting another) states that law's rule
    cites = {**statuses, "apbn-2031": DocumentStatus("apbn-2031", "2030-01-01", cites=("apbn-2030",))}
    assert regulations_capped(one, context, (), SETTINGS, restating_regulations(one, context, context, cites,
                                                                                "2031-06-01")) == one
    # one not yet in force on the answer's date answers nothing yet
    later = {**statuses, "apbn-2031": DocumentStatus("apbn-2031", "2032-01-01")}
    assert regulations_capped(one, context, (), SETTINGS, restating_regulations(one, context, context, later,
                                                                                "2031-06-01")) == one
    # the same words outside a provision (a consideration) are no regulation's answer
    aside = {**context, "apbn-2031:8": budget(2031, location="Menimbang")}
    assert regulations_capped(one, aside, (), SETTINGS, restating_regulations(one, aside, aside, statuses,
                                                                              "2031-06-01")) == one
    # the question names the regulation: its answer is that regulation's
    assert regulations_capped(one, context, (("APBN 2030", "apbn-2030"),), SETTINGS, found) == one
    # an item of an enumeration is its lead-in's ("Urusan wajib … Kabupaten Mesuji … meliputi: … i. fasilitasi …" is
    # every regency's item i), and a definition in the same words is one meaning: neither counts
    lead = "(2) Urusan wajib Kabupaten {} meliputi:\n"
    item = "i. fasilitasi pengembangan koperasi, usaha kecil, dan usaha menengah di seluruh wilayah kabupaten;"

    def listed(doc: str) -> Chunk:
        text = lead.format(doc.title()) + item
        at = text.index("i. ")
        return Chunk(f"{doc}:8", doc, f"PEMBENTUKAN KABUPATEN {doc.upper()}", "Pasal 8 ayat (2)", text, "id",
                     f"{doc}#8", 8, 0, len(text), spans=(Span("Pasal 8 ayat (2) huruf i", at, len(text)),))
    items = {c.chunk_id: c for c in (listed("fiktif"), listed("karangan"))}
    quoted = VerifiedClaim(item, "supported", (CitationCheck("fiktif:8", item, "F", "Pasal 8 ayat (2) huruf i", True,
                                                             doc_id="fiktif"),), confidence=HIGH)
    regencies = {d: DocumentStatus(d, "2030-01-01") for d in ("fiktif", "karangan")}
    assert restating_regulations([quoted], items, items, regencies, "2031-06-01") == {}
    meaning = "Barang Milik Negara yang selanjutnya disingkat BMN adalah semua barang yang dibeli atas beban APBN."
    defined = {k: replace(c, text=f"1. {meaning}", end=len(meaning) + 3) for k, c in context.items()}
    entry = replace(one[0], text=meaning, citations=(replace(one[0].citations[0], quote=meaning),))
    assert restating_regulations([entry], defined, defined, statuses, "2031-06-01") == {}


def test_a_stream_counts_a_regulation_writing_the_sentence_word_for_word_as_the_decided_answer_does():
    context = {c.chunk_id: c for c in (budget(2030), budget(2031))}
    statuses = (DocumentStatus("apbn-2030", "2030-01-01"), DocumentStatus("apbn-2031", "2030-01-01"))
    out = []
    r = Release(lambda kind, data: out.append(data["claim"]) if kind == "claim" else None, "Dapatkah SAL digunakan?",
                [Route(name="who", required=())], "2031-06-01", SETTINGS)
    r.context(0, 0, PLAN, context, statuses, len(context))
    one = budget_claim(2030)
    r.gated(0, 0, 0, one)
    assert out == []  # two regulations in force in the context: it waits
    r.settled(0, 0, [one])
    assert [c.confidence.band for c in out] == ["RENDAH"]
    decided = regulations_capped([one], context, (), SETTINGS, restating_regulations(
        [one], context, context, {d.doc_id: d for d in statuses}, "2031-06-01"))
    assert [c.confidence for c in out] == [c.confidence for c in decided]  # the stream shows it as decided (dated)
