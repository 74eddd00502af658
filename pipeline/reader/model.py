"""The trained reader's weights and inference: numpy only, no training library at run time.

A weights file is one JSON document (`pipeline/reader/weights/`):

- `features`: the feature names, in column order (must equal features.FEATURES);
- `kind`: "trees" (boosted regression trees, as LightGBM grew them) or "logistic";
- the model: for trees, per tree the arrays `feature`, `threshold`, `left`, `right` (a
  negative child `~k` is leaf k) and `leaf`; for logistic, `mean`, `scale`, `coef`, `intercept`;
- `calibration`: an increasing map from the model's raw probability to the share of such
  sentences that answered their question on held-out training questions (Platt scaling,
  tabulated), read by linear interpolation;
- `training`: what it was trained on and the figures it reached, for the record.

`ReaderModel.probability(X)` is P(this sentence answers the question), calibrated.
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
DEFAULT_WEIGHTS = WEIGHTS_DIR / "reader-lite.json"


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
        n, t = x.shape[0], self.feature.shape[0]
        trees = np.arange(t)[None, :].repeat(n, 0)
        rows = np.arange(n)[:, None].repeat(t, 1)
        node = np.zeros((n, t), dtype=np.int64)
        for _ in range(self.depth + 1):
            inner = node >= 0
            if not inner.any():
                break
            safe = np.where(inner, node, 0)
            go_left = x[rows, self.feature[trees, safe]] <= self.threshold[trees, safe]
            nxt = np.where(go_left, self.left[trees, safe], self.right[trees, safe])
            node = np.where(inner, nxt, node)
        return self.base + self.leaf[trees, ~node].sum(axis=1)


class ReaderModel:
    def __init__(self, spec: dict, source: str):
        if tuple(spec.get("features", ())) != FEATURES:
            raise ConfigError(f"reader weights {source} were trained on other features than this code computes; "
                              f"rebuild them with `saksi train reader`")
        self.spec = spec
        self.source = source
        self.kind = spec["kind"]
        cal = spec["calibration"]
        self._cal_x = np.asarray(cal["x"], dtype=np.float64)
        self._cal_y = np.asarray(cal["y"], dtype=np.float64)
        if self.kind == "trees":
            self._forest = _forest(spec["trees"], spec["base"])
        elif self.kind == "logistic":
            self._mean = np.asarray(spec["mean"])
            self._scale = np.asarray(spec["scale"])
            self._coef = np.asarray(spec["coef"])
            self._intercept = float(spec["intercept"])
        else:
            raise ConfigError(f"reader weights {source}: unknown kind {self.kind!r}")

    @property
    def name(self) -> str:
        return f"reader-{self.kind}-{self.spec.get('digest', '?')}"

    def raw_probability(self, x: np.ndarray) -> np.ndarray:
        if len(x) == 0:
            return np.zeros(0)
        if self.kind == "trees":
            z = self._forest.raw(x)
        else:
            z = ((x - self._mean) / self._scale) @ self._coef + self._intercept
        return 1.0 / (1.0 + np.exp(-z))

    def probability(self, x: np.ndarray) -> np.ndarray:
        """Calibrated P(answers): the raw probability read through the calibration table."""
        return np.interp(self.raw_probability(x), self._cal_x, self._cal_y)


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
