"""The lexical lane: bm25s over analysed tokens, persisted on disk beside its chunk ids.

bm25s indexes are immutable, so every ingest rebuilds it from the chunk store's stored
tokens (analysis is not repeated). The ids file and the chunk-set fingerprint are
written with it, so a reader can tell whether it matches the store.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np

from ..analysis import bm25_idf
from ..errors import CorpusIndexError

log = logging.getLogger(__name__)


class Bm25LexicalIndex:
    META = "saksi.json"

    def __init__(self, retriever, ids: list[str], doc_freq: dict[str, int], fingerprint: str):
        self._retriever = retriever
        self.ids = ids
        self._row = {cid: i for i, cid in enumerate(ids)}
        self._df = doc_freq
        self.fingerprint = fingerprint
        n = len(ids)
        self._idf = {t: bm25_idf(df, n) for t, df in doc_freq.items()}
        self._max_idf = max(self._idf.values(), default=1.0)

    # -- building -------------------------------------------------------------------------

    @classmethod
    def build(cls, directory: Path, ids: list[str], tokens: list[list[str]], fingerprint: str,
              k1: float = 1.5, b: float = 0.75) -> "Bm25LexicalIndex":
        """Index the chunk set and write it to `directory` (replaced atomically)."""
        import bm25s

        retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
        if ids:
            retriever.index(tokens, show_progress=False)
        doc_freq: dict[str, int] = {}
        for toks in tokens:
            for t in set(toks):
                doc_freq[t] = doc_freq.get(t, 0) + 1
        tmp = directory.with_name(directory.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if ids:
            retriever.save(str(tmp), show_progress=False)
        (tmp / cls.META).write_text(json.dumps({"ids": ids, "doc_freq": doc_freq, "fingerprint": fingerprint,
                                                "k1": k1, "b": b}, ensure_ascii=False))
        cls.install(tmp, directory)
        return cls(retriever if ids else None, ids, doc_freq, fingerprint)

    @staticmethod
    def install(built: Path, directory: Path) -> None:
        """Move an index built in `built` to `directory`, replacing what is there (a rename each: a reader that
        loads meanwhile finds the old index or the new one)."""
        old = directory.with_name(directory.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if directory.exists():
            os.replace(directory, old)
        os.replace(built, directory)
        shutil.rmtree(old, ignore_errors=True)

    @classmethod
    def load(cls, directory: Path) -> "Bm25LexicalIndex":
        import bm25s

        meta_path = directory / cls.META
        if not meta_path.exists():
            raise CorpusIndexError(f"no lexical index in {directory}; run `saksi ingest`")
        meta = json.loads(meta_path.read_text())
        retriever = bm25s.BM25.load(str(directory), show_progress=False, verbosity=0) if meta["ids"] else None
        return cls(retriever, meta["ids"], meta["doc_freq"], meta["fingerprint"])

    # -- reading (the LexicalIndex protocol) -------------------------------------------------

    def _scores(self, tokens: Sequence[str]) -> np.ndarray:
        known = [t for t in tokens if t in self._df]
        if self._retriever is None or not known:
            return np.zeros(len(self.ids), dtype=np.float32)
        return self._retriever.get_scores(known)

    async def search(self, tokens: Sequence[str], limit: int) -> list[tuple[str, float]]:
        scores = self._scores(tokens)
        if not len(scores):
            return []
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]  # by score, ties by corpus order
        return [(self.ids[i], float(scores[i])) for i in top if scores[i] > 0]

    async def score(self, tokens: Sequence[str], chunk_ids: Sequence[str]) -> dict[str, float]:
        scores = self._scores(tokens)
        return {cid: float(scores[self._row[cid]]) for cid in chunk_ids if cid in self._row}

    async def idf(self, tokens: Sequence[str]) -> dict[str, float]:
        return {t: self._idf[t] for t in tokens if t in self._idf}

    async def max_idf(self) -> float:
        return self._max_idf
