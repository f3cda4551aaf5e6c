"""The remote backend against servers that fail: nothing listening, silence, garbage, errors.

Every server here is a real socket on 127.0.0.1 served from a thread and closed after the test;
the client is the real ``RemoteStore`` over real HTTP. Whatever the server does, the caller gets a
:class:`StoreUnavailable` saying what went wrong, within the configured timeout, never a hang.
Timings asserted here are hang guards, not performance claims.
"""

from __future__ import annotations

import http.server
import io
import shutil
import socket
import subprocess
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pyoxigraph as ox
import pytest

from workbench.errors import StoreUnavailable
from workbench.service import Workbench
from workbench.store import RemoteStore

HANG_GUARD = 5.0  # seconds; a timeout of 1 s must give up well within this


def bug(reason: str) -> pytest.MarkDecorator:
    """Marks a test that once showed a product bug (fixed since); kept as a regression test."""
    return pytest.mark.regression(reason)


# ---------------------------------------------------------------------- servers

@pytest.fixture
def dead_url() -> Iterator[str]:
    """A port that refuses connections: bound (so nobody else takes it) but not listening."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


class SilentServer:
    """Accepts TCP connections (or, with ``accept=False``, leaves them in the backlog) and never answers."""

    def __init__(self, *, accept: bool) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.05)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.conns: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run if accept else self.stop.wait, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.conns.append(conn)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        assert not self.thread.is_alive()
        for conn in self.conns:
            conn.close()
        self.sock.close()


@pytest.fixture(params=["accepts", "backlog"])
def silent_url(request: pytest.FixtureRequest) -> Iterator[str]:
    server = SilentServer(accept=request.param == "accepts")
    yield server.url
    server.close()


Reply = Callable[[http.server.BaseHTTPRequestHandler, threading.Event], None]


@dataclass
class FakeSparql:
    """A real HTTP server on loopback whose answers the test decides; it counts requests."""

    reply: Reply
    requests: list[bytes] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    keep_alive: bool = False  # else the server closes each connection after its answer (without saying so)
    peers: list[int] = field(default_factory=list)  # the client's port, per request
    accepts: list[str] = field(default_factory=list)  # the Accept header, per request

    def start(self) -> FakeSparql:
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                fake.requests.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                fake.peers.append(self.client_address[1])
                fake.accepts.append(self.headers.get("Accept", ""))
                self.close_connection = not fake.keep_alive
                fake.reply(self, fake.stop)

            do_GET = do_POST  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        return self

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()  # joins the handler threads
        self.thread.join(timeout=5)
        assert not self.thread.is_alive()


@pytest.fixture
def fake() -> Iterator[Callable[..., FakeSparql]]:
    started: list[FakeSparql] = []

    def make(reply: Reply, *, keep_alive: bool = False) -> FakeSparql:
        server = FakeSparql(reply, keep_alive=keep_alive).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.close()


def answer(status: int, body: bytes, content_type: str = "application/sparql-results+json",
           length: int | None = None) -> Reply:
    def reply(h: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(body) if length is None else length))
        h.end_headers()
        h.wfile.write(body)
        h.wfile.flush()

    return reply


# The store's opening query (RemoteStore._probe): an IRI, a literal with a language, a typed one.
OPENED = answer(200, b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": "urn:wb:probe"}}, '
                b'{"x": {"type": "literal", "xml:lang": "en", "value": "a"}}, {"x": {"type": "literal", '
                b'"datatype": "http://www.w3.org/2001/XMLSchema#integer", "value": "1"}}]}}')


# A Workbench opening a store then asks whether it keeps sources in the layout of before (records.layout).
LAID_OUT = answer(200, b'{"head": {}, "boolean": false}')


def open_then(h: http.server.BaseHTTPRequestHandler, stop: threading.Event, n: int, after: Reply) -> None:
    """Answer a Workbench's opening (the probe, the layout's ASK), then ``after`` from request ``n`` on."""
    (OPENED if n == 1 else LAID_OUT if n == 2 else after)(h, stop)


def opening(body: bytes) -> bool:
    """Whether a request is the store's opening query (queries come form-encoded)."""
    return b"urn%3Awb%3Aprobe" in body


def timed(fn: Callable[[], object]) -> tuple[BaseException | None, float]:
    start = time.monotonic()
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - returned for the test to judge
        return exc, time.monotonic() - start
    return None, time.monotonic() - start


# ---------------------------------------------------------------------- (a) nothing listening

def test_nothing_listening_is_unavailable_quickly(dead_url: str) -> None:
    exc, took = timed(lambda: Workbench.open(dead_url))  # the default 30 s timeout is not waited for
    assert isinstance(exc, StoreUnavailable), repr(exc)
    assert took < HANG_GUARD
    assert "cannot reach" in str(exc) and dead_url in str(exc)
    assert exc.status == 503


def test_nothing_listening_direct_store(dead_url: str) -> None:
    with pytest.raises(StoreUnavailable, match="cannot reach"):
        RemoteStore(dead_url + "/query", timeout=1)


# ---------------------------------------------------------------------- (b) silence

def test_silent_server_is_unavailable_within_the_timeout(silent_url: str) -> None:
    exc, took = timed(lambda: Workbench.open(silent_url, timeout=1))
    assert isinstance(exc, StoreUnavailable), repr(exc)
    assert took < HANG_GUARD
    assert "did not answer within 1 s" in str(exc)


def test_server_silent_after_open_is_unavailable_within_the_timeout(fake: Callable[[Reply], FakeSparql]) -> None:
    def ask_then_silence(h: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
        open_then(h, stop, len(server.requests), lambda h, stop: stop.wait(30))

    server = fake(ask_then_silence)
    wb = Workbench.open(server.url, timeout=1)
    exc, took = timed(wb.stats)
    assert isinstance(exc, StoreUnavailable), repr(exc)
    assert took < HANG_GUARD
    assert "did not answer within 1 s" in str(exc)


def test_headers_then_silence_is_unavailable_within_the_timeout(fake: Callable[[Reply], FakeSparql]) -> None:
    def stall(h: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
        answer(200, b'{"boolean"', length=100)(h, stop)
        stop.wait(30)

    server = fake(stall)
    exc, took = timed(lambda: Workbench.open(server.url, timeout=1))
    assert isinstance(exc, StoreUnavailable), repr(exc)
    assert took < HANG_GUARD


@bug("the timeout applies to each socket read, not to the request: a server that sends one "
     "byte every 0.3 s holds a timeout=1 client for as long as it likes (remote.py _post)")
def test_trickling_server_is_unavailable_within_the_timeout(fake: Callable[[Reply], FakeSparql]) -> None:
    def trickle(h: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/sparql-results+json")
        h.send_header("Content-Length", "1000")
        h.end_headers()
        for _ in range(15):  # 4.5 s, then give up
            if stop.wait(0.3):
                return
            h.wfile.write(b" ")
            h.wfile.flush()

    server = fake(trickle)
    exc, took = timed(lambda: Workbench.open(server.url, timeout=1))
    assert took < HANG_GUARD - 1.5, f"took {took:.1f} s with timeout=1"
    assert isinstance(exc, StoreUnavailable), repr(exc)


# ---------------------------------------------------------------------- (c) garbage

GARBAGE = {
    "html": b"<html><body>It works!</body></html>",
    "empty": b"",
    "binary": b"\xff\xfe\x00\x01garbage",
    "json null": b"null",
    "json without results": b'{"head": {}}',
    "broken json": b'{"head": {}, "boolean": tr',
}


@pytest.mark.parametrize("body", list(GARBAGE.values()), ids=list(GARBAGE))
def test_garbage_answer_is_unavailable_mentioning_garbage(fake: Callable[[Reply], FakeSparql], body: bytes) -> None:
    server = fake(answer(200, body))
    exc, took = timed(lambda: Workbench.open(server.url, timeout=1))
    assert isinstance(exc, StoreUnavailable), repr(exc)
    assert "garbage" in str(exc) and server.url in str(exc)
    assert took < HANG_GUARD


def test_garbage_after_open_is_unavailable(fake: Callable[[Reply], FakeSparql]) -> None:
    def ask_then_garbage(h: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
        open_then(h, stop, len(server.requests), answer(200, b"<html>maintenance</html>"))

    server = fake(ask_then_garbage)
    wb = Workbench.open(server.url, timeout=1)
    with pytest.raises(StoreUnavailable, match="garbage"):
        wb.resolve("Paris")


@bug("a body cut short (Content-Length 1000, 15 bytes, then close) raises http.client.IncompleteRead, "
     "not StoreUnavailable (remote.py _post catches URLError/OSError, not http.client.HTTPException)")
def test_truncated_answer_is_unavailable(fake: Callable[[Reply], FakeSparql]) -> None:
    server = fake(answer(200, b'{"boolean": tru', length=1000))
    with pytest.raises(StoreUnavailable):
        Workbench.open(server.url, timeout=1)


@bug("a server answering SELECT results to the opening ASK is reported as Invalid('expected an ASK "
     "query'), a 400 blaming the user's input, instead of StoreUnavailable")
@pytest.mark.parametrize("body", [b'{"head": {"vars": ["x"]}, "results": {"bindings": []}}',
                                  b'{"head": {}, "boolean": true}'], ids=["an empty table", "a boolean"])
def test_wrong_kind_of_results_is_unavailable(fake: Callable[[Reply], FakeSparql], body: bytes) -> None:
    server = fake(answer(200, body))
    with pytest.raises(StoreUnavailable, match="does not answer SPARQL queries as expected"):
        Workbench.open(server.url, timeout=1)


# ---------------------------------------------------------------------- (d) error statuses

@pytest.mark.parametrize("status", [500, 502, 503])
def test_error_status_is_unavailable_with_the_status(fake: Callable[[Reply], FakeSparql], status: int) -> None:
    server = fake(answer(status, b"kaboom: the database is on fire", "text/plain"))
    exc, took = timed(lambda: Workbench.open(server.url, timeout=1))
    assert isinstance(exc, StoreUnavailable), repr(exc)
    assert f"answered {status}" in str(exc)
    assert "kaboom" in str(exc)  # the server's own words are passed on
    assert took < HANG_GUARD


def test_error_status_on_update_is_unavailable(fake: Callable[[Reply], FakeSparql]) -> None:
    def ask_ok_update_fails(h: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
        if h.path.endswith("/update"):
            answer(500, b"disk full", "text/plain")(h, stop)
        else:
            OPENED(h, stop)

    server = fake(ask_ok_update_fails)
    store = RemoteStore(server.url, timeout=1)
    with pytest.raises(StoreUnavailable, match="answered 500: disk full"):
        store.update("INSERT DATA { <urn:a> <urn:b> <urn:c> }")


# ---------------------------------------------------------------------- the command line

def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("workbench")
    assert binary, "the workbench command is not installed: pip install -e '.[test]'"
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)


def _plain_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_cli_dead_endpoint_exits_1_with_a_plain_message(dead_url: str) -> None:
    line = _plain_error(run_cli("--endpoint", dead_url, "stats"))
    assert "cannot reach the SPARQL server" in line and dead_url in line


def test_cli_silent_endpoint_gives_up_after_its_timeout() -> None:
    server = SilentServer(accept=True)
    try:
        start = time.monotonic()
        line = _plain_error(run_cli("--endpoint", server.url, "--timeout", "1", "stats"))
        assert time.monotonic() - start < 15  # interpreter start-up plus 1 s: a hang guard
        assert "did not answer within 1 s" in line
    finally:
        server.close()


def test_cli_error_status_exits_1_with_a_plain_message(fake: Callable[[Reply], FakeSparql]) -> None:
    server = fake(answer(500, b"kaboom", "text/plain"))
    line = _plain_error(run_cli("--endpoint", server.url, "--timeout", "2", "stats"))
    assert "answered 500" in line


@bug("a truncated answer makes the CLI print an http.client.IncompleteRead traceback instead of "
     "one 'error: ...' line")
def test_cli_truncated_answer_exits_1_with_a_plain_message(fake: Callable[[Reply], FakeSparql]) -> None:
    server = fake(answer(200, b'{"boolean": tru', length=1000))
    _plain_error(run_cli("--endpoint", server.url, "--timeout", "2", "stats"))


# ---------------------------------------------------------------------- (e) connections and answers

SELECT_ONE = answer(200, b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": "urn:a"}}]}}')


def ask_then(reply: Reply, requests: Callable[[], list[bytes]]) -> Reply:
    """The opening query answered as a standard server would, ``reply`` to the rest."""
    def reply_to(h: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
        (OPENED if opening(requests()[-1]) else reply)(h, stop)
    return reply_to


def test_queries_reuse_one_kept_alive_connection(fake: Callable[..., FakeSparql]) -> None:
    server = fake(ask_then(SELECT_ONE, lambda: server.requests), keep_alive=True)
    store = RemoteStore(server.url, timeout=2)
    for _ in range(5):
        assert [r["x"].value for r in store.select("SELECT ?x WHERE { ?x ?p ?o }")] == ["urn:a"]  # type: ignore[union-attr]
    store.close()
    assert len(server.requests) == 6 and len(set(server.peers)) == 1, server.peers
    assert store.round_trips == 6 and store.round_trip_s > 0


def test_a_standard_server_gets_queries_posted_directly_and_may_refuse_lateral(
        fake: Callable[..., FakeSparql]) -> None:
    """The opening probe goes URL-encoded (how a server's dialect is found: Virtuoso 7 never
    answers a direct POST); once the server answered as a standard one, queries go POSTed
    directly, with no URL encoding. LATERAL is asked about the first time it matters; a server
    that refuses it (400) is no error: questions just do not send their first reads early."""
    refuse = answer(400, b"unknown keyword LATERAL", "text/plain")

    def reply(h: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
        last = server.requests[-1]
        (OPENED if opening(last) else refuse if b"LATERAL" in last else SELECT_ONE)(h, stop)

    server = fake(reply, keep_alive=True)
    store = RemoteStore(server.url, timeout=2)
    assert len(store.select("SELECT ?x WHERE { ?x ?p ?o }")) == 1
    assert opening(server.requests[0]) and server.requests[1] == b"SELECT ?x WHERE { ?x ?p ?o }"
    assert store.takes_lateral() is False and store.takes_lateral() is False
    assert len(server.requests) == 3  # asked once
    store.close()


def test_a_server_that_closes_idle_connections_is_no_error(fake: Callable[..., FakeSparql]) -> None:
    server = fake(ask_then(SELECT_ONE, lambda: server.requests))  # closes each connection after answering, silently
    store = RemoteStore(server.url, timeout=2)
    for _ in range(3):
        assert len(store.select("SELECT ?x WHERE { ?x ?p ?o }")) == 1
    assert len(server.requests) == 4 and len(set(server.peers)) == 4


def test_select_prefers_tsv_and_reads_what_the_server_sends(fake: Callable[..., FakeSparql]) -> None:
    tsv = answer(200, b"?x\n<urn:b>\n", "text/tab-separated-values; charset=utf-8")
    server = fake(ask_then(tsv, lambda: server.requests), keep_alive=True)
    store = RemoteStore(server.url, timeout=2)
    assert [r["x"].value for r in store.select("SELECT ?x WHERE { ?x ?p ?o }")] == ["urn:b"]  # type: ignore[union-attr]
    assert all(a.startswith("text/tab-separated-values") for a in server.accepts)  # the opening query's too
    store.close()


def test_partial_results_are_refused(fake: Callable[..., FakeSparql]) -> None:
    partial = answer(206, b'{"head": {"vars": ["x"]}, "results": {"bindings": []}}')
    server = fake(ask_then(partial, lambda: server.requests))
    store = RemoteStore(server.url, timeout=2)
    with pytest.raises(StoreUnavailable, match="206: partial results"):
        store.select("SELECT ?x WHERE { ?x ?p ?o }")


def test_an_update_is_never_sent_twice(fake: Callable[..., FakeSparql]) -> None:
    def drop_updates(h: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
        if h.path.endswith("/update"):
            h.close_connection = True  # no answer at all: the client cannot know whether it landed
        else:
            OPENED(h, stop)

    server = fake(drop_updates, keep_alive=True)
    store = RemoteStore(server.url, timeout=2)
    with pytest.raises(StoreUnavailable):
        store.update("INSERT DATA { <urn:a> <urn:b> <urn:c> }")
    assert sum(b"INSERT" in r for r in server.requests) == 1


def test_trickling_after_connection_close_is_unavailable_within_the_timeout(fake: Callable[..., FakeSparql]) -> None:
    # "Connection: close" hands the socket from the connection to the response: the deadline must still reach it.
    def trickle(h: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/sparql-results+json")
        h.send_header("Content-Length", "1000")
        h.send_header("Connection", "close")
        h.end_headers()
        for _ in range(15):
            if stop.wait(0.3):
                return
            h.wfile.write(b" ")
            h.wfile.flush()

    server = fake(trickle)
    exc, took = timed(lambda: Workbench.open(server.url, timeout=1))
    assert took < HANG_GUARD - 1.5, f"took {took:.1f} s with timeout=1"
    assert isinstance(exc, StoreUnavailable), repr(exc)


# ---------------------------------------------------------------------- dumps

def _tsv_dump(rows: int, *, broken_at: int | None = None) -> bytes:
    lines = [b"?s\t?p\t?o\t?g"]
    for i in range(rows):
        lines.append(b"<urn:s%d>\t<urn:p>\t\"a literal long enough to weigh something, number %d\"\t<urn:g%d>"
                     % (i, i, i % 7) if i != broken_at else b"<urn:s\t<<garbage")
    return b"\n".join(lines) + b"\n"


def test_a_dump_streams_the_answer_instead_of_holding_it(fake: Callable[..., FakeSparql]) -> None:
    # 100k quads, 10 MB of answer: a dump read whole (the bytes, then the rows) peaks far above it.
    body = _tsv_dump(100_000)
    server = fake(ask_then(answer(200, body, "text/tab-separated-values"), lambda: server.requests), keep_alive=True)
    store = RemoteStore(server.url, timeout=5)
    out = io.BytesIO()
    tracemalloc.start()
    try:
        counted = sum(1 for _ in store.quads())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    store.dump(out, format=ox.RdfFormat.N_QUADS)
    store.close()
    assert counted == 100_000 and out.getvalue().count(b"\n") == 100_000
    assert peak < len(body) / 4, f"the dump held {peak:,} bytes at its peak for a {len(body):,}-byte answer"


def test_a_dump_garbled_part_way_is_unavailable(fake: Callable[..., FakeSparql]) -> None:
    server = fake(ask_then(answer(200, _tsv_dump(1000, broken_at=900), "text/tab-separated-values"),
                           lambda: server.requests))
    store = RemoteStore(server.url, timeout=5)
    with pytest.raises(StoreUnavailable, match="garbage"):
        store.dump(io.BytesIO(), format=ox.RdfFormat.N_QUADS)


def test_a_dump_may_take_long_but_not_be_silent_long(fake: Callable[..., FakeSparql]) -> None:
    # Each part of the answer comes within the store's timeout, the whole takes longer: a dump is
    # not cut short; a query would be.
    body = _tsv_dump(50)

    def slowly(h: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/tab-separated-values")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        for i in range(0, len(body), len(body) // 5 + 1):
            if stop.wait(0.4):
                return
            h.wfile.write(body[i:i + len(body) // 5 + 1])
            h.wfile.flush()

    server = fake(ask_then(slowly, lambda: server.requests))
    store = RemoteStore(server.url, timeout=1)
    assert len(list(store.quads())) == 50  # about 2 s in all
    with pytest.raises(StoreUnavailable, match="within 1 s"):
        store.select("SELECT ?s ?p ?o ?g WHERE { GRAPH ?g { ?s ?p ?o } }")

    def silent(h: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/tab-separated-values")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body[:100])
        h.wfile.flush()
        stop.wait(30)

    quiet = fake(ask_then(silent, lambda: quiet.requests))
    exc, took = timed(lambda: list(RemoteStore(quiet.url, timeout=1).quads()))
    assert isinstance(exc, StoreUnavailable) and "silent for 1 s" in str(exc), repr(exc)
    assert took < HANG_GUARD
