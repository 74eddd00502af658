"""Citation paths: how a receipt names the place a quote comes from.

"PMK 98/2025 › BAB II › Pasal 3 › ayat (2), p. 4": the document's citation name, its
headings, the unit and the innermost ayat/huruf/angka span that holds the whole quote, and
the pages the quote sits on. Ingest writes each chunk's path (`chunk_path`); the gates,
the decision and the corpus views read it back (`cite_path`, `cited_location`,
`quote_pages`), so a receipt is built in one way wherever it is shown.
"""
from __future__ import annotations

import re

from .text import normalise
from .types import Chunk, VerifiedClaim

_LEVELS = re.compile(r" (?=(?:ayat|huruf|angka|paragraph|letter|point) [(\w])")


def chunk_path(doc_name: str, title: str, heading: str) -> str:
    """Document › headings, without repeating a first heading that is the document's title."""
    parts = [h for h in heading.split(" › ") if h] if heading else []
    first = parts[0].strip().lower() if parts else ""
    if first and (first == title.strip().lower() or first.startswith(doc_name.strip().lower())):
        parts = parts[1:]
    return " › ".join([doc_name, *parts])


def cite_path(chunk: Chunk, label: str | None = None) -> str:
    """The receipt a reviewer checks: "PMK 98/2025 › BAB II › Pasal 3 › ayat (2)"."""
    label = label or chunk.location
    if label == chunk.heading:  # a block named after its section: the path already says it
        return chunk.path
    steps = _LEVELS.split(label)
    return " › ".join(p for p in (chunk.path, *steps) if p)


def cited_location(chunk: Chunk, where: tuple[int, int] | None) -> str:
    """The most precise location of a quote found at `where` (offsets in chunk.text): the
    innermost ayat/huruf/angka span holding all of it, else the chunk's."""
    if where:
        inside = [s for s in chunk.spans if s.start <= where[0] and where[1] <= s.end]
        if inside:
            return min(inside, key=lambda s: s.end - s.start).label
    return chunk.location


def quote_pages(chunk: Chunk, where: tuple[int, int] | None) -> tuple[int, int] | None:
    """The pages a quote at `where` (offsets in chunk.text) sits on; the chunk's when unknown."""
    if chunk.page is None or where is None:
        return chunk.page
    first = chunk.page[0] + sum(1 for b in chunk.page_breaks if b <= where[0])
    last = chunk.page[0] + sum(1 for b in chunk.page_breaks if b < where[1])
    return first, last


def stated(claim: VerifiedClaim) -> tuple[bool, ...]:
    """Per citation of the claim: whether it quotes what the claim itself states (its text holds the quote: the
    sentence, or an item and its lead-in), rather than something quoted beside it (a provision it refers to, an ayat
    bound to it). A claim in other words than its quotes (an LLM's) states none of them."""
    text = normalise(claim.text)
    return tuple(normalise(x.quote) in text for x in claim.citations)

