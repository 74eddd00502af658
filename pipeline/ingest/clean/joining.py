"""Joining lines into paragraphs (hyphenated ends, justified text broken one word per line, titles in capitals) and
rendering the clean text with its map."""
from __future__ import annotations

import bisect

from .lines import CleanText, _Line, _text_indices
from .patterns import (_ALPHA_RUN, _DENGAN_RAHMAT, _HEADINGS, _HYPHENATED_END, _LABEL, _LEADING_LETTERS, _SENTENCE_END,
                       _TITLE_BREAK, _TRAILING_CLOSERS)


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
