"""What Ray Serve costs and buys, measured side by side on one machine (lite profile).

1. The same questions through the in-process pipeline and through the served app over
   HTTP, one at a time and with C concurrent callers: throughput and p50/p95 latency, and
   the Serve overhead as ratios.
2. The embedder deployment with `@serve.batch` (max_batch_size from configs/serve/lite.yaml)
   against the same deployment with max_batch_size 1, under the same concurrency.

The corpus is the first passages of the shared IDK-MRC validation set (real data, read in
place). Ratios from one run are what to compare: this machine is shared and noisy. The served
app is asked with a reader key, under configs/serve/lite.yaml with the per-key rate limits and
answer budget raised (this measures the pipeline's serving cost, not the rate limiter).

    .venv/bin/python bench/serve_overhead.py [--passages 100] [--questions 60] [--concurrency 8]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from served_process import pct, serve_in_this_process

ROOT = Path(__file__).resolve().parent.parent
DATASET = ROOT.parent / "shared" / "data" / "idk_mrc" / "valid.json"


def summary(latencies: list[float], wall: float) -> dict:
    return {"n": len(latencies), "throughput_qps": round(len(latencies) / wall, 2),
            "p50_ms": round(1000 * statistics.median(latencies), 1), "p95_ms": round(1000 * pct(latencies, 95), 1)}


def build_corpus(passages: int, n_questions: int, work: Path) -> tuple[Path, list[str]]:
    from pipeline.config import load_profile
    from pipeline.corpus import Corpus
    from pipeline.eval.datasets import load_dataset
    from pipeline.eval.runner import write_passages

    ds = load_dataset(DATASET, limit=passages)
    write_passages(ds, work / "passages")
    with Corpus(work / "data", load_profile()) as c:
        c.ingest([work / "passages"])
    return work / "data", [q.question for q in ds.questions][:n_questions]


def in_process(data: Path, questions: list[str], concurrency: int) -> dict:
    from pipeline.config import load_profile
    from pipeline.corpus import Corpus

    out = {}
    with Corpus(data, load_profile()) as c:
        orch = c.orchestrator(write_traces=True)
        asyncio.run(orch.answer(questions[0]))  # warm-up

        async def timed(q: str) -> float:
            t = time.perf_counter()
            await orch.answer(q)
            return time.perf_counter() - t

        async def run(c_: int) -> tuple[list[float], float]:
            sem = asyncio.Semaphore(c_)

            async def one(q):
                async with sem:
                    return await timed(q)
            t = time.perf_counter()
            lat = await asyncio.gather(*(one(q) for q in questions))
            return list(lat), time.perf_counter() - t

        for c_ in (1, concurrency):
            lat, wall = asyncio.run(run(c_))
            out[f"c{c_}"] = summary(lat, wall)
    print("in process:", json.dumps(out), flush=True)
    return out


def served(data: Path, questions: list[str], concurrency: int) -> tuple[dict, dict]:
    import ray
    from ray import serve

    from serve.config import Batch
    from serve.deployments import EmbedderDeployment

    base, token = serve_in_this_process(data, "bench/serve_overhead.py")
    url = f"{base}/v1/answer"

    def ask(q: str) -> float:
        req = urllib.request.Request(url, data=json.dumps({"question": q}).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
        t = time.perf_counter()
        with urllib.request.urlopen(req, timeout=300) as r:
            assert r.status == 200
            r.read()
        return time.perf_counter() - t

    ask(questions[0])  # warm-up
    out = {}
    for c_ in (1, concurrency):
        t = time.perf_counter()
        with ThreadPoolExecutor(c_) as pool:
            lat = list(pool.map(ask, questions))
        out[f"c{c_}"] = summary(lat, time.perf_counter() - t)

    print("served:", json.dumps(out), flush=True)
    serve.delete("saksi")  # free its CPUs for the embedder comparison
    # batched vs unbatched embedder, same deployment code, same concurrency
    texts = [f"query: {q}" for q in questions] * 4
    emb = {}
    for label, size in (("batched", 32), ("unbatched", 1)):
        handle = serve.run(EmbedderDeployment.options(name=f"Embedder-{label}", num_replicas=1,
                                                      max_ongoing_requests=128,
                                                      ray_actor_options={"num_cpus": 1})
                           .bind("lite", Batch(max_batch_size=size, batch_wait_timeout_s=0.005)),
                           name=f"emb-{label}", route_prefix=None)
        handle.embed_queries.remote([texts[0]]).result()

        async def fire(h=handle) -> tuple[list[float], float]:
            sem = asyncio.Semaphore(concurrency * 4)

            async def one(x):
                async with sem:
                    t0 = time.perf_counter()
                    await h.embed_queries.remote([x])
                    return time.perf_counter() - t0
            t = time.perf_counter()
            lat = await asyncio.gather(*(one(x) for x in texts))
            return list(lat), time.perf_counter() - t
        lat, wall = asyncio.run(fire())
        emb[label] = {**summary(lat, wall), "max_batch_size": size, "callers": concurrency * 4}
        serve.delete(f"emb-{label}")
    serve.shutdown()
    ray.shutdown()
    return out, emb


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passages", type=int, default=100)
    ap.add_argument("--questions", type=int, default=60)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "serve_overhead.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="saksi-bench-") as tmp:
        data, questions = build_corpus(args.passages, args.questions, Path(tmp))
        local = in_process(data, questions, args.concurrency)
        http, emb = served(data, questions, args.concurrency)
    ratios = {c: {"throughput_served_over_in_process": round(http[c]["throughput_qps"] / local[c]["throughput_qps"], 2),
                  "p50_served_over_in_process": round(http[c]["p50_ms"] / local[c]["p50_ms"], 2),
                  "p95_served_over_in_process": round(http[c]["p95_ms"] / local[c]["p95_ms"], 2)} for c in local}
    result = {"questions": len(questions), "passages": args.passages, "concurrency": args.concurrency,
              "in_process": local, "served_http": http, "ratios": ratios, "embedder": emb,
              "embedder_batched_over_unbatched_throughput":
                  round(emb["batched"]["throughput_qps"] / emb["unbatched"]["throughput_qps"], 2)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
