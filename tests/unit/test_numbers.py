"""The number check: figures are compared by meaning, never by surface form."""
from __future__ import annotations

from decimal import Decimal

import pytest

from pipeline.numbers import (
    Figure,
    canonical_decimal,
    extract_figures,
    figures_without_basis,
    guess_lang,
)

pytestmark = pytest.mark.unit


def _only(text: str, lang: str | None = None) -> Figure:
    figs = extract_figures(text, lang)
    assert len(figs) == 1, figs
    return figs[0]


# --------------------------------------------------------------------------- extraction


@pytest.mark.parametrize(
    ("text", "lang", "kind", "value", "unit"),
    [
        # money, Indonesian and English notation, prefixes and suffixes
        ("Rp 1.250.000,50", None, "money", "1250000.5", "IDR"),
        ("IDR 1,250,000.50", None, "money", "1250000.5", "IDR"),
        ("Rp.5.000", "id", "money", "5000", "IDR"),
        ("Rp5.000.000.000", None, "money", "5000000000", "IDR"),
        ("Rp5 miliar", None, "money", "5000000000", "IDR"),
        ("Rp 5 milyar", None, "money", "5000000000", "IDR"),
        ("Rp 4,8 miliar", None, "money", "4800000000", "IDR"),
        ("Rp 500 ribu", None, "money", "500000", "IDR"),
        ("Rp 1,5 triliun", None, "money", "1500000000000", "IDR"),
        ("Rp100.000,-", None, "money", "100000", "IDR"),
        ("Rp100.000,00", None, "money", "100000", "IDR"),
        ("5 miliar rupiah", None, "money", "5000000000", "IDR"),
        ("USD 12,500.75", None, "money", "12500.75", "USD"),
        ("US$12.500,75", None, "money", "12500.75", "USD"),
        ("$3 million", None, "money", "3000000", "USD"),
        ("100 dollars", None, "money", "100", "USD"),
        ("100 dolar AS", None, "money", "100", "USD"),
        ("EUR 7,5", None, "money", "7.5", "EUR"),
        ("€7.50", None, "money", "7.5", "EUR"),
        ("S$ 200", None, "money", "200", "SGD"),
        ("SGD200", None, "money", "200", "SGD"),
        # percent
        ("10%", None, "percent", "10", "%"),
        ("10 %", None, "percent", "10", "%"),
        ("10 persen", None, "percent", "10", "%"),
        ("10 percent", None, "percent", "10", "%"),
        ("10 per cent", None, "percent", "10", "%"),
        ("2,5%", None, "percent", "2.5", "%"),
        ("2.5%", None, "percent", "2.5", "%"),
        ("0,50%", None, "percent", "0.5", "%"),
        # dates
        ("1 Januari 2025", None, "date", "2025-01-01", None),
        ("1 January 2025", None, "date", "2025-01-01", None),
        ("January 1, 2025", None, "date", "2025-01-01", None),
        ("31 Des 2024", None, "date", "2024-12-31", None),
        ("17 Agt 2025", None, "date", "2025-08-17", None),
        ("17 AGUSTUS 2025", None, "date", "2025-08-17", None),
        ("3 Okt. 2025", None, "date", "2025-10-03", None),
        ("Januari 2025", None, "date", "2025-01", None),
        ("Dec 2024", None, "date", "2024-12", None),
        ("2025-01-01", None, "date", "2025-01-01", None),
        ("01/02/2025", None, "date", "2025-02-01", None),
        ("1-2-2025", None, "date", "2025-02-01", None),
        ("12/13/2025", None, "date", "2025-12-13", None),
        ("29 Februari 2024", None, "date", "2024-02-29", None),
        ("31 Februari 2025", None, "date", "2025-02-31", None),  # kept as written, matches only itself
        ("15 Maret", None, "date", "--03-15", None),
        ("March 15", None, "date", "--03-15", None),
        # plain numbers and literals
        ("2025", None, "number", "2025", None),
        ("1.250.000", None, "number", "1250000", None),
        ("1,250,000", None, "number", "1250000", None),
        ("12.75", None, "number", "12.75", None),
        ("5208.21.00", None, "number", "5208.21.00", None),
        ("5.5.1", None, "number", "5.5.1", None),
        ("B12", None, "number", "B12", None),
        ("BC4.2", None, "number", "BC4.2", None),
        ("Pasal 4A", None, "number", "4A", None),
        ("paragraf 12", None, "number", "12", None),
        ("5 juta", None, "number", "5000000", None),
    ],
)
def test_extract_single_figure(text: str, lang: str | None, kind: str, value: str, unit: str | None) -> None:
    fig = _only(text, lang)
    assert (fig.kind, fig.value, fig.unit) == (kind, value, unit)


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("Pasal 3 ayat (2)", ["3", "2"]),
        ("PMK 98/2025", ["98", "2025"]),
        ("ayat (1) huruf a angka 2", ["1", "2"]),
        ("tanggal 15 bulan berikutnya", ["15"]),
        ("Tarif 10% (sepuluh persen) berlaku 1 Januari 2025", ["10", "2025-01-01"]),
        ("PSAK 71 paragraf B5.5.1 dan 5.5.1", ["71", "B5.5.1", "5.5.1"]),
        ("Pasal 17 ayat (1) huruf b UU PPh: 22%", ["17", "1", "22"]),
    ],
)
def test_extract_several(text: str, values: list[str]) -> None:
    assert [f.value for f in extract_figures(text)] == values


@pytest.mark.parametrize(
    "text",
    ["", "Tidak ada angka di sini.", "sepuluh persen dari penghasilan", "No figures at all", "tanggal berikutnya"],
)
def test_no_figures(text: str) -> None:
    assert extract_figures(text) == []
    assert figures_without_basis(text, []) == []


def test_date_numbers_are_not_also_plain_numbers() -> None:
    figs = extract_figures("berlaku mulai 1 Januari 2025 dan 01/07/2025")
    assert [(f.kind, f.value) for f in figs] == [("date", "2025-01-01"), ("date", "2025-07-01")]


@pytest.mark.parametrize("text", ["32/01/2025", "13/13/2025", "2025-13-01", "0/1/2025"])
def test_impossible_dates_are_not_dates(text: str) -> None:
    assert all(f.kind != "date" for f in extract_figures(text))


def test_lowercase_may_is_a_verb_not_a_month() -> None:
    figs = extract_figures("the rate may 10% rise in May 2025")
    assert [(f.kind, f.value) for f in figs] == [("percent", "10"), ("date", "2025-05")]


def test_offsets_and_text_refer_to_the_original_string() -> None:
    text = "Tarif ﬁnal: Rp １．２５０．０００ dan 10\u00a0％."
    figs = extract_figures(text)
    assert [(f.kind, f.value) for f in figs] == [("money", "1250000"), ("percent", "10")]
    for f in figs:
        assert text[f.start:f.end] == f.text
    assert figs[0].text == "Rp １．２５０．０００"
    assert figs[1].text == "10\u00a0％"


@pytest.mark.parametrize(
    ("text", "lang", "value", "alternatives"),
    [
        ("1.250", "id", "1250", ("1.25",)),
        ("1.250", "en", "1.25", ("1250",)),
        ("1,250", "id", "1.25", ("1250",)),
        ("1,250", "en", "1250", ("1.25",)),
        ("0,250", "id", "0.25", ()),  # "0.250" is no valid thousands grouping
        ("1.250.000", "en", "1250000", ()),
        ("2,5", "en", "2.5", ()),
        ("12.75", "id", "12.75", ()),
    ],
)
def test_ambiguous_separators(text: str, lang: str, value: str, alternatives: tuple[str, ...]) -> None:
    fig = _only(text, lang)
    assert (fig.value, fig.alternatives) == (value, alternatives)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Jumlah yang dikenakan pajak adalah 1.250", "id"),
        ("The amount that is subject to the tax is 1,250", "en"),
        ("1.250", "id"),  # no evidence: default Indonesian
        ("nilai 2.5 dan 1.250", "en"),  # an unambiguous English decimal outweighs words
        ("value 2,5 and 1,250", "id"),
    ],
)
def test_guess_lang(text: str, lang: str) -> None:
    assert guess_lang(text) == lang


def test_guessed_lang_resolves_ambiguity() -> None:
    assert _only("The amount is 1,250").value == "1250"
    assert _only("Jumlahnya adalah 1,250").value == "1.25"


@pytest.mark.parametrize(
    ("raw", "canon"),
    [("1250000.50", "1250000.5"), ("10", "10"), ("10.000", "10"), ("0.5", "0.5"), ("0.00", "0"),
     ("1E+3", "1000"), (Decimal("5E9"), "5000000000")],
)
def test_canonical_decimal(raw: str | Decimal, canon: str) -> None:
    assert canonical_decimal(raw) == canon


@pytest.mark.parametrize("raw", ["1.250,5", "abc", "NaN"])
def test_canonical_decimal_rejects_notation(raw: str) -> None:
    with pytest.raises(ValueError):
        canonical_decimal(raw)


def test_bad_lang_is_rejected() -> None:
    with pytest.raises(ValueError):
        extract_figures("10%", lang="fr")
    assert _only("1.250", lang="id-ID").value == "1250"


# --------------------------------------------------------------------------- matching


@pytest.mark.parametrize(
    ("claim", "quote"),
    [
        ("IDR 1,250,000.50", "Rp 1.250.000,50"),
        ("10 percent", "tarif sebesar 10%"),
        ("tarif 10 persen", "a rate of 10 per cent"),
        ("1 January 2025", "berlaku sejak 1 Januari 2025"),
        ("January 1, 2025", "01/01/2025"),
        ("2025-01-01", "1-1-2025"),
        ("Rp5 miliar", "peredaran bruto Rp5.000.000.000"),
        ("Rp 4,8 miliar", "Rp4.800.000.000,00"),
        ("USD 12,500.75", "US$12.500,75"),
        ("5 billion rupiah", "Rp5 miliar"),
        ("100 dollars", "$100"),
        ("Rp100.000,-", "Rp 100.000"),
        ("Rp100.000", "seratus ribu rupiah (Rp100.000,-)"),
        ("2,5%", "2.5%"),
        ("The amount is 1.250", "Jumlahnya 1.250"),
        ("Jumlahnya 1.250", "The amount is 1,250"),
        ("kode HS 5208.21.00", "pos tarif 5208.21.00"),
        ("paragraf B12", "lihat paragraf B12 dan B13"),
        ("Pasal 3 ayat (2)", "sebagaimana dimaksud dalam Pasal 3 ayat (2)"),
        ("PMK 98/2025", "Peraturan Menteri Keuangan Nomor 98 Tahun 2025"),
        ("tahun 2025", "berlaku 1 Januari 2025"),  # a date's year backs a plain number
        ("tanggal 15", "paling lambat 15 Maret 2025"),  # and so does its day
        ("Januari 2025", "1 Januari 2025"),  # a partial date within a full one
        ("15 Maret", "15 Maret 2025"),
        ("batas 4,8 miliar", "Rp4,8 miliar"),  # a plain number is backed by money
        ("sebesar 10", "10%"),  # and by a percentage
        ("Pasal 31E", "Pasal 31E ayat (1)"),
        ("Tarif PPN 12%.", "tarif 12% (dua belas persen)"),
    ],
)
def test_claim_passes(claim: str, quote: str) -> None:
    assert figures_without_basis(claim, [quote]) == []


@pytest.mark.parametrize(
    ("claim", "quote", "unbacked"),
    [
        ("Tarifnya 15%", "tarif 10% (sepuluh persen)", ["15%"]),
        ("USD 1.250.000", "Rp 1.250.000", ["USD 1.250.000"]),
        ("Rp 1.250.000", "USD 1.250.000", ["Rp 1.250.000"]),
        ("EUR 500", "S$500", ["EUR 500"]),
        ("tarif 10%", "tarif 10 dari seratus", ["10%"]),
        ("berlaku 1 Januari 2024", "berlaku 1 Januari 2025", ["1 Januari 2024"]),
        ("berlaku 2 Januari 2025", "berlaku 1 Januari 2025", ["2 Januari 2025"]),
        ("berlaku 1 Februari 2025", "berlaku 1 Januari 2025", ["1 Februari 2025"]),
        ("berlaku 1 Januari 2025", "tahun 2025 tanggal 1 bulan 1", ["1 Januari 2025"]),  # numbers never back a date
        ("1 Januari 2025", "Januari 2025", ["1 Januari 2025"]),  # a month does not back a day
        ("paragraf 13", "paragraf 12", ["13"]),
        ("paragraf 12", "paragraf B12", ["12"]),
        ("paragraf B12", "paragraf 12", ["B12"]),
        ("Rp5 juta", "Rp5.000.000.000", ["Rp5 juta"]),
        ("Rp5 miliar", "Rp5.000.000", ["Rp5 miliar"]),
        ("kode 5208.21", "kode 5208.21.00", ["5208.21"]),
        ("kode 5208.21.00", "kode 5208.21", ["5208.21.00"]),
        ("5208.21.00", "5208.2100", ["5208.21.00"]),
        ("tahun 2024", "berlaku 1 Januari 2025", ["2024"]),
        ("Pasal 5 ayat (3)", "Pasal 3 ayat (2)", ["5"]),
        ("sebesar Rp100.000,-", "sebesar Rp10.000,-", ["Rp100.000,-"]),
        ("2,5%", "25%", ["2,5%"]),
        ("31 Februari 2025", "28 Februari 2025", ["31 Februari 2025"]),
        ("12/03/2025", "3 Desember 2025", ["12/03/2025"]),  # day/month/year: 12 March
    ],
)
def test_claim_fails(claim: str, quote: str, unbacked: list[str]) -> None:
    assert [f.text for f in figures_without_basis(claim, [quote])] == unbacked


def test_no_quotes_means_every_figure_fails() -> None:
    missing = figures_without_basis("Tarif 22% berlaku sejak 2022 menurut Pasal 17", [])
    assert [f.value for f in missing] == ["22", "2022", "17"]


def test_basis_may_come_from_any_quote() -> None:
    claim = "Tarif 22% berlaku untuk tahun pajak 2022 menurut Pasal 17 ayat (1)."
    quotes = ["Tarif Pasal 17 ayat (1) huruf b sebesar 22%", "mulai berlaku tahun pajak 2022"]
    assert figures_without_basis(claim, quotes) == []
    assert [f.text for f in figures_without_basis(claim, quotes[:1])] == ["2022"]


def test_unbacked_figures_keep_claim_offsets() -> None:
    claim = "Pajak 15% atas Rp 2 juta"
    missing = figures_without_basis(claim, ["pajak 10% atas Rp2.000.000"])
    assert len(missing) == 1
    assert claim[missing[0].start:missing[0].end] == "15%"


def test_explicit_lang_applies_to_claim_and_quotes() -> None:
    # read as English, "1.250" is one and a quarter; its thousands reading is still an alternative
    assert figures_without_basis("1.250", ["1,250"], lang="en") == []
    assert figures_without_basis("1.250", ["1250"], lang="en") == []


def test_single_string_for_quotes_is_rejected() -> None:
    with pytest.raises(TypeError):
        figures_without_basis("10%", "10%")  # type: ignore[arg-type]
