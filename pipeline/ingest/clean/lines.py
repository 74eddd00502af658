"""The clean text and its map back to the source (`CleanText`), and the source's lines as cleaning works on them."""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property


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
