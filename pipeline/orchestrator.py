"""The one orchestrator: question in, answer with receipts or structured refusal out.

It receives every component through the stage Protocols, so the same code runs with
in-process backends (the CLI) and over Ray Serve handles (serve/). Flow per question part:
route → plan → retrieve (dense + lexical, RRF, dedup, cap) → rerank → generate → gates
→ sufficiency; if the part fails, one corrective retry with a rewritten query; then the
decision, conflicts, and a trace.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import logging
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from . import __version__
from .analysis import QueryAnalyzer
from .config import Profile, Route
from .decision import (DOCUMENT_NOT_IN_CORPUS, TIMEOUT, AttemptSummary, decide_part, find_conflicts, nearest_records, reason_text,
                       sufficiency)
from .gates import verify
from .protocols import (ChunkSource, DenseIndex, Embedder, Generator, Judge, LexicalIndex, QueryRewriter, Reranker,
                        SparseIndex)
from .query import Part, QueryPlanner, decompose
from .ingest.xrefs import documents_named, held_by
from .retrieval import HybridRetriever, order_versions
from .trace import TRACE_VERSION, AttemptTrace, PartTrace, RouteRecord, Trace, decision_of, new_trace_id, write_trace
from .types import Candidate, Chunk, ContextItem, GenerationRequest, PartOutcome, Result, VerifiedClaim

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


def route_record(route: Route) -> RouteRecord:
    return RouteRecord(route.name, tuple(route.required), route.examples_satisfy,
                       route.authority_weight, route.freshness_weight)


def summarise(attempt: AttemptTrace) -> AttemptSummary:
    return AttemptSummary(supported=sum(c.status == "supported" for c in attempt.claims),
                          sufficiency=attempt.sufficiency, parse_error=attempt.parse_error,
                          had_candidates=bool(attempt.context))


class Orchestrator:
    def __init__(self, profile: Profile, components: Components, analyzer: QueryAnalyzer,
                 trace_dir: Path | None = None):
        self.profile = profile
        self.settings = profile.settings
        self.c = components
        self.analyzer = analyzer
        self.trace_dir = trace_dir
        self.planner = QueryPlanner(analyzer, components.lexical)
        self.retriever = HybridRetriever(components.embedder, components.dense, components.lexical,
                                         components.chunks, self.settings.retrieval, components.sparse)

    async def answer(self, question: str, lang: str | None = None) -> Result:
        """The result a user sees (the trace is written to the trace directory)."""
        result, _ = await self.run(question, lang)
        return result

    async def run_within(self, question: str, lang: str | None, timeout_s: float) -> tuple[Result, Trace]:
        """`run` with a deadline: past it, the result is a refusal saying so (and a trace of
        that), never a partial or unverified answer."""
        started = time.perf_counter()
        try:
            return await asyncio.wait_for(self.run(question, lang), timeout_s)
        except asyncio.TimeoutError:
            question = question.strip()
            q_lang = self.analyzer.language(question)
            lang = lang or q_lang
            trace_id = new_trace_id()
            outcome = PartOutcome(0, question, "none", False, None, TIMEOUT)
            result = Result("refusal", question, lang, (), (outcome,), reason_code=TIMEOUT,
                            reason=reason_text(TIMEOUT, lang), trace_id=trace_id)
            trace = Trace(
                trace_id=trace_id, version=TRACE_VERSION, created_at=dt.datetime.now(dt.timezone.utc).isoformat(),
                saksi_version=__version__, profile=self.settings.profile, components=self.c.names(),
                question=question, question_lang=q_lang, lang=lang, settings={"timeout_s": timeout_s}, parts=(),
                conflicts=(), decision=decision_of(result), why=f"refused ({TIMEOUT}): no decision within {timeout_s} s",
                timings_ms={"total": round((time.perf_counter() - started) * 1000, 1)})
            if self.trace_dir is not None:
                result = replace(result, trace_path=str(write_trace(trace, self.trace_dir)))
            return result, trace

    async def run(self, question: str, lang: str | None = None) -> tuple[Result, Trace]:
        """The result and its trace."""
        started = time.perf_counter()
        question = question.strip()
        q_lang = self.analyzer.language(question)
        lang = lang or q_lang
        scope = await self._scope(question, q_lang)
        parts = decompose(question)
        part_traces = await asyncio.gather(*(self._part(i, p, q_lang, scope) for i, p in enumerate(parts)))
        trace_id = new_trace_id()
        result = conclude(part_traces, question, lang, self.analyzer.all_tokens,
                          self.settings.conflicts.min_overlap, self.settings.nearest_records, trace_id, scope.named)
        trace = Trace(
            trace_id=trace_id, version=TRACE_VERSION, created_at=dt.datetime.now(dt.timezone.utc).isoformat(),
            saksi_version=__version__, profile=self.settings.profile, components=self.c.names(),
            question=question, question_lang=q_lang, lang=lang,
            settings={"judge": self.settings.judge.model_dump(), "confidence": self.settings.confidence.model_dump(),
                      "conflicts": self.settings.conflicts.model_dump(),
                      "nearest_records": self.settings.nearest_records},
            parts=tuple(part_traces), conflicts=result.conflicts, decision=decision_of(result),
            named_documents=tuple(scope.named), scoped_to=scope.restrict,
            why=explain(result), timings_ms={"total": round((time.perf_counter() - started) * 1000, 1)},
        )
        if self.trace_dir is not None:
            path = write_trace(trace, self.trace_dir)
            result = replace(result, trace_path=str(path))
        return result, trace

    async def _scope(self, question: str, lang: str) -> "Scope":
        """The documents the question names, and whether it asks within them ("menurut PMK
        98/2025, …", "under PP 34/2011"): then retrieval is restricted to those it holds, the
        names leave the terms an answer must cover, and a named document the corpus lacks
        leaves nothing to answer from."""
        named = documents_named(question, lang)
        if not named:
            return Scope()
        documents = await self.c.chunks.documents()
        held = [(ref, held_by(ref, documents)) for ref in named]
        scoped = [(ref, doc_id) for ref, doc_id in held if _SCOPE_WORD.search(question[:ref.start])]
        return Scope(named=tuple((ref.document_label, doc_id) for ref, doc_id in held),
                     restrict=tuple(sorted({d for _, d in scoped if d})) if scoped else None,
                     strip=tuple(ref.raw for ref, _ in scoped))

    async def _part(self, index: int, part: Part, q_lang: str, scope: "Scope") -> PartTrace:
        route = self.profile.routes.route(part.text)
        asked = part
        for raw in scope.strip:  # the document's name scopes the search; it is not content to cover
            asked = replace(asked, text=" ".join(asked.text.replace(raw, " ").split()))
        plan = await self.planner.plan(asked, q_lang)
        attempts = [await self._attempt(0, plan, route, index, restrict=scope.restrict)]
        if not summarise(attempts[0]).ok:
            rewritten = await self._rewrite(plan, asked)
            attempts.append(await self._attempt(1, rewritten, route, index, widen=2, restrict=scope.restrict))
        outcome = decide_part(index, part.text, route, [summarise(a) for a in attempts])
        return PartTrace(index=index, question=part.text, topic=part.topic, route=route_record(route),
                         attempts=tuple(attempts), outcome=outcome)

    async def _rewrite(self, plan, part: Part):
        """Tiering: rules route and decompose; the heavy model rewrites the query only when the
        profile asks for it (generator.rewrite: generator) and can; otherwise, or if its rewrite
        is unusable, the rules rewrite."""
        gen = self.c.generator
        if self.settings.generator.rewrite == "generator" and isinstance(gen, QueryRewriter):
            try:
                text = await gen.rewrite_query(part.text, plan.lang)
            except Exception as e:  # a failed rewrite costs the model's help, not the answer
                log.warning("generator %s could not rewrite the query: %s", gen.name, e)
                text = None
            if text:
                return await self.planner.rewrite_from(plan, part, text, f"rewritten by {gen.name}")
        return await self.planner.rewrite(plan, part)

    async def _attempt(self, n: int, plan, route: Route, part_index: int, widen: int = 1,
                       restrict: tuple[str, ...] | None = None) -> AttemptTrace:
        s = self.settings
        timings: dict[str, float] = {}
        t = time.perf_counter()
        candidates = await self.retriever.retrieve(plan, widen)
        if restrict is not None:  # the question asked within named documents: nothing else may answer
            candidates = [c if c.dropped or c.chunk.doc_id in restrict
                          else replace(c, dropped="outside the document(s) the question names") for c in candidates]
        timings["retrieve"] = _ms(t)
        live = [c for c in candidates if not c.dropped]
        t = time.perf_counter()
        reranked = await self.c.reranker.rerank(plan, live, route.authority_weight, route.freshness_weight) if live else []
        reranked = order_versions(reranked, self.settings.reranker.authority_values)
        timings["rerank"] = _ms(t)
        by_id = {c.chunk.chunk_id: c for c in reranked}
        candidates = [by_id.get(c.chunk.chunk_id, c) for c in candidates]
        context = reranked[: s.retrieval.context_size * widen]
        referenced = await self._follow_references(context, by_id)
        context += referenced
        marked = {c.chunk.chunk_id: c for c in referenced}
        candidates = [marked.pop(c.chunk.chunk_id, c) for c in candidates] + list(marked.values())
        by_id.update((c.chunk.chunk_id, c) for c in referenced)
        ctx_chunks = {c.chunk.chunk_id: c.chunk for c in context}
        paragraphs = dict(zip(ctx_chunks, await asyncio.gather(*(self.c.chunks.paragraph(ch)
                                                                  for ch in ctx_chunks.values()))))
        scores = {c.chunk.chunk_id: c.rerank_score or 0.0 for c in context}
        request = output = None
        parse_error = parse_detail = None
        claims: tuple[VerifiedClaim, ...] = ()
        calls = ()
        if context:
            request = GenerationRequest(
                question=plan.text, lang=plan.lang, terms=plan.terms, required=tuple(route.required),
                context=tuple(ContextItem(c.chunk.chunk_id, c.chunk.title, c.chunk.location, c.chunk.text,
                                          c.chunk.is_example, c.chunk.lang, scores[c.chunk.chunk_id],
                                          c.chunk.heading)
                              for c in context))
            t = time.perf_counter()
            try:
                output = await self.c.generator.generate(request)
            except Exception as e:  # a failed generator is a refusal with that reason, never a 500
                log.warning("generator %s failed: %s", self.c.generator.name, e)
                parse_error, parse_detail = GENERATOR_FAILED, str(e)
            timings["generate"] = _ms(t)
            if output is not None:
                t = time.perf_counter()
                v = await verify(output, ctx_chunks, paragraphs, scores, self.c.judge, s.judge, s.confidence,
                                 part=part_index)
                timings["verify"] = _ms(t)
                claims, calls, parse_error, parse_detail = v.claims, v.judge_calls, v.parse_error, v.parse_detail
        suff = sufficiency(route, claims, ctx_chunks)
        attempt = AttemptTrace(
            attempt=n, query=plan, candidates=tuple(candidates), reranked=tuple(by_id),
            context=tuple(ctx_chunks), paragraphs=paragraphs, generator_request=request, generator_output=output,
            parse_error=parse_error, parse_detail=parse_detail, claims=claims, judge_calls=tuple(calls),
            sufficiency=suff, ok=False, timings_ms=timings)
        return replace(attempt, ok=summarise(attempt).ok)


    async def _follow_references(self, context: list[Candidate], ranked: dict[str, Candidate]) -> list[Candidate]:
        """Passages the context's cross-references point at ("sebagaimana dimaksud dalam Pasal 5
        ayat (2)"), added after it and marked `referenced_from`. One retrieved below the context
        cut keeps its own scores; one retrieval did not find gets half its referrer's score, so
        citing it cannot claim more retrieval quality than the passage that led to it."""
        limit = self.settings.retrieval.follow_references
        if not limit or not context:
            return []
        have = {c.chunk.chunk_id for c in context}
        targets = await self.c.chunks.references(list(have))
        wanted: list[tuple[str, Candidate]] = []
        for c in context:
            for t in targets.get(c.chunk.chunk_id, []):
                if t not in have and all(t != w for w, _ in wanted):
                    wanted.append((t, c))
        wanted = wanted[:limit]
        missing = [t for t, _ in wanted if t not in ranked]
        chunks = await self.c.chunks.get(missing) if missing else {}
        out = []
        for t, src in wanted:
            if t in ranked:
                out.append(replace(ranked[t], referenced_from=src.chunk.chunk_id))
            elif t in chunks:
                out.append(Candidate(chunk=chunks[t], referenced_from=src.chunk.chunk_id,
                                     rerank_score=round(0.5 * (src.rerank_score or 0.0), 6)))
        return out


# "menurut PMK 98/2025", "berdasarkan …", "sesuai dengan …", "according to …", "under …": the question
# asks within that document, not about it
_SCOPE_WORD = re.compile(r"\b(?:menurut|berdasarkan|sesuai(?:\s+dengan)?|according\s+to|under|pursuant\s+to)\s*$",
                         re.IGNORECASE)


@dataclass(frozen=True)
class Scope:
    named: tuple[tuple[str, str | None], ...] = ()  # (document label, ingested doc id or None)
    restrict: tuple[str, ...] | None = None          # doc ids retrieval is limited to; None: unrestricted
    strip: tuple[str, ...] = ()                      # the scoping names, left out of the terms to cover


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 1)


def conclude(parts: Sequence[PartTrace], question: str, lang: str, tokens: Callable[[str], frozenset[str]],
             min_overlap: float, n_nearest: int, trace_id: str,
             named: Sequence[tuple[str, str | None]] = ()) -> Result:
    """Assemble the result from decided parts (shared by the orchestrator and replay).

    `named` are the documents the question names: those the corpus does not hold are said
    (`not_in_corpus`), so an answer drawn from other records is never taken for theirs."""
    absent = tuple(label for label, doc_id in named if doc_id is None)
    claims: list[VerifiedClaim] = []
    chunks: dict[str, Chunk] = {}
    for p in parts:
        used = p.attempts[p.outcome.attempt_used] if p.outcome.answered else p.attempts[-1]
        claims.extend(used.claims)
        for a in p.attempts:
            chunks.update({c.chunk.chunk_id: c.chunk for c in a.candidates})
    claims.sort(key=lambda c: c.status != "supported")  # stable: supported first, in generator order
    conflicts = tuple(find_conflicts(claims, chunks, tokens, min_overlap))
    outcomes = tuple(p.outcome for p in parts)
    retried = any(len(p.attempts) > 1 for p in parts)
    refused = [p for p in parts if not p.outcome.answered]
    if not refused:
        return Result("answer", question, lang, tuple(claims), outcomes, conflicts, retried=retried, trace_id=trace_id,
                      not_in_corpus=absent)
    missing = tuple(dict.fromkeys(m for p in refused for m in p.outcome.missing_categories))
    reasons = []
    for p in refused:
        text = reason_text(p.outcome.reason or "", lang, p.outcome.missing_categories)
        reasons.append(text if len(parts) == 1 else f"({p.index + 1}) {p.question}: {text}")
    if absent:
        reasons.append(reason_text(DOCUMENT_NOT_IN_CORPUS, lang, absent))
    nearest = []
    for p in refused:
        last = p.attempts[-1]
        by_id = {c.chunk.chunk_id: c for c in last.candidates}
        ranked = [by_id[i] for i in last.reranked if i in by_id]
        nearest.extend(nearest_records(ranked, n_nearest))
    return Result("refusal", question, lang, tuple(claims), outcomes, conflicts,
                  reason_code=refused[0].outcome.reason, reason=" ".join(reasons), missing_categories=missing,
                  nearest=tuple(nearest), retried=retried, trace_id=trace_id, not_in_corpus=absent)


def explain(result: Result) -> str:
    """One sentence for the trace: the decision and why."""
    supported = sum(c.status == "supported" for c in result.claims)
    demoted = len(result.claims) - supported
    if result.outcome == "answer":
        return (f"answered: {supported} supported claim(s), {demoted} demoted, every part satisfied its required "
                f"evidence{' after a corrective retry' if result.retried else ''}")
    return f"refused ({result.reason_code}): {result.reason}"
