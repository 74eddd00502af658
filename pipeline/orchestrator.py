"""The one orchestrator: question in, answer with receipts or structured refusal out.

It receives every component through the stage Protocols, so the same code runs with
in-process backends (the CLI) and over Ray Serve handles (serve/). Per question part:
route → plan → an attempt → if the part fails, one corrective retry with a rewritten query
→ the part's outcome; then the decision over all parts, conflicts, and one trace.

An attempt has two halves. `_build_context` retrieves (dense + lexical, RRF, dedup, cap),
reranks, and follows cross-references into one immutable `AttemptContext`;
`_generate_and_verify` reads it, generates, runs the gates and records the attempt.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

from . import __version__
from .analysis import QueryAnalyzer
from .audit import LOCAL_KEY, AuditLog, file_hash
from .config import Profile, Route
from .decision import TIMEOUT, AttemptSummary, conclude, decide_part, explain, reason_text, sufficiency
from .gates import verify
from .limits import check_question
from .protocols import (ChunkSource, DenseIndex, Embedder, Generator, Judge, LexicalIndex, QueryRewriter, Reranker,
                        SparseIndex)
from .query import Part, QueryPlanner, decompose
from .retrieval import HybridRetriever, order_versions
from .scope import Scope, question_scope
from .trace import (TRACE_VERSION, AttemptTrace, PartTrace, RouteRecord, Trace, decision_of, new_trace_id,
                    prune_traces, write_trace)
from .types import Candidate, Chunk, ContextItem, ContextLink, GenerationRequest, PartOutcome, QueryPlan, Result

log = logging.getLogger(__name__)

GENERATOR_FAILED = "generator_failed"


@dataclass
class Components:
    embedder: Embedder
    dense: DenseIndex
    lexical: LexicalIndex
    chunks: ChunkSource
    reranker: Reranker
    generator: Generator
    judge: Judge
    sparse: SparseIndex | None = None  # the third lane, when the embedder has lexical weights (BGE-M3)

    def names(self) -> dict[str, str]:
        return {k: getattr(getattr(self, k), "name", type(getattr(self, k)).__name__)
                for k in ("embedder", "reranker", "generator", "judge")}


@dataclass(frozen=True)
class AttemptContext:
    """What one attempt retrieved and what the generator will read, built once."""

    candidates: tuple[Candidate, ...]  # every fused candidate, rescored; dropped ones marked; referenced ones added
    reranked: tuple[str, ...]          # chunk ids the reranker ordered, best first
    referenced: tuple[str, ...]        # chunk ids added because the context's cross-references point at them
    context: tuple[Candidate, ...]     # what the generator reads: the top reranked, then the referenced
    paragraphs: dict[str, str]         # chunk id -> the full paragraph the judge reads
    links: dict[str, tuple[ContextLink, ...]] = field(default_factory=dict)  # chunk id -> its references into the context
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def chunks(self) -> dict[str, Chunk]:
        return {c.chunk.chunk_id: c.chunk for c in self.context}

    @property
    def scores(self) -> dict[str, float]:
        """Each context chunk's retrieval quality, as the confidence reads it."""
        return {c.chunk.chunk_id: c.rerank_score or 0.0 for c in self.context}


class Orchestrator:
    def __init__(self, profile: Profile, components: Components, analyzer: QueryAnalyzer,
                 trace_dir: Path | None = None, audit: AuditLog | None = None):
        self.profile = profile
        self.audit = audit  # every answer written to the trace directory is also entered here
        self.settings = profile.settings
        self.components = components
        self.analyzer = analyzer
        self.trace_dir = trace_dir
        self._traces_written = 0  # retention (settings.traces) is applied every `prune_every` writes
        self.planner = QueryPlanner(analyzer, components.lexical)
        self.retriever = HybridRetriever(components.embedder, components.dense, components.lexical,
                                         components.chunks, self.settings.retrieval, components.sparse)

    async def answer(self, question: str, lang: str | None = None, actor: str = LOCAL_KEY) -> Result:
        """The result a user sees (the trace is written to the trace directory)."""
        result, _ = await self.run(question, lang, actor)
        return result

    async def run_within(self, question: str, lang: str | None, timeout_s: float,
                         actor: str = LOCAL_KEY) -> tuple[Result, Trace]:
        """`run` with a deadline: past it, the result is a refusal saying so (and a trace of
        that), never a partial or unverified answer."""
        started = time.perf_counter()
        try:
            return await asyncio.wait_for(self.run(question, lang, actor), timeout_s)
        except asyncio.TimeoutError:
            question = question.strip()
            q_lang = self.analyzer.language(question)
            lang = lang or q_lang
            trace_id = new_trace_id()
            outcome = PartOutcome(0, question, "none", False, None, TIMEOUT)
            result = Result("refusal", question, lang, (), (outcome,), reason_code=TIMEOUT,
                            reason=reason_text(TIMEOUT, lang), trace_id=trace_id)
            return self._record(result, q_lang, started, actor, settings={"timeout_s": timeout_s},
                                why=f"refused ({TIMEOUT}): no decision within {timeout_s} s")

    async def run(self, question: str, lang: str | None = None, actor: str = LOCAL_KEY) -> tuple[Result, Trace]:
        """The result and its trace. A question over `limits.max_question_chars` is a
        QuestionRejected (too long, too many parts), before any work (the CLI, batch and the API all come
        through here)."""
        started = time.perf_counter()
        question = check_question(question, self.settings.limits)
        q_lang = self.analyzer.language(question)
        lang = lang or q_lang
        scope = await question_scope(question, q_lang, self.components.chunks)
        parts = await asyncio.gather(*(self._part(i, p, q_lang, scope) for i, p in enumerate(decompose(question))))
        s = self.settings
        result = conclude(parts, question, lang, self.analyzer.all_tokens, s.conflicts.min_overlap,
                          s.nearest_records, new_trace_id(), scope.named)
        settings = {"judge": s.judge.model_dump(), "confidence": s.confidence.model_dump(),
                    "conflicts": s.conflicts.model_dump(), "nearest_records": s.nearest_records}
        return self._record(result, q_lang, started, actor, settings=settings, parts=tuple(parts), scope=scope,
                            why=explain(result))

    def _record(self, result: Result, question_lang: str, started: float, actor: str, settings: dict,
                why: str, parts: tuple[PartTrace, ...] = (), scope: Scope = Scope()) -> tuple[Result, Trace]:
        """The one place a trace is made (and written, when there is a trace directory)."""
        trace = Trace(
            trace_id=result.trace_id, version=TRACE_VERSION,
            created_at=dt.datetime.now(dt.timezone.utc).isoformat(), saksi_version=__version__,
            profile=self.settings.profile, components=self.components.names(), question=result.question,
            question_lang=question_lang, lang=result.lang, settings=settings, parts=parts,
            conflicts=result.conflicts, decision=decision_of(result), why=why,
            timings_ms={"total": _ms(started)}, named_documents=scope.named, scoped_to=scope.restrict)
        if self.trace_dir is not None:
            path = write_trace(trace, self.trace_dir)
            result = replace(result, trace_path=str(path))
            if self.audit is not None:
                self.audit.append("answer", key=actor, trace_id=trace.trace_id, trace_sha256=file_hash(path),
                                  outcome=result.outcome, reason_code=result.reason_code)
            self._retain_traces()
        return result, trace

    def _retain_traces(self) -> None:
        """Trace retention: on the first write and every `prune_every` writes after, delete traces
        older than `keep_days` and beyond the newest `keep_count` (cheap: one directory scan)."""
        keep = self.settings.traces
        if self._traces_written % keep.prune_every == 0:
            removed = prune_traces(self.trace_dir, keep.keep_days, keep.keep_count)
            if removed:
                log.info("trace retention: %d old trace(s) deleted from %s", removed, self.trace_dir)
        self._traces_written += 1

    async def _part(self, index: int, part: Part, q_lang: str, scope: Scope) -> PartTrace:
        route = self.profile.routes.route(part.text)
        asked = replace(part, text=scope.without_names(part.text)) if scope.strip else part
        plan = await self.planner.plan(asked, q_lang)
        first = await self._attempt(0, plan, route, index, 1, scope.restrict)
        attempts = [first]
        if not first.summary.ok:
            rewritten = await self._rewrite(plan, asked)
            attempts.append(await self._attempt(1, rewritten, route, index, self.settings.retrieval.retry_widen,
                                                scope.restrict))
        outcome = decide_part(index, part.text, route, [a.summary for a in attempts])
        return PartTrace(index=index, question=part.text, topic=part.topic, route=RouteRecord.of(route),
                         attempts=tuple(a.trace for a in attempts), outcome=outcome)

    async def _rewrite(self, plan: QueryPlan, part: Part) -> QueryPlan:
        """Tiering: rules route and decompose; the heavy model rewrites the query only when the
        profile asks for it (generator.rewrite: generator) and can; otherwise, or if its rewrite
        is unusable, the rules rewrite."""
        gen = self.components.generator
        if self.settings.generator.rewrite == "generator" and isinstance(gen, QueryRewriter):
            try:
                text = await gen.rewrite_query(part.text, plan.lang)
            except Exception as e:  # a failed rewrite costs the model's help, not the answer
                log.warning("generator %s could not rewrite the query: %s", gen.name, e)
                text = None
            if text:
                return await self.planner.rewrite_from(plan, part, text, f"rewritten by {gen.name}")
        return await self.planner.rewrite(plan, part)

    async def _attempt(self, n: int, plan: QueryPlan, route: Route, part_index: int, widen: int,
                       restrict: tuple[str, ...] | None) -> "_Attempt":
        ctx = await self._build_context(plan, route, widen, restrict)
        return await self._generate_and_verify(n, plan, route, part_index, ctx)

    async def _build_context(self, plan: QueryPlan, route: Route, widen: int,
                             restrict: tuple[str, ...] | None) -> AttemptContext:
        """Retrieve, rerank, take the top of it and the passages its references point at."""
        timings: dict[str, float] = {}
        t = time.perf_counter()
        retrieved = await self.retriever.retrieve(plan, widen)
        if restrict is not None:  # the question asked within named documents: nothing else may answer
            retrieved = [c if c.dropped or c.chunk.doc_id in restrict
                         else replace(c, dropped="outside the document(s) the question names") for c in retrieved]
        timings["retrieve"] = _ms(t)
        live = [c for c in retrieved if not c.dropped]
        t = time.perf_counter()
        reranked = (await self.components.reranker.rerank(plan, live, route.authority_weight, route.freshness_weight)
                    if live else [])
        reranked = order_versions(reranked, self.settings.reranker.authority_values)
        timings["rerank"] = _ms(t)
        top = reranked[: self.settings.retrieval.context_size * widen]
        links = await self.components.chunks.references([c.chunk.chunk_id for c in top]) if top else {}
        referenced = await self._follow_references(top, links, {c.chunk.chunk_id: c for c in reranked})
        context = (*top, *referenced)
        in_context = {c.chunk.chunk_id for c in context}
        links = {cid: tuple(x for x in got if x.target in in_context) for cid, got in links.items()}
        paragraphs = await asyncio.gather(*(self.components.chunks.paragraph(c.chunk) for c in context))
        return AttemptContext(
            candidates=_merged(retrieved, reranked, referenced),
            reranked=tuple(c.chunk.chunk_id for c in reranked),
            referenced=tuple(c.chunk.chunk_id for c in referenced),
            context=context, paragraphs=dict(zip((c.chunk.chunk_id for c in context), paragraphs)),
            links={cid: got for cid, got in links.items() if got}, timings_ms=timings)

    async def _generate_and_verify(self, n: int, plan: QueryPlan, route: Route, part_index: int,
                                   ctx: AttemptContext) -> "_Attempt":
        """Generate from the context, run every gate, and record the attempt with its summary."""
        s = self.settings
        chunks = ctx.chunks
        timings = dict(ctx.timings_ms)
        request = output = failure = failure_detail = None
        claims, calls = (), ()
        if ctx.context:
            request = GenerationRequest(
                question=plan.text, lang=plan.lang, terms=plan.terms, required=tuple(route.required),
                context=tuple(ContextItem(c.chunk.chunk_id, c.chunk.title, c.chunk.location, c.chunk.text,
                                          c.chunk.is_example, c.chunk.lang, c.rerank_score or 0.0, c.chunk.heading,
                                          ctx.links.get(c.chunk.chunk_id, ()))
                              for c in ctx.context))
            generator = self.components.generator
            t = time.perf_counter()
            try:
                output = await generator.generate(request)
            except Exception as e:  # a failed generator is a refusal with that reason, never a 500
                log.warning("generator %s failed: %s", generator.name, e)
                failure, failure_detail = GENERATOR_FAILED, str(e)
            timings["generate"] = _ms(t)
            if output is not None:
                t = time.perf_counter()
                v = await verify(output, chunks, ctx.paragraphs, ctx.scores, self.components.judge, s.judge,
                                 s.confidence, part=part_index)
                timings["verify"] = _ms(t)
                claims, calls, failure, failure_detail = v.claims, v.judge_calls, v.parse_error, v.parse_detail
        enough = sufficiency(route, claims, chunks)
        summary = AttemptSummary.of(claims, enough, failure, bool(ctx.context))
        trace = AttemptTrace(
            attempt=n, query=plan, candidates=ctx.candidates, reranked=ctx.reranked, referenced=ctx.referenced,
            context=tuple(chunks), paragraphs=ctx.paragraphs, generator_request=request,
            generator_output=output, failure=failure, failure_detail=failure_detail, claims=claims,
            judge_calls=tuple(calls), sufficiency=enough, ok=summary.ok, timings_ms=timings)
        return _Attempt(trace, summary)

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
        chunks = await self.components.chunks.get(missing) if missing else {}
        out = []
        for target, source in wanted.items():
            if target in ranked:
                out.append(replace(ranked[target], referenced_from=source.chunk.chunk_id))
            elif target in chunks:
                out.append(Candidate(chunk=chunks[target], referenced_from=source.chunk.chunk_id,
                                     rerank_score=round(0.5 * (source.rerank_score or 0.0), 6)))
        return tuple(out)


@dataclass(frozen=True)
class _Attempt:
    trace: AttemptTrace
    summary: AttemptSummary


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
