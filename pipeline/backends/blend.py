"""The rerank blend every reranker shares: its own relevance components, plus the route's
authority and freshness weights (configs/routes.yaml), combined by one weighted mean.

Each candidate keeps every component and every normalised weight in `rerank_components`
(`w_<name>`), so the trace shows the arithmetic behind its rank.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Sequence

from ..analysis import QueryAnalyzer, coverage
from ..config import RerankerSettings
from ..types import Candidate, QueryPlan


def _clamp(x: float) -> float:
    return max(0.0, min(1.0, x))


class RerankBlend:
    def __init__(self, settings: RerankerSettings, analyzer: QueryAnalyzer, rrf_k: int, lanes: int = 2):
        self.settings = settings
        self.analyzer = analyzer
        self._best_rrf = lanes / (rrf_k + 1)  # a chunk ranked first by every lane

    def components(self, query: QueryPlan, candidates: Sequence[Candidate]) -> list[dict[str, float]]:
        """Per candidate, in [0, 1]: term coverage, dense cosine past the floor, fused rank,
        authority of its source, and freshness among the candidates' publication dates."""
        s = self.settings
        dates = [c.chunk.published for c in candidates if c.chunk.published]
        newest = max(dates, default=None)
        oldest = min(dates, default=None)
        span = (dt.date.fromisoformat(newest) - dt.date.fromisoformat(oldest)).days if dates else 0
        out = []
        for c in candidates:
            ch = c.chunk
            tokens = self.analyzer.all_tokens(f"{ch.title} {ch.location} {ch.heading} {ch.text}")
            if ch.published and span > 0:
                fresh = 1.0 - (dt.date.fromisoformat(newest) - dt.date.fromisoformat(ch.published)).days / span
            else:
                fresh = 1.0 if ch.published else 0.0
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
