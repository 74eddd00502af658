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

    .venv/bin/python bench/regulation_thresholds.py RUN_DIR --agreement LEAVE_OUT_RUN_DIR

`--agreement` asks whether *agreement* should raise a regulation answer's confidence: the reader's best
candidate lies in the passage the retrieval ranked first; and *consensus* besides: that passage was ranked
first by the dense and by the lexical search alike (trace candidates' `dense_rank` and `lexical_rank`). It fits
P(right Pasal) as a logistic over the reader's log-odds, agreement and consensus (with `--chapter`, also whether the
question asks about the chapter of the candidate's passage: generator.chapter), leave-one-regulation-out,
on RUN_DIR's questions together with those of a `saksi eval --leave-out LAW` run (LEAVE_OUT_RUN_DIR: their regulation is gone, so every answer there is
from another regulation), and prints what each threshold on that confidence gives on the held-out
regulation, with the share of the left-out law's questions it would answer from another regulation.

    .venv/bin/python bench/regulation_thresholds.py RUN_DIR --agreement LEAVE_OUT_RUN_DIR --chapter \
        --neighbours NEIGHBOURS_RUN_DIR

`--neighbours` scores the same questions asked among neighbours (`saksi eval --corpus` on the corpus
bench/legal_neighbours.py builds): each regulation's questions there by the fit on the other regulations of
RUN_DIR and LEAVE_OUT_RUN_DIR (the neighbours never enter a fit), and every question by the weights
configs/lite.yaml holds now, so a refit is judged where other regulations compete for the answer, beside the
default it would replace. With `--fit-neighbours` the neighbours' questions enter the fits too (still leave one
regulation out: a regulation's questions, alone and among neighbours, are scored by a fit on the other regulations'
questions of all three runs), so the weights learn what agreement is worth where other laws compete.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Iterator

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.config import load_profile  # noqa: E402
from pipeline.definitions import asked_term, unasked_entry  # noqa: E402
from pipeline.eval.datasets import Reference  # noqa: E402
from pipeline.eval.receipts import cite_hits, parse_receipt, same_law  # noqa: E402
from pipeline.answer_reader import ELISION  # noqa: E402

GRID = [round(0.05 * k, 2) for k in range(1, 20)]


def referenced_attempts(run: Path) -> Iterator[tuple[dict, Reference, dict]]:
    """Each question of a `saksi eval` run that has a gold reference and a trace: (its row, its reference, its
    first attempt as the trace recorded it)."""
    for line in (run / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rec = row.get("receipt")
        if not rec or not row.get("trace"):
            continue
        ref = Reference(rec["reference"]["law"], tuple(rec["reference"]["pasal"]), rec["reference"]["ayat"],
                        rec["reference"]["huruf"])
        trace = json.loads((run / row["trace"]).read_text(encoding="utf-8"))
        yield row, ref, trace["parts"][0]["attempts"][0]


def pasal_hit(chunk: dict, ref: Reference) -> bool:
    """The trace's chunk cites the gold Pasal of the gold law (pipeline/eval/receipts.py)."""
    return bool(cite_hits(parse_receipt(f"{chunk['path']} › {chunk['location']}", chunk["location"]), ref)["pasal"])


def fit_logistic(x: "np.ndarray", y: "np.ndarray", ridge: float) -> "np.ndarray":
    """Logistic regression by Newton's method with a ridge (the intercept, a column of x, included)."""
    w = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-x @ w))
        w -= np.linalg.solve((x * (p * (1 - p))[:, None]).T @ x + ridge * np.eye(len(w)), x.T @ (p - y) + ridge * w)
    return w


def _points(run: Path) -> list[dict]:
    """One point per referenced question: its law, best candidate's probability, retrieval score, hit."""
    w = load_profile("lite").settings.confidence.weights
    out = []
    for row, ref, attempt in referenced_attempts(run):
        chunks = {c["chunk"]["chunk_id"]: c for c in attempt["candidates"]}
        scores = (attempt.get("generator_output") or {}).get("scores") or []
        point = {"id": row["id"], "law": ref.law, "p": 0.0, "read": 0.0, "conf": 0.0, "hit": False, "agree": False,
                 "consensus": False, "neural": None, "chapter": False, "alt": None}
        if scores and scores[0]["probability"] is not None:
            _read_into(point, scores[0], chunks, attempt, ref, w, row["question"], best=True)
            # the best candidate of a passage whose chapter the question asks about (generator.chapter): read beside
            # the best, with agreement's chapter term; the question's answer is the larger reading of the two
            marked = next((sc for sc in scores if sc.get("chapter")), None)
            if marked is not None:
                if marked is scores[0]:
                    point["chapter"] = True
                else:
                    alt = dict(point, alt=None, chapter=True)
                    if _read_into(alt, marked, chunks, attempt, ref, w, row["question"], best=False):
                        point["alt"] = alt
        out.append(point)
    return out


def _read_into(point: dict, score: dict, chunks: dict, attempt: dict, ref: Reference, w: dict, question: str,
               best: bool) -> bool:
    """A scored candidate's reading, hit and agreement flags into `point` (`best`: it is the reader's best, the one
    agreement and consensus are judged on; a definitions entry for a question that asks no meaning never agrees, as
    in the generator: definitions.unasked_entry); False, `point` untouched, when its chunk is not among the
    candidates."""
    cand = chunks.get(score["chunk_id"])
    if not cand:
        return False
    r = cand.get("rerank_score") or 0.0
    p = score["probability"]
    composite = w["judge"] * 1.0 + w["retrieval"] * r + w["generator"] * p
    # the reader's own probability, before a configured agreement calibration re-read it
    read = score.get("read") if score.get("read") is not None else p
    agree = (best and bool(attempt["context"]) and score["chunk_id"] == attempt["context"][0]
             and not unasked_entry(asked_term(question), cand["chunk"]["location"], score["quote"].split(ELISION)))
    point.update(p=p, read=read, conf=min(composite, p), hit=pasal_hit(cand["chunk"], ref), agree=agree,
                 consensus=agree and cand.get("dense_rank") == 1 and cand.get("lexical_rank") == 1,
                 neural=score.get("neural"))  # the cross-encoder's log-odds (generator.cross_encoder)
    return True


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


def _fitted(points: list[dict], chapter: bool) -> list[dict]:
    """The row each question is fitted on: with the chapter term, a chapter's candidate where the question has one
    (it is the reading that decides once the term is on), else the reader's best."""
    return [q["alt"] if chapter and q["alt"] is not None else q for q in points]


def _agreement_fit(points: list[dict], neural: bool = False, chapter: bool = False) -> "np.ndarray":
    """Logistic regression (Newton, a small ridge) of the hit on (log-odds, agreement, consensus, [cross-encoder],
    [chapter], 1)."""
    rows = _fitted(points, chapter)
    return fit_logistic(_agreement_x(rows, neural, chapter), np.array([float(q["hit"]) for q in rows]), 0.1)


def _agreement_x(points: list[dict], neural: bool = False, chapter: bool = False) -> "np.ndarray":
    p = np.clip([q["read"] for q in points], 1e-4, 1 - 1e-4)
    cols = [np.log(p / (1 - p)), [float(q["agree"]) for q in points], [float(q["consensus"]) for q in points]]
    if neural:  # a question with no candidate read keeps the term at 0 (it is refused anyway)
        cols.append([q["neural"] if q["neural"] is not None else 0.0 for q in points])
    if chapter:
        cols.append([float(q["chapter"]) for q in points])
    return np.column_stack(cols + [np.ones(len(points))])


def _answer(q: dict, w: "np.ndarray", neural: bool, chapter: bool) -> tuple[float, bool]:
    """A question's reading under the fit `w` and whether it is at the gold Pasal: the larger of the reader's own
    reading and the agreement reading (reader/model.with_agreement), over its best candidate and, with the chapter
    term, its chapter's candidate."""
    rows = [q] + ([q["alt"]] if chapter and q["alt"] is not None else [])
    again = 1 / (1 + np.exp(-_agreement_x(rows, neural, chapter) @ w))
    value, hit = max(((max(r["read"], float(v)), r["hit"]) for r, v in zip(rows, again)), key=lambda t: t[0])
    return value, hit


def _agreement(points: list[dict], absent: list[dict], neural: bool = False, chapter: bool = False,
               neighbours: list[dict] | None = None, fit_neighbours: bool = False) -> None:
    """Held-out figures of the agreement confidence, each regulation scored by a fit on the others (and, given the
    same questions asked among neighbours, those too); then the fit on all of them (what configs/lite.yaml's
    generator.agreement holds) and, among neighbours, the configured weights beside it."""
    agreeing = [q for q in points if q["agree"]]
    print(f"agreement (reader's best in the retrieval's first passage): {len(agreeing)} of {len(points)} questions, "
          f"Pasal precision {sum(q['hit'] for q in agreeing) / max(1, len(agreeing)):.3f}")
    both = [q for q in points if q["consensus"]]
    print(f"consensus (that passage first in the dense and the lexical search alike): {len(both)} questions, "
          f"Pasal precision {sum(q['hit'] for q in both) / max(1, len(both)):.3f}")
    if chapter:
        marked = [q for q in _fitted(points, True) if q["chapter"]]
        print(f"chapter (the question asks about a chapter of a passage read): {len(marked)} questions, Pasal "
              f"precision {sum(q['hit'] for q in marked) / max(1, len(marked)):.3f}; "
              f"{sum(1 for q in _fitted(absent, True) if q['chapter'])} of the left-out law's questions")
    scored = []
    fitted_on = points + absent + ((neighbours or []) if fit_neighbours else [])
    for law in sorted({q["law"] for q in points}):
        train = [q for q in fitted_on if not same_law(q["law"], law)]
        w = _agreement_fit(train, neural, chapter)
        mine = [q for q in points if same_law(q["law"], law)]
        gone = [q for q in absent if same_law(q["law"], law)]
        among = [q for q in neighbours or [] if same_law(q["law"], law)]
        for group, qs in (("present", mine), ("absent", gone), ("neighbours", among)):
            scored += [(group, dict(q, hit=hit), v) for q in qs for v, hit in [_answer(q, w, neural, chapter)]]
    n_present = sum(1 for g, _, _ in scored if g == "present")
    n_absent = sum(1 for g, _, _ in scored if g == "absent")
    print("  leave one regulation out, confidence t -> answered, Pasal precision; left-out law answered from another")
    for t in (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9):
        got = [q for g, q, v in scored if g == "present" and v >= t]
        wrong = sum(1 for g, _, v in scored if g == "absent" and v >= t)
        among = [q for g, q, v in scored if g == "neighbours" and v >= t]
        print(f"  t {t:.2f}: {len(got):>4} ({len(got) / max(1, n_present):6.1%})  "
              f"{sum(q['hit'] for q in got) / max(1, len(got)):.3f};  {wrong}/{n_absent}"
              + (f";  among neighbours {len(among):>4} ({len(among) / len(neighbours):6.1%})  "
                 f"{sum(q['hit'] for q in among) / max(1, len(among)):.3f}" if neighbours else ""))
    w = _agreement_fit(fitted_on, neural, chapter)
    print(f"  fitted on all{' (with the neighbours)' if fit_neighbours else ''}: "
          f"agreement: {{logit: {w[0]:.3f}, agree: {w[1]:.3f}, consensus: {w[2]:.3f}, "
          + (f"neural: {w[3]:.3f}, " if neural else "") + (f"chapter: {w[-2]:.3f}, " if chapter else "")
          + f"intercept: {w[-1]:.3f}}}")
    if neighbours:
        a = load_profile("lite").settings.generator.agreement
        configured = np.array([a.logit, a.agree, a.consensus] + ([a.neural] if neural else [])
                              + ([a.chapter] if chapter else []) + [a.intercept]) if a is not None else None
        for name, weights in (("fitted on all", w), ("configs/lite.yaml", configured)):
            if weights is None:
                continue
            line = []
            for label, qs in (("alone", points), ("among neighbours", neighbours)):
                got = [hit for q in qs for v, hit in [_answer(q, weights, neural, chapter)] if v >= 0.8]
                line.append(f"{label} {len(got)} ({len(got) / len(qs):.1%}) at {sum(got) / max(1, len(got)):.3f}")
            print(f"  {name} at 0.80 (in sample): " + "; ".join(line))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--target", type=float, default=0.95, help="Pasal precision to reach (default 0.95)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--agreement", type=Path, metavar="LEAVE_OUT_RUN_DIR",
                    help="also fit the agreement confidence (see above) with this leave-out run's questions")
    ap.add_argument("--neural", action="store_true",
                    help="with --agreement: the cross-encoder's log-odds of the best candidate as a fourth term (both "
                         "runs made with generator.cross_encoder set, so their traces carry it)")
    ap.add_argument("--chapter", action="store_true",
                    help="with --agreement: whether the question asks about the chapter of the candidate's passage as "
                         "a further term (both runs made with generator.chapter set, so their traces mark it)")
    ap.add_argument("--neighbours", type=Path, metavar="NEIGHBOURS_RUN_DIR",
                    help="with --agreement: also score the same questions asked among neighbours (see above)")
    ap.add_argument("--fit-neighbours", action="store_true",
                    help="with --neighbours: their questions enter the fits too (see above)")
    args = ap.parse_args()
    if args.fit_neighbours and not args.neighbours:
        print("regulation_thresholds: --fit-neighbours fits on the --neighbours run: it needs one", file=sys.stderr)
        return 2
    if args.neighbours and not args.agreement:
        print("regulation_thresholds: --neighbours scores the agreement fit: it needs --agreement", file=sys.stderr)
        return 2
    for run in (args.run, args.agreement, args.neighbours):
        if run is not None and not (run / "questions.jsonl").is_file():
            print(f"regulation_thresholds: {run} is not a `saksi eval` output (no questions.jsonl)", file=sys.stderr)
            return 2
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
    if args.agreement:
        absent = _points(args.agreement)
        if args.neural and not any(q["neural"] is not None for q in points + absent):
            print("regulation_thresholds: --neural, but no trace records the cross-encoder's reading "
                  "(run the eval with generator.cross_encoder set)", file=sys.stderr)
            return 2
        if args.chapter and not any(q["chapter"] or q["alt"] for q in points + absent):
            print("regulation_thresholds: --chapter, but no trace marks a chapter's candidate (run the eval with "
                  "generator.chapter set)", file=sys.stderr)
            return 2
        _agreement(points, absent, args.neural, args.chapter, _points(args.neighbours) if args.neighbours else None,
                   args.fit_neighbours)
    if args.out:
        args.out.write_text(json.dumps({"run": str(args.run), "target": args.target, "curve": curve,
                                        "answer_threshold": answer, "tinggi_boundary": bands}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
