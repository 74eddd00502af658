"""Document metadata: what the text says, what the file declares, what a sidecar corrects.

The real regulations (../shared/data/regulations/pmk, pdftotext output with its noise) are
read directly, and every number and year is checked against an independent, simpler reading.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from pipeline.errors import IngestError
from pipeline.document_names import citation
from pipeline.ingest.metadata import (
    MetadataOverrides,
    describe,
    load_overrides,
    parse_metadata,
    read_sidecar,
    sidecar_for,
)

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
REGULATIONS = Path(os.environ.get("SAKSI_SHARED_DATA", ROOT.parent / "shared" / "data")) / "regulations" / "pmk"

# The independent reading: the heading is everything before the first line that is "TENTANG".
_BEFORE_TENTANG = re.compile(r"\A(.*?)^\s*TENTANG\s*$", re.DOTALL | re.MULTILINE)
_HEAD_NUMBER = re.compile(r"NOMOR\s*:?\s*(\d+)\b")
_HEAD_YEAR = re.compile(r"TAHUN\s+(\d{4})\b")


@pytest.fixture(scope="module")
def regulations() -> dict[str, str]:
    if not REGULATIONS.is_dir():
        pytest.fail(f"shared regulations not found at {REGULATIONS} (set SAKSI_SHARED_DATA)")
    files = sorted(REGULATIONS.glob("*.md"))
    if len(files) < 16:
        pytest.fail(f"expected the 16 shared regulations in {REGULATIONS}, found {len(files)}")
    return {f.name: f.read_text(encoding="utf-8") for f in files}


def test_every_real_regulation_names_itself(regulations):
    unnumbered = set()
    for name, text in regulations.items():
        meta = parse_metadata(text)
        assert meta.doc_type and meta.title and meta.cite_as, name
        assert meta.authority == "official" and meta.lang == "id", name
        head = _BEFORE_TENTANG.match(text)[1]
        number, year = _HEAD_NUMBER.search(head), _HEAD_YEAR.search(head)
        assert meta.number == (number[1] if number else None), name
        assert meta.year == (int(year[1]) if year else None), name
        assert "Source File" not in meta.title and not meta.title.startswith("PMK"), name
        if meta.number is None:
            unnumbered.add(name)
    # Surakarta's number and year are scanned illegibly ("NOMOR: \~ iAHUN JlOl~"); Tapin's number is blank.
    assert unnumbered == {"pmk-001-2025.md", "pmk-015-2025.md"}


def test_minister_of_finance_regulation(regulations):
    meta = parse_metadata(regulations["pmk-098-2025.md"])
    assert (meta.doc_type, meta.issuer, meta.number, meta.year) == ("Peraturan Menteri Keuangan", "Menteri Keuangan",
                                                                     "98", 2025)
    assert meta.title == "PENGENAAN BEA MASUK TINDAKAN PENGAMANAN ATAS IMPOR PRODUK KAIN TENUNAN DARI KAPAS"
    assert meta.cite_as == "PMK 98/2025" and meta.published == "2025-12-22"
    # "mulai berlaku setelah 10 (sepuluh) hari … sejak tanggal diundangkan", and the promulgation date is blank
    assert meta.promulgated is None and meta.effective is None


def test_trailing_dots_and_a_fixed_effective_date(regulations):
    meta = parse_metadata(regulations["pmk-096-2025.md"])  # "NOMOR 96 TAHUN 2025....."
    assert (meta.number, meta.year, meta.cite_as) == ("96", 2025, "PMK 96/2025")
    assert meta.title.endswith("237/PMK.04/2022 TENTANG PENELITIAN DUGAAN PELANGGARAN DI BIDANG CUKAI")
    assert parse_metadata(regulations["pmk-113-2025.md"]).effective == "2026-01-01"


def test_regent_regulation_under_a_masthead(regulations):
    meta = parse_metadata(regulations["pmk-006-2025.md"])  # "BUPATI KOTABARU / PROVINSI …" above the heading
    assert (meta.doc_type, meta.issuer, meta.number, meta.year) == ("Peraturan Bupati", "Bupati Kotabaru", "21", 2019)
    assert meta.cite_as == "Perbup Kotabaru 21/2019"
    assert meta.title.startswith("TEKNIS PEMBERIAN TUNJANGAN HARI RAYA, GAJI DAN TUNJANGAN KETIGA BELAS")
    assert meta.published is None  # "pada tanggal r♦ Mei 201": illegible, not guessed
    salinan = parse_metadata(regulations["pmk-005-2025.md"])
    assert salinan.cite_as == "Perbup Mamuju Tengah 34/2021" and salinan.published == "2021-11-25"
    # the closing article is split by the two-column layout; it still says "on promulgation"
    assert salinan.promulgated == salinan.effective == "2021-11-25"


def test_mayor_regulation_with_glued_words(regulations):
    meta = parse_metadata(regulations["pmk-001-2025.md"])  # "PERATURAN / WALIKOTASURAKARTA / NOMOR: \~"
    assert (meta.doc_type, meta.issuer) == ("Peraturan Walikota", "Walikota Surakarta")
    assert meta.number is None and meta.year is None
    assert meta.cite_as == "Perwali Surakarta"
    assert meta.title == "PETUNJUKTEKNISPENYALURAN BERASMISKINDAERAHKOTASURAKARTA TAHUN 2013"
    assert meta.published is meta.promulgated is meta.effective is None


def test_regional_regulation(regulations):
    meta = parse_metadata(regulations["pmk-016-2025.md"])
    assert (meta.doc_type, meta.issuer, meta.number, meta.year) == ("Peraturan Daerah", "Pemerintah Kabupaten Magelang",
                                                                     "8", 2010)
    assert meta.cite_as == "Perda Kab. Magelang 8/2010"
    assert meta.title == "PERUBAHAN ANGGARAN PENDAPATAN DAN BELANJA DAERAH KABUPATEN MAGELANG TAHUN ANGGARAN 2010"
    assert meta.published == meta.promulgated == meta.effective == "2010-09-07"  # "7 Sept 2010"
    bone = parse_metadata(regulations["pmk-014-2024.md"])  # the region's name only in the masthead
    assert bone.cite_as == "Perda Kab. Bone Bolango 2/2019" and bone.issuer == "Pemerintah Kabupaten Bone Bolango"


def test_cleaned_text_one_line_heading():
    text = ("SALINAN\nPERATURAN MENTERI KEUANGAN REPUBLIK INDONESIA NOMOR 12A TAHUN 2024 TENTANG TATA CARA "
            "PENGEMBALIAN PAJAK\nDENGAN RAHMAT TUHAN YANG MAHA ESA\nMenimbang: bahwa Peraturan Pemerintah Nomor 34 "
            "Tahun 2011 tentang Tindakan Antidumping perlu diubah;\nDitetapkan di Jakarta pada tanggal 3 Mei 2024\n")
    meta = parse_metadata(text)
    assert (meta.number, meta.year, meta.cite_as) == ("12A", 2024, "PMK 12A/2024")
    assert meta.title == "TATA CARA PENGEMBALIAN PAJAK" and meta.published == "2024-05-03"


def test_english_regulation_heading():
    text = ("REGULATION OF THE MINISTER OF FINANCE OF THE REPUBLIC OF INDONESIA\nNUMBER 98 OF 2025\nCONCERNING\n"
            "IMPOSITION OF SAFEGUARD DUTY ON IMPORTS OF\nWOVEN FABRICS OF COTTON\nBY THE GRACE OF GOD ALMIGHTY\n"
            "This Ministerial Regulation shall come into force on 1 January 2026.\n"
            "Stipulated in Jakarta\non December 22, 2025\n")
    meta = parse_metadata(text)
    assert (meta.doc_type, meta.number, meta.year, meta.cite_as, meta.lang) == (
        "Peraturan Menteri Keuangan", "98", 2025, "PMK 98/2025", "en")
    assert meta.title == "IMPOSITION OF SAFEGUARD DUTY ON IMPORTS OF WOVEN FABRICS OF COTTON"
    assert meta.published == "2025-12-22" and meta.effective == "2026-01-01"
    pp = parse_metadata("Government Regulation Number 34 of 2011 concerning Anti-Dumping Measures\n\nArticle 1\n")
    assert (pp.cite_as, pp.title, pp.issuer) == ("PP 34/2011", "Anti-Dumping Measures", "Presiden Republik Indonesia")


def test_running_case_heading_only_as_the_first_line():
    first = parse_metadata("# Peraturan Presiden Nomor 158 Tahun 2024 tentang Kementerian Keuangan\n\nPasal 1\n")
    assert (first.cite_as, first.title) == ("Perpres 158/2024", "Kementerian Keuangan")
    mention = parse_metadata("Berita pajak\n\nPeraturan Menteri Keuangan Nomor 98 Tahun 2025 tentang bea masuk "
                             "mulai berlaku bulan depan.\n")
    assert mention.doc_type is None and mention.authority is None


def test_standards():
    psak = parse_metadata("PSAK 71: Instrumen Keuangan\n\n1. Tujuan Pernyataan ini …\n")
    assert (psak.doc_type, psak.number, psak.cite_as, psak.title) == ("PSAK", "71", "PSAK 71", "Instrumen Keuangan")
    assert psak.issuer == "Dewan Standar Akuntansi Keuangan" and psak.authority == "official"
    long = parse_metadata("PERNYATAAN STANDAR AKUNTANSI KEUANGAN 71\nINSTRUMEN KEUANGAN\n\nPSAK 71 berlaku efektif "
                          "untuk periode tahun buku yang dimulai pada atau setelah 1 Januari 2020.\n")
    assert (long.cite_as, long.title, long.effective, long.lang) == ("PSAK 71", "INSTRUMEN KEUANGAN", "2020-01-01",
                                                                      "id")
    assert parse_metadata("ISAK 16\nPERJANJIAN KONSESI JASA\n").cite_as == "ISAK 16"
    assert parse_metadata("Catatan tentang PSAK 71 dan dampaknya.\n").doc_type is None


CLOSING = "Ditetapkan di Jakarta\npada tanggal 22 Desember 2025\n"


@pytest.mark.parametrize(("clause", "promulgated", "effective"), [
    ("Peraturan Menteri ini mulai berlaku pada tanggal diundangkan.", "23 Desember 2025", "2025-12-23"),
    ("Peraturan Menteri ini mulai berlaku setelah 10 (sepuluh) hari\nterhitung sejak tanggal diundangkan.",
     "23 Desember 2025", "2026-01-02"),
    ("Peraturan Menteri ini mulai berlaku setelah 3 (tiga) bulan terhitung sejak tanggal diundangkan.",
     "30 November 2025", "2026-02-28"),
    ("Peraturan Menteri ini mulai berlaku pada tanggal 1 Januari\n2026.", "", "2026-01-01"),
    ("Peraturan Menteri ini mulai berlaku pada tanggal ditetapkan.", "", "2025-12-22"),
    ("Peraturan Menteri ini mulai berlaku pada tanggal diundangkan.", "", None),
    ("Peraturan Menteri ini mulai berlaku setelah 10 (sepuluh) hari terhitung sejak tanggal diundangkan.", "", None),
    ("Peraturan Menteri ini mulai berlaku setelah 7 (tujuh) hari kerja terhitung sejak tanggal diundangkan.",
     "23 Desember 2025", None),
    ("Pada saat Peraturan Menteri ini mulai berlaku, Peraturan Menteri Nomor 1 Tahun 2020 dicabut.", "", None),
    # pdftotext's two-column split of "… ini mulai berlaku pada tanggal diundangkan."
    ("Peraturan Menteri\ndiundangkan.\n\nPasal II\nini mulai berlaku\n\npada\n\ntanggal\n\nAgar setiap orang",
     "23 Desember 2025", "2025-12-23"),
    ("This Ministerial\nRegulation shall come into force after 30 (thirty) days from the date of promulgation.",
     "23 Desember 2025", "2026-01-22"),
    # a law's older wording, and a term in years
    ("Undang-undang ini mulai berlaku pada hari diundangkannya.", "23 Desember 2025", "2025-12-23"),
    ("Undang-undang ini mulai berlaku 1 (satu) tahun terhitung sejak tanggal diundangkan.", "29 Februari 2024",
     "2025-02-28"),
    # a scan's letters for digits in the year
    ("Peraturan Menteri ini mulai berlaku pada tanggal diundangkan.", "23 Desember 2O25", "2025-12-23"),
])
def test_effective_date_rules(clause, promulgated, effective):
    text = f"Pasal 9\n{clause}\n{CLOSING}Diundangkan di Jakarta\npada tanggal {promulgated}\nDIREKTUR JENDERAL\n"
    meta = parse_metadata(text)
    assert meta.published == "2025-12-22"
    assert meta.effective == effective


def test_a_law_is_dated_by_its_signature_through_the_scan_s_letters_for_digits():
    text = ("UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 11 TAHUN 2O2O TENTANG CIPTA KERJA\n"
            "Pasal 186\nUndang-Undang ini mulai berlaku pada tanggal diundangkan.\n"
            "Agar setiap orang mengetahuinya, memerintahkan pengundangan Undang-Undang ini. Disahkan di Jakarta pada "
            "tanggal 2 November 2O2O ttd. JOKO WIDODO Diundangkan di Jakarta pada tanggal 2 November 2O2O MENTERI")
    meta = parse_metadata(text)
    assert (meta.doc_type, meta.number, meta.year, meta.cite_as) == ("Undang-Undang", "11", 2020, "UU 11/2020")
    assert (meta.published, meta.promulgated, meta.effective) == ("2020-11-02", "2020-11-02", "2020-11-02")
    assert parse_metadata("Disahkan di Jakarta pada tanggal 7 Mei lggg\n").published == "1999-05-07"
    # a word that merely looks like a year is not one
    assert parse_metadata("Disahkan di Jakarta pada tanggal 2 November 2Oxx\n").published is None
    assert parse_metadata("Disahkan di Jakarta pada tanggal 2 November lugu\n").published is None
    # Z stands for 2 or for 7 in these scans (UU 2/2017 is signed "12 Januari 2OlZ"): such a year is not read
    assert parse_metadata("Disahkan di Jakarta pada tanggal 12 Januari 2OlZ\n").published is None


def test_a_law_of_the_1950s_is_dated_by_its_signature_without_a_place_and_in_the_old_spelling():
    # the 1950s' signature blocks (UU 1/1951, UU 10/1950 in ../shared/data/peraturan): promulgated with no place,
    # months spelled as then ("Djuli"), "Pada" capitalised
    text = ("Pasal 9\nUndang-undang ini mulai berlaku pada hari diundangkan.\n"
            "Disahkan di Jogjakarta Pada tanggal 4 Djuli 1950. PRESIDEN REPUBLIK INDONESIA, SOEKARNO.\n"
            "Diundangkan pada tanggal 8 Djanuari 1951. MENTERI KEHAKIMAN, WONGSONEGORO.\n")
    meta = parse_metadata(text)
    assert (meta.published, meta.promulgated, meta.effective) == ("1950-07-04", "1951-01-08", "1951-01-08")
    assert parse_metadata("Diundangkan, pada tanggal 21 Pebruari 1953. Menteri Kehakiman\n").promulgated == "1953-02-21"
    assert parse_metadata("Disahkan di Jakarta pada tangal 27 Desember 1985 PRESIDEN\n").published == "1985-12-27"
    # a recital citing another regulation's promulgation is not the law's own: the line with a place comes first
    # wherever there is one (UU 4/1964 recites a Perpu "DIUNDANGKAN PADA TANGGAL 2 MARET 1963")
    recital = ("Menetapkan Peraturan Pemerintah Pengganti Undang-undang Nomor 1 Tahun 1963 yang DIUNDANGKAN PADA "
               "TANGGAL 2 MARET 1963 DALAM LEMBARAN-NEGARA TAHUN 1963, MENJADI UNDANG-UNDANG.\nPasal 2\n"
               "Undang-undang ini mulai berlaku pada hari diundangkan.\n"
               "Diundangkan di Jakarta pada tanggal 1 Juni 1964 WAKIL SEKRETARIS NEGARA\n")
    assert parse_metadata(recital).promulgated == "1964-06-01"
    # "diundangkan" inside a sentence is no signature, and a blank line after it borrows no later date
    assert parse_metadata("Peraturan ini diundangkan pada tanggal 3 Maret 1960.\n").promulgated is None
    assert parse_metadata("Diundangkan pada tanggal\nMENTERI\nLAMPIRAN pada tanggal 1 Mei 1960\n").promulgated is None


@pytest.mark.parametrize("line, published", [
    # the statute book's signature lines as its scans write them (bench/statute_dates.py)
    ("Disahkan Di Jakarta, Pada Tanggal 26 Agustus 1967 Ttd. PRESIDEN", "1967-08-26"),       # UU 8/1967
    ("Disahkan di Jakarta pada tanggal, 25 Oktober 2005 ttd", "2005-10-25"),                  # UU 9/2005
    ("Disahkan di Jakarta pada tanggal10 Agustus 2007 DR. H.", "2007-08-10"),                 # UU 36/2007
    ("Disahkan di Jakarta pada tanggal 26 Juli2016 ttd. JOKO WIDODO", "2016-07-26"),          # UU 12/2016
    ("Disahkan di Jakarta pada tanggal L7 Oktober 2O22 ttd", "2022-10-17"),                   # UU 27/2022
    ("Disahkan di Jakarta pada tanggal l7 Oktober 2O19 ttd", "2019-10-17"),                   # UU 19/2019
    ("Disahkan di Jakarta pada tangggal 31 Desember 1954.", "1954-12-31"),                    # UU 54/1954
    ("Disahkan di Jakarta pada tanggal 77 Oktober 2Ol4 ttd", None),                           # no such day
    ("Disahkan di Jakarta pada tanggal 2 8Juni2002 PRESIDEN", None),                          # 28 or 8: not read
    ("Disahkan di Jakarta pada tanggal 10 Agustus 20 0 7 ttd", None),                         # a year in pieces
    ("Disahkan di Jakarta pada tanggal Juni 2000 SEKRETARIS", None),                          # no day
])
def test_a_signature_as_a_scan_writes_it(line, published):
    assert parse_metadata(line + "\n").published == published
    assert parse_metadata("Undang-undang ini mulai berlaku pada tanggal I April 1971.\n").effective == "1971-04-01"


def test_a_signature_date_its_own_year_contradicts_is_a_misreading(tmp_path):
    law = tmp_path / "uu-5-1965.md"
    # UU 5/1965 as the statute book's scan has it: promulgated "14 Juni 1985", in force from promulgation
    text = ("UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 5 TAHUN 1965 TENTANG PERTANIAN\nPasal 9\n"
            "Undang-undang ini mulai berlaku pada hari diundangkannya.\n"
            "Disahkan di Jakarta pada tanggal 14 Juni 1965 PRESIDEN REPUBLIK INDONESIA, SOEKARNO.\n"
            "Diundangkan di Jakarta pada tanggal 14 Juni 1985. Sekretaris Negara, MOHD. ICHSAN.\n")
    assert parse_metadata(text).promulgated == "1985-06-14"  # what the text says, read as it is
    meta = describe(law, text, {})
    assert meta.fields["year"] == 1965
    assert (meta.fields["published"], meta.fields["promulgated"], meta.fields["effective"]) == ("1965-06-14", None,
                                                                                                 None)
    assert "promulgated" not in meta.provenance and "effective" not in meta.provenance
    # the year a sidecar gives (a heading the scan made illegible) counts too: UU 17/2017 "22 November 2077"
    signed = ("Disahkan di Jakarta pada tanggal 22 November 2077 ttd. JOKO WIDODO Diundangkan di Jakarta pada "
              "tanggal 22 November 2017 MENTERI\n")
    meta = describe(tmp_path / "uu-17-2017.md", signed, {}, {"doc_type": "Undang-Undang", "number": "17", "year": 2017})
    assert (meta.fields["published"], meta.fields["promulgated"]) == (None, "2017-11-22")
    # a year apart is a law signed in December and numbered in January; a declared date is the declarer's
    assert describe(law, text.replace("14 Juni 1985", "2 Januari 1966"), {}).fields["promulgated"] == "1966-01-02"
    assert describe(law, text, {"promulgated": "1985-06-14"}).fields["promulgated"] == "1985-06-14"


def test_only_the_first_enactment_line_counts():
    text = ("Ditetapkan di Jakarta\npada tanggal\nMENTERI KEUANGAN\n\n"
            "LAMPIRAN\nDitetapkan di Bogor\npada tanggal 1 Mei 2020\n")
    assert parse_metadata(text).published is None


def test_citation_names():
    assert citation("Peraturan Pemerintah", "34", 2011) == "PP 34/2011"
    assert citation("Undang-Undang", "17", 2006) == "UU 17/2006"
    assert citation("Peraturan Wali Kota", "1", 2025, "Wali Kota Surakarta") == "Perwali Surakarta 1/2025"
    assert citation("Peraturan Menteri Keuangan", "237/PMK.04/2022", 2022) == "PMK 237/PMK.04/2022"
    assert citation("Peraturan Direktur Jenderal Pajak", "PER-11/PJ/2025", 2025) == "PER-11/PJ/2025"
    assert citation("Keputusan Gubernur", "5", 2020) == "Keputusan Gubernur 5/2020"
    assert citation("Peraturan Menteri Keuangan", None, None) is None


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_describe_precedence_and_provenance(tmp_path, regulations):
    doc = _write(tmp_path / "pmk-098-2025.md", regulations["pmk-098-2025.md"])
    meta = describe(doc, doc.read_text(encoding="utf-8"), {"title": "Bea masuk pengamanan kain", "number": 98},
                    {"promulgated": "2025-12-23", "url": "https://JDIH.Kemenkeu.go.id/pmk/98"})
    f, p = meta.fields, meta.provenance
    assert (f["doc_type"], p["doc_type"]) == ("Peraturan Menteri Keuangan", "document")
    assert (f["title"], p["title"]) == ("Bea masuk pengamanan kain", "declared")
    assert (f["number"], p["number"]) == ("98", "declared")
    assert (f["promulgated"], p["promulgated"]) == ("2025-12-23", "sidecar")
    assert (f["domain"], p["domain"]) == ("jdih.kemenkeu.go.id", "sidecar")
    assert (f["authority"], f["lang"], f["published"]) == ("official", "id", "2025-12-22")
    assert f["illustrative"] is False and "illustrative" not in p and f["id"] is None
    override = describe(doc, "", {"authority": "primary"}, {"authority": "media", "published": "2026-01-05"})
    assert (override.fields["authority"], override.provenance["authority"]) == ("media", "sidecar")
    assert override.fields["published"] == "2026-01-05"


def test_sidecar_completes_an_illegible_heading(tmp_path, regulations):
    doc = _write(tmp_path / "pmk-001-2025.md", regulations["pmk-001-2025.md"])
    meta = describe(doc, doc.read_text(encoding="utf-8"), {}, {"number": 19, "year": 2013})
    assert (meta.fields["cite_as"], meta.provenance["cite_as"]) == ("Perwali Surakarta 19/2013", "sidecar")
    declared = describe(doc, doc.read_text(encoding="utf-8"), {"cite_as": "Perwali Ska 19/2013"}, {"number": "19"})
    assert (declared.fields["cite_as"], declared.provenance["cite_as"]) == ("Perwali Ska 19/2013", "declared")


def test_describe_fallbacks(tmp_path):
    note = _write(tmp_path / "catatan.md", "# Catatan Sewa\n\nCatatan ini menjelaskan sewa dan pajak yang terutang.\n")
    meta = describe(note, note.read_text(encoding="utf-8"), {})
    assert (meta.fields["title"], meta.provenance["title"]) == ("Catatan Sewa", "document")
    assert (meta.fields["lang"], meta.fields["authority"], meta.fields["cite_as"]) == ("id", "unknown", None)
    assert "authority" not in meta.provenance
    plain = describe(tmp_path / "lease-note.txt", "The lessee presents the payments in the statement of cash flows.",
                     {})
    assert (plain.fields["title"], plain.provenance["title"]) == ("lease-note", "filename")
    assert plain.fields["lang"] == "en" and plain.fields["domain"] is None


@pytest.mark.parametrize(("raw", "field", "wording"), [
    ({"published": 2025}, "published", "bare year"),
    ({"promulgated": "22 Desember 2025"}, "promulgated", "valid date"),
    ({"id": "pmk 98"}, "id", "letters, digits"),
    ({"authority": "government"}, "authority", "official"),
    ({"year": "two thousand"}, "year", "integer"),
    ({"lang": "fr"}, "lang", "'id' or 'en'"),
])
def test_invalid_values_name_the_field(tmp_path, raw, field, wording):
    doc = tmp_path / "doc.md"
    with pytest.raises(IngestError) as declared:
        describe(doc, "Teks.", raw)
    assert declared.value.path == str(doc)
    assert declared.value.reason.startswith(f"front matter field {field!r}: ") and wording in declared.value.reason
    side = _write(tmp_path / "doc.md.meta.yaml", "")
    with pytest.raises(IngestError) as sidecar:
        describe(doc, "Teks.", {}, raw)
    assert sidecar.value.path == str(side) and sidecar.value.reason.startswith(f"sidecar field {field!r}: ")


def test_overrides_accept_what_front_matter_accepts():
    o = load_overrides({"id": "pmk-98_2025", "title": "T", "doc_type": "regulation", "issuer": "Menteri Keuangan",
                        "authority": "official", "published": "2025-12-22", "effective": "2026-01-01",
                        "lang": "id", "illustrative": True, "url": "https://x.go.id/a", "number": 98,
                        "year": 2025, "unknown_key": "ignored"}, "f.md")
    assert isinstance(o, MetadataOverrides) and o.number == "98" and o.year == 2025 and o.illustrative is True
    assert load_overrides({"language": "en"}, "f.docx", "declared metadata").lang == "en"  # DOCX core properties
    with pytest.raises(IngestError, match="front matter must be a YAML mapping"):
        load_overrides(["a"], "f.md")  # type: ignore[arg-type]


def test_sidecar_files(tmp_path):
    doc = _write(tmp_path / "pmk-098-2025.md", "Teks.")
    assert sidecar_for(doc) is None
    stem = _write(tmp_path / "pmk-098-2025.meta.yaml", "number: 98\n")
    assert sidecar_for(doc) == stem
    name = _write(tmp_path / "pmk-098-2025.md.meta.yaml", "number: 98\nyear: 2025\n")
    assert sidecar_for(doc) == name  # the full name wins: "a.md" and "a.pdf" may sit side by side
    assert read_sidecar(name) == {"number": 98, "year": 2025}
    assert read_sidecar(_write(tmp_path / "empty.meta.yaml", "")) == {}
    with pytest.raises(IngestError) as bad:
        read_sidecar(_write(tmp_path / "bad.meta.yaml", "number: [98\n"))
    assert bad.value.path == str(tmp_path / "bad.meta.yaml") and "not valid YAML" in bad.value.reason
    with pytest.raises(IngestError, match="sidecar must be a YAML mapping"):
        read_sidecar(_write(tmp_path / "list.meta.yaml", "- 98\n"))


@pytest.mark.parametrize("url, tier", [
    ("https://jdih.kemenkeu.go.id/dok/pmk-98-2025", "official"),
    ("https://www.irs.gov/pub/irs-pdf/p15.pdf", "official"),
    ("https://lib.ui.ac.id/thesis/123", "academic"),
    ("https://web.iaiglobal.or.id/psak", "institutional"),
    ("https://money.kompas.com/read/2025/01/02/pajak", "media"),
    ("https://blog.example.com/pajak", "unknown"),
])
def test_the_publishers_domain_gives_an_authority_tier_when_nothing_else_does(tmp_path, url, tier):
    path = tmp_path / "page.html"
    meta = describe(path, "Isi halaman tentang pajak penghasilan.", {"url": url})
    assert meta.fields["authority"] == tier
    assert meta.provenance.get("authority") == ("domain" if tier != "unknown" else None)
    declared = describe(path, "Isi halaman.", {"url": url, "authority": "media"})
    assert declared.fields["authority"] == "media" and declared.provenance["authority"] == "declared"
