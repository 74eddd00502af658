"""Ingest: reading files, structure-aware chunking, evidence categories."""
from __future__ import annotations

import bisect
import re
from pathlib import Path

import pytest

from pipeline.config import load_profile
from pipeline.errors import IngestError
from pipeline.citations import cite_path, cited_location, quote_pages
from pipeline.categories import CategoryTagger
from pipeline.ingest import Chunker, chunk_id, expand_paths, read_source
from pipeline.types import Chunk

pytestmark = pytest.mark.unit

from ..conftest import require_regulations

REGULATION = """---
id: pmk-uji-1
title: Peraturan Uji Pajak
authority: official
published: 2024-05-01
lang: id
---
PERATURAN MENTERI KEUANGAN
NOMOR 1 TAHUN 2024

BAB I
KETENTUAN UMUM

Pasal 1
Dalam Peraturan Menteri ini yang dimaksud dengan Pajak adalah kontribusi wajib kepada negara.

BAB II
TARIF

Pasal 2
(1) Tarif Pajak Penghasilan atas sewa tanah adalah 10% (sepuluh persen) dari jumlah bruto.
(2) Pajak sebagaimana dimaksud pada ayat (1) bersifat final.

Pasal 3
(1) Pajak yang dipotong wajib disetor paling lambat tanggal 10 bulan berikutnya.
(2) Pemotong wajib melaporkan pemotongan dalam Surat Pemberitahuan Masa.
(3) Pelaporan dilakukan paling lambat 20 hari setelah Masa Pajak berakhir.

PENJELASAN
ATAS PERATURAN MENTERI KEUANGAN
I. UMUM
Peraturan ini disusun untuk memberikan kepastian hukum bagi Wajib Pajak.
II. PASAL DEMI PASAL
Pasal 2
Ayat (1)
Yang dimaksud dengan jumlah bruto adalah seluruh jumlah penghasilan.
"""

STANDARD = """# PSAK Uji Pendapatan

## Ruang Lingkup

1. Standar ini diterapkan untuk seluruh kontrak dengan pelanggan.

2. Entitas mengakui pendapatan ketika pengendalian dialihkan.
Lanjutan paragraf dua yang menjelaskan pengalihan.

3. Contoh: entitas menjual barang seharga Rp1.000.000 kepada pelanggan.

12. Entitas mengukur pendapatan sebesar harga transaksi.

## Contoh Ilustratif

13. Entitas A menjual mesin kepada pelanggan B pada tanggal 1 Januari.

## Lampiran B Pedoman Penerapan

B1. Pedoman ini merupakan bagian integral dari standar ini.

5.5.1 Entitas mengukur aset pada nilai wajar setiap periode.
"""


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_bytes(content.encode("utf-8"))
    return p


def _chunk_file(path: Path, max_chars: int = 1500):
    src = read_source(path)
    return src, Chunker(max_chars).chunks(src.document, src.text, source=src)


def _assert_exact(src, chunks):
    for c in chunks:
        assert c.text == src.text[c.start:c.end]
        assert c.text == c.text.strip()
        for s in c.spans:
            assert 0 <= s.start < s.end <= len(c.text)


# --------------------------------------------------------------------------- regulations


def test_regulation_one_chunk_per_pasal_with_ayat_spans(tmp_path):
    src, chunks = _chunk_file(_write(tmp_path, "reg.md", REGULATION))
    _assert_exact(src, chunks)
    by_loc = {c.location: c for c in chunks}
    body = [c.location for c in chunks if c.location.startswith("Pasal")]
    assert body == ["Pasal 1", "Pasal 2", "Pasal 3"]

    p2 = by_loc["Pasal 2"]
    assert p2.text.startswith("Pasal 2\n(1) Tarif")
    assert p2.text.endswith("bersifat final.")
    assert [s.label for s in p2.spans] == ["Pasal 2 ayat (1)", "Pasal 2 ayat (2)"]
    ayat2 = p2.spans[1]
    assert p2.text[ayat2.start:ayat2.end] == "(2) Pajak sebagaimana dimaksud pada ayat (1) bersifat final."

    p3 = by_loc["Pasal 3"]
    assert [s.label for s in p3.spans] == ["Pasal 3 ayat (1)", "Pasal 3 ayat (2)", "Pasal 3 ayat (3)"]
    s = p3.spans[1]
    assert p3.text[s.start:s.end].startswith("(2) Pemotong wajib melaporkan")
    assert p3.heading == "BAB II TARIF"
    assert by_loc["Pasal 1"].heading == "BAB I KETENTUAN UMUM"


# the shared statute book's texts (../shared/data/peraturan/uu.tar.xz) write a heading with its title on one line,
# several headings on one line, and a heading after the last sentence of the Pasal before it (UU 13/2003 Pasal 67,
# 75; 462 of its 1,555 documents, 5,383 passages before issue 30's tenth session)
GLUED = """UNDANG-UNDANG REPUBLIK INDONESIA
NOMOR 13 TAHUN 2003
TENTANG
KETENAGAKERJAAN
BAB I KETENTUAN UMUM
Pasal 1
Dalam undang-undang ini yang dimaksud dengan tenaga kerja adalah setiap orang yang mampu melakukan pekerjaan.
BAB X PERLINDUNGAN, PENGUPAHAN, DAN KESEJAHTERAAN Bagian Kesatu Perlindungan Paragraf 1 Penyandang Cacat
Pasal 67
(1) Pengusaha yang mempekerjakan tenaga kerja penyandang cacat wajib memberikan perlindungan.
(2) Pemberian perlindungan dilaksanakan sesuai dengan peraturan perundang-undangan yang berlaku. Paragraf 2 Anak
Pasal 68
Pengusaha dilarang mempekerjakan anak.
Bagian Keuangan perusahaan mencatat upah anak. Paragraf 3 tidak berlaku.
Pasal 69
Anak dilindungi. Paragraf 4 Waktu Kerja
Ketentuan sebagaimana dimaksud dalam Pasal 68 berlaku. BAB XI HUBUNGAN INDUSTRIAL
Pasal 102
Dalam melaksanakan hubungan industrial, pemerintah mempunyai fungsi menetapkan kebijakan.
"""


def test_headings_on_a_body_line_are_read_as_headings_with_their_titles(tmp_path):
    src, chunks = _chunk_file(_write(tmp_path, "uu-13-2003.md", GLUED))
    _assert_exact(src, chunks)
    by_loc = {c.location: c for c in chunks}
    assert by_loc["Pasal 1"].heading == "BAB I KETENTUAN UMUM"
    assert by_loc["Pasal 67"].heading == ("BAB X PERLINDUNGAN, PENGUPAHAN, DAN KESEJAHTERAAN › Bagian Kesatu "
                                          "Perlindungan › Paragraf 1 Penyandang Cacat")
    # the next Paragraf's heading is no part of ayat (2): the quote ends with the sentence
    p67 = by_loc["Pasal 67"]
    assert p67.text.endswith("yang berlaku.")
    assert p67.text[p67.spans[-1].start:p67.spans[-1].end].endswith("yang berlaku.")
    assert by_loc["Pasal 68"].heading == ("BAB X PERLINDUNGAN, PENGUPAHAN, DAN KESEJAHTERAAN › Bagian Kesatu "
                                          "Perlindungan › Paragraf 2 Anak")
    # "Bagian Keuangan" is no Bagian (its ordinal is not spelt out), a title is no sentence ("Paragraf 3 tidak
    # berlaku." stays text of Pasal 68), and a line that neither a Pasal nor a heading follows keeps its words
    assert by_loc["Pasal 68"].text.endswith("Bagian Keuangan perusahaan mencatat upah anak. Paragraf 3 tidak berlaku.")
    assert "Anak dilindungi. Paragraf 4 Waktu Kerja\nKetentuan" in by_loc["Pasal 69"].text
    assert by_loc["Pasal 69"].text.endswith("Pasal 68 berlaku.")
    assert by_loc["Pasal 69"].heading.endswith("Paragraf 2 Anak")
    assert by_loc["Pasal 102"].heading == "BAB XI HUBUNGAN INDUSTRIAL"


def test_regulation_penjelasan_is_labelled_apart_from_the_body(tmp_path):
    _, chunks = _chunk_file(_write(tmp_path, "reg.md", REGULATION))
    locs = [c.location for c in chunks]
    assert "Penjelasan Pasal 2" in locs
    assert locs.count("Pasal 2") == 1
    assert any(loc == "Penjelasan Umum" for loc in locs)
    assert "pembukaan" in locs  # the preamble is kept, not attributed to a Pasal


def test_regulation_front_matter_fields_reach_document_and_chunks(tmp_path):
    src, chunks = _chunk_file(_write(tmp_path, "reg.md", REGULATION))
    d = src.document
    assert d.doc_id == "pmk-uji-1"
    assert d.title == "Peraturan Uji Pajak"
    assert d.authority == "official"
    assert d.published == "2024-05-01"
    assert d.lang == "id"
    assert src.text.startswith("PERATURAN MENTERI KEUANGAN")  # the rendition starts after the front matter
    for c in chunks:
        assert c.doc_id == "pmk-uji-1"
        assert c.authority == "official"
        assert c.published == "2024-05-01"
        assert c.lang == "id"
        assert c.original_span[0] >= src.body_start  # in the original file, after the front matter
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_a_document_known_only_by_its_promulgation_is_dated_by_it(tmp_path):
    # a scan that kept the promulgation line and lost the signature's (157 of the statute book's laws)
    text = REGULATION.replace("published: 2024-05-01\n", "promulgated: 2024-05-03\n")
    assert "promulgated: 2024-05-03" in text
    src, chunks = _chunk_file(_write(tmp_path, "reg.md", text))
    assert (src.document.published, src.document.promulgated) == (None, "2024-05-03")
    assert chunks and {c.published for c in chunks} == {"2024-05-03"}
    signed = _chunk_file(_write(tmp_path, "signed.md", text.replace("promulgated: 2024-05-03\n",
                                                                   "published: 2024-05-01\npromulgated: 2024-05-03\n")))
    assert {c.published for c in signed[1]} == {"2024-05-01"}  # signed first, where both are known


def test_front_matter_lang_wins_over_detection(tmp_path):
    text = "---\nlang: en\n---\nPajak yang dipotong wajib disetor oleh pemotong dan dilaporkan setiap bulan.\n"
    src = read_source(_write(tmp_path, "x.md", text))
    assert src.document.lang == "en"
    src2 = read_source(_write(tmp_path, "y.md", text.replace("lang: en\n", "")))
    assert src2.document.lang == "id"


def test_document_without_front_matter_uses_h1_and_file_stem(tmp_path):
    src = read_source(_write(tmp_path, "My Doc.md", "# Judul Dokumen\n\nIsi dokumen pajak di sini.\n"))
    assert src.document.title == "Judul Dokumen"
    assert src.document.doc_id == "my-doc"
    assert src.document.authority == "unknown"
    assert src.body_start == 0


def test_crlf_and_form_feed_offsets_stay_exact(tmp_path):
    text = ("---\r\nid: crlf\r\n---\r\nBAB I\r\nUMUM\r\n\r\nPasal 1\r\n(1) Pajak yang terutang wajib disetor ke kas "
            "negara.\r\n(2) Pelaporan dilakukan setiap bulan oleh pemotong.\r\n\x0c\r\nPasal 2\r\nPeraturan ini "
            "mulai berlaku sejak tanggal diundangkan.\r\n")
    src, chunks = _chunk_file(_write(tmp_path, "crlf.md", text))
    _assert_exact(src, chunks)
    assert [c.location for c in chunks] == ["Pasal 1", "Pasal 2"]
    p1 = chunks[0]
    assert [p1.text[s.start:s.end] for s in p1.spans] == [
        "(1) Pajak yang terutang wajib disetor ke kas negara.",
        "(2) Pelaporan dilakukan setiap bulan oleh pemotong."]


def _long_pasal_text() -> str:
    ayat = []
    for i in range(1, 7):
        ayat.append(f"({i}) " + " ".join(
            f"Wajib Pajak kategori {i} menyetor pajak bagian {j} sesuai ketentuan." for j in range(5)))
    return ("BAB I\nKETENTUAN\n\nPasal 1\nDalam peraturan ini yang dimaksud dengan pajak adalah iuran wajib.\n\n"
            "Pasal 7\n" + "\n".join(ayat) + "\n\nPasal 8\nPeraturan ini mulai berlaku pada tanggal diundangkan.\n")


@pytest.mark.parametrize("max_chars", [400, 700, 1000])
def test_long_pasal_is_split_at_ayat_boundaries(tmp_path, max_chars):
    text = _long_pasal_text()
    src, chunks = _chunk_file(_write(tmp_path, "long.md", text), max_chars=max_chars)
    _assert_exact(src, chunks)
    assert all(len(c.text) <= max_chars for c in chunks)
    p7 = [c for c in chunks if c.location.startswith("Pasal 7")]
    assert len(p7) >= 2
    # every piece starts at the Pasal heading or at an ayat marker, never mid-ayat
    assert p7[0].text.startswith("Pasal 7\n(1)")
    for c in p7[1:]:
        assert re.match(r"\(\d\) Wajib Pajak kategori \d", c.text), c.text[:40]
        assert "bagian" not in c.location  # ayat boundaries sufficed; no sentence split
    # all six ayat are covered, each exactly once, and labels name them
    labels = [s.label for c in p7 for s in c.spans]
    assert labels == [f"Pasal 7 ayat ({i})" for i in range(1, 7)]
    for c in p7:
        assert c.location.startswith("Pasal 7 ayat (")
    # the pieces together hold the whole Pasal
    joined = "".join("".join(c.text.split()) for c in p7)
    start = text.index("Pasal 7")
    end = text.index("\n\nPasal 8")
    assert joined == "".join(text[start:end].split())
    assert {c.location for c in chunks} >= {"Pasal 1", "Pasal 8"}


def test_grouped_ayat_location_names_the_range(tmp_path):
    _, chunks = _chunk_file(_write(tmp_path, "long.md", _long_pasal_text()), max_chars=700)
    p7 = [c for c in chunks if c.location.startswith("Pasal 7")]
    multi = [c for c in p7 if len(c.spans) > 1]
    assert multi, "with max_chars=700 two ayat fit per piece"
    for c in multi:
        first = c.spans[0].label[c.spans[0].label.rfind("("):]
        last = c.spans[-1].label[c.spans[-1].label.rfind("("):]
        assert c.location == f"Pasal 7 ayat {first}–{last}"


def test_long_pasal_without_ayat_is_split_at_sentences(tmp_path):
    body = " ".join(f"Kalimat nomor {j} menjelaskan ketentuan pajak yang berlaku." for j in range(40))
    text = "Pasal 9\n" + body + "\n"
    src, chunks = _chunk_file(_write(tmp_path, "noayat.md", text), max_chars=400)
    _assert_exact(src, chunks)
    assert len(chunks) >= 4
    assert all(len(c.text) <= 400 for c in chunks)
    n = len(chunks)
    assert [c.location for c in chunks] == [f"Pasal 9 (bagian {i}/{n})" for i in range(1, n + 1)]
    for c in chunks:
        assert c.text.endswith("berlaku.")  # cut between sentences only


def test_single_overlong_sentence_is_still_capped(tmp_path):
    body = " ".join(["ketentuan"] * 400)  # one sentence, ~4000 chars, no punctuation
    text = "Pasal 4\n" + body + "\n"
    src, chunks = _chunk_file(_write(tmp_path, "huge.md", text), max_chars=500)
    _assert_exact(src, chunks)
    assert chunks and all(len(c.text) <= 500 for c in chunks)
    assert sum(c.text.count("ketentuan") for c in chunks) == 400


# --------------------------------------------------------------------------- standards


def test_standard_numbered_paragraphs(tmp_path):
    src, chunks = _chunk_file(_write(tmp_path, "psak.md", STANDARD))
    _assert_exact(src, chunks)
    by_loc = {c.location: c for c in chunks}
    assert list(by_loc) == ["paragraf 1", "paragraf 2", "paragraf 3", "paragraf 12", "paragraf 13",
                            "paragraf B1", "paragraf 5.5.1"]
    assert by_loc["paragraf 12"].text == "12. Entitas mengukur pendapatan sebesar harga transaksi."
    assert by_loc["paragraf B1"].text.startswith("B1. Pedoman ini")
    assert by_loc["paragraf 2"].text.endswith("menjelaskan pengalihan.")  # continuation line joins its paragraph
    assert by_loc["paragraf 12"].heading == "PSAK Uji Pendapatan › Ruang Lingkup"
    assert by_loc["paragraf B1"].heading == "PSAK Uji Pendapatan › Lampiran B Pedoman Penerapan"
    assert src.document.title == "PSAK Uji Pendapatan"


def test_standard_examples_are_flagged(tmp_path):
    _, chunks = _chunk_file(_write(tmp_path, "psak.md", STANDARD))
    ex = {c.location: c.is_example for c in chunks}
    assert ex["paragraf 3"] is True      # paragraph beginning "Contoh"
    assert ex["paragraf 13"] is True     # under a "## Contoh ..." heading
    assert ex["paragraf 1"] is False
    assert ex["paragraf 2"] is False
    assert ex["paragraf 12"] is False
    assert ex["paragraf B1"] is False    # a later, non-example section resets the flag


def test_english_standard_labels_and_examples(tmp_path):
    text = ("---\nlang: en\n---\n# IFRS Test\n\n## Scope\n\n"
            "1. This Standard applies to all contracts with customers.\n\n"
            "## Illustrative Examples\n\n"
            "IE1. An entity sells a machine to a customer on 1 January.\n")
    _, chunks = _chunk_file(_write(tmp_path, "ifrs.md", text))
    assert [(c.location, c.is_example) for c in chunks] == [("paragraph 1", False), ("paragraph IE1", True)]


def test_unnumbered_block_beginning_contoh_is_example(tmp_path):
    first = "Panduan ini menjelaskan perlakuan pajak atas sewa tanah dan bangunan yang diterima oleh Wajib Pajak " \
            "badan maupun orang pribadi di dalam negeri."
    text = f"# Panduan\n\n{first}\n\nContoh 1: PT A membayar sewa gedung Rp100.000.000 kepada PT B.\n"
    src, chunks = _chunk_file(_write(tmp_path, "g.md", text), max_chars=200)
    _assert_exact(src, chunks)
    assert [c.text[:7] for c in chunks] == ["Panduan", "Contoh "]
    assert [c.is_example for c in chunks] == [False, True]


def test_packed_contoh_block_keeps_example_flag(tmp_path):
    text = ("# Panduan\n\nPanduan ini menjelaskan perlakuan pajak atas sewa.\n\n"
            "Contoh 1: PT A membayar sewa gedung Rp100.000.000 kepada PT B.\n")
    _, chunks = _chunk_file(_write(tmp_path, "g.md", text))
    example_text = [c for c in chunks if "Contoh 1" in c.text]
    assert example_text and all(c.is_example for c in example_text)
    assert all(not c.is_example for c in chunks if "Panduan ini" in c.text)


# --------------------------------------------------------------------------- ids


def test_chunk_ids_are_stable_and_follow_text(tmp_path):
    p = _write(tmp_path, "reg.md", REGULATION)
    _, a = _chunk_file(p)
    _, b = _chunk_file(p)
    assert [c.chunk_id for c in a] == [c.chunk_id for c in b]
    assert len({c.chunk_id for c in a}) == len(a)

    changed = REGULATION.replace("bersifat final", "bersifat tidak final")
    _, c2 = _chunk_file(_write(tmp_path, "reg.md", changed))
    old = {c.location: c.chunk_id for c in a}
    new = {c.location: c.chunk_id for c in c2}
    assert old.keys() == new.keys()
    assert old["Pasal 2"] != new["Pasal 2"]
    for loc in ("Pasal 1", "Pasal 3", "Penjelasan Pasal 2"):
        assert old[loc] == new[loc]  # editing one Pasal leaves the others' ids alone


def test_chunk_id_function_depends_on_every_part():
    base = chunk_id("doc", "Pasal 1", "teks")
    assert base == chunk_id("doc", "Pasal 1", "teks")
    assert len({base, chunk_id("doc2", "Pasal 1", "teks"), chunk_id("doc", "Pasal 2", "teks"),
                chunk_id("doc", "Pasal 1", "teks!")}) == 4
    # the separator keeps fields from bleeding into each other
    assert chunk_id("ab", "c", "d") != chunk_id("a", "bc", "d")


# --------------------------------------------------------------------------- reader errors


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("doc.pdf", b"%PDF-1.4", "not a readable PDF"),
        ("doc.xlsx", b"PK\x03\x04", "unsupported file type .xlsx"),
        ("noext", b"isi dokumen", "unsupported file type (none)"),
        ("bin.md", b"isi\x00\x01\x02 dokumen", "binary content"),
        ("latin1.md", "Pajak kafé".encode("latin-1"), "not UTF-8"),
        ("badyaml.md", b"---\ntitle: [unclosed\n---\nisi dokumen pajak\n", "front matter is not valid YAML"),
        ("list.md", b"---\n- a\n- b\n---\nisi dokumen\n", "must be a YAML mapping"),
        ("auth.md", b"---\nauthority: government\n---\nisi dokumen\n", "'authority'"),
        ("lang.md", b"---\nlang: fr\n---\nisi dokumen\n", "'lang'"),
        ("id.md", b"---\nid: 'bad id!'\n---\nisi dokumen\n", "'id'"),
        ("empty.md", b"---\nid: kosong\n---\n  \n\n", "no text after front matter"),
    ],
)
def test_reader_errors_are_ingest_errors_with_reasons(tmp_path, name, content, message):
    p = _write(tmp_path, name, content)
    with pytest.raises(IngestError) as ei:
        read_source(p)
    err = ei.value
    assert err.path == str(p)
    assert message in err.reason
    assert str(p) in str(err)
    assert str(err).startswith("[ingest]")


def test_invalid_authority_message_lists_allowed_values(tmp_path):
    p = _write(tmp_path, "auth.md", b"---\nauthority: government\n---\nisi dokumen\n")
    with pytest.raises(IngestError) as ei:
        read_source(p)
    assert "official" in ei.value.reason and "unknown" in ei.value.reason


def test_missing_file_is_an_ingest_error(tmp_path):
    with pytest.raises(IngestError, match="cannot read"):
        read_source(tmp_path / "absent.md")


def test_bom_is_stripped_and_front_matter_still_read(tmp_path):
    src = read_source(_write(tmp_path, "bom.md", b"\xef\xbb\xbf---\nid: bom-doc\n---\nisi dokumen pajak\n"))
    assert src.document.doc_id == "bom-doc"
    assert src.text == "isi dokumen pajak\n"


# --------------------------------------------------------------------------- expand_paths


def test_expand_paths_recurses_and_reports_missing(tmp_path):
    root = tmp_path / "corpus"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / ".hidden").mkdir()
    a = _write(root, "a.md", "isi")
    b = _write(root / "sub", "b.txt", "isi")
    c = _write(root / "sub" / "deeper", "c.markdown", "isi")
    _write(root / "sub", "skip.xlsx", "x")
    _write(root / ".hidden", "h.md", "isi")
    _write(root, "README.md", "readme")
    single = _write(tmp_path, "single.md", "isi")
    missing = tmp_path / "nope"
    empty = tmp_path / "empty"
    empty.mkdir()

    files, problems = expand_paths([root, single, missing, empty, single])
    assert files == sorted([a, b, c]) + [single]  # duplicates collapse; order of arguments kept
    reported = {pr.path: pr.reason for pr in problems}
    assert reported[str(missing)] == "no such file or directory"
    assert "no supported files" in reported[str(empty)]
    assert len(problems) == 2
    assert all(isinstance(pr, IngestError) for pr in problems)


# --------------------------------------------------------------------------- categories


@pytest.fixture(scope="module")
def tagger():
    return CategoryTagger(load_profile().categories)


def test_category_rate_from_percentage(tagger):
    tags = tagger.tag("Besarnya pajak yang dipotong adalah 10% dari jumlah bruto.")
    assert "rate" in tags
    assert "rate" not in tagger.tag("Pajak dipotong dari jumlah bruto.")


def test_category_definition_from_heading_rule(tagger):
    text = "Istilah berikut dipakai dalam peraturan ini."
    assert "definition" not in tagger.tag(text)
    assert "definition" in tagger.tag(text, heading="BAB I KETENTUAN UMUM")
    assert "definition" in tagger.tag(text, location="Definisi")


def test_category_tags_follow_configured_order_and_are_case_insensitive(tagger):
    tags = tagger.tag("PAJAK WAJIB DISETOR PALING LAMBAT TANGGAL 10 DENGAN TARIF 2%; SANKSI DENDA BERLAKU.")
    assert tags == ("rate", "deadline", "quantity", "sanction")


# --------------------------------------------------------------------------- real data


def _independent_pasal_count(raw: str) -> int:
    """Pasal headings counted from the RAW pdftotext file, differently from the cleaner and chunker:
    every line that is exactly "Pasal N" (page number glued on or not) before the explanation or
    the appendix, then the longest strictly increasing run of their numbers, which leaves out a
    wrapped reference ("… dalam\nPasal 16") and survives a heading the scan lost. An amending
    regulation counts its Roman articles (Pasal I, II)."""
    heads: list[str] = []
    for line in raw.splitlines():
        if re.match(r"^\s*(?:-\s*\d+\s*-?\s*)?(PENJELASAN|LAMPIRAN)\b", line) and heads:
            break
        m = re.match(r"^\s*(?:-\s*\d+\s*-?\s*)?Pasal\s+(\d+[A-Z]?|[IVX]+)\s*$", line)
        if m:
            heads.append(m.group(1))
    roman = [h for h in heads if re.fullmatch(r"[IVX]+", h)]
    if roman:
        return len(dict.fromkeys(roman))
    keys = [(int(re.match(r"\d+", h).group()), h.lstrip("0123456789")) for h in heads]
    tails: list[tuple[int, str]] = []
    for k in keys:
        i = bisect.bisect_left(tails, k)
        tails[i:i + 1] = [k]
    return len(tails)


def test_real_pmk_regulations_chunk_cleanly_with_every_pasal_found():
    files = sorted(require_regulations().glob("*.md"))
    assert len(files) == 16
    chunker = Chunker(1500)
    counts = {}
    for f in files:
        src = read_source(f)
        chunks = chunker.chunks(src.document, src.text, source=src)
        assert chunks, f.name
        for c in chunks:
            assert c.text == src.text[c.start:c.end], (f.name, c.location)
            assert len(c.text) <= 1500, (f.name, c.location, len(c.text))
        assert len({c.chunk_id for c in chunks}) == len(chunks), f.name
        units = {c.unit.split("#", 1)[1] for c in chunks}
        top = {u for u in units if re.fullmatch(r"Pasal \w+", u)}
        counts[f.name] = (len(top), _independent_pasal_count(f.read_text(encoding="utf-8")))
    assert all(found == expected for found, expected in counts.values()), counts
    assert sum(expected for _, expected in counts.values()) > 200  # the count itself is not vacuous


@pytest.mark.parametrize("text, expected", [
    ("Ia lahir pada 12 Mei 1990 di Surakarta.", True),
    ("Candi ini dibangun pada abad ke-9.", True),
    ("Komputer pertama muncul pada tahun 1940-an.", True),
    ("The company was founded in 1998.", True),
    ("Peraturan Pemerintah Nomor 7 Tahun 2021 tentang Kemudahan.", False),  # a reference, not a time
    ("Kabupaten terluas ke-7 di Sulawesi Tengah.", False),
])
def test_a_stated_date_is_time_evidence_but_a_regulation_number_is_not(tagger, text, expected):
    assert ("deadline" in tagger.tag(text)) is expected


@pytest.mark.parametrize("text, expected", [
    ("Kabupaten ini mempunyai luas 4275,08 km2.", True),
    ("Ia terpilih tujuh kali berturut-turut.", True),
    ("Kota ini berpenduduk sekitar sepuluh juta jiwa.", True),
    ("Donggala adalah kabupaten terluas ke-7 di Sulawesi Tengah.", False),  # an ordinal states no quantity
    ("Sebagaimana dimaksud dalam Pasal 5 ayat (2).", False),                # nor does a reference
    # a regulation's own numbering is no figure: UU 40/2004 Pasal 43, which answered "Berapa jumlah santunan
    # sekaligus …?" at TINGGI in the statute book without PP 44/2015 (issue 30), states no amount
    ("(1) Jaminan kematian diselenggarakan secara nasional berdasarkan prinsip asuransi sosial. (2) Jaminan "
     "kematian diselenggarakan dengan tujuan untuk memberikan santunan kematian.", False),
    ("1) pekerja yang bersangkutan; 2) ahli waris.", False),
    ("diatur dengan Peraturan Pemerintah. Paragraf 12 Pemberhentian", False),
    ("(1) Manfaat JKM diberikan berupa santunan sekaligus Rp16.200.000,00.", True),  # the amount, beside ayat (1)
    ("Tarif sebesar 5% dari penghasilan bruto.", True),
    ("(2) Iuran dibayar paling lambat tanggal 15 bulan berikutnya.", True),
    ("Bunga sebesar (10%) per tahun.", True),                                # a figure in brackets is still one
    ("Gedung Parlemen dibangun pada tahun (1886).", True),                   # and a year, as before
])
def test_quantity_is_a_stated_figure(tagger, text, expected):
    assert ("quantity" in tagger.tag(text)) is expected


# --------------------------------------------------------------------------- structure paths

AMENDING = """PERATURAN BUPATI UJI
NOMOR 3 TAHUN 2019
TENTANG
PERUBAHAN ATAS PERATURAN BUPATI UJI NOMOR 1 TAHUN 2018

Menimbang :
a. bahwa ketentuan tunjangan perlu disesuaikan;
b. bahwa perlu menetapkan Peraturan Bupati;
Mengingat :
1. Undang-Undang Nomor 23 Tahun 2014 tentang Pemerintahan Daerah;

Pasal I
Beberapa ketentuan dalam Peraturan Bupati Nomor 1 Tahun 2018 diubah sebagai berikut:
1. Ketentuan Pasal 4 diubah sehingga berbunyi sebagai berikut:
Pasal 4
(1) Tunjangan diberikan kepada pegawai setiap bulan.
(2) Tunjangan sebagaimana dimaksud pada ayat (1) terdiri atas:
a. tunjangan keluarga; dan
b. tunjangan jabatan, yang meliputi:
1. jabatan struktural; dan
2. jabatan fungsional.
2. Ketentuan Pasal 6 dihapus.
Pasal II
Peraturan Bupati ini mulai berlaku pada tanggal diundangkan.
Agar setiap orang mengetahuinya, memerintahkan pengundangan Peraturan Bupati ini.
"""


def test_spans_nest_huruf_and_angka_and_amended_articles_sit_under_their_instruction(tmp_path):
    src, chunks = _chunk_file(_write(tmp_path, "perbup-uji.md", AMENDING))
    _assert_exact(src, chunks)
    by_loc = {c.location: c for c in chunks}
    assert {"Menimbang", "Pasal I", "Pasal I angka 1", "Pasal I angka 1 › Pasal 4", "Pasal I angka 2", "Pasal II",
            "penutup"} <= set(by_loc)
    assert [s.label for s in by_loc["Menimbang"].spans] == ["Menimbang huruf a", "Menimbang huruf b"]
    quoted = by_loc["Pasal I angka 1 › Pasal 4"]
    labels = [s.label for s in quoted.spans]
    base = "Pasal I angka 1 › Pasal 4 ayat (2)"
    assert labels == ["Pasal I angka 1 › Pasal 4 ayat (1)", base, f"{base} huruf a", f"{base} huruf b",
                      f"{base} huruf b angka 1", f"{base} huruf b angka 2"]
    spans = {s.label: quoted.text[s.start:s.end] for s in quoted.spans}
    assert spans[f"{base} huruf b"].startswith("b. tunjangan jabatan") and spans[f"{base} huruf b"].endswith(
        "2. jabatan fungsional.")  # an open huruf runs over its angka
    assert spans[base].endswith("jabatan fungsional.")
    assert cite_path(quoted, f"{base} huruf b angka 2") == (
        "Perbup Uji 3/2019 › Pasal I › angka 1 › Pasal 4 › ayat (2) › huruf b › angka 2")
    assert "Pasal 4" not in by_loc  # the quoted article is not this regulation's own Pasal 4


# the enacting formula run on into the first article, after the last consideration, on one line (UU 45/2009's scan;
# the backslashes join the source's lines here)
RUN_IN = """UNDANG-UNDANG REPUBLIK INDONESIA NOMOR 45 TAHUN 2039 TENTANG PERUBAHAN ATAS UNDANG-UNDANG NOMOR 31 TAHUN 2034
Menimbang :
a. bahwa pengelolaan perikanan percobaan perlu disesuaikan;
Mengingat :
1. Undang-Undang Nomor 31 Tahun 2034 tentang Perikanan Percobaan;
 Pasal 20 Undang-Undang Dasar; Dengan Persetujuan Bersama M E M U T U S K A N: Menetapkan : UNDANG-UNDANG TENTANG \
PERUBAHAN ATAS UNDANG-UNDANG NOMOR 31 TAHUN 2034 TENTANG PERIKANAN PERCOBAAN. PASAL I Beberapa ketentuan dalam \
Undang-Undang Nomor 31 Tahun 2034 tentang Perikanan Percobaan diubah sebagai berikut:
1. Ketentuan Pasal 1 diubah sehingga Pasal 1 berbunyi sebagai berikut:
Pasal 1
Dalam Undang-Undang ini yang dimaksud dengan:
1. Penangkapan ikan percobaan adalah kegiatan untuk memperoleh ikan percobaan di perairan.
Pasal II
Undang-Undang ini mulai berlaku pada tanggal diundangkan.
"""


@pytest.mark.parametrize("article, own", [("PASAL I", "Pasal I angka 1 › Pasal 1"), ("Pasal 1", "Pasal 1")])
def test_an_enacting_formula_run_on_into_the_first_article_starts_that_article(tmp_path, article, own):
    """The scan runs "… Menetapkan : UNDANG-UNDANG TENTANG …. PASAL I Beberapa ketentuan …" on one line: the
    article starts there (named "Pasal I" whatever the scan's case, its quote the scan's own words), so an amending
    law's restated Pasal sits under its instruction, and a law's own Pasal 1 is cited as Pasal 1, not as
    "Menetapkan"."""
    text = RUN_IN.replace("PASAL I", article)
    if article == "Pasal 1":  # a law of its own: its first article defines, no instruction around it
        text = text.replace("1. Ketentuan Pasal 1 diubah sehingga Pasal 1 berbunyi sebagai berikut:\nPasal 1\n", "")
    src, chunks = _chunk_file(_write(tmp_path, "uu-45-2039.md", text))
    _assert_exact(src, chunks)
    by_loc = {c.location: c for c in chunks}
    assert by_loc["Mengingat"].text.endswith("M E M U T U S K A N:")
    assert by_loc["Menetapkan"].text.endswith("TENTANG PERIKANAN PERCOBAAN.")
    first = by_loc["Pasal I" if article == "PASAL I" else "Pasal 1"]
    assert first.text.startswith(f"{article} Beberapa ketentuan")
    assert "Penangkapan ikan percobaan adalah" in by_loc[own].text
    assert not any(loc.startswith("Menetapkan ") for loc in by_loc)  # no article read as the formula's list


def test_an_enacting_formula_naming_an_instrument_by_its_number_still_starts_the_first_article(tmp_path):
    """A 1950s law that makes an emergency law a law names it by number in its formula ("… DARURAT NO. 17 TAHUN 2031
    … (STAATSBLAD UNTUK 2030 No. 12) …", UU 1/1953's and UU 18/1954's scans): the abbreviation's stop does not end the
    formula, so its Pasal I starts there and the emergency law's articles it restates sit under it."""
    formula = ("Menetapkan : UNDANG-UNDANG TENTANG PENETAPAN \"UNDANG- UNDANG DARURAT NO. 17 TAHUN 2031 MENGENAI "
               "PENIMBUNAN BARANG PERCOBAAN\" (STAATSBLAD UNTUK 2030 No. 12) SEBAGAI UNDANG- UNDANG. PASAL I Peraturan-"
               "peraturan termaktub dalam Undang-undang Darurat tersebut diubah/ditambah, sehingga berbunyi sebagai "
               "berikut:\nPasal 1\nBarang percobaan dalam Undang-undang ini ialah barang yang ditunjuk oleh Menteri.\n"
               "PASAL II\nUndang-undang ini mulai berlaku pada hari diundangkan.\n")
    text = RUN_IN.split(" Menetapkan :")[0] + " " + formula
    src, chunks = _chunk_file(_write(tmp_path, "uu-1-2039.md", text))
    _assert_exact(src, chunks)
    by_loc = {c.location: c for c in chunks}
    assert by_loc["Menetapkan"].text.endswith("SEBAGAI UNDANG- UNDANG.")
    assert by_loc["Pasal I"].text.startswith("PASAL I Peraturan-peraturan termaktub")
    assert "Barang percobaan dalam Undang-undang ini" in by_loc["Pasal I › Pasal 1"].text
    # another stop followed by a space inside the line is still no formula's end: the line is read as before
    other = text.replace("(STAATSBLAD UNTUK 2030 No. 12)", "(STAATSBLAD UNTUK 2030. 12)")
    _, chunks = _chunk_file(_write(tmp_path, "uu-2-2039.md", other))
    assert "Pasal I" not in {c.location for c in chunks}


def test_a_quote_is_cited_to_the_innermost_span_holding_all_of_it(tmp_path):
    _, chunks = _chunk_file(_write(tmp_path, "perbup-uji.md", AMENDING))
    quoted = next(c for c in chunks if c.location == "Pasal I angka 1 › Pasal 4")
    at = quoted.text.index("jabatan struktural")
    assert cited_location(quoted, (at, at + 10)).endswith("huruf b angka 1")
    across = quoted.text.index("tunjangan keluarga")
    assert cited_location(quoted, (across, quoted.text.index("fungsional"))).endswith("Pasal 4 ayat (2)")


def test_english_regulation_headings_and_levels(tmp_path):
    text = ("---\nlang: en\n---\nREGULATION OF THE MINISTER OF FINANCE NUMBER 7 OF 2024 CONCERNING TEST DUTIES\n\n"
            "CHAPTER II\nRATES\n\nPart One\nImport Duty\n\nArticle 2\n(1) The test duty is 5% of the customs value.\n"
            "(2) The duty referred to in paragraph (1) is payable on:\na. goods imported by sea; and\n"
            "b. goods imported by air.\n\nELUCIDATION\nArticle 2\nSufficiently clear.\n")
    src, chunks = _chunk_file(_write(tmp_path, "en.md", text))
    art = next(c for c in chunks if c.location == "Article 2")
    assert [s.label for s in art.spans][-1] == "Article 2 paragraph (2) letter b"
    assert cite_path(art, "Article 2 paragraph (2) letter b") == (
        "PMK 7/2024 › CHAPTER II RATES › Part One › Article 2 › paragraph (2) › letter b")
    assert any(c.location == "Explanation Article 2" for c in chunks)


def test_standard_paragraphs_appendix_and_examples_get_paths(tmp_path):
    text = ("# PSAK 99 Sewa Uji\n\n## Ruang lingkup\n\n31. Entitas menerapkan standar ini untuk semua sewa.\n\n"
            "PP5. Entitas tidak menerapkan pengecualian praktis ini untuk sewa jangka pendek.\n\n"
            "## Lampiran B Pedoman Penerapan\n\nB12. Entitas mempertimbangkan seluruh fakta yang relevan.\n\n"
            "## Contoh Ilustratif\n\nContoh 1: Entitas A menyewa gedung selama lima tahun.\n")
    src, chunks = _chunk_file(_write(tmp_path, "psak-99.md", text))
    paths = {cite_path(c): c for c in chunks}
    assert set(paths) == {"PSAK 99 › Ruang lingkup › paragraf 31", "PSAK 99 › Ruang lingkup › paragraf PP5",
                          "PSAK 99 › Lampiran B Pedoman Penerapan › paragraf B12", "PSAK 99 › Contoh Ilustratif"}
    assert paths["PSAK 99 › Contoh Ilustratif"].is_example
    assert not paths["PSAK 99 › Ruang lingkup › paragraf 31"].is_example


def test_quote_pages_follow_the_page_breaks_inside_a_chunk():
    c = Chunk(chunk_id="c", doc_id="d", title="t", location="Pasal 6", text="a" * 100, lang="id", unit="d#Pasal 6",
              ordinal=0, start=0, end=100, page=(3, 4), page_breaks=(60,))
    assert quote_pages(c, (0, 30)) == (3, 3)
    assert quote_pages(c, (50, 70)) == (3, 4)
    assert quote_pages(c, (60, 90)) == (4, 4)
    assert quote_pages(c, None) == (3, 4)


def test_an_explained_pasal_cites_its_ayat_huruf_and_angka(tmp_path):
    text = (REGULATION + "Ayat (2)\nCukup jelas.\nPasal 3\nAyat (1)\nHuruf a\n"
            "Yang dimaksud dengan pemotong adalah pemberi kerja.\n")
    _, chunks = _chunk_file(_write(tmp_path, "reg.md", text))
    p2 = next(c for c in chunks if c.location == "Penjelasan Pasal 2")
    assert [s.label for s in p2.spans] == ["Penjelasan Pasal 2 ayat (1)", "Penjelasan Pasal 2 ayat (2)"]
    assert p2.text[p2.spans[0].start:p2.spans[0].end].startswith("Ayat (1)\nYang dimaksud dengan jumlah bruto")
    p3 = next(c for c in chunks if c.location == "Penjelasan Pasal 3")
    assert [s.label for s in p3.spans] == ["Penjelasan Pasal 3 ayat (1)", "Penjelasan Pasal 3 ayat (1) huruf a"]
    assert cite_path(p3, p3.spans[-1].label).endswith("PENJELASAN › Penjelasan Pasal 3 › ayat (1) › huruf a")
