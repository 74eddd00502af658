"""Paragraph-aware chunking: one numbered paragraph, or one Pasal with its ayat, per chunk.

A citation is only as good as its location, so chunks follow the document's own
structure. Regulations (any `Pasal N` line) are cut at Pasal, with each ayat recorded as
a span so a quote can be cited to "Pasal 3 ayat (2)". Standards are cut at numbered
paragraphs ("12.", "B12.", "5.5.1"). Anything else is cut at blank lines and packed.
A unit longer than the limit is split at ayat boundaries, then at sentences — never
elsewhere. Every chunk is an exact slice of the file text.

Reading the structure into units is regulation.py's and blocks.py's job (shared types in
units.py); this module splits oversized units and builds the chunks.
"""
from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from ..citations import chunk_path
from ..text import split_sentences, trim_span
from ..types import Chunk, Document, Span
from .blocks import read_blocks
from .regulation import is_regulation, read_regulation
from .units import EXAMPLE_WORDS, LABELS, Unit, split_lines

if TYPE_CHECKING:
    from .source import SourceFile

__all__ = ["Chunker", "chunk_id", "LABELS", "MIN_WORDS"]

_WORDS = re.compile(r"[^\W\d_]{3,}")
MIN_WORDS = 3  # a chunk with fewer real words carries no citable statement


def chunk_id(doc_id: str, location: str, text: str) -> str:
    """Stable id: the same document, place and words always give the same id."""
    return hashlib.sha256(f"{doc_id}\x1f{location}\x1f{text}".encode("utf-8")).hexdigest()[:32]


class Chunker:
    """Units (regulation.py, blocks.py) → chunks of at most `max_chars`, each an exact slice of the text."""

    def __init__(self, max_chars: int = 1500):
        self.max_chars = max_chars

    def units(self, text: str, body_start: int, lang: str) -> list[Unit]:
        """The document's citable places, read as a regulation if it has any Pasal."""
        lines = split_lines(text, body_start)
        labels = LABELS.get(lang, LABELS["id"])
        if is_regulation(lines):
            return read_regulation(lines, labels, self.max_chars)
        return read_blocks(lines, labels, self.max_chars)

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
                start, end = trim_span(text, start, end)
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
                    is_example=unit.is_example or bool(EXAMPLE_WORDS.match(body)),
                    heading=unit.heading, spans=rel_spans, authority=document.authority,
                    published=document.made,
                    rendition=document.rendition or document.original,
                    path=chunk_path(doc_name, document.title, unit.heading),
                    page=source.pages(start, end) if source else None,
                    page_breaks=source.page_breaks(start, end) if source else (),
                    original_span=source.origin(start, end) if source else None, original=document.original,
                ))
        return out

    def _split(self, unit: Unit, text: str, labels: dict[str, str]):
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
                location = _span_range(group[0].label, group[-1].label)
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


def _span_range(first: str, last: str) -> str:
    """The name of a piece from span `first` to span `last`: "Pasal 1 angka 1–9", "Pasal 3 ayat (1)–(4)";
    where their lists differ, the last is named from where they part ("Pasal 15 huruf a–ayat (4)")."""
    if first == last:
        return first
    a, b = first.split(" "), last.split(" ")
    same = 0
    while same < min(len(a), len(b)) - 1 and a[same] == b[same]:
        same += 1
    return f"{first}–{' '.join(b[same:])}"


