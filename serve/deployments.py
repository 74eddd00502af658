"""One Ray Serve deployment per model, plus the retriever that owns the indexes.

Each deployment is a thin wrapper over the same in-process backend the CLI uses (built
by `pipeline.backends` from the profile), so a profile change swaps models in both
hostings at once. The embedder, reranker and judge batch concurrent requests with
`@serve.batch` (sizes from configs/serve/<profile>.yaml). Every deployment answers
`ready()` so the ingress can report readiness only when all of them are up.
"""
from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Sequence

import numpy as np
from ray import serve
from ray.serve.handle import DeploymentHandle

from pipeline import catalog
from pipeline.analysis import query_analyzer
from pipeline.backends import make_embedder, make_generator, make_judge, make_reranker
from pipeline.config import load_profile
from pipeline.corpus import Corpus
from pipeline.index import Bm25LexicalIndex, StoreChunkSource
from pipeline.responses import CorpusResponse, IngestResponse
from pipeline.types import Candidate, Chunk, ContextLink, Document, GenerationOutput, GenerationRequest, JudgeInput, QueryPlan, Verdict

from .config import Batch, RuntimeSettings
from .handles import handle_embedder

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


@serve.deployment(name="Embedder")
class EmbedderDeployment(_ModelDeployment):
    """Query and passage embeddings; concurrent requests are batched into one forward pass."""

    def __init__(self, profile: str, batch: Batch | None = None):
        self.model = make_embedder(load_profile(profile))
        _set_batch(self._query, batch)
        _set_batch(self._passage, batch)

    def info(self) -> dict:
        return {"name": self.model.name, "dim": self.model.dim}

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

    # the sparse lane (BGE-M3 with embedder.sparse): one pass, both vectors; unbatched, since
    # queries ask once per retrieval round and ingest sends whole batches already
    async def embed_queries_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await self.model.embed_queries_hybrid(list(texts))

    async def embed_passages_hybrid(self, texts: Sequence[str]) -> tuple[np.ndarray, list[dict[int, float]]]:
        return await self.model.embed_passages_hybrid(list(texts))


@serve.deployment(name="Reranker")
class RerankerDeployment(_ModelDeployment):
    def __init__(self, profile: str, batch: Batch | None = None):
        p = load_profile(profile)
        self.model = make_reranker(p, query_analyzer(p))
        _set_batch(self._rerank, batch)

    @serve.batch
    async def _rerank(self, items: list[tuple]) -> list[list[Candidate]]:
        # one call per request: a cross-encoder backend scores all pairs of the batch at once
        return list(await asyncio.gather(*(self.model.rerank(*it) for it in items)))

    async def rerank(self, query: QueryPlan, candidates: Sequence[Candidate], authority_weight: float,
                     freshness_weight: float) -> list[Candidate]:
        return await self._rerank((query, list(candidates), authority_weight, freshness_weight))


@serve.deployment(name="Generator")
class GeneratorDeployment(_ModelDeployment):
    def __init__(self, profile: str):
        p = load_profile(profile)
        self.model = make_generator(p, query_analyzer(p))

    async def generate(self, request: GenerationRequest) -> GenerationOutput:
        return await self.model.generate(request)

    async def rewrite_query(self, question: str, lang: str) -> str | None:
        """The model's corrective rewrite; None when this generator cannot (rules then)."""
        rewrite = getattr(self.model, "rewrite_query", None)
        return await rewrite(question, lang) if rewrite is not None else None


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
    """Owns the data directory: chunk store, Milvus (Lite: one process per file) and bm25s.

    Search, scoring and chunk lookup for every request, and small ingests (which reload
    the lexical index so the next request sees the new chunk set whole). One lock orders
    reads and ingests: the store and Milvus Lite are touched by one thread at a time.
    """

    def __init__(self, profile: str, data_dir: str, runtime: RuntimeSettings | None = None,
                 embedder: DeploymentHandle | None = None):
        self.profile = load_profile(profile)
        self.data_dir = Path(data_dir)
        self.runtime = runtime or RuntimeSettings()
        # reading needs no model; an ingest embeds through the Embedder deployment when given one
        # (so a GPU model is not loaded a second time here), else with an in-process embedder
        self.corpus = Corpus(self.data_dir, self.profile)
        self._embedder = embedder
        self._handed_over = False
        self._lock = asyncio.Lock()
        self.lexical: Bm25LexicalIndex | None = None
        self.fingerprint: str | None = None
        self.problem: str | None = None
        self._load()

    def _load(self) -> None:
        """Load the indexes if the corpus is consistent; otherwise remember why not (readyz says it)."""
        self._loaded_state = self.corpus.dir.state_mtime()
        try:
            self.lexical = self.corpus.lexical()
            self.fingerprint = self.lexical.fingerprint
            self.chunks = StoreChunkSource(self.corpus.store)
            self.problem = None
        except Exception as e:  # an empty or inconsistent corpus: not ready, with the reason
            self.lexical, self.problem = None, str(e)

    async def ready(self) -> dict:
        async with self._lock:
            try:
                self._need()  # picks up an ingest made elsewhere
            except RuntimeError:
                pass
            return {"ready": self.lexical is not None, "problem": self.problem,
                    "chunks": self.corpus.store.count() if self.lexical is not None else 0}

    def _need(self) -> Bm25LexicalIndex:
        # an ingest by another replica or a job (shared data directory) rewrites state.json last;
        # reload then, so every replica answers from the same, whole chunk set
        if self.corpus.dir.state_mtime() != self._loaded_state:
            self._load()
        if self.lexical is None:
            raise RuntimeError(f"the corpus is not loaded: {self.problem}")
        return self.lexical

    async def dense_search(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        async with self._lock:
            self._need()
            return await self.corpus.dense.search(vector, limit)

    async def dense_score(self, vector: np.ndarray, chunk_ids: Sequence[str]) -> dict[str, float]:
        async with self._lock:
            self._need()
            return await self.corpus.dense.score(vector, chunk_ids)

    async def sparse_search(self, weights: dict[int, float], limit: int) -> list[tuple[str, float]]:
        async with self._lock:
            self._need()
            return await self.corpus.dense.sparse_search(weights, limit)

    async def sparse_score(self, weights: dict[int, float], chunk_ids: Sequence[str]) -> dict[str, float]:
        async with self._lock:
            self._need()
            return await self.corpus.dense.sparse_score(weights, chunk_ids)

    async def lexical_search(self, tokens: Sequence[str], limit: int) -> list[tuple[str, float]]:
        async with self._lock:
            return await self._need().search(tokens, limit)

    async def lexical_score(self, tokens: Sequence[str], chunk_ids: Sequence[str]) -> dict[str, float]:
        async with self._lock:
            return await self._need().score(tokens, chunk_ids)

    async def idf(self, tokens: Sequence[str]) -> dict[str, float]:
        async with self._lock:
            return await self._need().idf(tokens)

    async def max_idf(self) -> float:
        async with self._lock:
            return await self._need().max_idf()

    async def get(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        async with self._lock:
            self._need()
            return await self.chunks.get(chunk_ids)

    async def paragraph(self, chunk: Chunk) -> str:
        async with self._lock:
            self._need()
            return await self.chunks.paragraph(chunk)

    async def references(self, chunk_ids: Sequence[str]) -> dict[str, list[ContextLink]]:
        async with self._lock:
            self._need()
            return await self.chunks.references(chunk_ids)

    async def documents(self) -> list[Document]:
        async with self._lock:
            self._need()
            return await self.chunks.documents()

    async def coverage(self) -> CorpusResponse:
        """What is ingested: the basis for telling a user "no source for that"."""
        async with self._lock:
            rows = catalog.listing(self.corpus)
            listing = CorpusResponse(data_dir=str(self.data_dir), fingerprint=self.fingerprint,
                                     ready=self.lexical is not None, problem=self.problem, documents=len(rows),
                                     chunks=self.corpus.store.count(), items=rows)
            return listing.relative_to(Path(self.data_dir))  # no server paths in an API response

    async def ingest(self, files: list[tuple[str, bytes]], actor: str = "http:anonymous") -> IngestResponse:
        """Write uploaded files under <data dir>/uploads and ingest them. Requests wait meanwhile
        (the lock), so none sees half an ingest; ingest runs in a worker thread because it
        drives its own event loop for embedding."""
        async with self._lock:
            target = self.corpus.dir.uploads
            target.mkdir(parents=True, exist_ok=True)
            paths = []
            for name, data in files:
                path = target / Path(name).name
                path.write_bytes(data)
                paths.append(path)
            if self._embedder is not None and not self._handed_over:
                info = await self._embedder.info.remote()
                self.corpus.use_embedder(handle_embedder(self._embedder, info, self.runtime.ingest_embed_timeout_s,
                                                         self.profile.settings.embedder.sparse))
                self._handed_over = True
            report = await asyncio.to_thread(self.corpus.ingest, paths, False, None, actor)
            self._load()
            rejected = {Path(e.path).resolve() for e in report.errors}
            for path in paths:  # a rejected upload is not kept: uploads/ holds only what was ingested
                if path.resolve() in rejected:
                    path.unlink(missing_ok=True)
            return IngestResponse.model_validate(report).relative_to(Path(self.data_dir))
