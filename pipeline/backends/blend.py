"""The rerank blend every reranker shares: its own relevance components, plus the route's
authority and freshness weights (configs/routes.yaml), combined by one weighted mean.

Each candidate keeps every component and every normalised weight in `rerank_components`
(`w_<name>`), so the trace shows the arithmetic behind its rank.
"""
from __future__ import annotations

import datetime as dt
import statistics
from dataclasses import replace
from typing import Sequence

from ..analysis import QueryAnalyzer, coverage
from ..config import RerankerSettings
from ..types import Candidate, QueryPlan


def _clamp(x: float) -> float:
    return max(0.0, min(1.0, x))


def _freshness(candidates: Sequence[Candidate]) -> list[float]:
    """1 for the newest date among the candidates, 0 for the oldest, linear between (all 1 when
    they share one date). An undated record of a known source reads the median of the dated ones:
    ranked as the oldest it lost to every dated rival, though its date is unknown, not old (a
    statute book's laws carry dates the regulations beside them may lack). A record of `unknown`
    authority stays at 0: an upload from a key that may assert nothing has its date withheld
    (Ingestor._stamp), and a neutral date would buy it what the withheld one could not. None
    dated: all 0."""
    days = [dt.date.fromisoformat(c.chunk.published).toordinal() if c.chunk.published else None
            for c in candidates]
    known = [d for d in days if d is not None]
    if not known:
        return [0.0] * len(days)
    newest = max(known)
    span = newest - min(known)

    def fresh(day: int) -> float:
        return 1.0 - (newest - day) / span if span else 1.0
    median = statistics.median(fresh(d) for d in known)
    return [fresh(d) if d is not None else 0.0 if c.chunk.authority == "unknown" else median
            for c, d in zip(candidates, days)]


class RerankBlend:
    def __init__(self, settings: RerankerSettings, analyzer: QueryAnalyzer, rrf_k: int, lanes: int = 2):
        self.settings = settings
        self.analyzer = analyzer
        self._best_rrf = lanes / (rrf_k + 1)  # a chunk ranked first by every lane

    def components(self, query: QueryPlan, candidates: Sequence[Candidate]) -> list[dict[str, float]]:
        """Per candidate, in [0, 1]: term coverage, dense cosine past the floor, fused rank,
        authority of its source, and freshness among the candidates' publication dates (a record
        without a date is neither the newest nor the oldest: it reads the dated candidates' median)."""
        s = self.settings
        freshness = _freshness(candidates)
        out = []
        for c, fresh in zip(candidates, freshness):
            ch = c.chunk
            tokens = self.analyzer.all_tokens(f"{ch.title} {ch.location} {ch.heading} {ch.text}")
            out.append({
                "coverage": coverage(query.terms, tokens),
                "dense": _clamp(((c.dense_score or 0.0) - s.dense_floor) / (1 - s.dense_floor)),
                "fused": _clamp(c.rrf_score / self._best_rrf),
                "authority": s.authority_values.get(ch.authority, 0.0),
                "freshness": _clamp(fresh),
            })
        return out

    def rank(self, candidates: Sequence[Candidate], components: Sequence[dict[str, float]],
             authority_weight: float, freshness_weight: float) -> list[Candidate]:
        """score = Σ w·component / Σ w over the configured weights plus the route's two; best first."""
        weights = dict(self.settings.weights, authority=authority_weight, freshness=freshness_weight)
        total = sum(weights.values()) or 1.0
        out = []
        for c, comp in zip(candidates, components):
            score = sum(w * comp.get(k, 0.0) for k, w in weights.items()) / total
            out.append(replace(c, rerank_score=round(score, 6),
                               rerank_components={k: round(v, 6) for k, v in comp.items()}
                               | {f"w_{k}": round(w / total, 6) for k, w in weights.items()}))
        out.sort(key=lambda c: (-(c.rerank_score or 0.0), -c.rrf_score, c.chunk.chunk_id))
        return out
