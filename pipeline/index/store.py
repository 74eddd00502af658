"""The chunk store: the one canonical chunk set both indexes are written from.

SQLite in the data directory. Documents and their chunks are replaced per document in
one transaction, so a reader never sees half a document.
"""
from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Iterable, Sequence

from ..definitions import DEFINITIONS_UNIT, entries_in
from ..types import Chunk, ContextLink, Document, DocumentStatus, Span, StatusEdge

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending_audit (  -- written with the change it records; moved to the audit log after
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event TEXT NOT NULL,
    key TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    path TEXT NOT NULL,              -- the ingested file (Document.original)
    content_hash TEXT NOT NULL,
    rules TEXT NOT NULL,
    data TEXT NOT NULL,
    n_chunks INTEGER NOT NULL,
    ingested_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    unit TEXT NOT NULL,
    data TEXT NOT NULL,
    tokens TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, ordinal);
CREATE INDEX IF NOT EXISTS chunks_unit ON chunks(unit, ordinal);
CREATE TABLE IF NOT EXISTS xrefs (
    chunk_id TEXT NOT NULL REFERENCES chunks(chunk_id) ON DELETE CASCADE,
    doc_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    data TEXT NOT NULL,              -- the Reference as extracted
    status TEXT,                     -- resolved | unresolved (NULL until resolved)
    target_doc TEXT,
    target_chunk TEXT,
    target_label TEXT,
    reason TEXT,
    PRIMARY KEY (chunk_id, ordinal)
);
CREATE INDEX IF NOT EXISTS xrefs_doc ON xrefs(doc_id);
CREATE TABLE IF NOT EXISTS status_edges (
    source_doc TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    target_doc TEXT,
    data TEXT NOT NULL,              -- the StatusEdge (pipeline/status.py)
    PRIMARY KEY (source_doc, ordinal)
);
CREATE INDEX IF NOT EXISTS status_edges_target ON status_edges(target_doc);
CREATE TABLE IF NOT EXISTS derived_versions (  -- the version of the rules that derived a table (status: GRAPH_VERSION)
    name TEXT PRIMARY KEY,
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS near_duplicates (
    chunk_a TEXT NOT NULL REFERENCES chunks(chunk_id) ON DELETE CASCADE,
    chunk_b TEXT NOT NULL REFERENCES chunks(chunk_id) ON DELETE CASCADE,
    doc_a TEXT NOT NULL,
    doc_b TEXT NOT NULL,
    similarity REAL NOT NULL,
    PRIMARY KEY (chunk_a, chunk_b)
);
"""
# columns added after the first release: an older store gains them on open
_ADDED_COLUMNS = {"documents": {"source_hash": "TEXT", "version": "INTEGER NOT NULL DEFAULT 1",
                                "manifest": "TEXT NOT NULL DEFAULT '{}'"}}


# field names of stores written before the names were agreed (pipeline/types.py), read as today's
_RENAMED = {"source_path": "rendition", "document_path": "original", "origin": "original_span"}


def _renamed(d: dict, renames: dict[str, str]) -> dict:
    return {renames.get(k, k): v for k, v in d.items()}


def _chunk_from_json(data: str) -> Chunk:
    d = _renamed(json.loads(data), _RENAMED)
    d["categories"] = tuple(d["categories"])
    d["spans"] = tuple(Span(**s) for s in d["spans"])
    for k in ("page", "original_span", "page_breaks"):
        if d.get(k) is not None:
            d[k] = tuple(d[k])
    return Chunk(**d)


# a rendition as ingest names it (pipeline/ingest/prepare.rendition_path): <data dir>/texts/<doc id>.<12 hex>.txt
_RENDITION = re.compile(r"(?:^|.*[/\\])texts[/\\]([^/\\]+\.[0-9a-f]{12}\.txt)$")


def _relocated(path: str | None, texts: Path) -> str | None:
    """A rendition recorded (by absolute path) in a data directory since moved or copied: the same file under this
    data directory's texts/, where the name says it is one ingest wrote; any other path as recorded."""
    m = _RENDITION.match(path or "")
    return str(texts / m.group(1)) if m and Path(path).parent != texts else path


def document_from_json(data: str) -> Document:
    d = _renamed(json.loads(data), {"path": "original"})
    d["pages_without_text"] = tuple(d.get("pages_without_text") or ())
    return Document(**d)


@dataclass(frozen=True)
class ManifestEntry:
    """A document's row in the store's manifest: the document, its chunk count, its version (which rises when its
    source changes), its source's hash, when it was ingested, and what ingest recorded about it (`details`: the
    Pasal count, where each metadata field came from, the authority and dates an upload declared …)."""

    document: Document
    chunks: int
    version: int
    source_hash: str | None
    ingested_at: str | None
    details: dict

    def as_dict(self) -> dict:
        """The entry without its document, as `saksi corpus show` prints it."""
        return {"chunks": self.chunks, "version": self.version, "source_hash": self.source_hash,
                "ingested_at": self.ingested_at, **self.details}


@dataclass(frozen=True)
class ReferenceRow:
    """A cross-reference as the store holds it: the passage it stands in (`chunk_id`, its `ordinal` there), the
    reference as extracted (`reference`: `pipeline.references.Reference` as JSON), and what resolution found
    (`status` resolved/unresolved, the target document, passage and label, or the `reason` it is not in the corpus;
    None until the collection's next finalize resolves it)."""

    chunk_id: str
    doc_id: str
    ordinal: int
    reference: dict
    status: str | None = None
    target_doc: str | None = None
    target_chunk: str | None = None
    target_label: str | None = None
    reason: str | None = None


class ChunkStore:
    FILENAME = "chunks.sqlite3"

    def __init__(self, data_dir: Path, read_only: bool = False):
        self.path = data_dir / self.FILENAME
        self._texts = (Path(data_dir) / "texts").resolve()  # where this data directory's renditions are
        self._definitions: tuple[int, dict[str, list[tuple[str, str]]]] | None = None
        if read_only:  # a connection of its own that can only read (`Ingestor.derive`, beside a server's readers)
            self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
            self.status_stale = False
            return
        data_dir.mkdir(parents=True, exist_ok=True)
        # a Serve replica may touch the store from its event loop and from a worker thread (ingest);
        # its owner serialises the two (serve/deployments.py), so the connection may cross threads
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA foreign_keys = ON")
        # a store written before the status graph existed has documents but no graph: the next finalize builds it
        self.status_stale = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'status_edges'").fetchone() is None
        self._db.executescript(_SCHEMA)
        for table, columns in _ADDED_COLUMNS.items():
            have = {r[1] for r in self._db.execute(f"PRAGMA table_info({table})")}
            for name, decl in columns.items():
                if name not in have:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    # -- documents ------------------------------------------------------------------------

    def _document(self, data: str) -> Document:
        doc = document_from_json(data)
        where = _relocated(doc.rendition, self._texts)
        return doc if where == doc.rendition else replace(doc, rendition=where)

    def _chunk(self, data: str) -> Chunk:
        chunk = _chunk_from_json(data)
        where = _relocated(chunk.rendition, self._texts)
        return chunk if where == chunk.rendition else replace(chunk, rendition=where)

    def document(self, doc_id: str) -> Document | None:
        row = self._db.execute("SELECT data FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return self._document(row[0]) if row else None

    def documents(self) -> list[tuple[Document, int]]:
        rows = self._db.execute("SELECT data, n_chunks FROM documents ORDER BY doc_id").fetchall()
        return [(self._document(d), n) for d, n in rows]

    def rules(self, doc_id: str) -> str | None:
        """Fingerprint of the chunking, category and analysis rules a document was ingested under."""
        row = self._db.execute("SELECT rules FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return row[0] if row else None

    def stale_documents(self, rules: str) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT doc_id FROM documents WHERE rules != ? ORDER BY doc_id", (rules,))]

    def document_by_path(self, path: str) -> tuple[Document, str | None, str] | None:
        """The document ingested from this file, its source hash and rules: what incremental ingest checks."""
        row = self._db.execute("SELECT data, source_hash, rules FROM documents WHERE path = ?", (path,)).fetchone()
        return (self._document(row[0]), row[1], row[2]) if row else None

    def manifest(self) -> list[ManifestEntry]:
        """One entry per document: what was ingested, which version, its hash and counts."""
        rows = self._db.execute(
            "SELECT data, n_chunks, version, source_hash, ingested_at, manifest FROM documents ORDER BY doc_id")
        return [ManifestEntry(self._document(d), n, v, h, at, json.loads(m or "{}")) for d, n, v, h, at, m in rows]

    def replace_document(self, document: Document, chunks: Sequence[Chunk], tokens: Sequence[Sequence[str]],
                         rules: str, source_hash: str | None = None, manifest: dict | None = None,
                         references: Sequence[tuple[str, int, dict]] = (),
                         audit: tuple[str, str, dict] | None = None) -> None:
        """Swap in a document's chunks, manifest entry and extracted references in one transaction:
        a reader sees the old version or the new one, never half of either. `audit` (event, key, data): the audit
        entry that records the change, written in the same transaction (`pending_audit`: both or neither)."""
        with self._db:
            if audit is not None:
                self._pend(audit)
            row = self._db.execute("SELECT version, source_hash FROM documents WHERE doc_id = ?",
                                   (document.doc_id,)).fetchone()
            version = 1 if row is None else row[0] + (row[1] != source_hash)
            self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (document.doc_id,))
            self._db.execute(
                "INSERT OR REPLACE INTO documents (doc_id, path, content_hash, rules, data, n_chunks, source_hash, "
                "version, manifest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (document.doc_id, document.original, document.content_hash, rules, json.dumps(asdict(document)),
                 len(chunks), source_hash, version, json.dumps(manifest or {}, ensure_ascii=False)))
            self._db.executemany(
                "INSERT INTO chunks (chunk_id, doc_id, ordinal, unit, data, tokens) VALUES (?, ?, ?, ?, ?, ?)",
                [(c.chunk_id, c.doc_id, c.ordinal, c.unit, json.dumps(asdict(c), ensure_ascii=False),
                  json.dumps(list(t), ensure_ascii=False)) for c, t in zip(chunks, tokens)])
            self._db.executemany(
                "INSERT INTO xrefs (chunk_id, doc_id, ordinal, data) VALUES (?, ?, ?, ?)",
                [(cid, document.doc_id, k, json.dumps(ref, ensure_ascii=False)) for cid, k, ref in references])

    def delete_document(self, doc_id: str, audit: tuple[str, str, dict] | None = None) -> bool:
        """Remove a document, its chunks, references and near-duplicate pairs in one transaction (with the audit
        entry that records it, as `replace_document`)."""
        with self._db:
            cur = self._db.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
            if cur.rowcount > 0 and audit is not None:
                self._pend(audit)
        return cur.rowcount > 0

    # -- audit entries written with their change ------------------------------------------------------------

    def _pend(self, audit: tuple[str, str, dict]) -> None:
        event, key, data = audit
        self._db.execute("INSERT INTO pending_audit (event, key, data) VALUES (?, ?, ?)",
                         (event, key, json.dumps(data, ensure_ascii=False)))

    def pending_audit(self) -> list[tuple[int, str, str, dict]]:
        """Audit entries written with their change and not yet in the audit log (id, event, key, data), oldest first."""
        return [(r[0], r[1], r[2], json.loads(r[3]))
                for r in self._db.execute("SELECT id, event, key, data FROM pending_audit ORDER BY id")]

    def audit_done(self, entry_id: int) -> None:
        with self._db:
            self._db.execute("DELETE FROM pending_audit WHERE id = ?", (entry_id,))

    # -- cross-references and near-duplicates ---------------------------------------------

    def references(self, doc_id: str | None = None) -> list[ReferenceRow]:
        q = ("SELECT chunk_id, doc_id, ordinal, data, status, target_doc, target_chunk, target_label, reason "
             "FROM xrefs" + (" WHERE doc_id = ?" if doc_id else "") + " ORDER BY doc_id, rowid")
        return [ReferenceRow(r[0], r[1], r[2], json.loads(r[3]), *r[4:])
                for r in self._db.execute(q, (doc_id,) if doc_id else ())]

    def set_status_edges(self, edges: Sequence[StatusEdge], version: int | None = None) -> None:
        """The collection's status graph (pipeline/status.py), replaced whole: it is derived from every document;
        `version`: that of the rules that read it (status.GRAPH_VERSION), kept with it."""
        self.status_stale = False
        with self._db:
            self._db.execute("DELETE FROM status_edges")
            self._db.executemany(
                "INSERT INTO status_edges (source_doc, ordinal, target_doc, data) VALUES (?, ?, ?, ?)",
                [(e.source_doc, k, e.target_doc, json.dumps(asdict(e), ensure_ascii=False))
                 for k, e in enumerate(edges)])
            if version is not None:
                self._db.execute("INSERT OR REPLACE INTO derived_versions (name, version) VALUES ('status', ?)",
                                 (version,))

    def status_version(self) -> int | None:
        """The version of the rules the stored status graph was read by (None: before versions were kept)."""
        try:
            row = self._db.execute("SELECT version FROM derived_versions WHERE name = 'status'").fetchone()
        except sqlite3.OperationalError:  # a read-only connection to a store from before the table
            return None
        return row[0] if row else None

    def status_edges(self) -> list[StatusEdge]:
        """The status graph as the last finalize wrote it, in source order."""
        return [StatusEdge(**json.loads(r[0]))
                for r in self._db.execute("SELECT data FROM status_edges ORDER BY source_doc, ordinal")]

    def status_of(self, doc_ids: Sequence[str]) -> dict[str, DocumentStatus]:
        """Per document (of those held): its start and the status edges that end it or its Pasal, with what a receipt
        shows of it, and the documents its references resolved to."""
        out: dict[str, DocumentStatus] = {}
        for doc_id in dict.fromkeys(doc_ids):
            doc = self.document(doc_id)
            if doc is None:
                continue
            out[doc_id] = DocumentStatus.of(doc, (StatusEdge(**json.loads(r[0])) for r in self._db.execute(
                "SELECT data FROM status_edges WHERE target_doc = ? ORDER BY source_doc, ordinal", (doc_id,))),
                (r[0] for r in self._db.execute("SELECT DISTINCT target_doc FROM xrefs WHERE doc_id = ? AND "
                                                 "status = 'resolved' AND target_doc IS NOT NULL", (doc_id,))))
        return out

    def unresolved_counts(self) -> dict[str, int]:
        """Per document, how many of its references are unresolved (counted here, none read)."""
        return dict(self._db.execute("SELECT doc_id, COUNT(*) FROM xrefs WHERE status = 'unresolved' GROUP BY doc_id"))

    def set_resolutions(self, rows: Sequence[tuple[str, int, str, str | None, str | None, str | None, str | None]]) -> None:
        """(chunk_id, ordinal, status, target_doc, target_chunk, target_label, reason) for each reference."""
        with self._db:
            self._db.executemany(
                "UPDATE xrefs SET status = ?, target_doc = ?, target_chunk = ?, target_label = ?, reason = ? "
                "WHERE chunk_id = ? AND ordinal = ?",
                [(st, td, tc, tl, why, cid, k) for cid, k, st, td, tc, tl, why in rows])

    def referenced_chunks(self, chunk_ids: Sequence[str]) -> dict[str, list[ContextLink]]:
        """For each chunk, its resolved references to other chunks (in reading order): where each
        stands in the chunk's text and the chunk it points at."""
        out: dict[str, list[ContextLink]] = {}
        ids = list(dict.fromkeys(chunk_ids))
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            q = (f"SELECT chunk_id, target_chunk, data FROM xrefs WHERE status = 'resolved' AND target_chunk IS NOT NULL "
                 f"AND chunk_id IN ({','.join('?' * len(part))}) ORDER BY rowid")
            for cid, target, data in self._db.execute(q, part):
                if target != cid:
                    ref = json.loads(data)
                    out.setdefault(cid, []).append(ContextLink(int(ref["start"]), int(ref["end"]), target))
        return out

    def set_near_duplicates(self, pairs: Sequence[tuple[str, str, str, str, float]]) -> None:
        """Replace the near-duplicate pairs: (chunk_a, chunk_b, doc_a, doc_b, similarity)."""
        with self._db:
            self._db.execute("DELETE FROM near_duplicates")
            self._db.executemany("INSERT INTO near_duplicates VALUES (?, ?, ?, ?, ?)", pairs)

    def near_duplicates(self, doc_id: str | None = None) -> list[tuple[str, str, str, str, float]]:
        q = "SELECT chunk_a, chunk_b, doc_a, doc_b, similarity FROM near_duplicates"
        if doc_id:
            return list(self._db.execute(q + " WHERE doc_a = ? OR doc_b = ? ORDER BY rowid", (doc_id, doc_id)))
        return list(self._db.execute(q + " ORDER BY rowid"))

    def doc_chunks(self, doc_id: str) -> list[Chunk]:
        rows = self._db.execute("SELECT data FROM chunks WHERE doc_id = ? ORDER BY ordinal", (doc_id,))
        return [self._chunk(d) for (d,) in rows]

    # -- chunks ---------------------------------------------------------------------------

    def count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]

    def ids(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT chunk_id FROM chunks ORDER BY doc_id, ordinal")]

    def get(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, Chunk] = {}
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            q = f"SELECT chunk_id, data FROM chunks WHERE chunk_id IN ({','.join('?' * len(part))})"
            out.update({cid: self._chunk(d) for cid, d in self._db.execute(q, part)})
        return out

    def unit_chunks(self, unit: str) -> list[Chunk]:
        rows = self._db.execute("SELECT data FROM chunks WHERE unit = ? ORDER BY ordinal", (unit,))
        return [self._chunk(d) for (d,) in rows]

    def definitions(self) -> dict[str, list[tuple[str, str]]]:
        """Every term the corpus's definitions articles define (pipeline/definitions.py), by key:
        [(chunk id, the entry's span label)]. Read from the chunks of each "Pasal 1" once, and again
        when the chunk count changes."""
        count = self.count()
        if self._definitions is None or self._definitions[0] != count:
            index: dict[str, list[tuple[str, str]]] = {}
            rows = self._db.execute("SELECT chunk_id, unit, data FROM chunks WHERE unit LIKE '%1' "
                                    "ORDER BY doc_id, ordinal")
            for cid, unit, data in rows:
                if not DEFINITIONS_UNIT.search(unit):
                    continue
                chunk = _chunk_from_json(data)
                for label, entry in entries_in(chunk.text, chunk.spans):
                    for key in entry.keys:
                        index.setdefault(key, []).append((cid, label))
            self._definitions = (count, index)
        return self._definitions[1]

    def all_tokens(self) -> tuple[list[str], list[list[str]]]:
        """Chunk ids and their analysed tokens, in a stable order: what bm25s is built from."""
        rows = self._db.execute("SELECT chunk_id, tokens FROM chunks ORDER BY doc_id, ordinal").fetchall()
        return [r[0] for r in rows], [json.loads(r[1]) for r in rows]

    def fingerprint(self) -> str:
        return fingerprint_of(self.ids())


def fingerprint_of(chunk_ids: Iterable[str]) -> str:
    """A hash of a chunk id set: equal fingerprints mean the same chunks."""
    h = hashlib.sha256()
    for cid in sorted(chunk_ids):
        h.update(cid.encode())
    return h.hexdigest()


class StoreChunkSource:
    """The ChunkSource protocol over a ChunkStore."""

    def __init__(self, store: ChunkStore):
        self.store = store

    async def get(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        return self.store.get(chunk_ids)

    async def paragraph(self, chunk: Chunk) -> str:
        parts = self.store.unit_chunks(chunk.unit)
        return "\n".join(c.text for c in parts) if parts else chunk.text

    async def references(self, chunk_ids: Sequence[str]) -> dict[str, list[ContextLink]]:
        return self.store.referenced_chunks(chunk_ids)

    async def status(self, doc_ids: Sequence[str]) -> dict[str, DocumentStatus]:
        return self.store.status_of(doc_ids)

    async def definitions(self, term: str) -> list[tuple[str, str]]:
        return list(self.store.definitions().get(term, ()))

    async def documents(self) -> list[Document]:
        return [d for d, _ in self.store.documents()]
