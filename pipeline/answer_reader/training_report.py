"""What a training run reports: question-level figures in the training setting, the validation text a person reads,
a progress bar, and the checksums of the files it wrote."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

import numpy as np

from ..progress import ProgressBar
from .examples import Examples


def question_figures(p: np.ndarray, ex: Examples, threshold: float) -> dict:
    """Answer a question when its best sentence reaches `threshold`; right when that sentence holds a gold answer."""
    n = len(ex.qids)
    best = np.full(n, -1.0)
    best_ok = np.zeros(n, bool)
    for i in np.argsort(p, kind="stable"):  # ascending, so the best row of each question is written last
        q = ex.question[i]
        best[q], best_ok[q] = p[i], bool(ex.y[i])
    answered = best >= threshold
    correct = answered & best_ok
    wrong = answered & ~best_ok
    answerable = np.array(ex.answerable)
    return {"questions": n, "answered": int(answered.sum()), "correct": int(correct.sum()),
            "truthfulness": round(float((correct.sum() - wrong.sum()) / max(1, n)), 4),
            "answer_precision": round(float(correct.sum() / max(1, answered.sum())), 4),
            "attributed_accuracy": round(float(correct.sum() / max(1, answerable.sum())), 4)}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def progress_bar(total: int, what: str) -> Callable[[int], None]:
    """A step function drawing the shared progress bar (stderr, terminals only); it closes at `total`."""
    bar = ProgressBar(total, what)
    done = 0

    def step(n: int) -> None:
        nonlocal done
        done += n
        bar.update(done)
        if done >= total:
            bar.close()
    return step


def validation_text(spec: dict, out: Path) -> str:
    t = spec["training"]
    kinds = ", ".join(f"{d} {part['kind']}" for d, part in spec["domains"].items())
    lines = [f"reader weights: {out} ({kinds}; digest {spec['digest']}, {out.stat().st_size / 1e6:.2f} MB)",
             *(f"{d}: trained on {t['questions'][d]} questions, {t['sentences'][d]} candidate answers "
               f"({t['answer_sentences'][d]} answer); compared on validation (mean truthfulness at threshold 0.5): "
               + ", ".join(f"{k} {v:.4f}" for k, v in t["compared"][d].items()) for d in spec["domains"]),
             "validation, each question asked of its passage and its nearest passages (`saksi eval` asks the whole "
             "corpus):",
             f"  {'set':<10} {'threshold':>9} {'answered':>8} {'correct':>7} {'precision':>9} {'attributed':>10} "
             f"{'truthfulness':>12}"]
    for name, per in t["validation"].items():
        for thr, f in per.items():
            lines.append(f"  {name:<10} {thr:>9} {f['answered']:>8} {f['correct']:>7} {f['answer_precision']:>9.3f} "
                         f"{f['attributed_accuracy']:>10.3f} {f['truthfulness']:>12.3f}")
    mined = t.get("mined")
    if mined:
        lines.append(f"questions mined from {mined['laws']} laws: {mined['questions']} "
                     f"(fit / calibrate / validate: {', '.join(str(v) for v in mined['questions_by_part'].values())})")
        for pattern, by_lang in mined["by_pattern"].items():
            lines.append(f"  {pattern:<12} " + ", ".join(f"{lang} {n}" for lang, n in sorted(by_lang.items())))
    return "\n".join(lines)
