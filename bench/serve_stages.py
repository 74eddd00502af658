"""Where a served question's time goes, stage by stage, beside the same questions in process
(lite profile; docs/performance.md, "Where the served time goes").

Both sides answer the same IDK-MRC questions one at a time over the first validation passages
(the corpus of bench/serve_overhead.py). Each answer's trace carries its own stage timings: the
whole orchestrator (`total`), and in the first attempt `retrieve` and `rerank` (inside the
context source: the Retriever when served), `generate` and `verify` (the gates, with the judge);
`context` is the whole context build where it runs, with `plan` (the question's analysis) in it,
and `context_call` the same call as the orchestrator waits for it (served: the difference is the
hop to the Retriever and back).
Served, the client's latency also holds the HTTP proxy and the response; `/healthz` gives the
floor of one HTTP round trip through the proxy and the Ingress. Medians, one run.

    .venv/bin/python bench/serve_stages.py [--questions 40] [--out bench/results/serve_stages.json]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from serve_overhead import build_corpus
from served_process import serve_in_this_process

ROOT = Path(__file__).resolve().parent.parent
STAGES = ("client", "total", "context_call", "context", "plan", "retrieve", "rerank", "generate", "verify")


def stages(trace: dict, client_ms: float) -> dict:
    first = trace["parts"][0]["attempts"][0]["timings_ms"] if trace["parts"] else {}
    rounds = sum(len(p["attempts"]) for p in trace["parts"])
    return {"client": client_ms, "total": trace["timings_ms"]["total"], "rounds": rounds, **first}


def medians(rows: list[dict]) -> dict:
    """Stage medians over the questions answered in one round (one part, no corrective retry), so
    the stages add up; the client's median over every question is given beside them."""
    everyone = statistics.median(r["client"] for r in rows)
    rows = [r for r in rows if r["rounds"] == 1]
    out = {"client_all_questions": round(everyone, 1), "one_round_questions": len(rows)}
    for k in STAGES:
        values = [r[k] for r in rows if k in r]
        out[k] = round(statistics.median(values), 1) if values else None
    known = sum(out[k] or 0 for k in ("context_call", "generate", "verify"))
    out["total_outside_stages"] = round(out["total"] - known, 1)
    out["context_outside_its_stages"] = round(out["context"] - sum(out[k] or 0 for k in ("plan", "retrieve",
                                                                                          "rerank")), 1)
    out["context_hop"] = round(out["context_call"] - out["context"], 1)
    out["client_outside_total"] = round(out["client"] - out["total"], 1)
    return out


def in_process(data: Path, questions: list[str]) -> dict:
    from pipeline.config import load_profile
    from pipeline.corpus import Corpus

    rows = []
    with Corpus(data, load_profile()) as c:
        orch = c.orchestrator(write_traces=True)
        asyncio.run(orch.answer(questions[0]))  # warm-up
        for q in questions:
            t = time.perf_counter()
            r = asyncio.run(orch.answer(q))
            ms = (time.perf_counter() - t) * 1000
            rows.append(stages(json.loads(Path(r.trace_path).read_text()), ms))
    return medians(rows)


def served(data: Path, questions: list[str]) -> dict:
    import ray
    from ray import serve

    base, token = serve_in_this_process(data, "bench/serve_stages.py")

    def ask(q: str, trace: bool) -> tuple[float, dict]:
        body = {"question": q, "options": {"include_trace": trace}}
        req = urllib.request.Request(base + "/v1/answer", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
        t = time.perf_counter()
        with urllib.request.urlopen(req, timeout=300) as r:
            out = json.loads(r.read())
        return (time.perf_counter() - t) * 1000, out

    try:
        ask(questions[0], False)
        ask(questions[1], False)  # warm-up
        rows = [stages(out["trace"], ms) for ms, out in (ask(q, True) for q in questions)]
        out = medians(rows)
        out["client_all_questions_without_trace_in_response"] = round(
            statistics.median(ask(q, False)[0] for q in questions), 1)
        health = []
        for _ in range(40):
            t = time.perf_counter()
            urllib.request.urlopen(base + "/healthz").read()
            health.append((time.perf_counter() - t) * 1000)
        out["healthz_round_trip"] = round(statistics.median(health), 1)
        return out
    finally:
        serve.shutdown()
        ray.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--passages", type=int, default=100)
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "serve_stages.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data, questions = build_corpus(args.passages, args.questions, Path(tmp))
        result = {"questions": len(questions), "passages": args.passages, "unit": "ms, medians",
                  "in_process": in_process(data, questions), "served": served(data, questions)}
    print(json.dumps(result, indent=1))
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
