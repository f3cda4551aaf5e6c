"""The embedded store on disk: one process owns it; others are told to use its server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from workbench.errors import Invalid, NotFound, StoreUnavailable
from workbench.store import EmbeddedStore


def test_a_second_process_is_told_to_use_the_server(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "s", create=True)
    try:
        child = subprocess.run(
            [sys.executable, "-m", "workbench.cli", "--store", str(tmp_path / "s"), "stats"],
            capture_output=True, text=True, timeout=60,
        )
        assert child.returncode == 1
        assert "open in another process" in child.stderr and "--endpoint" in child.stderr
        with pytest.raises(StoreUnavailable):
            EmbeddedStore(tmp_path / "s")
    finally:
        store.close()


def test_no_store_and_not_a_store(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="workbench --store"):
        EmbeddedStore(tmp_path / "missing")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(Invalid, match="not an empty directory"):
        EmbeddedStore(tmp_path / "busy", create=True)
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine"
