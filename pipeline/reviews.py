"""Reviewers' decisions on the claims of an answer: accepted, rejected (with a reason) or flagged.

A person reads the receipts and decides; the decision is kept in the data directory root,
beside the audit log, as an append-only JSONL (`reviews.jsonl`, one `Review` a line; collections
share it, each line names its collection). A later decision on the same claim does not erase
the earlier one: `latest` is what counts, `all` is the history. Every decision also enters the
hash-chained audit log as a "review" entry.

Each line carries the question, the claim's text and the chunks it cited, so an export reads
without the trace; the trace id and claim index (the claim's position in the answer as shown,
`pipeline.replay.recorded_result`) point back at the receipts. A rejected claim is a regression
case: `saksi eval --reviews` (pipeline/eval/reviews.py) asks its question again and reports
whether today's pipeline still shows it.

Appends take an exclusive `flock` (readers a shared one), so the CLI and a served replica on the
same data directory never interleave lines; a damaged line is skipped with a warning.
"""
from __future__ import annotations

import datetime as dt
import fcntl
import json
import logging
import os
import re
import secrets
from pathlib import Path
from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .audit import LOCAL_KEY, AuditLog
from .errors import ReviewError
from .keys import COLLECTION_NAME

log = logging.getLogger(__name__)

FILE = "reviews.jsonl"
DECISIONS: tuple[str, ...] = ("accepted", "rejected", "flagged")
# why a claim was rejected: a short list a reviewer picks from (plus free text in the note)
REJECT_REASONS: dict[str, dict[str, str]] = {
    "not_supported": {"id": "Kutipan tidak menyatakan hal ini", "en": "The quote does not say this"},
    "wrong_number": {"id": "Angka salah", "en": "Wrong figure"},
    "outdated": {"id": "Aturan sudah diganti atau tidak berlaku lagi", "en": "Superseded or expired rule"},
    "wrong_document": {"id": "Dokumen yang dikutip salah", "en": "Cites the wrong document"},
    "incomplete": {"id": "Tidak lengkap: syarat atau pengecualian terlewat",
                   "en": "Incomplete: misses a condition or exception"},
    "other": {"id": "Lainnya: lihat catatan", "en": "Other: see the note"},
}
MAX_NOTE = 2000
TRACE_ID = r"^[0-9a-f]{32}$"
ACTOR = r"^(local|key:[0-9a-f]{12})$"  # pipeline.audit.LOCAL_KEY, or pipeline.keys.ApiKey.actor


class Review(BaseModel):
    """One decision on one claim of one answer, as stored (a line of reviews.jsonl)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    review_id: str = Field(..., pattern=r"^[0-9a-f]{16}$")
    at: str                     # ISO 8601, UTC, seconds
    by: str = Field(..., pattern=ACTOR)
    collection: str = Field(..., pattern=COLLECTION_NAME)
    trace_id: str = Field(..., pattern=TRACE_ID)
    claim: int = Field(..., ge=0)  # the claim's index in the answer as shown
    decision: Literal["accepted", "rejected", "flagged"]
    reason: str | None = None   # a REJECT_REASONS code: required when rejected, optional when flagged
    note: str = Field("", max_length=MAX_NOTE)
    question: str
    claim_text: str
    chunk_ids: list[str]

    @model_validator(mode="after")
    def _reason_fits_decision(self) -> "Review":
        problem = _reason_problem(self.decision, self.reason)
        if problem:
            raise ValueError(problem)
        return self


def _reason_problem(decision: str, reason: str | None) -> str | None:
    if reason is not None and reason not in REJECT_REASONS:
        return f"unknown reason {reason!r} (one of: {', '.join(REJECT_REASONS)})"
    if decision == "rejected" and reason is None:
        return f"a rejection needs a reason (one of: {', '.join(REJECT_REASONS)})"
    if decision == "accepted" and reason is not None:
        return "an accepted claim takes no reason (say more in the note)"
    return None


class ReviewStore:
    """The data directory's decisions: <root>/reviews.jsonl (root: the data directory itself, not a
    collection's folder; `pipeline.corpus.DataDir(...).root`)."""

    def __init__(self, data_dir: str | Path):
        self.root = Path(data_dir)
        self.path = self.root / FILE

    def record(self, *, collection: str, trace_id: str, claim: int, decision: str, by: str, question: str,
               claim_text: str, chunk_ids: Sequence[str], reason: str | None = None, note: str = "") -> Review:
        """Validate, append one line (flock, fsync) and enter it in the audit log; a ReviewError
        saying what is wrong otherwise."""
        reason = reason or None  # a form's empty choice is no reason
        note = note or ""
        _check(collection=collection, trace_id=trace_id, claim=claim, decision=decision, by=by, reason=reason,
               note=note)
        try:
            review = Review(review_id=secrets.token_hex(8),
                            at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                            by=by, collection=collection, trace_id=trace_id, claim=claim, decision=decision,
                            reason=reason, note=note, question=question, claim_text=claim_text,
                            chunk_ids=list(chunk_ids))
        except ValidationError as e:  # what _check does not cover (a field of the wrong type)
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "review"
            raise ReviewError(f"{where}: {first['msg']}") from None
        line = (json.dumps(review.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":")) + "\n")
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                f.seek(0, os.SEEK_END)
                if f.tell() > 0:  # a writer that died mid-line must not swallow this line too
                    f.seek(-1, os.SEEK_END)
                    if f.read(1) != b"\n":
                        f.seek(0, os.SEEK_END)
                        f.write(b"\n")
                f.seek(0, os.SEEK_END)
                f.write(line.encode("utf-8"))
                f.flush()
                os.fsync(f.fileno())
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
        AuditLog(self.root, collection=collection).append(
            "review", key=by, trace_id=trace_id, claim=claim, decision=decision, reason=reason,
            review_id=review.review_id)
        return review

    def all(self, collection: str | None = None) -> list[Review]:
        """Every decision (of one collection, or all), oldest first."""
        try:
            f = open(self.path, "rb")
        except FileNotFoundError:
            return []
        with f:
            fcntl.flock(f, fcntl.LOCK_SH)
            try:
                raw = f.read()
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
        out = []
        for n, line in enumerate(raw.split(b"\n"), 1):
            if not line.strip():
                continue
            try:
                review = Review.model_validate_json(line)
            except ValidationError as e:
                log.warning("%s line %d is not a review, skipped (%s)", self.path, n,
                            str(e).splitlines()[0] if str(e) else type(e).__name__)
                continue
            if collection is None or review.collection == collection:
                out.append(review)
        return out

    def latest(self, collection: str | None = None) -> list[Review]:
        """The latest decision per (collection, trace id, claim), in the order those were made."""
        last: dict[tuple[str, str, int], Review] = {}
        for r in self.all(collection):
            key = (r.collection, r.trace_id, r.claim)
            last.pop(key, None)  # re-inserted at the end: ordered by the latest decision
            last[key] = r
        return list(last.values())

    def for_trace(self, collection: str, trace_id: str) -> dict[int, Review]:
        """The latest decision on each claim of one answer, by claim index."""
        return {r.claim: r for r in self.all(collection) if r.trace_id == trace_id}


def _check(*, collection, trace_id, claim, decision, by, reason, note) -> None:
    if decision not in DECISIONS:
        raise ReviewError(f"unknown decision {decision!r} (one of: {', '.join(DECISIONS)})")
    problem = _reason_problem(decision, reason)
    if problem:
        raise ReviewError(problem)
    if not isinstance(note, str) or len(note) > MAX_NOTE:
        raise ReviewError(f"the note is {len(note) if isinstance(note, str) else '?'} characters long; "
                          f"at most {MAX_NOTE}")
    if not isinstance(trace_id, str) or not re.fullmatch(TRACE_ID, trace_id):
        raise ReviewError(f"{trace_id!r} is not a trace id (32 lowercase hexadecimal characters)")
    if isinstance(claim, bool) or not isinstance(claim, int) or claim < 0:
        raise ReviewError(f"{claim!r} is not a claim index (a whole number, 0 or more)")
    if not isinstance(collection, str) or not re.fullmatch(COLLECTION_NAME, collection):
        raise ReviewError(f"{collection!r} is not a collection name")
    if not isinstance(by, str) or not re.fullmatch(ACTOR, by):
        raise ReviewError(f"{by!r} is not an actor ('{LOCAL_KEY}' or 'key:<12 hex>')")
