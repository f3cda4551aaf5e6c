"""The quick lane at the HTTP layer (workbench.server.lane): uvicorn's httptools protocol
answering a bounded GET on /sparql itself, before ASGI.

A real uvicorn server in a thread of this process, on a real socket, with the protocol
``workbench serve`` uses; the application's own lane (``QuickLane``) is counted, so each test
knows which way a request went. What the HTTP layer answers must be what the ASGI way answers,
with the same headers; whatever it does not take (a request behind one still answering, a body,
a proxy's headers, HTTP/1.0's end of connection, a lane that fails) must be answered the ASGI
way, in order, and correctly.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import uvicorn

from workbench.server import app as app_module
from workbench.server import create_app
from workbench.server.lane import protocol
from workbench.server.sparql import Endpoint
from workbench.service import Workbench

POINT = "SELECT ?p ?o WHERE { GRAPH ?g { <urn:wb:entity:my-car> ?p ?o } }"
GUARDED = "SELECT ?p ?o WHERE { GRAPH ?g { <urn:wb:entity:my-car> ?p ?o } FILTER(true) }"  # not bounded
JSON = "application/sparql-results+json"


@dataclass
class Running:
    port: int
    token: str
    asgi: list[str] = field(default_factory=list)  # the paths the ASGI lane was asked about

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/sparql"

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", "Accept": JSON}


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    path = tmp_path_factory.mktemp("lane") / "store"
    wb = Workbench.open(path, create=True, user="root")
    wb.init(sample=True)
    token = wb.add_user("root", ["admin"])
    app = create_app(wb)
    http = protocol(app)
    assert not isinstance(http, str), "uvicorn's protocol is not the one the lane was written against"
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", http=http, loop="uvloop", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    found = Running(sock.getsockname()[1], token)
    real = app_module.QuickLane.__call__

    async def counted(self: app_module.QuickLane, scope: dict[str, object], receive: object, send: object) -> None:
        found.asgi.append(str(scope.get("path")))
        await real(self, scope, receive, send)  # type: ignore[arg-type]

    app_module.QuickLane.__call__ = counted  # type: ignore[method-assign]
    try:
        httpx.get(found.url, params={"query": POINT}, headers=found.auth())  # the reader's view made
        yield found
    finally:
        app_module.QuickLane.__call__ = real  # type: ignore[method-assign]
        server.should_exit = True
        thread.join(10)
        wb.close()


def _rows(body: bytes) -> list[tuple[str, ...]]:
    data = json.loads(body)
    return sorted(tuple(f"{k}={v['value']}" for k, v in sorted(b.items())) for b in data["results"]["bindings"])


def _get(query: str) -> str:
    return "/sparql?" + urllib.parse.urlencode({"query": query})


def _raw(running: Running, requests: list[bytes], *, until_closed: bool = False, answers: int = 0) -> bytes:
    """Send ``requests`` in one write on one connection; read ``answers`` responses (or to the end)."""
    with socket.create_connection(("127.0.0.1", running.port), timeout=10) as conn:
        conn.sendall(b"".join(requests))
        got = b""
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            got += chunk
            if not until_closed and _complete(got) >= answers:
                break
        return got


def _complete(data: bytes) -> int:
    """How many whole responses (each with a content-length) ``data`` holds."""
    count, at = 0, 0
    while (end := data.find(b"\r\n\r\n", at)) >= 0:
        head = data[at:end].decode("latin-1").lower()
        length = int(head.split("content-length: ")[1].split("\r\n")[0])
        if len(data) < end + 4 + length:
            break
        count, at = count + 1, end + 4 + length
    return count


def _responses(data: bytes) -> list[tuple[str, dict[str, str], bytes]]:
    out, at = [], 0
    while (end := data.find(b"\r\n\r\n", at)) >= 0:
        status, *lines = data[at:end].decode("latin-1").split("\r\n")
        headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines)}
        length = int(headers["content-length"])
        out.append((status, headers, data[end + 4:end + 4 + length]))
        at = end + 4 + length
    return out


def _request(path: str, running: Running, *, version: str = "1.1", extra: str = "") -> bytes:
    return (f"GET {path} HTTP/{version}\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {running.token}\r\n"
            f"Accept: {JSON}\r\n{extra}\r\n").encode()


def test_a_bounded_get_is_answered_before_asgi_as_asgi_answers_it(running: Running) -> None:
    before = len(running.asgi)
    lane = httpx.get(running.url, params={"query": POINT}, headers=running.auth())
    assert len(running.asgi) == before, "the HTTP layer should have answered it"
    guarded = httpx.get(running.url, params={"query": GUARDED}, headers=running.auth())
    assert len(running.asgi) == before + 1
    assert lane.status_code == guarded.status_code == 200
    assert _rows(lane.content) and _rows(lane.content) == _rows(guarded.content)
    # the same headers, by name, as an answer the ASGI way: date and server too
    assert sorted(lane.headers) == sorted(guarded.headers) == ["content-length", "content-type", "date", "server"]
    assert lane.headers["content-type"] == JSON


def test_other_formats_carry_their_media_type(running: Running) -> None:
    for accept, media in (("text/csv", "text/csv; charset=utf-8"),
                          ("application/sparql-results+xml", "application/sparql-results+xml")):
        r = httpx.get(running.url, params={"query": POINT}, headers={**running.auth(), "Accept": accept})
        assert r.status_code == 200 and r.headers["content-type"] == media
        assert int(r.headers["content-length"]) == len(r.content) > 0


def test_one_connection_mixes_both_ways_in_order(running: Running) -> None:
    with httpx.Client(headers=running.auth()) as client:
        for _ in range(3):
            assert _rows(client.get(running.url, params={"query": POINT}).content)
            assert client.get(running.url.replace("/sparql", "/api/me")).json()["name"] == "root"
            assert _rows(client.get(running.url, params={"query": GUARDED}).content)
            posted = client.post(running.url, data={"query": POINT})
            assert posted.status_code == 200 and _rows(posted.content)


def test_pipelined_requests_are_answered_in_the_order_sent(running: Running) -> None:
    only_p = "SELECT ?p WHERE { GRAPH ?g { <urn:wb:entity:my-car> ?p ?o } FILTER(true) }"  # the ASGI way
    ask = "ASK { GRAPH ?g { <urn:wb:entity:my-car> ?p ?o } }"  # bounded
    before = len(running.asgi)
    sent = [POINT, only_p, ask, POINT, only_p, ask]
    answers = _responses(_raw(running, [_request(_get(q), running) for q in sent], answers=len(sent)))
    assert [a[0] for a in answers] == ["HTTP/1.1 200 OK"] * len(sent)
    shapes = [json.loads(body)["head"].get("vars") for _, _, body in answers]
    assert shapes == [["p", "o"], ["p"], None, ["p", "o"], ["p"], None]
    # the first is the HTTP layer's; the second goes the ASGI way, and what came behind it waits its turn there
    assert len(running.asgi) - before >= 2


def test_http_1_0_and_connection_close_end_the_connection(running: Running) -> None:
    for version, extra in (("1.0", ""), ("1.1", "Connection: close\r\n")):
        got = _raw(running, [_request(_get(POINT), running, version=version, extra=extra)], until_closed=True)
        (status, headers, body), = _responses(got)
        assert status == "HTTP/1.1 200 OK" and headers["connection"] == "close" and _rows(body)


def test_a_proxy_s_headers_go_the_asgi_way(running: Running) -> None:
    # uvicorn's proxy middleware makes the scheme https; a relative IRI resolves against it
    before = len(running.asgi)
    ask = "SELECT ?x WHERE { BIND(<rel> AS ?x) }"
    point = "ASK { GRAPH ?g { <rel> ?p ?o } }"
    r = httpx.get(running.url, params={"query": point}, headers={**running.auth(), "X-Forwarded-Proto": "https"})
    assert r.status_code == 200 and len(running.asgi) == before + 1
    base = httpx.get(running.url, params={"query": ask}, headers={**running.auth(), "X-Forwarded-Proto": "https"})
    assert json.loads(base.content)["results"]["bindings"][0]["x"]["value"].startswith("https://")


def test_a_get_with_a_body_goes_the_asgi_way(running: Running) -> None:
    before = len(running.asgi)
    got = _raw(running, [_request(_get(POINT), running, extra="Content-Length: 3\r\n") + b"abc"], answers=1)
    (status, _, body), = _responses(got)
    assert status == "HTTP/1.1 200 OK" and _rows(body) and len(running.asgi) == before + 1


def test_a_lane_that_fails_is_answered_the_asgi_way(running: Running, monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    def broken(self: Endpoint, scope: object) -> None:
        raise RuntimeError("the lane broke")

    monkeypatch.setattr(Endpoint, "quick", broken)
    before = len(running.asgi)
    r = httpx.get(running.url, params={"query": POINT}, headers=running.auth())
    assert r.status_code == 200 and _rows(r.content)  # the endpoint's full path answered it
    assert len(running.asgi) == before + 1
    assert "the quick lane failed" in caplog.text


def test_errors_are_the_endpoint_s_own(running: Running) -> None:
    no_token = httpx.get(running.url, params={"query": POINT}, headers={"Accept": JSON})
    assert no_token.status_code == 401 and "www-authenticate" in no_token.headers
    bad = httpx.get(running.url, params={"query": "SELECT ?s { ?s nope:p ?o }"}, headers=running.auth())
    assert bad.status_code == 400 and bad.headers["content-type"].startswith("text/plain")


def test_an_app_without_the_lane_gets_uvicorn_s_own_protocol(tmp_path: Path) -> None:
    async def plain(scope: object, receive: object, send: object) -> None:
        return None

    assert protocol(plain) == "httptools"


def test_a_client_that_does_not_read_is_not_written_to_without_bound(running: Running) -> None:
    # Pipelined lane requests from a client that reads nothing: once the connection's write buffer
    # is full, the rest go the ASGI way, which waits for the client (and stops reading its requests).
    before = len(running.asgi)
    request = _request(_get("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 100"), running)
    with socket.socket() as conn:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        conn.connect(("127.0.0.1", running.port))
        conn.setblocking(False)
        sent = 0
        deadline = time.monotonic() + 10
        while len(running.asgi) == before and time.monotonic() < deadline:
            try:
                sent += conn.send(request * 20)
            except BlockingIOError:
                time.sleep(0.01)  # the server stopped reading: its buffers are full
        assert len(running.asgi) > before, f"{sent} bytes of requests answered without regard to the client"
