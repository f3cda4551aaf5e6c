"""``workbench bench recall --extrapolate``: the extrapolation arithmetic, and a tiny run whose index
sizes per vector match what each FAISS index stores (file sizes, not timings)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.recall_scale import (
    KINDS,
    build_basis,
    fit_linear,
    main,
    nlist_for,
    project,
    query_basis,
    scanned,
)
from workbench.cli import main as cli_main


def test_fits_recover_what_made_the_points() -> None:
    a, b = fit_linear([1e5, 3e5, 1e6], [7 + 56 * n for n in (1e5, 3e5, 1e6)])
    assert a == pytest.approx(7, abs=1e-3) and b == pytest.approx(56)
    with pytest.raises(ValueError):
        fit_linear([1.0], [1.0])


def test_ivf_scans_nprobe_lists_of_n_over_nlist() -> None:
    assert nlist_for(1_000_000) == 4000
    assert scanned(1_000_000) == pytest.approx(128 * 1_000_000 / 4000)
    assert scanned(1_000) == 1_000  # nprobe above nlist: everything, never more
    assert query_basis("exact", 5e6) == 5e6 and query_basis("hnsw", math.e**3) == pytest.approx(3)
    assert query_basis("ivf-sq8", 1e6) == scanned(1_000_000)
    assert build_basis("ivf-pq", 1e6) == (4000.0**2, 1e6 * 4000) and build_basis("hnsw", math.e) == (0.0, math.e)


def test_projection_of_an_ivf_index() -> None:
    # p50 = 0.1 ms + 2e-5 ms per scanned code; 40 bytes + 392 a vector + the centroids (√n of them);
    # training 1e-7 s per nlist², adding 2 s + 1e-9 s per n·nlist
    def centroids(n: int) -> int:
        return nlist_for(n) * 384 * 4

    pts = [{"n": n, "dim": 384, "index_bytes": 40 + 392 * n + centroids(n), "rss_mib": (392 * n + centroids(n)) / 2**20,
            "train_s": 1e-7 * nlist_for(n) ** 2, "add_s": 2 + 1e-9 * n * nlist_for(n), "p50": 0.1 + 2e-5 * scanned(n)}
           for n in (100_000, 300_000, 1_000_000)]
    p = project("ivf-sq8", pts, 10_000_000)
    assert p.bytes_per_vector == pytest.approx(392) and p.fixed_bytes == pytest.approx(40, abs=1e-3)
    assert p.index_bytes == pytest.approx(40 + 392e7 + centroids(10_000_000), rel=1e-9)
    assert p.train_s == pytest.approx(1e-7 * 12649**2, rel=1e-6)
    assert p.add_s == pytest.approx(2 + 1e-9 * 1e7 * 12649, rel=1e-6) and p.build_s == p.train_s + p.add_s
    assert p.p50_ms == pytest.approx(0.1 + 2e-5 * scanned(10_000_000), rel=1e-6)


def test_bench_recall_extrapolate_tiny(tmp_path: Path) -> None:
    md = tmp_path / "benchmarks.md"
    md.write_text("# Benchmarks\n\n## Recall index\n\nHand-written.\n")
    out = tmp_path / "scale.json"
    main([("2k", 2000), ("4k", 4000)], 10_000_000, n_queries=30, workdir=tmp_path / "work", minilm=False,
         markdown=md, out=out, echo=lambda _: None)

    data = json.loads(out.read_text())
    (series,) = data["series"]
    assert list(series["results"]) == list(KINDS) and series["id_map_bytes"] > 0
    for kind, runs in series["results"].items():
        assert [r["n"] for r in runs] == [2000, 4000], kind
        assert all(0 <= r["recall"] <= 1 and r["p50"] > 0 for r in runs), kind
    assert all(r["recall"] == 1.0 for r in series["results"]["exact"])
    per_vector = {k: p["bytes_per_vector"] for k, p in data["projections"].items()}
    assert 1536 <= per_vector["exact"] <= 1560  # 384 float32 and an 8-byte id
    assert 1536 <= per_vector["ivf-flat"] <= 1560
    assert 384 <= per_vector["ivf-sq8"] <= 410  # a byte a dimension
    assert 48 <= per_vector["ivf-pq"] <= 70  # 48 codes and the id
    for p in data["projections"].values():
        assert p["n"] == 10_000_000 and p["index_bytes"] > 0 and math.isfinite(p["p50_ms"])

    doc = md.read_text()
    assert "## Recall index\n\nHand-written." in doc and doc.count("## FAISS at 10M vectors") == 1
    assert "| IVF-SQ8 |" in doc.split("## FAISS at 10M vectors")[1]


def test_extrapolate_needs_two_sizes() -> None:
    result = CliRunner().invoke(cli_main, ["bench", "recall", "--sizes", "1M", "--extrapolate", "10M"])
    assert result.exit_code == 2 and "at least two sizes" in result.output
