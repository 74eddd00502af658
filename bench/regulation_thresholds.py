"""Choosing the regulation domain's answer threshold and TINGGI boundary from a `saksi eval` run,
leave-one-regulation-out, so that no regulation's questions choose the value they are measured at.

    .venv/bin/python bench/regulation_thresholds.py RUN_DIR [--target 0.95] [--out FILE.json]

RUN_DIR is the output of `saksi eval DATASET` on a JSONL dataset whose rows carry a gold `reference`
(../shared/data/legal_qa/dev.jsonl: the development split, for choosing only). Every question's first
attempt recorded the reader's scored candidates (trace `generator_output.scores`, best first, with their
chunk); the run's own threshold does not matter. For each threshold t the question counts as answered when
its best candidate reaches t, and as right when that candidate's chunk is the gold Pasal of the gold law
(pipeline/eval/receipts.py). The claim's confidence is recomputed the way gates.compute_confidence does
with the lite judge's verdict on an exact quote (entailed, 1.0): min(composite, the reader's probability).

Printed: answered rate and Pasal precision per threshold over all questions; then, for each regulation,
the lowest threshold whose precision reaches --target on the *other* regulations (at least 10 answered),
and what that threshold gives on the held-out one; the same for the TINGGI boundary. The pooled held-out
figures are what a new regulation of the same kind can expect.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.config import load_profile  # noqa: E402
from pipeline.eval.datasets import Reference  # noqa: E402
from pipeline.eval.receipts import cite_hits, parse_receipt, same_law  # noqa: E402

GRID = [round(0.05 * k, 2) for k in range(1, 20)]


def _points(run: Path) -> list[dict]:
    """One point per referenced question: its law, best candidate's probability, retrieval score, hit."""
    w = load_profile("lite").settings.confidence.weights
    out = []
    for line in (run / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rec = row.get("receipt")
        if not rec or not row.get("trace"):
            continue
        ref = Reference(rec["reference"]["law"], tuple(rec["reference"]["pasal"]), rec["reference"]["ayat"],
                        rec["reference"]["huruf"])
        trace = json.loads((run / row["trace"]).read_text(encoding="utf-8"))
        attempt = trace["parts"][0]["attempts"][0]
        chunks = {c["chunk"]["chunk_id"]: c for c in attempt["candidates"]}
        scores = (attempt.get("generator_output") or {}).get("scores") or []
        point = {"id": row["id"], "law": ref.law, "p": 0.0, "conf": 0.0, "hit": False}
        if scores and scores[0]["probability"] is not None:
            best = scores[0]
            cand = chunks.get(best["chunk_id"])
            if cand:
                chunk = cand["chunk"]
                cite = parse_receipt(f"{chunk['path']} › {chunk['location']}", chunk["location"])
                hit = bool(cite_hits(cite, ref)["pasal"])
                r = cand.get("rerank_score") or 0.0
                p = best["probability"]
                composite = w["judge"] * 1.0 + w["retrieval"] * r + w["generator"] * p
                point.update(p=p, conf=min(composite, p), hit=hit)
        out.append(point)
    return out


def _at(points: list[dict], t: float, key: str = "p") -> tuple[int, int]:
    answered = [x for x in points if x[key] >= t]
    return len(answered), sum(x["hit"] for x in answered)


def _choose(points: list[dict], target: float, key: str, grid: list[float]) -> float | None:
    """The lowest threshold whose Pasal precision reaches the target, with at least 10 answered."""
    for t in grid:
        n, hits = _at(points, t, key)
        if n >= 10 and hits / n >= target:
            return t
    return None


def _loro(points: list[dict], target: float, key: str, grid: list[float]) -> dict:
    laws = sorted({x["law"] for x in points})
    held, per = [], {}
    for law in laws:
        rest = [x for x in points if not same_law(x["law"], law)]
        mine = [x for x in points if same_law(x["law"], law)]
        t = _choose(rest, target, key, grid)
        if t is None:
            per[law] = {"threshold": None}
            continue
        n, hits = _at(mine, t, key)
        held.append((len(mine), n, hits))
        per[law] = {"threshold": t, "questions": len(mine), "answered": n, "hits": hits,
                    "precision": round(hits / n, 4) if n else None}
    q = sum(h[0] for h in held)
    n = sum(h[1] for h in held)
    hits = sum(h[2] for h in held)
    return {"per_law": per, "pooled": {"questions": q, "answered": n, "answered_rate": round(n / q, 4) if q else None,
                                       "precision": round(hits / n, 4) if n else None},
            "all_laws": _choose(points, target, key, grid)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--target", type=float, default=0.95, help="Pasal precision to reach (default 0.95)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    points = _points(args.run)
    if not points:
        print(f"regulation_thresholds: no referenced questions with traces in {args.run}", file=sys.stderr)
        return 2
    total = len(points)
    curve = []
    print(f"{total} questions; best candidate's probability t -> answered, Pasal precision")
    for t in GRID:
        n, hits = _at(points, t)
        curve.append({"threshold": t, "answered": n, "rate": round(n / total, 4),
                      "precision": round(hits / n, 4) if n else None})
        print(f"  t {t:.2f}: {n:>4} ({n / total:6.1%})  {hits / n if n else float('nan'):.3f}")
    answer = _loro(points, args.target, "p", GRID)
    bands = _loro(points, args.target, "conf", [round(0.5 + 0.01 * k, 2) for k in range(0, 46)])
    for name, res in (("answer threshold", answer), ("TINGGI boundary", bands)):
        print(f"{name}, leave one regulation out (target {args.target}):")
        for law, r in res["per_law"].items():
            print(f"  {law:<12} chosen on the others {r['threshold']}: answered {r.get('answered')}/"
                  f"{r.get('questions')}, precision {r.get('precision')}")
        print(f"  pooled held-out: {res['pooled']}; chosen on all: {res['all_laws']}")
    if args.out:
        args.out.write_text(json.dumps({"run": str(args.run), "target": args.target, "curve": curve,
                                        "answer_threshold": answer, "tinggi_boundary": bands}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
