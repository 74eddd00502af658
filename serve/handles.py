"""The pipeline's stage Protocols implemented over Ray Serve deployment handles.

The ingress builds `pipeline.orchestrator.Components` from these, so the one orchestrator
runs unchanged in Serve: every await in it becomes a call to another deployment.
The retriever's handles name the collection they read, so an answer only ever sees its own.
Each call carries a deadline; a judge that does not answer in time is "no verdict"
(the gates cap the claim), never a yes.
"""
from __future__ import annotations

import asyncio
from typing import Sequence

import numpy as np
from ray.serve.handle import DeploymentHandle

from pipeline.types import Candidate, Chunk, ContextLink, Document, GenerationOutput, GenerationRequest, JudgeInput, QueryPlan, Verdict


async def _call(handle: DeploymentHandle, method: str, *args, timeout: float, **kwargs):
    return await asyncio.wait_for(getattr(handle, method).remote(*args, **kwargs), timeout)


class HandleEmbedder:
    def __init__(self, handle: DeploymentHandle, name: str, dim: int, timeout: float):
        self.h, self.name, self.dim, self.timeout = handle, name, dim, timeout

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return await _call(self.h, "embed_queries", list(texts), timeout=self.timeout)

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return await _call(self.h, "embed_passages", list(texts), timeout=self.timeout)


class HandleSparseEmbedder(HandleEmbedder):
    """An embedder with lexical weights (BGE-M3, embedder.sparse): the SparseEmbedder protocol too."""

    async def embed_queries_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await _call(self.h, "embed_queries_hybrid", list(texts), timeout=self.timeout)

    async def embed_passages_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await _call(self.h, "embed_passages_hybrid", list(texts), timeout=self.timeout)


def handle_embedder(handle: DeploymentHandle, info: dict, timeout: float, sparse: bool) -> HandleEmbedder:
    """The embedder over the Embedder deployment, with lexical weights when the profile has the sparse lane."""
    return (HandleSparseEmbedder if sparse else HandleEmbedder)(handle, info["name"], info["dim"], timeout)


class HandleSparseIndex:
    def __init__(self, retriever: DeploymentHandle, timeout: float, collection: str = "default"):
        self.h, self.timeout, self.collection = retriever, timeout, collection

    async def sparse_search(self, weights: dict[int, float], limit: int) -> list[tuple[str, float]]:
        return await _call(self.h, "sparse_search", weights, limit, timeout=self.timeout, collection=self.collection)

    async def sparse_score(self, weights: dict[int, float], chunk_ids: Sequence[str]) -> dict[str, float]:
        return await _call(self.h, "sparse_score", weights, list(chunk_ids),
                           timeout=self.timeout, collection=self.collection)


class HandleDenseIndex:
    def __init__(self, retriever: DeploymentHandle, timeout: float, collection: str = "default"):
        self.h, self.timeout, self.collection = retriever, timeout, collection

    async def search(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        return await _call(self.h, "dense_search", vector, limit, timeout=self.timeout, collection=self.collection)

    async def score(self, vector: np.ndarray, chunk_ids: Sequence[str]) -> dict[str, float]:
        return await _call(self.h, "dense_score", vector, list(chunk_ids),
                           timeout=self.timeout, collection=self.collection)


class HandleLexicalIndex:
    def __init__(self, retriever: DeploymentHandle, timeout: float, collection: str = "default"):
        self.h, self.timeout, self.collection = retriever, timeout, collection

    async def search(self, tokens: Sequence[str], limit: int) -> list[tuple[str, float]]:
        return await _call(self.h, "lexical_search", list(tokens), limit,
                           timeout=self.timeout, collection=self.collection)

    async def score(self, tokens: Sequence[str], chunk_ids: Sequence[str]) -> dict[str, float]:
        return await _call(self.h, "lexical_score", list(tokens), list(chunk_ids),
                           timeout=self.timeout, collection=self.collection)

    async def idf(self, tokens: Sequence[str]) -> dict[str, float]:
        return await _call(self.h, "idf", list(tokens), timeout=self.timeout, collection=self.collection)

    async def max_idf(self) -> float:
        return await _call(self.h, "max_idf", timeout=self.timeout, collection=self.collection)


class HandleChunkSource:
    def __init__(self, retriever: DeploymentHandle, timeout: float, collection: str = "default"):
        self.h, self.timeout, self.collection = retriever, timeout, collection

    async def get(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        return await _call(self.h, "get", list(chunk_ids), timeout=self.timeout, collection=self.collection)

    async def paragraph(self, chunk: Chunk) -> str:
        return await _call(self.h, "paragraph", chunk, timeout=self.timeout, collection=self.collection)

    async def references(self, chunk_ids: Sequence[str]) -> dict[str, list[ContextLink]]:
        return await _call(self.h, "references", list(chunk_ids), timeout=self.timeout, collection=self.collection)

    async def documents(self) -> list[Document]:
        return await _call(self.h, "documents", timeout=self.timeout, collection=self.collection)


class HandleReranker:
    def __init__(self, handle: DeploymentHandle, name: str, timeout: float):
        self.h, self.name, self.timeout = handle, name, timeout

    async def rerank(self, query: QueryPlan, candidates: Sequence[Candidate], authority_weight: float,
                     freshness_weight: float) -> list[Candidate]:
        return await _call(self.h, "rerank", query, list(candidates), authority_weight, freshness_weight,
                           timeout=self.timeout)


class HandleGenerator:
    def __init__(self, handle: DeploymentHandle, name: str, timeout: float):
        self.h, self.name, self.timeout = handle, name, timeout

    async def generate(self, request: GenerationRequest) -> GenerationOutput:
        return await _call(self.h, "generate", request, timeout=self.timeout)

    async def rewrite_query(self, question: str, lang: str) -> str | None:
        return await _call(self.h, "rewrite_query", question, lang, timeout=self.timeout)


class HandleJudge:
    """A judge over a handle. Failures and timeouts raise; `pipeline.gates.verify` turns
    them into "no verdict" for every claim (capped below the top band)."""

    def __init__(self, handle: DeploymentHandle, name: str, timeout: float):
        self.h, self.name, self.timeout = handle, name, timeout

    async def judge(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        return await _call(self.h, "judge", list(items), timeout=self.timeout)
