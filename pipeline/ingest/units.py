"""What the structure readers share: the lines they read and the units they produce.

A unit is one citable place in a document (a Pasal, a numbered paragraph, a block of
prose) as offsets into the file text; the chunker turns units into chunks. The readers
are regulation.py (Pasal, ayat, huruf, angka) and blocks.py (standards and plain prose).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..types import Span

# the words locations are written in, per document language
LABELS = {
    "id": {"paragraph": "paragraf", "preamble": "pembukaan", "closing": "penutup", "explanation": "Penjelasan",
           "general_explanation": "Penjelasan Umum", "appendix": "Lampiran", "block": "alinea", "part": "bagian",
           "ayat": "ayat", "huruf": "huruf", "angka": "angka"},
    "en": {"paragraph": "paragraph", "preamble": "preamble", "closing": "closing", "explanation": "Explanation",
           "general_explanation": "General Explanation", "appendix": "Appendix", "block": "block", "part": "part",
           "ayat": "paragraph", "huruf": "letter", "angka": "point"},
}

# a worked example ("Contoh: ...") is flagged, so an answer never passes it off as the rule
EXAMPLE_WORDS = re.compile(r"^\W*(contoh|ilustrasi|example|illustration)s?\b", re.IGNORECASE)


@dataclass
class Line:
    start: int
    end: int  # excludes the line break
    text: str

    @property
    def blank(self) -> bool:
        return not self.text.strip()


@dataclass
class Unit:
    location: str
    start: int
    end: int
    heading: str
    is_example: bool = False
    spans: list[Span] = field(default_factory=list)  # offsets absolute in the file text


def split_lines(text: str, offset: int) -> list[Line]:
    """The lines of `text` from `offset` on, each with its absolute offsets."""
    out: list[Line] = []
    pos = offset
    for raw in text[offset:].splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        out.append(Line(pos, pos + len(body), body))
        pos += len(raw)
    return out
