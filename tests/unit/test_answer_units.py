"""Answer units (reader/answers.py): a regulation answered at the granularity a lawyer cites.

Each unit a regulation chunk offers — an enumeration's lead-in with one item, a definition
entry, a whole enumeration, an ayat, a Pasal — goes through the real gates exactly as a sentence
does: every piece quoted exactly, cited to its innermost ayat/huruf/angka, its figures backed,
and the verbatim judge entails it only when what it leaves out is whole sibling items.
"""
from __future__ import annotations

import asyncio
import json

import pytest

from pipeline.backends.lite import VerbatimJudge
from pipeline.backends.quote_checks import elided_verbatim
from pipeline.config import ConfidenceSettings, JudgeSettings
from pipeline.definitions import asked_term, entries_in, entry_of
from pipeline.gates import verify
from pipeline.answer_reader import ELISION, answer_candidates
from pipeline.types import GenerationOutput

from .regulation_chunks import chunks_of, context_item

pytestmark = pytest.mark.unit

REGULATION = """PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 34 TAHUN 2021

Pasal 1
Dalam Peraturan Pemerintah ini yang dimaksud dengan:
1. Tenaga Kerja Asing yang selanjutnya disingkat TKA adalah warga negara asing pemegang visa dengan maksud bekerja di wilayah Indonesia.
2. Pemberi Kerja TKA adalah badan hukum yang mempekerjakan TKA dengan membayar upah.
3. Menteri adalah menteri yang menyelenggarakan urusan pemerintahan di bidang ketenagakerjaan.

Pasal 35
(1) Pengawasan penggunaan TKA dilaksanakan oleh:
a. Pengawas Ketenagakerjaan pada kementerian yang menyelenggarakan urusan pemerintahan di bidang ketenagakerjaan, dan/atau
b. Pejabat imigrasi yang bertugas di bidang pengawasan dan penindakan keimigrasian.
(2) Pengawas Ketenagakerjaan melakukan pengawasan pada norma penggunaan TKA. Hasil pengawasan dilaporkan kepada Menteri paling lama 7 (tujuh) hari kerja.
"""


@pytest.fixture(scope="module")
def chunks():
    return chunks_of(REGULATION)


_item = context_item


def _candidates(chunk):
    return answer_candidates([_item(chunk)], 30, 700, max_unit_chars=1200)


def _verify(chunk, cand):
    """The claim the extractive generator writes for a candidate, through the real gates."""
    claim = {"text": " ".join(cand.quote.split()), "citations": [{"chunk_id": chunk.chunk_id, "quote": q}
                                                                 for q in cand.quotes], "self_score": 0.9}
    output = GenerationOutput(raw=json.dumps({"claims": [claim], "self_assessment": 0.9}), model="test")
    v = asyncio.run(verify(output, {chunk.chunk_id: chunk}, {chunk.chunk_id: chunk.text}, {chunk.chunk_id: 0.8},
                           VerbatimJudge(), JudgeSettings(backend="verbatim"), ConfidenceSettings()))
    (claim,) = v.claims
    return claim


def test_the_chunks_are_a_definitions_article_and_a_pasal_with_ayat(chunks):
    assert set(chunks) == {"pembukaan", "Pasal 1", "Pasal 35"}  # the title block, the two articles
    assert {s.label for s in chunks["Pasal 35"].spans} == {
        "Pasal 35 ayat (1)", "Pasal 35 ayat (1) huruf a", "Pasal 35 ayat (1) huruf b", "Pasal 35 ayat (2)"}


def test_a_lead_in_with_one_item_is_quoted_in_two_pieces_and_cited_to_the_huruf(chunks):
    pasal = chunks["Pasal 35"]
    (b,) = [c for c in _candidates(pasal) if c.kind == "item" and c.position == 2]
    assert b.quotes == ("Pengawasan penggunaan TKA dilaksanakan oleh:",
                        "b. Pejabat imigrasi yang bertugas di bidang pengawasan dan penindakan keimigrasian.")
    assert b.items == 2 and b.lead == b.quotes[0] and ELISION.strip() in b.quote
    claim = _verify(pasal, b)
    assert claim.status == "supported" and all(x.ok for x in claim.citations)
    assert [x.path for x in claim.citations] == ["PP 34/2021 › Pasal 35 › ayat (1)",
                                                 "PP 34/2021 › Pasal 35 › ayat (1) › huruf b"]
    assert claim.verdict.label == "entailed" and "left out" in claim.verdict.detail


def test_the_first_item_touches_its_lead_in_and_is_still_its_own_piece(chunks):
    (a,) = [c for c in _candidates(chunks["Pasal 35"]) if c.kind == "item" and c.position == 1]
    assert a.quotes[0] == "Pengawasan penggunaan TKA dilaksanakan oleh:" and a.quotes[1].startswith("a. Pengawas")
    claim = _verify(chunks["Pasal 35"], a)
    assert claim.status == "supported" and claim.verdict.label == "entailed"
    assert claim.citations[1].path == "PP 34/2021 › Pasal 35 › ayat (1) › huruf a"


def test_a_whole_enumeration_an_ayat_and_the_pasal_are_units_too(chunks):
    kinds = {c.kind: c for c in _candidates(chunks["Pasal 35"])}
    assert {"sentence", "item", "enumeration", "ayat", "pasal"} <= set(kinds)
    enum = kinds["enumeration"]
    assert enum.quote.startswith("Pengawasan penggunaan TKA dilaksanakan oleh:") and enum.quote.endswith("keimigrasian.")
    assert _verify(chunks["Pasal 35"], enum).citations[0].path == "PP 34/2021 › Pasal 35 › ayat (1)"
    ayat = kinds["ayat"]  # two sentences: the ayat as one unit, its figure backed by its own quote
    assert ayat.quote.startswith("Pengawas Ketenagakerjaan melakukan") and "7 (tujuh) hari kerja" in ayat.quote
    claim = _verify(chunks["Pasal 35"], ayat)
    assert claim.status == "supported" and claim.citations[0].path == "PP 34/2021 › Pasal 35 › ayat (2)"
    pasal = kinds["pasal"]
    assert pasal.quote.startswith("(1) Pengawasan") and pasal.quote.endswith("hari kerja.")
    assert _verify(chunks["Pasal 35"], pasal).citations[0].path == "PP 34/2021 › Pasal 35"


def test_a_definition_entry_is_an_item_of_the_definitions_list_cited_to_its_angka(chunks):
    article = chunks["Pasal 1"]
    entries = [c for c in _candidates(article) if c.kind == "item"]
    assert [c.position for c in entries] == [1, 2, 3]
    tka = entries[0]
    assert entry_of(tka.body[3:]).keys == ("tenaga kerja asing", "tka")
    menteri = entries[2]
    claim = _verify(article, menteri)
    assert claim.status == "supported"
    assert claim.citations[-1].path == "PP 34/2021 › Pasal 1 › angka 3"
    assert [label for label, _ in entries_in(article.text, article.spans)] == [
        "Pasal 1 angka 1", "Pasal 1 angka 2", "Pasal 1 angka 3"]


def test_a_unit_that_misquotes_one_piece_fails_the_quote_gate(chunks):
    pasal = chunks["Pasal 35"]
    (b,) = [c for c in _candidates(pasal) if c.kind == "item" and c.position == 2]
    forged = type(b)(b.item, b.index, b.kind, b.segments, (b.quotes[0], b.quotes[1].replace("imigrasi", "pajak")))
    claim = _verify(pasal, forged)
    assert claim.status == "unsupported" and any(r.startswith("quote_not_found") for r in claim.reasons)


PREMISE = """Pasal 35
(1) Pengawasan penggunaan TKA dilaksanakan oleh:
a. Pengawas Ketenagakerjaan, dan/atau
b. Pejabat imigrasi.
(2) Pengawas Ketenagakerjaan tidak melakukan pengawasan keimigrasian."""


@pytest.mark.parametrize("claim,entailed", [
    ("Pengawasan penggunaan TKA dilaksanakan oleh: [...] b. Pejabat imigrasi.", True),
    # what is left out is an ayat, not sibling items
    ("Pengawasan penggunaan TKA dilaksanakan oleh: [...] Pengawas Ketenagakerjaan tidak melakukan pengawasan "
     "keimigrasian.", False),
    # a piece cut out of its line
    ("Pengawasan penggunaan TKA [...] b. Pejabat imigrasi.", False),
    # pieces out of order
    ("b. Pejabat imigrasi. [...] Pengawasan penggunaan TKA dilaksanakan oleh:", False),
    # a piece not in the paragraph at all
    ("Pengawasan penggunaan TKA dilaksanakan oleh: [...] c. Polisi.", False),
    ("Pengawasan penggunaan TKA dilaksanakan oleh:", False),  # one piece: the plain verbatim rule's business
])
def test_the_verbatim_judge_accepts_only_whole_sibling_items_left_out(claim, entailed):
    assert elided_verbatim(claim, PREMISE) is entailed


@pytest.mark.parametrize("question,term", [
    ("Apa yang dimaksud dengan RPTKA?", "rptka"), ("Apa yang dimaksud Dampak Negatif?", "dampak negatif"),
    ("Apa pengertian upah menurut PP 35/2021?", "upah"), ("Apa itu PKWT?", "pkwt"),
    ("What is meant by foreign worker?", "foreign worker"), ("What does JKK mean?", "jkk"),
    ("Upah adalah apa?", "upah"), ("Berapa lama PKWT dapat dibuat?", None), ("Siapa yang mengawasi TKA?", None),
    ("What is a foreign worker?", "foreign worker"), ("What is meant by an RPTKA, the utilisation plan?", "rptka"),
    ("What are TKA under PP 34/2021?", "tka"),
    # a bare "what is" that says what about the term is asked does not ask its meaning
    ("What is the maximum total duration of a PKWT?", None), ("What is the purpose of the RPTKA?", None),
])
def test_the_term_a_question_asks_the_meaning_of(question, term):
    assert asked_term(question) == term


def test_a_definition_entry_names_its_long_and_short_form():
    e = entry_of("Daerah otonom, selanjutnya disebut daerah, adalah kesatuan masyarakat hukum")
    assert e.keys == ("daerah otonom", "daerah") and e.short == "daerah"
    assert entry_of("Pengawasan penggunaan TKA dilaksanakan oleh Menteri.") is None


def test_a_definition_a_scan_misspelt_defines_the_term_as_asked():
    # PP 44/2015 as scanned: "luran adalah …" for "Iuran adalah …"; the question asks about "iuran"
    from pipeline.definitions import defines

    e = entry_of("8. luran adalah sejumlah uang yang dibayar secara teratur oleh Peserta.")
    assert e.keys == ("iuran",) and e.term == "luran"  # compared as meant, shown as written
    assert defines(e, asked_term("Apa yang dimaksud dengan iuran?"))


@pytest.mark.parametrize("question, location, quote, unasked", [
    # a "how" question read against Pasal 1's entry for a word it uses: the entry is not what was asked
    ("Bagaimana Hukuman Disiplin sedang dijatuhkan pada PNS?", "Pasal 1 angka 1–8",
     "Pejabat Pembina Kepegawaian adalah pejabat yang mempunyai kewenangan menetapkan pengangkatan", True),
    ("Untuk jabatan apa TKA dapat dipekerjakan?", "Pasal 1 angka 3 (bagian 2/4)",
     "Dalam Peraturan Pemerintah ini yang dimaksud dengan: [...] 4. Rencana Penggunaan Tenaga Kerja Asing yang "
     "selanjutnya disingkat RPTKA adalah rencana penggunaan TKA", True),
    # the same entry for a question that asks the meaning: it is the answer
    ("Apa yang dimaksud dengan Pejabat Pembina Kepegawaian?", "Pasal 1 angka 1–8",
     "Pejabat Pembina Kepegawaian adalah pejabat yang mempunyai kewenangan", False),
    # "X adalah …" outside the definitions article states a rule ("Upah … adalah Upah sebulan"), and Pasal 10 is
    # not Pasal 1
    ("Apa jenis upah yang dijadikan dasar pembayaran iuran?", "Pasal 19",
     "Upah yang dijadikan dasar pembayaran Iuran bagi Peserta penerima Upah adalah Upah sebulan.", False),
    ("Apa jenis upah yang dijadikan dasar pembayaran iuran?", "Pasal 10 ayat (1)",
     "Upah yang dijadikan dasar pembayaran Iuran adalah Upah sebulan.", False),
    # the whole list of entries, lead-in first, is Pasal 1's entries all the same
    ("Bagaimana ketentuan PNS?", "Pasal 1 angka 1–8",
     "Dalam Peraturan Pemerintah ini yang dimaksud dengan:\n1. Pegawai Negeri Sipil yang selanjutnya disingkat PNS "
     "adalah warga negara Indonesia", True),
    # Pasal 1's lead-in itself states no entry
    ("Bagaimana ketentuan PNS?", "Pasal 1 angka 1–8", "Dalam Peraturan Pemerintah ini yang dimaksud dengan:", False),
])
def test_a_definitions_entry_for_a_question_that_asks_no_meaning(question, location, quote, unasked):
    from pipeline.definitions import asked_term, unasked_entry
    from pipeline.answer_reader import ELISION

    assert unasked_entry(asked_term(question), location, quote.split(ELISION)) is unasked


@pytest.mark.parametrize("item", ["a. Wajib Pajak adalah orang pribadi atau badan.",  # Pasal 1 huruf a
                                  "12. Wajib Pajak adalah orang pribadi atau badan.", "Wajib Pajak adalah orang pribadi."])
def test_a_definition_entry_is_read_under_a_letter_or_number_label(item):
    assert entry_of(item).keys == ("wajib pajak",)


def test_an_asked_term_with_a_qualifier_its_definition_carries_is_that_definitions_term():
    from pipeline.definitions import resolve_asked

    text = "Menteri adalah menteri yang menyelenggarakan urusan pemerintahan di bidang ketenagakerjaan."
    entries = [(entry_of(text), text)]
    assert resolve_asked("menteri ketenagakerjaan", entries) == "menteri"  # the entry says "ketenagakerjaan"
    assert resolve_asked("menteri keuangan", entries) == "menteri keuangan"  # it does not say "keuangan"
    assert resolve_asked(None, entries) is None
    longer = "Menteri Ketenagakerjaan adalah menteri yang membidangi ketenagakerjaan."
    both = entries + [(entry_of(longer), longer)]
    assert resolve_asked("menteri ketenagakerjaan", both) == "menteri ketenagakerjaan"  # an exact entry wins


def test_the_reader_credits_the_entry_a_qualified_term_resolves_to(chunks):
    from pipeline.answer_reader import FEATURES, Featurizer, answer_view

    item = _item(chunks["Pasal 1"])
    views = [answer_view(c, item) for c in answer_candidates([item], 30, 700, max_unit_chars=1200)]
    f = Featurizer(lambda t: frozenset(t.casefold().split()), 0.5, 0.5)
    question = "Apa yang dimaksud dengan Menteri ketenagakerjaan?"
    asked = f.asked_in(question, views)
    assert asked == "menteri"
    col = FEATURES.index("defines_asked")
    x, keep = f.matrix(question, (), views, 0.0, asked)
    credited = [views[i].text for k, i in enumerate(keep) if x[k, col] == 1.0]
    assert credited and all(t.lstrip("0123456789. ").startswith("Menteri adalah") or "3. Menteri adalah" in t
                            for t in credited)
    x_plain, _ = f.matrix(question, (), views, 0.0)  # the term as written: no entry defines it
    assert not x_plain[:, col].any()
    import dataclasses
    prose = [dataclasses.replace(v, regulation=False) for v in views]  # "X adalah …" in prose defines nothing
    assert f.asked_in(question, prose) == "menteri ketenagakerjaan"


@pytest.mark.parametrize("question", [
    "What is a foreign worker?", "What are TKA under PP 34/2021?", "What is RPTKA?", "What is the JKK?",
    "What is the maximum total duration of a PKWT?", "What is the purpose of the RPTKA?",
    "What is the amount of the death benefit?", "What is the deadline for the report?", "What are the duties of TKA?",
])
def test_the_definition_route_and_the_asked_term_read_a_bare_what_is_alike(question):
    """configs/routes.yaml's definition route and definitions._ASKS_BARE write the same rule twice (a route is a
    pattern in the profile, the asked term is code the reader and the context builder share): they must agree."""
    from pipeline.config import load_profile

    assert (load_profile("lite").routes.route(question).name == "definition") == (asked_term(question) is not None)


# Three laws restate one definition of "Pemberi Kerja" (UU 40/2004, UU 24/2011 and PP 44/2015 write it so, as
# scanned: "badan-badan", "memperkerjakan"); a tax rule and an older law define it otherwise.
_EMPLOYER = ("orang perseorangan, pengusaha, badan hukum, atau badan lainnya yang mempekerjakan tenaga kerja atau "
             "penyelenggara negara yang mempekerjakan pegawai negeri dengan membayar gaji, upah, atau imbalan dalam "
             "bentuk lainnya.")


@pytest.mark.parametrize("a, b, same", [
    (f"9. Pemberi Kerja adalah {_EMPLOYER}",
     "3. Pemberi Kerja adalah " + _EMPLOYER.replace("badan lainnya", "badan-badan lainnya")
     .replace("yang mempekerjakan pegawai", "yang memperkerjakan pegawai"), True),
    # an acronym for the words it stands for, and a scan's noise after the sentence's end
    ("3. PNS adalah warga negara Indonesia yang diangkat sebagai Pegawai ASN secara tetap.",
     "1. PNS adalah warga negara Indonesia yang diangkat sebagai Pegawai Aparatur Sipil Negara secara tetap. jr 3 Sg",
     True),
    # a word a scan split in two (UU 1/2022 as scanned)
    ("Pemerintahan Daerah adalah penyelenggaraan urusan pemerintahan dalam sistem Negara Kesatuan Republik Indonesia.",
     "Pemerintahan Daerah adalah penyelenggaraan urusan pemerintahan dalam sistem Negara Kesatuan Republik Indone sia.",
     True),
    # one word dropped ("Pegawai"), one clause dropped, one word changed, one number changed, a negation added
    ("3. PNS adalah warga negara Indonesia yang diangkat sebagai Pegawai ASN secara tetap.",
     "2. PNS adalah warga negara Indonesia yang diangkat sebagai Aparatur Sipil Negara secara tetap.", False),
    ("6. Iuran adalah sejumlah uang yang dibayar secara teratur oleh Peserta, Pemberi Kerja, dan/atau Pemerintah.",
     "8. luran adalah sejumlah uang yang dibayar secara teratur oleh Peserta dan/atau Pemberi Kerja.", False),
    ("Menteri adalah menteri yang menyelenggarakan urusan pemerintahan di bidang ketenagakerjaan.",
     "Menteri adalah menteri yang menyelenggarakan urusan pemerintahan di bidang keuangan.", False),
    ("Anak adalah seseorang yang belum berusia 18 (delapan belas) tahun.",
     "Anak adalah seseorang yang belum berusia 21 (dua puluh satu) tahun.", False),
    ("Penduduk adalah orang yang bertempat tinggal di Indonesia.",
     "Penduduk adalah orang yang tidak bertempat tinggal di Indonesia.", False),
    # an affix makes another word, not a spelling slip
    ("Urusan adalah urusan pemerintahan di bidang keuangan.", "Urusan adalah urusan pemerintah di bidang keuangan.",
     False),
])
def test_a_definition_restated_in_other_spelling_is_one_definition(a, b, same):
    from pipeline.definitions import definiens, restated

    assert restated(definiens(a), definiens(b)) is same
    assert restated(definiens(b), definiens(a)) is same


def test_the_meaning_most_definers_share_comes_first():
    from pipeline.definitions import definiens, restatement_order

    tax = definiens("4. Pemberi Kerja adalah orang pribadi dan badan yang membayar gaji, upah, honorarium.")
    older = definiens("4. Pemberi kerja adalah orang perseorangan, pengusaha, badan hukum, atau badan-badan lainnya "
                      "yang mempekerjakan tenaga kerja dengan membayar upah atau imbalan dalam bentuk lain.")
    shared = definiens(f"9. Pemberi Kerja adalah {_EMPLOYER}")
    restating = definiens("3. Pemberi Kerja adalah " + _EMPLOYER.replace("badan lainnya", "badan-badan lainnya"))
    # the reader's order: the tax rule's, a sentence that is no definition, the older law's, the two restating ones
    said = [tax, None, older, shared, restating]
    # the shared meaning first, then each other meaning once, then the restatement; None keeps its place
    assert restatement_order(said) == [3, 1, 0, 2, 4]
    assert restatement_order(said, rank=[0, 1, 2, 9, 5]) == [4, 1, 0, 2, 3]  # within the pair, by rank
    assert restatement_order([tax, older]) == [0, 1]  # no meaning shared: the order given
    assert restatement_order([]) == []
