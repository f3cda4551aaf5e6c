"""The calibrated gate: the probability that a recall bundle holds the answer, from a few
features of the question and of what ranked best, by a logistic model fit on the development
benchmark (data/eval/conversations) with cross-validation that holds out whole memories.

The model is data (workbench/resources/data/recall-gate.json: its version, the encoder it was fit
with, the features, the weights, the threshold and how it was chosen); ``python -m benchmarks
gate`` refits it. Recall answers "no memory" when the probability falls below the threshold,
which is set on a false-abstention budget: of the answerable questions it judges, at most 5% out
of fold turned into "no memory". Every bundle carries its probability.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from workbench.resources import DATA_DIR

if TYPE_CHECKING:
    from workbench.recall.memory import Memory

MODEL = DATA_DIR / "recall-gate.json"
FEATURES = (
    "coverage",  # the share of the question's salience the best record holds
    "cosine",  # the best record's cosine to the question
    "score",  # its ranking score
    "margin",  # its score above the next one's
    "owner_contrast",  # the best own record's score less the best mention's (0 when nobody named speaks)
    "found_anywhere",  # the share of the question's salience that any record in scope holds
    "terms",  # how many content terms the question has, over 5
    "scoped",  # 1 when a name bound a scope (the gate judges only those: always 1 for now)
    "rival_lead",  # the best match owned by someone else in the memory, less the best in scope (0: none)
    "mention_first",  # 1 when a record that only mentions whom the question asks about still ranks first
)


@dataclass(frozen=True)
class Gate:
    version: str
    encoder: str
    weights: tuple[float, ...]
    bias: float
    threshold: float

    def probability(self, x: Sequence[float]) -> float:
        z = self.bias + sum(w * v for w, v in zip(self.weights, x, strict=True))
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))

    def holds(self, probability: float | None) -> bool:
        """Whether a bundle with this probability is answered (else: no memory)."""
        return probability is None or probability >= self.threshold

    def to_json(self) -> dict[str, object]:
        return {"version": self.version, "encoder": self.encoder, "features": list(FEATURES),
                "weights": [round(w, 6) for w in self.weights], "bias": round(self.bias, 6),
                "threshold": round(self.threshold, 4)}


def features(ranked: Sequence[Memory], contrast: float, anywhere: float, terms: int, scoped: bool,
             rival_lead: float, mention_first: bool) -> list[float]:
    """What the gate reads (:data:`workbench.recall.gate.FEATURES`, in that order)."""
    top = ranked[0]
    margin = top.score - (ranked[1].score if len(ranked) > 1 else 0.0)
    return [top.coverage, top.cosine, top.score, margin, contrast, anywhere, min(terms, 10) / 5, float(scoped),
            rival_lead, float(mention_first)]


@cache
def load(path: Path = MODEL) -> dict[str, Gate]:
    """The shipped gates, by the encoder family they were fit with."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    out = {}
    for g in data["gates"]:
        if tuple(g["features"]) != FEATURES:
            continue  # fit on other features: not this version's
        out[g["encoder"]] = Gate(g["version"], g["encoder"], tuple(g["weights"]), g["bias"], g["threshold"])
    return out


def for_encoder(name: str) -> Gate | None:
    return load().get(name.split("/")[0])


def fit(x: np.ndarray, y: np.ndarray, *, l2: float = 1.0, steps: int = 50) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method with an L2 penalty on the weights (not the bias):
    deterministic, the same weights for the same rows."""
    n, d = x.shape
    a = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ w, -40, 40)))
        grad = a.T @ (p - y) + penalty * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return w[:-1], float(w[-1])


def reliability(p: Sequence[float], y: Sequence[int], bins: int = 10) -> tuple[list[dict[str, float]], float]:
    """The reliability table (per bin of stated probability: how many, the mean stated, the share
    that held the answer) and the expected calibration error."""
    rows, ece, n = [], 0.0, len(p)
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        idx = [i for i, v in enumerate(p) if lo <= v < hi or (b == bins - 1 and v == 1.0)]
        if not idx:
            continue
        stated = sum(p[i] for i in idx) / len(idx)
        held = sum(y[i] for i in idx) / len(idx)
        rows.append({"from": lo, "to": hi, "questions": len(idx), "stated": round(stated, 4), "held": round(held, 4)})
        ece += len(idx) / n * abs(stated - held)
    return rows, round(ece, 4)
