"""The recall speed and encoder benchmarks run and report what they say they do (their figures
are measurements, printed and kept in docs/recall.md, never asserted here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import encoders, recall_speed
from workbench.service.memories import BENCHMARK


def test_recall_speed_grows_a_memory_among_other_peoples_conversations(tmp_path: Path) -> None:
    lines: list[str] = []
    rows = recall_speed.main([448, 1200], "hashing", lines.append)
    assert [r["records"] for r in rows] == [448, 1200]
    for r in rows:
        assert r["questions"] == 140 and r["recall_p50_ms"] > 0 and r["plain_p50_ms"] > 0
        # the ratio of the medians as measured; the medians are printed to 0.01 ms
        assert r["ratio_p50"] == pytest.approx(r["recall_p50_ms"] / r["plain_p50_ms"], rel=0.1)
    assert len(lines) == 2 and "1,200 records (hashing-v1)" in lines[1]
    out = tmp_path / "filler.jsonl"
    written = recall_speed._filler(BENCHMARK, out, 500)
    copied = [json.loads(line) for line in out.read_text().splitlines()]
    assert written == len(copied) == 500 and len({r["id"] for r in copied}) == 500
    assert all(r["source"]["said_by"].endswith(" 1") for r in copied)  # people of their own, never c01's


def test_the_encoder_benchmark_compares_the_onnx_model_with_hashing() -> None:
    lines: list[str] = []
    rows = encoders.main(lines.append, specs=("minilm", "hashing"))
    assert [r["encoder"] for r in rows] == ["minilm", "hashing"]
    assert all(r["batched_ms_per_sentence"] > 0 and r["question_p50_ms"] > 0 for r in rows)
    assert any(line.startswith("minilm ") for line in lines)
