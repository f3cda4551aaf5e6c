"""The newcomer's first commands on a real Virtuoso, which issue 20 found failing: `workbench
--endpoint http://host:port/sparql init --sample`, then a question. A module of its own: it
clears the server, which tests/test_engines.py's module-wide stores must not see mid-module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import VirtuosoServer


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
