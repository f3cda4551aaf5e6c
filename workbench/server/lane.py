"""The quick lane at the HTTP layer: uvicorn's httptools protocol, answering a quick-lane request
(:meth:`workbench.server.sparql.Endpoint.quick`) as soon as its headers are read, without the
ASGI request cycle.

A bounded query by GET (one pattern, a few rows) costs pyoxigraph some 20-50 µs; uvicorn's ASGI
cycle around it (a task on the event loop, the request cycle's objects, the application's
middleware, two ``send`` messages) costs about 0.1 ms a request, what separates a Python server
from ``oxigraph serve`` at one client (docs/benchmarks.md, "Serving"). So the protocol asks the
endpoint itself and writes the answer to the connection; everything else (other routes, other
methods, a request with a body, one behind a proxy's ``Forwarded`` headers, one pipelined behind
a request still answering, anything the lane does not take or fails on) goes on to the ASGI
application exactly as uvicorn would send it, marked so the application's own lane
(:class:`workbench.server.app.QuickLane`) does not read it twice.

This leans on uvicorn's protocol class (its parser callbacks, ``scope``, ``cycle``,
``pipeline`` and ``on_response_complete``): :func:`protocol` checks they are there and gives
uvicorn's own class otherwise, so a uvicorn that changed them serves every request the ASGI way.
"""

from __future__ import annotations

import logging
from typing import Any

import httptools
from starlette.responses import Response
from starlette.types import ASGIApp

from workbench.server.sparql import PATHS, Endpoint

log = logging.getLogger(__name__)
TRIED = "workbench.lane"  #: a scope key: the HTTP layer asked the lane already (and it declined)
_PATHS = tuple(path.encode() for path in PATHS)
_BODY = (b"content-length", b"transfer-encoding")  # a GET with a body goes the ASGI way (it is read there)
# uvicorn's proxy middleware rewrites the scheme and client from these: that request goes through it
_PROXY = (b"forwarded", b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host")


def protocol(app: ASGIApp) -> type[Any] | str:
    """The ``http`` protocol for ``uvicorn.Config``: one that answers ``app``'s quick lane
    itself, if ``app`` has one (:func:`workbench.server.create_app`'s) and uvicorn's httptools
    protocol is the one this was written against; else ``"httptools"``."""
    endpoint = getattr(app, "endpoint", None)
    base = _uvicorn_protocol()
    if not isinstance(endpoint, Endpoint) or base is None:
        return "httptools"
    return type("LaneProtocol", (_Lane, base), {"endpoint": endpoint})


def _uvicorn_protocol() -> type[Any] | None:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # pragma: no cover - uvicorn[standard] is a dependency
        return None
    needed = ("on_message_begin", "on_headers_complete", "on_body", "on_message_complete", "on_response_complete")
    if not all(callable(getattr(HttpToolsProtocol, name, None)) for name in needed):
        log.warning("uvicorn's httptools protocol has changed; the quick lane answers through ASGI")
        return None
    return HttpToolsProtocol


class _Lane:
    """Mixed in before uvicorn's ``HttpToolsProtocol`` (see the module)."""

    endpoint: Endpoint
    _answered = False  # this message was answered here: its body and end are not the ASGI cycle's

    # Attributes of uvicorn's protocol this reads (set in its own callbacks).
    parser: Any
    url: bytes
    scope: dict[str, Any]
    headers: list[tuple[bytes, bytes]]
    cycle: Any
    pipeline: Any
    transport: Any
    flow: Any
    server_state: Any

    def on_headers_complete(self) -> None:
        self._answered = False
        if self.parser.get_method() == b"GET" and self._answer():
            self._answered = True
            return
        super().on_headers_complete()  # type: ignore[misc]

    def on_body(self, body: bytes) -> None:
        if not self._answered:
            super().on_body(body)  # type: ignore[misc]

    def on_message_complete(self) -> None:
        if not self._answered:
            super().on_message_complete()  # type: ignore[misc]

    def _answer(self) -> bool:
        """Answer the request here if the lane takes it; False to send it the ASGI way."""
        if (self.cycle is not None and not self.cycle.response_complete) or self.pipeline:
            return False  # behind a request still answering: its answer goes first, the ASGI way
        if self.flow.write_paused:
            return False  # a client not reading its answers: the ASGI way waits for it to drain
        parsed = httptools.parse_url(self.url)
        if parsed.path not in _PATHS or self.parser.should_upgrade():
            return False
        for name, _ in self.headers:
            if name in _BODY or name in _PROXY:
                return False
        scope = self.scope
        scope.update(method="GET", path=parsed.path.decode("ascii"), raw_path=parsed.path,
                     query_string=parsed.query or b"")
        version = self.parser.get_http_version()
        if version != "1.1":
            scope["http_version"] = version
        scope[TRIED] = True  # uvicorn's own on_headers_complete sets the rest again, if it comes to that
        try:
            found = self.endpoint.quick(scope)
        except Exception:
            log.exception("the quick lane failed; the request goes the ASGI way")
            return False
        if found is None:
            return False
        data, media_type = found
        keep_alive = version != "1.0" and self.parser.should_keep_alive()
        head = [b"HTTP/1.1 200 OK\r\n"]
        for name, value in [*self.server_state.default_headers, *Response(data, media_type=media_type).raw_headers]:
            head += [name, b": ", value, b"\r\n"]
        if not keep_alive:
            head.append(b"connection: close\r\n")
        head.append(b"\r\n")
        self.transport.write(b"".join(head) + data)
        if not keep_alive:
            self.transport.close()
        self.on_response_complete()  # type: ignore[attr-defined]  # the keep-alive timer, reading resumed
        return True
