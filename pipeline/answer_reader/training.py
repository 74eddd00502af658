"""`saksi train reader`: rebuild the reader's weights from open reading-comprehension data
and from question/answer pairs mined from real laws.

Each training question is asked of a small context shaped like the one the generator
reads at run time: its own passage among the passages bm25 finds nearest to it in the
same dataset (for an unanswerable question, its own passage is the near miss it was
written against). Every candidate answer of that context (reader/answers.py: the
generator's own candidate rules, coverage pre-filter included) becomes one example.

- **Prose** (the IDK-MRC and TyDi-ID train splits, and any other Indonesian reading-comprehension
  set given): a candidate is labelled 1 when it contains a gold answer.
- **English** (an English reading-comprehension set given, e.g. XQuAD's: the committed weights read
  it so that an English question of an English record is not read outside the training): labelled
  as prose, its passages read in English, its questions split by a hash of their id, 70% to fit,
  20% to calibrate, 10% to validate; a scorer of its own, so the Indonesian prose scorer is exactly
  what the Indonesian sets make it.
- **Regulations** (reader/mining.py: questions mined from the laws of `peraturan/uu.tar.xz`,
  each asked of its own chunk among the five chunks of all the laws bm25 finds nearest): 1 for
  the unit the question was mined from; a sentence candidate's question is also answered by
  a unit no more than half as long again that holds it; a larger unit holding the answer is 0
  (the list when one entry was asked: a lawyer cites the innermost unit); the same words in
  another law are left out (neither right nor wrong); everything else is 0.
  The laws are split by a hash of their name: 70% to fit, 20% to calibrate, 10% to validate.

Two models are fitted on each domain's fitting questions (prose: 80%, by a hash of the id): logistic
regression and gradient-boosted trees (LightGBM). Each is calibrated (Platt scaling) per
domain — prose on the other 20% of the prose questions, regulations on the calibration laws
— then both are compared on the validation sets in the same setting; the better mean
truthfulness wins. Everything is single-threaded and seeded: the same data gives the same
weights, byte for byte.
"""
from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..analysis import query_analyzer, weigh, bm25_idf
from ..config import Profile
from ..errors import SaksiError
from ..eval.datasets import EvalSet, answer_key, contains_answer, load_dataset
from ..categories import CategoryTagger
from ..ingest.chunker import Chunker
from ..text import detect_language
from ..types import ContextItem
from .answers import AnswerCandidate, answer_candidates
from .features import FEATURES, Featurizer, answer_view
from .forked import forked_map
from .mining import PATTERNS, Law, MinedQuestion, Translator, context_item, law_names, mine_law, read_laws
from .model import ENGLISH, ReaderModel, competition, digest
from .examples import Examples
from .training_report import _sha, question_figures

log = logging.getLogger(__name__)

DISTRACTORS = 5       # passages beside the question's own, as retrieval would bring
CALIBRATION_SHARE = 5  # one question in five calibrates instead of training


def _bm25_index(tokens: list[list[str]]):
    """A bm25 index of analysed passages (Lucene's BM25, as the lexical lane), their idf, the highest idf."""
    import bm25s

    index = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    index.index(tokens, show_progress=False)
    df: dict[str, int] = {}
    for toks in tokens:
        for t in set(toks):
            df[t] = df.get(t, 0) + 1
    idf = {t: bm25_idf(d, len(tokens)) for t, d in df.items()}
    return index, idf, max(idf.values(), default=1.0)


def _with_own(picked: list, own, k: int) -> list:
    """The k+1 nearest, the question's own passage among them. When bm25 missed it, it takes a place
    chosen by a hash of it, not always the last: a reader must not learn that the last passage of a
    context is the one that answers (at run time the reranker, not bm25, orders the context)."""
    if own is None or own in picked[: k + 1]:
        return picked[: k + 1]
    at = int(hashlib.sha256(f"place:{own}".encode()).hexdigest(), 16) % (min(k, len(picked)) + 1)
    out = picked[:k]
    out.insert(at, own)
    return out


class _Pool:
    """A dataset's passages as a bm25 index, and the corpus statistics term weights come from."""

    def __init__(self, evalset: EvalSet, analyzer):
        self.ids = [p.pid for p in evalset.passages]
        self.text = {p.pid: p.text for p in evalset.passages}
        self._bm25, self.idf, self.max_idf = _bm25_index([analyzer.tokens(p.text) for p in evalset.passages])

    def nearest(self, tokens: Sequence[str], own: str | None, k: int) -> list[str]:
        known = [t for t in tokens if t in self.idf]
        if not known:
            return [own] if own else []
        scores = self._bm25.get_scores(known)
        order = np.lexsort((np.arange(len(scores)), -scores))[: k + 1]
        picked = [self.ids[i] for i in order if scores[i] > 0]
        return _with_own(picked, own, k)


def examples_from(datasets: Sequence[Path | EvalSet], profile: Profile, limit: int | None = None,
                  bar: Callable[[int, str], Callable[[int], None]] | None = None) -> Examples:
    """Every candidate sentence of every question of the datasets (files, or sets already read with the same
    `limit`), in order."""
    analyzer = query_analyzer(profile)
    g = profile.settings.generator
    tagger = CategoryTagger(profile.categories)
    featurizer = Featurizer(analyzer.all_tokens, g.label_credit, g.passage_credit)
    xs, ys, qs, ds, qids, answerable = [], [], [], [], [], []
    for dataset in datasets:
        evalset = dataset if isinstance(dataset, EvalSet) else load_dataset(dataset, limit)
        path = Path(evalset.path)
        progress = bar(len(evalset.questions), f"{path.parent.name}/{path.stem} questions") if bar else None
        passages_lang = dataset_language(evalset)  # an English set's passages are read by the English analyser
        pool = _Pool(evalset, analyzer.analyzers[passages_lang])
        for q in evalset.questions:
            lang = analyzer.language(q.question)
            terms = weigh(analyzer.term_groups(analyzer.normalise(q.question), lang), pool.idf, pool.max_idf)
            tokens = [tok for t in terms for alt in t.alternatives for tok in alt]
            items = tuple(ContextItem(pid, "", "", pool.text[pid], False, passages_lang, 0.0)
                          for pid in pool.nearest(tokens, q.passage, DISTRACTORS))
            route = profile.routes.route(q.question)
            cands = answer_candidates(items, g.min_sentence_chars, g.max_quote_chars, tagger, tuple(route.required),
                                      g.max_unit_chars)
            views = [answer_view(c, items[c.item]) for c in cands]
            x, keep = featurizer.matrix(q.question, terms, views, g.min_coverage)
            n = len(qids)
            qids.append(q.qid)
            answerable.append(q.answerable)
            if len(keep):
                xs.append(x)
                ys.append(np.array([q.answerable and contains_answer(cands[i].quote, q.golds) for i in keep],
                                   dtype=np.float64))
                qs.append(np.full(len(keep), n))
                ds.append(np.array([cands[i].item for i in keep], dtype=np.int64))  # each passage its own document
            if progress:
                progress(1)
    if not xs:
        return Examples(np.zeros((0, len(FEATURES))), np.zeros(0), np.zeros(0, np.int64), qids, answerable,
                        np.zeros(0, np.int64))
    return Examples(np.vstack(xs), np.concatenate(ys), np.concatenate(qs).astype(np.int64), qids, answerable,
                    np.concatenate(ds))


PROSE_LICENCES = {"idk_mrc": "CC BY-SA 4.0", "tydiqa_id": "Apache-2.0",
                  "xquad": "CC BY-SA 4.0 (XQuAD, github google-deepmind/xquad; SQuAD v1.1's English paragraphs)"}


def prose_source(path: Path) -> str:
    """Which reading-comprehension set a training file is: its folder in the shared data (idk_mrc/train.json), else
    the first part of its name (training-data/xquad.en.json: xquad)."""
    return path.parent.name if path.parent.name in PROSE_LICENCES else path.name.split(".")[0]


ENGLISH_PARTS = (("fit", 7), ("calibrate", 2), ("validate", 1))  # tenths of an English set's questions, by id


def english_part(qid: str) -> str:
    """Which part of the English scorer's training a question serves (an English set comes without its own
    validation split): fit, calibrate or validate, fixed by a hash of its id."""
    k = int(hashlib.sha256(f"english:{qid}".encode()).hexdigest(), 16) % 10
    for part, tenths in ENGLISH_PARTS:
        if k < tenths:
            return part
        k -= tenths
    raise AssertionError("the parts cover ten tenths")


def dataset_language(evalset: EvalSet) -> str:
    """The language of a dataset's passages ('id' or 'en'), told from its first passages."""
    return detect_language(" ".join(p.text for p in evalset.passages[:20]))


def in_calibration(qid: str) -> bool:
    """A prose question held out of the trees to calibrate them (one in CALIBRATION_SHARE, by a hash of its id): the
    reader's readings of these are honest, so later fits over its readings use them (bench/prose_reading_fit.py)."""
    return int(hashlib.sha256(qid.encode()).hexdigest(), 16) % CALIBRATION_SHARE == 0


# --- regulations: questions mined from laws ------------------------------------------------

LAW_PARTS = (("fit", 7), ("calibrate", 2), ("validate", 1))  # tenths of the laws, by a hash of the law's name
LAW_LICENCE = "Indonesian statutes: not subject to copyright (UU 28/2014, Art. 42)"


def law_part(name: str) -> str:
    """Which part of the training a law serves: fit, calibrate or validate (fixed by its name)."""
    k = int(hashlib.sha256(f"law:{name}".encode()).hexdigest(), 16) % 10
    for part, tenths in LAW_PARTS:
        if k < tenths:
            return part
        k -= tenths
    return LAW_PARTS[-1][0]


class _ChunkPool:
    """Every chunk of the laws read as a bm25 index (title, heading, location and text, as ingest
    indexes them), and the corpus statistics term weights come from."""

    def __init__(self, laws: Sequence[Law], analyzer):
        self.chunks = [c for law in laws for c in law.chunks]
        self.where = {c.chunk_id: i for i, c in enumerate(self.chunks)}
        self._bm25, self.idf, self.max_idf = _bm25_index(
            [analyzer.tokens(f"{c.title} {c.heading} {c.location} {c.text}") for c in self.chunks])

    def context(self, tokens: Sequence[str], own: str, k: int) -> list[int]:
        """The k chunks bm25 ranks first, the question's own among them (last when bm25 misses it)."""
        known = [t for t in tokens if t in self.idf]
        picked: list[int] = []
        if known:
            scores = self._bm25.get_scores(known)
            top = np.argpartition(-scores, min(k + 1, len(scores) - 1))[: k + 1]
            top = sorted(top.tolist(), key=lambda i: (-scores[i], i))
            picked = [i for i in top if scores[i] > 0]
        return _with_own(picked, self.where[own], k)


def _mined_label(c: AnswerCandidate, item: ContextItem, q: MinedQuestion, core: str) -> float | None:
    """1: the unit the question was mined from (for a sentence's question, also a unit at most half
    as long again that holds it); 0: a larger unit that holds it (the list when one entry was asked,
    the Pasal when one ayat was: a lawyer cites the innermost unit), and everything else; None: the
    same words in another chunk (a law that restates another: neither right nor wrong)."""
    same = item.chunk_id == q.chunk_id
    if same and c.segments == q.segments:
        return 1.0
    if core not in f" {answer_key(c.quote)} ":
        return 0.0
    if not same:
        return None
    return 1.0 if q.kind in ("sentence", "ayat") and len(c.quote) <= 1.5 * len(q.answer) else 0.0


def _answer_core(q: MinedQuestion, text: str) -> str:
    """What a candidate must hold to answer: an item's own words (its second piece, after the
    lead-in), else the whole unit (a chapter question has none: its label reads the heading)."""
    if not q.segments:
        return " "
    a, b = q.segments[1] if q.kind == "item" and len(q.segments) > 1 else (q.segments[0][0], q.segments[-1][1])
    return f" {answer_key(text[a:b])} "


class _LawQuestions:
    """What asking one mined question needs: the pool, the analysers, the candidate rules. Built once,
    then read by worker processes forked from the builder (so each question is worked out the same way
    whichever process asks it)."""

    def __init__(self, profile: Profile, pool: "_ChunkPool"):
        self.profile = profile
        self.g = profile.settings.generator
        self.analyzer = query_analyzer(profile)
        self.tagger = CategoryTagger(profile.categories)
        self.featurizer = Featurizer(self.analyzer.all_tokens, self.g.label_credit, self.g.passage_credit)
        self.pool = pool

    def ask(self, q: MinedQuestion) -> tuple[str, tuple[ContextItem, ...], list[AnswerCandidate], np.ndarray,
                                           np.ndarray, list[float | None]]:
        """One mined question asked as the generator would be: (its language, the context items, the candidates,
        the features of those reaching min_coverage and their indices, and each one's label: None = left out)."""
        a, g, pool = self.analyzer, self.g, self.pool
        lang = a.language(q.question)
        terms = weigh(a.term_groups(a.normalise(q.question), lang), pool.idf, pool.max_idf)
        tokens = [tok for t in terms for alt in t.alternatives for tok in alt]
        chunks = [pool.chunks[i] for i in pool.context(tokens, q.chunk_id, DISTRACTORS)]
        items = tuple(context_item(c) for c in chunks)
        own = next(c for c in chunks if c.chunk_id == q.chunk_id)
        core = _answer_core(q, own.text)
        route = self.profile.routes.route(q.question)
        cands = answer_candidates(items, g.min_sentence_chars, g.max_quote_chars, self.tagger, tuple(route.required),
                                  g.max_unit_chars)
        views = [answer_view(c, items[c.item]) for c in cands]
        x, keep_rows = self.featurizer.matrix(q.question, terms, views, g.min_coverage)
        if q.kind == "chapter":  # any provision of the chapter answers a question about the chapter
            labels = [float(items[cands[i].item].document == own.title
                            and items[cands[i].item].heading.split(" › ")[0] == q.answer) for i in keep_rows]
        else:
            labels = [_mined_label(cands[i], items[cands[i].item], q, core) for i in keep_rows]
        return lang, items, cands, x, keep_rows, labels

    def rows(self, q: MinedQuestion) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
        """(language, features, labels, documents) of one question's candidates (rows left out of training dropped)."""
        lang, items, cands, x, keep_rows, labels = self.ask(q)
        used = [k for k, y in enumerate(labels) if y is not None]
        codes: dict[str, int] = {}
        docs = np.array([codes.setdefault(items[cands[keep_rows[k]].item].document, len(codes)) for k in used],
                        dtype=np.int64)
        return lang, x[used], np.array([labels[k] for k in used], dtype=np.float64), docs


def _ask_batch(asker: _LawQuestions,
               batch: list[MinedQuestion]) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    return [asker.rows(q) for q in batch]


def _spread(archive: Path, limit: int) -> Callable[[str], bool]:
    """A slice of `limit` laws spread over the years: every n-th law of the archive."""
    names = law_names(archive)
    return set(names[::max(1, len(names) // max(1, limit))][:limit]).__contains__


def law_examples(archives: Path | Sequence[Path], profile: Profile, limit: int | None = None,
                 bar: Callable[[int, str], Callable[[int], None]] | None = None,
                 say: Callable[[str], None] | None = None, workers: int | None = None) -> tuple[dict[str, Examples], dict]:
    """Mined regulation questions as examples, by part of the training (fit, calibrate, validate),
    and a description of what was mined (counts per pattern and language, five examples each).
    The questions are asked in `workers` forked processes (default: the CPUs this process may use);
    the rows come back in question order, so the result does not depend on how many."""
    chunker = Chunker(profile.settings.chunking.max_chars)
    laws: list[Law] = []
    for archive in ([archives] if isinstance(archives, Path) else archives):
        laws.extend(read_laws(archive, chunker, keep=None if limit is None else _spread(archive, limit)))
    (say or log.info)(f"{len(laws)} laws read, {sum(len(x.chunks) for x in laws)} chunks")
    analyzer = query_analyzer(profile)
    pool = _ChunkPool(laws, analyzer.analyzers["id"])
    tr = Translator(profile.glossary, analyzer.analyzers["id"])
    mined = [(law_part(law.name), q) for law in laws for q in mine_law(law, profile, tr)]
    progress = bar(len(mined), "mined law questions") if bar else None
    answered = forked_map(_ask_batch, _LawQuestions(profile, pool), [q for _, q in mined], batch=50, workers=workers,
                          done=progress)
    rows: dict[str, tuple[list, list, list, list, list, list]] = {p: ([], [], [], [], [], []) for p, _ in LAW_PARTS}
    counts: dict[str, dict[str, int]] = {}
    samples: dict[str, list[dict]] = {}
    for (part, q), (lang, x, y, docs) in zip(mined, answered):
        counts.setdefault(q.pattern, {}).setdefault(lang, 0)
        counts[q.pattern][lang] += 1
        xs, ys, qs, ds, qids, answerable = rows[part]
        n = len(qids)
        qids.append(q.qid)
        answerable.append(True)
        if len(y):
            xs.append(x)
            ys.append(y)
            qs.append(np.full(len(y), n))
            ds.append(docs)
        if len(samples.setdefault(q.pattern, [])) < 5 and part == "fit" and \
                int(hashlib.sha256(q.qid.encode()).hexdigest(), 16) % 7 == 0:
            samples[q.pattern].append({"question": q.question, "law": q.law, "kind": q.kind, "answer": q.answer[:300]})
    out = {}
    for part, (xs, ys, qs, ds, qids, answerable) in rows.items():
        if xs:
            out[part] = Examples(np.vstack(xs), np.concatenate(ys), np.concatenate(qs).astype(np.int64), qids,
                                 answerable, np.concatenate(ds))
        else:
            out[part] = Examples(np.zeros((0, len(FEATURES))), np.zeros(0), np.zeros(0, np.int64), qids, answerable,
                                 np.zeros(0, np.int64))
    info = {"laws": len(laws), "laws_by_part": {p: sum(law_part(x.name) == p for x in laws) for p, _ in LAW_PARTS},
            "questions": len(mined), "questions_by_part": {p: len(rows[p][4]) for p, _ in LAW_PARTS},
            "by_pattern": {p: counts.get(p, {}) for p in PATTERNS}, "examples": samples}
    return out, info


def merge(*parts: Examples) -> Examples:
    """Several example sets as one (question numbers kept apart)."""
    xs, ys, qs, ds, qids, answerable = [], [], [], [], [], []
    for ex in parts:
        xs.append(ex.x)
        ys.append(ex.y)
        qs.append(ex.question + len(qids))
        ds.append(ex.doc if ex.doc is not None else ex.x[:, FEATURES.index("item_rank")].astype(np.int64))
        qids.extend(ex.qids)
        answerable.extend(ex.answerable)
    return Examples(np.vstack(xs), np.concatenate(ys), np.concatenate(qs).astype(np.int64), qids, answerable,
                    np.concatenate(ds))


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
# boosters grown on the same rows with different bagging seeds, their log-odds averaged: one booster's answers move
# by a few questions in a hundred when three rows of its data change (docs/evaluation.md, issue 25, fifteenth pass);
# the average of two moves less. Stored as one forest, each leaf divided by their number, so reading is unchanged.
TREE_SEEDS = (7, 8)


def fit_trees(ex: Examples) -> dict:
    import lightgbm as lgb

    data = lgb.Dataset(ex.x, ex.y, feature_name=list(FEATURES), free_raw_data=False)
    trees = []
    for seed in TREE_SEEDS:
        booster = lgb.train({**TREE_PARAMS, "seed": seed}, data, num_boost_round=TREE_ROUNDS)
        trees += [_flatten(t["tree_structure"], 1.0 / len(TREE_SEEDS)) for t in booster.dump_model()["tree_info"]]
    return {"kind": "trees", "base": 0.0, "trees": trees, "boosters": len(TREE_SEEDS)}


def _flatten(root: dict, scale: float = 1.0) -> dict:
    """One LightGBM tree as arrays: inner nodes in visit order, leaves numbered, children as ~leaf."""
    feature, threshold, left, right, leaf = [], [], [], [], []
    depth = 0

    def visit(node: dict, d: int) -> int:
        nonlocal depth
        depth = max(depth, d)
        if "leaf_value" in node or "split_feature" not in node:
            leaf.append(round(float(node.get("leaf_value", 0.0)) * scale, 8))
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
    """The share of candidates that answer, on held-out questions, as a logistic over the raw
    log-odds and the candidate's lead over the best candidate of the other passages of its own
    document (Platt scaling with the competition beside the score): smooth, increasing in the score."""
    from sklearn.linear_model import LogisticRegression

    if len(set(ex.y.tolist())) < 2:  # a tiny slice: nothing to calibrate against, keep the raw probability
        return {"x": [0.0, 1.0], "y": [0.0, 1.0], "method": "identity (calibration set holds one class)"}
    raw = np.clip(model.raw_probability(ex.x), 1e-6, 1 - 1e-6)
    logit = np.log(raw / (1 - raw))
    margin = competition(raw, ex.x[:, FEATURES.index("item_rank")], ex.question, ex.doc)
    fit = LogisticRegression(C=1e6, max_iter=1000).fit(np.column_stack([logit, margin]), ex.y)
    return {"method": "platt-margin", "coef": [round(float(v), 6) for v in fit.coef_[0]],
            "intercept": round(float(fit.intercept_[0]), 6), "rows": int(len(ex.y))}


# --- question-level figures in the training setting ----------------------------------


def train_reader(train: Sequence[Path], valid: Sequence[Path], profile: Profile, out: Path,
                 limit: int | None = None, progress: Callable[[str], None] | None = None,
                 bar: Callable[[int, str], Callable[[int], None]] | None = None, laws: Path | Sequence[Path] | None = None,
                 law_limit: int | None = None, workers: int | None = None) -> dict:
    """Build examples; per domain (prose, regulation) fit both models on its questions, calibrate, compare
    on its validation sets and keep the better; write both domains' scorers.
    `laws`: a `uu.tar.xz` (or several archives: the laws, then a `pp.tar.xz` of scripts/pp_archive.py) to mine
    regulation questions from (None: prose only), asked in `workers` processes (the weights do not depend on how
    many)."""
    say = progress or log.info
    laws = [laws] if isinstance(laws, Path) else list(laws or [])
    say(f"reading {len(train)} training and {len(valid)} validation file(s)"
        + (f" and the regulations of {', '.join(map(str, laws))}" if laws else ""))
    # an English set teaches the English scorer alone: the Indonesian prose scorer stays what its own data makes it
    sets = {p: load_dataset(p, limit) for p in train}  # each read once: its language decides its scorer
    languages = {p: dataset_language(e) for p, e in sets.items()}
    ex = examples_from([sets[p] for p in train if languages[p] != "en"], profile, limit, bar)
    vex = [examples_from([v], profile, limit, bar) for v in valid]
    cal_q = np.array([in_calibration(q) for q in ex.qids])
    prose_fit, prose_cal = ex.rows(~cal_q), ex.rows(cal_q)
    regulation, mined = (law_examples(laws, profile, law_limit, bar, say, workers) if laws else ({}, None))
    fits = {"prose": prose_fit, "regulation": regulation["fit"] if regulation else prose_fit}
    held = {"prose": prose_cal, "regulation": regulation["calibrate"] if regulation else prose_cal}
    validation = {"prose": [(v.parent.name, e) for v, e in zip(valid, vex)],
                  "regulation": [("laws", regulation["validate"])] if regulation else []}
    english_sets = [p for p in train if languages[p] == "en"]
    if english_sets:
        en = examples_from([sets[p] for p in english_sets], profile, limit, bar)
        part = np.array([english_part(q) for q in en.qids])
        fits[ENGLISH], held[ENGLISH] = en.rows(part == "fit"), en.rows(part == "calibrate")
        validation[ENGLISH] = [(prose_source(english_sets[0]) if len(english_sets) == 1 else "english",
                                en.only(part == "validate"))]
    say(", ".join(f"{d}: {len(e.y)} training candidates ({int(e.y.sum())} answer), {len(held[d].y)} calibrating"
                  for d, e in fits.items()))
    for d, e in fits.items():
        if len(set(e.y.tolist())) < 2 or len(e.y) < 2 * TREE_PARAMS["min_data_in_leaf"]:
            raise SaksiError(f"too little {d} training data: {len(e.y)} candidate answers, {int(e.y.sum())} holding "
                             "an answer; use more passages (a larger --limit)")
    domains, compared, figures = {}, {}, {}
    for d in fits:  # each domain's scorer: both models fitted on its questions, the better one kept
        results = []
        for fitter in (fit_logistic, fit_trees):
            part = {**fitter(fits[d]), "calibration": {"x": [0.0, 1.0], "y": [0.0, 1.0]}}
            part["calibration"] = calibrate(ReaderModel({"features": list(FEATURES), **part}, "training"), held[d])
            model = ReaderModel({"features": list(FEATURES), **part}, "training")
            got = {name: {t: question_figures(model.probability(e.x, e.question, e.doc), e, t)
                          for t in (0.3, 0.4, 0.5, 0.6, 0.7)} for name, e in validation[d]}
            score = float(np.mean([f[0.5]["truthfulness"] for f in got.values()])) if got else 0.0
            say(f"{d} {part['kind']}: mean validation truthfulness at 0.5 = {score:.4f}")
            results.append((score, part, got))
        score, part, got = max(results, key=lambda r: r[0])
        domains[d] = part
        compared[d] = {r[1]["kind"]: r[0] for r in results}
        figures.update(got)
    spec = {"features": list(FEATURES), "domains": domains}
    spec["digest"] = digest(spec)
    data = [{"file": f"{p.parent.name}/{p.name}", "sha256": _sha(p)} for p in train]
    licences = {source: PROSE_LICENCES.get(source, "not stated") for source in map(prose_source, train)}
    data += [{"file": f"{archive.parent.name}/{archive.name}", "sha256": _sha(archive)} for archive in laws]
    if laws:
        licences["peraturan"] = LAW_LICENCE
    spec["training"] = {
        "data": data, "licences": licences,
        "questions": {d: len(e.qids) for d, e in fits.items()}, "sentences": {d: len(e.y) for d, e in fits.items()},
        "answer_sentences": {d: int(e.y.sum()) for d, e in fits.items()}, "limit": limit,
        "law_limit": law_limit, "mined": mined, "compared": compared,
        "validation": {name: {str(t): f for t, f in per.items()} for name, per in figures.items()},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(spec, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    return spec


