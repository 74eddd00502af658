"""`saksi train reader`: rebuild the reader's weights from open reading-comprehension data.

Each training question is asked of a small context shaped like the one the generator
reads at run time: its own passage among the passages bm25 finds nearest to it in the
same dataset (for an unanswerable question, its own passage is the near miss it was
written against). Every candidate sentence of that context (the generator's own
candidate rules, coverage pre-filter included) becomes one example, labelled 1 when it
contains a gold answer.

Two models are fitted on 80% of the training questions (chosen by a hash of the id, so
the split never changes): logistic regression and gradient-boosted trees (LightGBM).
Each is calibrated (Platt scaling) on the other 20%, then both are compared on the
validation splits in the same setting; the better truthfulness wins. Everything is
single-threaded and seeded: the same data gives the same weights, byte for byte.
"""
from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..analysis import query_analyzer, weigh, bm25_idf
from ..config import Profile
from ..errors import SaksiError
from ..eval.datasets import EvalSet, contains_answer, load_dataset
from ..ingest.categories import CategoryTagger
from ..progress import ProgressBar
from ..types import ContextItem
from .features import FEATURES, Featurizer, SentenceView
from .model import ReaderModel, digest
from .sentences import candidate_sentences

log = logging.getLogger(__name__)

DISTRACTORS = 5       # passages beside the question's own, as retrieval would bring
CALIBRATION_SHARE = 5  # one question in five calibrates instead of training


@dataclass
class Examples:
    """Candidate sentences of many questions: features, labels, and which question each belongs to."""

    x: np.ndarray
    y: np.ndarray
    question: np.ndarray       # row -> question number
    qids: list[str] = field(default_factory=list)
    answerable: list[bool] = field(default_factory=list)

    def rows(self, mask_questions: np.ndarray) -> "Examples":
        keep = mask_questions[self.question]
        return Examples(self.x[keep], self.y[keep], self.question[keep], self.qids, self.answerable)


class _Pool:
    """A dataset's passages as a bm25 index, and the corpus statistics term weights come from."""

    def __init__(self, evalset: EvalSet, analyzer):
        import bm25s

        self.ids = [p.pid for p in evalset.passages]
        self.text = {p.pid: p.text for p in evalset.passages}
        tokens = [analyzer.tokens(p.text) for p in evalset.passages]
        self._bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        self._bm25.index(tokens, show_progress=False)
        df: dict[str, int] = {}
        for toks in tokens:
            for t in set(toks):
                df[t] = df.get(t, 0) + 1
        self.idf = {t: bm25_idf(d, len(tokens)) for t, d in df.items()}
        self.max_idf = max(self.idf.values(), default=1.0)

    def nearest(self, tokens: Sequence[str], own: str | None, k: int) -> list[str]:
        known = [t for t in tokens if t in self.idf]
        if not known:
            return [own] if own else []
        scores = self._bm25.get_scores(known)
        order = np.lexsort((np.arange(len(scores)), -scores))[: k + 1]
        picked = [self.ids[i] for i in order if scores[i] > 0]
        if own and own not in picked:
            picked = picked[:k] + [own]
        return picked[: k + 1]


def examples_from(datasets: Sequence[Path], profile: Profile, limit: int | None = None,
                  bar: Callable[[int, str], Callable[[int], None]] | None = None) -> Examples:
    """Every candidate sentence of every question of the datasets (in file order)."""
    analyzer = query_analyzer(profile)
    g = profile.settings.generator
    tagger = CategoryTagger(profile.categories)
    featurizer = Featurizer(analyzer.all_tokens, g.label_credit, g.passage_credit)
    xs, ys, qs, qids, answerable = [], [], [], [], []
    for path in datasets:
        evalset = load_dataset(path, limit)
        progress = bar(len(evalset.questions), f"{path.parent.name}/{path.stem} questions") if bar else None
        pool = _Pool(evalset, analyzer.analyzers["id"])
        for q in evalset.questions:
            lang = analyzer.language(q.question)
            terms = weigh(analyzer.term_groups(analyzer.normalise(q.question), lang), pool.idf, pool.max_idf)
            tokens = [tok for t in terms for alt in t.alternatives for tok in alt]
            items = tuple(ContextItem(pid, "", "", pool.text[pid], False, "id", 0.0)
                          for pid in pool.nearest(tokens, q.passage, DISTRACTORS))
            route = profile.routes.route(q.question)
            cands = candidate_sentences(items, g.min_sentence_chars, g.max_quote_chars, tagger, tuple(route.required))
            views = [SentenceView(c.quote, c.item, c.index, items[c.item].text, "") for c in cands]
            x, keep = featurizer.matrix(q.question, terms, views, g.min_coverage)
            n = len(qids)
            qids.append(q.qid)
            answerable.append(q.answerable)
            if len(keep):
                xs.append(x)
                ys.append(np.array([q.answerable and contains_answer(cands[i].quote, q.golds) for i in keep],
                                   dtype=np.float64))
                qs.append(np.full(len(keep), n))
            if progress:
                progress(1)
    if not xs:
        return Examples(np.zeros((0, len(FEATURES))), np.zeros(0), np.zeros(0, np.int64), qids, answerable)
    return Examples(np.vstack(xs), np.concatenate(ys), np.concatenate(qs).astype(np.int64), qids, answerable)


def _in_calibration(qid: str) -> bool:
    return int(hashlib.sha256(qid.encode()).hexdigest(), 16) % CALIBRATION_SHARE == 0


# --- the two models ----------------------------------------------------------------------

def fit_logistic(ex: Examples) -> dict:
    from sklearn.linear_model import LogisticRegression

    mean = ex.x.mean(axis=0)
    scale = ex.x.std(axis=0)
    scale[scale == 0] = 1.0
    m = LogisticRegression(C=1.0, max_iter=2000, solver="lbfgs")
    m.fit((ex.x - mean) / scale, ex.y)
    return {"kind": "logistic", "mean": _r(mean), "scale": _r(scale), "coef": _r(m.coef_[0]),
            "intercept": round(float(m.intercept_[0]), 8)}


# chosen on the validation splits among 7 to 255 leaves (docs/evaluation.md): deeper trees read the
# interactions (question type × what the sentence states × what it misses) that shallow ones cannot
TREE_PARAMS = {"objective": "binary", "learning_rate": 0.03, "num_leaves": 255, "min_data_in_leaf": 100,
               "feature_fraction": 0.8, "bagging_fraction": 0.8, "bagging_freq": 1, "lambda_l2": 1.0,
               "seed": 7, "deterministic": True, "force_row_wise": True, "num_threads": 1, "verbose": -1}
TREE_ROUNDS = 500


def fit_trees(ex: Examples) -> dict:
    import lightgbm as lgb

    booster = lgb.train(TREE_PARAMS, lgb.Dataset(ex.x, ex.y, feature_name=list(FEATURES), free_raw_data=False),
                        num_boost_round=TREE_ROUNDS)
    dump = booster.dump_model()
    trees = [_flatten(t["tree_structure"]) for t in dump["tree_info"]]
    return {"kind": "trees", "base": 0.0, "trees": trees}


def _flatten(root: dict) -> dict:
    """One LightGBM tree as arrays: inner nodes in visit order, leaves numbered, children as ~leaf."""
    feature, threshold, left, right, leaf = [], [], [], [], []
    depth = 0

    def visit(node: dict, d: int) -> int:
        nonlocal depth
        depth = max(depth, d)
        if "leaf_value" in node or "split_feature" not in node:
            leaf.append(round(float(node.get("leaf_value", 0.0)), 8))
            return ~(len(leaf) - 1)
        if node.get("decision_type", "<=") != "<=":
            raise ValueError(f"unsupported split {node.get('decision_type')}")
        k = len(feature)
        feature.append(int(node["split_feature"]))
        threshold.append(float(node["threshold"]))
        left.append(0)
        right.append(0)
        left[k] = visit(node["left_child"], d + 1)
        right[k] = visit(node["right_child"], d + 1)
        return k

    visit(root, 0)
    return {"feature": feature, "threshold": threshold, "left": left, "right": right, "leaf": leaf, "depth": depth}


def _r(a: np.ndarray) -> list[float]:
    return [round(float(v), 8) for v in a]


def calibrate(model: ReaderModel, ex: Examples) -> dict:
    """A smooth, increasing map from raw probability to the observed answer rate on held-out
    questions (Platt scaling on the raw log-odds), tabulated so inference is one np.interp."""
    from sklearn.linear_model import LogisticRegression

    if len(set(ex.y.tolist())) < 2:  # a tiny slice: nothing to calibrate against, keep the raw probability
        return {"x": [0.0, 1.0], "y": [0.0, 1.0], "method": "identity (calibration set holds one class)"}
    raw = np.clip(model.raw_probability(ex.x), 1e-6, 1 - 1e-6)
    logit = np.log(raw / (1 - raw)).reshape(-1, 1)
    platt = LogisticRegression(C=1e6, max_iter=1000).fit(logit, ex.y)
    xs = np.linspace(0.0, 1.0, 201)
    grid = np.log(np.clip(xs, 1e-6, 1 - 1e-6) / (1 - np.clip(xs, 1e-6, 1 - 1e-6))).reshape(-1, 1)
    return {"x": _r(xs), "y": _r(platt.predict_proba(grid)[:, 1]), "method": "platt",
            "slope": round(float(platt.coef_[0][0]), 6), "intercept": round(float(platt.intercept_[0]), 6)}


# --- question-level figures in the training setting ----------------------------------

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


def train_reader(train: Sequence[Path], valid: Sequence[Path], profile: Profile, out: Path,
                 limit: int | None = None, progress: Callable[[str], None] | None = None,
                 bar: Callable[[int, str], Callable[[int], None]] | None = None) -> dict:
    """Build examples, fit both models, calibrate, compare on validation, write the better one."""
    say = progress or log.info
    say(f"reading {len(train)} training and {len(valid)} validation file(s)")
    ex = examples_from(train, profile, limit, bar)
    vex = [examples_from([v], profile, limit, bar) for v in valid]
    cal_q = np.array([_in_calibration(q) for q in ex.qids])
    fit, held = ex.rows(~cal_q), ex.rows(cal_q)
    say(f"{len(fit.y)} training sentences ({int(fit.y.sum())} answer), {len(held.y)} calibration sentences")
    if len(set(fit.y.tolist())) < 2:
        raise SaksiError(f"too little training data: {len(fit.y)} candidate sentences, {int(fit.y.sum())} holding an "
                         "answer; use more passages (a larger --limit)")
    results = []
    for fitter in (fit_logistic, fit_trees):
        spec = {"features": list(FEATURES), **fitter(fit), "calibration": {"x": [0.0, 1.0], "y": [0.0, 1.0]}}
        spec["calibration"] = calibrate(ReaderModel(spec, "training"), held)
        model = ReaderModel(spec, "training")
        figures = {v.parent.name: {t: question_figures(model.probability(e.x), e, t) for t in (0.3, 0.4, 0.5, 0.6)}
                   for v, e in zip(valid, vex)}
        score = float(np.mean([f[0.5]["truthfulness"] for f in figures.values()]))
        say(f"{spec['kind']}: mean validation truthfulness at 0.5 = {score:.4f}")
        results.append((score, spec, figures))
    score, spec, figures = max(results, key=lambda r: r[0])
    spec["digest"] = digest(spec)
    spec["training"] = {
        "data": [{"file": f"{p.parent.name}/{p.name}", "sha256": _sha(p)} for p in train],
        "licences": {"idk_mrc": "CC BY-SA 4.0", "tydiqa_id": "Apache-2.0"},
        "questions": len(ex.qids), "sentences": len(ex.y), "answer_sentences": int(ex.y.sum()), "limit": limit,
        "compared": {r[1]["kind"]: r[0] for r in results},
        "validation": {name: {str(t): f for t, f in per.items()} for name, per in figures.items()},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(spec, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    return spec


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
    lines = [f"reader weights: {out} ({spec['kind']}, digest {spec['digest']}, {out.stat().st_size / 1e6:.2f} MB)",
             f"trained on {t['questions']} questions, {t['sentences']} candidate sentences "
             f"({t['answer_sentences']} hold an answer)",
             "compared on validation (mean truthfulness at threshold 0.5): "
             + ", ".join(f"{k} {v:.4f}" for k, v in t["compared"].items()),
             "validation, each question asked of its passage and its nearest passages (`saksi eval` asks the whole "
             "corpus):",
             f"  {'set':<10} {'threshold':>9} {'answered':>8} {'correct':>7} {'precision':>9} {'attributed':>10} "
             f"{'truthfulness':>12}"]
    for name, per in t["validation"].items():
        for thr, f in per.items():
            lines.append(f"  {name:<10} {thr:>9} {f['answered']:>8} {f['correct']:>7} {f['answer_precision']:>9.3f} "
                         f"{f['attributed_accuracy']:>10.3f} {f['truthfulness']:>12.3f}")
    return "\n".join(lines)
