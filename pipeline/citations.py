"""Citation paths: how a receipt names the place a quote comes from.

"PMK 98/2025 › BAB II › Pasal 3 › ayat (2), p. 4": the document's citation name, its
headings, the unit and the innermost ayat/huruf/angka span that holds the whole quote, and
the pages the quote sits on. Ingest writes each chunk's path (`chunk_path`); the gates,
the decision and the corpus views read it back (`cite_path`, `cited_location`,
`quote_pages`), so a receipt is built in one way wherever it is shown.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable

from .definitions import restated, term_key
from .text import normalise
from .types import CitationCheck, Chunk, VerifiedClaim

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


# --- one sentence stated in several places ---------------------------------------------------------------------------

_MARKER = re.compile(r"^\s*(?:\(\s*\d{1,3}[a-z]?\s*\)|\d{1,3}[.)]|[a-z][.)])\s+")
MIN_RESTATED_WORDS = 6  # shorter quotes ("Cukup jelas.") say too little to be the same rule


_UNIT = re.compile(r"\b(?:ayat|huruf|angka)\b", re.IGNORECASE)
_OF_PASAL = re.compile(r"\bPasal\s+\d+[A-Z]?\s*$", re.IGNORECASE)


def own_pasal_reference(text: str) -> bool:
    """Whether a text refers to a part of its own Pasal ("sebagaimana dimaksud pada ayat (1)", "huruf a"): an ayat,
    huruf or angka that no Pasal number names right before it. The same words mean another thing in another Pasal."""
    return any(not _OF_PASAL.search(text[max(0, m.start() - 16):m.start()]) for m in _UNIT.finditer(text))


def restates(quote: str, other: str) -> bool:
    """Whether a quote states what another does, in the same words: a regulation that says one rule for two cases
    in two places (PP 34/2021 Pasal 14(4) and 15(4): "Data calon TKA dan dokumen dilakukan verifikasi … paling lama 2
    (dua) hari kerja."). Word for word as `definitions.restated` reads two definitions (a spelling slip, a scan's split
    word, a reduplicated plural or an acronym aside; any other word added, dropped or changed is another rule), each
    without the ayat or item marker it opens with, at least `MIN_RESTATED_WORDS` words long, and neither referring to
    a part of its own Pasal (`own_pasal_reference`: "Ketentuan lebih lanjut mengenai tata cara sebagaimana dimaksud
    pada ayat (1) …" says something else in each Pasal that writes it)."""
    a, b = _MARKER.sub("", quote), _MARKER.sub("", other)
    if own_pasal_reference(a) or own_pasal_reference(b):
        return False
    a, b = term_key(a), term_key(b)
    return len(a.split()) >= MIN_RESTATED_WORDS and restated(a, b)


def restating(claim: VerifiedClaim) -> tuple[bool, ...]:
    """Per citation of the claim: whether its quote restates an earlier citation's (`restates`): the claim's sentence
    where another place states it too, not what the claim itself is cited for."""
    quotes = [x.quote for x in claim.citations]
    return tuple(any(restates(q, p) for p in quotes[:i]) for i, q in enumerate(quotes))


def restatements_kept(claim: VerifiedClaim, keep: Callable[[CitationCheck], bool]) -> VerifiedClaim:
    """The claim without the citations that restate an earlier one (`restating`) where `keep` says no (another
    document's, or a place that does not stand as the claim's own provision does: pipeline/status.dated)."""
    kept = tuple(x for x, again in zip(claim.citations, restating(claim)) if not again or keep(x))
    return claim if len(kept) == len(claim.citations) else replace(claim, citations=kept)
