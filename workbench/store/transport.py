"""HTTP for the remote store: kept-alive connections, and one deadline per request.

A query reuses an idle connection to its server (HTTP/1.1 keep-alive) instead of opening one; an
update always gets a fresh one. A connection the server closed while idle is noticed before use,
and a query that still fails on a reused connection before any answer came is sent once more on
a new one (a query changes nothing; an update is never sent twice).

Each request has one deadline for the whole exchange, not per socket read: one watchdog thread
for the whole process shuts the socket of a request still running when its time is up, so a
server that trickles bytes cannot hold the caller. Measured against ``oxigraph serve`` on
loopback, the queries of 200 questions replayed: a new connection and a timer thread per request
made a call 0.79 ms at p50; kept alive, with the one watchdog, 0.34 ms (docs/benchmarks.md,
"Remote backend").

>>> t = Transport()
>>> t.round_trips, t.round_trip_s
(0, 0.0)
>>> t.close()
"""

from __future__ import annotations

import contextlib
import heapq
import http.client
import itertools
import os
import select
import shutil
import socket
import threading
import time
import urllib.parse
import weakref
from typing import IO

# Connections a store keeps open while idle; more concurrent requests open more, closed after use.
MAX_IDLE = 8
# Bytes read at a time when an answer goes to a file.
COPY_CHUNK = 1 << 20
# What a kept-alive connection the server has closed raises when used again.
STALE = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, http.client.RemoteDisconnected)
# Header lines an answer may carry. Python's http.client refuses more than 100 (a guard against a
# server that never ends them); Virtuoso answers a query with one header per graph of its dataset
# (X-SPARQL-named-graph), so a tool's dataset of a hundred graphs failed there. This bound takes
# tens of thousands of graphs and still stops a server that never ends its headers.
MAX_HEADERS = 40_000
http.client._MAXHEADERS = max(http.client._MAXHEADERS, MAX_HEADERS)  # type: ignore[attr-defined]


class Expired(TimeoutError):
    """The request's deadline passed: its socket was shut."""


class Deadline:
    """One request's deadline; ``sock`` is the socket to shut when it passes (kept here, not read
    from the connection: one that answers ``Connection: close`` hands its socket to the response)."""

    __slots__ = ("done", "expired", "sock")

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.done = False
        self.expired = False

    def shut(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)


class Watchdog:
    """The deadlines of every request in flight, kept by one daemon thread."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._live = 0
        self._thread: threading.Thread | None = None

    def watch(self, seconds: float) -> Deadline:
        deadline, when = Deadline(), time.monotonic() + seconds
        with self._cv:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="workbench-http-deadlines", daemon=True)
                self._thread.start()
            if len(self._heap) > 2 * self._live + 64:  # finished requests wait for their time: drop them
                self._heap = [e for e in self._heap if not e[2].done]
                heapq.heapify(self._heap)
            wake = not self._heap or when < self._heap[0][0]  # the thread sleeps until the earliest
            heapq.heappush(self._heap, (when, next(self._order), deadline))
            self._live += 1
            if wake:
                self._cv.notify()
        return deadline

    def finish(self, deadline: Deadline) -> bool:
        """Stop watching; whether the time ran out first. Safe to call again."""
        with self._cv:
            if not deadline.done:
                deadline.done = True
                self._live -= 1
            return deadline.expired

    def _run(self) -> None:
        with self._cv:
            while True:
                while self._heap and self._heap[0][2].done:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cv.wait()
                    continue
                left = self._heap[0][0] - time.monotonic()
                if left > 0:
                    self._cv.wait(left)
                    continue
                _, _, deadline = heapq.heappop(self._heap)
                deadline.done = deadline.expired = True
                self._live -= 1
                deadline.shut()


WATCHDOG = Watchdog()


def _new_watchdog() -> None:
    global WATCHDOG
    WATCHDOG = Watchdog()  # a forked child has no watchdog thread, and maybe a lock held by it


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_watchdog)


def _dropped(sock: socket.socket) -> bool:
    """Whether an idle kept-alive connection was closed (or written to) by the server."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _close_all(conns: list[http.client.HTTPConnection]) -> None:
    while conns:
        conns.pop().close()


class Transport:
    """POSTs to SPARQL servers over kept-alive connections; counts round trips. Thread-safe."""

    def __init__(self) -> None:
        self._idle: list[http.client.HTTPConnection] = []
        # Requests sent and the seconds they took, sending to the last byte (failures included).
        self.round_trips = 0
        self.round_trip_s = 0.0
        self._counting = threading.Lock()
        # A store dropped without close() still closes its sockets (no ResourceWarning).
        self._finalizer = weakref.finalize(self, _close_all, self._idle)

    def post(self, url: str, body: bytes, headers: dict[str, str], *, timeout: float,
             reuse: bool, sink: IO[bytes] | None = None, idle: float | None = None) -> tuple[int, str, bytes]:
        """(status, content type, body) of one POST, within ``timeout`` seconds in all, and (when
        given) ``idle`` seconds of silence at most. With a ``sink``, a successful answer's body is
        written there as it comes (a dump: never whole in memory) and the body returned is empty.

        Raises :class:`Expired` when the time runs out, else OSError or http.client.HTTPException.
        """
        parts = urllib.parse.urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        deadline = WATCHDOG.watch(timeout)
        start = time.perf_counter()
        conn: http.client.HTTPConnection | None = None
        try:
            for attempt in (0, 1):
                conn, reused = self._connection(parts, min(timeout, idle or timeout), reuse)
                try:
                    deadline.sock = conn.sock
                    if conn.sock is None:
                        conn.connect()  # within the socket timeout
                        deadline.sock = conn.sock
                    if deadline.expired:  # it passed before the watchdog could see this socket
                        raise Expired()
                    conn.request("POST", path, body, headers)
                    response = conn.getresponse()
                    if sink is not None and response.status < 300:
                        sink.seek(0)
                        sink.truncate()
                        shutil.copyfileobj(response, sink, COPY_CHUNK)
                        data = b""
                    else:
                        data = response.read()
                    break
                except STALE:
                    conn.close()
                    if not reused or attempt or deadline.expired:
                        raise
                except BaseException:
                    conn.close()
                    raise
        except (OSError, http.client.HTTPException) as exc:
            if WATCHDOG.finish(deadline):
                raise Expired() from exc
            raise
        finally:
            WATCHDOG.finish(deadline)
            with self._counting:
                self.round_trips += 1
                self.round_trip_s += time.perf_counter() - start
        assert conn is not None
        if deadline.expired:  # the answer came, but its socket was shut as it did
            conn.close()
            raise Expired()
        if reuse and conn.sock is not None and len(self._idle) < MAX_IDLE:
            self._idle.append(conn)
        else:
            conn.close()
        return response.status, response.getheader("Content-Type") or "", data

    def _connection(self, parts: urllib.parse.SplitResult, timeout: float,
                    reuse: bool) -> tuple[http.client.HTTPConnection, bool]:
        """An idle connection to the URL's server still open (and True), or a new one (and False)."""
        host, port = parts.hostname or "localhost", parts.port
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        while reuse:
            try:
                conn = self._idle.pop()  # atomic: no lock needed
            except IndexError:
                break
            if type(conn) is kind and conn.host == host and conn.port == (port or conn.default_port) and \
                    conn.sock is not None and not _dropped(conn.sock):
                conn.timeout = timeout
                conn.sock.settimeout(timeout)
                return conn, True
            conn.close()
        return kind(host, port, timeout=timeout), False

    def close(self) -> None:
        """Close the idle connections (requests still work: they open new ones)."""
        _close_all(self._idle)


def shown(url: str, keep: int = 200) -> str:
    """``url`` for an error message: at most ``keep`` characters, saying how many were left out."""
    return url if len(url) <= keep else f"{url[:keep]}... ({len(url) - keep:,} more characters)"
