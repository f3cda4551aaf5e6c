"""The calibrated gate: the probability that a recall bundle holds the answer, from a few
features of the question and of what ranked best, by boosted shallow trees
(:mod:`workbench.recall.boosting`) fit on the development benchmark (data/eval/conversations)
with cross-validation that holds out whole memories.

The model is data (workbench/resources/data/recall-gate.json: its version, the encoder it was fit
with, the features, the trees, the threshold and how it was chosen); ``python -m benchmarks
gate`` refits it. Recall answers "no memory" when the probability falls below the threshold,
which is set on a false-abstention budget: of every answerable question, at most 5% answered
"no memory" out of fold, those recall abstained on before the gate included. Every bundle
carries its probability.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.recall.boosting import Boosted, Tree
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
    model: Boosted
    threshold: float

    def probability(self, x: Sequence[float]) -> float:
        return self.model.probability(x)

    def holds(self, probability: float | None) -> bool:
        """Whether a bundle with this probability is answered (else: no memory)."""
        return probability is None or probability >= self.threshold

    def to_json(self) -> dict[str, object]:
        return {"version": self.version, "encoder": self.encoder, "features": list(FEATURES),
                "threshold": round(self.threshold, 4), "bias": self.model.bias,
                "trees": [t.to_json() for t in self.model.trees]}


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
        model = Boosted(float(g["bias"]), tuple(Tree.from_json(t) for t in g["trees"]))
        out[g["encoder"]] = Gate(g["version"], g["encoder"], model, float(g["threshold"]))
    return out


def for_encoder(name: str) -> Gate | None:
    return load().get(name.split("/")[0])


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
