"""What only Virtuoso needs: the newcomer's first commands, which issue 20 found failing
(`workbench --endpoint http://host:port/sparql init --sample`, then a question), and its answers
cut short without a word. A module of its own: it clears the server, which tests/test_engines.py's
module-wide stores must not see mid-module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyoxigraph as ox
import pytest

from tests.conftest import VirtuosoServer
from workbench.errors import StoreUnavailable
from workbench.store import Batch, RemoteStore
from workbench.store import remote as remote_store


def test_a_newcomer_on_the_command_line(virtuoso_server: VirtuosoServer, tmp_path: Path) -> None:
    """What issue 20 found failing: `--endpoint .../sparql init --sample`, then a question."""
    virtuoso_server.clear()

    def cli(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "workbench.cli", "--endpoint", virtuoso_server.url, *args],
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "store ready: remote" in cli("init", "--sample")
    out = cli("ask", "my car", "needs", "gas")
    assert out.startswith("[derived] Yes (derived: gasoline).")
    assert "petrol car needs gasoline (common sense" in out


def test_answers_cut_short_without_a_word_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Virtuoso answers 200 with the first ResultSetMaxRows rows of a longer answer. Too low a cap
    (below ROW_PROBE) is refused when the store opens; a higher one still below a dump's size,
    when the dump is read: never a dump, an export or a view with quads missing."""
    server = VirtuosoServer(tmp_path / "capped", rows=12_000)
    try:
        store = RemoteStore(server.url)  # 10,001 rows come back whole: it opens
        g, p = ox.NamedNode("urn:test:g"), ox.NamedNode("urn:test:p")
        store.write(Batch(quads=[ox.Quad(ox.NamedNode(f"urn:test:s{i}"), p, ox.Literal(str(i)), g)
                                 for i in range(15_000)]))
        with pytest.raises(StoreUnavailable, match="12000 of 15000 rows.*ResultSetMaxRows"):
            list(store.quads())
        store.close()
        monkeypatch.setattr(remote_store, "ROW_PROBE", 13_000)
        with pytest.raises(StoreUnavailable, match="12000 of 13000 rows.*ResultSetMaxRows"):
            RemoteStore(server.url)
    finally:
        server.stop()
