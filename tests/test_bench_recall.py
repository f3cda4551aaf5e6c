"""``workbench bench recall``'s core at a tiny size, in this process: the exact index's recall against
itself is 1, IVF's and HNSW's are between 0 and 1, every figure is a number, the report and the
chart render. No timing assertions; nothing written to docs/."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.recall import SWEEPS, Dataset, chart, measure, parse_count, render, sentences
from workbench.cli import main
from workbench.vectors.encoders import HashingEncoder


def test_bench_recall_core_tiny(tmp_path: Path) -> None:
    enc = HashingEncoder()
    vectors = enc.encode(sentences(2000, seed=1))
    queries = enc.encode(sentences(50, seed=1, kind="question"))

    exact, truth = measure("exact", vectors, queries, tmp_path / "exact", None)
    assert exact["recall"] == 1.0
    assert exact["index"] == "exact" and exact["load_same"]
    assert truth.ids.shape == (50, 10) and (truth.ids >= 0).all()
    data = Dataset("2k", 2000, enc.name, 0.1, tmp_path, results={"exact": exact})
    for kind in ("ivf", "hnsw"):
        result, _ = measure(kind, vectors, queries, tmp_path / kind, truth)
        assert 0.0 <= result["recall"] <= 1.0, kind
        assert [row["value"] for row in result["sweep"]] == list(SWEEPS[kind][1])
        assert all(0.0 <= row["recall"] <= 1.0 for row in result["sweep"])
        data.results[kind] = result
    ivf = data.results["ivf"]
    assert ivf["index"] == "ivf" and ivf["nlist"] == int(4 * math.sqrt(2000))
    recalls = [row["recall"] for row in ivf["sweep"]]
    assert recalls == sorted(recalls), "probing more lists can only find more of the exact top 10"
    for kind, r in data.results.items():
        assert 0 < r["p50"] <= r["p99"] and 0 < r["p50_1t"] <= r["p99_1t"], kind
        assert r["build_s"] > 0 and r["disk_mib"] > 0 and r["load_s"] >= 0 and len(r["ms"]) == 50, kind
        assert math.isfinite(r["build_mib"]) or not Path("/proc/self/clear_refs").exists(), kind

    text = render([data], command="workbench bench recall --sizes 2k", machine_line="m", date="d", code="c",
                  chart="bench-recall.svg")
    assert "| 2k | exact (flat) |" in text and "| 2k | IVF (nlist 178, nprobe 128) |" in text
    assert "| 2k | HNSW | efSearch 64 |" in text and "- 2k: IVF p50 " in text
    assert ET.fromstring(chart([data])).tag.endswith("svg")


def test_sentences_are_seeded() -> None:
    assert sentences(20, seed=3) == sentences(20, seed=3) != sentences(20, seed=4)
    assert all(q.endswith("?") for q in sentences(20, kind="question"))


def test_sizes_and_flags() -> None:
    assert [parse_count(s) for s in ("10k", "100k", "1M", "1.5k")] == [10_000, 100_000, 1_000_000, 1500]
    with pytest.raises(ValueError):
        parse_count("lots")
    result = CliRunner().invoke(main, ["bench", "recall", "--no-hnsw", "--hnsw-all"])
    assert result.exit_code == 2 and "contradict" in result.output
    result = CliRunner().invoke(main, ["bench", "recall", "--sizes", "ten"])
    assert result.exit_code == 2 and "not a size" in result.output
