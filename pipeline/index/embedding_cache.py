"""Vectors already computed, kept by (embedder, the exact text embedded), so unchanged text is never
embedded twice: a re-ingest under new chunking or category rules, a document moved or renamed, a
rebuild, an upload sent again.

`DATA_DIR/embeddings.sqlite3`, one row per (embedder name, SHA-256 of the text): the dense vector
as float32 bytes and, for an embedder with lexical weights (BGE-M3's sparse lane), those weights as
JSON. The key is the text the embedder read (`text.embedding_text`: title, location and passage),
so a change of title is a new text and gets a new vector. `embed_passages` is the one way ingest
embeds in process: it looks every text up, embeds only the misses, and stores them. `saksi
bulk-ingest`'s embedding actors look texts up in a read-only view (`EmbeddingCache.reader`) and the
driver, the one writer, stores what they embedded.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

FILENAME = "embeddings.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dense BLOB NOT NULL,
    sparse TEXT,
    PRIMARY KEY (model, text_sha256)
)
"""


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    def __init__(self, root: str | Path, _db: sqlite3.Connection | None = None):
        self.path = Path(root) / FILENAME
        if _db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _db = sqlite3.connect(self.path, check_same_thread=False)
            _db.execute(_SCHEMA)
            _db.commit()
        self._db = _db
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    @classmethod
    def reader(cls, root: str | Path) -> "EmbeddingCache | None":
        """A read-only view of the cache in `root` (a Ray worker's, while the driver writes), or
        None where there is none to read (a worker on a node that does not see the data directory):
        it never creates the file."""
        path = Path(root).resolve() / FILENAME
        try:
            db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
            db.execute("SELECT 1 FROM vectors LIMIT 1").fetchall()
        except sqlite3.Error:
            return None
        return cls(root, _db=db)

    def close(self) -> None:
        self._db.close()

    def get(self, model: str, texts: Sequence[str]) -> dict[int, tuple[np.ndarray, dict[int, float] | None]]:
        """The cached vectors of these texts, by position."""
        keys = [_key(t) for t in texts]
        found: dict[str, tuple[np.ndarray, dict | None]] = {}
        with self._lock:
            for k in range(0, len(keys), 500):
                part = keys[k:k + 500]
                rows = self._db.execute(
                    f"SELECT text_sha256, dense, sparse FROM vectors WHERE model = ? AND text_sha256 IN "
                    f"({','.join('?' * len(part))})", (model, *part)).fetchall()
                for h, dense, sparse in rows:
                    weights = {int(i): float(w) for i, w in json.loads(sparse).items()} if sparse else None
                    found[h] = (np.frombuffer(dense, dtype=np.float32).copy(), weights)
        return {i: found[h] for i, h in enumerate(keys) if h in found}

    def put(self, model: str, texts: Sequence[str], dense: np.ndarray, sparse: Sequence[dict] | None) -> None:
        rows = [(model, _key(t), np.asarray(dense[i], dtype=np.float32).tobytes(),
                 json.dumps({str(k): float(v) for k, v in sparse[i].items()}) if sparse is not None else None)
                for i, t in enumerate(texts)]
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)


async def embed_passages(embedder, texts: Sequence[str], cache: EmbeddingCache | None,
                         hybrid: bool) -> tuple[np.ndarray, list[dict] | None]:
    """Dense vectors (and lexical weights when `hybrid`) of `texts`, embedding only what the cache lacks."""
    texts = list(texts)
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32), ([] if hybrid else None)
    have = cache.get(embedder.name, texts) if cache is not None else {}
    missing = [i for i in range(len(texts)) if i not in have]
    if cache is not None:
        cache.hits += len(have)
        cache.misses += len(missing)
    new_dense, new_sparse = None, None
    if missing:
        todo = [texts[i] for i in missing]
        if hybrid:
            new_dense, new_sparse = await embedder.embed_passages_hybrid(todo)
        else:
            new_dense = await embedder.embed_passages(todo)
        new_dense = np.asarray(new_dense, dtype=np.float32)
        if cache is not None:
            cache.put(embedder.name, todo, new_dense, new_sparse)
    dim = new_dense.shape[1] if new_dense is not None else len(next(iter(have.values()))[0])
    dense = np.zeros((len(texts), dim), dtype=np.float32)
    sparse: list[dict] | None = [{} for _ in texts] if hybrid else None
    for i, (vec, weights) in have.items():
        dense[i] = vec
        if sparse is not None:
            sparse[i] = weights or {}
    for j, i in enumerate(missing):
        dense[i] = new_dense[j]
        if sparse is not None:
            sparse[i] = new_sparse[j]
    return dense, sparse
