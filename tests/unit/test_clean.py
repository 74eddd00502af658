"""Cleaning extracted regulation text: furniture out, structure on its own lines, numbers back
where they belong, and every character still traceable to the source."""
from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from pipeline.ingest.clean import CleanText, clean_text, looks_extracted

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PMK = Path(os.environ.get("SAKSI_SHARED_DATA", ROOT.parent / "shared" / "data")) / "regulations" / "pmk"

PSAK = """# PSAK 73: Sewa

## Tujuan

01. Pernyataan ini menetapkan prinsip pengakuan, pengukuran, penyajian, dan
pengungkapan atas sewa.

02. Entitas mempertimbangkan persyaratan kontrak dan seluruh fakta dan keadaan
yang relevan ketika menerapkan Pernyataan ini.

## Ruang Lingkup

- Sewa aset biologis dalam ruang lingkup PSAK 69.
- Perjanjian konsesi jasa.

| Paragraf | Isi |
|---|---|
| 03 | Entitas menerapkan Pernyataan ini untuk seluruh sewa. |
"""


def _body(path: Path) -> str:
    """The converted file without its Markdown header block (the caller strips it in the pipeline)."""
    text = path.read_text(encoding="utf-8")
    _, sep, rest = text.partition("\n---\n")
    return rest if sep else text


@pytest.fixture(scope="module")
def sources() -> dict[str, str]:
    files = sorted(PMK.glob("pmk-*.md"))
    if len(files) != 16:
        pytest.fail(f"expected the 16 PMK texts in {PMK}, found {len(files)}; set SAKSI_SHARED_DATA to the shared data")
    return {f.name: _body(f) for f in files}


@pytest.fixture(scope="module")
def cleaned(sources) -> dict[str, CleanText]:
    return {name: clean_text(src) for name, src in sources.items()}


def _lines(clean: CleanText) -> list[str]:
    return clean.text.split("\n")


def _assert_traceable(src: str, clean: CleanText) -> None:
    """Segments tile the clean text in order; each character is copied, or is a line break shown as space/newline."""
    pos = 0
    for c, s, n in clean.segments:
        assert c == pos, f"gap or overlap at clean offset {pos}"
        piece, orig = clean.text[c : c + n], src[s : s + n]
        assert len(orig) == n, f"segment {c, s, n} runs past the source"
        for k, (a, b) in enumerate(zip(piece, orig)):
            assert a == b or (a in " \n" and b in "\n\f"), f"clean {c + k} {a!r} is not source {s + k} {b!r}"
        pos += n
    assert pos == len(clean.text)


# --------------------------------------------------------------------------- authored text


def test_authored_markdown_is_returned_unchanged():
    assert not looks_extracted(PSAK)
    clean = clean_text(PSAK)
    assert clean.text == PSAK
    assert clean.segments == ((0, 0, len(PSAK)),)
    assert clean.pages == () and clean.page_of(10) is None
    assert [clean.source_offset(i) for i in (0, 17, len(PSAK) - 1)] == [0, 17, len(PSAK) - 1]
    assert clean_text(PSAK, extracted=False).text == PSAK


@pytest.mark.parametrize("path", sorted((ROOT / "corpus" / "sample").glob("*.md")), ids=lambda p: p.name)
def test_authored_sample_corpus_is_not_taken_for_extracted_text(path):
    text = path.read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text  # without front matter
    assert not looks_extracted(body)
    assert clean_text(body).text == body


def test_authored_text_keeps_form_feed_pages():
    text = "Bab satu.\n\fBab dua.\n\fBab tiga.\n"
    clean = clean_text(text, extracted=False)
    assert clean.text == text
    assert clean.pages == (11, 21)
    assert [clean.page_of(i) for i in (0, 11, 25)] == [1, 2, 3]


def test_every_pmk_file_looks_extracted(sources):
    assert [name for name, src in sources.items() if not looks_extracted(src)] == []


# --------------------------------------------------------------------------- the map


def test_every_segment_maps_exactly(sources, cleaned):
    for name, src in sources.items():
        _assert_traceable(src, cleaned[name])


def test_moved_marker_maps_to_where_it_was_extracted(sources, cleaned):
    src, clean = sources["pmk-098-2025.md"], cleaned["pmk-098-2025.md"]
    at = clean.text.index("(1) Importir wajib")
    origin = clean.source_offset(at)
    assert src[origin : origin + 3] == "(1)"
    assert origin < src.index("Importir wajib")  # extracted in the marker column before Pasal 5
    words = clean.text.index("Importir wajib")
    assert src[slice(*clean.source_span(words, words + len("Importir wajib")))] == "Importir wajib"
    lo, hi = clean.source_span(at, words + len("Importir wajib"))
    assert src[lo:hi] == "Importir wajib"  # a span over text in place leaves the moved marker out


# --------------------------------------------------------------------------- pmk-098


def test_pmk098_headings_and_page_numbers(cleaned):
    clean = cleaned["pmk-098-2025.md"]
    lines = _lines(clean)
    assert "Pasal 3" in lines
    assert not [line for line in lines if re.match(r"-\s*\d+", line) or re.fullmatch(r"-\s*\d+\s*-", line)]
    assert clean.page_of(clean.text.index("\nPasal 3\n") + 1) == 3
    assert clean.page_of(0) == 1
    assert clean.stats["page_numbers"] == 8
    assert clean.stats["stray_glyphs"] == 3  # the "Д", "Ѽ", "Ж" signature stamps
    assert not {"Д", "Ѽ", "Ж"} & set(lines)


def test_pmk098_ayat_numbers_reattached(cleaned):
    lines = _lines(cleaned["pmk-098-2025.md"])
    pasal6 = lines[lines.index("Pasal 6") + 1 :]
    openings = ["Importir wajib", "Dalam hal importir", "Ketentuan asal barang", "Penelitian terhadap", "Dalam hal importir"]
    for k, opening in enumerate(openings, 1):
        assert any(line.startswith(f"({k}) {opening}") for line in pasal6[:12]), opening
    pasal5 = lines[lines.index("Pasal 5") + 1 :]
    assert pasal5[0].startswith("(1) Bea Masuk Tindakan Pengamanan sebagaimana dimaksud dalam Pasal 2")
    assert pasal5[1].startswith("(2) Pengenaan Bea Masuk")
    assert pasal5[2] == "Pasal 6"


def test_pmk098_preamble_clauses_lettered_and_numbered(cleaned):
    lines = _lines(cleaned["pmk-098-2025.md"])
    clauses = ("a. bahwa Indonesia", "b. bahwa berdasarkan", "c. bahwa hasil", "d. bahwa berdasarkan pertimbangan")
    for opening in clauses:
        assert any(line.startswith(opening) for line in lines), opening
    start = lines.index("Mengingat :")
    assert lines[start + 1].startswith("1. Pasal 17 ayat (3)")
    assert [line[:2] for line in lines[start + 1 : start + 9] if line] == ["1.", "2.", "3.", "4.", "5.", "6.", "ME"]


def test_pmk098_keeps_every_word_in_order(sources, cleaned):
    """Every word of the raw body survives in order, except page numbers, stamps and moved numbers/labels."""
    src = sources["pmk-098-2025.md"]
    raw: list[str] = []
    for line in src.split("\n"):
        line = re.sub(r"^\f-\s*\d", "", line.strip(" \t\r")).strip()  # page number glued to a page's first line
        if re.fullmatch(r"-\s*\d+\s*-|[^\x00-\x7f]", line):
            continue
        raw.extend(line.split())
    clean_words = cleaned["pmk-098-2025.md"].text.split()
    assert _content(clean_words) == _content(raw)
    assert Counter(clean_words) - Counter(raw) == Counter()  # nothing invented


def _content(words: list[str]) -> list[str]:
    marker = re.compile(r":?(\(\d+\)|[a-z]\.|\d+\.)")
    return [w for w in words if not marker.fullmatch(w) and w not in {"Mengingat", ":"}]


# --------------------------------------------------------------------------- Pasal headings


def _expected_pasal_count(raw: str) -> int:
    """Count Pasal headings in the raw text by numbering alone, independently of the cleaner.

    A line "Pasal N" (after a glued page number) counts when N is the next number, allowing
    one lost heading (OCR) and letter suffixes; after an amending "Pasal I" any higher number
    counts (amended articles are quoted out of sequence).
    """
    count, prev, roman, amending = 0, None, 0, False
    romans = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5}
    for line in raw.replace("\f", "").split("\n"):
        m = re.fullmatch(r"(?:-\s*\d+\s*-?\s*)?Pasal (\d+)([A-Z]?)|Pasal (I{1,3}|IV|V)", line.strip())
        if not m:
            continue
        if m.group(3):
            if romans[m.group(3)] == roman + 1:
                count, roman, prev, amending = count + 1, roman + 1, None, roman == 0
            continue
        key = (int(m.group(1)), m.group(2))
        if prev is None:
            ok = amending or key[0] <= 2
        elif amending:
            ok = key > prev
        else:
            ok = key[0] in (prev[0] + 1, prev[0] + 2) or (key[0] == prev[0] and key[1] > prev[1])
        if ok:
            count, prev = count + 1, key
    return count


def test_pasal_headings_match_an_independent_count(sources, cleaned):
    heading = re.compile(r"Pasal (\d+[A-Z]?|[IVXL]+)")
    got = {name: sum(bool(heading.fullmatch(line)) for line in _lines(c)) for name, c in cleaned.items()}
    expected = {name: _expected_pasal_count(src) for name, src in sources.items()}
    assert got == expected
    assert got["pmk-098-2025.md"] == 9 and got["pmk-119-2025.md"] == 64 and got["pmk-096-2025.md"] == 12
    assert all(cleaned[name].stats["pasal_headings"] == n for name, n in got.items())


def test_wrapped_references_are_not_headings(cleaned):
    continues = re.compile(
        r"(?:\b(?:dalam|pada|dan|atau|dengan|oleh|sebagaimana|dimaksud|terhadap|tentang|ke|di|sampai|huruf|angka|ayat)|,)$"
    )
    for name, clean in cleaned.items():
        lines = _lines(clean)
        for before, line in zip(lines, lines[1:]):
            assert not re.fullmatch(r"Pasal \d+[A-Z]? ayat \(\d+[a-z]?\)\W*", line), (name, line)
            if re.match(r"Pasal \d+", line):
                assert not continues.search(before), (name, before, line)


# --------------------------------------------------------------------------- synthetic cases


def test_dehyphenation_drops_line_end_hyphens_but_keeps_reduplication():
    src = (
        "Pasal 1\nImportir menyampaikan dokumen pemberi-\ntahuan pabean sesuai ketentuan\n"
        "peraturan perundang-\nundangan dan Undang-\nUndang yang masing-\nmasing berlaku.\n"
    )
    clean = clean_text(src, extracted=True)
    assert clean.text.split("\n")[1] == (
        "Importir menyampaikan dokumen pemberitahuan pabean sesuai ketentuan peraturan perundang-undangan "
        "dan Undang-Undang yang masing-masing berlaku."
    )
    assert clean.stats["hyphenations"] == 1 and clean.stats["hyphens_kept"] == 3
    _assert_traceable(src, clean)


def test_running_headers_and_page_numbers_removed_with_form_feed_pages():
    pages = [
        "SALINAN\nPasal 1\nWajib Pajak menyampaikan laporan\nsetiap bulan.\nwww.jdih.kemenkeu.go.id\n",
        "SALINAN\n- 2 -\nPasal 2\nLaporan disampaikan secara\nelektronik.\nwww.jdih.kemenkeu.go.id\n",
        "SALINAN\n-3Pasal 3\nPembetulan laporan dapat\ndilakukan.\nwww.jdih.kemenkeu.go.id\n",
        "SALINAN\n-4-\nPasal 4\nPeraturan ini berlaku sejak\ndiundangkan.\nwww.jdih.kemenkeu.go.id\n",
    ]
    src = "\f".join(pages)
    clean = clean_text(src)
    assert clean.text.split("\n") == [
        "Pasal 1", "Wajib Pajak menyampaikan laporan setiap bulan.",
        "Pasal 2", "Laporan disampaikan secara elektronik.",
        "Pasal 3", "Pembetulan laporan dapat dilakukan.",
        "Pasal 4", "Peraturan ini berlaku sejak diundangkan.",
    ]  # fmt: skip
    assert clean.stats["running_headers"] == 8 and clean.stats["page_numbers"] == 3
    assert [clean.page_of(clean.text.index(f"Pasal {k}")) for k in (1, 2, 3, 4)] == [1, 2, 3, 4]
    _assert_traceable(src, clean)


def test_page_numbers_mark_pages_when_form_feeds_are_lost():
    src = "Pasal 1\nSatu ketentuan\nyang panjang.\n\n- 2 -\nPasal 2\nDua ketentuan.\n\n-3Pasal 3\nTiga ketentuan.\n"
    clean = clean_text(src, extracted=True)
    assert clean.text.split("\n") == [
        "Pasal 1", "Satu ketentuan yang panjang.", "", "Pasal 2", "Dua ketentuan.", "", "Pasal 3", "Tiga ketentuan.",
    ]  # fmt: skip
    assert [clean.page_of(clean.text.index(f"Pasal {k}")) for k in (1, 2, 3)] == [1, 2, 3]
    footers = "Pasal 1\nSatu.\nHalaman 1 dari 3\nPasal 2\nDua.\nHalaman 2 dari 3\nPasal 3\nTiga.\nHalaman 3 dari 3\n"
    clean = clean_text(footers, extracted=True)
    assert clean.text == "Pasal 1\nSatu.\nPasal 2\nDua.\nPasal 3\nTiga."
    assert [clean.page_of(clean.text.index(f"Pasal {k}")) for k in (1, 2, 3)] == [1, 2, 3]


@pytest.mark.parametrize("name", ["pmk-098-2025.md", "pmk-112-2025.md", "pmk-119-2025.md"])
def test_lost_form_feeds_give_the_same_pages_from_page_numbers(sources, cleaned, name):
    without = clean_text(sources[name].replace("\f", ""))
    assert without.text == cleaned[name].text
    assert without.pages == cleaned[name].pages


def test_detached_ayat_numbers_attach_when_counts_agree():
    src = (
        "Pasal 1\nKetentuan umum berlaku.\n(1)\n\n(2)\n\n"
        "Pasal 2\nImportir wajib\nmelapor.\nLaporan disampaikan\nsecara elektronik.\n"
    )
    clean = clean_text(src, extracted=True)
    assert clean.text.split("\n")[-2:] == ["(1) Importir wajib melapor.", "(2) Laporan disampaikan secara elektronik."]
    assert clean.stats["markers_reattached"] == 2 and clean.stats["markers_unplaced"] == 0
    _assert_traceable(src, clean)


def test_detached_numbers_are_dropped_not_guessed_when_counts_differ():
    src = (
        "Pasal 1\nKetentuan umum berlaku.\n(1)\n\n(2)\n\n(3)\n\n"
        "Pasal 2\nImportir wajib\nmelapor.\nLaporan disampaikan\nsecara elektronik.\n"
    )
    clean = clean_text(src, extracted=True)
    assert clean.stats["markers_unplaced"] == 3 and clean.stats["markers_reattached"] == 0
    assert clean.text.split("\n")[-3:] == [
        "Pasal 2", "Importir wajib melapor.",
        "Laporan disampaikan secara elektronik.",
    ]
    assert "(" not in clean.text
    _assert_traceable(src, clean)


def test_reference_wrap_is_joined_not_a_heading():
    src = (
        "Pasal 1\nKetentuan sebagaimana dimaksud dalam\nPasal 16\nberlaku.\n"
        "Pasal 2\nDenda sebagaimana dimaksud pada\nayat\n(1) dikenakan.\n"
    )
    clean = clean_text(src, extracted=True)
    assert clean.text.split("\n") == [
        "Pasal 1", "Ketentuan sebagaimana dimaksud dalam Pasal 16 berlaku.",
        "Pasal 2", "Denda sebagaimana dimaksud pada ayat (1) dikenakan.",
    ]  # fmt: skip
    assert clean.stats["pasal_headings"] == 2 and clean.stats["pasal_references"] == 1


def test_cleaning_is_deterministic(sources):
    src = sources["pmk-099-2025.md"]
    assert clean_text(src) == clean_text(src)
