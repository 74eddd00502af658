"""A corpus in a data directory: the chunk store and both indexes, kept consistent.

Layout of a data directory:

    chunks.sqlite3   canonical chunks and documents (what both lanes are written from): the manifest,
                     cross-references and near-duplicate pairs
    texts/           each document's rendition (its cleaned text), named by content; chunks slice it
    milvus.db        dense lane (Milvus Lite; or a Milvus server: index.milvus_uri / $SAKSI_MILVUS_URI)
    bm25/            lexical lane (bm25s) + its chunk ids and fingerprint
    state.json       fingerprint of the chunk set both lanes were last written from
    traces/          one JSON trace per question asked
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .analysis import QueryAnalyzer, build_analyzers
from .backends import embedder_name, make_embedder, make_generator, make_judge, make_reranker
from .config import Profile
from .errors import CorpusIndexError, IngestError
from .index import Bm25LexicalIndex, ChunkStore, MilvusDenseIndex, StoreChunkSource, embedding_text
from .index.store import fingerprint_of
from .ingest import expand_paths
from .ingest.near_dup import near_duplicate_pairs
from .ingest.prepare import TEXTS_DIR, DocumentPreparer, PreparedDocument
from .ingest.reader import source_hash
from .ingest.xrefs import Reference, resolve
from .orchestrator import Components, Orchestrator
from .protocols import Embedder, Generator, Judge
from .types import Document

log = logging.getLogger(__name__)

DEFAULT_DATA_DIR = "data"


def resolve_data_dir(arg: str | None) -> Path:
    """--data-dir, else $SAKSI_DATA_DIR, else ./data."""
    return Path(arg or os.environ.get("SAKSI_DATA_DIR") or DEFAULT_DATA_DIR)


CHUNKER_VERSION = 2  # bump when a code change alters chunks, tags or tokens for the same input


def rules_fingerprint(profile: Profile) -> str:
    """What chunks, categories and tokens depend on besides the file: a change means re-ingest."""
    rules = {"chunker": CHUNKER_VERSION, "chunking": profile.settings.chunking.model_dump(),
             "categories": profile.categories.model_dump(), "analysis": profile.analysis.model_dump()}
    return hashlib.sha256(json.dumps(rules, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class IngestReport:
    files: int = 0
    ingested: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    errors: list[IngestError] = field(default_factory=list)
    chunks_written: int = 0
    embedded: int = 0
    removed_from_dense: int = 0
    total_documents: int = 0
    total_chunks: int = 0
    needs_ocr: dict[str, list[int]] = field(default_factory=dict)  # file -> pages without a text layer (not read)

    def as_dict(self) -> dict:
        return {
            "files": self.files, "ingested": self.ingested, "unchanged": self.unchanged,
            "errors": [{"path": e.path, "reason": e.reason} for e in self.errors],
            "chunks_written": self.chunks_written, "embedded": self.embedded,
            "removed_from_dense": self.removed_from_dense,
            "total_documents": self.total_documents, "total_chunks": self.total_chunks,
            "needs_ocr": self.needs_ocr,
        }

    def committed(self, prepared: PreparedDocument, say: Callable[[str], None]) -> None:
        """Count one written document and say so (pages that need OCR included)."""
        doc = prepared.document
        self.ingested.append(doc.path)
        self.chunks_written += len(prepared.chunks)
        self.embedded += prepared.manifest.get("embedded", 0)
        ocr = ""
        if doc.pages_without_text:
            self.needs_ocr[doc.path] = list(doc.pages_without_text)
            ocr = f"; page(s) {', '.join(map(str, doc.pages_without_text))} have no text layer (need OCR, not read)"
        say(f"  {doc.doc_id}: {len(prepared.chunks)} chunks ({doc.path}){ocr}")


class Corpus:
    STATE = "state.json"

    def __init__(self, data_dir: Path, profile: Profile, embedder: Embedder | None = None):
        self.data_dir = Path(data_dir)
        self.profile = profile
        self._embedder = embedder
        self.analyzers = build_analyzers(profile.analysis)
        self.query_analyzer = QueryAnalyzer(self.analyzers, profile.glossary, profile.normalisation)
        self._store: ChunkStore | None = None
        self._dense: MilvusDenseIndex | None = None
        self.rules = rules_fingerprint(profile)

    # -- parts ----------------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = make_embedder(self.profile)
        return self._embedder

    @property
    def embedder_name(self) -> str:
        return self._embedder.name if self._embedder is not None else embedder_name(self.profile.settings.embedder)

    def use_embedder(self, embedder: Embedder) -> None:
        """Embed with this one (a Serve retriever hands over the Embedder deployment's handle)."""
        self._embedder = embedder

    def _dim(self) -> int:
        """The vectors' dimension: from the corpus's state when no model is loaded (reading needs none)."""
        if self._embedder is None and self.exists():
            state = json.loads(self.state_path(self.data_dir).read_text())
            if state.get("embedder") == self.embedder_name and state.get("dim"):
                return int(state["dim"])
        return self.embedder.dim

    @property
    def store(self) -> ChunkStore:
        if self._store is None:
            self._store = ChunkStore(self.data_dir)
        return self._store

    @property
    def dense(self) -> MilvusDenseIndex:
        if self._dense is None:
            self._dense = MilvusDenseIndex(self.milvus_uri, self._dim(),
                                           token=os.environ.get("SAKSI_MILVUS_TOKEN") or None,
                                           sparse=self.sparse)
        return self._dense

    @property
    def sparse(self) -> bool:
        """Whether the profile adds the sparse lane (BGE-M3 lexical weights in the same collection)."""
        return self.profile.settings.embedder.sparse

    @property
    def milvus_uri(self) -> str:
        """A Milvus server when configured ($SAKSI_MILVUS_URI, then index.milvus_uri), else the
        Milvus Lite file in the data directory (one process may own it)."""
        return (os.environ.get("SAKSI_MILVUS_URI") or self.profile.settings.index.milvus_uri
                or str(self.data_dir / "milvus.db"))

    @property
    def trace_dir(self) -> Path:
        return self.data_dir / "traces"

    @classmethod
    def state_path(cls, data_dir: Path) -> Path:
        """Written last by every ingest: its presence means a corpus was built there."""
        return Path(data_dir) / cls.STATE

    def exists(self) -> bool:
        return self.state_path(self.data_dir).exists()

    def close(self) -> None:
        if self._dense is not None:
            self._dense.close()
            self._dense = None
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> "Corpus":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- ingest ---------------------------------------------------------------------------

    def ingest(self, paths: Sequence[Path], rebuild: bool = False,
               progress: Callable[[str], None] | None = None) -> IngestReport:
        """Ingest files and directories; a bad file is reported and skipped, the rest goes in.

        Incremental: a file whose bytes, sidecar and rules are unchanged is not parsed again.
        Each changed document is embedded first and then swapped into the store in one
        transaction, so a query sees its old version or its new one, never half of it; an
        ingest killed midway leaves whole documents and is completed by running it again.
        """
        say = progress or (lambda msg: log.info(msg))
        if rebuild:
            self.clear()
        files, problems = expand_paths([Path(p) for p in paths])
        report = IngestReport(files=len(files), errors=list(problems))
        preparer = DocumentPreparer(self.profile, self.data_dir)
        claimed: dict[str, str] = {}
        for path in files:
            try:
                doc_id = self.unchanged(path)
                if doc_id is not None:
                    claimed[doc_id] = str(path.resolve())
                    report.unchanged.append(str(path.resolve()))
                    continue
                prepared = preparer.prepare(path)
                self.claim(prepared.document, claimed)
                self.commit(prepared)
                report.committed(prepared, say)
            except IngestError as e:
                report.errors.append(e)
                say(f"  skipped {e.path}: {e.reason}")
        self.finalize(report, say, force=bool(report.ingested))
        report.total_documents = len(self.store.documents())
        report.total_chunks = self.store.count()
        return report

    def clear(self) -> None:
        """Drop the corpus and its indexes (--rebuild)."""
        self.close()
        for name in (ChunkStore.FILENAME, "milvus.db", "bm25", TEXTS_DIR, self.STATE):
            target = self.data_dir / name
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)

    def unchanged(self, path: Path) -> str | None:
        """The document id when this file's bytes, sidecar and rules are what the corpus holds:
        incremental ingest skips it without parsing. IngestError when it cannot be read."""
        known = self.store.document_by_path(str(Path(path).resolve()))
        if known and known[1] == source_hash(Path(path)) and known[2] == self.rules:
            return known[0].doc_id
        return None

    def claim(self, doc: Document, claimed: dict[str, str]) -> None:
        """One file per document id, in this ingest and in the corpus."""
        owner = claimed.get(doc.doc_id)
        if owner and owner != doc.path:
            raise IngestError(doc.path, f"document id {doc.doc_id!r} is also used by {owner} in this "
                                        "ingest; give one of them a distinct `id:` in its front matter or sidecar")
        existing = self.store.document(doc.doc_id)
        if existing and existing.path != doc.path:
            raise IngestError(doc.path, f"document id {doc.doc_id!r} already belongs to {existing.path}; "
                                        "give this file a distinct `id:` in its front matter or sidecar")
        claimed[doc.doc_id] = doc.path

    def commit(self, prepared: PreparedDocument, vectors: dict[str, tuple[list[float], dict | None]] | None = None
               ) -> None:
        """Write one prepared document: rendition file, vectors for its new chunks, then the store swap.

        `vectors` (chunk id → (dense, sparse weights)) come from a bulk job that embedded
        them already; otherwise the missing ones are embedded here.
        """
        doc = prepared.document
        rendition = Path(doc.rendition)
        rendition.parent.mkdir(parents=True, exist_ok=True)
        if not rendition.exists():
            tmp = rendition.with_suffix(".tmp")
            tmp.write_text(prepared.text, encoding="utf-8")
            os.replace(tmp, rendition)
        before = self.store.document(doc.doc_id)
        if before is not None and before.title == doc.title:
            present = self.dense.present([c.chunk_id for c in prepared.chunks])
        else:  # the id hashes location and text; embedding_text adds the title: a new title, new vectors
            present = set()
        todo = [c for c in prepared.chunks if c.chunk_id not in present]
        for k in range(0, len(todo), 64):
            part = todo[k:k + 64]
            if vectors is not None:
                dense = np.asarray([vectors[c.chunk_id][0] for c in part], dtype=np.float32)
                weights = [vectors[c.chunk_id][1] for c in part] if self.sparse else None
            else:
                dense, weights = self.embed_passages([embedding_text(c) for c in part])
            self.dense.upsert([c.chunk_id for c in part], [c.doc_id for c in part], dense, weights)
        prepared.manifest["embedded"] = len(todo)
        self.store.replace_document(doc, prepared.chunks, prepared.tokens, self.rules, prepared.source_hash,
                                    prepared.manifest, prepared.references)

    def embed_passages(self, texts: list[str]) -> tuple[list, list | None]:
        if self.sparse:  # one pass gives both vectors
            return asyncio.run(self.embedder.embed_passages_hybrid(texts))
        return asyncio.run(self.embedder.embed_passages(texts)), None

    def delete(self, doc_id: str, progress: Callable[[str], None] | None = None) -> bool:
        """Remove a document (one store transaction), then bring the indexes and references along."""
        say = progress or (lambda msg: log.info(msg))
        if self.exists():  # refuse before touching anything: the indexes must stay this embedder's
            written_by = json.loads(self.state_path(self.data_dir).read_text()).get("embedder")
            if written_by != self.embedder_name:
                raise CorpusIndexError(f"{self.data_dir} was embedded with {written_by}, but this profile uses "
                                       f"{self.embedder_name}; use the profile that built it (--profile)")
        if not self.store.delete_document(doc_id):
            return False
        self.finalize(IngestReport(), say, force=True)
        return True

    def finalize(self, report: IngestReport, say: Callable[[str], None], force: bool = False) -> None:
        """Cross-references, near-duplicates, both lanes and the state file, from the store.

        Runs when something changed, and whenever the indexes disagree with the store (an
        ingest was interrupted), so running the ingest again completes it.
        """
        if not force and self.exists() and self._consistent():
            return
        self._resolve_references()
        pairs = near_duplicate_pairs(c for d, _ in self.store.documents() for c in self.store.doc_chunks(d.doc_id))
        self.store.set_near_duplicates(pairs)
        self._sync_indexes(report, say)
        self._remove_unused_renditions()

    def _consistent(self) -> bool:
        state = json.loads(self.state_path(self.data_dir).read_text())
        return (state.get("fingerprint") == self.store.fingerprint() and self.dense.count() == self.store.count()
                and state.get("embedder") == self.embedder_name)

    def _resolve_references(self) -> None:
        documents = [d for d, _ in self.store.documents()]
        cache: dict[str, list] = {}

        def chunks_of(doc_id: str) -> list:
            if doc_id not in cache:
                cache[doc_id] = self.store.doc_chunks(doc_id)
            return cache[doc_id]

        references = self.store.references()
        by_id = self.store.get(r["chunk_id"] for r in references)
        rows = []
        for ref in references:
            here = by_id.get(ref["chunk_id"])
            if here is None:
                continue
            r = resolve(Reference(**ref["reference"]), here, documents, chunks_of)
            rows.append((ref["chunk_id"], ref["ordinal"], r.status, r.doc_id, r.chunk_id, r.label, r.reason))
        self.store.set_resolutions(rows)

    def _remove_unused_renditions(self) -> None:
        used = {Path(d.rendition).name for d, _ in self.store.documents() if d.rendition}
        folder = self.data_dir / TEXTS_DIR
        if folder.is_dir():
            for f in folder.iterdir():
                if f.name not in used:
                    f.unlink(missing_ok=True)

    def _sync_indexes(self, report: IngestReport, say: Callable[[str], None]) -> None:
        """Bring both lanes to exactly the store's chunk set (also repairs an interrupted ingest)."""
        store_ids = self.store.ids()
        wanted = set(store_ids)
        present = self.dense.all_ids()
        stale = present - wanted
        if stale:
            self.dense.delete(sorted(stale))
            report.removed_from_dense = len(stale)
        todo = [cid for cid in store_ids if cid not in present]
        if todo:
            say(f"  embedding {len(todo)} chunks with {self.embedder.name} …")
        for k in range(0, len(todo), 64):
            ids = todo[k:k + 64]
            chunks = self.store.get(ids)
            vectors, weights = self.embed_passages([embedding_text(chunks[i]) for i in ids])
            self.dense.upsert(ids, [chunks[i].doc_id for i in ids], vectors, weights)
            report.embedded += len(ids)
        ids, tokens = self.store.all_tokens()
        fingerprint = fingerprint_of(ids)
        Bm25LexicalIndex.build(self.data_dir / "bm25", ids, tokens, fingerprint)
        state = {"fingerprint": fingerprint, "chunks": len(ids), "embedder": self.embedder_name,
                 "dim": self._dim(), "profile": self.profile.settings.profile}
        tmp = self.data_dir / (self.STATE + ".tmp")
        tmp.write_text(json.dumps(state, indent=1))
        os.replace(tmp, self.data_dir / self.STATE)

    # -- query ----------------------------------------------------------------------------

    def check(self) -> str:
        """Refuse to answer from indexes that disagree with the chunk store; returns its fingerprint."""
        if not self.exists():
            raise CorpusIndexError(f"no corpus in {self.data_dir}: run `saksi ingest PATH --data-dir {self.data_dir}`")
        state = json.loads((self.data_dir / self.STATE).read_text())
        if state.get("embedder") != self.embedder_name:
            raise CorpusIndexError(
                f"{self.data_dir} was embedded with {state.get('embedder')}, but this profile uses "
                f"{self.embedder_name}; re-ingest with --rebuild")
        fingerprint = self.store.fingerprint()
        if state["fingerprint"] != fingerprint:
            raise CorpusIndexError(f"the indexes in {self.data_dir} do not match its chunk store (an ingest was "
                                   "interrupted?); run `saksi ingest` again to repair them")
        stale = self.store.stale_documents(self.rules)
        if stale:
            raise CorpusIndexError(
                f"{len(stale)} document(s) in {self.data_dir} were ingested under other chunking, category or "
                f"analysis rules ({', '.join(stale[:3])}{', …' if len(stale) > 3 else ''}); ingest them again "
                "(unchanged files are re-processed automatically) or use --rebuild")
        n = self.store.count()
        if self.dense.count() != n:
            raise CorpusIndexError(f"the dense index in {self.data_dir} holds {self.dense.count()} chunks, the store "
                                   f"{n}; run `saksi ingest` again to repair it")
        return fingerprint

    def orchestrator(self, generator: Generator | None = None, judge: Judge | None = None,
                     write_traces: bool = True, trace_dir: Path | None = None) -> Orchestrator:
        """The orchestrator over this corpus; traces go to `trace_dir` (default: <data dir>/traces)."""
        fingerprint = self.check()
        lexical = Bm25LexicalIndex.load(self.data_dir / "bm25")
        if lexical.fingerprint != fingerprint:
            raise CorpusIndexError(f"the lexical index in {self.data_dir} does not match its chunk store; "
                                   "run `saksi ingest` again to repair it")
        components = Components(
            embedder=self.embedder, dense=self.dense, lexical=lexical, chunks=StoreChunkSource(self.store),
            reranker=make_reranker(self.profile, self.query_analyzer),
            generator=generator or make_generator(self.profile, self.query_analyzer),
            judge=judge or make_judge(self.profile),
            sparse=self.dense if self.sparse else None,
        )
        return Orchestrator(self.profile, components, self.query_analyzer,
                            (trace_dir or self.trace_dir) if write_traces else None)
