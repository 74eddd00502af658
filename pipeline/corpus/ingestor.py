"""Writing documents into a corpus: the one ingest loop, whoever parses and embeds.

`saksi ingest` and `/v1/ingest` prepare each changed file here and embed its new chunks with
the corpus's embedder (`LocalPreparation`); `saksi bulk-ingest` prepares and embeds on Ray
and hands over documents with their vectors (serve/bulk_ingest.py). Either way the loop is
`Ingestor.ingest`: a file whose bytes, sidecar and rules are unchanged is not parsed again; a
changed document is embedded first and then swapped into the chunk store in one transaction,
so a query sees its old version or its new one, never half; a bad file is reported and
skipped; and `finalize` brings cross-references, the status graph, near-duplicates, both lanes and the state
file along, which also completes an ingest that was killed midway.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping, Protocol, Sequence, Union

import numpy as np

from ..audit import LOCAL_KEY
from ..errors import CorpusIndexError, IngestError
from ..index import Bm25LexicalIndex
from ..index.embedding_cache import embed_passages
from ..index.store import ChunkStore, ReferenceRow, fingerprint_of
from ..keys import cap_authority
from ..ingest import expand_paths
from ..ingest.near_dup import near_duplicate_pairs
from ..ingest.prepare import DocumentPreparer, PreparedDocument
from ..ingest.source import source_hash
from .. import status
from ..references import Reference, resolve
from ..responses import IngestResponse
from ..text import embedding_text, name_keys
from ..types import Chunk, Document
from .datadir import CorpusState

if TYPE_CHECKING:
    from .corpus import Corpus

log = logging.getLogger(__name__)

EMBED_BATCH = 64  # chunks per embedding call and per Milvus upsert

Vectors = Mapping[str, tuple[Sequence[float], dict | None]]  # chunk id -> (dense vector, sparse weights or None)
Prepared = Union[tuple[PreparedDocument, Union[Vectors, None]], IngestError]


class Preparation(Protocol):
    """Where documents come from: each changed file prepared, with its vectors when they were
    computed elsewhere (None: embed the new chunks here), or the IngestError that skips it."""

    def prepared(self, files: Sequence[Path]) -> Iterator[Prepared]:
        ...


class LocalPreparation:
    """In this process, one file at a time (`saksi ingest`, `/v1/ingest`)."""

    def __init__(self, preparer: DocumentPreparer):
        self.preparer = preparer

    def prepared(self, files: Sequence[Path]) -> Iterator[Prepared]:
        for path in files:
            try:
                yield self.preparer.prepare(path), None
            except IngestError as e:
                yield e


async def embed_chunks(corpus: "Corpus", chunks: Sequence[Chunk],
                       done: Callable[[int], None] | None = None) -> Vectors:
    """The chunks' vectors with the corpus's embedder, a batch at a time, through its embedding
    cache (a text embedded before is not embedded again): `saksi ingest` and served uploads alike.
    `done` hears how many chunks each batch vectorised (a progress bar)."""
    vectors: dict[str, tuple] = {}
    for k in range(0, len(chunks), EMBED_BATCH):
        part = chunks[k:k + EMBED_BATCH]
        dense, weights = await embed_passages(corpus.embedder, [embedding_text(c) for c in part],
                                              corpus.embedding_cache, corpus.sparse)
        for j, c in enumerate(part):
            vectors[c.chunk_id] = (dense[j], weights[j] if weights is not None else None)
        if done is not None:
            done(len(part))
    return vectors


class GivenVectors(dict):
    """Vectors computed elsewhere (`saksi bulk-ingest`'s actors), by chunk id, knowing which of
    them the embedding cache supplied: the report counts those as `from_cache`, as `embed_chunks`
    counts its own hits."""

    def __init__(self, vectors: Mapping[str, tuple], from_cache: Iterable[str] = (), metered: bool = False):
        super().__init__(vectors)
        self.from_cache = frozenset(from_cache)
        self.metered = metered  # the meter heard of them as they arrived (bulk-ingest): not told again on writing


class IngestMeter(Protocol):
    """What a progress bar hears of an ingest (pipeline/progress.py `IngestBar`)."""

    def begin(self, sizes: Sequence[int]) -> None:
        """The changed files' sizes in bytes, in the order they will be written."""

    def embedding(self, doc_id: str, chunks: int) -> None:
        """A document's `chunks` new chunks are being vectorised (`doc_id` "" for a repair)."""

    def embedded(self, chunks: int) -> None:
        """`chunks` more chunks have their vectors."""

    def file_done(self) -> None:
        """A changed file is written, or skipped."""


class SilentMeter:
    """An IngestMeter that hears nothing (no bar); a meter that cares about one event overrides only that."""

    def begin(self, sizes: Sequence[int]) -> None:
        pass

    def embedding(self, doc_id: str, chunks: int) -> None:
        pass

    def embedded(self, chunks: int) -> None:
        pass

    def file_done(self) -> None:
        pass


@dataclass(frozen=True)
class Upload:
    """Documents arriving through the API with a key, not from the operator's own files.

    Their authority is at most `authority_ceiling` (the key's; what the file declared is kept in
    the manifest as `declared_authority`); an upload by a key that may assert nothing gets no publication date
    either (`declared_published` in the manifest), so it cannot buy freshness in the ranking; and they may not take a document id, file name or
    citation name that another document in the collection holds, unless the same key is
    replacing its own upload: a stranger's file cannot pass for, or replace, a real regulation.
    """

    authority_ceiling: str = "unknown"


def _size(path: Path) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def tombstones(audit) -> list[dict]:
    """The documents deleted from this collection whose id and citation name are still reserved: every `delete` entry
    of the audit log not followed by a `release` of the same id. Each: doc_id, cite_as, at, key."""
    held: dict[str, dict] = {}
    for entry in audit.entries():
        data = entry.get("data") or {}
        if data.get("collection", audit.collection) != audit.collection or "doc_id" not in data:
            continue
        if entry.get("event") == "delete":
            held[data["doc_id"]] = {"doc_id": data["doc_id"], "cite_as": data.get("cite_as"), "at": entry.get("at"),
                                    "key": entry.get("key")}
        elif entry.get("event") == "release":
            held.pop(data["doc_id"], None)
    return list(held.values())


def _alike(a: str, b: str) -> bool:
    """Two citation names a reader could take for one another (`text.name_keys`): case, spacing, punctuation,
    invisible characters and look-alike letters and digits aside, in any script ("РМК 7∕2025" and "PMl 7-2025" are
    "PMI 7/2025")."""
    return bool(name_keys(a) & name_keys(b))


@dataclass
class IngestReport:
    files: int = 0
    ingested: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    errors: list[IngestError] = field(default_factory=list)
    chunks_written: int = 0
    embedded: int = 0
    from_cache: int = 0  # of `embedded`, vectors the embedding cache held (no model call)
    removed_from_dense: int = 0
    total_documents: int = 0
    total_chunks: int = 0
    needs_ocr: dict[str, list[int]] = field(default_factory=dict)  # file -> pages without a text layer (not read)

    def as_dict(self) -> dict:
        """The documented JSON (`saksi ingest --json`, `POST /v1/ingest`): pipeline/responses.py."""
        return IngestResponse.model_validate(self).model_dump(mode="json")


@dataclass
class Derived:
    """What a finalize computes from the store without writing anything: the cross-references' resolutions, the
    status graph, the near-duplicate pairs, and a lexical index built beside the live one (`lexical_dir`)."""
    resolutions: list
    edges: list
    near_duplicates: list
    ids: list[str]
    fingerprint: str
    lexical_dir: Path


class Ingestor:
    """Writes documents into a corpus, then brings everything derived from the store along (`finalize`).

    A server that keeps answering during an ingest splits the two (serve/deployments.py): `ingest(…, finalize=False)`
    and `delete(…, finalize=False)` are the write, under the collection's lock; `derive()` reads the store on a
    connection of its own and computes the derived state, with no lock; `apply()` writes it and moves the new
    lexical index into place, under the lock again. With `defer_vectors` the new passages' vectors wait for
    `apply()`, so no reader can retrieve a passage whose cross-references and standing are not yet known."""

    def __init__(self, corpus: "Corpus", progress: Callable[[str], None] | None = None, actor: str = LOCAL_KEY,
                 upload: Upload | None = None, meter: IngestMeter | None = None, defer_vectors: bool = False):
        self.corpus = corpus
        self.defer_vectors = defer_vectors
        self._deferred: list[tuple[list[Chunk], Vectors | None]] = []  # vectors written by apply()
        self.say = progress or (lambda msg: log.info(msg))
        self.actor = actor    # who asked for it: the audit log and every document's provenance record it
        self.upload = upload  # None: the operator's own files (no ceiling, no name guard)
        self.meter = meter or SilentMeter()  # a progress bar (`saksi ingest` on a terminal)
        self._tombstones: list[dict] | None = None  # the deleted ids and names an upload may not take

    def ingest(self, paths: Sequence[Path], rebuild: bool = False,
               preparation: Preparation | None = None, finalize: bool = True) -> IngestReport:
        """Ingest files and directories; a bad file is reported and skipped, the rest goes in. `finalize=False`:
        the write only (the caller runs `derive()` and `apply()`)."""
        corpus = self.corpus
        if rebuild:
            corpus.clear()
        files, problems = expand_paths([Path(p) for p in paths])
        report = IngestReport(files=len(files), errors=list(problems))
        hits_before = corpus.embedding_cache.hits
        owners: dict[str, str] = {}  # document id -> the file that holds it, in this ingest and the corpus
        changed = []
        for path in files:
            try:
                doc_id = self.unchanged(path)
            except IngestError as e:
                self._skip(report, e)
                continue
            if doc_id is None:
                changed.append(path)
            else:
                owners[doc_id] = str(path.resolve())
                report.unchanged.append(str(path.resolve()))
        preparation = preparation or LocalPreparation(DocumentPreparer(corpus.profile, corpus.data_dir))
        self.meter.begin([_size(p) for p in changed])
        for item in preparation.prepared(changed):
            try:
                if isinstance(item, IngestError):
                    raise item
                prepared, vectors = item
                prepared = self._stamp(prepared)
                if self.upload is not None:
                    self._guard_names(prepared.document)
                self._reserve_id(prepared.document, owners)
                self._commit(prepared, vectors)
            except IngestError as e:
                self._skip(report, e)
                self.meter.file_done()
                continue
            self._committed(report, prepared)
            self.meter.file_done()
        if finalize:
            self.finalize(report, force=bool(report.ingested))
        report.from_cache = corpus.embedding_cache.hits - hits_before
        report.total_documents = len(corpus.store.documents())
        report.total_chunks = corpus.store.count()
        corpus.audit.append("ingest", key=self.actor, files=report.files, rebuild=rebuild,
                                         ingested=report.ingested, unchanged=len(report.unchanged),
                                         skipped=[f"{e.path}: {e.reason}" for e in report.errors],
                                         documents=report.total_documents, chunks=report.total_chunks)
        return report

    def delete(self, doc_id: str, finalize: bool = True) -> bool:
        """Remove a document (one store transaction), then bring the indexes and references along (`finalize=False`:
        the caller runs `derive()` and `apply()`)."""
        state = self.corpus.dir.state()
        if state is not None:  # refuse before touching anything: the indexes must stay one embedder's
            self.corpus.require_embedder(state)
        doc = self.corpus.store.document(doc_id)
        # the entry, written with the deletion, is the id's and the citation name's tombstone: an upload may not
        # take them until an admin releases them (`saksi corpus release`)
        entry = ("delete", self.actor, {"doc_id": doc_id, "cite_as": doc.cite_as if doc else None,
                                        "file": Path(doc.original).name if doc else None})
        if doc is None or not self.corpus.store.delete_document(doc_id, audit=entry):
            return False
        self.flush_audit()
        if finalize:
            self.finalize(IngestReport(), force=True)
        return True

    def flush_audit(self, recovered: bool = False) -> int:
        """Move the audit entries written with their changes into the audit log (`recovered`: found on opening,
        left by a process that stopped between the two); how many."""
        store, n = self.corpus.store, 0
        for entry_id, event, key, data in store.pending_audit():
            self.corpus.audit.append(event, key=key, **data, **({"recovered": True} if recovered else {}))
            store.audit_done(entry_id)
            n += 1
        return n

    def recover(self) -> str | None:
        """Complete what a process that stopped mid-ingest left (the store written, the indexes or the audit log
        not): the audit entries moved to the log, the indexes brought to the store; then checked as `Corpus.check`
        checks, so a collection wrong for another reason (a damaged state file, documents ingested under other
        rules) raises CorpusIndexError as it would. What was done, or None."""
        corpus = self.corpus
        entries = self.flush_audit(recovered=True)
        moved = f"{entries} audit entr{'y' if entries == 1 else 'ies'} recovered" if entries else None
        try:
            corpus.check()
            return moved
        except CorpusIndexError:
            # a damaged state file is not an interrupted ingest's doing (reading it raises its own error), nor are
            # documents ingested under other rules
            if corpus.dir.state() is None or corpus.store.stale_documents(corpus.rules):
                raise
        self.finalize(IngestReport(), force=True)
        corpus.check()
        return (f"an interrupted ingest completed: the indexes rebuilt from the store ({corpus.store.count()} chunks)"
                + (f", {moved}" if moved else ""))

    def unchanged(self, path: Path) -> str | None:
        """The document id when this file's bytes, sidecar and rules are what the corpus holds:
        incremental ingest skips it without parsing. IngestError when it cannot be read."""
        known = self.corpus.store.document_by_path(str(Path(path).resolve()))
        if known and known[1] == source_hash(Path(path)) and known[2] == self.corpus.rules:
            return known[0].doc_id
        return None

    def _stamp(self, prepared: PreparedDocument) -> PreparedDocument:
        """Provenance on the document and every chunk (citations show it): who, when, and for an
        upload the authority its key may assert."""
        doc = prepared.document
        authority = doc.authority
        if self.upload is not None:
            authority = cap_authority(doc.authority, self.upload.authority_ceiling)
            if authority != doc.authority:
                prepared.manifest["declared_authority"] = doc.authority
        when = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        who = {"uploaded_by": self.actor, "uploaded_at": when, "authority": authority}
        if self.upload is not None and self.upload.authority_ceiling == "unknown" and doc.published:
            # a date is a claim like authority: one from a key that may assert nothing would buy its
            # upload the reranker's freshness over the regulation it imitates (kept in the manifest)
            prepared.manifest["declared_published"] = doc.published
            who["published"] = None
        prepared.manifest.update(uploaded_by=self.actor, uploaded_at=when)
        return dc_replace(prepared, document=dc_replace(doc, **who),
                          chunks=[dc_replace(c, **who) for c in prepared.chunks])

    def _guard_names(self, doc: Document) -> None:
        """An upload may not take another document's id, file name or citation name (its own: yes)."""
        name, cite = Path(doc.original).name, doc.cite_as
        for other, _ in self.corpus.store.documents():
            if other.doc_id == doc.doc_id and other.original == doc.original and other.uploaded_by == self.actor:
                continue  # the same key replacing its own upload
            held = ("document id" if _alike(other.doc_id, doc.doc_id) else
                    "file name" if Path(other.original).name == name else
                    "citation name" if cite and other.cite_as and _alike(other.cite_as, cite) else None)
            if held:
                what = {"document id": doc.doc_id, "file name": name, "citation name": doc.cite_as}[held]
                raise IngestError(doc.original, f"the {held} {what!r} is already held by document {other.doc_id!r}; "
                                                "an upload may not take another document's id, file name or "
                                                "citation name (rename it, or give it its own `id:`/`cite_as:`)")
        if self._tombstones is None:  # read from the audit log once per ingest, not once per uploaded file
            self._tombstones = tombstones(self.corpus.audit)
        for t in self._tombstones:
            held = ("document id" if _alike(t["doc_id"], doc.doc_id) else
                    "citation name" if cite and t.get("cite_as") and _alike(t["cite_as"], cite) else None)
            if held:
                what = doc.doc_id if held == "document id" else doc.cite_as
                raise IngestError(doc.original, f"the {held} {what!r} belonged to document {t['doc_id']!r}, deleted "
                                                f"{t['at']} by {t['key']}: it stays reserved until an admin releases "
                                                f"it (`saksi corpus release {t['doc_id']}`)")

    def _reserve_id(self, doc: Document, owners: dict[str, str]) -> None:
        """One file per document id, in this ingest and in the corpus."""
        owner = owners.get(doc.doc_id)
        if owner and owner != doc.original:
            raise IngestError(doc.original, f"document id {doc.doc_id!r} is also used by {owner} in this "
                                        "ingest; give one of them a distinct `id:` in its front matter or sidecar")
        existing = self.corpus.store.document(doc.doc_id)
        if existing and existing.original != doc.original:
            raise IngestError(doc.original, f"document id {doc.doc_id!r} already belongs to {existing.original}; "
                                        "give this file a distinct `id:` in its front matter or sidecar")
        owners[doc.doc_id] = doc.original

    def _commit(self, prepared: PreparedDocument, vectors: Vectors | None) -> None:
        """Write one prepared document: rendition file, vectors for its new chunks, then the store swap."""
        corpus, doc = self.corpus, prepared.document
        rendition = Path(doc.rendition)
        rendition.parent.mkdir(parents=True, exist_ok=True)
        if not rendition.exists():
            tmp = rendition.with_suffix(".tmp")
            tmp.write_text(prepared.text, encoding="utf-8")
            os.replace(tmp, rendition)
        before = corpus.store.document(doc.doc_id)
        if before is not None and before.title == doc.title:
            present = corpus.dense.present([c.chunk_id for c in prepared.chunks])
        else:  # the id hashes location and text; embedding_text adds the title: a new title, new vectors
            present = set()
        todo = [c for c in prepared.chunks if c.chunk_id not in present]
        if not getattr(vectors, "metered", False):
            self.meter.embedding(doc.doc_id, len(todo))
        if self.defer_vectors:  # written by apply(), with everything a reader needs to cite them
            self._deferred.append((todo, vectors))
            prepared.manifest["embedded"] = len(todo)
        else:
            prepared.manifest["embedded"] = self._write_vectors(todo, vectors)
        corpus.store.replace_document(doc, prepared.chunks, prepared.tokens, corpus.rules, prepared.source_hash,
                                      prepared.manifest, prepared.references,
                                      audit=("ingest_document", self.actor,
                                             {"doc_id": doc.doc_id, "file": Path(doc.original).name,
                                              "source_hash": prepared.source_hash, "chunks": len(prepared.chunks)}))
        self.flush_audit()

    def _write_vectors(self, chunks: Sequence[Chunk], given: Vectors | None = None) -> int:
        """Upsert the chunks' vectors, `given` or embedded here (`embed_chunks`), a batch at a time; how many."""
        corpus = self.corpus
        computed_elsewhere = given is not None
        if given is None:
            given = asyncio.run(embed_chunks(corpus, chunks, done=self.meter.embedded))
        else:
            known = getattr(given, "from_cache", frozenset())  # counted as embed_passages counts its own
            hits = sum(c.chunk_id in known for c in chunks)
            corpus.embedding_cache.hits += hits
            corpus.embedding_cache.misses += len(chunks) - hits
        for k in range(0, len(chunks), EMBED_BATCH):
            part = chunks[k:k + EMBED_BATCH]
            dense = np.asarray([given[c.chunk_id][0] for c in part], dtype=np.float32)
            weights = [given[c.chunk_id][1] for c in part] if corpus.sparse else None
            corpus.dense.upsert([c.chunk_id for c in part], [c.doc_id for c in part], dense, weights)
            if computed_elsewhere and not getattr(given, "metered", False):
                self.meter.embedded(len(part))
        return len(chunks)

    def _committed(self, report: IngestReport, prepared: PreparedDocument) -> None:
        """Count one written document and say so (pages that need OCR included)."""
        doc = prepared.document
        report.ingested.append(doc.original)
        report.chunks_written += len(prepared.chunks)
        report.embedded += prepared.manifest.get("embedded", 0)
        ocr = ""
        if doc.pages_without_text:
            report.needs_ocr[doc.original] = list(doc.pages_without_text)
            ocr = f"; page(s) {', '.join(map(str, doc.pages_without_text))} have no text layer (need OCR, not read)"
        self.say(f"  {doc.doc_id}: {len(prepared.chunks)} chunks ({doc.original}){ocr}")

    def _skip(self, report: IngestReport, e: IngestError) -> None:
        report.errors.append(e)
        self.say(f"  skipped {e.path}: {e.reason}")

    # -- after the documents: everything derived from the store ----------------------------------

    def finalize(self, report: IngestReport, force: bool = False) -> None:
        """Cross-references, the status graph (pipeline/status.py), near-duplicates, both lanes and the state file,
        from the store.

        Runs when something changed, whenever the indexes disagree with the store (an
        ingest was interrupted), so running the ingest again completes it, and when the status graph was
        read by other rules (`status.GRAPH_VERSION`), so running it again after an upgrade re-reads the graph.
        """
        if self.needs_finalize(force):
            self.apply(self.derive(self.corpus.store), report)

    def needs_finalize(self, force: bool = False) -> bool:
        """Whether the derived state must be brought along: something changed (`force`), the indexes disagree
        with the store (an ingest was interrupted), or the status graph was read by other rules."""
        corpus = self.corpus
        self.flush_audit(recovered=True)  # what a process that stopped between a change and its entry left
        if (not force and corpus.exists() and corpus.consistent() and not corpus.store.status_stale
                and corpus.store.status_version() == status.GRAPH_VERSION):
            if not corpus.dir.about_file.exists():  # a collection ingested before collections were described
                self._describe()
            return False
        return True

    def derive(self, store: ChunkStore | None = None) -> Derived:
        """Everything derived from the store, computed and nothing written (the new lexical index is built beside
        the live one). `store`: None opens a read-only connection of its own, so a server's readers, on the
        corpus's connection, may go on meanwhile."""
        own = store is None
        if own:
            store = ChunkStore(self.corpus.dir.root, read_only=True)
        try:
            documents = [d for d, _ in store.documents()]
            resolutions = self._resolutions(store, documents)
            resolved = {(r[0], r[1]): dict(zip(("status", "target_doc", "target_chunk", "target_label", "reason"),
                                               r[2:])) for r in resolutions}

            def references_of(doc_id: str) -> list[ReferenceRow]:  # as the store will hold them once `apply` writes them
                return [dc_replace(r, **resolved.get((r.chunk_id, r.ordinal), {})) for r in store.references(doc_id)]

            edges = status.graph(iter(documents), store.doc_chunks, references_of)
            pairs = near_duplicate_pairs(c for d in documents for c in store.doc_chunks(d.doc_id))
            ids, tokens = store.all_tokens()
        finally:
            if own:
                store.close()
        fingerprint = fingerprint_of(ids)
        lexical_dir = self.corpus.dir.bm25.with_name(self.corpus.dir.bm25.name + ".next")
        Bm25LexicalIndex.build(lexical_dir, ids, tokens, fingerprint)
        return Derived(resolutions, edges, pairs, ids, fingerprint, lexical_dir)

    def apply(self, derived: Derived, report: IngestReport) -> None:
        """Write what `derive()` computed: resolutions, status graph and near-duplicates (each one transaction),
        both lanes brought to the store's chunk set (the deferred vectors first), the new lexical index moved into
        place, then the state file (what a reader's reload waits for)."""
        store = self.corpus.store
        store.set_resolutions(derived.resolutions)
        store.set_status_edges(derived.edges, status.GRAPH_VERSION)
        store.set_near_duplicates(derived.near_duplicates)
        self._sync_indexes(report, derived)
        self._remove_unused_renditions()
        self._describe()

    def _describe(self) -> None:
        """Whether every document of the collection is an illustration (its `about.json`, for the ask page)."""
        documents = [d for d, _ in self.corpus.store.documents()]
        self.corpus.dir.write_about(illustrative=bool(documents) and all(d.illustrative for d in documents))

    @staticmethod
    def _resolutions(store: ChunkStore, documents: list[Document]) -> list[tuple]:
        """Every stored cross-reference resolved against the documents: (chunk, ordinal, status, target document,
        target chunk, label, reason)."""
        cache: dict[str, list[Chunk]] = {}

        def chunks_of(doc_id: str) -> list[Chunk]:
            if doc_id not in cache:
                cache[doc_id] = store.doc_chunks(doc_id)
            return cache[doc_id]

        references = store.references()
        by_id = store.get(r.chunk_id for r in references)
        rows = []
        for ref in references:
            here = by_id.get(ref.chunk_id)
            if here is None:
                continue
            r = resolve(Reference(**ref.reference), here, documents, chunks_of)
            rows.append((ref.chunk_id, ref.ordinal, r.status, r.doc_id, r.chunk_id, r.label, r.reason))
        return rows

    def _sync_indexes(self, report: IngestReport, derived: Derived) -> None:
        """Bring both lanes to exactly the store's chunk set (also repairs an interrupted ingest)."""
        corpus = self.corpus
        for chunks, vectors in self._deferred:
            self._write_vectors(chunks, vectors)
        self._deferred = []
        store_ids = corpus.store.ids()
        present = corpus.dense.all_ids()
        stale = present - set(store_ids)
        if stale:
            corpus.dense.delete(sorted(stale))
            report.removed_from_dense = len(stale)
        todo = [cid for cid in store_ids if cid not in present]
        if todo:
            self.say(f"  embedding {len(todo)} chunks with {corpus.embedder.name} …")
            self.meter.embedding("", len(todo))
            chunks = corpus.store.get(todo)
            report.embedded += self._write_vectors([chunks[cid] for cid in todo])
        Bm25LexicalIndex.install(derived.lexical_dir, corpus.dir.bm25)
        corpus.dir.write_state(CorpusState(fingerprint=derived.fingerprint, chunks=len(derived.ids),
                                           embedder=corpus.embedder_name, dim=corpus.vector_dim(),
                                           profile=corpus.profile.settings.profile))

    def _remove_unused_renditions(self) -> None:
        used = {Path(d.rendition).name for d, _ in self.corpus.store.documents() if d.rendition}
        folder = self.corpus.dir.texts
        if folder.is_dir():
            for f in folder.iterdir():
                if f.name not in used:
                    f.unlink(missing_ok=True)
