"""The trained reader's weights and inference: numpy only, no training library at run time.

A weights file is one JSON document (`pipeline/answer_reader/weights/`):

- `features`: the feature names, in column order (must equal features.FEATURES);
- `domains`: one scorer per domain — `prose` (reading-comprehension passages) and `regulation`
  (a candidate whose chunk is a regulation's provision, types.is_provision: its `regulation` feature) — each a
  model and its calibration, trained and calibrated on its own domain's questions:
  - `kind`: "trees" (boosted regression trees, as LightGBM grew them) or "logistic";
  - the model: for trees, per tree the arrays `feature`, `threshold`, `left`, `right` (a negative
    child `~k` is leaf k) and `leaf`; for logistic, `mean`, `scale`, `coef`, `intercept`;
  - `calibration`: the share of such candidates that answered their question on held-out
    questions, as a logistic over the model's raw log-odds and the candidate's lead over the best
    candidate of the other context items (`competition`): `{"coef": [a, b], "intercept": c}` (or
    an `{"x", "y"}` raw -> rate table);
  (a file with one top-level model and `calibration` instead of `domains` serves both domains);
  optionally `english`: an English question of an English record (not a provision), trained on English reading
  comprehension alone, so that the Indonesian prose scorer is not retaught by it (without it, the prose scorer
  reads those);
- `training`: what it was trained on and the figures it reached, for the record.

`ReaderModel.probability(X)` is P(this candidate answers the question), by its domain's scorer (a
regulation's sentence: the larger of both scorers' readings).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from .features import FEATURES

WEIGHTS_DIR = Path(__file__).parent / "weights"
DOMAINS = ("prose", "regulation")  # calibrated apart: a regulation's candidates are not Wikipedia's
# optional: a weights file without it reads those candidates by the prose scorer. `english`: an English question
# of an English record (not a provision), learned from English reading comprehension apart from the Indonesian prose
ENGLISH = "english"
_REGULATION = FEATURES.index("regulation")
_SENTENCE = FEATURES.index("k_sentence")
_ENGLISH = FEATURES.index("q_english")
_ITEM = FEATURES.index("item_rank")  # the candidate's context item: competitors are the other items' candidates
MARGIN_CAP = 12.0  # log-odds; a candidate with no competitor in another item stands this far ahead


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def competition(raw: np.ndarray, items: np.ndarray, groups: np.ndarray, docs: np.ndarray | None = None) -> np.ndarray:
    """Per candidate: its raw log-odds minus the best of its question's candidates from the *other*
    passages of the same document (clipped to ±MARGIN_CAP; None `docs`: one document). A candidate far
    ahead of its document's other passages is more often right than one with a close rival there, at
    the same raw score. Another document's passage is no rival: two regulations that both answer (two
    versions of a rate, a term defined in both) are both shown, as a conflict or an ambiguity."""
    z = _logit(raw)
    docs = np.zeros(len(z), np.int64) if docs is None else docs
    out = np.full(len(z), MARGIN_CAP)
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        zi, it, dc = z[rows], items[rows], docs[rows]
        for k, r in enumerate(rows):
            others = zi[(it != it[k]) & (dc == dc[k])]
            if len(others):
                out[r] = zi[k] - others.max()
    return np.clip(out, -MARGIN_CAP, MARGIN_CAP)


def calibrated(cal: dict, raw: np.ndarray, margin: np.ndarray) -> np.ndarray:
    """A calibration's map: a logistic over (log-odds, margin) as `saksi train reader` fits it, or a
    tabulated raw -> rate map (older weights, tests)."""
    if "coef" in cal:
        a, b = cal["coef"]
        return 1.0 / (1.0 + np.exp(-(a * _logit(raw) + b * margin + cal["intercept"])))
    return np.interp(raw, np.asarray(cal["x"], dtype=np.float64), np.asarray(cal["y"], dtype=np.float64))
DEFAULT_WEIGHTS = WEIGHTS_DIR / "reader-lite.json"


def with_agreement(p: np.ndarray, regulation: np.ndarray, first_passage: np.ndarray, logit: float, agree: float,
                   intercept: float, pool: np.ndarray | None = None, first_in_both: np.ndarray | None = None,
                   consensus: float = 0.0, neural: float = 0.0, neural_logit: np.ndarray | None = None,
                   chapter: float = 0.0, chapter_mark: np.ndarray | None = None,
                   ceiling: float | None = None) -> np.ndarray:
    """Regulation candidates' probabilities re-read with agreement (config.AgreementCalibration): the reader's
    best candidate among `pool` (None: all) agrees when it lies in `first_passage`, the retrieval's best
    (the generator passes the best of the operator's records and pools their candidates, see
    ExtractiveGenerator._trusted); every other regulation candidate is re-read without it. Each keeps the
    larger of its two readings (a reader sure of a passage the retrieval ranked second is not made less
    sure); prose candidates keep the reader's. An agreeing best whose passage both searches ranked first
    (`first_in_both`: the dense and the lexical search alike) gains `consensus` besides. With a `neural` weight,
    each candidate the cross-encoder read (`neural_logit`, NaN where it did not) gains `neural` times its log-odds,
    and a regulation candidate it did not read keeps the reader's own probability. With a `chapter` weight, each
    candidate `chapter_mark` marks (the best candidate of a passage whose chapter the question asks about as a whole,
    pipeline/chapters.py) gains `chapter`. With a `ceiling`, what the re-reading lifts reads at most that (the reader's
    own reading is kept as it is): the generator passes AgreementCalibration.retry_ceiling on a retry."""
    if len(p) == 0 or not regulation.any():
        return p
    among = np.flatnonzero(pool) if pool is not None else np.arange(len(p))
    agrees, both = np.zeros(len(p)), np.zeros(len(p))
    if len(among):
        best = int(among[np.argmax(p[among])])
        agrees[best] = float(first_passage[best])
        both[best] = agrees[best] * float(first_in_both[best]) if first_in_both is not None else 0.0
    z = logit * _logit(p) + agree * agrees + consensus * both + intercept
    if chapter and chapter_mark is not None:
        z = z + chapter * chapter_mark.astype(np.float64)
    if neural:
        ce = np.full(len(p), np.nan) if neural_logit is None else neural_logit
        z = z + neural * np.nan_to_num(ce)
        regulation = regulation & ~np.isnan(ce)
    out = 1.0 / (1.0 + np.exp(-z))
    if ceiling is not None:
        out = np.minimum(out, ceiling)
    return np.where(regulation, np.maximum(out, p), p)


def leads(cosine: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Per measured candidate (cosine not NaN): its cosine minus the best measured cosine of a candidate of another
    passage (`items`: each candidate's passage; none measured there: 0); NaN where not measured."""
    measured = ~np.isnan(cosine)
    out = np.full(len(cosine), np.nan)
    for k in np.flatnonzero(measured):
        others = cosine[measured & (items != items[k])]
        out[k] = float(cosine[k] - others.max()) if len(others) else 0.0
    return out


def cross_lingual(p: np.ndarray, cosine: np.ndarray, items: np.ndarray, first_passage: np.ndarray, similarity: float,
                  center: float, lead: float, agree: float, intercept: float,
                  ceiling: float | None = None) -> np.ndarray:
    """Candidates' probabilities re-read from the embedder's cosine with the question (config.CrossLingualCalibration):
    NaN cosine = not embedded, keeps `p`. A candidate's lead is its cosine minus the best of the embedded candidates
    of other passages (`items`; none: 0). Each keeps the larger of the two readings; with a `ceiling`, an embedded
    candidate that is not the embedder's closest reads at most that (the two readings disagree on it)."""
    measured = ~np.isnan(cosine)
    if not measured.any():
        return p
    out = p.copy()
    closest = cosine[measured].max()
    ahead = leads(cosine, items)
    for k in np.flatnonzero(measured):
        z = similarity * (cosine[k] - center) + lead * ahead[k] + agree * float(first_passage[k]) + intercept
        out[k] = max(p[k], 1.0 / (1.0 + np.exp(-z)))
        if ceiling is not None and cosine[k] < closest:
            out[k] = min(out[k], ceiling)
    return out


def prose_reading(p: np.ndarray, cosine: np.ndarray, items: np.ndarray, first_passage: np.ndarray, logit: float,
                  similarity: float, lead: float, closest: float, first: float, intercept: float) -> np.ndarray:
    """Prose candidates' probabilities re-read with the embedder's cosine with the question (config.ProseReading).
    A measured candidate (cosine not NaN) reads sigmoid(logit * the reader's log-odds + similarity * cosine + lead *
    (its cosine minus the best measured cosine of another passage's candidate; none: 0) + closest * [no measured
    candidate is closer] + first * [it lies in the retrieval's first passage] + intercept). A candidate not measured
    (the reader ranked it below those that were) reads at most the lowest measured reading."""
    measured = ~np.isnan(cosine)
    if not measured.any():
        return p
    q = np.clip(p, 1e-4, 1 - 1e-4)
    best = cosine[measured].max()
    ahead = leads(cosine, items)
    out = p.copy()
    for k in np.flatnonzero(measured):
        z = (logit * np.log(q[k] / (1 - q[k])) + similarity * cosine[k] + lead * ahead[k]
             + closest * float(cosine[k] >= best) + first * float(first_passage[k]) + intercept)
        out[k] = 1.0 / (1.0 + np.exp(-z))
    return np.where(measured, out, np.minimum(p, out[measured].min()))


@dataclass(frozen=True)
class _Forest:
    feature: np.ndarray    # (trees, nodes) int
    threshold: np.ndarray  # (trees, nodes) float
    left: np.ndarray       # (trees, nodes) int: >= 0 a node, < 0 the leaf ~child
    right: np.ndarray
    leaf: np.ndarray       # (trees, leaves) float
    depth: int
    base: float

    def raw(self, x: np.ndarray) -> np.ndarray:
        """Every (row, tree) path walked level by level, each level only over the paths that have
        not reached a leaf yet (a tree's paths end at very different depths)."""
        n, t = x.shape[0], self.feature.shape[0]
        rows = np.repeat(np.arange(n), t)
        trees = np.tile(np.arange(t), n)
        node = np.zeros(n * t, dtype=np.int64)
        active = np.arange(n * t)
        while active.size:
            tr, nd = trees[active], node[active]
            go_left = x[rows[active], self.feature[tr, nd]] <= self.threshold[tr, nd]
            nxt = np.where(go_left, self.left[tr, nd], self.right[tr, nd])
            node[active] = nxt
            active = active[nxt >= 0]
        return self.base + self.leaf[trees, ~node].reshape(n, t).sum(axis=1)


class _Scorer:
    """One domain's model: raw P(answers) from the features."""

    def __init__(self, spec: dict, source: str):
        self.kind = spec["kind"]
        if self.kind == "trees":
            self._forest = _forest(spec["trees"], spec["base"])
        elif self.kind == "logistic":
            self._mean = np.asarray(spec["mean"])
            self._scale = np.asarray(spec["scale"])
            self._coef = np.asarray(spec["coef"])
            self._intercept = float(spec["intercept"])
        else:
            raise ConfigError(f"reader weights {source}: unknown kind {self.kind!r}")

    def raw(self, x: np.ndarray) -> np.ndarray:
        if self.kind == "trees":
            z = self._forest.raw(x)
        else:
            z = ((x - self._mean) / self._scale) @ self._coef + self._intercept
        return 1.0 / (1.0 + np.exp(-z))


class ReaderModel:
    def __init__(self, spec: dict, source: str):
        if tuple(spec.get("features", ())) != FEATURES:
            raise ConfigError(f"reader weights {source} were trained on other features than this code computes; "
                              f"rebuild them with `saksi train reader`")
        self.spec = spec
        self.source = source
        parts = spec.get("domains") or {d: {**spec, "calibration": spec["calibration"]} for d in DOMAINS}
        present = DOMAINS + tuple(d for d in (ENGLISH,) if d in parts)
        try:
            self._scorers = {d: _Scorer(parts[d], source) for d in present}
            self._cal = {d: parts[d]["calibration"] for d in present}
        except KeyError as e:
            raise ConfigError(f"reader weights {source}: nothing for {e}; rebuild them with `saksi train reader`") \
                from None
        kinds = dict.fromkeys(sc.kind for sc in self._scorers.values())
        self.kind = "+".join(kinds)

    @property
    def name(self) -> str:
        return f"reader-{self.kind}-{self.spec.get('digest', '?')}"

    @property
    def domains(self) -> tuple[str, ...]:
        return tuple(self._scorers)

    def _domain_rows(self, x: np.ndarray, english: np.ndarray | None) -> list[tuple[str, np.ndarray]]:
        """Which scorer reads each row: a provision the regulation scorer; an English question of an English record
        the English scorer, where the weights have one; everything else the prose scorer."""
        regulation = x[:, _REGULATION] > 0.5
        prose = ~regulation
        out = [("regulation", regulation)]
        if english is not None and ENGLISH in self._scorers:
            en = prose & np.asarray(english, dtype=bool) & (x[:, _ENGLISH] > 0.5)
            out.append((ENGLISH, en))
            prose = prose & ~en
        return [("prose", prose)] + out

    def raw_probability(self, x: np.ndarray, english: np.ndarray | None = None) -> np.ndarray:
        """Each candidate's raw P(answers) from its domain's model (`english`: per row, whether its record is
        English)."""
        if len(x) == 0:
            return np.zeros(0)
        out = np.empty(len(x))
        for domain, rows in self._domain_rows(x, english):
            if rows.any():
                out[rows] = self._scorers[domain].raw(x[rows])
        return out

    def probability(self, x: np.ndarray, groups: np.ndarray | None = None,
                    docs: np.ndarray | None = None, english: np.ndarray | None = None) -> np.ndarray:
        """Calibrated P(answers), each candidate in its domain, read against its rivals in its document
        (`groups`: a question number per row, None: one question; `docs`: a document number per row,
        None: one document; `english`: per row, whether its record is English, None: none is)."""
        raw = self.raw_probability(x, english)
        if len(raw) == 0:
            return raw
        margin = competition(raw, x[:, _ITEM], np.zeros(len(raw), np.int64) if groups is None else groups, docs)
        regulation = x[:, _REGULATION] > 0.5
        out = np.empty(len(raw))
        for domain, rows in self._domain_rows(x, english):
            if rows.any():
                out[rows] = calibrated(self._cal[domain], raw[rows], margin[rows])
        both = regulation & (x[:, _SENTENCE] > 0.5) & (x[:, _ENGLISH] < 0.5)
        if both.any():
            # a regulation's sentence is a sentence: the prose scorer (which learned from questions people
            # wrote) reads it too, as if in prose, and it is claimed at the larger of the two readings.
            # The regulation scorer learned from questions mined from the text itself, and a person's
            # wording ("tarif PPh" for "Pajak Penghasilan") reads as less sure to it (docs/evaluation.md).
            # Not for an English question: the prose scorer never saw one
            as_prose = x.copy()
            as_prose[:, _REGULATION] = 0.0
            raw_p = self._scorers["prose"].raw(as_prose)
            margin_p = competition(raw_p, x[:, _ITEM], np.zeros(len(raw), np.int64) if groups is None else groups, docs)
            out[both] = np.maximum(out[both], calibrated(self._cal["prose"], raw_p[both], margin_p[both]))
        return out


def _forest(trees: list[dict], base: float) -> _Forest:
    nodes = max(len(t["feature"]) for t in trees) or 1
    leaves = max(len(t["leaf"]) for t in trees)
    shape = (len(trees), nodes)
    feature, left, right = np.zeros(shape, np.int64), np.full(shape, -1, np.int64), np.full(shape, -1, np.int64)
    threshold = np.zeros(shape)
    leaf = np.zeros((len(trees), leaves))
    for i, t in enumerate(trees):
        k = len(t["feature"])
        feature[i, :k], threshold[i, :k] = t["feature"], t["threshold"]
        left[i, :k], right[i, :k] = t["left"], t["right"]
        leaf[i, :len(t["leaf"])] = t["leaf"]
    return _Forest(feature, threshold, left, right, leaf, max(t["depth"] for t in trees), base)


def digest(spec: dict) -> str:
    body = {k: v for k, v in spec.items() if k not in ("digest", "training")}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]


_LOADED: dict[str, ReaderModel] = {}


def weights_path(name: str) -> Path:
    """Where a profile's `generator.reader` names its weights: a path when it names a directory, else a file of the
    package's weights directory ("reader-lite" -> pipeline/answer_reader/weights/reader-lite.json)."""
    return Path(name) if "/" in name else WEIGHTS_DIR / Path(name).with_suffix(".json").name


def load_reader(path: Path | None = None) -> ReaderModel:
    """The reader from a weights file (default: the committed lite weights), loaded once."""
    path = Path(path or DEFAULT_WEIGHTS)
    key = str(path.resolve())
    if key not in _LOADED:
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"no reader weights at {path}; run `saksi train reader`") from None
        except (OSError, ValueError) as e:
            raise ConfigError(f"reader weights {path} are unreadable ({e}); run `saksi train reader`") from None
        _LOADED[key] = ReaderModel(spec, str(path))
    return _LOADED[key]
