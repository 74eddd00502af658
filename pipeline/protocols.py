"""One Protocol per stage. The orchestrator depends on these and nothing else.

In-process backends implement them directly; `serve/` implements the same Protocols
over Ray Serve deployment handles. Every method the orchestrator awaits is async so both
hostings fit; writing to indexes happens at ingest, outside the request path.
"""
from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from .types import (Candidate, Chunk, ContextLink, Document, DocumentStatus, GenerationOutput, GenerationRequest,
                    JudgeInput, QueryPlan, Verdict)


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalised."""
        ...

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalised."""
        ...


@runtime_checkable
class DenseIndex(Protocol):
    async def search(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity), best first."""
        ...

    async def score(self, vector: np.ndarray, chunk_ids: Sequence[str]) -> dict[str, float]:
        """Cosine similarity of the given chunks, so every candidate has a dense score."""
        ...


@runtime_checkable
class LexicalIndex(Protocol):
    async def search(self, tokens: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """(chunk id, BM25 score), best first; only positive scores."""
        ...

    async def score(self, tokens: Sequence[str], chunk_ids: Sequence[str]) -> dict[str, float]:
        ...

    async def idf(self, tokens: Sequence[str]) -> dict[str, float]:
        """idf of each token the corpus contains (absent tokens are left out)."""
        ...

    async def max_idf(self) -> float:
        ...


@runtime_checkable
class SparseIndex(Protocol):
    """The sparse lane (BGE-M3 lexical weights): token id → weight, scored by inner product."""

    async def sparse_search(self, weights: dict[int, float], limit: int) -> list[tuple[str, float]]:
        ...

    async def sparse_score(self, weights: dict[int, float], chunk_ids: Sequence[str]) -> dict[str, float]:
        ...


@runtime_checkable
class ChunkSource(Protocol):
    async def get(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        ...

    async def paragraph(self, chunk: Chunk) -> str:
        """The full paragraph (numbered paragraph / Pasal) a chunk belongs to."""
        ...

    async def references(self, chunk_ids: Sequence[str]) -> dict[str, list[ContextLink]]:
        """For each chunk, its resolved cross-references: where each stands and the chunk it points at."""
        ...

    async def definitions(self, term: str) -> list[tuple[str, str]]:
        """The definition entries of a term (a `definitions.term_key`): [(chunk id, span label)], every
        document's that defines it."""
        ...

    async def documents(self) -> list[Document]:
        """Every ingested document (what a question naming a regulation is checked against)."""
        ...

    async def status(self, doc_ids: Sequence[str]) -> dict[str, DocumentStatus]:
        """Per document: what decides its legal standing on a date (pipeline/status.py)."""
        ...


@runtime_checkable
class Reranker(Protocol):
    name: str

    async def rerank(self, query: QueryPlan, candidates: Sequence[Candidate],
                     authority_weight: float, freshness_weight: float) -> list[Candidate]:
        """Candidates with `rerank_score` in [0, 1] and its components, best first."""
        ...


@runtime_checkable
class Generator(Protocol):
    name: str

    async def generate(self, request: GenerationRequest) -> GenerationOutput:
        """Claim JSON as text (see pipeline.claims.GeneratorClaims for the schema)."""
        ...


@runtime_checkable
class Judge(Protocol):
    name: str

    async def judge(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        """One verdict per input; `Verdict(label=None)` when the judge cannot say."""
        ...


@runtime_checkable
class QueryRewriter(Protocol):
    """Optional on a Generator: its model rewrites the query for the corrective retry
    (generator.rewrite: generator). None means "cannot": the rules rewrite is used."""

    async def rewrite_query(self, question: str, lang: str) -> str | None:
        ...


@runtime_checkable
class SparseEmbedder(Protocol):
    """Optional on an Embedder (BGE-M3): lexical weights per token id, for the sparse lane.
    One model pass yields both kinds of vector."""

    async def embed_queries_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        ...

    async def embed_passages_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        ...
