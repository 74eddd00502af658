"""Which verified claims may be shown while the answer is still being decided, and when: the streamed answer's
gatekeeper (the API's `stream: true`, the chat endpoint, the page).

Nothing is shown before its gates pass, and nothing shown is taken back. A claim that cleared its own gates (quote,
number check, judge, confidence) can still be withheld by the decision over the whole answer, so it is released only
once that decision cannot withhold it:

- its attempt is **committed**: its supported claims so far satisfy the route's required evidence. Both only grow
  as claims arrive, and a claim that stands cannot be undone by what the generator writes after it
  (pipeline/claims.py), so a committed attempt is the one its part answers with, and no retry replaces it;
- **every part** of the question is committed (one part refused refuses the question);
- it is shown in the **place** the answer will show it: the claims before it are settled first, parts in order. A
  claim whose provision is not in force on the answer's date goes after every claim in force (history is never shown
  as the answer), so those are released last, when every part is settled;
- it is shown in its **final form**: with its provision's standing on the answer's date and the caps the decision
  puts on it (`decision.dated_claim`, `decision.definitions_capped`, `decision.unmentioned_capped`), the
  functions `decision.conclude` applies;
- no part's lead claim states a sentence other documents write of other subjects the question does not choose
  between (`decision.several_subjects`, which refuses the question): nothing is released until every part's lead is
  known (`_lead`), and nothing at all where one is such a sentence.
- it is known whether the answer is several regulations' (`ambiguity.regulations_capped`, which keeps each claim of
  such an answer in RENDAH): for a question naming no document, whose parts' contexts hold two or more regulations in
  force, nothing is released until every part is settled (a later claim of another regulation would lower every
  claim before it); with one such regulation or none, or a document named, claims go as soon as they are placed.

A claim its gates demote is told at once (`demoted`), never as the answer. `finish` checks the released claims
against the decided answer, position by position; a difference is a defect, logged and reported, never hidden.

Events go to `emit(kind, data)`: "analysis", "retrieval", "retry", "claim" ({"position", "part", "claim"}),
"demoted" ({"part", "claim"}); claims as `VerifiedClaim`s (the caller renders them).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .ambiguity import answering_regulations, one_of_several, regulation_documents, restating_regulations
from .config import ConfidenceSettings, Route
from .decision import (dated_claim, definers_of, definitions_capped, lead_claim, named_unmentioned, subjects_apply,
                       sufficiency, unmentioned_capped, unmentioned_terms)
from .subjects import subjects_of
from .types import Candidate, Chunk, DocumentStatus, QueryPlan, Result, VerifiedClaim

log = logging.getLogger(__name__)

Emit = Callable[[str, dict[str, Any]], None]
_UNDECIDED = object()  # a part's lead claim its claims so far cannot tell (`Release._lead`)


@dataclass
class _Part:
    route: Route
    attempt: int = -1
    chunks: Mapping[str, Chunk] = field(default_factory=dict)
    statuses: Mapping[str, DocumentStatus] = field(default_factory=dict)
    first_query: QueryPlan | None = None
    gated: dict[int, VerifiedClaim] = field(default_factory=dict)
    cursor: int = 0          # the next claim, in output order, not yet released or passed over
    settled: bool = False    # every claim of the attempt has been gated
    committed: bool = False  # the attempt's supported claims satisfy the route: its part answers with them
    history: list[VerifiedClaim] = field(default_factory=list)  # supported, not in force: shown last
    definers: frozenset[str] = frozenset()  # the documents among the attempt's candidates defining an asked term
    candidates: tuple[Candidate, ...] = ()  # the attempt's: where another document may write its lead's sentence


class Release:
    def __init__(self, emit: Emit, question: str, routes: Sequence[Route], day: str | None,
                 confidence: ConfidenceSettings | None, named: Sequence[tuple[str, str | None]] = ()):
        self.emit, self.question, self.day, self.confidence = emit, question, day, confidence
        self.named = tuple(named)  # the documents the question names (label, doc id or None)
        self.parts = [_Part(r) for r in routes]
        self.released: list[VerifiedClaim] = []
        self._chunks: dict[str, Chunk] = {}
        self._capped: bool | None = None  # the question names something no record mentions (known once all committed)
        self._history_out = False
        # whether a part's lead is one subject's among several (decision.several_subjects): None until every lead is
        # known
        self._withheld: bool | None = None if subjects_apply(question, self.named) else False
        # how many regulations the answer is of, where it is several's (ambiguity.regulations_capped keeps its claims
        # in RENDAH), else 0: None until `_several_known`
        self._several: int | None = None if confidence is not None and not any(d for _, d in self.named) else 0

    def context(self, part: int, attempt: int, plan: QueryPlan, chunks: Mapping[str, Chunk],
                statuses: Sequence[DocumentStatus], records: int, candidates: Sequence[Candidate] = ()) -> None:
        """An attempt's context is in: its claims start afresh (a retry's replace the failed attempt's, never shown).
        `candidates`: the attempt's, whose `defines` say which documents define an asked term."""
        p = self.parts[part]
        p.attempt, p.chunks, p.statuses = attempt, dict(chunks), {d.doc_id: d for d in statuses}
        p.definers = definers_of(self.question, self.named, candidates)
        p.candidates = tuple(candidates)
        p.gated, p.cursor, p.settled, p.committed, p.history = {}, 0, False, False, []
        self._chunks.update(chunks)
        if attempt == 0:
            p.first_query = plan
        else:
            self.emit("retry", {"part": part, "query": plan.text})
        self.emit("retrieval", {"part": part, "attempt": attempt, "records": records,
                                "documents": list(dict.fromkeys(c.title for c in chunks.values()))[:5]})

    def gated(self, part: int, attempt: int, index: int, claim: VerifiedClaim) -> None:
        p = self.parts[part]
        if attempt != p.attempt:
            return
        p.gated[index] = claim
        if claim.status != "supported":
            self.emit("demoted", {"part": part, "claim": claim})
        elif not p.committed:
            supported = [c for c in p.gated.values() if c.status == "supported"]
            p.committed = sufficiency(p.route, supported, p.chunks).ok
        self._flush()

    def settled(self, part: int, attempt: int, claims: Sequence[VerifiedClaim]) -> None:
        """Every claim of the attempt is gated (`claims`, all of them: a generator that does not stream has its claims
        heard here)."""
        p = self.parts[part]
        if attempt != p.attempt:
            return
        for i, c in enumerate(claims):
            if i not in p.gated:
                p.gated[i] = c
                if c.status != "supported":
                    self.emit("demoted", {"part": part, "claim": c})
        supported = [c for c in claims if c.status == "supported"]
        p.committed = bool(supported) and sufficiency(p.route, supported, p.chunks).ok
        p.settled = True
        self._flush()

    def _shown(self, p: _Part, c: VerifiedClaim) -> VerifiedClaim:
        shown = definitions_capped(dated_claim(c, self._chunks, p.statuses, self.day, self.confidence), p.definers,
                                   self._chunks, self.confidence)
        if self._several:
            shown = one_of_several(shown, self._chunks, self.confidence, self._several)
        return unmentioned_capped(shown, self._chunks, self.confidence) if self._capped else shown

    def _several_known(self) -> bool:
        """Whether it is known if the answer is several regulations' (`_several`): at once where the parts' contexts
        hold fewer than two regulations in force (`ambiguity.regulation_documents`), else once every part is settled,
        from its claims as the decided answer reads them (`ambiguity.answering_regulations`)."""
        if self._several is None:
            possible = set().union(*(regulation_documents(p.chunks.values(), p.statuses, self.day) for p in self.parts))
            if len(possible) < 2:
                self._several = 0
            elif all(p.settled for p in self.parts):
                shown = [self._shown(p, c) for p in self.parts for c in p.gated.values()]
                context = {cid: c for p in self.parts for cid, c in p.chunks.items()}
                statuses = {d: st for p in self.parts for d, st in p.statuses.items()}
                restating = restating_regulations(shown, self._chunks, context, statuses, self.day)
                n = len(answering_regulations(shown, self._chunks, restating))
                self._several = n if n >= 2 else 0
        return self._several is not None

    def _flush(self) -> None:
        if not all(p.committed for p in self.parts):
            return
        if self._capped is None:
            unmentioned = unmentioned_terms(self.question, [p.first_query for p in self.parts if p.first_query])
            self._capped = self.confidence is not None and bool(named_unmentioned(self.question, unmentioned))
        if self._withheld is None:
            leads = [self._lead(p) for p in self.parts]
            if any(lead is _UNDECIDED for lead in leads):
                return
            self._withheld = any(lead is not None and subjects_of(lead, self._chunks, p.candidates, self.question,
                                                                  p.statuses) for p, lead in zip(self.parts, leads))
        if self._withheld or not self._several_known():
            return
        for i, p in enumerate(self.parts):
            while p.cursor in p.gated:
                c = p.gated[p.cursor]
                p.cursor += 1
                if c.status != "supported":
                    continue
                shown = self._shown(p, c)
                if shown.standing is not None and shown.standing.state != "in_force":
                    p.history.append(shown)
                else:
                    self._release(i, shown)
            if not p.settled:
                return  # the claims of later parts come after every claim of this one
        if not self._history_out:
            self._history_out = True
            for i, p in enumerate(self.parts):
                for c in p.history:
                    self._release(i, c)

    def _lead(self, p: _Part):
        """The part's lead claim in its final form, as `decision.lead_claim` picks it from the claims gated so far (in
        the generator's order, none skipped); None where every one is history (the part is refused as such);
        `_UNDECIDED` while a later claim could still lead (none in force yet, the attempt not settled)."""
        shown, i = [], 0
        while i in p.gated:
            if p.gated[i].status == "supported":
                shown.append(self._shown(p, p.gated[i]))
            i += 1
        lead = lead_claim(shown, shown[0].part) if shown else None
        if lead is not None and (lead.standing is None or lead.standing.state == "in_force"):
            return lead
        if not p.settled:
            return _UNDECIDED
        return lead if lead is not None and lead.standing.state == "unknown" else None

    def _release(self, part: int, claim: VerifiedClaim) -> None:
        self.emit("claim", {"position": len(self.released), "part": part, "claim": claim})
        self.released.append(claim)

    def finish(self, result: Result) -> list[int]:
        """The positions where a released claim is not the decided answer's claim there (none, by construction)."""
        wrong = [i for i, c in enumerate(self.released) if i >= len(result.claims) or result.claims[i] != c]
        if wrong or (self.released and result.outcome != "answer"):
            log.error("streamed claims at %s differ from the decided answer (%s, %s): a defect in pipeline/release.py",
                      wrong, result.outcome, result.reason_code)
        return wrong or ([] if not self.released or result.outcome == "answer" else list(range(len(self.released))))
