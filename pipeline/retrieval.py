"""Hybrid retrieval: dense + lexical lanes, reciprocal rank fusion, dedup, per-source cap.

Every candidate carries every lane's score (a chunk only one lane found is scored by the
other too), so a trace shows why each candidate ranked where it did.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import re
from dataclasses import replace
from typing import Collection, Mapping, Sequence

from .config import RerankerSettings, RetrievalSettings
from .protocols import ChunkSource, DenseIndex, Embedder, LexicalIndex, SparseEmbedder, SparseIndex
from .text import normalise
from .types import Candidate, QueryPlan


def rrf(rankings: Mapping[str, Sequence[str]], k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion: score(d) = sum over lanes of 1 / (k + rank of d in that lane)."""
    scores: dict[str, float] = {}
    for ranking in rankings.values():
        for rank, item in enumerate(ranking, 1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return scores


_WORD = re.compile(r"\w+")


def _shingles(text: str, n: int = 3) -> frozenset[tuple[str, ...]]:
    words = _WORD.findall(normalise(text).lower())
    if len(words) < n:
        return frozenset([tuple(words)])
    return frozenset(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def dedup_and_cap(candidates: Sequence[Candidate], threshold: float, per_source: int,
                  uncapped: Collection[str] = ()) -> list[Candidate]:
    """Mark near-duplicates of a better candidate, and candidates past a document's cap (not for the
    documents in `uncapped`: those a question names, whose passages it is about).

    A near-duplicate in the same document is dropped; one in another document is the same
    provision in another version or regulation, so both stay citable and it is only marked
    (`order_versions` later puts the more authoritative, fresher one first). Nothing is
    removed: dropped candidates stay in the list with the reason, for the trace.
    """
    kept: list[tuple[Candidate, frozenset]] = []
    per_doc: dict[str, int] = {}
    out: list[Candidate] = []
    for c in candidates:
        sh = _shingles(c.chunk.text)
        dup = next((k for k, ksh in kept if jaccard(sh, ksh) >= threshold), None)
        if dup is not None and dup.chunk.doc_id == c.chunk.doc_id:
            out.append(replace(c, dropped=f"near-duplicate of {dup.chunk.chunk_id}"))
            continue
        if dup is not None:
            c = replace(c, near_duplicate_of=dup.chunk.chunk_id)
        if per_doc.get(c.chunk.doc_id, 0) >= per_source and c.chunk.doc_id not in uncapped:
            out.append(replace(c, dropped=f"per-source cap ({per_source}) for {c.chunk.doc_id}"))
            continue
        per_doc[c.chunk.doc_id] = per_doc.get(c.chunk.doc_id, 0) + 1
        kept.append((c, sh))
        out.append(c)
    return out


def order_versions(ranked: Sequence[Candidate], authority_values: Mapping[str, float] | None = None
                   ) -> list[Candidate]:
    """Among near-duplicates from different documents (versions of one provision), the more
    authoritative (by the reranker's `authority_values`), then the newer, takes the better places
    the group holds; every other candidate keeps its rank."""
    values = authority_values if authority_values is not None else RerankerSettings().authority_values

    def preference(c: Candidate) -> tuple[float, int]:
        published = dt.date.fromisoformat(c.chunk.published).toordinal() if c.chunk.published else 0
        return -values.get(c.chunk.authority, 0.0), -published

    out = list(ranked)
    ids = [c.chunk.chunk_id for c in out]
    root = {i: i for i in ids}

    def find(i: str) -> str:
        while root[i] != i:
            i = root[i]
        return i

    for c in out:
        if c.near_duplicate_of in root:
            root[find(c.chunk.chunk_id)] = find(c.near_duplicate_of)
    groups: dict[str, list[int]] = {}
    for pos, i in enumerate(ids):
        groups.setdefault(find(i), []).append(pos)
    for places in groups.values():
        if len(places) > 1:
            for p, c in zip(places, sorted((ranked[p] for p in places), key=preference)):
                out[p] = c
    return out


class HybridRetriever:
    """Dense + lexical lanes, and a sparse third lane when given one (BGE-M3's lexical
    weights; the embedder must then be a SparseEmbedder)."""

    def __init__(self, embedder: Embedder, dense: DenseIndex, lexical: LexicalIndex, chunks: ChunkSource,
                 settings: RetrievalSettings, sparse: SparseIndex | None = None):
        if sparse is not None and not isinstance(embedder, SparseEmbedder):
            raise TypeError(f"a sparse lane needs an embedder with lexical weights; {embedder.name} has none")
        self.embedder = embedder
        self.dense = dense
        self.lexical = lexical
        self.chunks = chunks
        self.settings = settings
        self.sparse = sparse

    async def retrieve(self, plan: QueryPlan, widen: int = 1, uncapped: Collection[str] = ()) -> list[Candidate]:
        """Fused candidates, best first; dropped ones (duplicates, over the cap) are marked. `uncapped`: the
        documents the question names, whose passages the per-source cap does not limit."""
        s = self.settings
        weights: dict[int, float] = {}
        if self.sparse is not None:
            vectors, lexical_weights = await self.embedder.embed_queries_hybrid([plan.dense_text])
            vector, weights = vectors[0], lexical_weights[0]
        else:
            vector = (await self.embedder.embed_queries([plan.dense_text]))[0]
        dense_hits, lexical_hits, sparse_hits = await asyncio.gather(
            self.dense.search(vector, s.dense_k * widen),
            self.lexical.search(plan.lexical_tokens, s.lexical_k * widen),
            self.sparse.sparse_search(weights, s.sparse_k * widen) if self.sparse is not None
            else asyncio.sleep(0, result=[]))
        lanes = {"dense": [i for i, _ in dense_hits], "lexical": [i for i, _ in lexical_hits]}
        if self.sparse is not None:
            lanes["sparse"] = [i for i, _ in sparse_hits]
        fused = rrf(lanes, s.rrf_k)
        order = sorted(fused, key=lambda i: (-fused[i], i))[: s.top_k * widen]
        dense_scores = dict(dense_hits)
        lexical_scores = dict(lexical_hits)
        sparse_scores = dict(sparse_hits)
        missing_dense = [i for i in order if i not in dense_scores]
        missing_lex = [i for i in order if i not in lexical_scores]
        missing_sparse = [i for i in order if i not in sparse_scores]
        more_dense, more_lex, more_sparse, chunks = await asyncio.gather(
            self.dense.score(vector, missing_dense), self.lexical.score(plan.lexical_tokens, missing_lex),
            self.sparse.sparse_score(weights, missing_sparse) if self.sparse is not None
            else asyncio.sleep(0, result={}),
            self.chunks.get(order))
        dense_scores.update(more_dense)
        lexical_scores.update(more_lex)
        sparse_scores.update(more_sparse)
        dense_rank = {i: r for r, (i, _) in enumerate(dense_hits, 1)}
        lexical_rank = {i: r for r, (i, _) in enumerate(lexical_hits, 1)}
        sparse_rank = {i: r for r, (i, _) in enumerate(sparse_hits, 1)}
        candidates = [
            Candidate(chunk=chunks[i], dense_score=dense_scores.get(i), dense_rank=dense_rank.get(i),
                      lexical_score=lexical_scores.get(i), lexical_rank=lexical_rank.get(i),
                      sparse_score=sparse_scores.get(i), sparse_rank=sparse_rank.get(i),
                      rrf_score=round(fused[i], 8))
            for i in order if i in chunks
        ]
        return dedup_and_cap(candidates, s.dedup_jaccard, s.per_source_cap, uncapped)
