"""An answer's trace, rendered for a person, and replaying it.

`/ui/traces/{collection}/{trace_id}` shows what the trace records (pipeline/trace.py), part by part
and attempt by attempt: the question's analysis and route, each query plan, every retrieval lane's
candidates with their own scores and ranks, the rerank blend, what reached the generator and its
raw output, each gate's decision per claim with the judge's calls, sufficiency, and the decision
with why. Nothing is recomputed for display: the numbers are the trace's.

The replay button posts to `…/replay`, which re-runs today's gates and decision on the recorded
generator output (`pipeline.replay.replay`: no retrieval, no model) and shows the same page with
whether the decision is the same, and what differs when it is not.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Path, Request

from pipeline.citations import cite_path
from pipeline.decision import explain, reason_text
from pipeline.errors import SaksiError
from pipeline.keys import COLLECTION_NAME
from pipeline.trace import AttemptTrace, Trace
from pipeline.types import Candidate

from ..errors import ApiError
from .common import key_of, lang_of, page_work, render, service
from .labels import reason_words

log = logging.getLogger(__name__)

router = APIRouter()

CollectionName = Annotated[str, Path(pattern=COLLECTION_NAME)]
TraceId = Annotated[str, Path(pattern=r"^[0-9a-f]{32}$")]

LANES = ("dense", "lexical", "sparse")


@dataclass(frozen=True)
class LaneRow:
    """One candidate as its lane ranked it."""

    candidate: Candidate
    rank: int | None
    score: float | None


def lane_rows(attempt: AttemptTrace, lane: str) -> list[LaneRow]:
    """This lane's candidates in its own rank order. A candidate with the lane's score but no rank
    was not among the lane's hits: retrieval scored it afterwards for the fusion (shown last, unranked)."""
    rows = [LaneRow(c, getattr(c, f"{lane}_rank"), getattr(c, f"{lane}_score")) for c in attempt.candidates]
    rows = [r for r in rows if r.rank is not None or r.score is not None]
    return sorted(rows, key=lambda r: (r.rank is None, r.rank or 0, -(r.score or 0.0)))


def lanes_of(attempt: AttemptTrace) -> list[tuple[str, list[LaneRow]]]:
    """Dense and lexical always (an empty lane is shown as empty); sparse when the profile had it."""
    out = [(lane, lane_rows(attempt, lane)) for lane in LANES]
    return [(lane, rows) for lane, rows in out if lane != "sparse" or rows]


def rerank_columns(rows: list[Candidate]) -> list[tuple[str, str | None]]:
    """Every rerank component any reranked chunk has, in the order they first appear, each with the
    key of its weight when the reranker recorded one (`w_<name>`: shown in the same cell)."""
    names = list(dict.fromkeys(k for c in rows for k in c.rerank_components))
    weighted = {k for k in names if k.startswith("w_") and k[2:] in names}
    return [(k, f"w_{k}" if f"w_{k}" in weighted else None) for k in names if k not in weighted]


def _loaded(request: Request, name: str, trace_id: str) -> tuple[str, Trace]:
    """The collection's name and the trace (ApiError when the key may not, or there is none)."""
    svc = service(request)
    where = svc.where(key_of(request), name)
    trace = svc.trace(where, trace_id)
    request.state.trace_check = svc.checked_trace(where, trace_id)
    return where.name, trace


def _page(request: Request, collection: str, trace: Trace, replayed: dict | None = None):
    lang = lang_of(request)
    attempts = []
    for part in trace.parts:
        for a in part.attempts:
            by_id = {c.chunk.chunk_id: c for c in a.candidates}
            reranked = [by_id[cid] for cid in a.reranked if cid in by_id]
            referenced = list(dict.fromkeys([*a.referenced, *(c.chunk.chunk_id for c in a.candidates
                                                               if c.referenced_from)]))
            attempts.append((part, a, {
                "lanes": lanes_of(a), "by_id": by_id, "reranked": reranked,
                "rerank_columns": rerank_columns(reranked), "context": set(a.context),
                "referenced": [by_id[cid] for cid in referenced if cid in by_id],
                            }))
    why, conflicts = _decision_words(request, trace, lang)
    return render(request, "trace.html", collection=collection, trace=trace, attempts=attempts,
                  trace_check=request.state.trace_check,
                  replayed=replayed, cite=cite_path, reason_words=lambda r: reason_words(r, lang),
                  refusal_words=lambda code, missing: reason_text(code, lang, missing), why=why, conflicts=conflicts,
                  settings_json=json.dumps(trace.settings.model_dump(mode="json"), ensure_ascii=False, indent=2))


def _decision_words(request: Request, trace: Trace, lang: str) -> tuple[str, tuple]:
    """The decision's one sentence and the conflicts, in the page's language: the answer rebuilt from the trace as it
    was shown (`recorded_result`). A trace too damaged to rebuild: the sentence and conflicts as recorded."""
    try:
        result = service(request).recorded(trace, lang)
    except (SaksiError, KeyError, TypeError, ValueError) as e:
        log.warning("trace %s cannot be rebuilt for its page: %r", trace.trace_id, e)
        return trace.why, tuple(trace.conflicts)
    return (result.reason if result.outcome == "refusal" else explain(result, lang)) or "", result.conflicts


@router.get("/ui/traces/{name}/{trace_id}")
async def trace_page(request: Request, name: CollectionName, trace_id: TraceId):
    return await page_work(request, "the trace page", lambda: _page(request, *_loaded(request, name, trace_id)))


@router.post("/ui/traces/{name}/{trace_id}/replay")
async def replay_trace(request: Request, name: CollectionName, trace_id: TraceId):
    """Today's gates and decision on the recorded generator output: the same decision?"""
    return await page_work(request, "the replay", _replayed, request, name, trace_id)


def _replayed(request: Request, name: str, trace_id: str):
    collection, trace = _loaded(request, name, trace_id)
    try:  # the gates re-run on recorded verdicts: CPU work, in this worker thread's own loop
        report = service(request).replay_report(trace)
    except (SaksiError, KeyError, TypeError, ValueError) as e:  # a trace too damaged to re-run: say so, no 500
        log.warning("trace %s cannot be replayed: %r", trace_id, e)
        raise ApiError(422, "unreplayable_trace",
                       f"trace {trace_id} cannot be replayed ({type(e).__name__})") from None
    return _page(request, collection, trace, replayed={
        "same": report.same, "recorded": report.recorded.outcome, "replayed": report.replayed.outcome,
        "recorded_reason": report.recorded.reason_code, "replayed_reason": report.replayed.reason_code,
        "differences": report.differences(lang_of(request))})
