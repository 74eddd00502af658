"""The chunk store: the one canonical chunk set both indexes are written from.

SQLite in the data directory. Documents and their chunks are replaced per document in
one transaction, so a reader never sees half a document.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import asdict
from pathlib import Path
from typing import Iterable, Sequence

from ..types import Chunk, Document, Span

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
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
"""


def _chunk_from_json(data: str) -> Chunk:
    d = json.loads(data)
    d["categories"] = tuple(d["categories"])
    d["spans"] = tuple(Span(**s) for s in d["spans"])
    return Chunk(**d)


class ChunkStore:
    FILENAME = "chunks.sqlite3"

    def __init__(self, data_dir: Path):
        data_dir.mkdir(parents=True, exist_ok=True)
        self.path = data_dir / self.FILENAME
        # a Serve replica may touch the store from its event loop and from a worker thread (ingest);
        # its owner serialises the two (serve/deployments.py), so the connection may cross threads
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    # -- documents ------------------------------------------------------------------------

    def document(self, doc_id: str) -> Document | None:
        row = self._db.execute("SELECT data FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return Document(**json.loads(row[0])) if row else None

    def documents(self) -> list[tuple[Document, int]]:
        rows = self._db.execute("SELECT data, n_chunks FROM documents ORDER BY doc_id").fetchall()
        return [(Document(**json.loads(d)), n) for d, n in rows]

    def rules(self, doc_id: str) -> str | None:
        """Fingerprint of the chunking, category and analysis rules a document was ingested under."""
        row = self._db.execute("SELECT rules FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return row[0] if row else None

    def stale_documents(self, rules: str) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT doc_id FROM documents WHERE rules != ? ORDER BY doc_id", (rules,))]

    def replace_document(self, document: Document, chunks: Sequence[Chunk], tokens: Sequence[Sequence[str]],
                         rules: str) -> None:
        """Swap in a document's chunks atomically."""
        with self._db:
            self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (document.doc_id,))
            self._db.execute(
                "INSERT OR REPLACE INTO documents (doc_id, path, content_hash, rules, data, n_chunks) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (document.doc_id, document.path, document.content_hash, rules, json.dumps(asdict(document)),
                 len(chunks)))
            self._db.executemany(
                "INSERT INTO chunks (chunk_id, doc_id, ordinal, unit, data, tokens) VALUES (?, ?, ?, ?, ?, ?)",
                [(c.chunk_id, c.doc_id, c.ordinal, c.unit, json.dumps(asdict(c), ensure_ascii=False),
                  json.dumps(list(t), ensure_ascii=False)) for c, t in zip(chunks, tokens)])

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
            out.update({cid: _chunk_from_json(d) for cid, d in self._db.execute(q, part)})
        return out

    def unit_chunks(self, unit: str) -> list[Chunk]:
        rows = self._db.execute("SELECT data FROM chunks WHERE unit = ? ORDER BY ordinal", (unit,))
        return [_chunk_from_json(d) for (d,) in rows]

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


def embedding_text(chunk: Chunk) -> str:
    """What the dense lane embeds: the title and location give a bare paragraph its context."""
    return f"{chunk.title} — {chunk.location}\n{chunk.text}"


class StoreChunkSource:
    """The ChunkSource protocol over a ChunkStore."""

    def __init__(self, store: ChunkStore):
        self.store = store

    async def get(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        return self.store.get(chunk_ids)

    async def paragraph(self, chunk: Chunk) -> str:
        parts = self.store.unit_chunks(chunk.unit)
        return "\n".join(c.text for c in parts) if parts else chunk.text
