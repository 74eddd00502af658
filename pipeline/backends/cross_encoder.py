"""The production reranker: a cross-encoder (default BAAI/bge-reranker-v2-m3) read through
sentence-transformers' `CrossEncoder`, its logit squashed by a sigmoid into [0, 1].

The cross-encoder's score is one component of the shared blend (backends/blend.py): the
profile weighs it against the fused rank, and each route adds its authority and freshness
weights, so a question about a provision's wording favours the official source and one
about what changed favours the newest record. The blend is recorded on every candidate.
"""
from __future__ import annotations

import asyncio
import threading
from typing import Sequence

import numpy as np

from ..analysis import QueryAnalyzer
from ..config import RerankerSettings
from ..models import resolve_model, torch_device
from ..text import embedding_text
from ..types import Candidate, QueryPlan
from .blend import RerankBlend


class CrossEncoderReranker:
    def __init__(self, settings: RerankerSettings, analyzer: QueryAnalyzer, rrf_k: int, lanes: int = 2):
        import torch
        from sentence_transformers import CrossEncoder

        self.settings = settings
        self.name = f"cross-encoder/{settings.model}"
        path = resolve_model(settings.model or "", "reranker")
        self.device = torch_device(settings.device)
        self._model = CrossEncoder(str(path), device=self.device, max_length=settings.max_length,
                                   activation_fn=torch.nn.Sigmoid())
        if settings.fp16 and self.device.startswith("cuda"):
            self._model.model.half()
        self._lock = threading.Lock()
        self.blend = RerankBlend(settings, analyzer, rrf_k, lanes)

    def _pair_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        with self._lock:
            out = self._model.predict(list(pairs), batch_size=self.settings.batch_size,
                                      show_progress_bar=False, convert_to_numpy=True)
        return [float(x) for x in np.clip(np.asarray(out, dtype=np.float64).reshape(-1), 0.0, 1.0)]

    async def rerank(self, query: QueryPlan, candidates: Sequence[Candidate],
                     authority_weight: float, freshness_weight: float) -> list[Candidate]:
        return (await self.rerank_batch([(query, candidates, authority_weight, freshness_weight)]))[0]

    async def rerank_batch(self, requests: Sequence[tuple[QueryPlan, Sequence[Candidate], float, float]]
                           ) -> list[list[Candidate]]:
        """Several questions' candidates in one pass of the model (the served Reranker batches
        concurrent questions into one call): every (question, passage) pair is scored together."""
        pairs = [(q.text, embedding_text(c.chunk)) for q, cands, _, _ in requests for c in cands]
        scores = iter(await asyncio.to_thread(self._pair_scores, pairs))
        out = []
        for query, candidates, authority_weight, freshness_weight in requests:
            candidates = list(candidates)
            # the passage as the dense lane embedded it: title and location give a bare paragraph its context
            components = self.blend.components(query, candidates)
            for comp in components:
                comp["cross_encoder"] = next(scores)
            out.append(self.blend.rank(candidates, components, authority_weight, freshness_weight))
        return out
