"""Recall's encoders side by side in one run: the default (all-MiniLM-L6-v2 on ONNX Runtime, int8
weights), the same model on torch (the ``vectors`` extra) and the hashing fallback. For each:
time to load in this process, milliseconds per sentence encoding a memory's records in batches,
p50 of encoding one question, and how close its vectors are to the torch model's (the
reference). Recall quality per encoder comes from ``workbench --encoder NAME eval conversations``.

    python -m benchmarks encoders
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.errors import Unsupported
from workbench.service.memories import BENCHMARK
from workbench.vectors.encoders import Encoder, encoder

SPECS = ("minilm", "minilm-torch", "hashing")


def _texts() -> tuple[list[str], list[str]]:
    records = [json.loads(line)["statement"] for line in (BENCHMARK / "c01.jsonl").read_text().splitlines()]
    questions = [json.loads(line)["question"] for line in (BENCHMARK / "questions.jsonl").read_text().splitlines()]
    return records, questions[:200]


def main(echo: Callable[[str], Any] = print, specs: tuple[str, ...] = SPECS) -> list[dict[str, Any]]:
    records, questions = _texts()
    rows: list[dict[str, Any]] = []
    vectors: dict[str, np.ndarray] = {}
    for spec in specs:
        start = time.perf_counter()
        try:
            enc: Encoder = encoder(spec)
            enc.encode(["warm up"])
        except Unsupported as exc:
            echo(f"{spec}: skipped ({exc})")
            continue
        loaded = time.perf_counter() - start
        passes = []
        for _ in range(3):
            start = time.perf_counter()
            vectors[spec] = enc.encode(records)
            passes.append((time.perf_counter() - start) / len(records) * 1000)
        single = []
        for q in questions:
            start = time.perf_counter()
            enc.encode([q])
            single.append((time.perf_counter() - start) * 1000)
        rows.append({"encoder": spec, "name": enc.name, "load_s": round(loaded, 3),
                     "batched_ms_per_sentence": round(statistics.median(passes), 3),
                     "question_p50_ms": round(statistics.median(single), 3)})
    reference = vectors.get("minilm-torch")
    for row in rows:
        v = vectors[row["encoder"]]
        if reference is not None and row["encoder"] == "minilm":  # the same model: its vectors should agree
            cos = (v * reference).sum(axis=1)
            row["cosine_to_torch_min"] = round(float(cos.min()), 4)
            row["cosine_to_torch_mean"] = round(float(cos.mean()), 4)
    echo(f"{len(records)} records of memory c01 in batches, {len(questions)} questions one at a time")
    echo(f"{'encoder':14} {'load s':>7} {'ms/sentence':>12} {'question p50 ms':>16} {'cos to torch (min/mean)':>24}")
    for row in rows:
        cos = (f"{row['cosine_to_torch_min']:.4f} / {row['cosine_to_torch_mean']:.4f}"
               if "cosine_to_torch_min" in row else "")
        echo(f"{row['encoder']:14} {row['load_s']:7.2f} {row['batched_ms_per_sentence']:12.2f} "
             f"{row['question_p50_ms']:16.2f} {cos:>24}")
    by = {r["encoder"]: r for r in rows}
    if "minilm" in by and "minilm-torch" in by:
        onnx, torch = by["minilm"], by["minilm-torch"]
        echo(f"ONNX / torch: batched {onnx['batched_ms_per_sentence'] / torch['batched_ms_per_sentence']:.2f}x, "
             f"one question {onnx['question_p50_ms'] / torch['question_p50_ms']:.2f}x")
    return rows
