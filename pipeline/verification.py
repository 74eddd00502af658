"""One attempt's verification, the same step for a live answer and for its replay: every gate on the generator's
output (pipeline/gates.py), the route's sufficiency, and the summary the decision reads (pipeline/decision.py).
The orchestrator calls it on what the generator just wrote, replay on what the trace recorded, with the settings
the trace records (`TraceSettings`): a gate changed is changed for both, and a drift between them cannot hide."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .config import Route
from .decision import AttemptSummary, sufficiency
from .gates import verify
from .protocols import Judge
from .trace import TraceSettings
from .types import Chunk, GenerationOutput, JudgeCall, Sufficiency, VerifiedClaim


@dataclass(frozen=True)
class VerifiedAttempt:
    claims: tuple[VerifiedClaim, ...]
    judge_calls: tuple[JudgeCall, ...]
    failure: str | None          # the generator failed, or its output could not be parsed
    failure_detail: str | None
    sufficiency: Sufficiency
    summary: AttemptSummary


async def verify_attempt(output: GenerationOutput | None, context: Mapping[str, Chunk], paragraphs: Mapping[str, str],
                         scores: Mapping[str, float], judge: Judge, settings: TraceSettings, route: Route, part: int,
                         had_context: bool, failure: str | None = None,
                         failure_detail: str | None = None) -> VerifiedAttempt:
    """The gates on `output` (none: the generator failed with `failure`, or there was no context), then whether the
    supported claims satisfy the route's required categories. `context`: the chunks the generator read, the only
    ones a claim may cite; `scores`: their retrieval scores; `judge`: the live judge, or the recorded verdicts."""
    claims, calls = (), ()
    if output is not None:
        v = await verify(output, context, paragraphs, scores, judge, settings.judge, settings.confidence, part=part)
        claims, calls, failure, failure_detail = v.claims, tuple(v.judge_calls), v.parse_error, v.parse_detail
    enough = sufficiency(route, claims, context)
    return VerifiedAttempt(claims, calls, failure, failure_detail, enough,
                           AttemptSummary.of(claims, enough, failure, had_context))
