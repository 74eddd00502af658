"""One attempt's verification, the same step for a live answer and for its replay: every gate on the generator's
output (pipeline/gates.py), the route's sufficiency, and the summary the decision reads (pipeline/decision.py).
The orchestrator calls it on what the generator just wrote, replay on what the trace recorded, with the settings
the trace records (`TraceSettings`): a gate changed is changed for both, and a drift between them cannot hide.

A generator that streams (`StreamingGenerator`) is verified while it writes (`generate_and_verify`): the output is
read claim by claim (`pipeline.claims.ClaimReader`), and each claim goes through its gates as soon as its object
closes, in parallel with the rest of generation; `on_claim` hears each one when its gates are done. The claims and
the decision are those `verify_attempt` reaches on the finished output (tests/integration/test_streaming.py)."""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import AsyncIterator, Callable, Mapping, Protocol, runtime_checkable

from .claims import GENERATOR_FAILED, ClaimOut, ClaimReader, ParseFailure
from .config import Route
from .decision import AttemptSummary, sufficiency
from .gates import verify, verify_claims
from .protocols import Judge
from .trace import TraceSettings
from .types import Chunk, GenerationOutput, GenerationRequest, JudgeCall, Sufficiency, VerifiedClaim

log = logging.getLogger(__name__)

OnClaim = Callable[[int, VerifiedClaim], None]  # a claim's index in the output, the claim gated


@runtime_checkable
class StreamingGenerator(Protocol):
    """A generator that writes its output a piece at a time: `stream` yields the text in pieces, then exactly one
    `GenerationOutput`, whose `raw` is the pieces joined (lite writes claim by claim; vLLM and an OpenAI-compatible
    endpoint as tokens arrive)."""

    name: str

    def stream(self, request: GenerationRequest) -> AsyncIterator[str | GenerationOutput]:
        ...


@dataclass(frozen=True)
class VerifiedAttempt:
    claims: tuple[VerifiedClaim, ...]
    judge_calls: tuple[JudgeCall, ...]
    failure: str | None          # the generator failed, or its output could not be parsed
    failure_detail: str | None
    sufficiency: Sufficiency
    summary: AttemptSummary
    cut: str | None = None       # what stopped the output after its last complete claim (its claims stand)


async def verify_attempt(output: GenerationOutput | None, context: Mapping[str, Chunk], paragraphs: Mapping[str, str],
                         scores: Mapping[str, float], judge: Judge, settings: TraceSettings, route: Route, part: int,
                         had_context: bool, failure: str | None = None,
                         failure_detail: str | None = None) -> VerifiedAttempt:
    """The gates on `output` (none: the generator failed with `failure`, or there was no context), then whether the
    supported claims satisfy the route's required categories. `context`: the chunks the generator read, the only
    ones a claim may cite; `scores`: their retrieval scores; `judge`: the live judge, or the recorded verdicts."""
    claims, calls, cut = (), (), None
    if output is not None:
        v = await verify(output, context, paragraphs, scores, judge, settings.judge, settings.confidence, part=part)
        claims, calls, failure, failure_detail, cut = v.claims, tuple(v.judge_calls), v.parse_error, v.parse_detail, v.cut
    return _attempt(claims, calls, failure, failure_detail, cut, route, context, had_context)


def _attempt(claims, calls, failure, failure_detail, cut, route: Route, context: Mapping[str, Chunk],
             had_context: bool) -> VerifiedAttempt:
    enough = sufficiency(route, claims, context)
    return VerifiedAttempt(claims, calls, failure, failure_detail, enough,
                           AttemptSummary.of(claims, enough, failure, had_context), cut)


@dataclass(frozen=True)
class Streamed:
    """A streamed attempt: what the generator wrote (None: it failed before writing anything), its verification, and
    when (ms from the start of generation) generation ended and the first claim cleared its gates."""

    output: GenerationOutput | None
    verified: VerifiedAttempt
    verify_ms: float  # after generation ended
    generate_ms: float
    first_claim_ms: float | None

    def timings_ms(self) -> dict[str, float]:
        """For the attempt's trace: generation (verification runs alongside it), the verification left after it, and
        when the first supported claim cleared its gates."""
        out = {"generate": self.generate_ms, "verify": self.verify_ms}
        return {**out, "first_supported_claim": self.first_claim_ms} if self.first_claim_ms is not None else out


async def generate_and_verify(generator: StreamingGenerator, request: GenerationRequest, context: Mapping[str, Chunk],
                              paragraphs: Mapping[str, str], scores: Mapping[str, float], judge: Judge,
                              settings: TraceSettings, route: Route, part: int,
                              on_claim: OnClaim | None = None) -> Streamed:
    """Generate and verify at once: each claim is gated as soon as the output closes it. A claim without its own
    self_score waits for the output's self_assessment, at its end. A generator that fails after writing complete
    claims has its output recorded as written (finish_reason "error"): those claims stand, as claims of an output cut
    off at the token limit do; one that fails before writing any is a refusal (generator_failed), as ever."""
    started = time.perf_counter()
    reader = ClaimReader()
    gating: dict[int, asyncio.Task] = {}
    first: list[float] = []

    async def gate(i: int, claim: ClaimOut, self_assessment: float | None):
        (verified,), calls = await verify_claims([claim], self_assessment, context, paragraphs, scores, judge,
                                                 settings.judge, settings.confidence, part)
        if not first and verified.status == "supported":
            first.append(_ms(started))
        if on_claim is not None:
            on_claim(i, verified)
        return verified, calls

    def start(new: list[ClaimOut]) -> None:
        for k, claim in enumerate(new, len(reader.claims) - len(new)):
            if claim.self_score is not None:
                gating[k] = asyncio.create_task(gate(k, claim, None))

    output, error = None, None
    try:
        async for piece in generator.stream(request):
            if isinstance(piece, GenerationOutput):
                output = piece
            else:
                start(reader.feed(piece))
    except asyncio.CancelledError:
        for task in gating.values():
            task.cancel()
        raise
    except Exception as e:  # a failed generator: what it wrote before failing is all there is
        log.warning("generator %s failed: %s", generator.name, e)
        error = e
    generate_ms = _ms(started)
    if error is None and output is not None and not output.raw.startswith(reader.text):  # never, by the protocol
        log.warning("generator %s streamed text its output does not hold; verified whole", generator.name)
        for task in gating.values():
            task.cancel()
        return Streamed(output, await verify_attempt(output, context, paragraphs, scores, judge, settings, route, part,
                                                     True), _ms(started) - generate_ms, generate_ms, None)
    if output is not None:
        start(reader.feed(output.raw[len(reader.text):]))
    elif reader.text:
        output = GenerationOutput(raw=reader.text, model=generator.name, finish_reason="error" if error else "stop")
    else:
        failure = GENERATOR_FAILED if error else None
        v = _attempt((), (), failure, str(error) if error else None, None, route, context, True)
        return Streamed(None, v, 0.0, generate_ms, None)
    try:
        parsed = reader.finish(output.finish_reason)
    except ParseFailure as e:
        detail = f"{e.detail}: {error}" if error else e.detail
        return Streamed(output, _attempt((), (), e.reason, detail, None, route, context, True), 0.0, generate_ms, None)
    for k, claim in enumerate(parsed.claims):
        if k not in gating:
            gating[k] = asyncio.create_task(gate(k, claim, parsed.self_assessment))
    done = await asyncio.gather(*(gating[k] for k in range(len(parsed.claims))))
    claims = tuple(v for v, _ in done)
    calls = tuple(c for _, cs in done for c in cs)
    cut = f"{parsed.cut.reason}: {error or parsed.cut.detail}" if parsed.cut else None
    return Streamed(output, _attempt(claims, calls, None, None, cut, route, context, True),
                    round(_ms(started) - generate_ms, 1), generate_ms, first[0] if first else None)


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 1)
