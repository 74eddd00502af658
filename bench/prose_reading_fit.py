"""Fitting the prose reading (generator.prose_reading, config.ProseReading): the reader's best prose candidates read
again by the embedder, from `saksi eval` runs of prose QA (SQuAD-style datasets with unanswerable questions).

    .venv/bin/python bench/prose_reading_fit.py split DATASET OUT.json
    .venv/bin/python bench/prose_reading_fit.py fit FIT_RUN [FIT_RUN ...] [--measure RUN ...] [--candidates 3]

`split` writes the part of a training split the reader's trees never saw: the questions training holds out to
calibrate the reader (reader/training.in_calibration), with every passage of the split kept as the corpus. A run
of `saksi eval OUT.json` on it reads questions whose reader probabilities are honest (a run on the questions the
trees were grown on would read them as surer than they are, and the fit would learn to trust the reader too much).

`fit`: for every question's last attempt (the one whose answer was shown), the reader's `--candidates` best prose
candidates (trace `generator_output.scores`, by the reader's own reading: `read`, else `probability`) are embedded
here with the lite profile's embedder, beside the question. Each candidate gets the reader's log-odds, its cosine
with the question, its lead (its cosine minus the best cosine of a candidate from another passage), whether the
embedder read it closest, and whether it lies in the retrieval's first passage; it is right when the question is
answerable and the candidate contains a gold answer (pipeline/eval/datasets.contains_answer). A logistic regression
of right on those terms is fitted over every candidate of the FIT_RUNs (the calibration parts of the training
splits: both IDK-MRC, which has unanswerable questions, and TyDi-ID, which has none, so neither set's wish wins
alone). A question counts as answered at t when its best candidate's reading reaches t, and as right when that
candidate is. Printed per run and t: right / wrong answers, truthfulness ((right - wrong) / questions), accuracy
over answerable questions and precision, by the run's own reading and by the prose reading; then the fit, in
configs/lite.yaml's form. `--measure` runs (the validation splits) are only scored, never fitted.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.backends import embedder_name  # noqa: E402
from pipeline.config import load_profile  # noqa: E402
from pipeline.eval.datasets import EvalDataError, contains_answer, load_dataset  # noqa: E402
from pipeline.answer_reader.model import leads, prose_reading  # noqa: E402
from pipeline.answer_reader.training import in_calibration  # noqa: E402
from pipeline.types import is_provision  # noqa: E402
from crosslingual_fit import embed_cosines  # noqa: E402  (bench/, beside it)
from regulation_thresholds import fit_logistic  # noqa: E402

THRESHOLDS = (0.4, 0.5, 0.6, 0.7)
TERMS = ("logit", "similarity", "lead", "closest", "first")


def split(dataset: Path, out: Path) -> int:
    """The calibration part of a SQuAD-style training split, every passage kept."""
    try:
        kept = {q.qid for q in load_dataset(dataset).questions if in_calibration(q.qid)}
        rows = json.loads(dataset.read_text(encoding="utf-8"))
        if not isinstance(rows, list):
            raise EvalDataError(f"{dataset} is not a SQuAD-style list of passages with their questions")
    except EvalDataError as e:
        print(f"prose_reading_fit: {e}", file=sys.stderr)
        return 2
    part = [dict(ctx, qas=[qa for qa in ctx["qas"] if str(qa.get("id")) in kept]) for ctx in rows]
    out.write_text(json.dumps(part, ensure_ascii=False), encoding="utf-8")
    print(f"{out}: {sum(len(c['qas']) for c in part)} of {sum(len(c['qas']) for c in rows)} questions "
          f"(the reader's calibration part), {len(part)} passages")
    return 0


def _questions(run: Path, k: int) -> list[dict]:
    """Per question: answerable, its reader's k best prose candidates (quote, reader's probability, passage, first
    passage, right)."""
    out = []
    for line in (run / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        cands = []
        trace = run / row["trace"] if row.get("trace") else None
        if trace is not None and not trace.is_file():
            raise FileNotFoundError(f"{run}: question {row['id']}'s trace {row['trace']} is gone (pruned?); run the "
                                    "eval again")
        if trace is not None:
            attempt = json.loads(trace.read_text(encoding="utf-8"))["parts"][0]["attempts"][-1]
            chunks = {c["chunk"]["chunk_id"]: c["chunk"] for c in attempt["candidates"]}
            scores = []
            for s in (attempt.get("generator_output") or {}).get("scores") or []:
                chunk = chunks.get(s["chunk_id"])
                p = s.get("read") if s.get("read") is not None else s.get("probability")
                if chunk is None or p is None or is_provision(chunk["location"], tuple(chunk.get("spans") or ())):
                    continue
                scores.append((p, s))
            scores.sort(key=lambda t: -t[0])
            for p, s in scores[:k]:
                cands.append({"quote": s["quote"], "p": p, "run_p": s["probability"], "item": s["chunk_id"],
                              "first": bool(attempt["context"]) and s["chunk_id"] == attempt["context"][0],
                              "hit": bool(row["answerable"] and contains_answer(s["quote"], row["golds"]))})
        out.append({"id": row["id"], "question": row["question"], "answerable": row["answerable"], "cands": cands})
    return out


def _x(q: dict) -> np.ndarray:
    """The terms of each candidate of a question (TERMS, then 1), as the generator computes them."""
    cands = q["cands"]
    cos = np.array([c["cos"] for c in cands])
    p = np.clip([c["p"] for c in cands], 1e-4, 1 - 1e-4)
    return np.column_stack([np.log(p / (1 - p)), cos, leads(cos, np.array([c["item"] for c in cands])),
                            (cos >= cos.max()).astype(float), [float(c["first"]) for c in cands], np.ones(len(cands))])


def _fit(questions: list[dict]) -> np.ndarray:
    qs = [q for q in questions if q["cands"]]
    return fit_logistic(np.vstack([_x(q) for q in qs]), np.array([float(c["hit"]) for q in qs for c in q["cands"]]),
                        0.1)


def _answers(questions: list[dict], w: np.ndarray | None) -> list[tuple[float, bool]]:
    """Per question: its best candidate's reading (the run's own with w None, else the prose reading through the
    generator's function) and whether that candidate is right."""
    out = []
    for q in questions:
        if not q["cands"]:
            out.append((0.0, False))
            continue
        if w is None:
            p = np.array([c["run_p"] for c in q["cands"]])
        else:
            x = _x(q)
            p = prose_reading(np.array([c["p"] for c in q["cands"]]), x[:, 1], np.array([c["item"] for c in q["cands"]]),
                              np.array([c["first"] for c in q["cands"]]), *w)
        k = int(np.argmax(p))
        out.append((float(p[k]), q["cands"][k]["hit"]))
    return out


def _report(name: str, questions: list[dict], w: np.ndarray) -> None:
    n = len(questions)
    answerable = sum(q["answerable"] for q in questions) or 1
    print(f"{name}: {n} questions ({answerable} answerable)")
    for t in THRESHOLDS:
        line = []
        for label, got in (("own", _answers(questions, None)), ("prose reading", _answers(questions, w))):
            right = sum(1 for v, hit in got if v >= t and hit)
            wrong = sum(1 for v, hit in got if v >= t and not hit)
            line.append(f"{label} {right}/{wrong} truth {(right - wrong) / n:.4f} acc {right / answerable:.3f} "
                        f"prec {right / max(1, right + wrong):.3f}")
        print(f"  t {t:.2f}: " + " | ".join(line))


def fit(runs: list[Path], measure: list[Path], k: int) -> int:
    for run in (*runs, *measure):
        if not (run / "questions.jsonl").is_file():
            print(f"prose_reading_fit: {run} is not a `saksi eval` output (no questions.jsonl)", file=sys.stderr)
            return 2
    try:
        fitted = {run: _questions(run, k) for run in runs}
        measured = {run: _questions(run, k) for run in measure}
    except (FileNotFoundError, ValueError, KeyError) as e:  # a run cut short or edited by hand
        print(f"prose_reading_fit: {e}", file=sys.stderr)
        return 2
    everything = [q for qs in (*fitted.values(), *measured.values()) for q in qs]
    if not any(q["cands"] for qs in fitted.values() for q in qs):
        print("prose_reading_fit: no prose candidate with a reading in the fit runs", file=sys.stderr)
        return 2
    embed_cosines(everything)
    w = _fit([q for qs in fitted.values() for q in qs])
    for group, runs_of in (("fitted", fitted), ("measured", measured)):
        for run, qs in runs_of.items():
            _report(f"{group} {run}", qs, w)
    name = embedder_name(load_profile("lite").settings.embedder)
    print(f"  fitted: prose_reading: {{embedder: {name}, candidates: {k}, "
          + ", ".join(f"{t}: {v:.3f}" for t, v in zip(TERMS, w)) + f", intercept: {w[-1]:.3f}}}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("split", help="write the reader's calibration part of a training split")
    sp.add_argument("dataset", type=Path)
    sp.add_argument("out", type=Path)
    fp = sub.add_parser("fit", help="fit the prose reading on runs of calibration parts")
    fp.add_argument("runs", type=Path, nargs="+")
    fp.add_argument("--measure", type=Path, nargs="*", default=[])
    fp.add_argument("--candidates", type=int, default=3)
    args = ap.parse_args()
    if args.cmd == "split":
        return split(args.dataset, args.out)
    return fit(args.runs, args.measure, args.candidates)


if __name__ == "__main__":
    sys.exit(main())
