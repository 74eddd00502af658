"""How huruf and angka lists nest in a regulation: read from the document, never fixed.

An ayat holds huruf lists, which may hold angka lists ("Pasal 7 ayat (1) huruf a angka 2"); but
Pasal 1's definitions are an angka list whose items may hold huruf lists ("Pasal 1 angka 5 huruf
a", then "Pasal 1 angka 6"). Every label here is asserted exactly, in reading order.
"""
from __future__ import annotations

import pytest

from pipeline.citations import cite_path
from pipeline.ingest import Chunker, read_source

pytestmark = pytest.mark.unit


def _units(text: str, lang: str = "id") -> dict:
    return {u.location: u for u in Chunker(1500).units(text, 0, lang)}


def _labels(unit) -> list[str]:
    return [s.label for s in unit.spans]


def _span_texts(text: str, unit) -> list[tuple[str, str]]:
    return [(s.label, text[s.start:s.end]) for s in unit.spans]


DEFINITIONS = """UNDANG-UNDANG REPUBLIK INDONESIA
NOMOR 13 TAHUN 2003
TENTANG
KETENAGAKERJAAN

Pasal 1
Dalam undang undang ini yang dimaksud dengan :
1. Ketenagakerjaan adalah segala hal yang berhubungan dengan tenaga kerja.
2. Tenaga kerja adalah setiap orang yang mampu melakukan pekerjaan.
5. Pengusaha adalah :
a. orang perseorangan yang menjalankan suatu perusahaan milik sendiri;
b. orang perseorangan yang secara berdiri sendiri menjalankan perusahaan bukan miliknya;
c. orang perseorangan yang berada di Indonesia mewakili perusahaan.
6. Perusahaan adalah :
a. setiap bentuk usaha yang berbadan hukum atau tidak;
b. usaha-usaha sosial dan usaha-usaha lain yang mempunyai pengurus.
7. Perencanaan tenaga kerja adalah proses penyusunan rencana ketenagakerjaan.
8. Pelatihan kerja adalah keseluruhan kegiatan untuk memberi keterampilan.

Pasal 2
Pembangunan ketenagakerjaan berlandaskan Pancasila.
"""


def test_pasal_1_definitions_hold_huruf_lists_and_the_angka_list_continues():
    """Angka 5 holds a huruf list; "6." is angka 5's next sibling, not an item under huruf c; "a."
    then opens a new list under angka 6; "7." continues the Pasal's own list. (3 and 4 are missing
    here as an OCR drop: "5." still continues the list after "2.")"""
    units = _units(DEFINITIONS)
    p1 = units["Pasal 1"]
    assert _labels(p1) == [
        "Pasal 1 angka 1", "Pasal 1 angka 2", "Pasal 1 angka 5",
        "Pasal 1 angka 5 huruf a", "Pasal 1 angka 5 huruf b", "Pasal 1 angka 5 huruf c",
        "Pasal 1 angka 6", "Pasal 1 angka 6 huruf a", "Pasal 1 angka 6 huruf b",
        "Pasal 1 angka 7", "Pasal 1 angka 8",
    ]
    spans = dict(_span_texts(DEFINITIONS, p1))
    # an open item runs over the lists nested in it, and ends where its next sibling starts
    assert spans["Pasal 1 angka 5"].startswith("5. Pengusaha adalah :")
    assert spans["Pasal 1 angka 5"].endswith("mewakili perusahaan.")
    assert spans["Pasal 1 angka 5 huruf c"] == "c. orang perseorangan yang berada di Indonesia mewakili perusahaan."
    assert spans["Pasal 1 angka 6"].endswith("mempunyai pengurus.")
    assert spans["Pasal 1 angka 8"] == "8. Pelatihan kerja adalah keseluruhan kegiatan untuk memberi keterampilan."
    assert _labels(units["Pasal 2"]) == []  # a new Pasal closes every list


def test_a_definition_is_cited_as_pasal_1_angka_n(tmp_path):
    path = tmp_path / "uu-13-2003.md"
    path.write_text(DEFINITIONS, encoding="utf-8")
    src = read_source(path)
    chunk = next(c for c in Chunker(1500).chunks(src.document, src.text, source=src) if c.location == "Pasal 1")
    assert cite_path(chunk, "Pasal 1 angka 7").endswith("Pasal 1 › angka 7")
    assert cite_path(chunk, "Pasal 1 angka 5 huruf b").endswith("Pasal 1 › angka 5 › huruf b")


AYAT_HURUF_ANGKA = """Pasal 7
(1) Pajak terutang dihitung berdasarkan:
a. penghasilan bruto, yang terdiri atas:
1. penghasilan dari pekerjaan; dan
2. penghasilan dari usaha;
b. tarif sebagaimana dimaksud dalam Pasal 5.
(2) Pajak sebagaimana dimaksud pada ayat (1) dibayar:
a. sendiri oleh Wajib Pajak; atau
b. melalui pemotongan.
(3) Ketentuan lebih lanjut diatur dengan Peraturan Menteri.
"""


def test_ayat_holds_huruf_which_holds_angka_and_an_ayat_closes_every_list():
    p7 = _units(AYAT_HURUF_ANGKA)["Pasal 7"]
    assert _labels(p7) == [
        "Pasal 7 ayat (1)", "Pasal 7 ayat (1) huruf a", "Pasal 7 ayat (1) huruf a angka 1",
        "Pasal 7 ayat (1) huruf a angka 2", "Pasal 7 ayat (1) huruf b",
        "Pasal 7 ayat (2)", "Pasal 7 ayat (2) huruf a", "Pasal 7 ayat (2) huruf b",
        "Pasal 7 ayat (3)",
    ]
    spans = dict(_span_texts(AYAT_HURUF_ANGKA, p7))
    assert spans["Pasal 7 ayat (1)"].endswith("dalam Pasal 5.")
    assert spans["Pasal 7 ayat (1) huruf a"].endswith("2. penghasilan dari usaha;")
    assert spans["Pasal 7 ayat (2) huruf b"] == "b. melalui pemotongan."


HURUF_HOLDING_ANGKA = """Pasal 3
Objek pajak meliputi:
a. penghasilan dari pekerjaan, berupa:
1. gaji; dan
2. honorarium;
b. penghasilan dari usaha, berupa:
1. laba usaha;
c. penghasilan lain.
"""


def test_a_huruf_list_whose_items_hold_angka_lists_continues_after_them():
    p3 = _units(HURUF_HOLDING_ANGKA)["Pasal 3"]
    assert _labels(p3) == [
        "Pasal 3 huruf a", "Pasal 3 huruf a angka 1", "Pasal 3 huruf a angka 2",
        "Pasal 3 huruf b", "Pasal 3 huruf b angka 1", "Pasal 3 huruf c",
    ]
    spans = dict(_span_texts(HURUF_HOLDING_ANGKA, p3))
    assert spans["Pasal 3 huruf a"].endswith("2. honorarium;")
    assert spans["Pasal 3 huruf b angka 1"] == "1. laba usaha;"


RESTART_UNDER_ANGKA = """Pasal II
1. Pada saat Peraturan Menteri ini mulai berlaku:
a. proses penyelesaian yang telah dimulai tetap dilanjutkan; dan
b. permohonan yang telah diajukan diselesaikan.
2. Terhadap permohonan yang diajukan setelah tanggal berlaku:
a. diproses berdasarkan Peraturan Menteri ini;
b. dikenai tarif baru; dan
c. dicatat dalam sistem.
3. Peraturan Menteri ini mulai berlaku setelah 14 (empat belas) hari.
"""


def test_an_a_under_the_next_angka_item_opens_a_new_list_there():
    p2 = _units(RESTART_UNDER_ANGKA)["Pasal II"]
    assert _labels(p2) == [
        "Pasal II angka 1", "Pasal II angka 1 huruf a", "Pasal II angka 1 huruf b",
        "Pasal II angka 2", "Pasal II angka 2 huruf a", "Pasal II angka 2 huruf b", "Pasal II angka 2 huruf c",
        "Pasal II angka 3",
    ]


OCR_DROPPED = """Pasal 1
Dalam Peraturan Bupati ini, yang dimaksud dengan:
1. Daerah adalah Kabupaten Tapin.
2. Bupati adalah Bupati Tapin.
3. Dana Desa adalah dana yang bersumber dari anggaran negara, terdiri atas:
a. alokasi dasar;
c. alokasi kinerja.
ll.Indeks Kemahalan Konstruksi adalah indeks yang mencerminkan tingkat kesulitan.
5. Rekening Kas Desa adalah rekening tempat menyimpan uang Desa.
6. Jumlah Desa adalah jumlah yang ditetapkan oleh Menteri.
"""


def test_a_marker_ocr_dropped_or_misread_falls_back_to_the_innermost_list_of_its_kind():
    """"b." and "4." were lost ("ll." is a misread "4." and no marker): "c." is still the huruf
    list's next item, and "5." the angka list's, closing the huruf list under angka 3."""
    p1 = _units(OCR_DROPPED)["Pasal 1"]
    assert _labels(p1) == [
        "Pasal 1 angka 1", "Pasal 1 angka 2", "Pasal 1 angka 3", "Pasal 1 angka 3 huruf a",
        "Pasal 1 angka 3 huruf c", "Pasal 1 angka 5", "Pasal 1 angka 6",
    ]
    spans = dict(_span_texts(OCR_DROPPED, p1))
    assert spans["Pasal 1 angka 3 huruf c"].endswith("tingkat kesulitan.")  # the unmarked line rides along


LOST_HEADING = """Pasal 14
Bupati melakukan pemantauan dan evaluasi atas:
a. sisa Dana Desa di RKD; dan/atau
b. capaian keluaran Dana Desa.
Pasa-l 15
Dalam hal ditemukan sisa Dana Desa, Bupati:
a. meminta penjelasan kepada Kepala Desa; dan
b. meminta Aparat Pengawas Fungsional Daerah untuk melakukan pemeriksaan.
"""


def test_a_list_never_nests_in_an_item_of_its_own_kind_and_equal_labels_stay_apart():
    """With the heading "Pasal 15" misread, the second "a." restarts the huruf list at its level
    (not "huruf b huruf a"); each span keeps its own extent though the labels repeat."""
    p14 = _units(LOST_HEADING)["Pasal 14"]
    assert _labels(p14) == ["Pasal 14 huruf a", "Pasal 14 huruf b", "Pasal 14 huruf a", "Pasal 14 huruf b"]
    texts = [t for _, t in _span_texts(LOST_HEADING, p14)]
    assert texts[0] == "a. sisa Dana Desa di RKD; dan/atau"
    assert texts[1].startswith("b. capaian keluaran") and texts[1].endswith("sisa Dana Desa, Bupati:")
    assert texts[2] == "a. meminta penjelasan kepada Kepala Desa; dan"


def test_a_long_definition_pasal_is_split_between_its_angka_items(tmp_path):
    """Pieces of an oversized Pasal 1 are named by the angka they hold ("Pasal 1 angka 1–4"), the
    huruf nested in an angka riding along with it; no text is in two chunks."""
    filler = " ".join(["yang selanjutnya diatur dalam ketentuan peraturan perundang-undangan"] * 2)
    lines = ["Pasal 1", "Dalam Undang-Undang ini yang dimaksud dengan:"]
    for n in range(1, 13):
        lines.append(f"{n}. Istilah {n} adalah pengertian nomor {n} {filler}.")
        if n == 5:
            lines += [f"{x}. bagian {x} dari istilah lima {filler};" for x in "abc"]
    lines += ["", "Pasal 2", "Undang-Undang ini mulai berlaku pada tanggal diundangkan.", ""]
    path = tmp_path / "uu-uji.md"
    path.write_text("UNDANG-UNDANG NOMOR 1 TAHUN 2024\n\n" + "\n".join(lines), encoding="utf-8")
    src = read_source(path)
    chunks = [c for c in Chunker(900).chunks(src.document, src.text, source=src) if c.unit.endswith("#Pasal 1")]
    assert [c.location for c in chunks] == ["Pasal 1 angka 1–4", "Pasal 1 angka 5–6", "Pasal 1 angka 7–11",
                                            "Pasal 1 angka 12"]
    assert [s.label for s in chunks[1].spans] == ["Pasal 1 angka 5", "Pasal 1 angka 5 huruf a",
                                                  "Pasal 1 angka 5 huruf b", "Pasal 1 angka 5 huruf c",
                                                  "Pasal 1 angka 6"]
    assert chunks[0].text.startswith("Pasal 1\nDalam Undang-Undang ini") and chunks[1].text.startswith("5. Istilah 5")
    for a, b in zip(chunks, chunks[1:]):
        assert a.end <= b.start


EXPLAINED = """Pasal 1
Dalam Peraturan ini yang dimaksud dengan:
1. Pajak adalah kontribusi wajib.
2. Pemotong adalah:
a. pemberi kerja; dan
b. bendahara.
Pasal 3
(1) Pemotong wajib melaporkan:
a. pemotongan; dan
b. penyetoran.

PENJELASAN
ATAS PERATURAN MENTERI KEUANGAN
II. PASAL DEMI PASAL
Pasal 1
Angka 1
Cukup jelas.
Angka 2
Huruf a
Yang dimaksud dengan pemberi kerja adalah orang pribadi atau badan.
Huruf b
Cukup jelas.
Angka 3
Cukup jelas.
Pasal 3
Ayat (1)
Huruf a
Cukup jelas.
Huruf b
Penyetoran dilakukan melalui:
a. bank persepsi; atau
b. pos persepsi.
Huruf c
Cukup jelas.
Ayat (2)
Cukup jelas.
"""


def test_the_explanation_headings_nest_as_the_body_does():
    """"Huruf a" under "Angka 2" is that angka's; an inline list in "Huruf b"'s explanation is its
    own list, and "Huruf c" continues the headings' list, not the inline one."""
    units = _units(EXPLAINED)
    assert _labels(units["Pasal 1"])[-2:] == ["Pasal 1 angka 2 huruf a", "Pasal 1 angka 2 huruf b"]
    assert _labels(units["Penjelasan Pasal 1"]) == [
        "Penjelasan Pasal 1 angka 1", "Penjelasan Pasal 1 angka 2", "Penjelasan Pasal 1 angka 2 huruf a",
        "Penjelasan Pasal 1 angka 2 huruf b", "Penjelasan Pasal 1 angka 3",
    ]
    assert _labels(units["Penjelasan Pasal 3"]) == [
        "Penjelasan Pasal 3 ayat (1)", "Penjelasan Pasal 3 ayat (1) huruf a", "Penjelasan Pasal 3 ayat (1) huruf b",
        "Penjelasan Pasal 3 ayat (1) huruf b huruf a", "Penjelasan Pasal 3 ayat (1) huruf b huruf b",
        "Penjelasan Pasal 3 ayat (1) huruf c", "Penjelasan Pasal 3 ayat (2)",
    ]


def test_english_definitions_nest_letters_in_points():
    text = ("Article 1\nIn this Law:\n1. Manpower means everything related to workers.\n"
            "2. Employer means:\na. an individual running a company;\nb. a legal entity.\n"
            "3. Company means any form of business.\nArticle 2\n(1) Workers are entitled to:\n"
            "a. wages; and\nb. leave.\n")
    units = _units(text, lang="en")
    assert _labels(units["Article 1"]) == [
        "Article 1 point 1", "Article 1 point 2", "Article 1 point 2 letter a", "Article 1 point 2 letter b",
        "Article 1 point 3",
    ]
    assert _labels(units["Article 2"]) == [
        "Article 2 paragraph (1)", "Article 2 paragraph (1) letter a", "Article 2 paragraph (1) letter b",
    ]
