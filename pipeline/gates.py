"""The gates: what decides whether a generated claim may be shown as supported.

Prompts can ask; only these decide. Order: parse (claim by claim: pipeline/claims.py) → quote gate (retrieved chunk, exact
quote, not an instruction planted in the record) → number check → independent judge →
confidence (→ demoted below the profile's minimum). A claim that fails a gate is kept
and shown as *not supported* with its reasons; it is never scored.

`verify` is the single entry point, used by the orchestrator and by replay alike, so a
replayed trace goes through exactly the code that produced it.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Mapping, Sequence

from .citations import cite_path, cited_location, quote_pages
from .claims import ClaimOut, ParseFailure, parse_claims
from .config import ConfidenceSettings, JudgeSettings
from .instructions import overlaps_instruction
from .numbers import figures_without_basis, extract_figures
from .protocols import Judge
from .text import contains_normalised, locate, normalise
from .types import (Band, Chunk, CitationCheck, Confidence, GenerationOutput, JudgeCall, JudgeInput, Verdict,
                    VerifiedClaim, is_provision)

log = logging.getLogger(__name__)

# reason codes (stable: they appear in JSON, traces and evaluation reports)
CITATION_NOT_RETRIEVED = "citation_not_retrieved"
QUOTE_NOT_FOUND = "quote_not_found"
QUOTE_IS_INSTRUCTION = "quote_is_instruction"
NUMBER_WITHOUT_BASIS = "number_without_basis"
JUDGE_CONTRADICTED = "judge_contradicted"
JUDGE_NOT_ENTAILED = "judge_not_entailed"
JUDGE_BELOW_THRESHOLD = "judge_below_threshold"
CONFIDENCE_BELOW_MINIMUM = "confidence_below_minimum"


@dataclass(frozen=True)
class Verification:
    claims: tuple[VerifiedClaim, ...]
    judge_calls: tuple[JudgeCall, ...]
    parse_error: str | None = None
    parse_detail: str | None = None
    cut: str | None = None  # what stopped the output after its last complete claim ("reason: detail"); its claims stand


def premise_hash(premise: str) -> str:
    return hashlib.sha256(normalise(premise).encode("utf-8")).hexdigest()


def band_for(value: float, settings: ConfidenceSettings, regulation: bool = False) -> Band:
    """The band of a confidence; a claim quoting a regulation's unit has its own top boundary."""
    if value >= settings.top(regulation):
        return "TINGGI"
    if value >= settings.medium:
        return "SEDANG"
    return "RENDAH"


def compute_confidence(verdict: Verdict | None, retrieval: float, generator: float,
                       settings: ConfidenceSettings, regulation: bool = False) -> Confidence:
    """judge 45% + retrieval 35% + generator 20% (per profile), then the caps: without a verdict
    the result stays below the top band (it cannot claim what nobody checked); with
    `answerability_cap` it never exceeds the generator's calibrated probability that the
    quote answers the question (a true quote that does not answer is not a confident answer)."""
    w = settings.weights
    retrieval = max(0.0, min(1.0, retrieval))
    generator = max(0.0, min(1.0, generator))
    has_verdict = verdict is not None and verdict.label == "entailed" and verdict.score is not None
    judge = float(verdict.score) if has_verdict else None
    raw = w["judge"] * (judge or 0.0) + w["retrieval"] * retrieval + w["generator"] * generator
    caps = {} if has_verdict else {"no_verdict": settings.no_verdict_cap}
    if settings.answerability_cap:
        caps["answerability"] = generator
    capped_by = min(caps, key=lambda k: caps[k]) if caps else None
    cap = caps[capped_by] if capped_by else None
    value = round(min(raw, cap) if cap is not None else raw, 4)
    return Confidence(judge=judge, retrieval=round(retrieval, 4), generator=round(generator, 4), weights=dict(w),
                      raw=round(raw, 4), cap=round(cap, 4) if cap is not None else None, value=value,
                      band=band_for(value, settings, regulation),
                      capped_by=capped_by if cap is not None and raw > cap else None)


@dataclass(frozen=True)
class _Checked:
    """One claim after the quote gate and the number check: what the judge and the confidence read next."""

    text: str
    citations: tuple[CitationCheck, ...]
    reasons: tuple[str, ...]  # why it cannot be shown as supported, so far
    figures: tuple[str, ...]
    self_score: float | None


async def verify(output: GenerationOutput, context: Mapping[str, Chunk], paragraphs: Mapping[str, str],
                 retrieval_scores: Mapping[str, float], judge: Judge, judge_settings: JudgeSettings,
                 confidence_settings: ConfidenceSettings, part: int = 0) -> Verification:
    """Run every gate over one generator output.

    `context` is what retrieval returned for this request and the generator read: a
    citation to any other chunk fails, whatever its quote says.
    """
    try:
        parsed = parse_claims(output.raw, output.finish_reason)
    except ParseFailure as e:
        return Verification(claims=(), judge_calls=(), parse_error=e.reason, parse_detail=e.detail)
    claims, calls = await verify_claims(parsed.claims, parsed.self_assessment, context, paragraphs, retrieval_scores,
                                        judge, judge_settings, confidence_settings, part)
    cut = f"{parsed.cut.reason}: {parsed.cut.detail}" if parsed.cut else None
    return Verification(claims=claims, judge_calls=calls, cut=cut)


async def verify_claims(claims: Sequence[ClaimOut], self_assessment: float | None, context: Mapping[str, Chunk],
                        paragraphs: Mapping[str, str], retrieval_scores: Mapping[str, float], judge: Judge,
                        judge_settings: JudgeSettings, confidence_settings: ConfidenceSettings,
                        part: int = 0) -> tuple[tuple[VerifiedClaim, ...], tuple[JudgeCall, ...]]:
    """Every gate on these parsed claims (the whole output's, or one claim as soon as a streamed output closes it: the
    gates read each claim on its own, so both ways decide alike). `self_assessment` stands in for a claim's own
    self_score where it has none."""
    checked = [_check_claim(claim, self_assessment, context) for claim in claims]
    verdicts, calls = await _judge(checked, context, paragraphs, judge)
    regulation = frozenset(cid for cid, chunk in context.items() if is_provision(chunk.location, chunk.spans))
    return (tuple(_decide(c, verdicts.get(i), retrieval_scores, judge_settings, confidence_settings, part, regulation)
                  for i, c in enumerate(checked)), tuple(calls))


def _check_claim(claim, self_assessment: float | None, context: Mapping[str, Chunk]) -> _Checked:
    """The quote gate on every citation, then the number check against the quotes that passed."""
    citations: list[CitationCheck] = []
    reasons: list[str] = []
    for cit in claim.citations:
        check, reason = _check_citation(cit, context.get(cit.chunk_id))
        citations.append(check)
        if reason:
            reasons.append(reason)
    reasons += [f"{NUMBER_WITHOUT_BASIS}: {f.text}"
                for f in figures_without_basis(claim.text, [c.quote for c in citations if c.ok])]
    return _Checked(claim.text, tuple(citations), tuple(reasons), tuple(f.text for f in extract_figures(claim.text)),
                    claim.self_score if claim.self_score is not None else self_assessment)


def _check_citation(cit, chunk: Chunk | None) -> tuple[CitationCheck, str | None]:
    """A citation must name a chunk of this request's context, and quote it exactly, and the quote
    must state something rather than address the model. The check, and the reason it failed."""
    if chunk is None:
        return (CitationCheck(cit.chunk_id, cit.quote, None, None, False, CITATION_NOT_RETRIEVED),
                f"{CITATION_NOT_RETRIEVED}: {cit.chunk_id}")
    where = locate(chunk.text, cit.quote) if contains_normalised(chunk.text, cit.quote) else None
    if where and overlaps_instruction(chunk.text, *where):
        return (_citation(cit, chunk, where, False, QUOTE_IS_INSTRUCTION),
                f"{QUOTE_IS_INSTRUCTION}: the quoted text in {chunk.title}, {chunk.location} "
                "addresses the model instead of stating anything")
    if where:
        return _citation(cit, chunk, where, True, None), None
    return (_citation(cit, chunk, where, False, QUOTE_NOT_FOUND),
            f"{QUOTE_NOT_FOUND}: quote is not in {chunk.title}, {chunk.location}")


def _citation(cit, chunk: Chunk, where: tuple[int, int] | None, ok: bool, reason: str | None) -> CitationCheck:
    label = cited_location(chunk, where) if ok else chunk.location
    return CitationCheck(cit.chunk_id, cit.quote, chunk.title, label, ok, reason, chunk.is_example, chunk.doc_id,
                         chunk.rendition, (chunk.start, chunk.end), cite_path(chunk, label), quote_pages(chunk, where),
                         chunk.original or None, chunk.authority, chunk.uploaded_by, chunk.uploaded_at)


async def _judge(checked: Sequence[_Checked], context: Mapping[str, Chunk], paragraphs: Mapping[str, str],
                 judge: Judge) -> tuple[dict[int, Verdict], list[JudgeCall]]:
    """The judge reads each claim that passed the gates so far against the full paragraphs it cites.
    Verdicts by claim index, and the calls as recorded for replay."""
    to_judge = [(i, JudgeInput(claim=c.text, premise="\n\n".join(dict.fromkeys(
                    paragraphs.get(x.chunk_id) or context[x.chunk_id].text for x in c.citations))))
                for i, c in enumerate(checked) if not c.reasons]
    if not to_judge:
        return {}, []
    try:
        got = await judge.judge([ji for _, ji in to_judge])
        if len(got) != len(to_judge):
            raise ValueError(f"judge returned {len(got)} verdicts for {len(to_judge)} claims")
    except Exception as e:  # an unavailable judge is "no verdict", never a yes
        log.warning("judge %s unavailable: %s", getattr(judge, "name", "?"), e)
        got = [Verdict(None, None, getattr(judge, "name", "judge"), f"judge unavailable: {e}") for _ in to_judge]
    verdicts = {i: v for (i, _), v in zip(to_judge, got)}
    calls = [JudgeCall(normalise(ji.claim), premise_hash(ji.premise), v) for (_, ji), v in zip(to_judge, got)]
    return verdicts, calls


def _decide(c: _Checked, verdict: Verdict | None, retrieval_scores: Mapping[str, float],
            judge_settings: JudgeSettings, confidence_settings: ConfidenceSettings, part: int,
            regulation: frozenset[str] = frozenset()) -> VerifiedClaim:
    """Supported with its confidence, or not supported with every reason (never scored). `regulation`: the
    context's chunks that are a regulation's (their claims are banded by high_regulation)."""
    reasons = list(c.reasons)
    if verdict is not None and verdict.label is not None:
        if verdict.label == "contradicted":
            reasons.append(JUDGE_CONTRADICTED)
        elif verdict.label == "neutral":
            reasons.append(JUDGE_NOT_ENTAILED)
        elif (verdict.score or 0.0) < judge_settings.threshold:
            reasons.append(f"{JUDGE_BELOW_THRESHOLD}: {verdict.score:.3f} < {judge_settings.threshold}")
    shown = dict(text=c.text, citations=c.citations, is_example=any(x.is_example for x in c.citations),
                 figures=c.figures, verdict=verdict, self_score=c.self_score, part=part)
    if reasons:
        return VerifiedClaim(status="unsupported", reasons=tuple(reasons), **shown)
    retrieval = max(retrieval_scores.get(x.chunk_id, 0.0) for x in c.citations)
    conf = compute_confidence(verdict, retrieval, c.self_score or 0.0, confidence_settings,
                              regulation=c.citations[0].chunk_id in regulation)
    if conf.value < confidence_settings.min_supported:
        return VerifiedClaim(status="unsupported", reasons=(f"{CONFIDENCE_BELOW_MINIMUM}: {conf.value:.3f} < "
                                                            f"{confidence_settings.min_supported}",), **shown)
    return VerifiedClaim(status="supported", confidence=conf, **shown)


class RecordedJudge:
    """Plays back the verdicts a trace recorded; anything else gets no verdict."""

    name = "recorded"

    def __init__(self, calls: Sequence[JudgeCall]):
        self._calls = {(c.claim, c.premise_sha256): c.verdict for c in calls}

    async def judge(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        return [self._calls.get((normalise(it.claim), premise_hash(it.premise)),
                                Verdict(None, None, self.name, "no recorded verdict for this claim and paragraph"))
                for it in items]
