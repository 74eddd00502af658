"""Replay: re-run the gates and the decision on a trace's recorded generator output.

No index and no model is needed: the trace carries the candidates, the context, the full
paragraphs and the raw output. Judge verdicts are played back for the exact claim and
paragraph they were given for; a changed claim gets no verdict (so it is never
uncapped). The replayed decision must equal the recorded one.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .analysis import QueryAnalyzer
from .config import ConfidenceSettings, JudgeSettings
from .decision import AttemptSummary, conclude, decide_part, reason_text, sufficiency
from .gates import RecordedJudge, verify
from .trace import AttemptTrace, Decision, Trace, context_chunks, decision_of
from .types import PartOutcome, Result


@dataclass(frozen=True)
class ReplayReport:
    recorded: Decision
    replayed: Decision
    result: Result

    @property
    def same(self) -> bool:
        return self.recorded == self.replayed

    def differences(self) -> list[str]:
        out = []
        if self.recorded.outcome != self.replayed.outcome:
            out.append(f"outcome: recorded {self.recorded.outcome}, replayed {self.replayed.outcome}")
        if self.recorded.reason_code != self.replayed.reason_code:
            out.append(f"reason: recorded {self.recorded.reason_code}, replayed {self.replayed.reason_code}")
        rec = {c[:2]: c for c in self.recorded.claims}
        rep = {c[:2]: c for c in self.replayed.claims}
        for key in sorted(rec.keys() | rep.keys()):
            a, b = rec.get(key), rep.get(key)
            if a != b:
                out.append(f"claim (part {key[0] + 1}) {key[1][:80]!r}: recorded {a[2:] if a else 'absent'}, "
                           f"replayed {b[2:] if b else 'absent'}")
        return out


def _timed_out(trace: Trace) -> Result:
    """The result of a trace refused before any attempt finished (a timeout)."""
    d = trace.decision
    return Result("refusal", trace.question, trace.lang, (),  # type: ignore[arg-type]
                  (PartOutcome(0, trace.question, "none", False, None, d.reason_code),),
                  reason_code=d.reason_code, reason=reason_text(d.reason_code or "", trace.lang),
                  trace_id=trace.trace_id)


def recorded_result(trace: Trace, analyzer: QueryAnalyzer) -> Result:
    """The answer as it was shown, rebuilt from the trace's recorded parts (no gate re-run, no model):
    the same claims in the same order, so a claim's index here is the index the user saw."""
    if not trace.parts:
        return _timed_out(trace)
    return conclude(trace.parts, trace.question, trace.lang, analyzer.all_tokens,
                    trace.settings["conflicts"]["min_overlap"], trace.settings["nearest_records"], trace.trace_id,
                    trace.named_documents, *_dated(trace))


def _dated(trace: Trace) -> tuple[dict | None, ConfidenceSettings | None]:
    """The answer's date as recorded (traces written before answers had one: none, so nothing is re-dated) and the
    confidence settings that cap a claim not in force then."""
    as_of = trace.settings.get("as_of")
    return as_of, ConfidenceSettings(**trace.settings["confidence"]) if as_of else None


async def replay(trace: Trace, analyzer: QueryAnalyzer) -> ReplayReport:
    if not trace.parts:  # refused before any attempt finished (a timeout): there is nothing to re-run
        result = _timed_out(trace)
        return ReplayReport(recorded=trace.decision, replayed=decision_of(result), result=result)
    # `fp16` is the shared model setting, which the judge never uses (it runs in `dtype`); traces
    # written before the judge refused it carry `fp16: true`
    judge_settings = JudgeSettings(**{k: v for k, v in trace.settings["judge"].items() if k != "fp16"})
    confidence_settings = ConfidenceSettings(**trace.settings["confidence"])
    parts = []
    for p in trace.parts:
        route = p.route.as_route()
        attempts: list[AttemptTrace] = []
        summaries: list[AttemptSummary] = []
        for a in p.attempts:
            ctx = context_chunks(a)
            claims, failure = (), a.failure
            if a.generator_output is not None:
                scores = {c.chunk.chunk_id: c.rerank_score or 0.0 for c in a.candidates if c.chunk.chunk_id in ctx}
                v = await verify(a.generator_output, ctx, a.paragraphs, scores, RecordedJudge(a.judge_calls),
                                 judge_settings, confidence_settings, part=p.index)
                claims, failure = v.claims, v.parse_error
            enough = sufficiency(route, claims, ctx)
            summary = AttemptSummary.of(claims, enough, failure, bool(a.context))
            attempts.append(replace(a, claims=claims, failure=failure, sufficiency=enough, ok=summary.ok))
            summaries.append(summary)
        outcome = decide_part(p.index, p.question, route, summaries)
        parts.append(replace(p, attempts=tuple(attempts), outcome=outcome))
    result = conclude(parts, trace.question, trace.lang, analyzer.all_tokens,
                      trace.settings["conflicts"]["min_overlap"], trace.settings["nearest_records"], trace.trace_id,
                      trace.named_documents, *_dated(trace))
    return ReplayReport(recorded=trace.decision, replayed=decision_of(result), result=result)
