"""The dense lane: Milvus (Lite on a local file by default), HNSW index, cosine metric;
and, with a BGE-M3 embedder, the sparse lane in the same collection (a sparse field,
inner product over lexical weights), so one upsert writes both and they cannot drift.

The same client talks to a Milvus server when `uri` is `http://host:19530`. Milvus Lite
allows one process per data file; in Serve, one retriever replica owns it.

Consistency. Every read that must see the last write asks for Strong: `count()` (which
`corpus.check()` and readiness compare with the store), `present()` and `all_ids()` (ingest's
sync and its deletes' repair). A server's default (Bounded) let `count()` right after an ingest
lag, so a replica that reloaded then refused the corpus until the next ingest. The reads that
answer questions (`search`, `score`, `sparse_search`, `sparse_score`) say Bounded on purpose:
Strong makes each wait for the server's time tick, measured on the tests' Milvus 2.3 server at
p50 400-525 ms per search against 2 ms Bounded, and a question makes up to four such reads. What
Bounded costs: for about a second after an ingest a search may miss the newest chunks or return
ids just deleted; the chunk store (SQLite, always current) is where hits are read from, so a
deleted id finds no chunk, and a replica's Strong `count()` in `check()` waits for the server to
catch up before it reports the new corpus ready. New collections are also created Strong, for
reads that name no level (pymilvus's query iterator, used by `all_ids` past 16384 chunks, sends
its requests with the collection's default; it runs after a Strong `count()` in any case). A read that finds the collection released (a restarted server)
loads it and tries once more.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import CorpusIndexError

log = logging.getLogger(__name__)

COLLECTION = "chunks"
_MAX_LIMIT = 16384  # Milvus's ceiling on one query/search result
# HNSW's candidate list at search time (searched with max(EF_SEARCH, limit)). On the statute book's 73,268 real
# vectors asked with the 197 legal_qa questions (bench/search_scale.py --real-vectors … --ef 256,512), recall@30
# against exact search: ef 128 0.954 (server) / 0.955 (Lite), 256 0.980, 512 0.994 / 0.995, for about 1 ms more per
# search on the server (p50 2.6 -> 3.9 ms) and none measurable on Lite
EF_SEARCH = 512
_STRONG = {"consistency_level": "Strong"}  # reads see every write acknowledged before them
# the answer path's reads: no wait for the server's time tick (measured on the tests' 2.3 server:
# a Strong search p50 400-525 ms, Bounded 2 ms); see the module docstring
_BOUNDED = {"consistency_level": "Bounded"}
_NOT_LOADED = 101  # MilvusException code: the collection is released (e.g. the server restarted)
# Milvus rejects an empty sparse vector; a passage with no lexical weight gets this one
# entry, at a dimension no tokenizer emits, so it never matches a query.
_EMPTY_SPARSE = {2**32 - 2: 1e-9}


def is_milvus_lite(uri: str) -> bool:
    """Whether `uri` names a Milvus Lite file (pymilvus's own rule: a path ending in .db), which
    one process at a time may own; anything else is a server that many processes share."""
    return uri.endswith(".db")


def _sparse_row(weights: dict[int, float]) -> dict[int, float]:
    row = {int(k): float(v) for k, v in weights.items() if v > 0}
    return row or dict(_EMPTY_SPARSE)


def lite_file_in_use(uri: str) -> bool:
    """True when another process holds the Milvus Lite file open (its server keeps an exclusive
    flock on the LOCK file inside the database directory while it runs)."""
    import fcntl

    lock = Path(uri) / "LOCK"
    try:
        with open(lock, "rb") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(f, fcntl.LOCK_UN)
    except OSError:  # no such file (not a Lite database yet, or a damaged one)
        return False
    return False


class MilvusDenseIndex:
    def __init__(self, uri: str, dim: int, collection: str = COLLECTION, hnsw_m: int = 16,
                 ef_construction: int = 200, ef_search: int = EF_SEARCH, token: str | None = None,
                 sparse: bool = False):
        from pymilvus import MilvusClient  # heavy import kept to the lane that needs it

        self.uri = uri
        self.dim = dim
        self.collection = collection
        self.ef_search = ef_search
        self.sparse = sparse
        try:
            self._client = MilvusClient(uri, token=token) if token else MilvusClient(uri)
        except Exception as e:  # pymilvus raises several unrelated types here
            raise self._unreadable(e) from None
        # pymilvus configures its own logger on import and logs every failed RPC with a traceback;
        # while opening, a failure is reported once, as the CorpusIndexError below (tracebacks: debug)
        rpc_log = logging.getLogger("pymilvus")
        saved = rpc_log.level
        if not logging.getLogger().isEnabledFor(logging.DEBUG):
            rpc_log.setLevel(logging.CRITICAL)
        try:
            if not self._client.has_collection(collection):
                self._create(hnsw_m, ef_construction)
            else:
                self._check_dim()
                self._client.load_collection(collection)  # a new process finds it released
        except CorpusIndexError:
            self._close_quietly()
            raise
        except Exception as e:  # a damaged Milvus Lite file: its server answers with errors of any kind
            self._close_quietly()
            raise self._unreadable(e) from None
        finally:
            rpc_log.setLevel(saved)

    def _unreadable(self, e: Exception) -> CorpusIndexError:
        """One line saying what to do; the exception's first line only (details with -v)."""
        why = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        if is_milvus_lite(self.uri) and lite_file_in_use(self.uri):
            return CorpusIndexError(f"the dense index at {self.uri} is open in another process (a running "
                                    "`saksi serve` on this data directory?): Milvus Lite opens a file in one "
                                    "process at a time; stop that process, or ask through it")
        if is_milvus_lite(self.uri):
            return CorpusIndexError(f"the dense index at {self.uri} is unreadable ({why}); rebuild it with "
                                    "`saksi ingest PATH --rebuild`")
        return CorpusIndexError(f"cannot use Milvus at {self.uri}: {why}")

    def _close_quietly(self) -> None:
        try:
            self.close()
        except Exception:  # already broken; the error that brought us here is the one to report
            log.debug("closing a damaged Milvus client failed", exc_info=True)

    def _create(self, m: int, ef_construction: int) -> None:
        from pymilvus import DataType, MilvusClient

        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("doc_id", DataType.VARCHAR, max_length=128)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dim)
        if self.sparse:
            schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        index = self._client.prepare_index_params()
        index.add_index(field_name="vector", index_type="HNSW", metric_type="COSINE",
                        params={"M": m, "efConstruction": ef_construction})
        if self.sparse:
            index.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="IP")
        # Strong as the collection's own default too: a read that names no level (the query iterator's
        # requests, which pymilvus sends with use_default_consistency; any tool reading the collection)
        # then sees every acknowledged write as well
        self._client.create_collection(self.collection, schema=schema, index_params=index, **_STRONG)

    def _check_dim(self) -> None:
        desc = self._client.describe_collection(self.collection)
        has_sparse = any(f.get("name") == "sparse" for f in desc.get("fields", []))
        if has_sparse != self.sparse:
            raise CorpusIndexError(
                f"the index at {self.uri} was built {'with' if has_sparse else 'without'} a sparse lane, but this "
                f"profile {'uses' if self.sparse else 'does not use'} one (embedder.sparse); re-ingest with --rebuild")
        for f in desc.get("fields", []):
            if f.get("name") == "vector":
                dim = int(f.get("params", {}).get("dim", self.dim))
                if dim != self.dim:
                    raise CorpusIndexError(
                        f"the dense index at {self.uri} holds {dim}-d vectors but the embedder makes {self.dim}-d "
                        "ones; re-ingest with --rebuild")

    def close(self) -> None:
        """Close the client and, for a Milvus Lite file, stop this process's server for it:
        Lite lets one process own a file, and the next owner (a Serve replica, a batch actor)
        must be able to open it."""
        self._client.close()
        if self.uri.endswith(".db"):
            try:
                from milvus_lite.server_manager import server_manager_instance
            except ImportError:  # a Milvus server URI needs no release; older milvus-lite has no manager
                return
            server_manager_instance.release_server(self.uri)

    # -- writing (ingest) -----------------------------------------------------------------

    def upsert(self, ids: Sequence[str], doc_ids: Sequence[str], vectors: np.ndarray,
               sparse: Sequence[dict[int, float]] | None = None) -> None:
        if self.sparse and (sparse is None or len(sparse) != len(ids)):
            raise CorpusIndexError("this index has a sparse lane: every row needs its lexical weights")
        rows = [{"id": i, "doc_id": d, "vector": v.astype(np.float32).tolist()}
                for i, d, v in zip(ids, doc_ids, vectors)]
        if self.sparse:
            for row, w in zip(rows, sparse):
                row["sparse"] = _sparse_row(w)
        for k in range(0, len(rows), 1000):
            self._client.upsert(self.collection, rows[k:k + 1000])

    def _read(self, op, *args, level: dict = _STRONG, **kwargs):
        """A read, Strong unless `level` says otherwise; a collection found released is loaded and
        read once more."""
        try:
            return op(*args, **kwargs, **level)
        except Exception as e:
            if getattr(e, "code", None) != _NOT_LOADED:
                raise
            log.warning("Milvus collection %s was released (server restarted?); loading it again", self.collection)
            self._client.load_collection(self.collection)
            return op(*args, **kwargs, **level)

    def delete(self, ids: Sequence[str]) -> None:
        ids = list(ids)
        for k in range(0, len(ids), 1000):
            self._client.delete(self.collection, ids=ids[k:k + 1000])

    def all_ids(self) -> set[str]:
        n = self.count()
        if n <= _MAX_LIMIT:  # one plain query; the iterator warns needlessly on Milvus Lite
            rows = self._read(self._client.query, self.collection, filter='id != ""', output_fields=["id"],
                              limit=max(n, 1))
            return {r["id"] for r in rows}
        it = self._read(self._client.query_iterator, self.collection, batch_size=1000, filter='id != ""',
                        output_fields=["id"])
        out: set[str] = set()
        try:
            while batch := it.next():
                out.update(r["id"] for r in batch)
        finally:
            it.close()
        return out

    def present(self, ids: Sequence[str]) -> set[str]:
        """Which of these chunk ids already have vectors (re-ingest embeds only new text)."""
        out: set[str] = set()
        ids = list(ids)
        for k in range(0, len(ids), 500):
            part = ids[k:k + 500]
            rows = self._read(self._client.get, self.collection, ids=part, output_fields=["id"])
            out.update(r["id"] for r in rows)
        return out

    def count(self) -> int:
        res = self._read(self._client.query, self.collection, filter="", output_fields=["count(*)"])
        return int(res[0]["count(*)"])

    # -- reading (the DenseIndex protocol) --------------------------------------------------

    async def search(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        res = self._read(self._client.search, self.collection, data=[np.asarray(vector, dtype=np.float32).tolist()],
                         limit=min(limit, _MAX_LIMIT), output_fields=[],
                         search_params={"metric_type": "COSINE", "params": {"ef": max(self.ef_search, limit)}},
                         level=_BOUNDED)
        return [(hit["id"], float(hit["distance"])) for hit in res[0]]

    async def score(self, vector: np.ndarray, chunk_ids: Sequence[str]) -> dict[str, float]:
        """Exact cosine for the given chunks (stored vectors are normalised)."""
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return {}
        rows = self._read(self._client.get, self.collection, ids=ids, output_fields=["vector"], level=_BOUNDED)
        q = np.asarray(vector, dtype=np.float32)
        return {r["id"]: float(np.dot(np.asarray(r["vector"], dtype=np.float32), q)) for r in rows}

    # -- the sparse lane (the SparseIndex protocol) ---------------------------------------------

    async def sparse_search(self, weights: dict[int, float], limit: int) -> list[tuple[str, float]]:
        """(chunk id, inner product of lexical weights), best first; only positive scores."""
        query = {int(k): float(v) for k, v in weights.items() if v > 0}
        if not self.sparse or not query:
            return []
        res = self._read(self._client.search, self.collection, data=[query], anns_field="sparse",
                         limit=min(limit, _MAX_LIMIT), output_fields=[], search_params={"metric_type": "IP"},
                         level=_BOUNDED)
        return [(hit["id"], float(hit["distance"])) for hit in res[0] if hit["distance"] > 1e-6]

    async def sparse_score(self, weights: dict[int, float], chunk_ids: Sequence[str]) -> dict[str, float]:
        ids = list(dict.fromkeys(chunk_ids))
        if not self.sparse or not ids:
            return {}
        rows = self._read(self._client.get, self.collection, ids=ids, output_fields=["sparse"], level=_BOUNDED)
        q = {int(k): float(v) for k, v in weights.items()}
        return {r["id"]: float(sum(q.get(int(k), 0.0) * float(v) for k, v in r["sparse"].items())) for r in rows}
