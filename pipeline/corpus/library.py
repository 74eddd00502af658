"""The collections one serving process holds open: each one's corpus and indexes, the locks that order
its readers and writers, its uploads, and the reads a page or an API call makes of it.

The Retriever deployment (serve/deployments.py) hosts a `Library`; this module knows nothing of Ray,
so all of it is tested in process. Where the models run is the host's business: the library is
given factories for the query embedder, the reranker and the embedder an upload uses.

Locking: each collection has a read lock (`lock`) held for every index lookup and for an ingest's two
short writes (the documents' rows, then the swap of the derived state), and an `ingest_lock` that keeps
two ingests or deletes from interleaving. Parsing, embedding and deriving run with the read lock free,
so answers keep flowing from the version being replaced.
"""
from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Awaitable, Callable, NamedTuple, Sequence

from .. import catalog
from ..analysis import query_analyzer
from ..audit import LOCAL_KEY
from ..config import Profile
from ..context import AttemptContext, ContextBuilder, ContextRequest
from ..errors import IngestError
from ..index import Bm25LexicalIndex, StoreChunkSource
from ..protocols import Embedder, Reranker
from ..responses import CorpusResponse, DeleteResponse, IngestResponse
from ..types import Document
from . import reading
from .corpus import Corpus
from .datadir import DEFAULT_COLLECTION, DataDir
from .ingestor import IngestReport, Ingestor, Upload, embed_chunks

log = logging.getLogger(__name__)

Factory = Callable[[], Awaitable[object]]


class ServedCollection:
    """One collection as a serving process holds it: its corpus, its lexical index, its locks."""

    def __init__(self, directory: DataDir, profile: Profile):
        self.dir = directory
        self.corpus = Corpus(directory, profile)
        self.lock = asyncio.Lock()
        self.ingest_lock = asyncio.Lock()
        self.lexical: Bm25LexicalIndex | None = None
        self.fingerprint: str | None = None
        self.problem: str | None = None
        self.chunks: StoreChunkSource | None = None
        self.parser = None  # the parsing worker (IsolatedPreparation), started by the first upload
        self.builder: ContextBuilder | None = None  # reads through `Locked` views, so it outlives reloads
        self.load()

    def load(self) -> None:
        """Load the indexes if the corpus is consistent; otherwise remember why not (readiness says it)."""
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

    # what the `Locked` views read: each checks the collection is loaded first
    def dense_index(self):
        self.need()
        return self.corpus.dense

    def chunk_source(self) -> StoreChunkSource:
        self.need()
        return self.chunks


class Locked:
    """A part of a collection as the context builder reads it: every call under the collection's
    lock, on whatever is loaded at that moment (an ingest may reload between two calls). `part` picks
    the object from the collection; each of its async methods is then called through here."""

    def __init__(self, col: ServedCollection, part: Callable[[ServedCollection], object]):
        self._col, self._part = col, part

    def __getattr__(self, method: str):
        async def call(*args, **kwargs):
            async with self._col.lock:
                return await getattr(self._part(self._col), method)(*args, **kwargs)
        call.__name__ = method
        return call


class Indexes(NamedTuple):
    dense: Locked
    lexical: Locked
    chunks: Locked
    sparse: Locked | None


def indexes(col: ServedCollection, sparse: bool) -> Indexes:
    """The collection's indexes as this process reads them, each lookup under its lock."""
    dense = Locked(col, ServedCollection.dense_index)
    return Indexes(dense, Locked(col, ServedCollection.need), Locked(col, ServedCollection.chunk_source),
                   dense if sparse else None)


class Library:
    """Every collection of a data directory that this process serves, opened on first use.

    `query_embedder` and `reranker` build the models a question's context uses (once, on the first
    question); `upload_embedder` the embedder an upload's passages go through (None: the corpus's own)."""

    def __init__(self, profile: Profile, profile_name: str, data_dir: DataDir, *, query_embedder: Factory,
                 reranker: Factory, upload_embedder: Callable[[], Awaitable[Embedder | None]] | None = None,
                 parse_timeout_s: float = 20, parse_memory_mb: int | None = 1024, max_upload_chunks: int = 300):
        self.profile, self.profile_name, self.data_dir = profile, profile_name, data_dir
        self.parse_timeout_s, self.parse_memory_mb = parse_timeout_s, parse_memory_mb
        self.max_upload_chunks = max_upload_chunks
        self._make_query_embedder, self._make_reranker = query_embedder, reranker
        self._make_upload_embedder = upload_embedder
        self._query_embedder: Embedder | None = None
        self._reranker: Reranker | None = None
        self._building = asyncio.Lock()
        self._collections: dict[str, ServedCollection] = {}
        self.collection(DEFAULT_COLLECTION)

    @classmethod
    def local(cls, profile_name: str, data_dir: Path | str, **limits) -> "Library":
        """A library whose models all run in this process (the tests, a tool): the profile's own embedder and
        reranker. `limits`: parse_timeout_s, parse_memory_mb, max_upload_chunks (serve passes its runtime's)."""
        from ..backends import make_embedder, make_reranker
        from ..config import load_profile

        profile = load_profile(profile_name)

        async def embedder():
            return make_embedder(profile)

        async def reranker():
            return make_reranker(profile, query_analyzer(profile))

        return cls(profile, profile_name, DataDir(data_dir), query_embedder=embedder, reranker=reranker, **limits)

    def collection(self, name: str, create: bool = False) -> ServedCollection:
        """The served collection `name` (UnknownCollectionError when it does not exist and `create` is false)."""
        if name not in self._collections:
            directory = self.data_dir.collection(name) if create else self.data_dir.existing(name)
            self._collections[name] = ServedCollection(directory, self.profile)
        return self._collections[name]

    @property
    def corpus(self) -> Corpus:
        """The default collection's corpus (what a single-collection caller reads)."""
        return self.collection(DEFAULT_COLLECTION).corpus

    async def ready(self) -> dict:
        """Ready when a collection is loaded; a damaged one is out of service (named in `problem`, its questions
        503) while the others serve; `chunks` counts those that serve."""
        ready, problems, chunks = [], [], 0
        for name in self.data_dir.with_corpus() or [DEFAULT_COLLECTION]:  # none: the default says why not
            col = self.collection(name)
            async with col.lock:
                col.refresh()  # picks up an ingest made elsewhere
                if col.lexical is None:
                    problems.append(col.problem if name == DEFAULT_COLLECTION else f"{name}: {col.problem}")
                else:
                    ready.append(name)
                    chunks += col.corpus.store.count()
        return {"ready": bool(ready), "problem": "; ".join(problems) or None, "chunks": chunks}

    # -- questions -------------------------------------------------------------------------------

    async def context(self, request: ContextRequest, collection: str = DEFAULT_COLLECTION) -> AttemptContext:
        """One attempt's whole context (plan, retrieve, rerank, references, paragraphs). Each index lookup takes
        the collection's lock; the query's embedding and the rerank do not, so concurrent questions meet in
        their batches."""
        return await (await self.builder(collection)).context(request)

    async def model_names(self, collection: str = DEFAULT_COLLECTION) -> dict[str, str]:
        """The query embedder's and the reranker's names, wherever they run (the traces record them)."""
        return dict((await self.builder(collection)).model_names)

    async def builder(self, collection: str) -> ContextBuilder:
        col = self.collection(collection)
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

    def indexes(self, collection: str = DEFAULT_COLLECTION) -> Indexes:
        return indexes(self.collection(collection), self.profile.settings.embedder.sparse)

    # -- reading ---------------------------------------------------------------------------------

    async def documents(self, collection: str = DEFAULT_COLLECTION) -> list[Document]:
        return await Locked(self.collection(collection), ServedCollection.chunk_source).documents()

    async def coverage(self, collection: str = DEFAULT_COLLECTION) -> CorpusResponse:
        """What is ingested: the basis for telling a user "no source for that"."""
        col = self.collection(collection)
        async with col.lock:
            col.refresh()
            rows = catalog.listing(col.corpus)
            listing = CorpusResponse(data_dir=str(col.dir.root), fingerprint=col.fingerprint,
                                     ready=col.lexical is not None, problem=col.problem, documents=len(rows),
                                     chunks=col.corpus.store.count(), items=rows)
            return listing.relative_to(col.dir.root)  # no server paths in an API response

    async def document(self, doc: str, collection: str = DEFAULT_COLLECTION, refs_from: int = 0) -> dict | None:
        """One document for its web page: `saksi corpus show`'s report (metadata, outline, references in and out,
        near-duplicates, standing) with its references a page at a time (`reading.document_view`). None: no such
        document (by id or citation name)."""
        col = self.collection(collection)
        async with col.lock:
            col.refresh()
            try:
                return reading.document_view(col.corpus, catalog.show(col.corpus, doc), refs_from)
            except catalog.UnknownDocument:
                return None

    async def document_text(self, doc: str, collection: str = DEFAULT_COLLECTION, chunk: str | None = None,
                            at: int | None = None) -> dict | None:
        """One window of a document's text, around the passage `chunk` or from offset `at`, with the passages and
        references in it (`reading.text_view`). None: no such document."""
        col = self.collection(collection)
        async with col.lock:
            col.refresh()
            try:
                found = catalog.find_document(col.corpus, doc)
            except catalog.UnknownDocument:
                return None
            return reading.text_view(col.corpus, found, chunk, at)

    # -- writing ---------------------------------------------------------------------------------

    async def ingest(self, files: list[tuple[str, bytes]], actor: str = LOCAL_KEY,
                     authority: str = "unknown", collection: str = DEFAULT_COLLECTION) -> IngestResponse:
        """Uploaded files into a collection (created on first use), as `actor` with uploads' authority
        at most `authority`. Each key's files live in uploads/<key>/, so no key overwrites another's;
        a rejected file is not kept (and a key's earlier version of it comes back)."""
        col = self.collection(collection, create=True)
        async with col.ingest_lock:
            folder = col.dir.uploads / (actor.split(":", 1)[-1] or "anonymous")
            staged = await asyncio.to_thread(stage_uploads, folder, files)
            paths = [p for p, _ in staged]
            try:
                await self._use_upload_embedder(col)
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
                # what the store holds stays (its rows were written: the original must still be there to download, and
                # the next start completes the swap: Ingestor.recover); anything else staged here goes
                held = await asyncio.to_thread(_held_originals, col)
                await asyncio.to_thread(settle_uploads, staged, {p for p in paths if p not in held})
                raise
            rejected = {Path(e.path).resolve() for e in report.errors}
            await asyncio.to_thread(settle_uploads, staged, rejected)
            return IngestResponse.model_validate(report).relative_to(col.dir.root)

    async def delete(self, doc_id: str, actor: str = LOCAL_KEY, collection: str = DEFAULT_COLLECTION
                     ) -> DeleteResponse | None:
        """Take a document out (None: no such document); an uploaded file goes with it."""
        col = self.collection(collection)
        async with col.ingest_lock:
            async with col.lock:  # the write
                doc = col.corpus.store.document(doc_id)
                if doc is None:
                    return None
                await self._use_upload_embedder(col)
                ingestor = Ingestor(col.corpus, None, actor)
                await asyncio.to_thread(ingestor.delete, doc_id, False)
            await self._finalize(col, ingestor, IngestReport())
            original = Path(doc.original)
            if original.is_relative_to(col.dir.uploads.resolve()):
                original.unlink(missing_ok=True)
            return DeleteResponse(doc_id=doc_id, collection=collection, documents=len(col.corpus.store.documents()),
                                  chunks=col.corpus.store.count())

    async def _finalize(self, col: ServedCollection, ingestor: Ingestor, report: IngestReport) -> None:
        """What an ingest or a delete derives from the store (cross-references, status graph, near-duplicates, the
        lexical index: `Ingestor.derive`), computed with no lock while readers go on answering from the indexes as
        they were, then written and swapped in under the lock (`Ingestor.apply`), where the new passages' vectors
        go in too: no reader retrieves a passage whose references and standing are not known yet."""
        derived = await asyncio.to_thread(ingestor.derive)
        async with col.lock:
            await asyncio.to_thread(ingestor.apply, derived, report)
            col.load()

    async def _use_upload_embedder(self, col: ServedCollection) -> None:
        if self._make_upload_embedder is not None and col.corpus._embedder is None:
            embedder = await self._make_upload_embedder()
            if embedder is not None:
                col.corpus.use_embedder(embedder)

    def _parse(self, col: ServedCollection, paths: list[Path]) -> dict[Path, object]:
        from ..ingest.isolated import IsolatedPreparation

        if col.parser is None:
            col.parser = IsolatedPreparation(self.profile_name, col.dir.root, self.parse_timeout_s,
                                             memory_mb=self.parse_memory_mb)
        return dict(zip(paths, col.parser.prepared(paths)))

    async def _embed(self, col: ServedCollection, items: dict[Path, object]) -> None:
        """Vectors for every prepared document's chunks, before the write (which then only upserts).
        One request adds at most `max_upload_chunks` passages: a file past the budget is skipped."""
        budget = self.max_upload_chunks
        for path, item in list(items.items()):
            if not isinstance(item, tuple):
                continue
            prepared, _ = item
            if len(prepared.chunks) > budget:
                items[path] = IngestError(str(path), f"{len(prepared.chunks)} citable passages; one upload may add at "
                                                     f"most {self.max_upload_chunks} (ingest large documents "
                                                     "on the server: `saksi ingest` or `saksi bulk-ingest`)")
                continue
            budget -= len(prepared.chunks)
            items[path] = (prepared, await embed_chunks(col.corpus, prepared.chunks))


class _Given:
    """A Preparation of documents already parsed and embedded (off the read path): the Ingestor asks
    for the files it found changed and gets them, in order."""

    def __init__(self, items: dict[Path, object]):
        self.items = {Path(p).resolve(): item for p, item in items.items()}

    def prepared(self, files: Sequence[Path]):
        for path in files:
            yield self.items[Path(path).resolve()]


def _held_originals(col: ServedCollection) -> set[Path]:
    """The files the collection's documents were ingested from, as the store holds them now."""
    return {Path(d.original).resolve() for d, _ in col.corpus.store.documents()}


def stage_uploads(folder: Path, files: list[tuple[str, bytes]]) -> list[tuple[Path, Path | None]]:
    """Write each upload (its name is already checked: no path parts); a file this key sent before is
    kept aside until the new one is accepted."""
    folder.mkdir(parents=True, exist_ok=True)
    staged = []
    for name, data in files:
        path = (folder / Path(name).name).resolve()
        previous = None
        if path.exists():
            previous = path.with_name(path.name + ".previous")
            os.replace(path, previous)
        path.write_bytes(data)
        staged.append((path, previous))
    return staged


def settle_uploads(staged: list[tuple[Path, Path | None]], rejected: set[Path]) -> None:
    """Rejected uploads are not kept (the earlier version comes back); accepted ones drop their backup."""
    for path, previous in staged:
        if path in rejected:
            path.unlink(missing_ok=True)
            if previous is not None:
                os.replace(previous, path)
        elif previous is not None:
            previous.unlink(missing_ok=True)
