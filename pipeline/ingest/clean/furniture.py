"""Page furniture: page numbers (alone, glued to the text, as a prefix), running headers and footers, stray
glyphs and catchwords. Deleted from the clean text; every deletion is counted."""
from __future__ import annotations

import bisect
import unicodedata
from collections import Counter

from .lines import _Line
from .numbering import _is_structural
from .patterns import (_ANNEX_TOP, _BARE_NUMBER, _CATCHWORD, _DIGITS, _INLINE_AYAT, _INLINE_LIST, _MARKER_LINE,
                       _PAGE_LINE, _PAGE_PREFIX, _PAGE_PREFIX_TAIL)


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
