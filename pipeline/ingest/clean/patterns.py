"""The patterns cleaning reads extracted text with: page furniture, regulation structure (Pasal, BAB, ayat and
list markers), amendment and closing formulas."""
from __future__ import annotations

import re

_PAGE_LINE = re.compile(r"-\s*\d{1,4}\s*-|(?:Halaman|Hal\.|Page)\s*\d{1,4}(?:\s*(?:dari|of|/)\s*\d{1,4})?", re.I)
_PAGE_PREFIX = re.compile(r"-\s*(\d{1,5})")
_PAGE_PREFIX_TAIL = re.compile(r"\s*-?\s*")
_BARE_NUMBER = re.compile(r"\d{1,4}")
_DIGITS = re.compile(r"\d+")
_CATCHWORD = re.compile(r"(.*\S)\s*(?:\.{3,}|…)")
_GLUED_PAGE = re.compile(r"-\s?\d{1,4}\s?(?:[A-Z(]|\d{1,3}\.)")  # "-3Pasal 3", "- 24 Bagian", "-22."
_MARKDOWN = re.compile(r"#{1,6}\s|```|\|.*\|$")
_RUNS_ON = re.compile(r"[.;:,!?]$")

_MARKER_LINE = re.compile(
    r"(?:(?P<label>Menimbang|Mengingat|Memperhatikan)\s*)?(?P<colon>:)?\s*"
    r"(?P<m>\((?P<ayat>\d{1,3}[a-z]?)\)|(?P<letter>[a-z])\.|(?P<number>\d{1,3})\.)"
)
_INLINE_AYAT = re.compile(r"\((\d{1,3}[a-z]?)\)\s+\S")
_INLINE_LIST = re.compile(r"(?:(?P<letter>[a-z])|(?P<number>\d{1,3}))\.\s+\S")
_LABEL_INLINE = re.compile(
    r"(?:Menimbang|Mengingat|Memperhatikan)\s*:\s*(?:(?P<letter>[a-z])|(?P<number>\d{1,3}))\.\s+\S"
)

_PASAL = re.compile(r"Pasal\s+(?:(?P<num>\d{1,4})(?P<suffix>[A-Z]?)|(?P<roman>[IVXL]{1,6}))")
_BAB = re.compile(r"BAB\s+[IVXLC]{1,7}")
_BAGIAN = re.compile(
    r"Bagian\s+Ke[a-z]+(?:\s+(?i:belas|puluh|ratus|satu|dua|tiga|empat|lima|enam|tujuh|delapan|sembilan)){0,3}"
)
_PARAGRAF = re.compile(r"Paragraf\s+\d{1,3}[A-Z]?")
_PENJELASAN = re.compile(r"PENJELASAN\b")
_PENJELASAN_SUB = re.compile(r"Ayat\s+\(\d{1,3}[a-z]?\)|Huruf\s+[a-z]|Angka\s+\d{1,3}")
_LAMPIRAN = re.compile(r"LAMPI\s?RAN\b")
_ANNEX_TOP = re.compile(r"(?:-\s*\d+\s*-?\s*)?LAMPI\s?RAN\b")
_MEMUTUSKAN = re.compile(r"MEMUTUSKAN\s*:?")
_LABEL = re.compile(r"(?P<label>Menimbang|Mengingat|Memperhatikan|Menetapkan)\s*(?::|$)")
_AGAR = re.compile(r"Agar\s+setiap\s+orang\b")
_CLOSING = re.compile(r"(?:Ditetapkan|Diundangkan)\s+di\b")
_TITLE_BREAK = re.compile(r"PERATURAN|KEPUTUSAN|NOMOR|TENTANG|DENGAN\s*RAHMAT|SALINAN")
_DENGAN_RAHMAT = re.compile(r"DENGAN\s*RAHMAT")
# An amending regulation's instruction: "Ketentuan Pasal 14 diubah …", "Di antara Pasal 15 dan Pasal 16 disisipkan …".
_AMEND_START = re.compile(
    r"(?:\d{1,3}\.\s+)?(?:Ketentuan|Di\s?antara|Penjelasan|Lampiran|(?:Pasal|BAB)\s+\w+\s+(?:dihapus|diubah))\b"
)
_AMEND_VERB = re.compile(r"\b(?:diubah|disisipkan|dihapus|ditambahkan|ditambah|berbunyi)\b")

_LAST_WORD = re.compile(r"(\S+)$")
_ALPHA_RUN = re.compile(r"[^\W\d_]+")
_TRAILING_CLOSERS = re.compile(r"[”\"’')\]]+$")
_SENTENCE_END = re.compile(r"[.;:]$")
_ITEM_END = re.compile(r"(?:[.:;]|[;,]\s*(?:dan|atau|dan/atau|serta))$")
_LIST_LAST = re.compile(r"[;,]\s*(?:dan|atau|dan/atau|serta)$")
_HYPHENATED_END = re.compile(r"([A-Za-z]+)-$")
_LEADING_LETTERS = re.compile(r"[A-Za-z]+")

# A word at a line end that runs on into a reference ("… dimaksud dalam / Pasal 16").
_CONTINUES = frozenset(
    "dalam pada dan atau dengan oleh sebagaimana dimaksud terhadap tentang ke di sampai huruf angka ayat "
    "yakni yaitu antara dan/atau serta pph".split()
)
# A word after which "(1)", "a." or "1." is a reference, not a number ("pada ayat / (1)").
_TAKES_NUMBER = frozenset("ayat huruf angka pasal butir".split())

# Headings after which a new line starts; the other section ends only close a Pasal's body.
_HEADINGS = ("pasal", "bab", "bagian", "paragraf", "penjelasan", "lampiran", "memutuskan", "label", "sub")
_SECTION_ENDS = (*_HEADINGS, "amend", "agar", "closing")
_MARKED_ZONES = ("preamble", "body", "penjelasan")

_STATS = (
    "page_numbers running_headers stray_glyphs catchwords hyphenations hyphens_kept joined_lines "
    "markers_reattached markers_unplaced labels_moved pasal_headings pasal_references"
).split()
