"""A regulation into units: Pasal by Pasal under BAB › Bagian › Paragraf, ayat/huruf/angka as spans.

Indonesian regulations (and their English translations: Chapter, Part, Article,
Elucidation, Attachment) are read in order: the preamble (Menimbang, Mengingat, ...), the
body (BAB, Bagian, Pasal), the closing formula, the Penjelasan and the Lampiran. Each Pasal
is one unit; each ayat "(2)", huruf "b." and angka "3." in it is a span, so a quote can be
cited to "Pasal 3 ayat (2) huruf b". Text outside any Pasal is packed into blocks.

How lists nest is read from the document, not fixed: an ayat holds huruf lists ("Pasal 3
ayat (1) huruf b"), which may hold angka lists ("Pasal 7 ayat (1) huruf a angka 2"), but Pasal
1's definitions are an angka list whose items may hold huruf lists ("Pasal 1 angka 5 huruf
a", then "Pasal 1 angka 6"). See `RegulationSplitter._open_item` for the rule.

In an amending regulation, the articles quoted inside "Pasal I" are nested under the
numbered instruction that quotes them ("Pasal I angka 1 › Pasal 14"): they are the amended
text of another regulation, not this one's Pasal 14.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..types import Span
from .blocks import pack_loose_lines
from .units import Line, Unit

_BAB = re.compile(r"^\s*(BAB|CHAPTER)\s+([IVXLC]+|\d+)\b\.?\s*(.*)$")
_BAGIAN = re.compile(r"^\s*(Bagian\s+Ke\w+|Paragraf\s+\d+|Part\s+(?:One|Two|Three|Four|Five|Six|Seven|Eight|Nine|"
                     r"Ten|\d+)|Section\s+\d+)\s*$")
# a heading written on one line with its title, or after the last sentence of the Pasal before it, as the shared
# statute book's texts have them ("Bagian Kesatu Perlindungan Paragraf 1 Penyandang Cacat"; "… yang berlaku. Paragraf
# 2 Anak"): the ordinal is spelt out, so "Bagian Keuangan menyusun …" is no heading
_ORDINAL = (r"Ke(?:satu|dua|tiga|empat|lima|enam|tujuh|delapan|sembilan|sepuluh|sebelas)"
            r"(?:\s+(?:Belas|Puluh(?:\s+(?:Satu|Dua|Tiga|Empat|Lima|Enam|Tujuh|Delapan|Sembilan))?))?")
_HEADING_WORD = re.compile(rf"\b(?:BAB\s+[IVXLC]+|Bagian\s+{_ORDINAL}|Paragraf\s+\d+)\b")
_PASAL = re.compile(r"^\s*(?:-\s*\d+\s*-?\s*)?((?:Pasal|Article)\s+(\d+[A-Z]?|[IVXL]+))\s*$")
# the enacting formula run on into the first article on one line, as some scans of the statute book have it (UU 45/2009:
# "… M E M U T U S K A N: Menetapkan : UNDANG-UNDANG TENTANG PERUBAHAN ATAS … PERIKANAN. PASAL I Beberapa ketentuan
# …"): the first article (I or 1) right after the formula's one sentence. The sentence may name an instrument by its
# number ("UNDANG-UNDANG DARURAT NO. 17 TAHUN 1951", "STAATSBLAD UNTUK 1954 No. 12": the abbreviation's stop is no
# end of it); any other stop inside it followed by a space ("berikut: I. Pasal 4 ditambah …") is no such formula, and
# the line is read as before
_RUN_IN_ARTICLE = re.compile(r"\bMenetapkan\s*:?\s(?:[^.;:]|\b[Nn][Oo]\.\s(?=\d)|[.;:](?!\s))*[.;:]\s+"
                             r"(?P<article>(?:Pasal|PASAL)\s+(?:I|1))\s+(?=\S)")
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

# a list's kind is its markers' form: inline "b." or "7.", or the explanation's headings "Huruf b", "Angka 7"
_LETTERS, _NUMBERS = "letters", "numbers"
_HEADING_KIND = {"huruf": ("heading", _LETTERS), "letter": ("heading", _LETTERS),
                 "angka": ("heading", _NUMBERS), "point": ("heading", _NUMBERS)}
# the label of loose text (outside any Pasal), by the section it is in
_LOOSE_LABEL = {"preamble": "preamble", "explanation": "general_explanation", "appendix": "appendix",
                "body": "block", "closing": "closing"}


def is_regulation(lines: list[Line]) -> bool:
    """A document with any `Pasal N` line is read as a regulation."""
    return any(_PASAL.match(ln.text) for ln in lines)


def read_regulation(lines: list[Line], labels: dict[str, str], max_chars: int) -> list[Unit]:
    return RegulationSplitter(labels, max_chars).read(lines)


class RegulationSplitter:
    """Splits a regulation into units, reading it line by line. Each kind of line has its method; whatever starts a new
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
        self.ayat: int | None = None  # index in current.spans of the open ayat
        self.lists: list[_OpenList] = []  # the open huruf/angka lists, outermost first

    def read(self, lines: list[Line]) -> list[Unit]:
        following = iter([ln for ln in lines if not ln.blank][1:] + [None])  # each non-blank line's next one
        for line in lines:
            pieces = None if line.blank else self._headings_in(line, next(following))
            if pieces is None and (run_in := self._run_in_article(line)) is not None:
                before, (heading, m), after = run_in
                for piece in before:
                    self._read_line(piece)
                self._pasal(heading, m)
                if after is not None:
                    self._read_line(after)
                continue
            if pieces is None:
                self._read_line(line)
                continue
            body, headings = pieces
            if body is not None:
                self._read_line(body)
            for heading in headings:
                self._heading(heading)
        self._close_unit()
        return self.units

    def _headings_in(self, line: Line, after: Line | None) -> tuple[Line | None, list[Line]] | None:
        """A body line that holds headings the plain patterns miss (the title on the same line, several headings on
        one line, or headings after the Pasal's last sentence): the text before them, if any, and one line per
        heading, each with its title. Only where a Pasal or another heading follows (or nothing), outside an
        amending article; None for any other line."""
        if self.section not in ("body", "preamble") or self.amending is not None:
            return None
        if self.section == "preamble" and not _BAB.match(line.text):
            return None  # the body begins with its first BAB or Pasal
        if after is not None and not (_PASAL.match(after.text) or _BAB.match(after.text)
                                      or _HEADING_WORD.match(after.text.strip())):
            return None
        text = line.text
        if text.rstrip()[-1] in ".;:,":
            return None  # a heading's title is no sentence: "Paragraf 3 tidak berlaku." is the Pasal's text
        starts = [m.start() for m in _HEADING_WORD.finditer(text)]
        first = next((k for k in starts if not text[:k].strip() or re.search(r"[.;:]\s+$", text[:k])), None)
        if first is None:
            return None
        starts = [k for k in starts if k >= first]
        if not text[:first].strip() and len(starts) == 1 and (_BAB.match(text) or _BAGIAN.match(text)):
            return None  # one heading alone on its line (its title, if any, on the next): read as before
        body = None
        if text[:first].strip():
            kept = text[:first].rstrip()
            body = Line(line.start, line.start + len(kept), kept)
        headings = []
        for a, b in zip(starts, starts[1:] + [len(text)]):
            piece = text[a:b].rstrip()
            headings.append(Line(line.start + a, line.start + a + len(piece), piece))
        return body, headings

    def _run_in_article(self, line: Line) -> tuple[list[Line], tuple[Line, re.Match], Line | None] | None:
        """A preamble line that runs the enacting formula on into the first article (`_RUN_IN_ARTICLE`): the pieces
        before the article (the text before the formula, the formula), the article's heading as `_pasal` reads it
        ("PASAL I" named "Pasal I"; its place is the source's) and the text after it; None for any other line."""
        if self.section != "preamble" or (m := _RUN_IN_ARTICLE.search(line.text)) is None:
            return None
        text = line.text

        def piece(a: int, b: int) -> Line | None:
            kept = text[a:b].strip()
            if not kept:
                return None
            a += len(text[a:b]) - len(text[a:b].lstrip())
            return Line(line.start + a, line.start + a + len(kept), kept)
        word, number = m["article"].split()
        named = f"{word[0]}{word[1:].lower()} {number}"
        heading = Line(line.start + m.start("article"), line.start + m.end("article"), named)
        before = [x for x in (piece(0, m.start()), piece(m.start(), m.start("article"))) if x is not None]
        return before, (heading, _PASAL.match(named)), piece(m.end(), len(text))

    def _heading(self, line: Line) -> None:
        """A heading `_headings_in` cut out, with its title: a BAB, a Bagian or a Paragraf."""
        if m := _BAB.match(line.text):
            self._bab(m)
        else:
            self._part(" ".join(line.text.split()))

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
        self._part(m.group(1))

    def _part(self, name: str) -> None:
        """Bagian (Part) sits under a BAB, Paragraf (Section) under a Bagian."""
        self._close_unit()
        level = 1 if name.startswith(("Bagian", "Part")) else 2
        self.headings = self.headings[:level] + [name]

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
        self.ayat = None
        self.lists.clear()
        if self.loose:
            name = self.labels[_LOOSE_LABEL[self.section]]
            self.units.extend(pack_loose_lines(self.loose, name, " › ".join(self.headings), self.labels,
                                               self.max_chars))
            self.loose.clear()

    # -- lines inside a unit -------------------------------------------------------------

    def _body_line(self, line: Line) -> None:
        """A non-blank line of the current unit: it may open an ayat, huruf or angka span, and
        every open span (the ayat, and the latest item of each open list) now runs to its end."""
        self._open_span_at(line)
        current = self.current
        current.end = line.end
        for k in self._open_spans():
            sp = current.spans[k]
            current.spans[k] = Span(sp.label, sp.start, line.end)

    def _open_spans(self) -> list[int]:
        return ([] if self.ayat is None else [self.ayat]) + [lst.item for lst in self.lists]

    def _open_span_at(self, line: Line) -> None:
        text, location = line.text, self.current.location
        explained = _EXPLAINED_PART.match(text) if self.section == "explanation" else None
        if explained:  # "Ayat (1)", "Huruf a" heading its explanation
            word, number = explained.group(1), explained.group(2)
            if word.lower() in _HEADING_KIND:
                self._open_item(_HEADING_KIND[word.lower()], word.lower(), number, line, word)
            else:
                self._open_ayat(f"{location} {word.lower()} {number}", line, word)
        elif m := _AYAT.match(text):
            self._open_ayat(f"{location} {self.labels['ayat']} ({m.group(1)})", line, "(")
        elif m := _HURUF.match(text):
            self._open_item(("inline", _LETTERS), self.labels["huruf"], m.group(1), line, m.group(1))
        elif m := _ANGKA.match(text):
            self._open_item(("inline", _NUMBERS), self.labels["angka"], m.group(1), line, m.group(1))

    def _open_ayat(self, label: str, line: Line, marker: str) -> None:
        """An ayat closes every open list and the previous ayat."""
        self.lists.clear()
        self.ayat = self._add_span(label, line, marker)

    def _open_item(self, kind: tuple[str, str], word: str, value: str, line: Line, marker: str) -> None:
        """A huruf or angka item. Where it sits is read from the lists already open, innermost first:

        - the next item of an open list of its kind ("b." after "a.", "7." after "6."): that list's
          next item, and every list nested deeper closes;
        - else a first item ("a.", "1."): a new list, nested in the innermost open item of another
          kind (or in the ayat, or the Pasal, when there is none). A list never nests in an item of
          its own kind: an "a." under an open huruf item restarts a huruf list at that item's level
          (what came between, a Pasal heading or an ayat number, was lost to OCR);
        - else (a marker OCR dropped or misread: "13." after "10."): the next item of the innermost
          open list of its kind, else a new list as above.
        """
        lists = self.lists
        at = next((k for k in reversed(range(len(lists)))
                   if lists[k].kind == kind and _follows(lists[k].last, value, kind[1])), None)
        if at is None and not _is_first(value):
            at = next((k for k in reversed(range(len(lists))) if lists[k].kind == kind), None)
        if at is not None:
            del lists[at + 1:]
            parent = lists[at].parent
        else:
            holder = next((k for k in reversed(range(len(lists))) if lists[k].kind != kind), None)
            del lists[0 if holder is None else holder + 1:]
            held_in = self.ayat if holder is None else lists[holder].item
            parent = self.current.location if held_in is None else self.current.spans[held_in].label
        index = self._add_span(f"{parent} {word} {value}", line, marker)
        if at is not None:
            lists[at].last, lists[at].item = value, index
        else:
            lists.append(_OpenList(kind, parent, value, index))

    def _add_span(self, label: str, line: Line, marker: str) -> int:
        self.current.spans.append(Span(label, line.start + line.text.index(marker), line.end))
        return len(self.current.spans) - 1


@dataclass
class _OpenList:
    """A huruf or angka list being read: its items are labelled "{parent} {word} {marker}"."""
    kind: tuple[str, str]  # ("inline" | "heading", letters | numbers)
    parent: str  # the label of the item, ayat or unit it is nested in
    last: str  # its latest item's marker: "b", "7"
    item: int  # index in current.spans of that item's span


def _is_first(value: str) -> bool:
    return value.lower() == "a" or (value.isdigit() and int(value) == 1)


def _follows(last: str, value: str, kind: str) -> bool:
    """Whether `value` is the marker right after `last`: "b" after "a", "7" after "6"."""
    if kind == _LETTERS:
        return len(last) == len(value) == 1 and ord(value.lower()) == ord(last.lower()) + 1
    return last.isdigit() and value.isdigit() and int(value) == int(last) + 1
