"""Standards and plain prose into units: numbered paragraphs under Markdown headings, else blocks.

A standard is cited by its paragraph numbers ("12.", "B12.", "5.5.1"), so each numbered
paragraph is one unit, placed under the headings above it. Text outside any numbered
paragraph is cut at blank lines and packed up to the size limit (`pack_loose_lines`, also
used by regulation.py for preambles, general explanations and appendices).
"""
from __future__ import annotations

import re

from .units import EXAMPLE_WORDS, Line, Unit

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_NUMBERED = re.compile(r"^\s*((?:[A-Z]{1,2})?\d{1,3}\.(?=\s)|\d{1,3}(?:\.\d{1,3}){1,3}(?=\s))\s*")
_EXAMPLE_HEADING = re.compile(r"\b(contoh|ilustrasi|examples?|illustrat\w*)\b", re.IGNORECASE)


def read_blocks(lines: list[Line], labels: dict[str, str], max_chars: int) -> list[Unit]:
    """Units of a document that is not a regulation."""
    return BlockSplitter(labels, max_chars).read(lines)


class BlockSplitter:
    """Splits a standard or plain prose into units, reading it line by line; a numbered paragraph runs until the next
    heading or numbered paragraph, and the lines outside any wait in `loose` to be packed."""

    def __init__(self, labels: dict[str, str], max_chars: int):
        self.labels = labels
        self.max_chars = max_chars
        self.units: list[Unit] = []
        self.headings: dict[int, str] = {}  # Markdown level → heading text
        self.current: Unit | None = None  # the numbered paragraph being read
        self.loose: list[Line] = []
        self.at_block_start = True  # a number only starts a paragraph at the start of a block

    def read(self, lines: list[Line]) -> list[Unit]:
        for line in lines:
            self._read_line(line)
        self._close_unit()
        return self.units

    def _read_line(self, line: Line) -> None:
        if line.blank:
            self.at_block_start = True
            if self.current is None:
                self.loose.append(line)
            return
        heading = _HEADING.match(line.text)
        if heading:
            self._heading(heading)
            return
        numbered = _NUMBERED.match(line.text) if self.at_block_start else None
        self.at_block_start = False
        if numbered:
            self._numbered_paragraph(line, numbered)
        elif self.current is not None:
            self.current.end = line.end
        else:
            self.loose.append(line)

    def _heading(self, m: re.Match) -> None:
        """A heading ends what came before and replaces the headings at its level and below."""
        self._close_unit()
        level = len(m.group(1))
        self.headings = {k: v for k, v in self.headings.items() if k < level}
        self.headings[level] = m.group(2).strip()
        self.at_block_start = True

    def _numbered_paragraph(self, line: Line, m: re.Match) -> None:
        self._close_unit()
        number = m.group(1).rstrip(".")
        rest = line.text[m.end():]
        self.current = Unit(f"{self.labels['paragraph']} {number}", line.start + line.text.index(m.group(1)),
                            line.end, self._heading_path(),
                            is_example=bool(EXAMPLE_WORDS.match(rest)) or self._in_example_section())

    def _close_unit(self) -> None:
        """Keep the paragraph being read, then pack the loose lines before what comes next."""
        if self.current is not None:
            self.units.append(self.current)
            self.current = None
        if self.loose:
            path = self._heading_path()
            packed = pack_loose_lines(self.loose, path or self.labels["block"], path, self.labels, self.max_chars)
            for u in packed:
                u.is_example = u.is_example or self._in_example_section()
            self.units.extend(packed)
            self.loose.clear()

    def _heading_path(self) -> str:
        return " › ".join(self.headings[k] for k in sorted(self.headings))

    def _in_example_section(self) -> bool:
        return any(_EXAMPLE_HEADING.search(h) for h in self.headings.values())


def pack_loose_lines(lines: list[Line], name: str, heading: str, labels: dict[str, str],
                     max_chars: int) -> list[Unit]:
    """Group loose lines into blocks (blank-line separated), packed up to the size limit.

    One unit is named `name`; several are numbered "`name` alinea 1", "... alinea 2".
    """
    text_of = {ln.start: ln.text for ln in lines}
    units: list[Unit] = []
    group: list[tuple[int, int]] = []  # blocks waiting to become one unit
    for start, end in _blocks(lines):
        is_example = EXAMPLE_WORDS.match(text_of.get(start, ""))
        if group and (is_example or end - group[0][0] > max_chars):
            units.append(Unit("", group[0][0], group[-1][1], heading))
            group = []
        if is_example:  # an example never shares a unit with a rule
            units.append(Unit("", start, end, heading, is_example=True))
        else:
            group.append((start, end))
    if group:
        units.append(Unit("", group[0][0], group[-1][1], heading))
    for i, u in enumerate(units, 1):
        u.location = name if len(units) == 1 else f"{name} {labels['block']} {i}"
    return units


def _blocks(lines: list[Line]) -> list[tuple[int, int]]:
    """(start, end) of each run of non-blank lines."""
    blocks: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    after_blank = False
    for ln in lines:
        if ln.blank:
            after_blank = True
            continue
        if cur is not None and not after_blank:
            cur = (cur[0], ln.end)
        else:
            if cur is not None:
                blocks.append(cur)
            cur = (ln.start, ln.end)
        after_blank = False
    if cur is not None:
        blocks.append(cur)
    return blocks
