"""What a guess's score means: a stated chance of being right, measured on subjects the model's
counts never saw.

A tenth of the store's subjects (:func:`workbench.guesses.model.held_out`) is left out of a
model trained for calibration. For each of them, up to :data:`CASES` a task, something true is
hidden and guessed back with that model:

* **kind, recorded**: its kinds are kept; is the kind ranked first one of them? (What a thing
  recorded as a K is, ranked among every kind.)
* **kind, hidden**: one of a thing's kinds is hidden; are the kinds guessed from the rest of
  what is recorded of it (other kinds, its facts) the hidden one?
* **value**: one of a subject's facts ``p o`` is hidden; is ``o`` among the values guessed for
  ``p``?

Every candidate in the top five is a case (its score, whether it is right). An isotonic map from
score to the share right is fit per task family (kinds, values); its figures are taken out of
fold (fit on half the held-out subjects, read on the other half, both ways), then fit on all
of them for use. Fewer than :data:`MIN_CASES` cases: no chance is stated ("not measured").
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.guesses.model import Model, Subjects, held_out

CASES = 2000  # held-out subjects a task, at most (chosen by hash: the same on every run)
MIN_CASES = 50
TOP = 5
BINS = 10


@dataclass(frozen=True)
class Case:
    task: str  # "kind recorded", "kind hidden", "value"
    subject: str
    rank: int  # 1-based, within the top five
    score: float
    right: bool


def _pick(subject: str, n: int, salt: str = "pick") -> int:
    """A choice among ``n`` fixed by the subject (salted: independent of the held-out split)."""
    digest = hashlib.blake2b(subject.encode(), digest_size=4, person=salt.encode()).digest()
    return int.from_bytes(digest, "little") % n


def _order(subjects: Iterable[str]) -> list[str]:
    return sorted(subjects, key=lambda s: hashlib.blake2b(s.encode(), digest_size=8).digest())


def measure(model: Model, subjects: Subjects, *, cases: int = CASES,
            tick: Callable[[int], object] | None = None) -> tuple[list[Case], dict[str, int]]:
    """Hide and guess back, on held-out subjects only. Returns the cases and, per task, how many
    subjects were asked and how many gave no basis for a guess."""
    held = _order(s for s in subjects.features if held_out(s))
    things = [s for s in held if s not in subjects.direct.get(s, ())]
    out: list[Case] = []
    asked: dict[str, int] = {}

    def add(task: str, s: str, ranked: Sequence[tuple[str, float]], right: Callable[[str], bool]) -> None:
        asked[task] = asked.get(task, 0) + 1
        if not ranked:
            asked[task + ": no basis"] = asked.get(task + ": no basis", 0) + 1
        out.extend(Case(task, s, i, score, right(k)) for i, (k, score) in enumerate(ranked, 1))

    for s in [s for s in held if subjects.direct.get(s)][:cases]:
        recorded = set(subjects.direct[s])
        add("kind recorded", s, model.rank_kinds(subjects.features[s], top=TOP), recorded.__contains__)
        _tick(tick)
    for s in [s for s in things if subjects.direct.get(s)][:cases]:
        kinds = subjects.direct[s]
        hidden = kinds[_pick(s, len(kinds))]
        own = [f for f in subjects.features[s] if not f.startswith("a <")]
        rest = subjects.features_of([k for k in kinds if k != hidden], own)
        add("kind hidden", s, model.rank_kinds(rest, top=TOP) if rest else [], hidden.__eq__)
        _tick(tick)
    with_facts = [s for s in held if any(not f.startswith("a <") for f in subjects.features[s])]
    for s in with_facts[:cases]:
        facts = [f for f in subjects.features[s] if not f.startswith("a <")]
        gone = facts[_pick(s, len(facts))]
        p, o = gone[1:gone.index(">")], gone[gone.index(">") + 2:]
        kept = [f for f in subjects.features[s] if f != gone]
        ranked = [(v, score) for v, score, _ in model.values(kept, p, top=TOP)] if kept else []
        add("value", s, ranked, o.__eq__)
        _tick(tick)
    return out, asked


def _tick(tick: Callable[[int], object] | None) -> None:
    if tick:
        tick(1)


def family(task: str) -> str:
    return "value" if task == "value" else "kind"


# ---------------------------------------------------------------- the map


@dataclass(frozen=True)
class Isotonic:
    """A non-decreasing step map from score to chance (pool-adjacent-violators): ``lower[i]`` is
    the lowest score of block i, ``chance[i]`` its share right. A score between two blocks takes
    the lower block's chance: never more than was measured."""

    lower: tuple[float, ...]
    chance: tuple[float, ...]

    @classmethod
    def fit(cls, scores: Sequence[float], right: Sequence[bool]) -> Isotonic:
        """
        >>> m = Isotonic.fit([0.1, 0.2, 0.3, 0.4], [False, True, False, True])
        >>> m.chance, m(0.05), m(0.35), m(0.9)
        ((0.0, 0.5, 1.0), 0.0, 0.5, 1.0)
        """
        order = np.lexsort((np.asarray(right, dtype=float), np.asarray(scores, dtype=float)))
        xs = np.asarray(scores, dtype=float)[order]
        ys = np.asarray(right, dtype=float)[order]
        blocks: list[list[float]] = []  # [sum of y, weight, lowest x]
        for x, y in zip(xs, ys, strict=True):
            blocks.append([y, 1.0, x])
            while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
                y2, w2, _ = blocks.pop()
                blocks[-1][0] += y2
                blocks[-1][1] += w2
        return cls(tuple(float(b[2]) for b in blocks), tuple(round(float(b[0] / b[1]), 4) for b in blocks))

    def __call__(self, score: float) -> float:
        i = int(np.searchsorted(np.asarray(self.lower), score, side="right")) - 1
        return float(self.chance[max(i, 0)])

    def to_json(self) -> dict[str, Any]:
        return {"lower": list(self.lower), "chance": list(self.chance)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Isotonic:
        return cls(tuple(float(x) for x in data["lower"]), tuple(float(x) for x in data["chance"]))


def reliability(stated: Sequence[float], right: Sequence[bool], bins: int = BINS) -> tuple[list[dict[str, Any]], float]:
    """Rows (stated range, cases, mean stated, share right) and the expected calibration error.

    >>> rows, ece = reliability([0.05, 0.05, 0.95, 0.95], [False, False, True, True])
    >>> [(r["from"], r["cases"], r["right"]) for r in rows], ece
    ([(0.0, 2, 0.0), (0.9, 2, 1.0)], 0.05)
    """
    s, r = np.asarray(stated, dtype=float), np.asarray(right, dtype=float)
    at = np.minimum((s * bins).astype(int), bins - 1)
    rows, ece = [], 0.0
    for b in range(bins):
        mask = at == b
        if mask.any():
            mean, rate = float(s[mask].mean()), float(r[mask].mean())
            rows.append({"from": b / bins, "to": (b + 1) / bins, "cases": int(mask.sum()),
                         "stated": round(mean, 4), "right": round(rate, 4)})
            ece += mask.sum() / len(s) * abs(mean - rate)
    return rows, round(float(ece), 4)


def calibrate(cases: Sequence[Case], asked: dict[str, int]) -> dict[str, Any]:
    """Per family: the map fit on every case, and its out-of-fold reliability table and error;
    and per task hit@1, hit@5 and "no basis" counts."""
    report: dict[str, Any] = {"families": {}, "tasks": {}}
    for fam in ("kind", "value"):
        mine = [c for c in cases if family(c.task) == fam]
        if len(mine) < MIN_CASES:
            report["families"][fam] = {"cases": len(mine), "map": None}
            continue
        half = [_pick(c.subject, 2, "fold") for c in mine]
        stated = [0.0] * len(mine)
        for fold in (0, 1):
            train = [c for c, h in zip(mine, half, strict=True) if h != fold]
            m = Isotonic.fit([c.score for c in train], [c.right for c in train])
            for i, (c, h) in enumerate(zip(mine, half, strict=True)):
                if h == fold:
                    stated[i] = m(c.score)
        rows, ece = reliability(stated, [c.right for c in mine])
        full = Isotonic.fit([c.score for c in mine], [c.right for c in mine])
        report["families"][fam] = {"cases": len(mine), "map": full.to_json(), "reliability": rows, "ece": ece}
    for task in ("kind recorded", "kind hidden", "value"):
        n = asked.get(task, 0)
        firsts = {c.subject for c in cases if c.task == task and c.rank == 1 and c.right}
        fives = {c.subject for c in cases if c.task == task and c.right}
        report["tasks"][task] = {"asked": n, "no_basis": asked.get(task + ": no basis", 0),
                                 "hit1": round(len(firsts) / n, 4) if n else None,
                                 "hit5": round(len(fives) / n, 4) if n else None}
    return report


def chance_map(report: dict[str, Any], fam: str) -> Isotonic | None:
    data = (report.get("families") or {}).get(fam) or {}
    return Isotonic.from_json(data["map"]) if data.get("map") else None
