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

    def _scores(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        with self._lock:
            out = self._model.predict([(query, p) for p in passages], batch_size=self.settings.batch_size,
                                      show_progress_bar=False, convert_to_numpy=True)
        return [float(x) for x in np.clip(np.asarray(out, dtype=np.float64).reshape(-1), 0.0, 1.0)]

    async def rerank(self, query: QueryPlan, candidates: Sequence[Candidate],
                     authority_weight: float, freshness_weight: float) -> list[Candidate]:
        candidates = list(candidates)
        # the passage as the dense lane embedded it: title and location give a bare paragraph its context
        scores = await asyncio.to_thread(self._scores, query.text, [embedding_text(c.chunk) for c in candidates])
        components = self.blend.components(query, candidates)
        for comp, score in zip(components, scores):
            comp["cross_encoder"] = score
        return self.blend.rank(candidates, components, authority_weight, freshness_weight)
