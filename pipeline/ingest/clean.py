"""Clean layout noise out of extracted text, keeping a map back to where every character came from.

PDF extraction (pdftotext, pypdf) leaves page numbers glued to text, running headers, justified
text broken one word per line, hyphenated line ends, and the ayat and list numbers of a
regulation extracted as a separate column, far from the text they number. Quotes must stay
exact and citable, so cleaning never invents text: every character of the clean rendition is
copied from the source, or is a source line break shown as a space or a newline.

The map
    ``segments`` holds ``(clean_start, src_start, length)``: ``text[c:c+n]`` equals
    ``src[s:s+n]`` except that a source line break (``\\n``, or a ``\\f`` page break) may show
    as ``" "`` (joined lines) or ``"\\n"``. Segments are ordered, do not overlap and cover every
    clean character. A re-attached number is copied from where it was extracted together with
    the line break after it, which shows as the space after the number, so moved text needs no
    second kind of map; ``moved`` lists the indices of such segments, and ``source_span`` leaves
    them out of a span that also covers text in place. Deleted text (page furniture, hyphens,
    numbers that could not be placed) has no segment.

Each heuristic's docstring says where it fails.
"""
from __future__ import annotations

import bisect
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

__all__ = ["CleanText", "clean_text", "looks_extracted"]


@dataclass(frozen=True)
class CleanText:
    """A cleaned rendition of a source text and the map back to it."""

    text: str
    segments: tuple[tuple[int, int, int], ...]
    pages: tuple[int, ...] = ()
    stats: dict[str, int] = field(default_factory=dict)
    moved: tuple[int, ...] = ()

    def source_offset(self, i: int) -> int:
        """Source offset of clean offset ``i`` (for a moved number: where it was extracted)."""
        if not self.segments:
            return 0
        c, s, n = self.segments[max(bisect.bisect_right(self._starts, i) - 1, 0)]
        return s + min(max(i - c, 0), n)

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """Smallest source range holding the clean range's characters; moved numbers count only when alone."""
        lo = max(bisect.bisect_right(self._starts, start) - 1, 0)
        hi = bisect.bisect_left(self._starts, end)
        spans = [
            (k, s + max(start - c, 0), s + min(end - c, n))
            for k, (c, s, n) in enumerate(self.segments[lo:hi], lo)
            if c < end and c + n > start
        ]
        kept = [(a, b) for k, a, b in spans if k not in self._moved] or [(a, b) for _, a, b in spans]
        if not kept:
            at = self.source_offset(start)
            return at, at
        return min(a for a, _ in kept), max(b for _, b in kept)

    def page_of(self, i: int) -> int | None:
        """1-based page of clean offset ``i``; None when the source had no known page breaks."""
        if not self.pages:
            return None
        return bisect.bisect_right(self.pages, i) + 1

    @cached_property
    def _starts(self) -> list[int]:
        return [c for c, _, _ in self.segments]

    @cached_property
    def _moved(self) -> frozenset[int]:
        return frozenset(self.moved)


# --------------------------------------------------------------------------- patterns

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


# --------------------------------------------------------------------------- lines


@dataclass
class _Marker:
    """A list or ayat number extracted away from its text ("(2)", "b.", "3.")."""

    pos: int
    length: int
    kind: str                # "ayat" | "letter" | "number"
    key: tuple[int, str]     # (2, "") for "(2)" and "b.", (1, "a") for "(1a)"
    line: int
    after: int | None        # the whitespace after it, shown as the space after the moved number


@dataclass
class _Line:
    lo: int                  # content bounds in the source, surrounding whitespace excluded
    hi: int
    term: int | None         # the "\n" or "\f" ending the line
    page: int
    text: str
    role: str = "text"       # text | blank | furniture | marker | moved
    zone: str = "body"       # title | preamble | body | closing | lampiran | penjelasan
    heading: str | None = None
    inline: tuple[str, tuple[int, str]] | None = None  # the number at the line's start, if any
    marker_only: bool = False  # a number alone on its line, joined to the text on the next line
    item: bool = False       # starts an ayat or a Menimbang / Mengingat item
    title: bool = False      # a line of the title after TENTANG, joined with the next
    inserts: list[tuple[int, int, int | None, str]] = field(default_factory=list)  # (pos, len, after, shown as)


def _split_lines(src: str) -> tuple[list[_Line], list[int]]:
    """Lines with content bounds, and the line each page after the first starts at (a form feed breaks a page)."""
    lines: list[_Line] = []
    page_starts: list[int] = []
    page, pos = 1, 0
    while True:
        nl = src.find("\n", pos)
        end = len(src) if nl < 0 else nl
        start = pos
        for ff in (m.start() + pos for m in re.finditer("\f", src[pos:end])):
            if src[start:ff].strip():
                lines.append(_make_line(src, start, ff, ff, page))
            page += 1
            page_starts.append(len(lines))
            start = ff + 1
        if start < end or nl >= 0:
            lines.append(_make_line(src, start, end, nl if nl >= 0 else None, page))
        if nl < 0:
            break
        pos = nl + 1
    while page_starts and page_starts[-1] >= len(lines):  # a trailing form feed opens no page
        page_starts.pop()
    return lines, page_starts


def _make_line(src: str, start: int, end: int, term: int | None, page: int) -> _Line:
    lo, hi = start, end
    while lo < hi and src[lo].isspace():
        lo += 1
    while hi > lo and src[hi - 1].isspace():
        hi -= 1
    return _Line(lo, hi, term, page, src[lo:hi], role="text" if lo < hi else "blank")


def _text_indices(lines: list[_Line], lo: int, hi: int) -> list[int]:
    return [i for i in range(lo, hi) if lines[i].role == "text"]


# --------------------------------------------------------------------------- page furniture


def _strip_page_numbers(lines: list[_Line], src: str, page_starts: list[int], stats: dict[str, int]) -> list[int]:
    """Remove page-number lines and prefixes ("-3Pasal 3", "- 24 Bagian", "-22." = page 2 + "2.").

    With form feeds, a prefix is only taken from a page's first two lines (a running header may
    come first) and only when its digits begin with the expected page number (the physical page,
    or the last printed one + 1), which settles how "-414." splits. Without form feeds a page
    number opens the page it names (a header; one page without a number is tolerated) or,
    naming the current page, closes it (a footer); lines then get the page they are on.
    Returns where pages 2, 3, … begin. Fails on a restarted or long-interrupted numbering.
    """
    has_ff = bool(page_starts)
    breaks: list[int] = []
    last_printed = 1
    seen: Counter[int] = Counter()
    for i, line in enumerate(lines):
        if line.role != "text":
            continue
        seen[line.page] += 1
        if _PAGE_LINE.fullmatch(line.text):
            digits = _DIGITS.search(line.text)
            number = int(digits.group()) if digits else last_printed
        else:
            at_top = has_ff and seen[line.page] <= 2
            if has_ff and not at_top:
                continue
            expected = {line.page if has_ff else last_printed + 2, last_printed + 1}
            prefix = _page_prefix(line.text, expected, bare_allowed=at_top)
            if prefix is None:
                continue
            number, length = prefix
            line.lo += length
            while line.lo < line.hi and src[line.lo].isspace():
                line.lo += 1
            line.text = src[line.lo : line.hi]
        stats["page_numbers"] += 1
        last_printed = max(last_printed, number)  # a form's own "Page 1" does not restart the count
        if not line.text or _PAGE_LINE.fullmatch(line.text):
            line.role = "furniture"
        if not has_ff and number == len(breaks) + 1:
            breaks.append(i + 1)
        elif not has_ff and number in (len(breaks) + 2, len(breaks) + 3):
            breaks.extend([i] * (number - len(breaks) - 1))
    if has_ff:
        return list(page_starts)
    breaks = [b for b in breaks if any(line.role == "text" for line in lines[b:])]
    for i, line in enumerate(lines):
        line.page = 1 + bisect.bisect_right(breaks, i)
    return breaks


def _page_prefix(text: str, expected: set[int], bare_allowed: bool) -> tuple[int, int] | None:
    """(page number, prefix length) when ``text`` starts with an expected page number."""
    if bare_allowed and _BARE_NUMBER.fullmatch(text) and int(text) in expected:
        return int(text), len(text)
    m = _PAGE_PREFIX.match(text)
    if not m:
        return None
    digits = m.group(1)
    for j in range(len(digits), 0, -1):
        if int(digits[:j]) in expected:
            end = m.start(1) + j
            if j == len(digits):
                end = _PAGE_PREFIX_TAIL.match(text, end).end()
            return int(digits[:j]), end
    return None


def _strip_running_lines(lines: list[_Line], stats: dict[str, int]) -> None:
    """Remove running headers/footers: a line at a page's top or bottom on ≥3 pages and ≥30% of pages.

    Both thresholds must hold, counted on the pages before the annex: forms and tables in an
    annex repeat their own headings ("No", "Kategori") and those are content. Fails on a header
    that changes from page to page (other than its page number, handled above).
    """
    pages: dict[int, list[int]] = {}
    annex = None
    for i, line in enumerate(lines):
        if line.role == "text":
            if annex is None and line.page not in pages and _ANNEX_TOP.match(line.text):
                annex = line.page
            pages.setdefault(line.page, []).append(i)
    body_pages = [p for p in pages if annex is None or p < annex]
    if len(body_pages) < 3:
        return
    seen: dict[str, set[int]] = {}
    for page in body_pages:
        for i in _edges(pages[page]):
            if _may_run(lines[i].text):
                seen.setdefault(lines[i].text, set()).add(page)
    running = {text for text, on in seen.items() if len(on) >= 3 and len(on) >= 0.3 * len(body_pages)}
    for idx in pages.values():
        for i in _edges(idx):
            if lines[i].text in running:
                lines[i].role = "furniture"
                stats["running_headers"] += 1


def _edges(idx: list[int]) -> set[int]:
    return set(idx[:2] + idx[-2:])


def _may_run(text: str) -> bool:
    numbered = _MARKER_LINE.fullmatch(text) or _INLINE_LIST.match(text) or _INLINE_AYAT.match(text)
    letters = sum(c.isalpha() for c in text)
    return letters >= 3 and len(text) <= 100 and not numbered and not _is_structural(text)


def _strip_glyphs_and_catchwords(lines: list[_Line], stats: dict[str, int]) -> None:
    """Remove stray single glyphs (signature stamps "Д", "Ѽ", "Ж") and catchwords.

    A catchword is a page's last line ending in "..." that repeats the start of the next page
    ("Nomor ..." above "Nomor 32 Tahun 2004"); keeping it would duplicate words. A stamp glued
    to a line of text stays.
    """
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, line in enumerate(lines):
        if line.role != "text":
            continue
        if len(line.text) == 1 and not line.text.isascii() and unicodedata.category(line.text)[0] in "LSC":
            line.role = "furniture"
            stats["stray_glyphs"] += 1
            continue
        first.setdefault(line.page, i)
        last[line.page] = i
    for page, i in last.items():
        m = _CATCHWORD.fullmatch(lines[i].text)
        nxt = first.get(page + 1)
        if m and nxt is not None and " ".join(lines[nxt].text.split()).startswith(" ".join(m.group(1).split())):
            lines[i].role = "furniture"
            stats["catchwords"] += 1


# --------------------------------------------------------------------------- structure


def _last_word(text: str) -> str:
    m = _LAST_WORD.search(text)
    return m.group(1) if m else ""


def _continues(text: str) -> bool:
    """Whether a line ending like this runs on into a reference ("dimaksud dalam" / "Pasal 16")."""
    return text.endswith(",") or _last_word(text).lower() in _CONTINUES


def _takes_number(text: str) -> bool:
    return _last_word(text).lower() in _TAKES_NUMBER


_STRUCTURAL = (("pasal", _PASAL), ("bab", _BAB), ("bagian", _BAGIAN), ("paragraf", _PARAGRAF))


def _structural_kind(text: str) -> str | None:
    return next((kind for kind, pattern in _STRUCTURAL if pattern.fullmatch(text)), None)


def _is_structural(text: str) -> bool:
    return _structural_kind(text) is not None


def _is_roman_pasal(text: str) -> bool:
    m = _PASAL.fullmatch(text)
    return bool(m and m.group("roman"))


def _roman(text: str) -> int:
    values = {"I": 1, "V": 5, "X": 10, "L": 50}
    return sum(-values[a] if values.get(b, 0) > values[a] else values[a] for a, b in zip(text, text[1:] + " "))


class _Numbering:
    """Which "Pasal N" lines are headings: numbers increase, by at most four in the body (a heading
    lost to OCR), freely inside an amendment ("Pasal I" quotes Pasal 14, 18, …); "Pasal I", "Pasal II"
    count on their own; PENJELASAN restarts everything."""

    def __init__(self) -> None:
        self.last: tuple[int, str] | None = None
        self.roman = 0
        self.amending = False

    def accept(self, text: str, zone: str) -> bool:
        m = _PASAL.fullmatch(text)
        if m.group("roman"):
            value = _roman(m.group("roman"))
            if value != self.roman + 1:
                return False
            self.roman, self.last, self.amending = value, None, value == 1
            return True
        key = (int(m.group("num")), m.group("suffix"))
        if self.last is None:
            fits = self.amending or key[0] <= 5 or zone == "penjelasan"
        else:
            fits = key > self.last and (self.amending or key[0] - self.last[0] <= 4)
        if fits:
            self.last = key
        return fits


def _classify(lines: list[_Line], stats: dict[str, int]) -> None:
    """Assign zones and recognise headings.

    "Pasal N" (or "BAB IV", "Bagian Kedua", "Paragraf 1") is a heading only when the line before
    does not run on into a reference ("… dimaksud dalam" / "Pasal 16") and, for a Pasal, the
    number fits the numbering (``_Numbering``). Fails when a wrapped reference follows a line
    that ends a sentence and carries the next number, and on OCR-damaged headings ("Pasa] 4").
    """
    zone, title_lines, prev_text = "title", 0, ""
    numbering = _Numbering()
    for i, line in enumerate(lines):
        if line.role != "text":
            continue
        text = line.text
        runs_on = _continues(prev_text)
        title_lines += zone == "title"
        if _LABEL.match(text) and zone in ("title", "preamble", "body"):
            zone = "body" if _LABEL.match(text).group("label") == "Menetapkan" else "preamble"
            line.heading = "label"
        elif _MEMUTUSKAN.fullmatch(text):
            zone, line.heading = "body", "memutuskan"
        elif _PENJELASAN.match(text) and text.isupper():
            zone, line.heading, numbering = "penjelasan", "penjelasan", _Numbering()
        elif _LAMPIRAN.match(text) and zone not in ("title", "preamble"):
            zone, line.heading = "lampiran", "lampiran"
        elif zone in ("title", "preamble", "body", "penjelasan") and _is_structural(text):
            if runs_on or (_PASAL.fullmatch(text) and not numbering.accept(text, zone)):
                stats["pasal_references"] += bool(_PASAL.fullmatch(text))
            else:
                line.heading = _structural_kind(text)
                zone = "body" if zone in ("title", "preamble") else zone
        elif numbering.amending and zone == "body" and _amends(lines, i, prev_text):
            line.heading = "amend"
        elif zone == "body" and (_AGAR.match(text) or _agar_split(lines, i)):
            line.heading = "agar"
        elif zone in ("body", "closing") and _CLOSING.match(text):
            zone, line.heading = "closing", "closing"
        elif zone == "penjelasan" and _PENJELASAN_SUB.fullmatch(text):
            line.heading = "sub"
        if zone == "title" and title_lines > 25:
            zone = "body"
        line.zone = zone
        prev_text = text
    stats["pasal_headings"] = sum(line.heading == "pasal" for line in lines)


def _amends(lines: list[_Line], i: int, prev_text: str) -> bool:
    """Whether line ``i`` opens an amendment instruction: a new sentence that names a change."""
    if not _AMEND_START.match(lines[i].text):
        return False
    after_sentence = _SENTENCE_END.search(_TRAILING_CLOSERS.sub("", prev_text)) or _MARKER_LINE.fullmatch(prev_text)
    if prev_text and not after_sentence:
        return False
    words = []
    for line in lines[i : i + 15]:
        if line.role == "text":
            words.append(line.text)
            if _SENTENCE_END.search(line.text):
                break
    return bool(_AMEND_VERB.search(" ".join(words)))


def _agar_split(lines: list[_Line], i: int) -> bool:
    """"Agar / setiap / orang" broken one word per line still opens the closing formula."""
    if lines[i].text != "Agar":
        return False
    words = [line.text for line in lines[i : i + 6] if line.role == "text"][:3]
    return " ".join(words).startswith("Agar setiap orang")


def _marker_key(kind: str, raw: str) -> tuple[int, str]:
    if kind == "letter":
        return ord(raw) - ord("a") + 1, ""
    digits = raw.rstrip("abcdefghijklmnopqrstuvwxyz")
    return int(digits), raw[len(digits) :]


def _marker_kind(m: re.Match[str]) -> tuple[str, tuple[int, str]]:
    kind = next(k for k in ("ayat", "letter", "number") if m.group(k))
    return kind, _marker_key(kind, m.group(kind))


def _find_markers(lines: list[_Line], src: str) -> list[_Marker]:
    """Detach numbers alone on their line ("(2)", ": b.", "Menimbang : a.") from the body.

    A number line directly followed by a text line is that text's own number (kept, joined);
    one after "ayat", "huruf", "angka" is part of a reference ("pada ayat / (1)"). Title,
    closing and annex lines are left alone: tables number their rows with "1." cells. A
    leading ":" or label stays in place ("Menimbang :").
    """
    markers: list[_Marker] = []
    prev_text = ""
    for i, line in enumerate(lines):
        if line.role != "text":
            continue
        m = _MARKER_LINE.fullmatch(line.text)
        reference = _takes_number(prev_text) and not m.group("label") if m else False
        prev_text = line.text
        if not m or line.zone not in _MARKED_ZONES or reference or line.term is None:
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if nxt is not None and nxt.role == "text" and not _MARKER_LINE.fullmatch(nxt.text) and not nxt.heading:
            line.marker_only, line.inline = True, _marker_kind(m)
            continue
        kind, key = _marker_kind(m)
        pos, end = line.lo + m.start("m"), line.lo + m.end("m")
        after = end if end < len(src) and src[end] in " \n\f" else line.term
        markers.append(_Marker(pos, end - pos, kind, key, i, after))
        keep = m.end("colon") if m.group("colon") else m.end("label") if m.group("label") else 0
        if keep:
            line.hi, line.text = line.lo + keep, line.text[:keep]
        else:
            line.role = "marker"
    return markers


def _mark_inline(lines: list[_Line]) -> None:
    """Record numbers already at the start of their text ("(2) Dalam hal", "a. bahwa", "Menimbang : a. bahwa")."""
    prev_text = ""
    for line in lines:
        if line.role != "text":
            continue
        text = line.text
        if line.heading == "label" and (m := _LABEL_INLINE.match(text)):
            kind = "letter" if m.group("letter") else "number"
            line.inline = (kind, _marker_key(kind, m.group(kind)))
        elif line.inline is None and line.zone in _MARKED_ZONES and line.heading in (None, "amend"):
            ayat, listed = _INLINE_AYAT.match(text), _INLINE_LIST.match(text)
            if ayat and not (_takes_number(prev_text) or _continues(prev_text)):
                line.inline = ("ayat", _marker_key("ayat", ayat.group(1)))
            elif listed and not _takes_number(prev_text):
                kind = "letter" if listed.group("letter") else "number"
                line.inline = (kind, _marker_key(kind, listed.group(kind)))
        prev_text = text


# --------------------------------------------------------------------------- placing detached numbers


def _follows(prev: tuple[int, str] | None, key: tuple[int, str]) -> bool:
    """Whether ``key`` comes right after ``prev``: (1) → (1a) → (2); a → b; nothing → (1) / a / 1."""
    if prev is None:
        return key == (1, "")
    number, suffix = prev
    return key == (number + 1, "") or (key[0] == number and key[1] == (chr(ord(suffix) + 1) if suffix else "a"))


def _in_sequence(keys: list[tuple[int, str]], prev: tuple[int, str] | None = None) -> bool:
    for key in keys:
        if not _follows(prev, key):
            return False
        prev = key
    return True


def _ends_item(text: str) -> bool:
    return bool(_ITEM_END.search(_TRAILING_CLOSERS.sub("", text)))


def _sections(lines: list[_Line]) -> list[tuple[int, int]]:
    """(heading line, end) of every Pasal; a body ends at the next heading, instruction or zone change."""
    out: list[tuple[int, int]] = []
    open_at: int | None = None
    for i, line in enumerate(lines):
        if line.role != "text":
            continue
        if open_at is not None and (line.heading in _SECTION_ENDS or line.zone not in ("body", "penjelasan")):
            out.append((open_at, i))
            open_at = None
        if line.heading == "pasal":
            open_at = i
    if open_at is not None:
        out.append((open_at, len(lines)))
    return out


def _pasal_items(lines: list[_Line], body: list[int], kind: str) -> list[int]:
    """Lines that start an ayat: the first line, a numbered one, and a capital after a sentence end."""
    items: list[int] = []
    prev: _Line | None = None
    for i in body:
        line = lines[i]
        if prev is None or (line.inline and line.inline[0] == kind):
            items.append(i)
        elif (
            not line.inline
            and not prev.marker_only
            and _SENTENCE_END.search(_TRAILING_CLOSERS.sub("", prev.text))
            and line.text[:1].isupper()
        ):
            items.append(i)
        prev = line
    return items


def _runs(markers: list[_Marker], kind: str, lines: list[_Line]) -> list[list[_Marker]]:
    """Detached numbers of one kind with no text between them, split where the numbering restarts."""
    runs: list[list[_Marker]] = []
    last = -1
    for marker in markers:
        if marker.kind != kind:
            continue
        between = any(lines[j].role == "text" and lines[j].text != ":" for j in range(last + 1, marker.line))
        if runs and not between and _follows(runs[-1][-1].key, marker.key):
            runs[-1].append(marker)
        else:
            runs.append([marker])
        last = marker.line
    return runs


def _fill(lines: list[_Line], items: list[int], run: list[_Marker]) -> list[int] | None:
    """The unnumbered items ``run`` numbers: as many as its numbers, and no gap with the inline ones."""
    free = [i for i in items if not lines[i].inline]
    if len(free) != len(run):
        return None
    kind = run[0].kind
    numbered = [(i, lines[i].inline[1]) for i in items if lines[i].inline and lines[i].inline[0] == kind]
    numbered += zip(free, (m.key for m in run))
    return free if _in_sequence([key for _, key in sorted(numbered)]) else None


def _attach(lines: list[_Line], run: list[_Marker], targets: list[int], stats: dict[str, int]) -> set[int]:
    for marker, i in zip(run, targets):
        lines[i].inserts.append((marker.pos, marker.length, marker.after, " "))
        lines[i].inline = (marker.kind, marker.key)
        lines[i].item = lines[i].item or marker.kind == "ayat"
    stats["markers_reattached"] += len(run)
    return {id(m) for m in run}


def _place_amendments(lines: list[_Line], markers: list[_Marker], stats: dict[str, int]) -> set[int]:
    """Number the instructions of an amending "Pasal I" ("Ketentuan Pasal 14 diubah …").

    Its detached numbers are taken in reading order from "1." until the numbering restarts
    (the next "1." belongs to Pasal II) and fit only if there are as many as unnumbered
    instructions. Fails when columns put an instruction inside the Pasal it amends.
    """
    romans = [i for i, line in enumerate(lines) if line.heading == "pasal" and _is_roman_pasal(line.text)]
    placed: set[int] = set()
    for head, end in zip(romans, [*romans[1:], len(lines)]):
        items = [i for i in range(head, end) if lines[i].heading == "amend"]
        chain: list[_Marker] = []
        for marker in (m for m in markers if m.kind == "number" and head < m.line < end):
            if chain and marker.key == (1, ""):
                break
            chain.append(marker)
        free = _fill(lines, items, chain) if chain and items else None
        if free is not None:
            placed |= _attach(lines, chain, free, stats)
    return placed


def _place_lists(lines: list[_Line], markers: list[_Marker], stats: dict[str, int]) -> set[int]:
    """Give detached "b." / "5." inside a Pasal to the unnumbered list items after them.

    The run must continue the inline numbering before it (a., then b.) and, with the inline
    number after it, leave no gap. Its items are the lines after it that follow an item end
    (";", "; dan", "."), up to the next number of that kind, the next detached run or the end
    of the list. Fails when an item runs on after a sentence end.
    """
    placed: set[int] = set()
    sections = _sections(lines)
    for kind in ("letter", "number"):
        for run in _runs(markers, kind, lines):
            section = next(((h, e) for h, e in sections if h < run[0].line < e), None)
            if section is None:
                continue
            later = [m.line for m in markers if m.kind == kind and m.line > run[-1].line]
            targets = _list_items(lines, run, section[0], min([*later[:1], section[1]]))
            if targets is not None:
                placed |= _attach(lines, run, targets, stats)
    return placed


def _list_items(lines: list[_Line], run: list[_Marker], head: int, end: int) -> list[int] | None:
    kind = run[0].kind
    ahead = _text_indices(lines, head + 1, run[0].line)
    numbered = [i for i in ahead if lines[i].inline and lines[i].inline[0] == kind]
    prev_key = lines[numbered[-1]].inline[1] if numbered else None
    if not _follows(prev_key, run[0].key):
        return None
    after = _text_indices(lines, run[-1].line + 1, end)
    opener = lines[ahead[-1]].text if ahead else ""
    if ahead and not _ends_item(opener):
        # The run fell inside an item (a page break): its items start once that item ends.
        k = next((n for n in range(1, len(after)) if _ends_item(lines[after[n - 1]].text)), None)
        if k is None:
            return None
        opener, after = lines[after[k - 1]].text, after[k:]
    if not after or lines[after[0]].inline or lines[after[0]].heading:
        return None
    lower = lines[after[0]].text[:1].islower()
    items, next_key = [after[0]], None
    final = bool(_LIST_LAST.search(opener))  # the item after "…; dan" is the list's last
    for j, i in zip(after, after[1:]):
        line, prev = lines[i], lines[j]
        if line.inline:
            next_key = line.inline[1] if line.inline[0] == kind else next_key
            if line.inline[0] in (kind, "ayat"):
                break
            continue
        if not _ends_item(prev.text):
            continue
        capital = line.text[:1].isupper()
        if capital and (final or (lower and _SENTENCE_END.search(prev.text))):
            break
        if final or line.text[:1].islower() != lower:
            continue
        items.append(i)
        final = bool(_LIST_LAST.search(prev.text))
    keys = [m.key for m in run] + ([next_key] if next_key else [])
    return items if len(items) == len(run) and _in_sequence(keys, prev_key) else None


def _place_ayat(lines: list[_Line], markers: list[_Marker], stats: dict[str, int], kind: str = "ayat") -> set[int]:
    """Give each run of detached ayat numbers to the Pasal whose unnumbered ayat it fits.

    A page's number column comes out before, or inside, the Pasals it numbers, so runs and
    Pasals are paired in reading order: a run that does not start at (1) continues the run
    before it (the column went on over a page); a run goes to the first later Pasal that has
    not ended before it, begins at most a page after it, and that ``_fill`` accepts. A Pasal
    passed over stays unnumbered and a run that fits none is dropped: no guessing. Fails when
    an ayat lacks its final period or holds two sentences (miscounted), or when two Pasals on
    a page have the same count and only one of their runs survived. With ``kind="number"`` it
    numbers the items of an amending regulation's "Pasal II" ("1.", "2.") the same way.
    """
    runs: list[list[_Marker]] = []
    for run in _runs([m for m in markers if lines[m.line].zone in ("body", "penjelasan")], kind, lines):
        if run[0].key != (1, "") and runs and _follows(runs[-1][-1].key, run[0].key):
            runs[-1].extend(run)
        else:
            runs.append(run)
    waiting = []
    for head, end in _sections(lines):
        if kind == "number" and not _is_roman_pasal(lines[head].text):
            continue
        items = _pasal_items(lines, _text_indices(lines, head + 1, end), kind)
        if len(items) >= 2 and any(not lines[i].inline for i in items):
            waiting.append((head, end, items))
    placed: set[int] = set()
    for run in runs:
        at = run[0].line
        for n, (head, end, items) in enumerate(waiting):
            if lines[head].page > lines[at].page + 1:
                break
            free = _fill(lines, items, run) if end > at else None
            if free is not None:
                placed |= _attach(lines, run, free, stats)
                del waiting[: n + 1]
                break
    return placed


def _place_pasal_ii(lines: list[_Line], markers: list[_Marker], stats: dict[str, int]) -> set[int]:
    return _place_ayat(lines, markers, stats, kind="number")


def _place_preamble(lines: list[_Line], markers: list[_Marker], stats: dict[str, int]) -> set[int]:
    """Letter the Menimbang clauses ("bahwa …") and number the Mengingat items (each ending ";").

    Mengingat items start after the last clause's ";" (or after its label when there are no
    clauses); detached numbers fit under ``_fill``'s rule. The Mengingat label is moved in
    front of its first item when extraction put it among the Menimbang clauses. Fails on
    clauses that do not start with "bahwa" or items that do not end with ";".
    """
    pre = [i for i, line in enumerate(lines) if line.role == "text" and line.zone == "preamble"]
    clauses: list[int] = []
    labels: dict[str, int] = {}
    prev: _Line | None = None
    for i in pre:
        line = lines[i]
        if line.heading == "label":
            labels[_LABEL.match(line.text).group("label")] = i
        opens = prev is None or prev.heading == "label" or prev.text == ":" or _ends_item(prev.text)
        if opens and line.text.lstrip(": ").lower().startswith("bahwa"):
            clauses.append(i)
        prev = line
    if clauses:
        start = next((i for i in pre if i >= clauses[-1] and lines[i].text.endswith(";")), None)
    else:
        start = labels.get("Mengingat")
    grounds: list[int] = []
    prev = None
    for i in pre:
        line = lines[i]
        if start is None or i <= start or line.heading or line.text == ":":
            continue
        if prev is None or (prev.text.endswith(";") and (line.text[:1].isupper() or line.inline)):
            grounds.append(i)
        prev = line
    placed: set[int] = set()
    for kind, items in (("letter", clauses), ("number", grounds)):
        run = [m for m in markers if m.kind == kind and lines[m.line].zone == "preamble"]
        free = _fill(lines, items, run) if run else None
        if free is not None:
            placed |= _attach(lines, run, free, stats)
    for i in clauses + grounds:
        lines[i].item = True
    if clauses and grounds:
        _move_label(lines, labels.get("Mengingat"), clauses[-1], grounds[0], stats)
    return placed


def _move_label(
    lines: list[_Line], label: int | None, last_clause: int, first_ground: int, stats: dict[str, int]
) -> None:
    """Put a bare "Mengingat" label that was extracted among the Menimbang clauses before its first item."""
    if label is None or label > last_clause or lines[label].text.rstrip(" :") != "Mengingat":
        return
    source = lines[label]
    colon = next((j for j in range(label + 1, first_ground) if lines[j].role == "text"), None)
    if colon is not None and lines[colon].text == ":":
        pieces = [(source.lo, source.hi - source.lo, source.term, " "), (lines[colon].lo, 1, lines[colon].term, "\n")]
        lines[colon].role = "moved"
    else:
        pieces = [(source.lo, source.hi - source.lo, source.term, "\n")]
    source.role = "moved"
    lines[first_ground].inserts[:0] = pieces
    stats["labels_moved"] += 1


# --------------------------------------------------------------------------- joining lines


def _is_caps(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 4 and not any(c.islower() for c in letters)


def _ends_caps(text: str) -> bool:
    """Whether the last word with letters is in capitals ("… NOMOR 237/PMK.04/2022")."""
    words = _ALPHA_RUN.findall(text)
    return bool(words) and words[-1].isupper()


def _reduplicates(before: str, after: str) -> bool:
    """"perundang-/undangan", "Undang-/Undang", "masing-/masing": the part after repeats the part before.

    Fails on a real line-end hyphenation whose second part happens to repeat three letters
    of the first (kept hyphenated).
    """
    m = _LEADING_LETTERS.match(after)
    return bool(m and len(m.group()) >= 3 and m.group()[:3].lower() in before.lower())


def _mark_title(lines: list[_Line]) -> None:
    """Flag title lines between TENTANG and DENGAN RAHMAT so they are joined into one line."""
    inside = False
    for line in lines:
        if line.role == "text" and line.zone == "title":
            inside = inside and not _DENGAN_RAHMAT.match(line.text)
            line.title = inside
            inside = inside or line.text == "TENTANG" or line.text.startswith("TENTANG ")


def _separator(prev: _Line, line: _Line, gap: str) -> str:
    """How two kept lines meet: "break" (new line), "space" (joined), "hyphen" (dropped) or "glue" (kept).

    Soft wraps are joined. A new line starts at headings, items and numbered lines, at a capital
    after a sentence end, at a change between all-caps and ordinary text, and across a blank line
    on the same page unless the text plainly runs on (no sentence end, lower case after). ``gap``
    is "" (adjacent lines), "blank" (a blank line between) or "page" (a page break between).
    Fails on a sentence that ends without its period before a capitalised line (joined).
    """
    text, before = line.text, prev.text
    lower = text[:1].islower()
    if prev.marker_only or (text.startswith(":") and line.zone != "lampiran"):
        return "space"
    if line.zone == "title" and prev.zone == "title":
        if _TITLE_BREAK.match(text) or before == "TENTANG" or _DENGAN_RAHMAT.match(before):
            return "break"
        return "space" if prev.title else "break"
    if line.heading or line.inline or line.item or line.inserts or line.marker_only:
        return "break"
    if prev.heading in _HEADINGS and not (prev.heading == "label" and not _LABEL.fullmatch(before)):
        return "break"
    if line.zone == "closing" and (gap or not lower):
        return "break"
    if gap == "blank":
        return "space" if lower and not _SENTENCE_END.search(before) else "break"
    hyphen = _HYPHENATED_END.search(before)
    if hyphen and text[:1].isalpha():
        return "glue" if text[:1].isupper() or _reduplicates(hyphen.group(1), text) else "hyphen"
    if _SENTENCE_END.search(_TRAILING_CLOSERS.sub("", before)) and not lower:
        return "break"
    if _is_caps(text) and not _is_caps(before) and not _ends_caps(before):
        return "break"
    if _is_caps(before) and not _is_caps(text) and text[:1].isupper():
        return "break"
    return "space"


# --------------------------------------------------------------------------- rendering


class _Out:
    """Clean text under construction, with its segments."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.parts: list[str] = []
        self.segments: list[list[int]] = []
        self.moved: list[int] = []
        self.pos = 0
        self._last_moved = False

    def copy(self, start: int, length: int, moved: bool = False) -> None:
        self.add(self.src[start : start + length], start, moved)

    def add(self, text: str, src_at: int, moved: bool = False) -> None:
        if not text:
            return
        last = self.segments[-1] if self.segments else None
        if last and last[0] + last[2] == self.pos and last[1] + last[2] == src_at and self._last_moved == moved:
            last[2] += len(text)
        else:
            if moved:
                self.moved.append(len(self.segments))
            self.segments.append([self.pos, src_at, len(text)])
            self._last_moved = moved
        self.parts.append(text)
        self.pos += len(text)


def _render(src: str, lines: list[_Line], breaks: list[int], stats: dict[str, int]) -> CleanText:
    kept = _text_indices(lines, 0, len(lines))
    seps: dict[int, str] = {}
    for a, b in zip(kept, kept[1:]):
        blank = any(lines[j].role == "blank" for j in range(a + 1, b))
        gap = "page" if lines[a].page != lines[b].page else "blank" if blank else ""
        seps[a] = _separator(lines[a], lines[b], gap)
    out = _Out(src)
    starts: dict[int, int] = {}
    for a, b in zip(kept, [*kept[1:], None]):
        line, sep = lines[a], seps.get(a)
        starts[a] = out.pos
        for pos, length, after, shown in line.inserts:
            out.copy(pos, length, moved=True)
            if after is not None:
                out.add(shown, after, moved=True)
        out.copy(line.lo, line.hi - line.lo - (sep == "hyphen"))
        if sep == "space":
            out.add(" ", line.term)
            stats["joined_lines"] += 1
        elif sep in ("hyphen", "glue"):
            stats["hyphenations" if sep == "hyphen" else "hyphens_kept"] += 1
        elif sep == "break":
            out.add("\n", line.term)
            blank = next((j for j in range(a + 1, b) if lines[j].role == "blank" and lines[j].term is not None), None)
            if blank is not None:
                out.add("\n", lines[blank].term)
    firsts = [bisect.bisect_left(kept, b) for b in breaks]  # a page starts at its first kept line
    pages = [starts[kept[k]] if k < len(kept) else out.pos for k in firsts]
    return CleanText("".join(out.parts), tuple(map(tuple, out.segments)), tuple(pages), stats, tuple(out.moved))


# --------------------------------------------------------------------------- entry points


def looks_extracted(text: str) -> bool:
    """Whether ``text`` reads like PDF-extracted text rather than an authored file.

    Form feeds or page numbers ("- 3 -", "-3Pasal 3", "Halaman 3 dari 9") decide it; Markdown
    structure (headings, tables, fences) says authored; otherwise it takes many hard-wrapped
    lines that run on in lower case, or many short lines that are not headings (text broken one
    word per line). An authored file with short headings and one paragraph per line is not
    extracted; authored prose hard-wrapped at a fixed width is (joining its lines is harmless).
    """
    if "\f" in text:
        return True
    lines = [line.strip() for line in text.split("\n")]
    if sum(bool(_PAGE_LINE.fullmatch(line) or _GLUED_PAGE.match(line)) for line in lines) >= 2:
        return True
    if any(_MARKDOWN.match(line) for line in lines):
        return False
    filled = [line for line in lines if line]
    if len(filled) < 10:
        return False
    wrapped = sum(1 for a, b in zip(lines, lines[1:]) if a and b[:1].islower() and not _RUNS_ON.search(a))
    broken = sum(1 for line in filled if len(line.split()) <= 3 and not _is_heading_like(line))
    return wrapped >= 0.3 * len(filled) or broken >= 0.4 * len(filled)


def _is_heading_like(line: str) -> bool:
    return _is_structural(line) or _is_caps(line) or bool(_MARKER_LINE.fullmatch(line)) or line.endswith(":")


def clean_text(text: str, extracted: bool | None = None) -> CleanText:
    """Clean extracted text (``extracted=None``: decided by ``looks_extracted``).

    Authored text comes back unchanged, with only its form-feed pages. Extracted text comes back
    one logical paragraph per line, structure on its own lines, furniture removed, detached
    numbers re-attached where that is unambiguous, and a map to the source.
    """
    if extracted is None:
        extracted = looks_extracted(text)
    if not extracted:
        pages = tuple(m.end() for m in re.finditer("\f", text) if m.end() < len(text))
        return CleanText(text, ((0, 0, len(text)),) if text else (), pages, dict.fromkeys(_STATS, 0))
    stats = dict.fromkeys(_STATS, 0)
    lines, page_starts = _split_lines(text)
    breaks = _strip_page_numbers(lines, text, page_starts, stats)
    _strip_running_lines(lines, stats)
    _strip_glyphs_and_catchwords(lines, stats)
    _classify(lines, stats)
    markers = _find_markers(lines, text)
    _mark_inline(lines)
    placed: set[int] = set()
    for place in (_place_amendments, _place_lists, _place_ayat, _place_pasal_ii, _place_preamble):
        placed |= place(lines, [m for m in markers if id(m) not in placed], stats)
    stats["markers_unplaced"] = len(markers) - len(placed)
    _mark_title(lines)
    return _render(text, lines, breaks, stats)
