"""The SPARQL findings of the security issue, against real servers (invariants 10 and 11).

- SERVICE never calls out (finding 2): the queries that fooled the old masking reader, by GET,
  POST form and POST direct, in subqueries too, against `workbench serve` over an embedded store
  and over a real `oxigraph serve` (`--endpoint`), where a viewer once pointed SERVICE at the
  backing server's own /query and read hidden statements and token hashes. Each test starts a
  listener on a free port and asserts it received nothing.
- A query cannot kill the server (finding 3): what crashed pyoxigraph's parser is answered 400
  naming the limit, and the server (and the backing oxigraph serve) keeps serving.
- A runaway query stops at its deadline: the worker process evaluating it is killed, so the
  server's CPU falls back at once; a worker that dies mid-query is answered 500 and replaced.
- An update is never given to a SPARQL engine, not even a scratch store.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
import types
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pyoxigraph as ox
import pytest

from tests.conftest import OxigraphServer, ServerProcess, dump, free_port
from tests.test_server import Server
from workbench.server import updates
from workbench.service import Workbench
from workbench.store import RemoteStore

MB = 1_000_000
HIDDEN = "the-hidden-region-is-mars"


def regression(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.regression(reason)


class Listener:
    """A loopback port that records whatever connects to it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/sparql"
        self.seen: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.seen.append(conn.recv(4096) or b"(connected)")
                except OSError:
                    self.seen.append(b"(connected)")

    def nothing_arrived(self) -> bool:
        time.sleep(0.3)  # a connection the server made would have been accepted by now
        return self.seen == []

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


def _fill(wb: Workbench, folder: Path) -> tuple[str, str]:
    """Sample data, a record only group:inner may see, an admin and a viewer: their tokens."""
    wb.init(sample=True)
    secret = folder / "secret.trig"
    secret.write_text(f'GRAPH <urn:wb:record:hidden-1> {{ <urn:wb:entity:me> <urn:test:region> "{HIDDEN}" }}\n')
    wb.import_files([secret], source="inner-notes", visible_to=["group:inner"])
    return wb.add_user("root", ["admin"]), wb.add_user("vic", ["viewer"])


@dataclass
class Served:
    server: ServerProcess
    url: str
    admin: str
    viewer: str

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin if who == 'admin' else self.viewer}"}

    def query(self, text: str, via: str = "GET", who: str = "viewer", timeout: float = 30) -> httpx.Response:
        if via == "GET":
            return httpx.get(self.url, params={"query": text}, headers=self.auth(who), timeout=timeout)
        if via == "form":
            return httpx.post(self.url, data={"query": text}, headers=self.auth(who), timeout=timeout)
        return httpx.post(self.url, content=text.encode(), timeout=timeout,
                          headers={**self.auth(who), "Content-Type": "application/sparql-query"})

    def quads(self) -> int:
        r = self.query("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }", who="admin")
        assert r.status_code == 200, r.text
        return int(r.json()["results"]["bindings"][0]["n"]["value"])


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("security")
    with Workbench.open(folder / "store", create=True, user="root") as wb:
        admin, viewer = _fill(wb, folder)
    server = Server(folder / "store", "--query-timeout", "2", "--max-body", str(3 * MB))
    yield Served(server, server.url, admin, viewer)
    server.stop()


class EndpointServer(ServerProcess):
    """`workbench --endpoint URL serve`: Workbench over a SPARQL server it does not own."""

    name = "workbench --endpoint serve"

    def __init__(self, endpoint: str, cache: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/sparql"
        with pytest.MonkeyPatch.context() as env:
            env.setenv("XDG_CACHE_HOME", str(cache))  # the views of a remote store are kept here
            self.start([sys.executable, "-m", "workbench.cli", "--endpoint", endpoint, "serve", "--port",
                        str(self.port)], self.url)


@dataclass
class Remote:
    oxigraph: OxigraphServer
    served: Served


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Remote]:
    folder = tmp_path_factory.mktemp("endpoint")
    backend = OxigraphServer(folder / "oxigraph")
    try:
        wb = Workbench(RemoteStore(backend.url), user="root")
        admin, viewer = _fill(wb, folder)
        wb.close()
        server = EndpointServer(backend.url, folder / "cache")
        try:
            yield Remote(backend, Served(server, server.url, admin, viewer))
        finally:
            server.stop()
    finally:
        backend.stop()


def still_serving(served: Served, quads: int | None = None) -> None:
    assert served.server.process.poll() is None, "the server died"
    found = served.quads()
    if quads is not None:
        assert found == quads
    r = httpx.get(served.url.removesuffix("/sparql") + "/api/stats", headers=served.auth("viewer"), timeout=10)
    assert r.status_code == 200, r.text


# ---------------------------------------------------------------------- SERVICE never calls out


SERVICE = {
    "a '<' read as an IRI hides SERVICE in a 'string'":
        "SELECT * WHERE {{ FILTER(''<'>') SERVICE <{url}> {{ ?s ?p ?o }} FILTER(1 != 'x') }}",
    "SERVICE after a dot": "SELECT * WHERE {{ BIND(1 AS ?a) .SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "in a subquery, after a dot": "SELECT * WHERE {{ {{ SELECT * WHERE {{ BIND(1 AS ?a) .SERVICE <{url}> "
                                  "{{ ?s ?p ?o }} }} }} }}",
    "in a subquery, behind '<'": "SELECT * WHERE {{ {{ SELECT * WHERE {{ FILTER(''<'>') SERVICE <{url}> "
                                 "{{ ?s ?p ?o }} FILTER(1 != 'x') }} }} }}",
    "glued to a number": "SELECT * WHERE {{ BIND(1 AS ?a) ?a ?a 1SERVICE <{url}> {{ }} }}",
    "glued to SILENT": "SELECT * WHERE {{ BIND(1 AS ?a) SERVICESILENT <{url}> {{ ?s ?p ?o }} }}",
    "after a comment that CR ends": "SELECT * WHERE {{ BIND(1 AS ?a) # x\rSERVICE <{url}> {{ ?s ?p ?o }}\n }}",
    "in FILTER EXISTS": "ASK {{ FILTER EXISTS {{ BIND(1 AS ?a) .SERVICE <{url}> {{ ?s ?p ?o }} }} }}",
}


@regression("SERVICE hidden from the masking reader made the server call out, for any reader (finding 2)")
@pytest.mark.parametrize("via", ["GET", "form", "direct"])
@pytest.mark.parametrize("query", list(SERVICE.values()), ids=list(SERVICE))
def test_service_is_refused_and_never_called(embedded: Served, listener: Listener, query: str, via: str) -> None:
    r = embedded.query(query.format(url=listener.url), via)
    assert r.status_code == 400, r.text
    assert "SERVICE is refused" in r.text and r.headers["content-type"].startswith("text/plain")
    assert listener.nothing_arrived(), f"the server called out: {listener.seen!r}"
    still_serving(embedded)


@regression("with --endpoint, a viewer's SERVICE to the backing server's /query read hidden statements and token "
            "hashes (finding 2)")
@pytest.mark.parametrize("via", ["GET", "form", "direct"])
@pytest.mark.parametrize("query", list(SERVICE.values())[:4], ids=list(SERVICE)[:4])
def test_service_through_the_remote_backend(remote: Remote, listener: Listener, query: str, via: str) -> None:
    served = remote.served
    everything = query.replace("?s ?p ?o", "GRAPH ?g {{ ?s ?p ?o }}")
    backing = everything.format(url=remote.oxigraph.url + "/query")
    r = served.query(backing, via)
    assert r.status_code == 400 and "SERVICE is refused" in r.text, r.text
    assert HIDDEN not in r.text and "tokenHash" not in r.text and "$argon2" not in r.text
    r = served.query(query.format(url=listener.url), via)
    assert r.status_code == 400 and "SERVICE is refused" in r.text, r.text
    assert listener.nothing_arrived(), f"the server called out: {listener.seen!r}"
    # The viewer sees what they may, and not the hidden record.
    r = served.query("SELECT ?o WHERE { GRAPH ?g { ?s <urn:test:region> ?o } }", "GET")
    assert r.status_code == 200 and HIDDEN not in r.text
    assert remote.oxigraph.process.poll() is None
    still_serving(served)


# ---------------------------------------------------------------------- a query cannot kill the server

CRASHERS = {
    "5,000 nested (": "ASK { FILTER(" + "(" * 5000 + "1" + ")" * 5000 + ") }",
    "5,000 nested {": "SELECT * WHERE " + "{" * 5000 + "}" * 5000,
    "10,000 chained !": "ASK { FILTER(" + "!" * 10000 + "true) }",
    "20,000 ||": "ASK { FILTER(" + " || ".join(["false"] * 20000) + ") }",
    "20,000 +": "ASK { FILTER(" + "+".join(["1"] * 20000) + " = 1) }",
    "20,000 path |": "ASK { ?s " + "|".join(["<p>"] * 20000) + " ?o }",
    "20,000 UNION": "SELECT * WHERE { " + " UNION ".join(["{}"] * 20000) + " }",
    "5,000 MINUS": "SELECT * WHERE { " + " ".join(["MINUS { }"] * 5000) + " }",
    "5,000 BIND": "SELECT * WHERE { " + " ".join(f"BIND(1 AS ?v{i})" for i in range(5000)) + " }",
    "1,000 nested FILTER EXISTS": "ASK { " + "FILTER EXISTS { " * 1000 + " }" * 1000 + " }",
}


@regression("one 10 KB query from any token killed `workbench serve`: a segfault in pyoxigraph's parser (finding 3)")
@pytest.mark.parametrize("via", ["GET", "form", "direct"])
@pytest.mark.parametrize("query", list(CRASHERS.values()), ids=list(CRASHERS))
def test_a_query_that_crashed_the_engine_is_400_and_the_server_keeps_serving(
    embedded: Served, query: str, via: str,
) -> None:
    if via == "GET" and len(urllib.parse.quote(query)) > 60_000:
        via = "form"  # too long for httpx's URLs
    quads = embedded.quads()
    r = embedded.query(query, via)
    assert r.status_code == 400, r.text[:300]
    assert "(the limit)" in r.text and r.headers["content-type"].startswith("text/plain")
    still_serving(embedded, quads)


@regression("a query forwarded to the backing oxigraph serve could crash it (finding 3)")
def test_the_backing_server_survives_what_would_crash_it(remote: Remote) -> None:
    for query in list(CRASHERS.values())[:3]:
        r = remote.served.query(query, "form")
        assert r.status_code == 400 and "(the limit)" in r.text, r.text[:300]
    assert remote.oxigraph.process.poll() is None
    still_serving(remote.served)


def test_a_query_past_the_length_limit_is_413(embedded: Served) -> None:
    r = embedded.query("ASK {}" + " " * (MB + 10), "direct")  # within --max-body (3 MB), past 1,000,000 characters
    assert r.status_code == 413 and "characters long; the limit is 1,000,000" in r.text, r.text[:300]
    still_serving(embedded)


# ---------------------------------------------------------------------- runaway queries stop


SLOW = ("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?a { ?s1 ?p1 ?o1 } GRAPH ?b { ?s2 ?p2 ?o2 } "
        "GRAPH ?c { ?s3 ?p3 ?o3 } GRAPH ?d { ?s4 ?p4 ?o4 } }")


def _cpu(pid: int) -> float:
    """CPU seconds used so far by a process and its children now alive."""
    root = psutil.Process(pid)
    total = 0.0
    for p in [root, *root.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


@regression("a timed-out query kept burning CPU until the server stopped: pyoxigraph cannot cancel (issue)")
def test_a_runaway_query_stops_using_cpu_at_its_deadline(embedded: Served) -> None:
    still_serving(embedded)  # the pool of workers is up
    started = time.monotonic()
    r = embedded.query(SLOW, who="admin")
    assert r.status_code == 503 and "did not finish within 2 s" in r.text, r.text
    assert time.monotonic() - started < 5
    time.sleep(0.5)  # the replacement worker starts meanwhile
    before = _cpu(embedded.server.process.pid)
    time.sleep(1.5)
    used = _cpu(embedded.server.process.pid) - before
    assert used < 0.5, f"the server used {used:.2f} s of CPU in the 1.5 s after the deadline"
    still_serving(embedded)


def test_a_worker_that_dies_mid_query_is_answered_500_and_replaced(embedded: Served) -> None:
    still_serving(embedded)
    root = psutil.Process(embedded.server.process.pid)

    def kill_the_busy_worker() -> None:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            for child in root.children():
                try:
                    busy = child.cpu_percent(interval=0.1) > 30
                except psutil.NoSuchProcess:
                    continue
                if busy:
                    os.kill(child.pid, signal.SIGKILL)
                    return

    killer = threading.Thread(target=kill_the_busy_worker)
    killer.start()
    r = embedded.query(SLOW, who="admin")
    killer.join()
    assert r.status_code == 500 and "stopped on this query" in r.text, r.text
    still_serving(embedded)


def test_the_worker_pool_answers_every_format_and_the_dataset(embedded: Served) -> None:
    """Views on disk are read by worker processes: the same answers as the Protocol asks."""
    count = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <urn:wb:graph:ontology> { ?s ?p ?o } }"
    r = embedded.query(count, who="admin")
    n = int(r.json()["results"]["bindings"][0]["n"]["value"])
    for media in ("application/sparql-results+xml", "text/csv", "text/tab-separated-values"):
        r = httpx.get(embedded.url, params={"query": count}, headers={**embedded.auth("admin"), "Accept": media})
        assert r.status_code == 200 and r.headers["content-type"].startswith(media) and str(n) in r.text
    construct = "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <urn:wb:graph:ontology> { ?s ?p ?o } } LIMIT 3"
    for media, fmt in (("text/turtle", ox.RdfFormat.TURTLE), ("application/n-triples", ox.RdfFormat.N_TRIPLES),
                       ("application/ld+json", ox.RdfFormat.JSON_LD), ("application/rdf+xml", ox.RdfFormat.RDF_XML)):
        r = httpx.get(embedded.url, params={"query": construct}, headers={**embedded.auth("admin"), "Accept": media})
        assert r.status_code == 200 and len(list(ox.parse(r.content, fmt))) == 3
    default = httpx.get(embedded.url, params=[("query", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"),
                                              ("default-graph-uri", "urn:wb:graph:ontology")],
                        headers=embedded.auth("admin"))
    assert int(default.json()["results"]["bindings"][0]["n"]["value"]) == n
    broken = embedded.query("SELECT * WHERE {\n ?s ?p }", who="admin")
    assert broken.status_code == 400 and "error at 2:" in broken.text, broken.text


# ---------------------------------------------------------------------- updates never reach an engine


@regression("updates were run in pyoxigraph against a scratch store for a syntax check; a fooled masker "
            "would have run LOAD or SERVICE (finding 2)")
def test_an_update_is_never_given_to_a_sparql_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoEngine:
        def __init__(self, *args: object, **kwargs: object) -> None:
            raise AssertionError("a SPARQL engine was started for an update")

    fake = types.SimpleNamespace(**{name: getattr(ox, name) for name in dir(ox) if not name.startswith("_")})
    fake.Store = NoEngine
    monkeypatch.setattr(updates, "ox", fake)
    text = ("PREFIX ex: <http://e/>\nINSERT DATA { GRAPH <urn:wb:record:u-1> { ex:s ex:p '''a } ; LOAD''' } } ;\n"
            "INSERT DATA { GRAPH <urn:wb:record:u-2> { ex:s ex:p 1 } }")
    found = updates.read_insert(text, "http://127.0.0.1/sparql")
    assert len(found.quads) == 2
    for refused in ("LOAD <http://127.0.0.1:1/x>", "INSERT { } WHERE { SERVICE <http://127.0.0.1:1/> { } }",
                    "INSERT DATA { GRAPH <urn:wb:record:u-3> { <urn:a> <urn:b> <urn:c> } } ; DELETE WHERE { ?s ?p ?o }"):
        with pytest.raises(updates.ProtocolError) as caught:
            updates.read_insert(refused, "http://127.0.0.1/sparql")
        assert caught.value.status == 403


@pytest.mark.parametrize(("text", "status", "says"), [
    ("PREFIX a: <http://a/> INSERT DATA { GRAPH a:g { a:s a:p 1 } } ; PREFIX b: <http://b/> "
     "INSERT DATA { GRAPH b:g { b:s b:p 2 } }", 200, ""),  # a prologue after ';', as the grammar allows
    ("INSERT DATA { GRAPH <urn:wb:record:a> { _:x <urn:p> 1 } } ; "
     "INSERT DATA { GRAPH <urn:wb:record:b> { _:x <urn:p> 2 } }", 400, "used by two operations"),
    ("INSERT DATA { GRAPH <urn:wb:record:a> { <urn:s> <urn:p> << <urn:a> <urn:b> <urn:c> >> } }", 400, "error at 1:"),
    ("INSERT DATA { <urn:wb:record:a> { <urn:s> <urn:p> 1 } }", 403, "default graph"),  # TriG, not SPARQL
    ("INSERT DATA { { <urn:s> <urn:p> 1 } }", 400, "expected GRAPH"),
    ("INSERT DATA { GRAPH <urn:wb:record:a> { GRAPH <urn:wb:record:b> { } } }", 400, "error at 1:"),
    ("INSERT DATA { GRAPH _:g { <urn:s> <urn:p> 1 } }", 400, "by an IRI"),
    ("INSERT DATA { GRAPH <urn:wb:record:a> { <urn:s> <urn:p> 1 } } INSERT DATA { }", 400, "expected ';'"),
    ("; INSERT DATA { }", 400, "error at 1:1"),
])
def test_the_update_recognizer_reads_exactly_what_it_accepts(text: str, status: int, says: str) -> None:
    if status == 200:
        assert len(updates.read_insert(text, "http://127.0.0.1/sparql").quads) == 2
        return
    with pytest.raises(updates.ProtocolError) as caught:
        updates.read_insert(text, "http://127.0.0.1/sparql")
    assert caught.value.status == status and says in caught.value.message, caught.value.message


UPDATES = {
    "LOAD behind a comment CR ends": "INSERT DATA {{ GRAPH <urn:wb:record:s-1> {{ <urn:a> <urn:b> <urn:c> }} }} "
                                     "# x\r; LOAD <{url}>",
    "SERVICE in a WHERE behind '<'": "INSERT DATA {{ GRAPH <urn:wb:record:s-2> {{ <urn:a> <urn:b> <urn:c> }} }} ; "
                                     "INSERT {{ }} WHERE {{ FILTER(''<'>') SERVICE <{url}> {{ ?s ?p ?o }} FILTER(1 != 'x') }}",
    "LOAD after an escaped #": "PREFIX ex: <http://e/> INSERT DATA {{ GRAPH <urn:wb:record:s-3> {{ ex:s ex:p ex:o\\# }} }} "
                               "; LOAD <{url}> ; INSERT DATA {{ GRAPH <urn:wb:record:s-3> {{ ex:s ex:p ex:o \n}} }}",
    "lower-case load": "insert data {{ graph <urn:wb:record:s-4> {{ <urn:a> <urn:b> <urn:c> }} }} ; load <{url}>",
}


@pytest.mark.parametrize("text", list(UPDATES.values()), ids=list(UPDATES))
def test_an_admins_update_with_load_or_service_never_calls_out(
    embedded: Served, listener: Listener, text: str,
) -> None:
    quads = embedded.quads()
    r = httpx.post(embedded.url, content=text.format(url=listener.url).encode(), timeout=30,
                   headers={**embedded.auth("admin"), "Content-Type": "application/sparql-update"})
    assert r.status_code == 403 and "refused" in r.text, r.text
    assert listener.nothing_arrived(), f"the server called out: {listener.seen!r}"
    still_serving(embedded, quads)


def test_the_store_is_unchanged_on_disk(tmp_path: Path) -> None:
    """Bad input changes nothing: a server over a fresh store refuses all of the above, and its
    store on disk is the one it started on."""
    path = tmp_path / "store"
    with Workbench.open(path, create=True, user="root") as wb:
        admin, viewer = _fill(wb, tmp_path)
        before = dump(wb.store)
    server = Server(path)
    try:
        served = Served(server, server.url, admin, viewer)
        for query in [*SERVICE.values(), *list(CRASHERS.values())[:4]]:
            r = served.query(query.format(url="http://127.0.0.1:9/sparql") if "{url}" in query else query, "form")
            assert r.status_code == 400, r.text[:200]
        r = httpx.post(server.url, content=urllib.parse.quote("x").encode(), timeout=10,
                       headers={**served.auth("admin"), "Content-Type": "application/sparql-update"})
        assert r.status_code == 400
    finally:
        server.stop()
    with Workbench.open(path) as wb:
        assert dump(wb.store) == before
