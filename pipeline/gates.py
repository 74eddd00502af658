"""The gates: what decides whether a generated claim may be shown as supported.

Prompts can ask; only these decide. Order: parse → quote gate (retrieved chunk, exact
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

from .claims import ParseFailure, parse_claims
from .config import ConfidenceSettings, JudgeSettings
from .citations import cite_path, cited_location, quote_pages
from .instructions import overlaps_instruction
from .numbers import figures_without_basis, extract_figures
from .protocols import Judge
from .text import contains_normalised, locate, normalise
from .types import (Band, Chunk, CitationCheck, Confidence, GenerationOutput, JudgeCall, JudgeInput, Verdict,
                    VerifiedClaim)

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


def premise_hash(premise: str) -> str:
    return hashlib.sha256(normalise(premise).encode("utf-8")).hexdigest()


def band_for(value: float, settings: ConfidenceSettings) -> Band:
    if value >= settings.high:
        return "TINGGI"
    if value >= settings.medium:
        return "SEDANG"
    return "RENDAH"


def compute_confidence(verdict: Verdict | None, retrieval: float, generator: float,
                       settings: ConfidenceSettings) -> Confidence:
    """judge 45% + retrieval 35% + generator 20%; without a verdict the judge term is 0 and
    the result is hard-capped below the top band (it cannot claim what nobody checked)."""
    w = settings.weights
    retrieval = max(0.0, min(1.0, retrieval))
    generator = max(0.0, min(1.0, generator))
    has_verdict = verdict is not None and verdict.label == "entailed" and verdict.score is not None
    judge = float(verdict.score) if has_verdict else None
    raw = w["judge"] * (judge or 0.0) + w["retrieval"] * retrieval + w["generator"] * generator
    cap = None if has_verdict else settings.no_verdict_cap
    value = min(raw, cap) if cap is not None else raw
    value = round(value, 4)
    return Confidence(judge=judge, retrieval=round(retrieval, 4), generator=round(generator, 4), weights=dict(w),
                      raw=round(raw, 4), cap=cap, value=value, band=band_for(value, settings))


def _check(cit, chunk: Chunk, where: tuple[int, int] | None, ok: bool, reason: str | None) -> CitationCheck:
    label = cited_location(chunk, where) if ok else chunk.location
    return CitationCheck(cit.chunk_id, cit.quote, chunk.title, label, ok, reason, chunk.is_example, chunk.doc_id,
                         chunk.source_path, (chunk.start, chunk.end), cite_path(chunk, label), quote_pages(chunk, where),
                         chunk.document_path or None)


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

    staged: list[tuple[str, tuple[CitationCheck, ...], list[str], tuple[str, ...], float | None]] = []
    for claim in parsed.claims:
        checks: list[CitationCheck] = []
        reasons: list[str] = []
        for cit in claim.citations:
            chunk = context.get(cit.chunk_id)
            if chunk is None:
                checks.append(CitationCheck(cit.chunk_id, cit.quote, None, None, False, CITATION_NOT_RETRIEVED))
                reasons.append(f"{CITATION_NOT_RETRIEVED}: {cit.chunk_id}")
                continue
            where = locate(chunk.text, cit.quote) if contains_normalised(chunk.text, cit.quote) else None
            if where and overlaps_instruction(chunk.text, *where):
                checks.append(_check(cit, chunk, where, False, QUOTE_IS_INSTRUCTION))
                reasons.append(f"{QUOTE_IS_INSTRUCTION}: the quoted text in {chunk.title}, {chunk.location} "
                               "addresses the model instead of stating anything")
            elif where:
                checks.append(_check(cit, chunk, where, True, None))
            else:
                checks.append(_check(cit, chunk, where, False, QUOTE_NOT_FOUND))
                reasons.append(f"{QUOTE_NOT_FOUND}: quote is not in {chunk.title}, {chunk.location}")
        figures = tuple(f.text for f in extract_figures(claim.text))
        unbacked = figures_without_basis(claim.text, [c.quote for c in checks if c.ok])
        for f in unbacked:
            reasons.append(f"{NUMBER_WITHOUT_BASIS}: {f.text}")
        self_score = claim.self_score if claim.self_score is not None else parsed.self_assessment
        staged.append((claim.text, tuple(checks), reasons, figures, self_score))

    # the judge reads each surviving claim against the full paragraphs it cites
    to_judge: list[tuple[int, JudgeInput]] = []
    for i, (text, checks, reasons, _, _) in enumerate(staged):
        if reasons:
            continue
        premise = "\n\n".join(dict.fromkeys(paragraphs.get(c.chunk_id) or context[c.chunk_id].text for c in checks))
        to_judge.append((i, JudgeInput(claim=text, premise=premise)))
    verdicts: dict[int, Verdict] = {}
    calls: list[JudgeCall] = []
    if to_judge:
        try:
            got = await judge.judge([ji for _, ji in to_judge])
            if len(got) != len(to_judge):
                raise ValueError(f"judge returned {len(got)} verdicts for {len(to_judge)} claims")
        except Exception as e:  # an unavailable judge is "no verdict", never a yes
            log.warning("judge %s unavailable: %s", getattr(judge, "name", "?"), e)
            got = [Verdict(None, None, getattr(judge, "name", "judge"), f"judge unavailable: {e}") for _ in to_judge]
        for (i, ji), v in zip(to_judge, got):
            verdicts[i] = v
            calls.append(JudgeCall(normalise(ji.claim), premise_hash(ji.premise), v))

    out: list[VerifiedClaim] = []
    for i, (text, checks, reasons, figures, self_score) in enumerate(staged):
        verdict = verdicts.get(i)
        reasons = list(reasons)
        if verdict is not None and verdict.label is not None:
            if verdict.label == "contradicted":
                reasons.append(JUDGE_CONTRADICTED)
            elif verdict.label == "neutral":
                reasons.append(JUDGE_NOT_ENTAILED)
            elif (verdict.score or 0.0) < judge_settings.threshold:
                reasons.append(f"{JUDGE_BELOW_THRESHOLD}: {verdict.score:.3f} < {judge_settings.threshold}")
        is_example = any(c.is_example for c in checks)
        if reasons:
            out.append(VerifiedClaim(text=text, status="unsupported", citations=checks, reasons=tuple(reasons),
                                     is_example=is_example, figures=figures, verdict=verdict,
                                     self_score=self_score, part=part))
            continue
        retrieval = max(retrieval_scores.get(c.chunk_id, 0.0) for c in checks)
        conf = compute_confidence(verdict, retrieval, self_score or 0.0, confidence_settings)
        if conf.value < confidence_settings.min_supported:
            out.append(VerifiedClaim(text=text, status="unsupported", citations=checks, is_example=is_example,
                                     reasons=(f"{CONFIDENCE_BELOW_MINIMUM}: {conf.value:.3f} < "
                                              f"{confidence_settings.min_supported}",),
                                     figures=figures, verdict=verdict, self_score=self_score, part=part))
            continue
        out.append(VerifiedClaim(text=text, status="supported", citations=checks, is_example=is_example,
                                 figures=figures, verdict=verdict, confidence=conf, self_score=self_score, part=part))
    return Verification(claims=tuple(out), judge_calls=tuple(calls))


class RecordedJudge:
    """Plays back the verdicts a trace recorded; anything else gets no verdict."""

    name = "recorded"

    def __init__(self, calls: Sequence[JudgeCall]):
        self._calls = {(c.claim, c.premise_sha256): c.verdict for c in calls}

    async def judge(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        return [self._calls.get((normalise(it.claim), premise_hash(it.premise)),
                                Verdict(None, None, self.name, "no recorded verdict for this claim and paragraph"))
                for it in items]
