"""``python -m benchmarks.ask_breakdown``: where a question's time goes, on a tiny store. The parts
add up to the whole, each part's store time is inside it, the rules make store calls (queries or
quad patterns) for questions not asked before, and the wrapping is undone afterwards. No timing
assertions."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks import synth
from benchmarks.ask_breakdown import PARTS, main, run
from benchmarks.load import measure
from workbench.answers import binding
from workbench.rules import engine
from workbench.store.pyox import PyoxStore


def test_the_parts_add_up_and_the_wrapping_goes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    synth.write(tmp_path / "w.nq", n_worlds=2, seed=0)
    measure("workbench", tmp_path / "w.nq", tmp_path / "store", 0)
    originals = (binding.bind, engine.Engine.solve, PyoxStore.select)
    found = run(tmp_path / "store", 2, per_tier=3, repeat=1, seed=0)
    assert (binding.bind, engine.Engine.solve, PyoxStore.select) == originals
    for tier, row in found.items():
        parts = row["parts"]
        assert math.isclose(sum(parts[p]["us"] for p in PARTS), row["us"], rel_tol=1e-6), tier
        assert all(0 <= parts[p]["store_us"] <= parts[p]["us"] for p in PARTS), tier
    # names and recorded facts are read from the store once a version (then kept): the rules read
    # for the questions the warm-up did not ask, and nothing for the recorded ones it asked
    assert any(row["parts"]["name binding"]["store_calls"] > 0 for row in found.values())
    assert found["derived"]["parts"]["rules"]["store_calls"] > 0
    assert found["recorded"]["parts"]["rules"]["store_calls"] == 0
    assert main([str(tmp_path / "store"), "--worlds", "2", "--questions", "2", "--repeat", "1"]) == 0
    table = capsys.readouterr().out
    assert table.startswith("| tier | whole (µs) | name binding: store / Python (µs) |") and "| derived |" in table
