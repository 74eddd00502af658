"""Paragraph-aware chunking: one numbered paragraph, or one Pasal with its ayat, per chunk.

A citation is only as good as its location, so chunks follow the document's own
structure. Regulations (any `Pasal N` line) are cut at Pasal, with each ayat recorded as
a span so a quote can be cited to "Pasal 3 ayat (2)". Standards are cut at numbered
paragraphs ("12.", "B12.", "5.5.1"). Anything else is cut at blank lines and packed.
A unit longer than the limit is split at ayat boundaries, then at sentences — never
elsewhere. Every chunk is an exact slice of the file text.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..citations import chunk_path
from ..text import split_sentences
from ..types import Chunk, Document, Span

if TYPE_CHECKING:
    from .reader import SourceFile

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
# Indonesian regulations and their English translations (Chapter/Part/Article/Elucidation/Attachment)
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
_NUMBERED = re.compile(r"^\s*((?:[A-Z]{1,2})?\d{1,3}\.(?=\s)|\d{1,3}(?:\.\d{1,3}){1,3}(?=\s))\s*")
_WORDS = re.compile(r"[^\W\d_]{3,}")
MIN_WORDS = 3  # a chunk with fewer real words carries no citable statement
_EXAMPLE_WORDS = re.compile(r"^\W*(contoh|ilustrasi|example|illustration)s?\b", re.IGNORECASE)
_EXAMPLE_HEADING = re.compile(r"\b(contoh|ilustrasi|examples?|illustrat\w*)\b", re.IGNORECASE)

LABELS = {
    "id": {"paragraph": "paragraf", "preamble": "pembukaan", "closing": "penutup", "explanation": "Penjelasan",
           "general_explanation": "Penjelasan Umum", "appendix": "Lampiran", "block": "alinea", "part": "bagian",
           "ayat": "ayat", "huruf": "huruf", "angka": "angka"},
    "en": {"paragraph": "paragraph", "preamble": "preamble", "closing": "closing", "explanation": "Explanation",
           "general_explanation": "General Explanation", "appendix": "Appendix", "block": "block", "part": "part",
           "ayat": "paragraph", "huruf": "letter", "angka": "point"},
}


@dataclass
class _Line:
    start: int
    end: int  # excludes the line break
    text: str

    @property
    def blank(self) -> bool:
        return not self.text.strip()


@dataclass
class _Unit:
    location: str
    start: int
    end: int
    heading: str
    is_example: bool = False
    spans: list[Span] = field(default_factory=list)  # offsets absolute in the file text


def _lines(text: str, offset: int) -> list[_Line]:
    out: list[_Line] = []
    pos = offset
    for raw in text[offset:].splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        out.append(_Line(pos, pos + len(body), body))
        pos += len(raw)
    return out


def chunk_id(doc_id: str, location: str, text: str) -> str:
    """Stable id: the same document, place and words always give the same id."""
    return hashlib.sha256(f"{doc_id}\x1f{location}\x1f{text}".encode("utf-8")).hexdigest()[:32]


class Chunker:
    def __init__(self, max_chars: int = 1500):
        self.max_chars = max_chars

    # -- structure ----------------------------------------------------------------------

    def units(self, text: str, body_start: int, lang: str) -> list[_Unit]:
        lines = _lines(text, body_start)
        labels = LABELS.get(lang, LABELS["id"])
        if any(_PASAL.match(ln.text) for ln in lines):
            return self._regulation_units(lines, labels)
        return self._block_units(lines, labels)

    def _regulation_units(self, lines: list[_Line], labels: dict[str, str]) -> list[_Unit]:
        """Pasal by Pasal under BAB › Bagian › Paragraf headings; ayat, huruf and angka as spans.

        In an amending regulation, the articles quoted inside "Pasal I" are nested under the
        numbered instruction that quotes them ("Pasal I angka 1 › Pasal 14"): they are the
        amended text of another regulation, not this one's Pasal 14.
        """
        units: list[_Unit] = []
        headings: list[str] = []
        section = "preamble"  # preamble | body | closing | explanation | appendix
        current: _Unit | None = None
        loose: list[_Line] = []  # text outside any Pasal: preamble, general explanation, appendix
        expect_bab_title = False
        amending: str | None = None  # "Pasal I" while inside an amending article
        instruction: str | None = None  # "Pasal I angka 1" while inside one of its instructions
        open_: dict[int, str] = {}  # labels of the open ayat (0), huruf (1) and angka (2) spans

        def close() -> None:
            nonlocal current
            if current is not None:
                units.append(current)
                current = None
            open_.clear()

        def flush_loose() -> None:
            if loose:
                name = {"preamble": labels["preamble"], "explanation": labels["general_explanation"],
                        "appendix": labels["appendix"], "body": labels["block"], "closing": labels["closing"]}[section]
                units.extend(self._pack(loose, name, " › ".join(headings), labels))
                loose.clear()

        def open_span(level: int, label: str, ln: _Line, t: str, at: str) -> None:
            for k in [k for k in open_ if k >= level]:
                del open_[k]
            open_[level] = label
            current.spans.append(Span(label, ln.start + t.index(at), ln.end))

        for ln in lines:
            t = ln.text
            if expect_bab_title and not ln.blank:
                expect_bab_title = False
                if t.strip().isupper() and not _PASAL.match(t):
                    headings[-1] = f"{headings[-1]} {t.strip()}"
                    continue
            if _PENJELASAN.match(t):
                close(); flush_loose()
                section, headings, amending, instruction = "explanation", [t.strip()], None, None
                continue
            if _LAMPIRAN.match(t) and section != "preamble":
                close(); flush_loose()
                section, headings, amending, instruction = "appendix", [t.strip()], None, None
                continue
            m = _PREAMBLE_PART.match(t) if section == "preamble" else None
            if m:
                close(); flush_loose()
                current = _Unit(m.group(1).capitalize(), ln.start + t.index(m.group(1)), ln.end, "")
                continue
            if _CLOSING.match(t) and section == "body":
                close(); flush_loose()
                section, headings, amending, instruction = "closing", [], None, None
                loose.append(ln)
                continue
            m = _BAB.match(t)
            if m and amending is None and section != "closing":
                close(); flush_loose()
                headings = [f"{m.group(1)} {m.group(2)}" + (f" {m.group(3).strip()}" if m.group(3).strip() else "")]
                expect_bab_title = not m.group(3).strip()
                if section == "preamble":
                    section = "body"
                continue
            m = _BAGIAN.match(t)
            if m and section != "appendix" and amending is None:
                close(); flush_loose()
                level = 1 if m.group(1).startswith(("Bagian", "Part")) else 2
                headings = headings[:level] + [m.group(1)]
                continue
            m = _PASAL.match(t)
            if m and section not in ("appendix", "closing"):
                number = m.group(2)
                close(); flush_loose()
                if section == "preamble":
                    section = "body"
                name = m.group(1)
                if section == "body" and _ROMAN.match(number):
                    amending, instruction = name, None
                elif amending is not None:
                    name = f"{instruction or amending} › {name}"  # the amended article, quoted in full
                if section == "explanation":
                    name = f"{labels['explanation']} {name}"
                start = ln.start + t.index(m.group(1))
                current = _Unit(name, start, ln.end, " › ".join(headings))
                continue
            a = _AMENDMENT.match(t) if amending is not None else None
            if a:
                close(); flush_loose()
                instruction = f"{amending} {labels['angka']} {a.group(1)}"
                current = _Unit(instruction, ln.start + t.index(a.group(1)), ln.end, " › ".join(headings))
                continue
            if current is not None:
                if not ln.blank:
                    m = _AYAT.match(t)
                    e = _EXPLAINED_PART.match(t) if section == "explanation" else None
                    if e:
                        level = {"ayat": 0, "paragraph": 0, "huruf": 1, "letter": 1}.get(e.group(1).lower(), 2)
                        parent = current.location if level == 0 else (open_.get(level - 1) or open_.get(0)
                                                                       or current.location)
                        open_span(level, f"{parent} {e.group(1).lower()} {e.group(2)}", ln, t, e.group(1))
                    elif m:
                        open_span(0, f"{current.location} {labels['ayat']} ({m.group(1)})", ln, t, "(")
                    elif (m := _HURUF.match(t)) is not None:
                        parent = open_.get(0, current.location)
                        open_span(1, f"{parent} {labels['huruf']} {m.group(1)}", ln, t, m.group(1))
                    elif (m := _ANGKA.match(t)) is not None:
                        parent = open_.get(1) or open_.get(0, current.location)
                        open_span(2, f"{parent} {labels['angka']} {m.group(1)}", ln, t, m.group(1))
                    current.end = ln.end
                    for k, sp in enumerate(current.spans):  # open ayat/huruf/angka run to the last line seen
                        if sp.label in open_.values():
                            current.spans[k] = Span(sp.label, sp.start, ln.end)
            else:
                loose.append(ln)
        close(); flush_loose()
        return units

    def _block_units(self, lines: list[_Line], labels: dict[str, str]) -> list[_Unit]:
        """Standards (numbered paragraphs) and plain prose (blocks between blank lines)."""
        units: list[_Unit] = []
        headings: dict[int, str] = {}
        current: _Unit | None = None
        loose: list[_Line] = []
        at_block_start = True

        def heading_path() -> str:
            return " › ".join(headings[k] for k in sorted(headings))

        def in_example_section() -> bool:
            return any(_EXAMPLE_HEADING.search(h) for h in headings.values())

        def close() -> None:
            nonlocal current
            if current is not None:
                units.append(current)
                current = None

        def flush_loose() -> None:
            if loose:
                packed = self._pack(loose, heading_path() or labels["block"], heading_path(), labels)
                for u in packed:
                    u.is_example = u.is_example or in_example_section()
                units.extend(packed)
                loose.clear()

        for ln in lines:
            t = ln.text
            if ln.blank:
                at_block_start = True
                if current is None:
                    loose.append(ln)
                continue
            h = _HEADING.match(t)
            if h:
                close(); flush_loose()
                level = len(h.group(1))
                headings = {k: v for k, v in headings.items() if k < level}
                headings[level] = h.group(2).strip()
                at_block_start = True
                continue
            n = _NUMBERED.match(t) if at_block_start else None
            at_block_start = False
            if n:
                close(); flush_loose()
                number = n.group(1).rstrip(".")
                rest = t[n.end():]
                current = _Unit(f"{labels['paragraph']} {number}", ln.start + t.index(n.group(1)), ln.end,
                                heading_path(),
                                is_example=bool(_EXAMPLE_WORDS.match(rest)) or in_example_section())
                continue
            if current is not None:
                current.end = ln.end
            else:
                loose.append(ln)
        close(); flush_loose()
        return units

    def _pack(self, lines: list[_Line], name: str, heading: str, labels: dict[str, str]) -> list[_Unit]:
        """Group loose lines into blocks (blank-line separated), packed up to the size limit."""
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
        units: list[_Unit] = []
        group: list[tuple[int, int]] = []

        def flush() -> None:
            if group:
                units.append(_Unit("", group[0][0], group[-1][1], heading))
                group.clear()

        text_of = {ln.start: ln.text for ln in lines}
        for b in blocks:
            if _EXAMPLE_WORDS.match(text_of.get(b[0], "")):  # an example never shares a chunk with a rule
                flush()
                units.append(_Unit("", b[0], b[1], heading, is_example=True))
                continue
            if group and b[1] - group[0][0] > self.max_chars:
                flush()
            group.append(b)
        flush()
        for i, u in enumerate(units, 1):
            u.location = name if len(units) == 1 else f"{name} {labels['block']} {i}"
        return units

    # -- chunks ---------------------------------------------------------------------------

    def chunks(self, document: Document, text: str, body_start: int = 0,
               source: "SourceFile | None" = None) -> list[Chunk]:
        """Chunks of `text` (the document's rendition); `source` maps them back to pages and the original."""
        labels = LABELS.get(document.lang, LABELS["id"])
        doc_name = document.cite_as or document.title
        out: list[Chunk] = []
        seen: set[str] = set()
        for unit in self.units(text, body_start, document.lang):
            unit_key = f"{document.doc_id}#{unit.location}"
            for location, start, end, spans in self._split(unit, text, labels):
                start, end = _trim(text, start, end)
                if start >= end:
                    continue
                body = text[start:end]
                if len(_WORDS.findall(body)) < MIN_WORDS:  # page furniture, stray ayat numbers
                    continue
                cid = chunk_id(document.doc_id, location, body)
                if cid in seen:  # the same words at the same place: one chunk
                    continue
                seen.add(cid)
                rel_spans = tuple(Span(s.label, max(s.start, start) - start, min(s.end, end) - start)
                                  for s in spans if s.end > start and s.start < end)
                out.append(Chunk(
                    chunk_id=cid, doc_id=document.doc_id, title=document.title, location=location, text=body,
                    lang=document.lang, unit=unit_key, ordinal=len(out), start=start, end=end,
                    is_example=unit.is_example or bool(_EXAMPLE_WORDS.match(body)),
                    heading=unit.heading, spans=rel_spans, authority=document.authority,
                    published=document.published, source_path=document.rendition or document.path,
                    path=chunk_path(doc_name, document.title, unit.heading),
                    page=source.pages(start, end) if source else None,
                    page_breaks=source.page_breaks(start, end) if source else (),
                    origin=source.origin(start, end) if source else None, document_path=document.path,
                ))
        return out

    def _split(self, unit: _Unit, text: str, labels: dict[str, str]):
        """Yield (location, start, end, spans) pieces of a unit, each within the size limit."""
        if unit.end - unit.start <= self.max_chars:
            yield unit.location, unit.start, unit.end, unit.spans
            return
        # split between the outermost spans (ayat, else the Pasal's own huruf/angka); nested ones ride along
        top = [s for s in unit.spans if not any(o is not s and o.start <= s.start and s.end <= o.end
                                                    and len(o.label) < len(s.label) for o in unit.spans)]
        pieces: list[tuple[int, int, list[Span]]] = []
        if len(top) >= 2:
            group: list[Span] = []
            gstart = unit.start
            for s in top:
                if group and s.end - gstart > self.max_chars:
                    pieces.append((gstart, group[-1].end, group))
                    group, gstart = [], s.start
                group.append(s)
            pieces.append((gstart, unit.end, group))
        else:
            pieces.append((unit.start, unit.end, list(top)))
        out: list[tuple[str, int, int, list[Span]]] = []
        for start, end, group in pieces:
            location = unit.location
            if group and len(group) < len(top):
                first, last = group[0].label, group[-1].label
                location = first if first == last else f"{first}–{last.rsplit(' ', 1)[-1]}"
            spans = [s for s in unit.spans if s.start < end and start < s.end]
            if end - start <= self.max_chars:
                out.append((location, start, end, spans))
                continue
            parts = self._sentence_pieces(text, start, end)
            for i, (a, b) in enumerate(parts, 1):
                loc = location if len(parts) == 1 else f"{location} ({labels['part']} {i}/{len(parts)})"
                out.append((loc, a, b, spans))
        yield from out

    def _sentence_pieces(self, text: str, start: int, end: int) -> list[tuple[int, int]]:
        """Sentences packed into pieces of similar size, none over the limit."""
        sentences: list[tuple[int, int]] = []
        for s in split_sentences(text[start:end]):
            a, b = start + s.start, start + s.end
            while b - a > self.max_chars:  # one sentence over the limit: cut at whitespace
                cut = text.rfind(" ", a, a + self.max_chars)
                cut = cut if cut > a else a + self.max_chars
                sentences.append((a, cut))
                a = cut
            sentences.append((a, b))
        total = end - start
        target = -(-total // -(-total // self.max_chars))  # ceil(total / number of pieces needed)
        pieces: list[tuple[int, int]] = []
        cur: tuple[int, int] | None = None
        for a, b in sentences:
            if cur is not None and (b - cur[0] > self.max_chars or cur[1] - cur[0] >= target):
                pieces.append(cur)
                cur = None
            cur = (a, b) if cur is None else (cur[0], b)
        if cur is not None:
            pieces.append(cur)
        return pieces


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
