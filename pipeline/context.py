"""An attempt's context: from a question part to the passages the generator will read.

`ContextBuilder` is the retrieval half of an attempt, in one call: plan the query (or rewrite
the previous plan, for the corrective retry), retrieve (dense + lexical [+ sparse], RRF, dedup,
cap), keep only the documents the question names when it asks within them, rerank, take the
top, follow the top's cross-references, and read each passage's full paragraph. It works over
the stage Protocols (Embedder, DenseIndex, LexicalIndex, ChunkSource, Reranker), so the same
code runs in the CLI's process and inside the served Retriever deployment, next to the indexes:
the orchestrator makes one call for all of it (`ContextSource`, below), not one per index
lookup.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, Sequence, runtime_checkable

from .analysis import QueryAnalyzer
from .definitions import asked_term, translations
from .protocols import ChunkSource, DenseIndex, Embedder, LexicalIndex, Reranker, SparseIndex
from .query import Part, QueryPlanner
from .retrieval import HybridRetriever, order_versions
from .types import Candidate, Chunk, ContextLink, Document, DocumentStatus, QueryPlan

if TYPE_CHECKING:
    from .config import Route, Settings

MAX_DEFINITIONS = 3  # passages defining the asked term read beyond the context's usual size


@dataclass(frozen=True)
class ContextRequest:
    """One attempt's retrieval: the part as asked (names of documents it is scoped to already
    taken out), its route, how much wider than usual to look, and the documents it may come from.
    With `previous`, this is the corrective retry: that plan is rewritten, from `rewrite` (a
    model's rewritten question, by `rewritten_by`) when there is one, else by the rules."""

    part: Part
    lang: str
    route: "Route"
    widen: int = 1
    restrict: tuple[str, ...] | None = None
    previous: QueryPlan | None = None
    rewrite: str | None = None
    rewritten_by: str | None = None
    named: tuple[str, ...] = ()  # the held documents the question names: their passages are not capped per source


@dataclass(frozen=True)
class AttemptContext:
    """What one attempt searched for, what it retrieved and what the generator will read."""

    plan: QueryPlan
    candidates: tuple[Candidate, ...]  # every fused candidate, rescored; dropped ones marked; referenced ones added
    reranked: tuple[str, ...]          # chunk ids the reranker ordered, best first
    referenced: tuple[str, ...]        # chunk ids added because the context's cross-references point at them
    context: tuple[Candidate, ...]     # what the generator reads: the top reranked, then the referenced
    paragraphs: dict[str, str]         # chunk id -> the full paragraph the judge reads
    links: dict[str, tuple[ContextLink, ...]] = field(default_factory=dict)  # chunk id -> its references into the context
    timings_ms: dict[str, float] = field(default_factory=dict)
    status: tuple[DocumentStatus, ...] = ()  # what decides the legal standing of each document in the context

    @property
    def chunks(self) -> dict[str, Chunk]:
        return {c.chunk.chunk_id: c.chunk for c in self.context}

    @property
    def scores(self) -> dict[str, float]:
        """Each context chunk's retrieval quality, as the confidence reads it."""
        return {c.chunk.chunk_id: c.rerank_score or 0.0 for c in self.context}


@runtime_checkable
class ContextSource(Protocol):
    """The retrieval half of an attempt in one call: plan, retrieve, rerank, follow references,
    read paragraphs (`pipeline.context.ContextBuilder`, over the Protocols above and the Reranker).
    In process it is that builder; served, it is the Retriever deployment running the same
    builder next to its indexes, so a question costs one call here, not one per lookup."""

    model_names: dict[str, str]  # {"embedder": …, "reranker": …}, for the trace

    async def context(self, request: ContextRequest) -> AttemptContext:
        ...

    async def documents(self) -> list[Document]:
        """Every ingested document (what a question naming a regulation is checked against)."""
        ...


class ContextBuilder:
    """The retrieval half of an attempt over the stage Protocols (a `ContextSource`)."""

    def __init__(self, settings: "Settings", analyzer: QueryAnalyzer, embedder: Embedder, dense: DenseIndex,
                 lexical: LexicalIndex, chunks: ChunkSource, reranker: Reranker, sparse: SparseIndex | None = None):
        self.settings = settings
        self.chunks = chunks
        self.reranker = reranker
        self.analyzer = analyzer
        self.planner = QueryPlanner(analyzer, lexical)
        self.retriever = HybridRetriever(embedder, dense, lexical, chunks, settings.retrieval, sparse)
        self.model_names = {"embedder": embedder.name, "reranker": reranker.name}

    async def documents(self) -> list[Document]:
        return await self.chunks.documents()

    async def context(self, request: ContextRequest) -> AttemptContext:
        t = time.perf_counter()
        plan = await self._plan(request)
        planned = _ms(t)
        ctx = await self._build(plan, request.route, request.widen, request.restrict, request.named)
        # the trace's stage timings: planning, and the whole build where it runs (served: in the Retriever)
        return replace(ctx, timings_ms={"plan": planned, **ctx.timings_ms, "context": _ms(t)})

    async def _plan(self, r: ContextRequest) -> QueryPlan:
        if r.previous is None:
            return await self.planner.plan(r.part, r.lang)
        if r.rewrite:
            return await self.planner.rewrite_from(r.previous, r.part, r.rewrite, f"rewritten by {r.rewritten_by}")
        return await self.planner.rewrite(r.previous, r.part)

    async def _build(self, plan: QueryPlan, route: "Route", widen: int, restrict: tuple[str, ...] | None,
                     named: tuple[str, ...] = ()) -> AttemptContext:
        """Retrieve, rerank, take the top of it and the passages its references point at. A document the
        question names is what it asks about ("When does PMK 99/2025 take effect?"): every passage of it
        retrieval finds goes to the reranker, not only the first `per_source_cap`."""
        timings: dict[str, float] = {}
        t = time.perf_counter()
        retrieved = await self.retriever.retrieve(plan, widen, named)
        if restrict is not None:  # the question asked within named documents: nothing else may answer
            retrieved = [c if c.dropped or c.chunk.doc_id in restrict
                         else replace(c, dropped="outside the document(s) the question names") for c in retrieved]
        retrieved = await self._with_definitions(plan, retrieved, restrict)
        timings["retrieve"] = _ms(t)
        live = [c for c in retrieved if not c.dropped]
        t = time.perf_counter()
        reranked = (await self.reranker.rerank(plan, live, route.authority_weight, route.freshness_weight)
                    if live else [])
        reranked = order_versions(reranked, self.settings.reranker.authority_values)
        # a question asking what a term means is answered by an entry that defines it: those passages go first, in
        # the reranker's order, ahead of passages that only use the term (among a statute book's laws, a hundred
        # passages mention "pekerja" or "RPTKA"; the entry of the regulation that defines it had been ranked ninth)
        reranked = [c for c in reranked if c.defines] + [c for c in reranked if not c.defines]
        timings["rerank"] = _ms(t)
        top = reranked[: self.settings.retrieval.context_size * widen]
        # the passages that define the asked term are read wherever the reranker put them: the best-ranked one of each
        # defining document the context does not hold yet, so the reader sees the regulations' definitions side by side
        held = {c.chunk.doc_id for c in top if c.defines}
        defining: list[Candidate] = []
        for c in reranked[len(top):]:
            if c.defines and c.chunk.doc_id not in held and len(defining) < MAX_DEFINITIONS:
                held.add(c.chunk.doc_id)
                defining.append(c)
        top = (*top, *defining)
        links = await self.chunks.references([c.chunk.chunk_id for c in top]) if top else {}
        referenced = await self._follow_references(top, links, {c.chunk.chunk_id: c for c in reranked})
        context = (*top, *referenced)
        in_context = {c.chunk.chunk_id for c in context}
        links = {cid: tuple(x for x in got if x.target in in_context) for cid, got in links.items()}
        paragraphs = await asyncio.gather(*(self.chunks.paragraph(c.chunk) for c in context))
        status = await self.chunks.status(list(dict.fromkeys(c.chunk.doc_id for c in context))) if context else {}
        return AttemptContext(
            plan=plan, candidates=_merged(retrieved, reranked, referenced),
            reranked=tuple(c.chunk.chunk_id for c in reranked),
            referenced=tuple(c.chunk.chunk_id for c in referenced),
            context=context, paragraphs=dict(zip((c.chunk.chunk_id for c in context), paragraphs)),
            links={cid: got for cid, got in links.items() if got}, timings_ms=timings, status=tuple(status.values()))

    async def _with_definitions(self, plan: QueryPlan, retrieved: list[Candidate],
                                restrict: tuple[str, ...] | None) -> list[Candidate]:
        """When the question asks what a term means, every passage that defines it (definitions.py),
        marked `defines`: kept though a cap or a near-duplicate would drop it (two regulations that
        define a term alike are both sources), fetched when retrieval did not find it."""
        asked = asked_term(plan.text)
        if not asked:
            return retrieved
        keys = [asked]
        if plan.lang == "en":  # an English term through the glossary ("foreign worker" -> "tenaga kerja asing")
            keys += translations(asked, self.analyzer.glossary.en_to_id)
        found: dict[str, str] = {}
        for key in dict.fromkeys(keys):
            for cid, label in await self.chunks.definitions(key):
                found.setdefault(cid, label)
        if not found:
            return retrieved
        have = {c.chunk.chunk_id for c in retrieved}
        fetched = await self.chunks.get([cid for cid in found if cid not in have])
        inside = (lambda doc_id: True) if restrict is None else (lambda doc_id: doc_id in restrict)
        out = [replace(c, defines=found[c.chunk.chunk_id], dropped=None)
               if c.chunk.chunk_id in found and inside(c.chunk.doc_id) else c for c in retrieved]
        for cid, chunk in fetched.items():
            if inside(chunk.doc_id):
                out.append(Candidate(chunk=chunk, defines=found[cid]))
        return out

    async def _follow_references(self, context: Sequence[Candidate], links: dict[str, list[ContextLink]],
                                 ranked: dict[str, Candidate]) -> tuple[Candidate, ...]:
        """Passages the context's cross-references point at ("sebagaimana dimaksud dalam Pasal 5
        ayat (2)"), added after it and marked `referenced_from`. One the reranker ranked below the
        context cut keeps its own scores; any other gets half its referrer's score, so citing it
        cannot claim more retrieval quality than the passage that led to it."""
        limit = self.settings.retrieval.follow_references
        if not limit or not context:
            return ()
        have = {c.chunk.chunk_id for c in context}
        wanted: dict[str, Candidate] = {}  # target chunk id -> the context passage that points at it
        for c in context:
            for link in links.get(c.chunk.chunk_id, []):
                if link.target not in have:
                    wanted.setdefault(link.target, c)
        wanted = dict(list(wanted.items())[:limit])
        missing = [t for t in wanted if t not in ranked]
        chunks = await self.chunks.get(missing) if missing else {}
        out = []
        for target, source in wanted.items():
            if target in ranked:
                out.append(replace(ranked[target], referenced_from=source.chunk.chunk_id))
            elif target in chunks:
                out.append(Candidate(chunk=chunks[target], referenced_from=source.chunk.chunk_id,
                                     rerank_score=round(0.5 * (source.rerank_score or 0.0), 6)))
        return tuple(out)


def _merged(retrieved: Sequence[Candidate], reranked: Sequence[Candidate],
            referenced: Sequence[Candidate]) -> tuple[Candidate, ...]:
    """Every retrieved candidate in fused order, in its latest form (reranked, or marked as
    referenced), then the referenced passages retrieval had not found."""
    latest = {c.chunk.chunk_id: c for c in (*reranked, *referenced)}
    found = {c.chunk.chunk_id for c in retrieved}
    return (*(latest.get(c.chunk.chunk_id, c) for c in retrieved),
            *(c for c in referenced if c.chunk.chunk_id not in found))


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 1)
