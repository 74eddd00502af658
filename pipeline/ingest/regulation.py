"""A regulation into units: Pasal by Pasal under BAB › Bagian › Paragraf, ayat/huruf/angka as spans.

Indonesian regulations (and their English translations: Chapter, Part, Article,
Elucidation, Attachment) are read in order: the preamble (Menimbang, Mengingat, ...), the
body (BAB, Bagian, Pasal), the closing formula, the Penjelasan and the Lampiran. Each Pasal
is one unit; each ayat "(2)", huruf "b." and angka "3." in it is a span, so a quote can be
cited to "Pasal 3 ayat (2) huruf b". Text outside any Pasal is packed into blocks.

In an amending regulation, the articles quoted inside "Pasal I" are nested under the
numbered instruction that quotes them ("Pasal I angka 1 › Pasal 14"): they are the amended
text of another regulation, not this one's Pasal 14.
"""
from __future__ import annotations

import re

from ..types import Span
from .blocks import pack_loose_lines
from .units import Line, Unit

_BAB = re.compile(r"^\s*(BAB|CHAPTER)\s+([IVXLC]+|\d+)\b\.?\s*(.*)$")
_BAGIAN = re.compile(r"^\s*(Bagian\s+Ke\w+|Paragraf\s+\d+|Part\s+(?:One|Two|Three|Four|Five|Six|Seven|Eight|Nine|"
                     r"Ten|\d+)|Section\s+\d+)\s*$")
_PASAL = re.compile(r"^\s*(?:-\s*\d+\s*-?\s*)?((?:Pasal|Article)\s+(\d+[A-Z]?|[IVXL]+))\s*$")
_PENJELASAN = re.compile(r"^\s*(PENJELASAN|ELUCIDATION)\b")
_LAMPIRAN = re.compile(r"^\s*(LAMPIRAN|ATTACHMENT|APPENDIX)\b")
_AYAT = re.compile(r"^\s*\((\d{1,2}[a-z]?)\)(?=\s|$)")
_HURUF = re.compile(r"^\s*([a-z])\.(?=\s|$)")
# the explanation of a Pasal heads its parts "Ayat (1)", "Huruf a", "Angka 1" on their own lines
_EXPLAINED_PART = re.compile(r"^\s*(Ayat|Huruf|Angka|Paragraph|Letter|Point)\s+(\(\w+\)|\w+)\s*$")
_ANGKA = re.compile(r"^\s*(\d{1,2})\.(?=\s|$)")
# an amending regulation's "Pasal I" lists its changes as numbered instructions, each quoting
# the amended article in full: "1. Ketentuan Pasal 14 diubah sehingga berbunyi sebagai berikut:"
_AMENDMENT = re.compile(r"^\s*(\d{1,3})\.\s+(?:Ketentuan|Di\s?antara|Menambahkan|Ditambahkan|Menghapus|"
                        r"Mengubah|Lampiran|Judul|Penjelasan|Pasal\s+\d+\w*\s+dihapus|Provisions?|Between|"
                        r"Article\s+\d+\w*\s+(?:is|shall be)\s+(?:amended|deleted|revoked))")
_ROMAN = re.compile(r"^[IVXL]+$")
# the preamble's parts, cited as "PMK 98/2025 › Menimbang › huruf b"; and the closing formula
_PREAMBLE_PART = re.compile(r"^\s*(Menimbang|Mengingat|Memperhatikan|Menetapkan|Considering|Observing|In view of)"
                            r"\s*:?", re.IGNORECASE)
_CLOSING = re.compile(r"^\s*(Agar setiap orang mengetahuinya|In order that every person may know)", re.IGNORECASE)

# span levels: an ayat holds huruf, a huruf holds angka
_AYAT_LEVEL, _HURUF_LEVEL, _ANGKA_LEVEL = 0, 1, 2
_EXPLAINED_LEVEL = {"ayat": _AYAT_LEVEL, "paragraph": _AYAT_LEVEL, "huruf": _HURUF_LEVEL, "letter": _HURUF_LEVEL}
# the label of loose text (outside any Pasal), by the section it is in
_LOOSE_LABEL = {"preamble": "preamble", "explanation": "general_explanation", "appendix": "appendix",
                "body": "block", "closing": "closing"}


def is_regulation(lines: list[Line]) -> bool:
    """A document with any `Pasal N` line is read as a regulation."""
    return any(_PASAL.match(ln.text) for ln in lines)


def read_regulation(lines: list[Line], labels: dict[str, str], max_chars: int) -> list[Unit]:
    return RegulationReader(labels, max_chars).read(lines)


class RegulationReader:
    """Reads a regulation line by line. Each kind of line has its method; whatever starts a new
    place first closes the unit being read (`_close_unit`)."""

    def __init__(self, labels: dict[str, str], max_chars: int):
        self.labels = labels
        self.max_chars = max_chars
        self.units: list[Unit] = []
        self.headings: list[str] = []  # BAB › Bagian › Paragraf above the current line
        self.section = "preamble"  # preamble | body | closing | explanation | appendix
        self.current: Unit | None = None  # the Pasal, preamble part or amendment instruction being read
        self.loose: list[Line] = []  # text outside any Pasal: preamble, general explanation, appendix
        self.expect_bab_title = False  # "BAB II" alone on its line: its title follows on the next
        self.amending: str | None = None  # "Pasal I" while inside an amending article
        self.instruction: str | None = None  # "Pasal I angka 1" while inside one of its instructions
        self.open_spans: dict[int, str] = {}  # labels of the open ayat (0), huruf (1) and angka (2) spans

    def read(self, lines: list[Line]) -> list[Unit]:
        for line in lines:
            self._read_line(line)
        self._close_unit()
        return self.units

    def _read_line(self, line: Line) -> None:
        """Hand the line to the first kind it is, in this order."""
        text = line.text
        if self.expect_bab_title and not line.blank:
            self.expect_bab_title = False
            if text.strip().isupper() and not _PASAL.match(text):
                self.headings[-1] = f"{self.headings[-1]} {text.strip()}"
                return
        if _PENJELASAN.match(text):
            self._start_section("explanation", [text.strip()])
        elif _LAMPIRAN.match(text) and self.section != "preamble":
            self._start_section("appendix", [text.strip()])
        elif self.section == "preamble" and (m := _PREAMBLE_PART.match(text)):
            self._preamble_part(line, m)
        elif _CLOSING.match(text) and self.section == "body":
            self._start_section("closing", [])
            self.loose.append(line)
        elif (m := _BAB.match(text)) and self.amending is None and self.section != "closing":
            self._bab(m)
        elif (m := _BAGIAN.match(text)) and self.section != "appendix" and self.amending is None:
            self._bagian(m)
        elif (m := _PASAL.match(text)) and self.section not in ("appendix", "closing"):
            self._pasal(line, m)
        elif self.amending is not None and (m := _AMENDMENT.match(text)):
            self._amendment_instruction(line, m)
        elif self.current is not None:
            if not line.blank:
                self._body_line(line)
        else:
            self.loose.append(line)

    # -- lines that start a new place ----------------------------------------------------

    def _start_section(self, section: str, headings: list[str]) -> None:
        """Penjelasan, Lampiran or the closing formula: no heading or amendment carries over."""
        self._close_unit()
        self.section, self.headings = section, headings
        self.amending = self.instruction = None

    def _preamble_part(self, line: Line, m: re.Match) -> None:
        """Menimbang, Mengingat, ...: one unit each, its huruf as spans."""
        self._close_unit()
        self.current = Unit(m.group(1).capitalize(), line.start + line.text.index(m.group(1)), line.end, "")

    def _bab(self, m: re.Match) -> None:
        self._close_unit()
        title = m.group(3).strip()
        self.headings = [f"{m.group(1)} {m.group(2)}" + (f" {title}" if title else "")]
        self.expect_bab_title = not title
        if self.section == "preamble":
            self.section = "body"

    def _bagian(self, m: re.Match) -> None:
        """Bagian (Part) sits under a BAB, Paragraf (Section) under a Bagian."""
        self._close_unit()
        level = 1 if m.group(1).startswith(("Bagian", "Part")) else 2
        self.headings = self.headings[:level] + [m.group(1)]

    def _pasal(self, line: Line, m: re.Match) -> None:
        self._close_unit()
        if self.section == "preamble":
            self.section = "body"
        name = m.group(1)
        if self.section == "body" and _ROMAN.match(m.group(2)):  # "Pasal I" of an amending regulation
            self.amending, self.instruction = name, None
        elif self.amending is not None:
            name = f"{self.instruction or self.amending} › {name}"  # the amended article, quoted in full
        if self.section == "explanation":
            name = f"{self.labels['explanation']} {name}"
        start = line.start + line.text.index(m.group(1))
        self.current = Unit(name, start, line.end, " › ".join(self.headings))

    def _amendment_instruction(self, line: Line, m: re.Match) -> None:
        """"1. Ketentuan Pasal 14 diubah ...": the articles it quotes are placed under it."""
        self._close_unit()
        self.instruction = f"{self.amending} {self.labels['angka']} {m.group(1)}"
        self.current = Unit(self.instruction, line.start + line.text.index(m.group(1)), line.end,
                            " › ".join(self.headings))

    def _close_unit(self) -> None:
        """Keep the unit being read, then pack the loose lines read before this point."""
        if self.current is not None:
            self.units.append(self.current)
            self.current = None
        self.open_spans.clear()
        if self.loose:
            name = self.labels[_LOOSE_LABEL[self.section]]
            self.units.extend(pack_loose_lines(self.loose, name, " › ".join(self.headings), self.labels,
                                               self.max_chars))
            self.loose.clear()

    # -- lines inside a unit -------------------------------------------------------------

    def _body_line(self, line: Line) -> None:
        """A non-blank line of the current unit: it may open an ayat, huruf or angka span, and
        every open span now runs to its end."""
        self._open_span_at(line)
        current = self.current
        current.end = line.end
        for k, sp in enumerate(current.spans):
            if sp.label in self.open_spans.values():
                current.spans[k] = Span(sp.label, sp.start, line.end)

    def _open_span_at(self, line: Line) -> None:
        text, location = line.text, self.current.location
        explained = _EXPLAINED_PART.match(text) if self.section == "explanation" else None
        if explained:  # "Ayat (1)", "Huruf a" heading its explanation
            kind, number = explained.group(1), explained.group(2)
            level = _EXPLAINED_LEVEL.get(kind.lower(), _ANGKA_LEVEL)
            parent = location if level == _AYAT_LEVEL else (self.open_spans.get(level - 1)
                                                            or self.open_spans.get(_AYAT_LEVEL) or location)
            self._open_span(level, f"{parent} {kind.lower()} {number}", line, kind)
        elif m := _AYAT.match(text):
            self._open_span(_AYAT_LEVEL, f"{location} {self.labels['ayat']} ({m.group(1)})", line, "(")
        elif m := _HURUF.match(text):
            parent = self.open_spans.get(_AYAT_LEVEL, location)
            self._open_span(_HURUF_LEVEL, f"{parent} {self.labels['huruf']} {m.group(1)}", line, m.group(1))
        elif m := _ANGKA.match(text):
            parent = self.open_spans.get(_HURUF_LEVEL) or self.open_spans.get(_AYAT_LEVEL, location)
            self._open_span(_ANGKA_LEVEL, f"{parent} {self.labels['angka']} {m.group(1)}", line, m.group(1))

    def _open_span(self, level: int, label: str, line: Line, marker: str) -> None:
        """Open a span at `marker`, closing the open spans at its level and deeper."""
        for k in [k for k in self.open_spans if k >= level]:
            del self.open_spans[k]
        self.open_spans[level] = label
        self.current.spans.append(Span(label, line.start + line.text.index(marker), line.end))
