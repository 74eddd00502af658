"""Analysers, term groups from the real glossary, coverage and idf weighting."""
from __future__ import annotations

import pytest

from pipeline.analysis import QueryAnalyzer, build_analyzers, coverage, ocr_initial, raw_tokens, weigh
from pipeline.config import load_profile
from pipeline.types import Term

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def profile():
    return load_profile()


@pytest.fixture(scope="module")
def analyzers(profile):
    return build_analyzers(profile.analysis)


@pytest.fixture(scope="module")
def qa(profile, analyzers):
    return QueryAnalyzer(analyzers, profile.glossary, profile.normalisation)


def _groups(qa, question: str, lang: str) -> dict[str, Term]:
    return {t.term: t for t in qa.term_groups(qa.normalise(question), lang)}


# --------------------------------------------------------------------------- raw tokens


def test_raw_tokens_keeps_numbers_and_hyphenated_words_whole():
    assert raw_tokens("Undang-Undang Nomor 7 Rp1.250.000,50 dan 10% ＰＰｈ") == [
        "undang-undang", "nomor", "7", "rp", "1.250.000,50", "dan", "10", "pph"]


# --------------------------------------------------------------------------- Indonesian analyser


@pytest.mark.parametrize("word", ["diakui", "pengakuan", "mengakui", "diakuinya"])
def test_id_stem_overrides_collapse_to_akui(analyzers, word):
    assert analyzers["id"].stem(word) == "akui"


def test_id_overrides_for_tax_terms(analyzers):
    idn = analyzers["id"]
    assert idn.stem("perpajakan") == "pajak"
    assert idn.stem("kewajiban") == "wajib"


@pytest.mark.parametrize("word", ["pendapatan", "penghasilan", "pengendalian", "pelanggan", "ketentuan", "jumlah"])
def test_id_keywords_are_not_stemmed(analyzers, word):
    assert analyzers["id"].stem(word) == word


def test_id_pendapatan_does_not_collide_with_dapat(analyzers):
    idn = analyzers["id"]
    toks = idn.tokens("Pendapatan dapat diakui")
    assert "pendapatan" in toks
    assert "dapat" not in toks  # "dapat" ("can") is a stop word; "pendapatan" must not become it


def test_id_still_stems_ordinary_words(analyzers):
    idn = analyzers["id"]
    assert idn.stem("dipotong") == "potong"
    assert idn.stem("menyetor") == "setor"
    assert idn.stem("dialihkan") == "alih"


def test_id_tokens_drop_stop_words_and_keep_digits(analyzers):
    idn = analyzers["id"]
    toks = idn.tokens("Berapa pajak yang dipotong dari 5 dan 1.250.000,50 pada tahun 2024 untuk bulan ini?")
    assert toks == ["pajak", "potong", "5", "1.250.000,50", "tahun", "2024", "bulan"]
    for stop in ("berapa", "yang", "dari", "dan", "pada", "untuk", "ini"):
        assert idn.is_stopword(stop)
    # domain words the project keeps despite Sastrawi's stop list
    for kept in ("bulan", "hari", "jumlah", "masa", "tidak"):
        assert not idn.is_stopword(kept)


def test_id_single_digit_kept_single_letter_dropped(analyzers):
    toks = analyzers["id"].tokens("huruf a ayat 2")
    assert "2" in toks
    assert "a" not in toks


# --------------------------------------------------------------------------- English analyser


# --------------------------------------------------------------------------- a scan's I read as l, and back


@pytest.mark.parametrize("scanned, meant", [("luran", "iuran"), ("lzin", "izin"), ("lzinnya", "izinnya"),
                                            ("lndonesia", "indonesia"), ("iembaran", "lembaran")])
def test_ocr_initial_reads_a_swapped_first_letter_back(scanned, meant):
    assert ocr_initial(scanned) == meant


@pytest.mark.parametrize("word", ["lama", "lima", "lain", "izin", "iuran", "ilmu", "lisa", "ia", "l2", "item"])
def test_ocr_initial_leaves_known_unknown_and_short_words_alone(word):
    # a word Indonesian knows, a name whose swapped form it does not know either, and words too short to tell
    assert ocr_initial(word) == word


def test_id_tokens_meet_a_question_across_the_scan_error(analyzers):
    ida = analyzers["id"]
    record = ida.tokens("(1) luran JKK bagi Peserta penerima Upah; lzin usaha")
    assert set(ida.tokens("iuran peserta")) <= set(record)
    assert ida.stem("izin") in record and ida.stem("luran") == ida.stem("iuran")
    assert ida.is_stopword("lni")  # "Ini" scanned as "lni" is still a stop word


def test_en_analyser_does_not_read_words_as_indonesian(analyzers):
    assert analyzers["en"].tokens("luran") == ["luran"]


def test_en_analyser_stems_and_drops_stop_words(analyzers):
    en = analyzers["en"]
    toks = en.tokens("The entity recognises revenue when the leases are paid in 2024 at 10%")
    assert toks == ["entiti", "recognis", "revenu", "leas", "paid", "2024", "10"]
    assert en.stem("leases") == en.stem("lease")
    assert en.stem("recognised") == en.stem("recognise")
    for stop in ("the", "when", "must", "what"):
        assert en.is_stopword(stop)


# --------------------------------------------------------------------------- term groups


def test_english_question_expands_via_glossary(qa):
    g = _groups(qa, "What is the revenue of the lessee?", "en")
    assert list(g) == ["revenue", "lessee"]
    assert ("pendapatan",) in g["revenue"].alternatives
    assert ("revenue",) in g["revenue"].alternatives
    assert "pendapatan" in g["revenue"].expansions
    assert ("penyewa",) in g["lessee"].alternatives


def test_english_inflected_word_found_by_stem(qa):
    g = _groups(qa, "Which leases are recognised?", "en")
    assert ("sewa",) in g["leases"].alternatives
    assert ("akui",) in g["recognised"].alternatives  # mengakui/diakui/pengakuan all stem to akui


def test_english_irregular_past_paid_expands_like_pay(qa):
    g = _groups(qa, "When is the tax paid?", "en")
    assert any(alt in g["paid"].alternatives for alt in [("bayar",), ("setor",), ("pembayaran",)])


def test_multiword_glossary_key_becomes_one_group(qa):
    groups = qa.term_groups(qa.normalise("When must income tax be deposited?"), "en")
    terms = [t.term for t in groups]
    assert "income tax" in terms
    assert "income" not in terms and "tax" not in terms
    it = next(t for t in groups if t.term == "income tax")
    assert ("pajak", "penghasilan") in it.alternatives
    assert ("income", "tax") in it.alternatives or ("incom", "tax") in it.alternatives
    # covered by the Indonesian phrase, not by only half of it
    assert it.matched_by({"pajak", "penghasilan"})
    assert not it.matched_by({"pajak"})


def test_longest_multiword_key_wins(qa):
    groups = qa.term_groups(qa.normalise("What is the statement of financial position?"), "en")
    terms = [t.term for t in groups]
    assert terms == ["statement of financial position"]
    assert ("laporan", "posisi", "keuangan") in groups[0].alternatives


def test_abbreviation_becomes_an_alternative_with_both_tokens(qa):
    for question, lang in (("Berapa tarif PPh atas sewa?", "id"), ("What is the PPh rate?", "en")):
        g = _groups(qa, question, lang)
        assert ("pph",) in g["pph"].alternatives
        assert ("pajak", "penghasilan") in g["pph"].alternatives
        assert "pajak penghasilan" in g["pph"].expansions
        assert g["pph"].matched_by({"pajak", "penghasilan", "lain"})
        assert not g["pph"].matched_by({"penghasilan"})


def test_indonesian_word_gets_english_reverse_glossary(qa):
    g = _groups(qa, "Berapa tarif sewa tanah?", "id")
    assert ("land",) in g["tanah"].alternatives
    assert ("lease",) in g["sewa"].alternatives or ("leas",) in g["sewa"].alternatives


def test_synonyms_from_glossary_apply(qa):
    g = _groups(qa, "Berapa tarif dan sanksi PPh?", "id")
    assert ("persen",) in g["tarif"].alternatives
    assert "besarnya" in g["tarif"].expansions
    assert ("denda",) in g["sanksi"].alternatives
    # "Besarnya ... adalah 10% (sepuluh persen)" covers "tarif" without the word tarif
    assert g["tarif"].matched_by(frozenset(qa.all_tokens("Besarnya pajak adalah 10% (sepuluh persen)")))
    e = _groups(qa, "what is the rate", "en")
    assert ("percent",) in e["rate"].alternatives
    assert ("tarif",) in e["rate"].alternatives


def test_kapan_synonyms_from_glossary_apply(qa):
    g = _groups(qa, "Kapan PPh disetor?", "id")
    assert "kapan" in g
    # "paling" is a stop word inside the phrase, so "paling lambat" counts as ("lambat",)
    assert ("lambat",) in g["kapan"].alternatives and ("tanggal",) in g["kapan"].alternatives


def test_term_groups_drop_question_words_and_keep_order(qa):
    groups = qa.term_groups(qa.normalise("Berapa tarif PPh atas sewa tanah?"), "id")
    assert [t.term for t in groups] == ["tarif", "pph", "sewa", "tanah"]
    assert all(t.weight == 1.0 for t in groups)


def test_term_groups_same_concept_counts_once(qa):
    groups = qa.term_groups(qa.normalise("tarif sewa tarif sewa"), "id")
    assert [t.term for t in groups] == ["tarif", "sewa"]


def test_normalise_replaces_spelling_variants(qa):
    assert qa.normalise("Apa  obyek\npajak menurut undang undang?") == "Apa objek pajak menurut undang-undang?"


# --------------------------------------------------------------------------- coverage


def _t(term: str, *alts: tuple[str, ...], weight: float = 1.0) -> Term:
    return Term(term=term, alternatives=tuple(alts), weight=weight)


def test_coverage_weighted_share():
    groups = [_t("a", ("a",), weight=1.0), _t("b", ("b",), ("bb", "bc"), weight=2.0), _t("c", ("c",), weight=3.0)]
    assert coverage(groups, {"a", "c"}) == pytest.approx(4 / 6)
    assert coverage(groups, {"bb", "bc"}) == pytest.approx(2 / 6)
    assert coverage(groups, {"bb"}) == 0.0  # half of a multi-token alternative does not count
    assert coverage(groups, {"a", "b", "c"}) == pytest.approx(1.0)
    assert coverage(groups, set()) == 0.0


def test_coverage_nothing_to_cover_is_zero():
    assert coverage([], {"a"}) == 0.0
    assert coverage([_t("a", ("a",), weight=0.0)], {"a"}) == 0.0


def test_coverage_accepts_generator():
    assert coverage((g for g in [_t("a", ("a",)), _t("b", ("b",))]), frozenset({"b"})) == pytest.approx(0.5)


# --------------------------------------------------------------------------- weigh


def test_weigh_uses_lowest_idf_among_present_alternatives():
    g = _t("pph", ("pph",), ("pajak", "penghasilan"), ("income", "tax"))
    idf = {"pph": 3.0, "pajak": 1.0, "penghasilan": 2.0}  # ("income","tax") absent from the corpus
    (w,) = weigh([g], idf, unseen=9.0)
    assert w.weight == pytest.approx(1.5)  # mean of pajak/penghasilan (1.5) < pph (3.0)
    assert w.term == g.term and w.alternatives == g.alternatives


def test_weigh_ignores_partially_present_alternative():
    g = _t("x", ("a",), ("b", "c"))
    (w,) = weigh([g], {"a": 4.0, "b": 0.5}, unseen=9.0)  # "c" unseen: ("b","c") is not present
    assert w.weight == pytest.approx(4.0)


def test_weigh_unseen_when_no_alternative_present():
    g = _t("x", ("a",), ("b", "c"))
    (w,) = weigh([g], {"b": 0.5, "z": 1.0}, unseen=7.25)
    assert w.weight == pytest.approx(7.25)


def test_weigh_keeps_order_expansions_and_floors_at_positive():
    gs = [Term("a", (("a",),), 1.0, ("x",)), Term("b", (("b",),), 1.0)]
    out = weigh(gs, {"a": 0.0, "b": 2.0}, unseen=5.0)
    assert [t.term for t in out] == ["a", "b"]
    assert out[0].expansions == ("x",)
    assert 0 < out[0].weight <= 1e-6
    assert out[1].weight == pytest.approx(2.0)
