"""Shared fixtures: one ``wb`` fixture, run against every store backend.

The remote backend is a real ``oxigraph serve`` process (PyPI package ``oxigraph``) on a free
loopback port, one per test session; each test gets a cleared store. The store contract and the
leak oracle also run on a real Virtuoso (Debian's ``virtuoso-opensource``, installed by
scripts/setup-debian.sh) with its own database folder and ports.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


class VirtuosoServer(ServerProcess):
    """A real Virtuoso open source server on loopback: its own database folder, a free port for
    SQL and one for HTTP, started in the foreground (``-f``) so the child is the server itself,
    and SPARQL Update granted to the ``SPARQL`` user, as docs/deployment.md tells an operator."""

    name = "virtuoso-t"

    def __init__(self, folder: Path, *, rows: int = 10_000_000) -> None:
        binary, isql = shutil.which("virtuoso-t"), shutil.which("isql-vt")
        if binary is None or isql is None:
            raise RuntimeError("Virtuoso is not installed: bash scripts/setup-debian.sh")
        folder.mkdir(parents=True, exist_ok=True)
        self.sql_port, self.port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}/sparql"
        ini = folder / "virtuoso.ini"
        ini.write_text(virtuoso_ini(folder, self.sql_port, self.port, rows), encoding="utf-8")
        self.start([binary, "-f", "-c", str(ini)], f"{self.url}?query=ASK%7B%7D")
        subprocess.run([isql, str(self.sql_port), "dba", "dba", 'exec=GRANT SPARQL_UPDATE TO "SPARQL";'],
                       check=True, capture_output=True, timeout=30)

    def clear(self) -> None:
        """Drop every graph but Virtuoso's own (its schema and service descriptions)."""
        store = RemoteStore(self.url)
        try:
            drops = [f"DROP SILENT GRAPH {g}" for g in sorted(store.graph_names(), key=str)]
            if drops:
                store.update(" ;\n".join(drops))
        finally:
            store.close()


def virtuoso_ini(folder: Path, sql_port: int, http_port: int, rows: int) -> str:
    """A minimal virtuoso.ini: everything under ``folder``; answers cut at ``rows`` rows (the stock
    file cuts every answer at 10,000, silently)."""
    return f"""[Database]
DatabaseFile = {folder}/virtuoso.db
ErrorLogFile = {folder}/virtuoso.log
LockFile = {folder}/virtuoso.lck
TransactionFile = {folder}/virtuoso.trx
xa_persistent_file = {folder}/virtuoso.pxa
[TempDatabase]
DatabaseFile = {folder}/virtuoso-temp.db
TransactionFile = {folder}/virtuoso-temp.trx
[Parameters]
ServerPort = 127.0.0.1:{sql_port}
DisableUnixSocket = 1
NumberOfBuffers = 20000
MaxDirtyBuffers = 15000
DirsAllowed = .
[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = /var/lib/virtuoso-opensource-7/vsp
ServerThreads = 10
[SPARQL]
ResultSetMaxRows = {rows}
MaxQueryExecutionTime = 300
"""


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


@pytest.fixture(scope="session")
def virtuoso_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VirtuosoServer]:
    server = VirtuosoServer(tmp_path_factory.mktemp("virtuoso"))
    yield server
    server.stop()


# The backends the ``wb`` tests run on: the embedded store and `oxigraph serve`. Add "virtuoso"
# (WORKBENCH_TEST_BACKENDS=embedded,remote,virtuoso) to run all of them on Virtuoso too: 17 of
# its 428 fail there, each a difference docs/deployment.md names (15 read as of a date, which is
# refused there); tests/test_engines.py holds what CI checks on it.
@pytest.fixture(params=os.environ.get("WORKBENCH_TEST_BACKENDS", "embedded,remote").split(","))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An empty store of each backend."""
    s = empty_store(request, tmp_path)
    yield s
    s.close()


def empty_store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """An empty store of the backend ``request.param`` names: "embedded", "remote" (``oxigraph
    serve``) or "virtuoso"."""
    if request.param == "embedded":
        return EmbeddedStore(tmp_path / "store", create=True)
    server: OxigraphServer | VirtuosoServer = request.getfixturevalue(
        "virtuoso_server" if request.param == "virtuoso" else "oxigraph_server")
    server.clear()
    return RemoteStore(server.url)


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


def in_queue(quad: bytes) -> bool:
    """Whether an N-Quads line is in a candidate's graph (the review queue: a graph each)."""
    return re.search(rb" <urn:wb:candidate:[^>]*> \.$", quad.rstrip()) is not None


def dump(store: Store) -> bytes:
    """Every quad in the store, sorted, as N-Quads: equal bytes mean equal stores."""
    import pyoxigraph as ox

    lines = sorted((ox.serialize([q], format=ox.RdfFormat.N_QUADS) or b"") for q in store.quads())
    return b"".join(lines)


@contextmanager
def queries_sent(store: Store) -> Iterator[list[str]]:
    """The SELECTs ``store``'s class is sent while inside (the list fills as they go)."""
    sent: list[str] = []
    select = type(store).select

    def spy(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(query)
        return select(self, query, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(store), "select", spy)
        yield sent


def shown(queries: list[str]) -> str:
    """Queries, one line each, for an assertion's message."""
    return "\n".join(" ".join(q.split())[-300:] for q in queries)


@pytest.fixture(scope="module")
def walks_read_afresh() -> Iterator[None]:
    """For tests that count what a closure's walk reads: walks, what they reach and lone
    lookups kept from earlier questions at the same version (rules/walked) are not taken, so
    every walk reads as the first one does."""
    from workbench.rules.walked import Looked, Reached, Walked

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Walked, "get", lambda self, *args, **kwargs: ({}, {}))
        patch.setattr(Reached, "peek", lambda self, *args: None)
        patch.setattr(Looked, "peek", lambda self, *args: None)
        yield
