"""Reviewers' rejections as regression cases (`saksi eval --reviews`).

A claim a reviewer rejected must not come back. For every claim whose latest decision is
"rejected", the trace's question is asked again through today's in-process pipeline, and the
claim counts as STILL SHOWN when a *supported* claim of today's answer either

- reads the same (casefold, whitespace folded, trailing punctuation dropped), or
- cites one of the same chunks with the same quote (the contract's normalisation) as the
  rejected claim did in the answer the reviewer saw (rebuilt from the trace by
  `pipeline.replay.recorded_result`, so the claim index is the one shown).

A claim today's answer shows only as *not supported* is not shown: the gates demoted it. A
trace that is missing or damaged does not stop the others: that review is compared by the
claim's text alone (kept in the review for this), and the report says so. Accepted claims are
replayed too, for information: the report names those today's answer no longer shows.
Flagged claims are counted, not replayed.

Today's answers are ordinary answers: they leave traces (and audit entries), so a claim still
shown can be opened in today's trace.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..config import Profile
from ..errors import SaksiError, TraceError
from ..reviews import Review
from ..text import normalise
from ..types import Result

Status = Literal["shown", "gone", "not_checked"]


@dataclass(frozen=True)
class ReviewCheck:
    """One reviewed claim against today's answer to its question."""

    review: Review
    status: Status
    today_claim: int | None = None            # the matching claim's index in today's answer
    matched_by: Literal["text", "quote"] | None = None
    today_trace_id: str | None = None
    note: str | None = None                   # what limited the comparison, or why it was not made

    def as_dict(self) -> dict:
        return {"review": self.review.model_dump(mode="json"), "status": self.status,
                "today_claim": self.today_claim, "matched_by": self.matched_by,
                "today_trace_id": self.today_trace_id, "note": self.note}


@dataclass(frozen=True)
class ReviewReplay:
    rejected: tuple[ReviewCheck, ...]
    accepted: tuple[ReviewCheck, ...]
    flagged: int

    def count(self, checks: Sequence[ReviewCheck], status: Status) -> int:
        return sum(1 for c in checks if c.status == status)

    @property
    def passed(self) -> bool:
        """No rejected claim is shown today, and every one of them could be checked."""
        return all(c.status == "gone" for c in self.rejected)

    def summary(self) -> dict:
        return {"rejected": len(self.rejected), "still_shown": self.count(self.rejected, "shown"),
                "gone": self.count(self.rejected, "gone"), "not_checked": self.count(self.rejected, "not_checked"),
                "accepted": len(self.accepted), "accepted_still_shown": self.count(self.accepted, "shown"),
                "accepted_no_longer_shown": self.count(self.accepted, "gone"),
                "accepted_not_checked": self.count(self.accepted, "not_checked"), "flagged": self.flagged}

    def as_dict(self) -> dict:
        return {"passed": self.passed, "summary": self.summary(),
                "rejected": [c.as_dict() for c in self.rejected], "accepted": [c.as_dict() for c in self.accepted]}

    def text(self) -> str:
        lines = []
        if self.rejected:
            lines.append("rejected claims (regression cases):")
            lines += [_line(c, {"shown": "STILL SHOWN", "gone": "gone", "not_checked": "NOT CHECKED"})
                      for c in self.rejected]
        if self.accepted:
            lines.append("accepted claims (for information):")
            lines += [_line(c, {"shown": "still shown", "gone": "NO LONGER SHOWN", "not_checked": "not checked"})
                      for c in self.accepted]
        s = self.summary()
        lines.append(f"summary: {s['rejected']} rejected claim(s) replayed: {s['still_shown']} still shown, "
                     f"{s['gone']} gone, {s['not_checked']} not checked; {s['accepted']} accepted: "
                     f"{s['accepted_no_longer_shown']} no longer shown; {s['flagged']} flagged (not replayed)")
        lines.append("PASS: no rejected claim is shown today" if self.passed else
                     "FAIL: a rejected claim is shown today" if s["still_shown"] else
                     "FAIL: a rejected claim could not be checked")
        return "\n".join(lines)


def _line(c: ReviewCheck, words: dict[str, str]) -> str:
    r = c.review
    text = r.claim_text if len(r.claim_text) <= 140 else r.claim_text[:139] + "…"
    head = (f"  {words[c.status]:<15} {r.collection} {r.trace_id[:8]} claim {r.claim} {r.decision}"
            f"{f' ({r.reason})' if r.reason else ''}: {text!r}")
    if c.status == "shown":
        head += f"\n      today: claim {c.today_claim} of trace {c.today_trace_id} (same {c.matched_by})"
    return head + (f"\n      note: {c.note}" if c.note else "")


_TRAILING = " .,;:!?…。"


def claim_key(text: str) -> str:
    """A claim's text for comparison: NFKC, whitespace folded, casefolded, trailing sentence
    punctuation dropped (not '%' or a closing parenthesis: those are part of what is said)."""
    return normalise(text).casefold().rstrip(_TRAILING)


@dataclass(frozen=True)
class _Shown:
    """What the reviewer saw of a claim: its text and its (chunk id, quote) pairs."""

    question: str
    lang: str | None
    texts: frozenset[str]
    quotes: frozenset[tuple[str, str]]
    note: str | None


def _as_shown(review: Review, trace_dir: Path, analyzer) -> _Shown:
    from ..replay import recorded_result
    from ..trace import load_trace

    fallback = "compared by the claim's text only"
    try:
        trace = load_trace(trace_dir / f"{review.trace_id}.json")
    except TraceError as e:
        return _Shown(review.question, None, frozenset({claim_key(review.claim_text)}), frozenset(),
                      f"{e.message}; {fallback}")
    texts = frozenset({claim_key(review.claim_text)})
    try:
        claims = recorded_result(trace, analyzer).claims
    except (KeyError, TypeError, ValueError, IndexError) as e:  # a trace that validates but cannot be rebuilt
        return _Shown(trace.question, trace.lang, texts, frozenset(),
                      f"the trace's answer cannot be rebuilt ({type(e).__name__}: {e}); {fallback}")
    if review.claim >= len(claims):
        return _Shown(trace.question, trace.lang, texts, frozenset(),
                      f"the trace's answer has {len(claims)} claim(s), no claim {review.claim}; {fallback}")
    claim = claims[review.claim]
    if claim_key(claim.text) not in texts:
        return _Shown(trace.question, trace.lang, texts, frozenset(),
                      f"the trace's claim {review.claim} is not the reviewed text; {fallback}")
    return _Shown(trace.question, trace.lang, texts,
                  frozenset((c.chunk_id, normalise(c.quote)) for c in claim.citations), None)


def _find(shown: _Shown, today: Result) -> tuple[int, Literal["text", "quote"]] | None:
    """The first supported claim of today's answer that shows the reviewed claim."""
    for i, c in enumerate(today.claims):
        if c.status != "supported":
            continue
        if claim_key(c.text) in shown.texts:
            return i, "text"
        if shown.quotes & {(cit.chunk_id, normalise(cit.quote)) for cit in c.citations}:
            return i, "quote"
    return None


def replay_reviews(data_dir: str | Path, profile: Profile, reviews: Sequence[Review],
                   progress: Callable[[str], None] = lambda m: None) -> ReviewReplay:
    """Replay the rejected and accepted reviews among `reviews` (latest decisions, e.g.
    `ReviewStore.latest()`); `data_dir` is the data directory root."""
    return asyncio.run(_replay(Path(data_dir), profile, reviews, progress))


async def _replay(root: Path, profile: Profile, reviews: Sequence[Review],
                  progress: Callable[[str], None]) -> ReviewReplay:
    from ..analysis import query_analyzer
    from ..corpus import Corpus, DataDir

    analyzer = query_analyzer(profile)
    replayed = [r for r in reviews if r.decision in ("rejected", "accepted")]
    checks: dict[str, ReviewCheck] = {}
    for collection in dict.fromkeys(r.collection for r in replayed):  # first seen first
        mine = [r for r in replayed if r.collection == collection]
        try:
            target = DataDir(root).existing(collection)
            if not target.exists():
                raise SaksiError(f"no corpus in collection {collection!r}")
        except SaksiError as e:
            checks.update({r.review_id: ReviewCheck(r, "not_checked", note=str(e)) for r in mine})
            continue
        with Corpus(target, profile) as corpus:
            try:
                orchestrator = corpus.orchestrator()
            except SaksiError as e:
                checks.update({r.review_id: ReviewCheck(r, "not_checked", note=str(e)) for r in mine})
                continue
            answers: dict[tuple[str, str | None], Result | SaksiError] = {}
            for r in mine:
                shown = _as_shown(r, target.traces, analyzer)
                key = (shown.question, shown.lang)
                if key not in answers:
                    progress(f"asking again ({collection}): {shown.question[:80]}")
                    try:
                        answers[key] = await orchestrator.answer(shown.question, lang=shown.lang)
                    except SaksiError as e:  # a question today's limits refuse, say
                        answers[key] = e
                today = answers[key]
                if isinstance(today, SaksiError):
                    checks[r.review_id] = ReviewCheck(r, "not_checked", note=f"asking again failed: {today}")
                    continue
                found = _find(shown, today)
                checks[r.review_id] = (ReviewCheck(r, "gone", today_trace_id=today.trace_id, note=shown.note)
                                       if found is None else
                                       ReviewCheck(r, "shown", found[0], found[1], today.trace_id, shown.note))
    ordered = [checks[r.review_id] for r in replayed]
    return ReviewReplay(rejected=tuple(c for c in ordered if c.review.decision == "rejected"),
                        accepted=tuple(c for c in ordered if c.review.decision == "accepted"),
                        flagged=sum(1 for r in reviews if r.decision == "flagged"))
