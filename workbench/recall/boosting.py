"""Gradient-boosted decision trees for a yes/no chance: small, deterministic, plain numpy.

Recall's gate (:mod:`workbench.recall.gate`) weighs a dozen features of what ranked best. A
linear model cannot say "a rival's record leads, *and* the best own record is thin"; shallow
trees can, and on the development benchmark they stop more no-memory questions at the same
false-abstention budget (docs/recall.md, "The calibrated gate"). The model is data: a bias and a
list of trees, each a few arrays, walked in plain Python when a question is asked.

The fit is Friedman's gradient boosting for the log loss: each round fits a regression tree of
at most ``depth`` levels to the residuals (exact splits, squared error, at least ``leaf`` rows a
leaf), then sets each leaf by one Newton step, shrunk by ``rate``. Ties go to the first feature
and the lowest threshold, so the same rows give the same trees.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tree:
    """One regression tree as arrays: node i splits on ``feature[i]`` (-1 at a leaf) at
    ``threshold[i]`` (at most: left), its children are ``left[i]`` and ``right[i]``, and a leaf
    adds ``value[i]`` to the log-odds (the learning rate folded in)."""

    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    value: tuple[float, ...]

    def __call__(self, x: Sequence[float]) -> float:
        i = 0
        while self.feature[i] >= 0:
            i = self.left[i] if x[self.feature[i]] <= self.threshold[i] else self.right[i]
        return self.value[i]

    def to_json(self) -> dict[str, list[float] | list[int]]:
        return {"feature": list(self.feature), "threshold": list(self.threshold), "left": list(self.left),
                "right": list(self.right), "value": [round(v, 8) for v in self.value]}

    @classmethod
    def from_json(cls, data: dict[str, list[float]]) -> Tree:
        return cls(tuple(int(v) for v in data["feature"]), tuple(float(v) for v in data["threshold"]),
                   tuple(int(v) for v in data["left"]), tuple(int(v) for v in data["right"]),
                   tuple(float(v) for v in data["value"]))


@dataclass(frozen=True)
class Boosted:
    """A bias (the log-odds of the training rows' share of yes) and the trees added to it."""

    bias: float
    trees: tuple[Tree, ...]

    def log_odds(self, x: Sequence[float]) -> float:
        return self.bias + sum(t(x) for t in self.trees)

    def probability(self, x: Sequence[float]) -> float:
        return 1.0 / (1.0 + math.exp(-max(min(self.log_odds(x), 40.0), -40.0)))


def fit(x: np.ndarray, y: np.ndarray, *, rounds: int = 100, depth: int = 3, rate: float = 0.05,
        leaf: int = 20) -> Boosted:
    """Boosted trees for P(y = 1 | x), deterministic (see the module's docstring)."""
    share = min(max(float(y.mean()), 1e-6), 1 - 1e-6)
    bias = math.log(share / (1 - share))
    f = np.full(len(y), bias)
    trees = []
    for _ in range(rounds):
        p = 1.0 / (1.0 + np.exp(-np.clip(f, -40, 40)))
        tree = _grow(x, y - p, p * (1 - p), depth=depth, leaf=leaf, rate=rate)
        trees.append(tree)
        f += predict_rows(tree, x)
    return Boosted(bias, tuple(trees))


def predict_rows(tree: Tree, x: np.ndarray) -> np.ndarray:
    """A tree's value for every row of ``x``."""
    out = np.zeros(len(x))
    todo = [(0, np.arange(len(x)))]
    while todo:
        node, rows = todo.pop()
        j = tree.feature[node]
        if j < 0:
            out[rows] = tree.value[node]
            continue
        low = x[rows, j] <= tree.threshold[node]
        todo += [(tree.left[node], rows[low]), (tree.right[node], rows[~low])]
    return out


def probabilities(model: Boosted, x: np.ndarray) -> np.ndarray:
    f = np.full(len(x), model.bias)
    for tree in model.trees:
        f += predict_rows(tree, x)
    out: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(f, -40, 40)))
    return out


def _grow(x: np.ndarray, g: np.ndarray, h: np.ndarray, *, depth: int, leaf: int, rate: float) -> Tree:
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []

    def node(rows: np.ndarray, levels: int) -> int:
        i = len(feature)
        feature.append(-1)
        threshold.append(0.0)
        left.append(-1)
        right.append(-1)
        value.append(rate * float(g[rows].sum()) / max(float(h[rows].sum()), 1e-12))
        split = _best_split(x[rows], g[rows], leaf) if levels > 0 else None
        if split is not None:
            j, t = split
            low = x[rows, j] <= t
            feature[i], threshold[i], value[i] = j, t, 0.0
            left[i] = node(rows[low], levels - 1)
            right[i] = node(rows[~low], levels - 1)
        return i

    node(np.arange(len(g)), depth)
    return Tree(tuple(feature), tuple(threshold), tuple(left), tuple(right), tuple(value))


def _best_split(x: np.ndarray, g: np.ndarray, leaf: int) -> tuple[int, float] | None:
    """The split that most lowers the residuals' squared error, with ``leaf`` rows on each side."""
    n = len(g)
    if n < 2 * max(leaf, 1):
        return None
    total = float(g.sum())
    base = total * total / n
    best: tuple[float, int, float] | None = None
    for j in range(x.shape[1]):
        order = np.argsort(x[:, j], kind="stable")
        xs, cum = x[order, j], np.cumsum(g[order])
        k = np.arange(max(leaf, 1), n - max(leaf, 1) + 1)  # rows on the left
        k = k[xs[k - 1] < xs[np.minimum(k, n - 1)]]  # only between distinct values
        if not len(k):
            continue
        sl = cum[k - 1]
        gain = sl * sl / k + (total - sl) ** 2 / (n - k) - base
        at = int(np.argmax(gain))
        if gain[at] > 1e-12 and (best is None or gain[at] > best[0]):
            a, b = float(xs[k[at] - 1]), float(xs[k[at]])
            mid = (a + b) / 2
            best = (float(gain[at]), j, mid if a <= mid < b else a)
    return None if best is None else (best[1], best[2])
