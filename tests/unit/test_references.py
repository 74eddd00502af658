"""Cross-references: what counts as one (real phrasing from PMK texts), and which chunk it points at."""
from __future__ import annotations

import re

import pytest

from pipeline.references import Reference, extract_references, resolve
from pipeline.types import Chunk, Document, Span

from ..conftest import require_regulations

pytestmark = pytest.mark.unit


def refs(text: str, lang: str = "id") -> list[Reference]:
    out = extract_references(text, lang)
    for r in out:
        assert text[r.start:r.end] == r.raw
    return out


def one(text: str, lang: str = "id") -> Reference:
    (r,) = refs(text, lang)
    return r


# --- Pasal, ayat, huruf, angka ------------------------------------------------------------


def test_pasal_with_ayat_is_an_internal_reference_with_exact_offsets():
    text = "Bea Masuk sebagaimana dimaksud dalam Pasal 5 ayat (2) dipungut."
    r = one(text)
    assert (r.raw, r.start, r.end) == ("Pasal 5 ayat (2)", text.index("Pasal"), text.index(" dipungut"))
    assert (r.scope, r.pasal, r.ayat, r.huruf, r.relative) == ("internal", "5", "2", None, False)
    assert r.doc_type is None and r.target_label == "Pasal 5 ayat (2)"


def test_reference_broken_across_lines_by_pdftotext_is_one_reference():
    r = one("Pengamanan sebagaimana dimaksud dalam Pasal 5\nayat (2).")
    assert r.raw == "Pasal 5\nayat (2)" and (r.pasal, r.ayat) == ("5", "2")


def test_ayat_alone_is_relative_to_the_current_pasal():
    r = one("Pengenaan Bea Masuk sebagaimana dimaksud pada ayat (1), dikecualikan terhadap importasi")
    assert (r.raw, r.scope, r.pasal, r.ayat, r.relative) == ("ayat (1)", "internal", None, "1", True)
    assert r.target_label == "ayat (1)"


def test_huruf_list_gives_one_relative_reference_each():
    text = "bahwa berdasarkan pertimbangan sebagaimana dimaksud\ndalam huruf a, huruf b, dan huruf c, serta untuk"
    found = refs(text)
    assert [(r.raw, r.huruf, r.relative) for r in found] == [("huruf a", "a", True), ("huruf b", "b", True),
                                                            ("huruf c", "c", True)]
    assert [r.start for r in found] == [text.index(f"huruf {x}") for x in "abc"]


def test_ayat_list_after_a_pasal_all_belong_to_that_pasal():
    text = "ketentuan sebagaimana dimaksud dalam Pasal 6 ayat (1), ayat (2),\nayat (3), dan ayat (5), atas importasi"
    found = refs(text)
    assert [(r.raw, r.pasal, r.ayat, r.relative) for r in found] == [
        ("Pasal 6 ayat (1)", "6", "1", False), ("ayat (2)", "6", "2", False),
        ("ayat (3)", "6", "3", False), ("ayat (5)", "6", "5", False)]
    assert [r.target_label for r in found] == [f"Pasal 6 ayat ({n})" for n in (1, 2, 3, 5)]


def test_pasal_ayat_huruf_angka():
    assert one("dimaksud dalam Pasal 4 ayat (3) huruf b wajib").target_label == "Pasal 4 ayat (3) huruf b"
    r = one("dimusnahkan sebagaimana dimaksud dalam Pasal 2 ayat (1) huruf d angka 1, diberikan")
    assert (r.pasal, r.ayat, r.huruf, r.angka) == ("2", "1", "d", "1")


def test_later_items_inherit_the_levels_above_them():
    found = refs("dalam Pasal 10 ayat (3) huruf d, huruf e, Pasal 11 ayat (5), dan ayat (6) berlaku")
    assert [r.target_label for r in found] == ["Pasal 10 ayat (3) huruf d", "Pasal 10 ayat (3) huruf e",
                                               "Pasal 11 ayat (5)", "Pasal 11 ayat (6)"]
    assert [r.raw for r in found] == ["Pasal 10 ayat (3) huruf d", "huruf e", "Pasal 11 ayat (5)", "ayat (6)"]


def test_items_without_their_keyword():
    found = refs("sebagaimana dimaksud pada ayat (1) dan (2) berlaku")
    assert [(r.raw, r.ayat, r.relative) for r in found] == [("ayat (1)", "1", True), ("(2)", "2", True)]
    found = refs("dalam Pasal 4 huruf a, b, dan c berlaku")
    assert [(r.raw, r.target_label) for r in found] == [("Pasal 4 huruf a", "Pasal 4 huruf a"),
                                                        ("b", "Pasal 4 huruf b"), ("c", "Pasal 4 huruf c")]
    assert [r.raw for r in refs("as referred to in letter b and a person", "en")] == ["letter b"]  # "a" is prose


def test_range_gives_both_endpoints_and_marks_the_closing_one():
    text = "sebagaimana dimaksud dalam Pasal 2 sampai dengan Pasal 5 berlaku"
    found = refs(text)
    assert [(r.raw, r.pasal, r.range_end) for r in found] == [("Pasal 2", "2", False), ("Pasal 5", "5", True)]
    found = refs("pada huruf a sampai dengan huruf e.")
    assert [(r.huruf, r.range_end) for r in found] == [("a", False), ("e", True)]


def test_part_before_its_pasal_as_amending_regulations_write_it():
    r = one("Ketentuan ayat (1) Pasal 18 diubah, sehingga berbunyi")
    assert (r.raw, r.pasal, r.ayat, r.relative) == ("ayat (1) Pasal 18", "18", "1", False)
    found = refs("Ketentuan ayat (4) dan ayat (5) Pasal 14 diubah")
    assert [(r.pasal, r.ayat) for r in found] == [("14", "4"), ("14", "5")]


def test_angka_counts_only_where_it_points_at_an_item():
    assert one("sebagaimana dimaksud pada angka 1, rekomendasi").angka == "1"
    assert refs("ditulis dengan angka 2 dan huruf kapital") == []


# --- documents ----------------------------------------------------------------------------


def test_pasal_followed_by_a_document_is_external():
    text = ("bahwa berdasarkan ketentuan Pasal 70 ayat (1) Peraturan\nPemerintah Nomor 34 Tahun 2011 tentang "
            "Tindakan Antidumping")
    r = one(text)
    assert r.raw == "Pasal 70 ayat (1) Peraturan\nPemerintah Nomor 34 Tahun 2011"
    assert (r.scope, r.doc_type, r.number, r.year, r.pasal, r.ayat, r.relative) == (
        "external", "Peraturan Pemerintah", "34", 2011, "70", "1", False)
    assert r.target_label == "PP 34/2011 Pasal 70 ayat (1)"


@pytest.mark.parametrize("uu", ["Undang-Undang", "UndangUndang", "Undang Undang", "Undang-\nUndang"])
def test_undang_undang_however_pdftotext_glued_it(uu):
    r = one(f"melaksanakan ketentuan Pasal 23D ayat (2) {uu} Nomor 17 Tahun 2006 tentang Perubahan")
    assert (r.doc_type, r.number, r.year, r.pasal, r.ayat) == ("Undang-Undang", "17", 2006, "23D", "2")
    assert r.target_label == "UU 17/2006 Pasal 23D ayat (2)"


def test_every_pasal_of_a_list_belongs_to_the_document_after_it():
    found = refs("sebagaimana dimaksud dalam Pasal 56, dan/atau Pasal 58 Undang-Undang Nomor 11 Tahun 1995; dan")
    assert [(r.raw, r.target_label) for r in found] == [
        ("Pasal 56", "UU 11/1995 Pasal 56"), ("Pasal 58 Undang-Undang Nomor 11 Tahun 1995", "UU 11/1995 Pasal 58")]


@pytest.mark.parametrize("doc, doc_type, number, year, region, label", [
    ("Peraturan Pemerintah Nomor 34 Tahun 2011", "Peraturan Pemerintah", "34", 2011, None, "PP 34/2011"),
    ("Peraturan Menteri Keuangan Nomor 124 Tahun 2024", "Peraturan Menteri Keuangan", "124", 2024, None,
     "PMK 124/2024"),
    ("Undang-Undang Nomor 10 Tahun 1995", "Undang-Undang", "10", 1995, None, "UU 10/1995"),
    # an older law's spelling, and its scan's
    ("Undang-undang Nomor 25 Tahun 1997", "Undang-Undang", "25", 1997, None, "UU 25/1997"),
    ("Undang undang Nomor 14 Tahun 1969", "Undang-Undang", "14", 1969, None, "UU 14/1969"),
    # a scan's letters for digits in the year of an older law's text
    ("Undang-Undang Nomor 13 Tahun 2OO3", "Undang-Undang", "13", 2003, None, "UU 13/2003"),
    ("Undang-Undang Nomor 24 Tahun 2oll", "Undang-Undang", "24", 2011, None, "UU 24/2011"),
    ("undang-Undang Nomor 18 Tahun lggg", "Undang-Undang", "18", 1999, None, "UU 18/1999"),
    ("Undang-Undang Nomor 5 Tahun 194S", "Undang-Undang", "5", 1945, None, "UU 5/1945"),
    ("Undang-Undang Nomor 6 Tahun L994", "Undang-Undang", "6", 1994, None, "UU 6/1994"),
    ("Peraturan Presiden Nomor 158 Tahun 2024", "Peraturan Presiden", "158", 2024, None, "Perpres 158/2024"),
    ("Peraturan Daerah Kabupaten Magelang Nomor 8 Tahun 2010", "Peraturan Daerah", "8", 2010, "Kabupaten Magelang",
     "Perda Kabupaten Magelang 8/2010"),
    ("Peraturan Bupati Magelang Nomor 9 Tahun 2025", "Peraturan Bupati", "9", 2025, "Magelang",
     "Perbup Magelang 9/2025"),
    ("Peraturan Wali Kota Surakarta Nomor 7 Tahun 2010", "Peraturan Walikota", "7", 2010, "Surakarta",
     "Perwali Surakarta 7/2010"),
    ("Peraturan Menteri Dalam Negeri Nomor 13 Tahun 2006", "Peraturan Menteri Dalam Negeri", "13", 2006, None,
     "Permendagri 13/2006"),
    ("Peraturan Pemerintah Pengganti Undang-Undang Nomor 2 Tahun 2022",
     "Peraturan Pemerintah Pengganti Undang-Undang", "2", 2022, None, "Perppu 2/2022"),
    ("Peraturan Menteri Keuangan Nomor 237/PMK.04/2022", "Peraturan Menteri Keuangan", "237", 2022, None,
     "PMK 237/2022"),
    ("PMK Nomor 98/PMK.010/2025", "Peraturan Menteri Keuangan", "98", 2025, None, "PMK 98/2025"),
    ("PMK 98/2025", "Peraturan Menteri Keuangan", "98", 2025, None, "PMK 98/2025"),
    ("PP 34/2011", "Peraturan Pemerintah", "34", 2011, None, "PP 34/2011"),
    ("UU 17/2006", "Undang-Undang", "17", 2006, None, "UU 17/2006"),
    ("Government Regulation Number 34 of 2011", "Peraturan Pemerintah", "34", 2011, None, "PP 34/2011"),
    ("Regulation of the Minister of Finance Number 98 of 2025", "Peraturan Menteri Keuangan", "98", 2025, None,
     "PMK 98/2025"),
    ("Law Number 17 of 2006", "Undang-Undang", "17", 2006, None, "UU 17/2006"),
    # a regional instrument's short name with its place, as saksi's own citations write it
    ("Perbup Kotabaru 21/2019", "Peraturan Bupati", "21", 2019, "Kotabaru", "Perbup Kotabaru 21/2019"),
    ("Perbup Mamuju Tengah 34/2021", "Peraturan Bupati", "34", 2021, "Mamuju Tengah", "Perbup Mamuju Tengah 34/2021"),
    ("Perda Kab. Magelang 8/2010", "Peraturan Daerah", "8", 2010, "Kab. Magelang", "Perda Kab. Magelang 8/2010"),
    ("Perwali Surakarta Nomor 7 Tahun 2010", "Peraturan Walikota", "7", 2010, "Surakarta", "Perwali Surakarta 7/2010"),
    ("Perbup 26/2017", "Peraturan Bupati", "26", 2017, None, "Perbup 26/2017"),
])
def test_documents_alone(doc, doc_type, number, year, region, label):
    text = f"sebagaimana telah diubah dengan {doc} tentang Perubahan"
    r = one(text)
    assert (r.raw, r.start, r.scope) == (doc, text.index(doc), "external")
    assert (r.doc_type, r.number, r.year, r.region, r.pasal) == (doc_type, number, year, region, None)
    assert r.target_label == label


def test_constitution_has_no_number():
    r = one("Mengingat : 1. Pasal 17 ayat (3) Undang-Undang Dasar Negara Republik\nIndonesia Tahun 1945;")
    assert (r.doc_type, r.number, r.year) == ("Undang-Undang Dasar", None, 1945)
    assert r.target_label == "UUD 1945 Pasal 17 ayat (3)"


def test_pasal_of_an_unnumbered_act_is_not_the_citing_documents_own():
    r = one("sebagaimana dimaksud dalam Pasal 58 Undang-Undang Cukai telah dilekatkan")
    assert (r.scope, r.doc_type, r.number, r.target_label) == ("external", "Undang-Undang Cukai", None,
                                                               "Undang-Undang Cukai Pasal 58")
    assert refs("sesuai dengan Undang-Undang Cukai yang berlaku") == []


def test_english_articles_and_paragraphs():
    assert one("as referred to in Article 5 paragraph (2) is", "en").target_label == "Pasal 5 ayat (2)"
    r = one("under Article 5(2), the importer", "en")
    assert (r.raw, r.pasal, r.ayat) == ("Article 5(2)", "5", "2")
    r = one("as referred to in paragraph (1) shall", "en")
    assert (r.raw, r.ayat, r.relative) == ("paragraph (1)", "1", True)
    r = one("pursuant to Article 70 paragraph (1) of Government Regulation Number 34 of 2011 concerning", "en")
    assert (r.scope, r.target_label) == ("external", "PP 34/2011 Pasal 70 ayat (1)")
    r = one("the provisions of paragraph 2 of Article 12 apply", "en")
    assert (r.raw, r.pasal, r.ayat) == ("paragraph 2 of Article 12", "12", "2")


# --- not references -----------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "Dalam Peraturan Menteri ini yang dimaksud dengan Bea Masuk Tindakan Pengamanan adalah",
    "Undang-Undang ini mulai berlaku pada tanggal diundangkan.",
    "Peraturan Bupati ini mulai berlaku pada tanggal diundangkan.",
    "(Lembaran Negara Republik Indonesia Tahun 2011 Nomor 66, Tambahan Lembaran Negara Republik Indonesia\n"
    "Nomor 5225);",
    "(Berita Negara Republik Indonesia Tahun 2024 Nomor 1063);",
    "PERATURAN MENTERI KEUANGAN REPUBLIK INDONESIA\nNOMOR 98 TAHUN 2025",
    "sebagaimana tercantum dalam Lampiran huruf A yang merupakan bagian",
    "membuat bukti pemotongan Pajak Penghasilan Pasal 21 dengan mencantumkan",
    "Pasal 5\n(1) Bea Masuk Tindakan Pengamanan dikenakan terhadap importasi.",
    "tenunan dari kapas.\n-3Pasal 3\nBea Masuk Tindakan Pengamanan",
])
def test_not_references(text):
    assert refs(text) == []


def test_document_with_its_gazette_citation_is_one_reference():
    text = ("Peraturan Pemerintah Nomor 34 Tahun 2011 tentang Tindakan Antidumping (Lembaran Negara Republik\n"
            "Indonesia Tahun 2011 Nomor 66, Tambahan Lembaran Negara Republik Indonesia Nomor 5225);")
    assert [r.target_label for r in refs(text)] == ["PP 34/2011"]


def test_a_pasal_line_that_continues_a_sentence_is_a_reference_not_a_heading():
    r = one("sebagaimana dimaksud dalam\nPasal 5\nayat (2) dipungut")
    assert r.target_label == "Pasal 5 ayat (2)"


# --- standards ----------------------------------------------------------------------------


def test_standard_with_paragraph():
    text = "Kerugian kredit ekspektasian diukur sesuai PSAK 71 paragraf 5.5.1 dan seterusnya."
    r = one(text)
    assert (r.raw, r.scope, r.standard, r.paragraph) == ("PSAK 71 paragraf 5.5.1", "external", "PSAK 71", "5.5.1")
    assert r.target_label == "PSAK 71 paragraf 5.5.1"


@pytest.mark.parametrize("text, lang, expected", [
    ("sebagaimana diatur dalam PSAK 71.", "id", [("PSAK 71", "PSAK 71")]),
    ("interpretasi ISAK 16 berlaku", "id", [("ISAK 16", "ISAK 16")]),
    ("lihat paragraf 15 untuk", "id", [("paragraf 15", "paragraf 15")]),
    ("dijelaskan di paragraf 15–17.", "id", [("paragraf 15", "paragraf 15"), ("17", "paragraf 17")]),
    ("lihat paragraf B12 dan B13.", "id", [("paragraf B12", "paragraf B12"), ("B13", "paragraf B13")]),
    ("see paragraph 15 for", "en", [("paragraph 15", "paragraph 15")]),
    ("as set out in paragraphs B12–B14.", "en", [("paragraphs B12", "paragraph B12"), ("B14", "paragraph B14")]),
    ("measured under IFRS 9 paragraph 5.5.1 at", "en", [("IFRS 9 paragraph 5.5.1", "IFRS 9 paragraph 5.5.1")]),
    ("carried at cost under IAS 16.", "en", [("IAS 16", "IAS 16")]),
])
def test_standards_and_paragraphs(text, lang, expected):
    found = refs(text, lang)
    assert [(r.raw, r.target_label) for r in found] == expected
    for r in found:
        assert r.scope == ("external" if r.standard else "internal")


def test_paragraph_range_marks_its_end():
    assert [r.range_end for r in refs("paragraf 15–17")] == [False, True]


# --- resolution ---------------------------------------------------------------------------


def chunk(doc_id: str, location: str, text: str, spans: dict[str, str] | None = None) -> Chunk:
    """A chunk whose spans are given as {label: the text it covers}."""
    found = tuple(Span(label, text.index(part), text.index(part) + len(part))
                  for label, part in (spans or {}).items())
    unit = re.sub(r" (?:ayat \(.*|\(bagian .*)$", "", location)  # a split Pasal's pieces share its unit
    return Chunk(chunk_id=f"{doc_id}#{location}", doc_id=doc_id, title=doc_id, location=location, text=text,
                 lang="id", unit=f"{doc_id}#{unit}", ordinal=0, start=0, end=len(text), spans=found)


def document(doc_id: str, doc_type: str, number: str, year: int | None, cite_as: str, issuer: str | None = None):
    return Document(doc_id=doc_id, title=doc_id, original=f"{doc_id}.md", lang="id", content_hash="0", doc_type=doc_type,
                    number=number, year=year, cite_as=cite_as, issuer=issuer)


PREAMBLE = chunk("pmk-098-2025", "pembukaan",
                 "a. bahwa Indonesia ...;\nd. bahwa berdasarkan pertimbangan sebagaimana dimaksud dalam huruf a, "
                 "perlu")
P5_AYAT1 = "(1) Bea Masuk Tindakan Pengamanan dikenakan terhadap importasi produk kain."
P5_AYAT2 = "(2) Pengenaan sebagaimana dimaksud pada ayat (1), dikecualikan terhadap negara tertentu."
PASAL5 = chunk("pmk-098-2025", "Pasal 5", f"Pasal 5\n{P5_AYAT1}\n{P5_AYAT2}",
               {"Pasal 5 ayat (1)": P5_AYAT1, "Pasal 5 ayat (2)": P5_AYAT2})
P6_AYAT1 = "(1) Importir wajib menyerahkan dokumen sebagaimana dimaksud dalam Pasal 5 ayat (2)."
P6_AYAT2 = "(2) Dalam hal importir sebagaimana dimaksud pada ayat (1) menggunakan surat keterangan asal."
P6_AYAT3 = ("(3) Ketentuan asal barang harus memenuhi:\na. kriteria asal barang; dan\n"
            "b. kriteria sebagaimana dimaksud pada huruf a.")
PASAL6 = chunk("pmk-098-2025", "Pasal 6", f"Pasal 6\n{P6_AYAT1}\n{P6_AYAT2}\n{P6_AYAT3}",
               {"Pasal 6 ayat (1)": P6_AYAT1, "Pasal 6 ayat (2)": P6_AYAT2, "Pasal 6 ayat (3)": P6_AYAT3,
                "Pasal 6 ayat (3) huruf a": "a. kriteria asal barang; dan",
                "Pasal 6 ayat (3) huruf b": "b. kriteria sebagaimana dimaksud pada huruf a."})
EXPLANATION7 = chunk("pmk-098-2025", "Penjelasan Pasal 7", "Pasal 7\nCukup jelas.")
EXPLANATION5 = chunk("pmk-098-2025", "Penjelasan Pasal 5",
                     "Pasal 5\nAyat (2)\nPengecualian sebagaimana dimaksud pada ayat (1) berlaku.")
P70_1, P70_2 = "(1) Tindakan pengamanan dapat dikenakan.", "(2) Tindakan pengamanan berupa bea masuk."
PP_70A = chunk("pp-34-2011", "Pasal 70 ayat (1)–(2)", f"Pasal 70\n{P70_1}\n{P70_2}",
               {"Pasal 70 ayat (1)": P70_1, "Pasal 70 ayat (2)": P70_2})
PP_70B = chunk("pp-34-2011", "Pasal 70 ayat (3)", "(3) Bea masuk tindakan pengamanan ditetapkan oleh Menteri.")
PSAK_551 = chunk("psak-71", "paragraf 5.5.1", "5.5.1 Entitas mengakui penyisihan kerugian kredit ekspektasian.")
PSAK_B551 = chunk("psak-71", "paragraf B5.5.1", "B5.5.1 Lihat paragraf 5.5.1 untuk pengakuan.")
A14_1, A14_2 = "(1) Permohonan diajukan.", "(2) Permohonan sebagaimana dimaksud pada ayat (1) diteliti."
AMENDING = chunk("pmk-1-2026", "Pasal I angka 1 › Pasal 14", f"Pasal 14\n{A14_1}\n{A14_2}",
                 {"Pasal I angka 1 › Pasal 14 ayat (1)": A14_1, "Pasal I angka 1 › Pasal 14 ayat (2)": A14_2})
CHUNKS = {"pmk-098-2025": [PREAMBLE, PASAL5, PASAL6, EXPLANATION5, EXPLANATION7], "pp-34-2011": [PP_70A, PP_70B],
          "psak-71": [PSAK_551, PSAK_B551], "perda-magelang": [], "pmk-237-2022": [], "perwali-surakarta": [],
          "pmk-1-2026": [AMENDING]}
DOCUMENTS = [
    document("pmk-098-2025", "Peraturan Menteri Keuangan", "98", 2025, "PMK 98/2025"),
    document("pp-34-2011", "Peraturan Pemerintah", "34", 2011, "PP 34/2011"),
    document("psak-71", "PSAK", "71", None, "PSAK 71"),
    document("perda-magelang", "Peraturan Daerah", "8", 2010, "Perda Kab. Magelang 8/2010",
             issuer="Pemerintah Kabupaten Magelang"),
    document("pmk-237-2022", "Peraturan Menteri Keuangan", "237/PMK.04/2022", 2022, "PMK 237/PMK.04/2022"),
    document("perwali-surakarta", "Peraturan Wali Kota", "7", 2010, "Perwali Surakarta 7/2010",
             issuer="Wali Kota Surakarta"),
    document("pmk-1-2026", "Peraturan Menteri Keuangan", "1", 2026, "PMK 1/2026"),
]


def resolved(here: Chunk, phrase: str, lang: str = "id"):
    """Resolve the one reference in `phrase`: found in here.text where it occurs there, else written alone."""
    at = here.text.find(phrase)
    if at < 0:
        ref = one(phrase, lang)
    else:
        (ref,) = [r for r in refs(here.text, lang) if at <= r.start < at + len(phrase)]
    r = resolve(ref, here, DOCUMENTS, CHUNKS.__getitem__)
    return r.status, r.doc_id, r.chunk_id, r.label, r.reason


def test_internal_reference_resolves_to_the_ayat_span():
    assert resolved(PASAL6, "dimaksud dalam Pasal 5 ayat (2)") == (
        "resolved", "pmk-098-2025", PASAL5.chunk_id, "Pasal 5 ayat (2)", None)


def test_relative_ayat_takes_the_pasal_it_stands_in():
    assert resolved(PASAL6, "dimaksud pada ayat (1) menggunakan") == (
        "resolved", "pmk-098-2025", PASAL6.chunk_id, "Pasal 6 ayat (1)", None)
    assert resolved(PASAL5, "dimaksud pada ayat (1), dikecualikan")[3] == "Pasal 5 ayat (1)"


def test_relative_huruf_takes_the_ayat_it_stands_in():
    assert resolved(PASAL6, "dimaksud pada huruf a.")[2:4] == (PASAL6.chunk_id, "Pasal 6 ayat (3) huruf a")


def test_relative_reference_in_an_explanation_points_at_the_body_pasal():
    assert resolved(EXPLANATION5, "dimaksud pada ayat (1) berlaku")[2:4] == (PASAL5.chunk_id, "Pasal 5 ayat (1)")


def test_relative_reference_in_a_quoted_amended_article_stays_in_that_article():
    assert resolved(AMENDING, "dimaksud pada ayat (1) diteliti")[2:4] == (
        AMENDING.chunk_id, "Pasal I angka 1 › Pasal 14 ayat (1)")


def test_relative_huruf_outside_any_pasal_is_the_passage_itself():
    assert resolved(PREAMBLE, "dimaksud dalam huruf a, perlu") == (
        "resolved", "pmk-098-2025", PREAMBLE.chunk_id, "pembukaan", None)


def test_missing_huruf_falls_back_to_the_enclosing_ayat():
    assert resolved(PASAL6, "dalam Pasal 5 ayat (2) huruf c")[2:4] == (PASAL5.chunk_id, "Pasal 5 ayat (2)")
    assert resolved(PASAL6, "dalam Pasal 5 ayat (9)")[2:4] == (PASAL5.chunk_id, "Pasal 5")


def test_an_explanation_is_not_the_pasal_itself():
    assert resolved(PASAL6, "dalam Pasal 7 berlaku") == (
        "unresolved", "pmk-098-2025", None, None, "no Pasal 7 in pmk-098-2025")


def test_external_reference_resolves_in_the_cited_document():
    here = chunk("pmk-098-2025", "pembukaan", "bahwa berdasarkan ketentuan")
    assert resolved(here, "Pasal 70 ayat (1) Peraturan Pemerintah Nomor 34 Tahun 2011") == (
        "resolved", "pp-34-2011", PP_70A.chunk_id, "Pasal 70 ayat (1)", None)


def test_external_reference_into_a_split_pasal_finds_the_piece_holding_the_ayat():
    assert resolved(PASAL6, "Pasal 70 ayat (2) PP 34/2011")[2:4] == (PP_70A.chunk_id, "Pasal 70 ayat (2)")
    assert resolved(PASAL6, "Pasal 70 ayat (3) PP 34/2011")[2:4] == (PP_70B.chunk_id, "Pasal 70 ayat (3)")


def test_reference_to_a_whole_document_resolves_to_the_document():
    assert resolved(PASAL6, "Peraturan Pemerintah Nomor 34 Tahun 2011") == (
        "resolved", "pp-34-2011", None, "PP 34/2011", None)
    assert resolved(PASAL6, "Regulation of the Minister of Finance Number 98 of 2025", "en")[1] == "pmk-098-2025"


@pytest.mark.parametrize("phrase, doc_id", [
    ("Peraturan Daerah Kabupaten Magelang Nomor 8 Tahun 2010", "perda-magelang"),
    ("Peraturan Menteri Keuangan Nomor 237/PMK.04/2022", "pmk-237-2022"),
    ("Peraturan Walikota Surakarta Nomor 7 Tahun 2010", "perwali-surakarta"),
    ("Peraturan Daerah Kabupaten Kotabaru Nomor 8 Tahun 2010", None),
])
def test_document_matching_by_type_number_year_and_region(phrase, doc_id):
    assert resolved(PASAL6, phrase)[1] == doc_id


def test_document_not_in_the_corpus_is_unresolved_and_named():
    assert resolved(PASAL6, "Undang-Undang Nomor 17 Tahun 2006") == (
        "unresolved", None, None, None, "document not in the corpus: UU 17/2006")
    assert resolved(PASAL6, "Pasal 70 ayat (1) Peraturan Pemerintah Nomor 35 Tahun 2011")[4] == (
        "document not in the corpus: PP 35/2011")


def test_missing_pasal_in_a_found_document_is_unresolved_and_named():
    assert resolved(PASAL6, "Pasal 99 PP 34/2011") == (
        "unresolved", "pp-34-2011", None, None, "no Pasal 99 in pp-34-2011")


def test_standard_references_resolve_by_cite_as():
    assert resolved(PASAL6, "PSAK 71 paragraf 5.5.1") == (
        "resolved", "psak-71", PSAK_551.chunk_id, "paragraf 5.5.1", None)
    assert resolved(PASAL6, "PSAK 71") == ("resolved", "psak-71", None, "PSAK 71", None)
    assert resolved(PASAL6, "PSAK 71 paragraf 9.9") == (
        "unresolved", "psak-71", None, None, "no paragraf 9.9 in psak-71")
    assert resolved(PASAL6, "IAS 16", "en")[4] == "document not in the corpus: IAS 16"


def test_internal_paragraph_resolves_in_the_same_standard():
    assert resolved(PSAK_B551, "Lihat paragraf 5.5.1 untuk")[1:4] == ("psak-71", PSAK_551.chunk_id, "paragraf 5.5.1")


# --- a real regulation ----------------------------------------------------------------------


def test_real_pmk_098_2025():
    text = (require_regulations() / "pmk-098-2025.md").read_text(encoding="utf-8")
    found = refs(text)
    raws = {" ".join(r.raw.split()) for r in found}
    labels = [r.target_label for r in found]
    assert {"Peraturan Pemerintah Nomor 34 Tahun 2011", "Pasal 5 ayat (2)", "Pasal 6 ayat (2)"} <= raws
    assert "PP 34/2011 Pasal 70 ayat (1)" in labels and "UU 17/2006 Pasal 23D ayat (2)" in labels
    assert labels.count("Pasal 6 ayat (1)") == 1 and "Pasal 6 ayat (5)" in labels
    assert not any(" ini" in r.raw or "Lembaran" in r.raw or "Berita" in r.raw for r in found)
    assert "Pasal 1" not in labels and "Pasal 9" not in labels  # headings, never referred to


def test_documents_a_question_names_and_whether_the_corpus_holds_them():
    from pipeline.references import documents_named, held_by

    docs = [Document(doc_id="pmk-098-2025", title="PENGENAAN BEA MASUK", original="/x", lang="id", content_hash="h",
                     doc_type="Peraturan Menteri Keuangan", number="98", year=2025, cite_as="PMK 98/2025")]
    named = documents_named("Menurut PMK 98/2025 dan Peraturan Pemerintah Nomor 34 Tahun 2011, berapa tarifnya? "
                            "Bagaimana dengan PMK 98/2025 Pasal 3?")
    assert [r.document_label for r in named] == ["PMK 98/2025", "PP 34/2011"]  # each document once
    assert [held_by(r, docs) for r in named] == ["pmk-098-2025", None]
    assert documents_named("Berapa tarif bea masuk menurut Peraturan Menteri ini?") == []
    assert documents_named("Berapa tarif menurut Pasal 3 ayat (1)?") == []  # a Pasal alone names no document


def test_a_question_that_copies_a_regional_citation_from_a_receipt_names_its_document():
    """saksi cites a regional instrument with its place ("Perbup Mamuju Tengah 34/2021", "Perda Kab. Magelang
    8/2010"); a question that names it so, or with the place spelt out, names that document and no other."""
    from pipeline.references import documents_named, held_by

    docs = [Document(doc_id="perbup-mateng", title="SISTEM DAN PROSEDUR AKUNTANSI PEMERINTAH DAERAH", original="/x",
                     lang="id", content_hash="h1", doc_type="Peraturan Bupati", number="34", year=2021,
                     cite_as="Perbup Mamuju Tengah 34/2021", issuer="Bupati Mamuju Tengah"),
            Document(doc_id="perbup-kotabaru", title="TUNJANGAN HARI RAYA", original="/y", lang="id",
                     content_hash="h2", doc_type="Peraturan Bupati", number="34", year=2021,
                     cite_as="Perbup Kotabaru 34/2021", issuer="Bupati Kotabaru"),
            Document(doc_id="perda-magelang", title="APBD", original="/z", lang="id", content_hash="h3",
                     doc_type="Peraturan Daerah", number="8", year=2010, cite_as="Perda Kab. Magelang 8/2010",
                     issuer="Pemerintah Kabupaten Magelang")]
    for question, held in (("Apa yang dimaksud dengan Basis Kas menurut Perbup Mamuju Tengah 34/2021?", "perbup-mateng"),
                           ("Kapan THR dibayar menurut Perbup Kotabaru 34/2021?", "perbup-kotabaru"),
                           ("Berapa pendapatan menurut Perda Kabupaten Magelang 8/2010?", "perda-magelang"),
                           ("Berapa pendapatan menurut Perda Kab. Magelang 8/2010?", "perda-magelang"),
                           ("Apa isi Perbup Sleman 34/2021?", None)):  # another regency's: not held
        (ref,) = documents_named(question)
        assert held_by(ref, docs) == held, question


def test_a_reference_to_an_article_an_amending_regulation_quotes_resolves_to_the_quote():
    quoted = chunk("pmk-96", "Pasal I angka 2 › Pasal 15A", "Pasal 15A\nPenelitian dilakukan oleh Tim Peneliti.")
    here = chunk("pmk-96", "Pasal I angka 5 › Pasal 20", "Pasal 20\nHasil penelitian sebagaimana dimaksud dalam "
                 "Pasal 15A disampaikan kepada Direktur.")
    (ref,) = [r for r in extract_references(here.text) if r.pasal == "15A"]
    r = resolve(ref, here, [], lambda doc_id: [quoted, here])
    assert (r.status, r.chunk_id) == ("resolved", quoted.chunk_id)
    (missing,) = [r for r in extract_references("sebagaimana dimaksud dalam Pasal 13 ayat (1)")]
    assert resolve(missing, here, [], lambda doc_id: [quoted, here]).reason == "no Pasal 13 in pmk-96"


def test_an_english_regulation_resolves_article_paragraph_and_letter_references():
    art = Chunk(chunk_id="en#2", doc_id="en", title="en", location="Article 2",
                text="Article 2\n(1) The duty is 5%.\n(2) It is payable on:\na. goods by sea; and\nb. goods by air.",
                lang="en", unit="en#Article 2", ordinal=0, start=0, end=0,
                spans=(Span("Article 2 paragraph (1)", 10, 27), Span("Article 2 paragraph (2)", 28, 80),
                       Span("Article 2 paragraph (2) letter b", 64, 80)))
    here = Chunk(chunk_id="en#3", doc_id="en", title="en", location="Article 3",
                 text="Article 3\nThe duty referred to in Article 2 paragraph (2) letter b is paid monthly.",
                 lang="en", unit="en#Article 3", ordinal=1, start=0, end=0)
    (ref,) = extract_references(here.text, "en")
    r = resolve(ref, here, [], lambda doc_id: [art, here])
    assert (r.status, r.chunk_id, r.label) == ("resolved", "en#2", "Article 2 paragraph (2) letter b")


def _titled(doc_id: str, title: str) -> Document:
    return Document(doc_id=doc_id, title=title, original=f"/x/{doc_id}.md", lang="id", content_hash="h",
                    doc_type="regulation", number=None, year=None)


def test_an_instrument_type_no_table_knows_is_found_by_its_full_name_in_a_title():
    from pipeline.references import held_by
    three = _titled("pmi-3-2022", "Peraturan Menteri Ilustratif Nomor 3 Tahun 2022 tentang Pajak Penghasilan")
    thirty_one = _titled("pmi-31-2022", "Peraturan Menteri Ilustratif Nomor 31 Tahun 2022 tentang Bea")
    ref = one("dicabut: Peraturan Menteri Ilustratif Nomor 3 Tahun 2022 tentang Pajak Penghasilan")
    assert held_by(ref, [thirty_one, three]) == "pmi-3-2022"
    assert held_by(ref, [thirty_one]) is None  # "Nomor 3" is not "Nomor 31"
