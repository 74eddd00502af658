"""One sentence stated in several places: a regulation that says one rule for two cases in the same words (PP 34/2021
Pasal 14(4) and 15(4)), or laws that write one definition alike (UU 24/2011 and PP 44/2015's "Pemberi Kerja adalah
…"). The extractive generator quotes every place in one claim (backends/lite.py, `_restated_places` and
`_restated_definitions`); a claim's citations that restate an earlier one are known by `restating`, kept only where
they stand as the claim's own provision does (status.dated), not taken for what the claim states
(`stated_citation`), and marked as the same sentence again where an answer is shown (responses.Citation
`restates`, rendering/answer_text.py).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from .answer_reader.answers import without_label
from .citations import stated
from .definitions import restated, term_key
from .references import extract_references
from .types import CitationCheck, VerifiedClaim

MIN_RESTATED_WORDS = 6  # shorter quotes ("Cukup jelas.") say too little to be the same rule


def own_pasal_reference(text: str) -> bool:
    """Whether a text refers to a part of its own Pasal ("sebagaimana dimaksud pada ayat (1)", "dalam huruf a":
    `references.Reference.relative`). The same words mean another thing in another Pasal."""
    return any(r.relative for r in extract_references(text))


def restates(quote: str, other: str) -> bool:
    """Whether a quote states what another does, in the same words: a regulation that says one rule for two cases
    in two places (PP 34/2021 Pasal 14(4) and 15(4): "Data calon TKA dan dokumen dilakukan verifikasi … paling lama 2
    (dua) hari kerja."). Word for word as `definitions.restated` reads two definitions (a spelling slip, a scan's split
    word, a reduplicated plural or an acronym aside; any other word added, dropped or changed is another rule), each
    without the ayat or item label it opens with (`answers.without_label`), at least `MIN_RESTATED_WORDS` words long,
    and neither referring to a part of its own Pasal (`own_pasal_reference`: "Ketentuan lebih lanjut mengenai tata
    cara sebagaimana dimaksud pada ayat (1) …" says something else in each Pasal that writes it)."""
    a, b = without_label(quote.strip())[1], without_label(other.strip())[1]
    ka, kb = term_key(a), term_key(b)
    return (len(ka.split()) >= MIN_RESTATED_WORDS and restated(ka, kb)
            and not own_pasal_reference(a) and not own_pasal_reference(b))


def restating(claim: VerifiedClaim) -> tuple[bool, ...]:
    """Per citation of the claim: whether its quote restates an earlier citation's (`restates`): the claim's sentence
    where another place states it too, not what the claim itself is cited for."""
    quotes = [x.quote for x in claim.citations]
    return tuple(any(restates(q, p) for p in quotes[:i]) for i, q in enumerate(quotes))


def restatements_kept(claim: VerifiedClaim, keep: Callable[[CitationCheck], bool]) -> VerifiedClaim:
    """The claim without the citations that restate an earlier one (`restating`) where `keep` says no (a place that
    does not stand as the claim's own provision does: pipeline/status.dated)."""
    kept = tuple(x for x, again in zip(claim.citations, restating(claim)) if not again or keep(x))
    return claim if len(kept) == len(claim.citations) else replace(claim, citations=kept)


def stated_citation(claim: VerifiedClaim):
    """The innermost citation of what the claim itself states: the last one whose quote its text holds (an item
    after its lead-in), not one quoted beside it (a provision it refers to, an ayat bound to it, another place that
    states the same sentence: `restatements.restating`); else the first."""
    own = [x for x, s, again in zip(claim.citations, stated(claim), restating(claim)) if s and not again]
    return own[-1] if own else claim.citations[0]
