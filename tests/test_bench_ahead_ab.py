"""``python -m benchmarks.ahead_ab``: a walk fetching ahead or not, on a tiny store (embedded
only: the folder holds no ``oxigraph`` store). Both ways answer the same, fetching ahead never
makes more store calls, the engine is put back afterwards. No timing assertions."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import synth
from benchmarks.ahead_ab import main, run
from benchmarks.ask_results import TIERS
from benchmarks.load import measure
from workbench.rules import engine


def test_both_ways_answer_the_same_and_the_engine_is_put_back(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    synth.write(tmp_path / "w.nq", n_worlds=2, seed=0)
    measure("workbench", tmp_path / "w.nq", tmp_path / "workbench", 0)
    init = engine.Engine.__init__
    rows = run(tmp_path, 2, per_tier=3, repeat=1, seed=0)
    assert engine.Engine.__init__ is init
    assert [(r["backend"], r["tier"]) for r in rows] == [("embedded", t) for t in TIERS]
    assert all(r["same"] and r["calls_on"] <= r["calls_off"] for r in rows)
    assert next(r for r in rows if r["tier"] == "derived")["calls_on"] < \
        next(r for r in rows if r["tier"] == "derived")["calls_off"]
    assert main([str(tmp_path), "--worlds", "2", "--questions", "2", "--repeat", "1"]) == 0
    assert "| embedded | derived |" in capsys.readouterr().out


def test_kept_or_described_afresh_answer_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--toggle kept``: proofs' words and sources kept for the store's version, or dropped
    before each ask; the same answers both ways, the table names what differs."""
    synth.write(tmp_path / "w.nq", n_worlds=2, seed=0)
    measure("workbench", tmp_path / "w.nq", tmp_path / "workbench", 0)
    rows = run(tmp_path, 2, per_tier=3, repeat=1, seed=0, toggle="kept")
    assert all(r["same"] for r in rows) and len(rows) == len(TIERS)
    assert main([str(tmp_path), "--worlds", "2", "--questions", "2", "--repeat", "1", "--toggle", "kept"]) == 0
    assert "descriptions kept" in capsys.readouterr().out


def test_kinds_kept_or_walked_afresh_answer_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--toggle walked``: the kinds' edges kept for the store's version, or dropped before each
    ask; the same answers both ways, never more store calls with them kept."""
    synth.write(tmp_path / "w.nq", n_worlds=2, seed=0)
    measure("workbench", tmp_path / "w.nq", tmp_path / "workbench", 0)
    rows = run(tmp_path, 2, per_tier=3, repeat=1, seed=0, toggle="walked")
    assert all(r["same"] and r["calls_on"] <= r["calls_off"] for r in rows) and len(rows) == len(TIERS)
    assert next(r for r in rows if r["tier"] == "derived")["calls_on"] < \
        next(r for r in rows if r["tier"] == "derived")["calls_off"]
    assert main([str(tmp_path), "--worlds", "2", "--questions", "2", "--repeat", "1", "--toggle", "walked"]) == 0
    assert "kinds' edges kept" in capsys.readouterr().out
