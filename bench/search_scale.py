"""Search at the scale of the statute book and beyond: each lane's latency, build time and memory,
from 1k passages to 1M.

Lanes, each through saksi's own index classes (pipeline/index/):
  bm25     `Bm25LexicalIndex` (bm25s, lucene BM25): built with `build`, asked with `search` at
           lexical_k. Passages: the statute book's own (the 1,535 laws of
           ../shared/data/peraturan/uu.tar.xz, parsed and chunked by `DocumentPreparer` exactly as
           ingest does, no embedding) up to their count; past it SYNTHETIC: the real passages again,
           each copy with a share of its words made new (`word~copy`), so postings and vocabulary
           grow as a bigger statute book's would. Queries: the legal_qa dev questions, analysed
           by the Indonesian analyser (the lexical tokens of a question, without glossary expansion).
  lite     `MilvusDenseIndex` on a Milvus Lite file (the embedded default), `search` at dense_k.
  server   `MilvusDenseIndex` on a Milvus server (2.3 standalone, started here from the `milvus`
           package, as tests/milvus_server.py does), the index saksi creates: HNSW, M=16,
           efConstruction=200, searched with ef=max(EF_SEARCH, k) (pipeline/index/dense.py: 512 since
           issue 30, 128 before; each row records it).
  Vectors for both dense lanes are SYNTHETIC at every size: random unit vectors of the lite
  embedder's dimension (384). Embedding the statute book takes hours on this machine; random
  vectors are the hard case for an approximate index (no clusters to exploit), so recall@k measured
  against exact search (numpy, the same vectors) is a lower bound for real embeddings.

Each size is reached by adding to the same index (1k, then up to 10k, …); at each size: the time to
add and index the new passages (for the server: insert, flush, wait until the query node serves them from
sealed, indexed segments: tests/milvus_server.wait_served), p50/p95 of
`search` over the queries, recall@k against exact search (dense lanes), and memory: bm25 the growth
of this process and the index on disk; the server the resident set of its processes; Lite (it
runs inside this process) its file on disk. Lite is asked twice at each size, each time from a
newly opened client as a served process would be: `as_left`, as upserts leave it (saksi does not
flush; what was added since the previous size is in growing segments), and `after_flush`.

    .venv/bin/python bench/search_scale.py [--sizes 1000,10000,50000,68332,250000,1000000]
        [--lanes bm25,lite,server] [--queries 200] [--out bench/results/search_scale.json]

The machine is shared and has 2 cores: read the ratios between sizes and lanes of one run, not the
absolute milliseconds. A lane that takes longer than --lane-budget seconds to grow stops there and
says so (`stopped`): the sizes it reached are kept.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.milvus_server import wait_served  # noqa: E402  (stdlib only: no server is started by importing it)
SHARED = Path(os.environ.get("SAKSI_SHARED_DATA", ROOT.parent / "shared" / "data"))
DIM = 384
DENSE_K = LEXICAL_K = 30  # configs/lite.yaml


def _rss(pids: list[int]) -> int:
    import psutil

    total = 0
    for pid in pids:
        try:
            p = psutil.Process(pid)
            total += p.memory_info().rss + sum(c.memory_info().rss for c in p.children(recursive=True))
        except psutil.Error:
            pass
    return total


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _timings(values: list[float]) -> dict:
    return {"p50_ms": round(1000 * statistics.median(values), 3), "p95_ms": round(1000 * _pct(values, 0.95), 3)}


# -- passages and questions ------------------------------------------------------------------------

def statute_passages(say) -> list[list[str]]:
    """The lexical tokens of every passage of the statute book, as ingest makes them."""
    import importlib.util

    from pipeline.config import load_profile
    from pipeline.errors import IngestError
    from pipeline.ingest.prepare import DocumentPreparer

    spec = importlib.util.spec_from_file_location("statute_book", ROOT / "scripts" / "statute_book.py")
    book = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(book)
    tokens: list[list[str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        laws = book.lay_out(SHARED / "peraturan" / "uu.tar.xz", Path(tmp) / "laws", first=())
        preparer = DocumentPreparer(load_profile(), Path(tmp) / "data")
        started = time.perf_counter()
        for k, path in enumerate(laws):
            try:
                tokens.extend(preparer.prepare(path).tokens)
            except IngestError:
                pass
            if k % 300 == 299:
                say(f"  parsed {k + 1}/{len(laws)} laws, {len(tokens)} passages, {time.perf_counter() - started:.0f}s")
    return tokens


def synthetic_passages(real: list[list[str]], n: int, seed: int = 7) -> list[list[str]]:
    """`n` passages: the real ones, then copies of them with a third of their words made new."""
    rng = np.random.default_rng(seed)
    out = list(real[:n])
    copy = 0
    while len(out) < n:
        copy += 1
        for toks in real:
            if len(out) >= n:
                break
            fresh = rng.random(len(toks)) < 0.33
            out.append([f"{t}~{copy}" if f else t for t, f in zip(toks, fresh)])
    return out


def question_tokens(limit: int) -> list[list[str]]:
    from pipeline.analysis import build_analyzers
    from pipeline.config import load_profile

    analyzer = build_analyzers(load_profile().analysis)["id"]
    rows = [json.loads(line) for line in (SHARED / "legal_qa" / "dev.jsonl").read_text().splitlines() if line.strip()]
    return [analyzer.tokens(r["question"]) for r in rows][:limit]


# -- lanes -----------------------------------------------------------------------------------------

def bench_bm25(sizes: list[int], queries: int, say, budget: float) -> dict:
    from pipeline.index import Bm25LexicalIndex

    real = statute_passages(say)
    say(f"bm25: {len(real)} real passages from the statute book")
    asked = question_tokens(queries)
    rows, spent = [], 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            passages = synthetic_passages(real, n)
            gc.collect()
            before = _rss([os.getpid()])
            started = time.perf_counter()
            index = Bm25LexicalIndex.build(Path(tmp) / f"lex-{n}", [f"c{i}" for i in range(n)], passages, "bench")
            build = time.perf_counter() - started
            grown = max(_rss([os.getpid()]) - before, 0)
            disk = sum(f.stat().st_size for f in (Path(tmp) / f"lex-{n}").rglob("*") if f.is_file())
            lat = []
            for toks in asked:
                t = time.perf_counter()
                asyncio.run(index.search(toks, LEXICAL_K))
                lat.append(time.perf_counter() - t)
            row = {"passages": n, "synthetic": n > len(real), "build_s": round(build, 2), **_timings(lat),
                   "disk_mb": round(disk / 2**20, 1), "rss_growth_mb": round(grown / 2**20, 1),
                   "disk_mb_per_million": round(disk / 2**20 * 1e6 / n, 1)}
            rows.append(row)
            say(f"bm25 {n}: {row}")
            del index, passages
            spent += build
            if spent > budget:
                return {"rows": rows, "stopped": f"past the {budget:.0f}s budget after {n} passages",
                        "real_passages": len(real)}
    return {"rows": rows, "real_passages": len(real)}


def _vectors(n: int, start: int, seed: int = 11) -> np.ndarray:
    rng = np.random.default_rng(seed + start)
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def bench_dense(kind: str, sizes: list[int], queries: int, say, budget: float, query_budget: float) -> dict:
    from pipeline.index.dense import MilvusDenseIndex

    with tempfile.TemporaryDirectory() as tmp:
        server, uri = _dense_home(kind, Path(tmp))
        try:
            index = MilvusDenseIndex(uri, DIM, collection="scale")
            pids = [server.proc.pid] if server else []
            base_rss = _rss(pids)
            q = _vectors(queries, 10**9)
            all_vectors = np.zeros((0, DIM), np.float32)
            rows, have, spent = [], 0, 0.0
            for n in sizes:
                started = time.perf_counter()
                for k in range(have, n, 2000):
                    part = _vectors(min(2000, n - k), k)
                    index.upsert([f"c{i}" for i in range(k, k + len(part))], ["d"] * len(part), part)
                    all_vectors = np.concatenate([all_vectors, part])
                if server:
                    wait_served(index._client, index.collection, n)
                grow = time.perf_counter() - started
                have = n
                exact = [set(np.argpartition(-(all_vectors @ vec), DENSE_K)[:DENSE_K].tolist()) for vec in q]
                row = {"passages": n, "synthetic": True, "add_and_index_s": round(grow, 2), "ef": index.ef_search}
                if server:
                    row.update(_ask(index, q, exact, query_budget))
                    row["rss_mb"] = round(_rss(pids) / 2**20, 1)
                    row["rss_mb_per_million"] = round(max(_rss(pids) - base_rss, 0) / 2**20 * 1e6 / n, 1)
                else:
                    # as a served process finds the file saksi ingest left (no flush: growing segments)…
                    index.close()
                    index = MilvusDenseIndex(uri, DIM, collection="scale")
                    row["as_left"] = _ask(index, q, exact, query_budget)
                    # …and after a flush (sealed, indexed segments)
                    index._client.flush(index.collection)
                    index.close()
                    index = MilvusDenseIndex(uri, DIM, collection="scale")
                    row["after_flush"] = _ask(index, q, exact, query_budget)
                    row["index"] = _index_type(index)
                    row["disk_mb"] = round(sum(f.stat().st_size for f in Path(uri).rglob("*") if f.is_file()) / 2**20, 1)
                    row["disk_mb_per_million"] = round(row["disk_mb"] * 1e6 / n, 1)
                rows.append(row)
                say(f"{kind} {n}: {row}")
                spent += grow
                if spent > budget:
                    return {"rows": rows, "uri": "server" if server else "lite",
                            "stopped": f"past the {budget:.0f}s budget after {n} passages"}
            return {"rows": rows, "uri": "server" if server else "lite"}
        finally:
            try:
                index.close()
            except Exception:
                pass
            if server:
                server.stop()


def bench_real(kinds: list[str], cache: Path, queries: int, say, query_budget: float,
               ef_more: Sequence[int] = ()) -> dict:
    """The dense lanes on REAL vectors: every passage vector an ingest left in a data directory's embedding cache
    (embeddings.sqlite3: the statute book, as far as it is embedded), asked with the legal_qa dev questions embedded
    by the lite embedder. Recall@k against exact search on the same vectors; the server's index also searched with
    each `ef_more` (--ef)."""
    import sqlite3

    from pipeline.backends import make_embedder
    from pipeline.config import load_profile
    from pipeline.index.dense import MilvusDenseIndex

    db = sqlite3.connect(f"file:{cache}?mode=ro", uri=True)
    embedder = make_embedder(load_profile("lite"))
    blobs = [b for (b,) in db.execute("SELECT dense FROM vectors WHERE model = ?", (embedder.name,))]
    db.close()
    vectors = np.stack([np.frombuffer(b, dtype=np.float32) for b in blobs])
    rows = [json.loads(line) for line in (SHARED / "legal_qa" / "dev.jsonl").read_text().splitlines() if line.strip()]
    q = np.asarray(asyncio.run(embedder.embed_queries([r["question"] for r in rows][:queries])), dtype=np.float32)
    exact = [set(np.argpartition(-(vectors @ vec), DENSE_K)[:DENSE_K].tolist()) for vec in q]
    out = {"passages": len(vectors), "queries": len(q), "embedder": embedder.name, "source": str(cache)}
    for kind in kinds:
        with tempfile.TemporaryDirectory() as tmp:
            server, uri = _dense_home(kind, Path(tmp))
            try:
                index = MilvusDenseIndex(uri, vectors.shape[1], collection="real")
                started = time.perf_counter()
                for k in range(0, len(vectors), 2000):
                    part = vectors[k:k + 2000]
                    index.upsert([f"c{i}" for i in range(k, k + len(part))], ["d"] * len(part), part)
                if server:
                    wait_served(index._client, index.collection, len(vectors))
                else:
                    index.close()
                    index = MilvusDenseIndex(uri, vectors.shape[1], collection="real")
                out[kind] = {"add_and_index_s": round(time.perf_counter() - started, 2), "ef": index.ef_search,
                             **_ask(index, q, exact, query_budget)}
                say(f"real vectors, {kind}: {out[kind]}")
                if server and ef_more:  # the same index searched with a larger ef (the HNSW candidate list)
                    configured = index.ef_search
                    out[kind]["ef_more"] = []
                    for ef in ef_more:
                        index.ef_search = ef
                        out[kind]["ef_more"].append({"ef": ef, **_ask(index, q, exact, query_budget)})
                        say(f"real vectors, {kind}, ef {ef}: {out[kind]['ef_more'][-1]}")
                    index.ef_search = configured
                index.close()
            finally:
                if server:
                    server.stop()
    return out


def _dense_home(kind: str, tmp: Path):
    """Where a dense lane's index lives: a Milvus server started in `tmp` ("server"; returned, to stop), or a
    Milvus Lite file there."""
    if kind == "server":
        from tests.milvus_server import MilvusTestServer

        server = MilvusTestServer(tmp / "milvus")
        server.start()
        return server, server.uri
    return None, str(tmp / "milvus.db")


def _ask(index, q: np.ndarray, exact: list[set], budget: float) -> dict:
    """p50/p95 of `search` and recall@k against exact search, over the queries or as many as fit the budget."""
    lat, recall = [], []
    spent = time.perf_counter()
    for vec, truth in zip(q, exact):
        t = time.perf_counter()
        hits = asyncio.run(index.search(vec, DENSE_K))
        lat.append(time.perf_counter() - t)
        recall.append(len({int(h[0][1:]) for h in hits} & truth) / DENSE_K)
        if time.perf_counter() - spent > budget and len(lat) >= 5:
            break
    return {**_timings(lat), f"recall@{DENSE_K}": round(float(np.mean(recall)), 4), "queries": len(lat)}


def _index_type(index) -> str:
    try:
        names = index._client.list_indexes(index.collection)
        desc = index._client.describe_index(index.collection, names[0])
        return str(desc.get("index_type"))
    except Exception as e:  # report, do not fail the bench
        return f"unknown ({type(e).__name__})"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,10000,50000,68332,250000,1000000")
    p.add_argument("--lanes", default="bm25,lite,server")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--lane-budget", type=float, default=1800.0, help="seconds a lane may spend growing")
    p.add_argument("--real-vectors", type=Path, metavar="EMBEDDINGS_SQLITE",
                   help="also ask the dense lanes over the real vectors of this embedding cache "
                        "(e.g. data/collections/statute-book/embeddings.sqlite3)")
    p.add_argument("--query-budget", type=float, default=90.0,
                   help="seconds of queries per size and state (at least 5 queries; the count is recorded)")
    p.add_argument("--ef", default="", help="with --real-vectors: also search the server's index with these ef "
                                              "values (e.g. 256,1024; saksi searches with max(EF_SEARCH, k))")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "search_scale.json")
    args = p.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)

    def say(m: str) -> None:
        print(m, file=sys.stderr, flush=True)

    result = {"what": __doc__.split("\n\n")[0], "command": " ".join(["bench/search_scale.py", *(argv or sys.argv[1:])]),
              "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
              "k": {"dense": DENSE_K, "lexical": LEXICAL_K}, "dim": DIM, "lanes": {}}
    lanes = [x for x in args.lanes.split(",") if x]
    if args.real_vectors:
        result["real"] = bench_real([x for x in lanes if x != "bm25"] or ["lite"], args.real_vectors, args.queries,
                                    say, args.query_budget, [int(x) for x in args.ef.split(",") if x])
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    for lane in lanes if args.sizes else []:
        started = time.perf_counter()
        load = os.getloadavg()[0]
        if lane == "bm25":
            out = bench_bm25(sizes, args.queries, say, args.lane_budget)
        else:
            out = bench_dense(lane, sizes, args.queries, say, args.lane_budget, args.query_budget)
        out["seconds"] = round(time.perf_counter() - started, 1)
        out["load_avg_before"] = round(load, 2)
        result["lanes"][lane] = out
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")  # what is done is kept
    say(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
