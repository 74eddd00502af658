"""Fitting the cross-lingual reading (generator.cross_lingual, config.CrossLingualCalibration) from `saksi eval`
runs of English questions with gold references, leave-one-regulation-out.

    .venv/bin/python bench/crosslingual_fit.py RUN_DIR --absent LEAVE_OUT_RUN_DIR [LEAVE_OUT_RUN_DIR ...]

RUN_DIR: `saksi eval bench/legal_en/questions.jsonl --out RUN_DIR` (English questions over the legal_qa
development regulations, bench/legal_en/README.md). Each LEAVE_OUT_RUN_DIR: the same with `--leave-out LAW`, so
its questions' regulation is gone and every candidate is from another regulation (a wrong answer if shown).

For every question's first attempt, the reader's `--candidates` best regulation candidates (trace
`generator_output.scores` with the reader's own reading `read`) are embedded here with the lite profile's
embedder, beside the question; each candidate gets its cosine, its lead (its cosine minus the best cosine of a
candidate from another passage) and whether it lies in the retrieval's first passage, and is right when its chunk
is the gold Pasal of the gold law (pipeline/eval/receipts.py). The question's point is its candidate the embedder
puts closest to it: a logistic regression of that candidate being right on (cosine - CENTER, lead, first passage,
1) is fitted on the other regulations' questions (present and absent runs) and scored on each regulation in turn.
A question counts as answered at t when that candidate's reading (the larger of the run's probability and the
cross-lingual one) reaches t, and as right when the candidate is. Printed: per t, answered share and Pasal
precision of the present questions by the run's own reading and by the cross-lingual one, and the absent questions
answered (all wrong); then the fit on everything, in configs/lite.yaml's form.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.backends import embedder_name, make_embedder  # noqa: E402
from pipeline.config import load_profile  # noqa: E402
from pipeline.eval.receipts import same_law  # noqa: E402
from pipeline.answer_reader.model import leads  # noqa: E402
from regulation_thresholds import fit_logistic, pasal_hit, referenced_attempts  # noqa: E402  (bench/, beside it)

CENTER = 0.85    # the cosine at which the similarity term is zero (config.CrossLingualCalibration.center)
SPREAD = 0.05    # cosine terms are fitted per SPREAD (the ridge weighs them like the others); printed per unit
THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)


def _questions(run: Path, k: int) -> list[dict]:
    """Per referenced question: its law and its reader's k best regulation candidates (quote, run probability,
    first passage, passage, hit)."""
    out = []
    for row, ref, attempt in referenced_attempts(run):
        chunks = {c["chunk"]["chunk_id"]: c["chunk"] for c in attempt["candidates"]}
        scores = [s for s in (attempt.get("generator_output") or {}).get("scores") or []
                  if s.get("read") is not None and s["chunk_id"] in chunks]  # `read`: a regulation candidate
        scores.sort(key=lambda s: -s["read"])
        cands = []
        for s in scores[:k]:
            cands.append({"quote": s["quote"], "p": s["probability"], "item": s["chunk_id"],
                          "first": bool(attempt["context"]) and s["chunk_id"] == attempt["context"][0],
                          "hit": pasal_hit(chunks[s["chunk_id"]], ref)})
        out.append({"id": row["id"], "law": ref.law, "question": row["question"], "cands": cands})
    return out


def embed_cosines(questions: list[dict]) -> None:
    """Each candidate's cosine with its question (`cos`), embedded with the lite profile's embedder as the generator
    embeds them (the question as a query, the quotes as passages). Questions: {"question", "cands": [{"quote"}]}."""
    embedder = make_embedder(load_profile("lite"))

    async def run() -> None:
        for q in questions:
            if not q["cands"]:
                continue
            qv = np.asarray(await embedder.embed_queries([q["question"]]), dtype=np.float64)[0]
            vs = np.asarray(await embedder.embed_passages([c["quote"] for c in q["cands"]]), dtype=np.float64)
            for c, x in zip(q["cands"], (vs @ qv) / (np.linalg.norm(vs, axis=1) * np.linalg.norm(qv))):
                c["cos"] = float(x)
    asyncio.run(run())


def _measure(questions: list[dict]) -> None:
    """Each candidate's cosine with its question, and its lead over the best other passage's candidate."""
    embed_cosines(questions)
    for q in questions:
        if q["cands"]:
            ahead = leads(np.array([c["cos"] for c in q["cands"]]), np.array([c["item"] for c in q["cands"]]))
            for c, x in zip(q["cands"], ahead):
                c["lead"] = float(x)


def _x(cands: list[dict]) -> np.ndarray:
    return np.array([[(c["cos"] - CENTER) / SPREAD, c["lead"] / SPREAD, float(c["first"]), 1.0] for c in cands]
                    ).reshape(-1, 4)


def _closest(q: dict) -> dict | None:
    return max(q["cands"], key=lambda c: c["cos"]) if q["cands"] else None


def _fit(questions: list[dict]) -> np.ndarray:
    """Logistic regression (Newton, a ridge) of the closest candidate's hit on (cosine, lead, first passage, 1)."""
    cands = [c for q in questions if (c := _closest(q))]
    return fit_logistic(_x(cands), np.array([float(c["hit"]) for c in cands]), 0.5)


def _answer(q: dict, w: np.ndarray) -> tuple[float, bool]:
    """The question's closest candidate after the re-reading: (its probability, right)."""
    c = _closest(q)
    if c is None:
        return 0.0, False
    return max(c["p"], float(1 / (1 + np.exp(-_x([c]) @ w))[0])), c["hit"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--absent", type=Path, nargs="*", default=[], metavar="LEAVE_OUT_RUN_DIR")
    ap.add_argument("--candidates", type=int, default=12, help="regulation candidates embedded (default 12)")
    args = ap.parse_args()
    for run in (args.run, *args.absent):
        if not (run / "questions.jsonl").is_file():
            print(f"crosslingual_fit: {run} is not a `saksi eval` output (no questions.jsonl)", file=sys.stderr)
            return 2
    present = _questions(args.run, args.candidates)
    absent = [q for run in args.absent for q in _questions(run, args.candidates)]
    if not present:
        print(f"crosslingual_fit: no referenced questions with traces in {args.run}", file=sys.stderr)
        return 2
    _measure(present + absent)
    base = [(max((c["p"] for c in q["cands"]), default=0.0),
             bool(q["cands"]) and max(q["cands"], key=lambda c: c["p"])["hit"]) for q in present]
    scored = []
    for law in sorted({q["law"] for q in present}):
        w = _fit([q for q in present + absent if not same_law(q["law"], law)])
        scored += [("present", *_answer(q, w)) for q in present if same_law(q["law"], law)]
        scored += [("absent", *_answer(q, w)) for q in absent if same_law(q["law"], law)]
    n_present, n_absent = len(present), sum(1 for g, _, _ in scored if g == "absent")
    print(f"{n_present} questions ({n_absent} more with their regulation left out); {args.candidates} candidates each")
    print("  t: the run's own reading -> answered, Pasal precision | cross-lingual, leave one regulation out -> "
          "answered, Pasal precision; left-out questions answered from another regulation")
    for t in THRESHOLDS:
        own = [hit for v, hit in base if v >= t]
        got = [hit for g, v, hit in scored if g == "present" and v >= t]
        wrong = sum(1 for g, v, _ in scored if g == "absent" and v >= t)
        print(f"  t {t:.2f}: {len(own):>3} ({len(own) / n_present:6.1%}) {sum(own) / max(1, len(own)):.3f} | "
              f"{len(got):>3} ({len(got) / n_present:6.1%}) {sum(got) / max(1, len(got)):.3f}; {wrong}/{n_absent}")
    w = _fit(present + absent)
    name = embedder_name(load_profile("lite").settings.embedder)
    print(f"  fitted on all: cross_lingual: {{embedder: {name}, candidates: {args.candidates}, "
          f"similarity: {w[0] / SPREAD:.3f}, center: {CENTER}, lead: {w[1] / SPREAD:.3f}, "
          f"agree: {w[2]:.3f}, intercept: {w[3]:.3f}}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
