"""The one orchestrator: question in, answer with receipts or structured refusal out.

It receives every component through the stage Protocols, so the same code runs with
in-process backends (the CLI) and over Ray Serve handles (serve/). Per question part:
route → an attempt → if the part fails, one corrective retry with a rewritten query
→ the part's outcome; then the decision over all parts, conflicts, and one trace.

An attempt has two halves. The context source (`pipeline.context.ContextBuilder`, in process
or inside the served Retriever) plans the query, retrieves (dense + lexical, RRF, dedup, cap),
reranks, and follows cross-references into one immutable `AttemptContext`, in one call;
`_generate_and_verify` reads it, generates, runs the gates and records the attempt.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import logging
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from . import __version__, status
from .analysis import QueryAnalyzer
from .audit import LOCAL_KEY, AuditLog, file_hash
from .config import Profile, Route
from .context import AttemptContext, ContextBuilder, ContextRequest, ContextSource
from .decision import TIMEOUT, AttemptSummary, conclude, decide_part, explain, reason_text
from .limits import check_question
from .protocols import (ChunkSource, DenseIndex, Embedder, Generator, Judge, LexicalIndex, QueryRewriter, Reranker,
                        SparseIndex)
from .query import Part, decompose
from .scope import Scope, question_scope
from .trace import (TRACE_VERSION, AttemptTrace, PartTrace, RouteRecord, Trace, TraceSettings, decision_of,
                    new_trace_id, prune_traces, write_trace)
from .types import ContextItem, GenerationOutput, GenerationRequest, PartOutcome, QueryPlan, Result
from .release import Emit, Release
from .verification import StreamingGenerator, VerifiedAttempt, generate_and_verify, verify_attempt

log = logging.getLogger(__name__)

GENERATOR_FAILED = "generator_failed"


@dataclass
class Components:
    """What answers a question: where each attempt's context comes from, the generator, the judge."""

    context: ContextSource
    generator: Generator
    judge: Judge

    @classmethod
    def of(cls, profile: Profile, analyzer: QueryAnalyzer, embedder: Embedder, dense: DenseIndex,
           lexical: LexicalIndex, chunks: ChunkSource, reranker: Reranker, generator: Generator, judge: Judge,
           sparse: SparseIndex | None = None) -> "Components":
        """Components whose context is built here, from these indexes and models (the CLI's, and
        the served Retriever's own)."""
        return cls(ContextBuilder(profile.settings, analyzer, embedder, dense, lexical, chunks, reranker, sparse),
                   generator, judge)

    def names(self) -> dict[str, str]:
        names = dict(self.context.model_names)
        for k in ("generator", "judge"):
            names[k] = getattr(getattr(self, k), "name", type(getattr(self, k)).__name__)
        return names


class Orchestrator:
    def __init__(self, profile: Profile, components: Components, analyzer: QueryAnalyzer,
                 trace_dir: Path | None = None, audit: AuditLog | None = None):
        self.profile = profile
        self.audit = audit  # every answer written to the trace directory is also entered here
        self.settings = profile.settings
        self.gates = TraceSettings.of(profile, None)  # what verify_attempt runs with (a trace adds its date)
        self.components = components
        self.analyzer = analyzer
        self.trace_dir = trace_dir
        self._traces_written = 0  # retention (settings.traces) is applied every `prune_every` writes
        self._counting = threading.Lock()

    async def answer(self, question: str, lang: str | None = None, actor: str = LOCAL_KEY,
                     as_of: dt.date | None = None) -> Result:
        """The result a user sees (the trace is written to the trace directory)."""
        result, _ = await self.run(question, lang, actor, as_of)
        return result

    async def run_within(self, question: str, lang: str | None, timeout_s: float,
                         actor: str = LOCAL_KEY, as_of: dt.date | None = None,
                         emit: Emit | None = None) -> tuple[Result, Trace]:
        """`run` with a deadline on the work: past it, the result is a refusal saying so (and a trace of
        that), never a partial or unverified answer. The trace is written after the deadline's reach, so a
        question has one trace and one audit entry whichever way it ends. `emit`: see `run`."""
        started = time.perf_counter()
        try:
            decided = await asyncio.wait_for(self._decide(question, lang, as_of, emit), timeout_s)
        except asyncio.TimeoutError:
            question = question.strip()
            q_lang = self.analyzer.language(question)
            lang = lang or q_lang
            trace_id = new_trace_id()
            outcome = PartOutcome(0, question, "none", False, None, TIMEOUT)
            result = Result("refusal", question, lang, (), (outcome,), reason_code=TIMEOUT,
                            reason=reason_text(TIMEOUT, lang), trace_id=trace_id)
            return await self._record(_Decided(result, q_lang, TraceSettings(timeout_s=timeout_s),
                                               f"refused ({TIMEOUT}): no decision within {timeout_s} s"),
                                      started, actor)
        return await self._record(decided, started, actor)

    async def run(self, question: str, lang: str | None = None, actor: str = LOCAL_KEY,
                  as_of: dt.date | None = None, emit: Emit | None = None) -> tuple[Result, Trace]:
        """The result and its trace. A question over `limits.max_question_chars` is a
        QuestionRejected (too long, too many parts), before any work (the CLI, batch and the API all come
        through here). The answer is given as of `as_of` (the caller's), else the date the question names, else the
        profile's `as_of`, else today (pipeline/status.py). With `emit`, the answer is told as it is decided: each
        claim once nothing can withhold it (pipeline/release.py), then "decided" with the positions of any released
        claim the answer does not show there (none, by construction)."""
        started = time.perf_counter()
        return await self._record(await self._decide(question, lang, as_of, emit), started, actor)

    async def _decide(self, question: str, lang: str | None, as_of: dt.date | None,
                      emit: Emit | None = None) -> "_Decided":
        question = check_question(question, self.settings.limits)
        q_lang = self.analyzer.language(question)
        lang = lang or q_lang
        dated = self._as_of(question, as_of)
        scope = await question_scope(question, q_lang, self.components.context, self.analyzer)
        asked = decompose(question)
        routes = [self.profile.routes.route(p.text) for p in asked]
        s = self.settings
        release = None
        if emit is not None:
            release = Release(emit, question, routes, dated["date"], s.confidence, scope.named)
            emit("analysis", {"question": question, "lang": lang, "parts": [p.text for p in asked], "as_of": dated,
                              "named": [label for label, _ in scope.named]})
        parts = await asyncio.gather(*(self._part(i, p, r, q_lang, scope, release)
                                       for i, (p, r) in enumerate(zip(asked, routes))))
        result = conclude(parts, question, lang, self.analyzer.all_tokens, s.conflicts.min_overlap,
                          s.nearest_records, new_trace_id(), scope.named, dated, s.confidence)
        if release is not None:
            emit("decided", {"withdrawn": release.finish(result)})
        return _Decided(result, q_lang, self.gates.model_copy(update={"as_of": dated}), explain(result), tuple(parts),
                        scope)

    def _as_of(self, question: str, given: dt.date | None) -> dict:
        """The answer's date and where it came from: the request, the question's own words, the profile, or today."""
        if given is not None:
            return {"date": given.isoformat(), "from": "request"}
        asked = status.asked_date(question)
        if asked is not None:
            return {"date": asked[0].isoformat(), "from": "question", "words": asked[1]}
        if self.settings.as_of is not None:
            return {"date": self.settings.as_of.isoformat(), "from": "profile"}
        return {"date": dt.date.today().isoformat(), "from": "today"}

    async def _record(self, d: "_Decided", started: float, actor: str) -> tuple[Result, Trace]:
        """The one place a trace is made; written (with its audit entry) in a worker thread when there is a trace
        directory: serialising, fsync and pruning are file work the event loop of a server must not wait on."""
        result = d.result
        trace = Trace(
            trace_id=result.trace_id, version=TRACE_VERSION,
            created_at=dt.datetime.now(dt.timezone.utc).isoformat(), saksi_version=__version__,
            profile=self.settings.profile, components=self.components.names(), question=result.question,
            question_lang=d.question_lang, lang=result.lang, settings=d.settings, parts=d.parts,
            conflicts=result.conflicts, decision=decision_of(result), why=d.why,
            timings_ms={"total": _ms(started)}, named_documents=d.scope.named, scoped_to=d.scope.restrict)
        if self.trace_dir is not None:
            result = await asyncio.to_thread(self._write, trace, result, actor)
        return result, trace

    def _write(self, trace: Trace, result: Result, actor: str) -> Result:
        path = write_trace(trace, self.trace_dir)
        if self.audit is not None:
            self.audit.append("answer", key=actor, trace_id=trace.trace_id, trace_sha256=file_hash(path),
                              outcome=result.outcome, reason_code=result.reason_code, question=result.question)
        self._retain_traces()
        return replace(result, trace_path=str(path))

    def _retain_traces(self) -> None:
        """Trace retention: on the first write and every `prune_every` writes after, delete traces
        older than `keep_days` and beyond the newest `keep_count` (cheap: one directory scan)."""
        keep = self.settings.traces
        with self._counting:  # traces are written from worker threads
            due = self._traces_written % keep.prune_every == 0
            self._traces_written += 1
        if due:
            removed = prune_traces(self.trace_dir, keep.keep_days, keep.keep_count)
            if removed:
                log.info("trace retention: %d old trace(s) deleted from %s", removed, self.trace_dir)

    async def _part(self, index: int, part: Part, route: Route, q_lang: str, scope: Scope,
                    release: Release | None) -> PartTrace:
        asked = replace(part, text=scope.without_names(part.text)) if scope.strip else part
        request = ContextRequest(asked, q_lang, route, 1, scope.restrict, named=scope.held)
        first = await self._attempt(0, request, index, release)
        attempts = [first]
        if not first.summary.ok:
            retry = replace(request, widen=self.settings.retrieval.retry_widen, previous=first.trace.query,
                            **await self._model_rewrite(first.trace.query, asked))
            attempts.append(await self._attempt(1, retry, index, release))
        outcome = decide_part(index, part.text, route, [a.summary for a in attempts])
        return PartTrace(index=index, question=part.text, topic=part.topic, route=RouteRecord.of(route),
                         attempts=tuple(a.trace for a in attempts), outcome=outcome)

    async def _model_rewrite(self, plan: QueryPlan, part: Part) -> dict[str, str]:
        """Tiering: rules route and decompose; the heavy model rewrites the query only when the
        profile asks for it (generator.rewrite: generator) and can; otherwise, or if its rewrite
        is unusable, the context source rewrites by the rules."""
        gen = self.components.generator
        if self.settings.generator.rewrite == "generator" and isinstance(gen, QueryRewriter):
            try:
                text = await gen.rewrite_query(part.text, plan.lang)
            except Exception as e:  # a failed rewrite costs the model's help, not the answer
                log.warning("generator %s could not rewrite the query: %s", gen.name, e)
                text = None
            if text:
                return {"rewrite": text, "rewritten_by": gen.name}
        return {}

    async def _attempt(self, n: int, request: ContextRequest, part_index: int, release: Release | None) -> "_Attempt":
        t = time.perf_counter()
        ctx = await self.components.context.context(request)
        # the call as the orchestrator waits for it: served, `context_call` - `context` is the hop's cost
        ctx = replace(ctx, timings_ms={**ctx.timings_ms, "context_call": _ms(t)})
        if release is not None:
            release.context(part_index, n, ctx.plan, ctx.chunks, ctx.status, len(ctx.context), ctx.candidates)
        attempt = await self._generate_and_verify(n, ctx.plan, request.route, part_index, ctx, release)
        if release is not None:
            release.settled(part_index, n, attempt.trace.claims)
        return attempt

    async def _generate_and_verify(self, n: int, plan: QueryPlan, route: Route, part_index: int,
                                   ctx: AttemptContext, release: Release | None = None) -> "_Attempt":
        """Generate from the context, run every gate, and record the attempt with its summary. A generator that
        streams is verified while it writes (`verification.generate_and_verify`): each claim is gated as soon as it
        closes, and `release` hears it then."""
        chunks = ctx.chunks
        timings = dict(ctx.timings_ms)
        request = output = failure = failure_detail = None
        if ctx.context:
            request = GenerationRequest(
                question=plan.text, lang=plan.lang, terms=plan.terms, required=tuple(route.required), retry=n > 0,
                context=tuple(ContextItem(c.chunk.chunk_id, c.chunk.title, c.chunk.location, c.chunk.text,
                                          c.chunk.is_example, c.chunk.lang, c.rerank_score or 0.0, c.chunk.heading,
                                          ctx.links.get(c.chunk.chunk_id, ()), c.chunk.spans, c.chunk.uploaded_by,
                                          c.dense_rank == 1 and c.lexical_rank == 1)
                              for c in ctx.context))
            generator = self.components.generator
            if isinstance(generator, StreamingGenerator):
                on_claim = (lambda i, c: release.gated(part_index, n, i, c)) if release is not None else None
                streamed = await generate_and_verify(generator, request, chunks, ctx.paragraphs, ctx.scores,
                                                     self.components.judge, self.gates, route, part_index, on_claim)
                return self._attempt_trace(n, plan, ctx, request, streamed.output, streamed.verified,
                                           {**timings, **streamed.timings_ms()})
            t = time.perf_counter()
            try:
                output = await generator.generate(request)
            except Exception as e:  # a failed generator is a refusal with that reason, never a 500
                log.warning("generator %s failed: %s", generator.name, e)
                failure, failure_detail = GENERATOR_FAILED, str(e)
            timings["generate"] = _ms(t)
        t = time.perf_counter()
        v = await verify_attempt(output, chunks, ctx.paragraphs, ctx.scores, self.components.judge, self.gates, route,
                                 part_index, bool(ctx.context), failure, failure_detail)
        if output is not None:
            timings["verify"] = _ms(t)
        return self._attempt_trace(n, plan, ctx, request, output, v, timings)

    @staticmethod
    def _attempt_trace(n: int, plan: QueryPlan, ctx: AttemptContext, request: GenerationRequest | None,
                       output: GenerationOutput | None, v: VerifiedAttempt, timings: dict[str, float]) -> "_Attempt":
        summary = v.summary
        trace = AttemptTrace(
            attempt=n, query=plan, candidates=ctx.candidates, reranked=ctx.reranked, referenced=ctx.referenced,
            context=tuple(ctx.chunks), paragraphs=ctx.paragraphs, generator_request=request,
            generator_output=output, failure=v.failure, failure_detail=v.failure_detail, claims=v.claims,
            judge_calls=v.judge_calls, sufficiency=v.sufficiency, ok=summary.ok, timings_ms=timings, status=ctx.status,
            output_cut=v.cut)
        return _Attempt(trace, summary)


@dataclass(frozen=True)
class _Decided:
    """What a question came to, before its trace is written."""
    result: Result
    question_lang: str
    settings: TraceSettings
    why: str
    parts: tuple[PartTrace, ...] = ()
    scope: Scope = Scope()


@dataclass(frozen=True)
class _Attempt:
    trace: AttemptTrace
    summary: AttemptSummary


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 1)
