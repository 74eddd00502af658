"""The pipeline's stage Protocols implemented over Ray Serve deployment handles.

The ingress builds `pipeline.orchestrator.Components` from these, so the one orchestrator
runs unchanged in Serve: an await on a stage becomes a call to another deployment (one to the
Retriever for each attempt's context, one each to the Generator and the Judge; the Retriever
calls the Reranker and the Embedder), except for a model `runtime.placement` runs inside its
caller, which is the in-process backend itself (lite: only the Retriever is called).
The context handle names the collection it reads, so an answer only ever sees its own.
Each call carries a deadline; a judge that does not answer in time is "no verdict"
(the gates cap the claim), never a yes. A call whose replica dies under it (a node lost, a replica
killed, an autoscaler's replica stopped) is made once more within the same deadline: Serve routes
it to a live replica, and every call here is a read that may run twice (a streamed generation is
not retried: its claims may already be shown).
"""
from __future__ import annotations

import asyncio
import logging
from typing import AsyncIterator, Sequence

import numpy as np
from ray.exceptions import RayActorError
from ray.serve.handle import DeploymentHandle

from pipeline.analysis import QueryAnalyzer
from pipeline.backends import make_generator, make_judge
from pipeline.config import Profile
from pipeline.context import AttemptContext, ContextRequest
from pipeline.orchestrator import Components
from pipeline.types import Candidate, Document, GenerationOutput, GenerationRequest, JudgeInput, QueryPlan, Verdict

log = logging.getLogger(__name__)


async def _call(handle: DeploymentHandle, method: str, *args, timeout: float, **kwargs):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        return await asyncio.wait_for(getattr(handle, method).remote(*args, **kwargs), timeout)
    except RayActorError:  # the replica died (or became unreachable) under the call
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise
        log.warning("a %s replica was lost during %s; asking another", getattr(handle, "deployment_name", "?"), method)
        return await asyncio.wait_for(getattr(handle, method).remote(*args, **kwargs), remaining)


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


class HandleContext:
    """The context source over the Retriever deployment: each attempt's whole context in one call,
    from the collection this handle names."""

    def __init__(self, retriever: DeploymentHandle, model_names: dict[str, str], timeout: float,
                 collection: str = "default"):
        self.h, self.model_names, self.timeout, self.collection = retriever, dict(model_names), timeout, collection

    async def context(self, request: ContextRequest) -> AttemptContext:
        return await _call(self.h, "context", request, timeout=self.timeout, collection=self.collection)

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

    async def rewrite_followup(self, previous: str, followup: str, lang: str) -> str | None:
        return await _call(self.h, "rewrite_followup", previous, followup, lang, timeout=self.timeout)


class HandleStreamingGenerator(HandleGenerator):
    """A generator over a deployment that streams (its `info()` says `streams`): the `StreamingGenerator` protocol
    too, so its claims are verified while it writes."""

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str | GenerationOutput]:
        """The Generator deployment's output as it writes it (a streaming handle), under the same deadline."""
        async with asyncio.timeout(self.timeout):
            async for item in self.h.options(stream=True).stream.remote(request):
                yield item


class HandleJudge:
    """A judge over a handle. Failures and timeouts raise; `pipeline.gates.verify` turns
    them into "no verdict" for every claim (capped below the top band)."""

    def __init__(self, handle: DeploymentHandle, name: str, timeout: float):
        self.h, self.name, self.timeout = handle, name, timeout

    async def judge(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        return await _call(self.h, "judge", list(items), timeout=self.timeout)


class TimedJudge:
    """A judge that runs in the Ingress (runtime.placement), under the deadline a judge over a
    handle has: a call past `timeout` raises, which the gates turn into "no verdict"."""

    def __init__(self, judge, timeout: float):
        self.inner, self.name, self.timeout = judge, judge.name, timeout

    async def judge(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        return await asyncio.wait_for(self.inner.judge(items), self.timeout)


class RemoteLibrary:
    """The corpus's calls of `serve.service.CorpusCalls` over the Retriever deployment's handle: each method of
    `pipeline.corpus.library.Library`, called by name (the service puts the deadlines on them)."""

    def __init__(self, retriever: DeploymentHandle):
        self.h = retriever

    def __getattr__(self, method: str):
        return getattr(self.h, method).remote


class HandleStages:
    """What answers a collection's questions, over the deployments (`serve.service.Stages`): the context from the
    Retriever, for that collection only; the generator and the judge from their deployments, or built here where
    `runtime.placement` runs them inside the Ingress (no hop)."""

    def __init__(self, profile: Profile, analyzer: QueryAnalyzer, runtime, handles: dict[str, DeploymentHandle]):
        self.runtime, self.handles = runtime, handles
        place = runtime.placement
        self.judge_deadline_s = min(runtime.request_timeout_s, runtime.judge_timeout_s)  # wherever the judge runs
        self.local_generator = make_generator(profile, analyzer) if place.generator == "ingress" else None
        self.local_judge = (TimedJudge(make_judge(profile), self.judge_deadline_s)
                            if place.judge == "ingress" else None)

    async def __call__(self, collection: str):
        h, t = self.handles, self.runtime.request_timeout_s
        return Components(
            context=HandleContext(h["Retriever"], await h["Retriever"].model_names.remote(collection), t, collection),
            generator=self.local_generator or await self._over(HandleGenerator, "Generator", t),
            judge=self.local_judge or await self._over(HandleJudge, "Judge", self.judge_deadline_s))

    async def _over(self, kind, deployment: str, timeout: float):
        """A stage over its deployment's handle, named by the model the deployment runs; a generator streaming where
        its deployment says it `streams`."""
        info = await self.handles[deployment].info.remote()
        if kind is HandleGenerator and info.get("streams"):
            kind = HandleStreamingGenerator
        return kind(self.handles[deployment], info["name"], timeout)
