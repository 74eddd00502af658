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
import os
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np
from ray import serve
from ray.serve.handle import DeploymentHandle

from pipeline import catalog
from pipeline.analysis import query_analyzer
from pipeline.audit import LOCAL_KEY
from pipeline.backends import make_embedder, make_generator, make_judge, make_reranker
from pipeline.config import load_profile
from pipeline.context import AttemptContext, ContextBuilder, ContextRequest
from pipeline.errors import IngestError
from pipeline.corpus import DEFAULT_COLLECTION, Corpus, DataDir, Upload, reading
from pipeline.corpus.ingestor import IngestReport, Ingestor, embed_chunks
from pipeline.index import Bm25LexicalIndex, StoreChunkSource
from pipeline.responses import CorpusResponse, DeleteResponse, IngestResponse
from pipeline.types import (Candidate, Chunk, ContextLink, Document, DocumentStatus, GenerationOutput, GenerationRequest,
                            JudgeInput, QueryPlan, Verdict)

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


class _Collection:
    """One collection the retriever serves: its corpus, its lexical lane, and the lock that orders
    reads and an ingest's two short writes (the store and Milvus Lite are touched by one thread at a
    time): the documents' rows, then the derived state and the new vectors (`_finalize`). Ingests and
    deletes take `ingest_lock` too, so two never interleave; parsing, embedding and computing the
    derived state happen with the read lock free."""

    def __init__(self, directory: DataDir, profile):
        self.dir = directory
        self.corpus = Corpus(directory, profile)
        self.lock = asyncio.Lock()
        self.ingest_lock = asyncio.Lock()
        self.lexical: Bm25LexicalIndex | None = None
        self.fingerprint: str | None = None
        self.problem: str | None = None
        self.chunks: StoreChunkSource | None = None
        self.parser = None  # the parsing worker (IsolatedPreparation), started by the first upload
        self.builder: ContextBuilder | None = None  # reads through the _Locked* views below, so it outlives reloads
        self.load()

    def load(self) -> None:
        """Load the indexes if the corpus is consistent; otherwise remember why not (readyz says it)."""
        self._loaded_state = self.dir.state_mtime()
        try:
            self.lexical = self.corpus.lexical()
            self.fingerprint = self.lexical.fingerprint
            self.chunks = StoreChunkSource(self.corpus.store)
            self.problem = None
        except Exception as e:  # an empty or inconsistent corpus: not ready, with the reason
            self.lexical, self.problem = None, str(e)

    def refresh(self) -> None:
        """An ingest by another replica or a job (shared data directory) rewrites state.json last;
        reload then, so every replica answers from the same, whole chunk set."""
        if self.dir.state_mtime() != self._loaded_state:
            self.load()

    def need(self) -> Bm25LexicalIndex:
        self.refresh()
        if self.lexical is None:
            raise RuntimeError(f"the corpus of collection {self.dir.name!r} is not loaded: {self.problem}")
        return self.lexical


class _Locked:
    """A collection's index as the context builder reads it: each lookup under the collection's
    lock, on whatever is loaded now (an ingest may reload between two lookups)."""

    def __init__(self, col: _Collection):
        self.col = col


class _LockedDense(_Locked):
    async def search(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        async with self.col.lock:
            self.col.need()
            return await self.col.corpus.dense.search(vector, limit)

    async def score(self, vector: np.ndarray, chunk_ids: Sequence[str]) -> dict[str, float]:
        async with self.col.lock:
            self.col.need()
            return await self.col.corpus.dense.score(vector, chunk_ids)


class _LockedSparse(_Locked):
    async def sparse_search(self, weights: dict[int, float], limit: int) -> list[tuple[str, float]]:
        async with self.col.lock:
            self.col.need()
            return await self.col.corpus.dense.sparse_search(weights, limit)

    async def sparse_score(self, weights: dict[int, float], chunk_ids: Sequence[str]) -> dict[str, float]:
        async with self.col.lock:
            self.col.need()
            return await self.col.corpus.dense.sparse_score(weights, chunk_ids)


class _LockedLexical(_Locked):
    async def search(self, tokens: Sequence[str], limit: int) -> list[tuple[str, float]]:
        async with self.col.lock:
            return await self.col.need().search(tokens, limit)

    async def score(self, tokens: Sequence[str], chunk_ids: Sequence[str]) -> dict[str, float]:
        async with self.col.lock:
            return await self.col.need().score(tokens, chunk_ids)

    async def idf(self, tokens: Sequence[str]) -> dict[str, float]:
        async with self.col.lock:
            return await self.col.need().idf(tokens)

    async def max_idf(self) -> float:
        async with self.col.lock:
            return await self.col.need().max_idf()


class _LockedChunks(_Locked):
    async def get(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        async with self.col.lock:
            self.col.need()
            return await self.col.chunks.get(chunk_ids)

    async def paragraph(self, chunk: Chunk) -> str:
        async with self.col.lock:
            self.col.need()
            return await self.col.chunks.paragraph(chunk)

    async def references(self, chunk_ids: Sequence[str]) -> dict[str, list[ContextLink]]:
        async with self.col.lock:
            self.col.need()
            return await self.col.chunks.references(chunk_ids)

    async def definitions(self, term: str) -> list[tuple[str, str]]:
        async with self.col.lock:
            self.col.need()
            return await self.col.chunks.definitions(term)

    async def documents(self) -> list[Document]:
        async with self.col.lock:
            self.col.need()
            return await self.col.chunks.documents()

    async def status(self, doc_ids: Sequence[str]) -> dict[str, DocumentStatus]:
        async with self.col.lock:
            self.col.need()
            return await self.col.chunks.status(doc_ids)


class Indexes(NamedTuple):
    dense: _LockedDense
    lexical: _LockedLexical
    chunks: _LockedChunks
    sparse: _LockedSparse | None


class _Given:
    """A Preparation of documents already parsed and embedded (off the read path): the Ingestor asks
    for the files it found changed and gets them, in order."""

    def __init__(self, items: dict[Path, object]):
        self.items = {Path(p).resolve(): item for p, item in items.items()}

    def prepared(self, files: Sequence[Path]):
        for path in files:
            yield self.items[Path(path).resolve()]


@serve.deployment(name="Retriever")
class RetrieverDeployment:
    """Owns the data directory: for each collection, its chunk store, Milvus (Lite: one process per
    file) and bm25s.

    Search, scoring and chunk lookup for every request, and small ingests. An upload is parsed in
    a worker process with a time limit and embedded through the Embedder deployment while answers
    keep flowing from the old version; only writing it takes the collection's read lock, and the
    lexical index is reloaded so the next request sees the new chunk set whole.
    """

    def __init__(self, profile: str, data_dir: str, runtime: RuntimeSettings | None = None,
                 embedder: DeploymentHandle | None = None, reranker: DeploymentHandle | None = None,
                 batch: Batch | None = None):
        self.profile = load_profile(profile)
        self.profile_name = profile
        self.data_dir = DataDir(data_dir)
        self.runtime = runtime or RuntimeSettings()
        # an ingest embeds through the Embedder deployment when given one (so a GPU model is not
        # loaded a second time here), else with an in-process embedder; questions are embedded and
        # candidates reranked where runtime.placement says (`_make_query_embedder`, `_make_reranker`),
        # with `batch` for questions embedded here
        self._embedder = embedder
        self._reranker_handle = reranker
        self._query_batch = batch
        self._query_embedder = None
        self._reranker = None
        self._building = asyncio.Lock()
        self._collections: dict[str, _Collection] = {}
        self._collection(DEFAULT_COLLECTION)

    def _collection(self, name: str, create: bool = False) -> _Collection:
        if name not in self._collections:
            directory = self.data_dir.collection(name) if create else self.data_dir.existing(name)
            self._collections[name] = _Collection(directory, self.profile)
        return self._collections[name]

    # the default collection's state, as before collections (tests and readiness read these)
    @property
    def corpus(self) -> Corpus:
        return self._collections[DEFAULT_COLLECTION].corpus

    async def ready(self) -> dict:
        """Ready when a collection is loaded; a damaged one is out of service (named in `problem`, its questions
        503) while the others serve; `chunks` counts those that serve."""
        ready, problems, chunks = [], [], 0
        for name in self.data_dir.with_corpus() or [DEFAULT_COLLECTION]:  # none: the default says why not
            col = self._collection(name)
            async with col.lock:
                col.refresh()  # picks up an ingest made elsewhere
                if col.lexical is None:
                    problems.append(col.problem if name == DEFAULT_COLLECTION else f"{name}: {col.problem}")
                else:
                    ready.append(name)
                    chunks += col.corpus.store.count()
        return {"ready": bool(ready), "problem": "; ".join(problems) or None, "chunks": chunks}

    async def context(self, request: ContextRequest, collection: str = DEFAULT_COLLECTION) -> AttemptContext:
        """One attempt's whole context (plan, retrieve, rerank, references, paragraphs): the one
        call a question makes here per attempt. Each index lookup takes the collection's lock; the
        query's embedding and the rerank do not, so concurrent questions meet in their batches."""
        return await (await self._builder(collection)).context(request)

    async def documents(self, collection: str = DEFAULT_COLLECTION) -> list[Document]:
        return await _LockedChunks(self._collection(collection)).documents()

    async def _builder(self, collection: str) -> ContextBuilder:
        col = self._collection(collection)
        if col.builder is None:
            async with self._building:  # the first questions arrive together: one embedder, one builder
                if col.builder is None:
                    p = self.profile
                    if self._query_embedder is None:
                        self._query_embedder = await self._make_query_embedder()
                    if self._reranker is None:
                        self._reranker = await self._make_reranker()
                    ix = self.indexes(collection)
                    col.builder = ContextBuilder(p.settings, query_analyzer(p), self._query_embedder, ix.dense,
                                                 ix.lexical, ix.chunks, self._reranker, ix.sparse)
        return col.builder

    def indexes(self, collection: str = DEFAULT_COLLECTION) -> "Indexes":
        """The collection's indexes as this replica reads them (each lookup under the collection's
        lock): what the context builder reads through. In-replica only: the objects hold the replica's state."""
        col = self._collection(collection)
        return Indexes(_LockedDense(col), _LockedLexical(col), _LockedChunks(col),
                       _LockedSparse(col) if self.profile.settings.embedder.sparse else None)

    async def _make_query_embedder(self):
        """Questions are embedded here, batched across concurrent questions (no extra hop: the lite
        profile's small CPU model), or by the Embedder deployment (a GPU model loaded once), as
        runtime.placement says."""
        if self.runtime.placement.query_embedder == "retriever":
            return BatchedEmbedder(make_embedder(self.profile), self._query_batch)
        info = await self._embedder.info.remote()
        return handle_embedder(self._embedder, info, self.runtime.request_timeout_s,
                               self.profile.settings.embedder.sparse)

    async def _make_reranker(self):
        """The candidates are reranked here (the lite profile's heuristic: no hop) or by the Reranker
        deployment (a cross-encoder, batched across questions), as runtime.placement says."""
        if self.runtime.placement.reranker == "retriever":
            return make_reranker(self.profile, query_analyzer(self.profile))
        info = await self._reranker_handle.info.remote()
        return HandleReranker(self._reranker_handle, info["name"], self.runtime.request_timeout_s)

    async def model_names(self, collection: str = DEFAULT_COLLECTION) -> dict[str, str]:
        """The query embedder's and the reranker's names, wherever they run (the traces record them)."""
        return dict((await self._builder(collection)).model_names)

    async def coverage(self, collection: str = DEFAULT_COLLECTION) -> CorpusResponse:
        """What is ingested: the basis for telling a user "no source for that"."""
        col = self._collection(collection)
        async with col.lock:
            col.refresh()
            rows = catalog.listing(col.corpus)
            listing = CorpusResponse(data_dir=str(col.dir.root), fingerprint=col.fingerprint,
                                     ready=col.lexical is not None, problem=col.problem, documents=len(rows),
                                     chunks=col.corpus.store.count(), items=rows)
            return listing.relative_to(col.dir.root)  # no server paths in an API response

    async def document(self, doc: str, collection: str = DEFAULT_COLLECTION, refs_from: int = 0) -> dict | None:
        """One document for its web page (serve/web/): `saksi corpus show`'s report (metadata, outline, references
        in and out, near-duplicates, standing) with its references a page at a time (`pipeline.corpus.reading`).
        None: no such document (by id or citation name)."""
        col = self._collection(collection)
        async with col.lock:
            col.refresh()
            try:
                return reading.document_view(col.corpus, catalog.show(col.corpus, doc), refs_from)
            except catalog.UnknownDocument:
                return None

    async def document_text(self, doc: str, collection: str = DEFAULT_COLLECTION, chunk: str | None = None,
                            at: int | None = None) -> dict | None:
        """One window of a document's text, around the passage `chunk` or from offset `at`, with the passages and
        references in it (`pipeline.corpus.reading.text_view`). None: no such document."""
        col = self._collection(collection)
        async with col.lock:
            col.refresh()
            try:
                found = catalog.find_document(col.corpus, doc)
            except catalog.UnknownDocument:
                return None
            return reading.text_view(col.corpus, found, chunk, at)

    async def _use_embedder(self, col: _Collection) -> None:
        if self._embedder is not None and col.corpus._embedder is None:
            info = await self._embedder.info.remote()
            col.corpus.use_embedder(handle_embedder(self._embedder, info, self.runtime.ingest_embed_timeout_s,
                                                    self.profile.settings.embedder.sparse))

    async def ingest(self, files: list[tuple[str, bytes]], actor: str = LOCAL_KEY,
                     authority: str = "unknown", collection: str = DEFAULT_COLLECTION) -> IngestResponse:
        """Uploaded files into a collection (created on first use), as `actor` with uploads' authority
        at most `authority`. Each key's files live in uploads/<key>/, so no key overwrites another's;
        a rejected file is not kept (and a key's earlier version of it comes back)."""
        col = self._collection(collection, create=True)
        async with col.ingest_lock:
            folder = col.dir.uploads / (actor.split(":", 1)[-1] or "anonymous")
            written = await asyncio.to_thread(_write_uploads, folder, files)
            paths = [p for p, _ in written]
            try:
                await self._use_embedder(col)
                # parse (worker process, time limit) and embed while answers keep flowing
                items = await asyncio.to_thread(self._parse, col, paths)
                await self._embed(col, items)
                ingestor = Ingestor(col.corpus, None, actor, Upload(authority_ceiling=authority), defer_vectors=True)
                async with col.lock:  # the write: the documents' rows (their vectors wait for the swap)
                    report = await asyncio.to_thread(ingestor.ingest, paths, False, _Given(items), False)
                    due = await asyncio.to_thread(ingestor.needs_finalize, bool(report.ingested))
                if due:
                    await self._finalize(col, ingestor, report)
            except BaseException:
                await asyncio.to_thread(_settle_uploads, written, set(paths))
                raise
            rejected = {Path(e.path).resolve() for e in report.errors}
            await asyncio.to_thread(_settle_uploads, written, rejected)
            return IngestResponse.model_validate(report).relative_to(col.dir.root)

    async def _finalize(self, col: _Collection, ingestor: Ingestor, report: IngestReport) -> None:
        """What an ingest or a delete derives from the store (cross-references, status graph, near-duplicates, the
        lexical index: `Ingestor.derive`), computed with no lock while readers go on answering from the indexes as
        they were, then written and swapped in under the lock (`Ingestor.apply`), where the new passages' vectors
        go in too: no reader retrieves a passage whose references and standing are not known yet."""
        derived = await asyncio.to_thread(ingestor.derive)
        async with col.lock:
            await asyncio.to_thread(ingestor.apply, derived, report)
            col.load()

    def _parse(self, col: _Collection, paths: list[Path]) -> dict[Path, object]:
        from pipeline.ingest.isolated import IsolatedPreparation

        if col.parser is None:
            col.parser = IsolatedPreparation(self.profile_name, col.dir.root, self.runtime.parse_timeout_s,
                                             memory_mb=self.runtime.parse_memory_mb)
        return dict(zip(paths, col.parser.prepared(paths)))

    async def _embed(self, col: _Collection, items: dict[Path, object]) -> None:
        """Vectors for every prepared document's chunks, before the write (which then only upserts).
        One request adds at most `max_upload_chunks` passages: a file past the budget is skipped."""
        budget = self.runtime.max_upload_chunks
        for path, item in list(items.items()):
            if not isinstance(item, tuple):
                continue
            prepared, _ = item
            if len(prepared.chunks) > budget:
                items[path] = IngestError(str(path), f"{len(prepared.chunks)} citable passages; one upload may add at "
                                                     f"most {self.runtime.max_upload_chunks} (ingest large documents "
                                                     "on the server: `saksi ingest` or `saksi bulk-ingest`)")
                continue
            budget -= len(prepared.chunks)
            items[path] = (prepared, await embed_chunks(col.corpus, prepared.chunks))

    async def delete(self, doc_id: str, actor: str = LOCAL_KEY, collection: str = DEFAULT_COLLECTION
                     ) -> DeleteResponse | None:
        """Take a document out (None: no such document); an uploaded file goes with it."""
        col = self._collection(collection)
        async with col.ingest_lock:
            async with col.lock:  # the write
                doc = col.corpus.store.document(doc_id)
                if doc is None:
                    return None
                await self._use_embedder(col)
                ingestor = Ingestor(col.corpus, None, actor)
                await asyncio.to_thread(ingestor.delete, doc_id, False)
            await self._finalize(col, ingestor, IngestReport())
            original = Path(doc.original)
            if original.is_relative_to(col.dir.uploads.resolve()):
                original.unlink(missing_ok=True)
            return DeleteResponse(doc_id=doc_id, collection=collection, documents=len(col.corpus.store.documents()),
                                  chunks=col.corpus.store.count())


def _write_uploads(folder: Path, files: list[tuple[str, bytes]]) -> list[tuple[Path, Path | None]]:
    """Write each upload (its name is already checked: no path parts); a file this key sent before is
    kept aside until the new one is accepted."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in files:
        path = (folder / Path(name).name).resolve()
        previous = None
        if path.exists():
            previous = path.with_name(path.name + ".previous")
            os.replace(path, previous)
        path.write_bytes(data)
        written.append((path, previous))
    return written


def _settle_uploads(written: list[tuple[Path, Path | None]], rejected: set[Path]) -> None:
    """Rejected uploads are not kept (the earlier version comes back); accepted ones drop their backup."""
    for path, previous in written:
        if path in rejected:
            path.unlink(missing_ok=True)
            if previous is not None:
                os.replace(previous, path)
        elif previous is not None:
            previous.unlink(missing_ok=True)
