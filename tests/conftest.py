"""Shared fixtures: one ``wb`` fixture, run against every store backend.

The remote backend is a real ``oxigraph serve`` process (PyPI package ``oxigraph``) on a free
loopback port, one per test session; each test gets a cleared store.
"""

from __future__ import annotations

import datetime as dt
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.service import Workbench
from workbench.store import EmbeddedStore, RemoteStore, Store

FIXED_NOW = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.UTC)
ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """A real server in a child process on a free loopback port, answering ``probe`` once up."""

    name = "server"

    def start(self, command: list[str], probe: str) -> None:
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(probe, timeout=1).read()
                return
            except urllib.error.HTTPError:
                return  # it answered, if not with 200: it is up
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"{self.name} exited: {self.process.stderr.read()!r}") from None  # type: ignore[union-attr]
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.name} did not answer within 20 s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()


class OxigraphServer(ServerProcess):
    """A real Oxigraph SPARQL server on loopback."""

    name = "oxigraph serve"

    def __init__(self, location: Path) -> None:
        binary = shutil.which("oxigraph")
        if binary is None:
            raise RuntimeError("the `oxigraph` server is not installed: pip install -e '.[test]'")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.start([binary, "serve", "--location", str(location), "--bind", f"127.0.0.1:{self.port}"],
                   f"{self.url}/query?query=ASK%7B%7D")

    def clear(self) -> None:
        req = urllib.request.Request(
            f"{self.url}/update",
            data=b"CLEAR ALL",
            method="POST",
            headers={"Content-Type": "application/sparql-update"},
        )
        urllib.request.urlopen(req, timeout=10).read()


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Indexes of a remote store live under $XDG_CACHE_HOME by the server's URL, which every test
    shares: each test gets its own cache, and the user's is never touched. No encoder comes from
    the environment."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("WORKBENCH_ENCODER", raising=False)


@pytest.fixture(scope="session")
def oxigraph_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OxigraphServer]:
    server = OxigraphServer(tmp_path_factory.mktemp("oxigraph"))
    yield server
    server.stop()


@pytest.fixture(params=["embedded", "remote"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An empty store of each backend."""
    if request.param == "embedded":
        s: Store = EmbeddedStore(tmp_path / "store", create=True)
    else:
        server: OxigraphServer = request.getfixturevalue("oxigraph_server")
        server.clear()
        s = RemoteStore(server.url)
    yield s
    s.close()


@pytest.fixture
def wb(store: Store) -> Iterator[Workbench]:
    """A Workbench with the ontology loaded, on each backend, acting as 'tester' at a fixed time."""
    bench = Workbench(store, user="tester", clock=lambda: FIXED_NOW)
    bench.init()
    yield bench


@pytest.fixture
def sample(wb: Workbench) -> Workbench:
    """``wb`` with the sample data loaded."""
    wb.load_sample()
    return wb


def dump(store: Store) -> bytes:
    """Every quad in the store, sorted, as N-Quads: equal bytes mean equal stores."""
    import pyoxigraph as ox

    lines = sorted((ox.serialize([q], format=ox.RdfFormat.N_QUADS) or b"") for q in store.quads())
    return b"".join(lines)
