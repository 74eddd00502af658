"""An answer that several regulations give: a question naming none of them, answered from the provisions of two or
more. The answer shows each with its regulation, flagged *ambiguous* (`find_ambiguity`), and states none of them above
RENDAH (`regulations_capped`): which regulation the asker means is what the pipeline does not know. The streamed
answer (pipeline/release.py) decides the same from the same functions: `regulation_documents` tells from the context
alone where no answer could be several regulations', so those stream at once."""
from __future__ import annotations

import re
from typing import Iterable, Mapping, Sequence

from . import status
from .citations import cite_path, cited_location
from .config import ConfidenceSettings
from .answer_reader.answers import item_label
from .definitions import asked_term, quoted_entries
from .restatements import restates, restating, stated_citation
from .subjects import refers, related, sentence_runs
from .text import split_sentences
from .types import Candidate, Chunk, CitationCheck, Conflict, DocumentStatus, VerifiedClaim, is_provision

SEVERAL_REGULATIONS = "several_regulations"  # Confidence.capped_by: two or more regulations answer, none named


def is_provision_chunk(chunks: Mapping[str, Chunk], claim: VerifiedClaim) -> bool:
    """The claim quotes a regulation's unit (its top band is confidence.high_regulation)."""
    c = chunks.get(claim.citations[0].chunk_id) if claim.citations else None
    return c is not None and is_provision(c.location, c.spans)


_REGULATION_UNIT = re.compile(r"^(?:Penjelasan\s+)?(?:Pasal|Article)\s+\w+")


def _own_unit(c: VerifiedClaim, chunks: Mapping[str, Chunk]) -> Chunk | None:
    """The chunk of a supported claim's own provision where it is a regulation's unit (a Pasal, or its elucidation):
    the claim's first citation, not one it follows by cross-reference; None for anything else."""
    if c.status != "supported" or not c.citations:
        return None
    chunk = chunks.get(c.citations[0].chunk_id)
    return chunk if chunk is not None and _REGULATION_UNIT.match(chunk.location) else None


def find_ambiguity(claims: Sequence[VerifiedClaim], chunks: Mapping[str, Chunk], question: str,
                   lang: str, definers: Sequence[Candidate] = (),
                   word_for_word: Mapping[str, CitationCheck] | None = None) -> list[Conflict]:
    """Supported claims drawn from two or more regulations, for a question that names none: each
    regulation answers it (a term defined in several, a duty set by several), so the answer says so
    and shows each with its regulation instead of letting the first stand for all. Only the
    claims' own provisions count (a citation a claim follows by cross-reference does not). For a question
    asking what a term means, `definers` (the candidates that define it, best first) count too: every
    regulation of the collection that defines the term is named, quoted in the answer or not; one whose definition a
    claim quotes as its own sentence again (`restatements.restating`) is named as quoted, and so is a regulation of the
    context writing a claim's sentence word for word (`word_for_word`: `restating_regulations`, as
    `regulations_capped` counts it)."""
    by_doc: dict[str, list[int]] = {}
    again: dict[str, CitationCheck] = {}  # another document's place a claim quotes as the same sentence again
    for i, c in enumerate(claims):
        if (chunk := _own_unit(c, chunks)) is None:
            continue
        by_doc.setdefault(chunk.doc_id, []).append(i)
        for x, again_here in zip(c.citations, restating(c)):
            if again_here and x.doc_id and x.doc_id != chunk.doc_id and x.chunk_id in chunks:
                again.setdefault(x.doc_id, x)
    for d, x in (word_for_word or {}).items():  # a context regulation writing a claim's sentence word for word
        again.setdefault(d, x)
    again = {d: x for d, x in again.items() if d not in by_doc}
    term = asked_term(question)
    unquoted: dict[str, Candidate] = {}  # a regulation that defines the asked term, quoted by no claim
    for c in definers if term and by_doc else ():
        if c.defines and c.chunk.doc_id not in by_doc and c.chunk.doc_id not in again:
            unquoted.setdefault(c.chunk.doc_id, c)
    n = len(by_doc) + len(again) + len(unquoted)
    if n < 2:
        return []
    # newest first, each with its date: a later regulation may replace an earlier one, and the reader
    # decides which is in force from what the regulations say (the status graph says it where it can)
    firsts = sorted((idx[0] for idx in by_doc.values()),
                    key=lambda i: chunks[claims[i].citations[0].chunk_id].published or "", reverse=True)

    def dated(path: str, published: str | None) -> str:
        return path + (f" ({published})" if published else "")
    quoted = [(stated_citation(claims[i]).path or claims[i].citations[0].document or "",
               chunks[claims[i].citations[0].chunk_id].published) for i in firsts]
    quoted += [(x.path or x.document or "", chunks[x.chunk_id].published) for x in again.values()]
    sides = [dated(path, published) for path, published in sorted(quoted, key=lambda q: q[1] or "", reverse=True)]
    others = sorted(unquoted.values(), key=lambda c: c.chunk.published or "", reverse=True)
    sides += [dated(cite_path(c.chunk, c.defines), c.chunk.published) for c in others]
    where = "; ".join(sides)
    if term:
        detail = (f"«{term}» didefinisikan dalam {n} peraturan: {where}" if lang == "id"
                  else f"«{term}» is defined in {n} regulations: {where}")
        if others:
            detail += (f" — jawaban ini mengutip {len(quoted)}; periksa definisi peraturan yang mengatur perkara "
                       "Anda."
                       if lang == "id" else
                       f" — this answer quotes {len(quoted)}; check the definition of the regulation that governs "
                       "your case.")
    else:
        detail = f"Dijawab oleh {n} peraturan: {where}" if lang == "id" else f"Answered by {n} regulations: {where}"
    chunk_ids = tuple(dict.fromkeys([*(x.chunk_id for i in firsts for x in claims[i].citations),
                                     *(x.chunk_id for x in again.values()),
                                     *(c.chunk.chunk_id for c in others)]))
    return [Conflict(kind="ambiguous", detail=detail, claims=tuple(firsts), chunk_ids=chunk_ids,
                     unquoted=len(others))]


def _history(c: VerifiedClaim) -> bool:
    """A claim whose provision ended, or is not yet in force, on the answer's date (`Standing.history`)."""
    return c.standing is not None and c.standing.history


def _listed_or_defining(chunk: Chunk, quote: str) -> bool:
    """A quote that is an item of an enumeration of `chunk` (its lead-in, which differs, says whose it is: "Urusan wajib
    … Kabupaten Mesuji … meliputi: … i. fasilitasi pengembangan koperasi …" is every regency's item i), or a definition
    (the same words define the same meaning, whichever law writes them: `definitions` shows them as one), or not
    found in it."""
    at = chunk.text.find(quote)
    return (at < 0 or next(quoted_entries([quote]), None) is not None
            or any(item_label(sp.label) and sp.start <= at and at + len(quote) <= sp.end for sp in chunk.spans))


def restating_regulations(claims: Sequence[VerifiedClaim], chunks: Mapping[str, Chunk],
                          context: Mapping[str, Chunk], statuses: Mapping[str, DocumentStatus],
                          day: str | None) -> dict[str, CitationCheck]:
    """The other regulations of the context (`context`, its documents' `statuses`) that write the sentence a supported
    claim states (`stated_citation`) word for word (`restatements.restates`) in a provision of their own, in force as a
    whole on `day`, and neither amending, revoking nor referring to the claim's law (`subjects.related`, `refers`):
    each year's budget law writes "SAL dapat digunakan dalam hal …". Such a regulation gives the same answer as its own
    rule, so the answer is several regulations' as much as one quoting both. Each with its first such place, as a
    citation would show it (the claims keep their own citations)."""
    out: dict[str, CitationCheck] = {}
    for c in claims:
        own = _own_unit(c, chunks) if not _history(c) else None
        quote = stated_citation(c).quote if own is not None else ""
        if own is None or _listed_or_defining(own, quote):
            continue
        size = max(1, len(split_sentences(quote)))
        for ch in context.values():
            other = ch.doc_id
            if (other == own.doc_id or other in out or other not in statuses or not _REGULATION_UNIT.match(ch.location)
                    or (day is not None and status.standing(statuses[other], day).history)
                    or related(own.doc_id, other, statuses) or refers(own.doc_id, other, statuses)):
                continue
            for start, end in sentence_runs(ch.text, size):
                if restates(quote, ch.text[start:end]) and not _listed_or_defining(ch, ch.text[start:end]):
                    label = cited_location(ch, (start, end))
                    out[other] = CitationCheck(ch.chunk_id, ch.text[start:end], ch.title, label, True,
                                               doc_id=other, path=cite_path(ch, label))
                    break
    return out


def answering_regulations(claims: Sequence[VerifiedClaim], chunks: Mapping[str, Chunk],
                          word_for_word: Iterable[str] = ()) -> set[str]:
    """The documents whose own provisions (a regulation's unit, as `find_ambiguity` reads it) the supported claims
    state, but history: a provision ended or not yet in force on the answer's date answers nothing; and `word_for_word`,
    those that write a claim's sentence word for word (`restating_regulations`)."""
    own = {chunk.doc_id for c in claims if not _history(c) and (chunk := _own_unit(c, chunks)) is not None}
    return own | set(word_for_word)


def regulations_capped(claims: Sequence[VerifiedClaim], chunks: Mapping[str, Chunk],
                       named: Sequence[tuple[str, str | None]], confidence: ConfidenceSettings | None,
                       word_for_word: Iterable[str] = ()) -> list[VerifiedClaim]:
    """The claims of an answer whose supported claims state the provisions of two or more regulations
    (`answering_regulations`), for a question that names none: each is one regulation's answer among several (shown
    as *ambiguous*), and which one the asker means the pipeline does not know, so each is kept in RENDAH and at most
    one in as many as answer (`one_of_several`). On the mined questions of issue 30 (24 laws alone) such answers were
    at the gold Pasal 5 times of 19, at a stated 0.84 (SEDANG; the other SEDANG answers 82 of 96 at 0.86)."""
    if confidence is None or any(doc_id for _, doc_id in named):
        return list(claims)
    n = len(answering_regulations(claims, chunks, word_for_word))
    if n < 2:
        return list(claims)
    return [one_of_several(c, chunks, confidence, n) for c in claims]


def one_of_several(c: VerifiedClaim, chunks: Mapping[str, Chunk], confidence: ConfidenceSettings,
                   n: int) -> VerifiedClaim:
    """A supported claim of an answer `n` regulations give (`regulations_capped`): in RENDAH, at most 1/n (the
    regulation the asker means is any of them, as far as the pipeline knows). History keeps its own cap
    (`status.NOT_IN_FORCE`): it answers nothing, and is shown as what it is."""
    if c.status != "supported" or _history(c):
        return c
    return status.capped(c, confidence, is_provision_chunk(chunks, c), SEVERAL_REGULATIONS, under="SEDANG",
                         ceiling=1 / n)


def regulation_documents(chunks: Iterable[Chunk], statuses: Mapping[str, DocumentStatus], day: str | None) -> set[str]:
    """The documents of `chunks` with a regulation's unit among them, but those not in force on `day` as a whole:
    the most an answer from those chunks could quote (`answering_regulations`), known before any claim is."""
    out = set()
    for ch in chunks:
        if ch.doc_id in out or not _REGULATION_UNIT.match(ch.location):
            continue
        d = statuses.get(ch.doc_id)
        if d is None or day is None or not status.standing(d, day).history:
            out.add(ch.doc_id)
    return out
