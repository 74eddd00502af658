"""Replay: re-run the gates and the decision on a trace's recorded generator output.

No index and no model is needed: the trace carries the candidates, the context, the full
paragraphs and the raw output. Judge verdicts are played back for the exact claim and
paragraph they were given for; a changed claim gets no verdict (so it is never
uncapped). The replayed decision must equal the recorded one.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .analysis import QueryAnalyzer
from .decision import AttemptSummary, conclude, decide_part, reason_text
from .direct_answer import BANDS
from .gates import RecordedJudge
from .trace import AttemptTrace, Decision, Trace, context_chunks, decision_of
from .types import PartOutcome, Result
from .verification import verify_attempt


@dataclass(frozen=True)
class ReplayReport:
    recorded: Decision
    replayed: Decision
    result: Result

    @property
    def same(self) -> bool:
        return self.recorded == self.replayed

    def differences(self, lang: str = "en") -> list[str]:
        """What the replayed decision changed, one line each, in `lang` (id or en)."""
        w = _DIFF_WORDS["id" if lang == "id" else "en"]
        out = []
        if self.recorded.outcome != self.replayed.outcome:
            out.append(w["outcome"].format(a=w["outcomes"].get(self.recorded.outcome, self.recorded.outcome),
                                           b=w["outcomes"].get(self.replayed.outcome, self.replayed.outcome)))
        if self.recorded.reason_code != self.replayed.reason_code:
            out.append(w["reason"].format(a=self.recorded.reason_code or "—", b=self.replayed.reason_code or "—"))
        rec = {c[:2]: c for c in self.recorded.claims}
        rep = {c[:2]: c for c in self.replayed.claims}
        for key in sorted(rec.keys() | rep.keys()):
            a, b = rec.get(key), rep.get(key)
            if a != b:
                out.append(w["claim"].format(part=key[0] + 1, text=repr(key[1][:80]), a=_fate(a, lang), b=_fate(b, lang)))
        return out


def _fate(claim: tuple | None, lang: str) -> str:
    """A claim's recorded fate in words: "supported, HIGH" / "not supported (judge_not_entailed)" / "absent"."""
    lang = "id" if lang == "id" else "en"
    w = _DIFF_WORDS[lang]
    if claim is None:
        return w["absent"]
    _, _, state, band, reasons = claim
    return (w["status"].get(state, state) + (f", {BANDS[lang].get(band, band)}" if band else "")
            + (f" ({'; '.join(reasons)})" if reasons else ""))


_DIFF_WORDS = {
    "en": {"outcome": "outcome: recorded {a}, replayed {b}", "reason": "reason: recorded {a}, replayed {b}",
           "claim": "claim (part {part}) {text}: recorded {a}, replayed {b}", "absent": "absent",
           "outcomes": {"answer": "answer", "refusal": "refusal"},
           "status": {"supported": "supported", "unsupported": "not supported"}},
    "id": {"outcome": "hasil: terekam {a}, diputar ulang {b}", "reason": "alasan: terekam {a}, diputar ulang {b}",
           "claim": "klaim (bagian {part}) {text}: terekam {a}, diputar ulang {b}", "absent": "tidak ada",
           "outcomes": {"answer": "jawaban", "refusal": "penolakan"},
           "status": {"supported": "didukung", "unsupported": "tidak didukung"}},
}


def _timed_out(trace: Trace, lang: str) -> Result:
    """The result of a trace refused before any attempt finished (a timeout)."""
    d = trace.decision
    return Result("refusal", trace.question, lang, (),  # type: ignore[arg-type]
                  (PartOutcome(0, trace.question, "none", False, None, d.reason_code),),
                  reason_code=d.reason_code, reason=reason_text(d.reason_code or "", lang),
                  trace_id=trace.trace_id)


def recorded_result(trace: Trace, analyzer: QueryAnalyzer, lang: str | None = None) -> Result:
    """The answer as it was shown, rebuilt from the trace's recorded parts (no gate re-run, no model):
    the same claims in the same order, so a claim's index here is the index the user saw. `lang`: the words
    around the claims (reasons, conflicts, the direct answer line) in another language than the answer's own,
    for a page shown in that language."""
    lang = lang or trace.lang
    if not trace.parts:
        return _timed_out(trace, lang)
    return _concluded(trace, trace.parts, lang, analyzer)


def _concluded(trace: Trace, parts, lang: str, analyzer: QueryAnalyzer) -> Result:
    """The decision over the parts with the trace's settings. Its date as recorded (traces written before answers
    had one: none, so nothing is re-dated), with the confidence settings that cap a claim not in force then."""
    s = trace.settings
    return conclude(parts, trace.question, lang, analyzer.all_tokens, s.conflicts.min_overlap, s.nearest_records,
                    trace.trace_id, trace.named_documents, s.as_of, s.confidence if s.as_of else None)


async def replay(trace: Trace, analyzer: QueryAnalyzer) -> ReplayReport:
    if not trace.parts:  # refused before any attempt finished (a timeout): there is nothing to re-run
        result = _timed_out(trace, trace.lang)
        return ReplayReport(recorded=trace.decision, replayed=decision_of(result), result=result)
    parts = []
    for p in trace.parts:
        route = p.route.as_route()
        attempts: list[AttemptTrace] = []
        summaries: list[AttemptSummary] = []
        for a in p.attempts:
            ctx = context_chunks(a)
            scores = {c.chunk.chunk_id: c.rerank_score or 0.0 for c in a.candidates if c.chunk.chunk_id in ctx}
            v = await verify_attempt(a.generator_output, ctx, a.paragraphs, scores, RecordedJudge(a.judge_calls),
                                     trace.settings, route, p.index, bool(a.context), a.failure)
            attempts.append(replace(a, claims=v.claims, failure=v.failure, output_cut=v.cut, sufficiency=v.sufficiency,
                                    ok=v.summary.ok))
            summaries.append(v.summary)
        outcome = decide_part(p.index, p.question, route, summaries)
        parts.append(replace(p, attempts=tuple(attempts), outcome=outcome))
    result = _concluded(trace, parts, trace.lang, analyzer)
    return ReplayReport(recorded=trace.decision, replayed=decision_of(result), result=result)
