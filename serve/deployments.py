"""One Ray Serve deployment per model, plus the retriever that owns the indexes.

Each deployment is a thin wrapper over the same in-process backend the CLI uses (built
by `pipeline.backends` from the profile), so a profile change swaps models in both
hostings at once. The embedder, reranker and judge batch concurrent requests with
`@serve.batch` (sizes from configs/serve/<profile>.yaml). Every deployment answers
`ready()` so the ingress can report readiness only when all of them are up.

A question costs few calls: the Retriever builds each attempt's whole context in one call
(`pipeline.context.ContextBuilder` next to its indexes), and the ingress then calls the Generator
and the Judge once each. `runtime.placement` says where each model runs: in its deployment here
(a hop per call), or inside its caller (the query embedder and the reranker in the Retriever's
call, the generator and the judge in the Ingress: the lite profile, one hop per round).
"""
from __future__ import annotations

import asyncio
import logging
from typing import Sequence

import numpy as np
from ray import serve
from ray.serve.handle import DeploymentHandle

from pipeline.analysis import query_analyzer
from pipeline.audit import LOCAL_KEY
from pipeline.backends import make_embedder, make_generator, make_judge, make_reranker
from pipeline.config import load_profile
from pipeline.context import AttemptContext, ContextRequest
from pipeline.corpus import DEFAULT_COLLECTION, DataDir
from pipeline.corpus.library import Library
from pipeline.responses import CorpusResponse, DeleteResponse, IngestResponse
from pipeline.verification import StreamingGenerator
from pipeline.types import (Candidate, Document, GenerationOutput, GenerationRequest, JudgeInput, QueryPlan,
                            Verdict)

from .config import Batch, RuntimeSettings
from .handles import HandleReranker, handle_embedder

log = logging.getLogger(__name__)


def _set_batch(method, batch: Batch | None) -> None:
    if batch is not None:
        method.set_max_batch_size(batch.max_batch_size)
        method.set_batch_wait_timeout_s(batch.batch_wait_timeout_s)


class _ModelDeployment:
    """What every model deployment answers besides its work: its name, and that it is up."""

    model: object

    def info(self) -> dict:
        return {"name": self.model.name}

    def ready(self) -> bool:
        return True


class BatchedEmbedder:
    """An embedder whose concurrent single-text calls meet in one model call (`@serve.batch`):
    the Embedder deployment's, and the Retriever's own when it embeds questions itself. The sparse
    lane's hybrid calls pass through unbatched (queries ask once per retrieval round; ingest
    sends whole batches already). One per process: Ray keeps one batch queue per decorated
    method per process (a replica is a process), so two instances in one process would share it."""

    def __init__(self, model, batch: Batch | None = None):
        self.model, self.name, self.dim = model, model.name, model.dim
        _set_batch(self._query, batch)
        _set_batch(self._passage, batch)

    @serve.batch
    async def _query(self, texts: list[str]) -> list[np.ndarray]:
        return list(await self.model.embed_queries(texts))

    @serve.batch
    async def _passage(self, texts: list[str]) -> list[np.ndarray]:
        return list(await self.model.embed_passages(texts))

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack(await asyncio.gather(*(self._query(t) for t in texts)))

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack(await asyncio.gather(*(self._passage(t) for t in texts)))

    async def embed_queries_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await self.model.embed_queries_hybrid(list(texts))

    async def embed_passages_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await self.model.embed_passages_hybrid(list(texts))


@serve.deployment(name="Embedder")
class EmbedderDeployment(_ModelDeployment):
    """Query and passage embeddings; concurrent requests are batched into one forward pass."""

    def __init__(self, profile: str, batch: Batch | None = None):
        self.model = make_embedder(load_profile(profile))
        self.batched = BatchedEmbedder(self.model, batch)

    def info(self) -> dict:
        return {"name": self.model.name, "dim": self.model.dim}

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return await self.batched.embed_queries(texts)

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return await self.batched.embed_passages(texts)

    async def embed_queries_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await self.batched.embed_queries_hybrid(texts)

    async def embed_passages_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await self.batched.embed_passages_hybrid(texts)


@serve.deployment(name="Reranker")
class RerankerDeployment(_ModelDeployment):
    def __init__(self, profile: str, batch: Batch | None = None):
        p = load_profile(profile)
        self.model = make_reranker(p, query_analyzer(p))
        _set_batch(self._rerank, batch)

    @serve.batch
    async def _rerank(self, items: list[tuple]) -> list[list[Candidate]]:
        batched = getattr(self.model, "rerank_batch", None)  # a cross-encoder: every pair of the batch in one pass
        if batched is not None:
            return list(await batched(items))
        return list(await asyncio.gather(*(self.model.rerank(*it) for it in items)))

    async def rerank(self, query: QueryPlan, candidates: Sequence[Candidate], authority_weight: float,
                     freshness_weight: float) -> list[Candidate]:
        return await self._rerank((query, list(candidates), authority_weight, freshness_weight))


@serve.deployment(name="Generator")
class GeneratorDeployment(_ModelDeployment):
    def __init__(self, profile: str):
        p = load_profile(profile)
        self.model = make_generator(p, query_analyzer(p))

    def info(self) -> dict:
        return {"name": self.model.name, "streams": True}  # `stream` below: the handle streams (serve/handles.py)

    async def generate(self, request: GenerationRequest) -> GenerationOutput:
        return await self.model.generate(request)

    async def stream(self, request: GenerationRequest):
        """The output as the model writes it, over a streaming handle (`serve.handles.HandleStreamingGenerator`): its
        pieces, then the output; a model that does not stream gives its whole output as one piece."""
        if isinstance(self.model, StreamingGenerator):
            async for item in self.model.stream(request):
                yield item
            return
        out = await self.model.generate(request)
        yield out.raw
        yield out

    async def rewrite_query(self, question: str, lang: str) -> str | None:
        """The model's corrective rewrite; None when this generator cannot (rules then)."""
        rewrite = getattr(self.model, "rewrite_query", None)
        return await rewrite(question, lang) if rewrite is not None else None

    async def rewrite_followup(self, previous: str, followup: str, lang: str) -> str | None:
        """A chat's follow-up made standalone by the model; None when this generator cannot (rules then)."""
        rewrite = getattr(self.model, "rewrite_followup", None)
        return await rewrite(previous, followup, lang) if rewrite is not None else None


@serve.deployment(name="Judge")
class JudgeDeployment(_ModelDeployment):
    """Judges claims one by one; concurrent claims from all requests are batched."""

    def __init__(self, profile: str, batch: Batch | None = None):
        self.model = make_judge(load_profile(profile))
        _set_batch(self._judge, batch)

    @serve.batch
    async def _judge(self, items: list[JudgeInput]) -> list[Verdict]:
        return list(await self.model.judge(items))

    async def judge(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        return list(await asyncio.gather(*(self._judge(it) for it in items)))


@serve.deployment(name="Retriever")
class RetrieverDeployment:
    """Hosts the data directory's collections (`pipeline.corpus.library.Library`): for each, its chunk
    store, Milvus (Lite: one process per file) and bm25s. Search, scoring and chunk lookup for every
    request, and small ingests. What it adds to the library is only where the models run: questions are
    embedded and candidates reranked here or by their deployments (runtime.placement), and an upload is
    embedded through the Embedder deployment when there is one (a GPU model is not loaded twice)."""

    def __init__(self, profile: str, data_dir: str, runtime: RuntimeSettings | None = None,
                 embedder: DeploymentHandle | None = None, reranker: DeploymentHandle | None = None,
                 batch: Batch | None = None):
        self.profile = load_profile(profile)
        self.runtime = runtime or RuntimeSettings()
        self._embedder = embedder
        self._reranker_handle = reranker
        self._query_batch = batch  # for questions embedded here
        self.library = Library(self.profile, profile, DataDir(data_dir), parse_timeout_s=self.runtime.parse_timeout_s,
                               parse_memory_mb=self.runtime.parse_memory_mb,
                               max_upload_chunks=self.runtime.max_upload_chunks,
                               query_embedder=self._query_embedder, reranker=self._reranker,
                               upload_embedder=self._upload_embedder if embedder is not None else None)

    async def _query_embedder(self):
        """Questions are embedded here, batched across concurrent questions (no extra hop: the lite
        profile's small CPU model), or by the Embedder deployment (a GPU model loaded once)."""
        if self.runtime.placement.query_embedder == "retriever":
            return BatchedEmbedder(make_embedder(self.profile), self._query_batch)
        info = await self._embedder.info.remote()
        return handle_embedder(self._embedder, info, self.runtime.request_timeout_s,
                               self.profile.settings.embedder.sparse)

    async def _reranker(self):
        """The candidates are reranked here (the lite profile's heuristic: no hop) or by the Reranker
        deployment (a cross-encoder, batched across questions)."""
        if self.runtime.placement.reranker == "retriever":
            return make_reranker(self.profile, query_analyzer(self.profile))
        info = await self._reranker_handle.info.remote()
        return HandleReranker(self._reranker_handle, info["name"], self.runtime.request_timeout_s)

    async def _upload_embedder(self):
        info = await self._embedder.info.remote()
        return handle_embedder(self._embedder, info, self.runtime.ingest_embed_timeout_s,
                               self.profile.settings.embedder.sparse)

    # what the Ingress calls over its handle: the library's own methods
    async def ready(self) -> dict:
        return await self.library.ready()

    async def context(self, request: ContextRequest, collection: str = DEFAULT_COLLECTION) -> AttemptContext:
        return await self.library.context(request, collection)

    async def model_names(self, collection: str = DEFAULT_COLLECTION) -> dict[str, str]:
        return await self.library.model_names(collection)

    async def documents(self, collection: str = DEFAULT_COLLECTION) -> list[Document]:
        return await self.library.documents(collection)

    async def coverage(self, collection: str = DEFAULT_COLLECTION) -> CorpusResponse:
        return await self.library.coverage(collection)

    async def document(self, doc: str, collection: str = DEFAULT_COLLECTION, refs_from: int = 0) -> dict | None:
        return await self.library.document(doc, collection, refs_from)

    async def document_text(self, doc: str, collection: str = DEFAULT_COLLECTION, chunk: str | None = None,
                            at: int | None = None) -> dict | None:
        return await self.library.document_text(doc, collection, chunk, at)

    async def ingest(self, files: list[tuple[str, bytes]], actor: str = LOCAL_KEY,
                     authority: str = "unknown", collection: str = DEFAULT_COLLECTION) -> IngestResponse:
        return await self.library.ingest(files, actor, authority, collection)

    async def delete(self, doc_id: str, actor: str = LOCAL_KEY, collection: str = DEFAULT_COLLECTION
                     ) -> DeleteResponse | None:
        return await self.library.delete(doc_id, actor, collection)
