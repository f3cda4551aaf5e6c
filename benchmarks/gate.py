"""Refit recall's calibrated gate (:mod:`workbench.recall.gate`) on the development benchmark.

Every question of data/eval/conversations goes through recall with the gate off; the features
of what ranked best are kept, labelled 1 when the bundle holds an expected record, 0 otherwise
(a no-memory question, or a miss). Boosted trees are fit with leave-one-memory-out
cross-validation; the threshold is the highest at which recall's false abstentions stay within
the budget: answerable questions the gate would turn into "no memory" out of fold, plus those
recall answered "no memory" before the gate (an unknown name, nothing in scope that matches),
over every answerable question. The final model is fit on every memory and written with its
cross-validated figures.

    python -m benchmarks gate                   # refit for the default encoder (minilm)
    python -m benchmarks gate --encoder hashing # or minilm-torch (the vectors extra)
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from workbench.recall import boosting
from workbench.recall import gate as gates
from workbench.service import Workbench
from workbench.service.evaluation import load_set
from workbench.service.memories import BENCHMARK, _plan

BUDGET = 0.05  # out-of-fold false abstention the threshold may cost
VERSION = "conversations-v2"  # v2: boosted trees (v1: a logistic model)


def collect(encoder_spec: str | None, directory: Path = BENCHMARK) -> tuple[list[dict[str, Any]], str]:
    """One row per question: its memory, kind, and, if it reached the gate, its features and
    label (``x`` None: recall answered "no memory" before the gate, or had no gate to ask)."""
    questions = load_set(directory / "questions.jsonl")
    plan = _plan(directory)
    seen: list[list[float]] = []
    real_features, real_for = gates.features, gates.for_encoder

    def keep(*args: Any) -> list[float]:
        x = real_features(*args)
        seen.append(x)
        return x

    rows: list[dict[str, Any]] = []
    name = ""
    # A gate that weighs nothing and stops nothing, so that every question it would judge is kept.
    off = gates.Gate("off", "", boosting.Boosted(0.0, ()), 0.0)
    gates.features, gates.for_encoder = keep, lambda _name: off  # type: ignore[assignment]
    try:
        for mem in sorted({q.memory for q in questions}):
            with tempfile.TemporaryDirectory(prefix="workbench-gate-") as tmp:
                wb = Workbench.open(Path(tmp) / "memory", create=True, user="gate", encoder=encoder_spec)
                try:
                    wb.init()
                    for f in [directory / f"{mem}.jsonl"] + ([directory / f"{plan[mem]}.jsonl"] if mem in plan else []):
                        wb.import_files([f])
                    name = wb._indexes.records().ready().encoder.name
                    for q in (q for q in questions if q.memory == mem):
                        seen.clear()
                        b = wb.recall(q.question, purpose=q.purpose, limit=10)
                        judged = bool(seen) and b.tier != "no_memory"  # else decided before the gate
                        hit = any(i in q.expect for i in b.ids)
                        rows.append({"memory": mem, "kind": q.kind, "x": seen[-1] if judged else None,
                                     "y": int(hit), "answerable": not q.no_memory, "early": b.tier == "no_memory"})
                finally:
                    wb.close()
    finally:
        gates.features, gates.for_encoder = real_features, real_for
    return rows, name


def refit(rows: list[dict[str, Any]], encoder: str, budget: float = BUDGET) -> dict[str, Any]:
    """Leave-one-memory-out probabilities, the threshold on the budget, the final fit."""
    every = rows
    asked = sum(r["answerable"] for r in every)
    early = sum(r["answerable"] and r["early"] for r in every)  # false abstentions before the gate
    early_nm = sum(not r["answerable"] and r["early"] for r in every)
    no_memory = len(every) - asked
    rows = [r for r in every if r["x"] is not None]
    x = np.array([r["x"] for r in rows], dtype=float)
    y = np.array([r["y"] for r in rows], dtype=float)
    mems = np.array([r["memory"] for r in rows])
    oof = np.zeros(len(rows))
    for m in sorted(set(mems)):
        held = mems == m
        oof[held] = boosting.probabilities(boosting.fit(x[~held], y[~held]), x[held])
    # A false abstention is an answerable question answered "no memory", whether or not its
    # bundle held the record: the budget counts every answerable question, those recall
    # already answered "no memory" before the gate included.
    answerable = np.array([r["answerable"] for r in rows])
    threshold = 0.0
    for t in sorted({round(v, 4) for v in oof}):
        if asked and (early + (oof[answerable] < t).sum()) / asked <= budget:
            threshold = t
    model = boosting.fit(x, y)
    table, ece = gates.reliability(list(oof), [int(v) for v in y])
    wrong = ~answerable
    return {
        "gate": gates.Gate(VERSION, encoder.split("/")[0], model, float(threshold)).to_json(),
        "cross_validated": {"rows": len(rows), "memories": len(set(mems)), "budget": budget,
                            "questions": len(every), "answerable": asked,
                            "false_abstention": round(float((early + (oof[answerable] < threshold).sum())
                                                            / max(asked, 1)), 4),
                            "no_memory": round(float((early_nm + (oof[wrong] < threshold).sum())
                                                     / max(no_memory, 1)), 4),
                            "no_memory_stopped": round(float((oof[wrong] < threshold).sum() / max(wrong.sum(), 1)), 4),
                            "ece": ece, "reliability": table},
    }


def write(result: dict[str, Any], path: Path = gates.MODEL) -> None:
    """Put the refit gate in the model file beside those of other encoders."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"gates": []}
    data["gates"] = [g for g in data["gates"] if g["encoder"] != result["gate"]["encoder"]]
    data["gates"].append({**result["gate"], "cross_validated": result["cross_validated"]})
    data["gates"].sort(key=lambda g: g["encoder"])
    data["refit_with"] = "python -m benchmarks gate [--encoder SPEC]"
    text = json.dumps(data, indent=1)
    # A tree's arrays of numbers one line each: a reader scrolls through gates, not 15,000 lines.
    text = re.sub(r"\[(?:\s*-?[0-9][0-9.eE+-]*,?)+\s*\]", lambda m: " ".join(m.group(0).split()), text)
    path.write_text(text + "\n", encoding="utf-8")
    gates.load.cache_clear()
