"""Servers in child processes and HTTP clients in threads, for ``workbench bench serve``.

A :class:`Server` is one real server process (``workbench serve`` or ``oxigraph serve``) started
without a shell, so its PID is the server's own; it runs in its own session (a Ctrl-C in the
terminal reaches the bench, which stops it), and on Linux it is told to end if the thread that
started it dies. :func:`run_cell` sends a fixed list of GET requests from N client threads, each
with one keep-alive ``http.client`` connection, and times every request. :func:`profile_server`
samples a server with py-spy while it is under load.
"""

from __future__ import annotations

import collections
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from workbench.cli.children import stop

READY_TIMEOUT = 600.0  # seconds for a server to answer its first query (a view of 1.27M relations takes a while)
REQUEST_TIMEOUT = 120.0  # seconds for one answer before the client gives up (an error)
ERROR_SAMPLES = 5


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def oxigraph_binary() -> str:
    """The ``oxigraph`` CLI beside this interpreter (PyPI package ``oxigraph``), else on PATH.

    The one beside the interpreter comes first: a PATH entry may be a shell shim (pyenv), whose
    PID would not be the server's.
    """
    here = Path(sys.executable).parent / "oxigraph"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    found = shutil.which("oxigraph")
    if found is None:
        raise RuntimeError("the `oxigraph` CLI is not installed: pip install -e '.[bench]'")
    return found


def _die_with_parent() -> Callable[[], None] | None:
    """On Linux, a ``preexec_fn`` that has the kernel send the child SIGTERM when the thread that
    started it ends (prctl PR_SET_PDEATHSIG), so a killed bench leaves no server behind. Resolved
    here, in the parent: the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def set_death_signal() -> None:
        prctl(1, int(signal.SIGTERM))  # 1 = PR_SET_PDEATHSIG

    return set_death_signal


@dataclass
class Target:
    """Where a client sends its queries: host, port, the endpoint's path, and the headers."""

    host: str
    port: int
    path: str
    headers: dict[str, str]

    def request_path(self, query: str) -> str:
        return f"{self.path}?query={urllib.parse.quote(query, safe='')}"

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT)

    def fetch(self, conn: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
        """One GET on a kept-alive connection: (status, body); status 0 if the connection failed
        (the connection is then closed, and reopens on its next request)."""
        try:
            conn.request("GET", path, headers=self.headers)
            resp = conn.getresponse()
            return resp.status, resp.read()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            return 0, f"{type(exc).__name__}: {exc}".encode()

    def get(self, query: str) -> tuple[int, bytes]:
        """One query on a connection of its own (checks, readiness)."""
        conn = self.connection()
        try:
            return self.fetch(conn, self.request_path(query))
        finally:
            conn.close()


class Server:
    """A server in a child process, its output in ``log``; ``start`` returns once it answers."""

    def __init__(self, name: str, command: list[str], target: Target, log: Path) -> None:
        self.name = name
        self.command = command
        self.target = target
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None
        self.ready_seconds = float("nan")  # from start to the first answer

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, *, timeout: float = READY_TIMEOUT) -> None:
        """Start the server and wait until ``ASK {}`` is answered 200. Raises RuntimeError (with
        the end of its log) if it exits, answers otherwise, or stays silent past ``timeout``."""
        self._log_file = open(self.log, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=self._log_file,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=_die_with_parent())
        started = time.monotonic()
        deadline = started + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{self.log_tail()}")
            status, body = self.target.get("ASK {}")
            if status == 200:
                self.ready_seconds = time.monotonic() - started
                return
            if status != 0:
                raise RuntimeError(f"{self.name} answered {status} to ASK {{}}: {body[:300]!r}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not answer within {timeout:g} s:\n{self.log_tail()}")
            time.sleep(0.1)

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def cpu_seconds(self) -> float | None:
        """User + system CPU the server process has used so far (every thread), if known."""
        try:
            import psutil

            times = psutil.Process(self.pid).cpu_times()
            return float(times.user + times.system)
        except Exception:  # psutil missing or the process gone: the column says n/a
            return None

    def rss_mib(self) -> float | None:
        try:
            import psutil

            return float(psutil.Process(self.pid).memory_info().rss) / 2**20
        except Exception:
            return None

    def peak_rss_mib(self) -> float | None:
        """The server process's peak resident set so far (VmHWM), where /proc tells it."""
        from benchmarks.limits import vmhwm_mib

        return vmhwm_mib(self.pid)

    def executable(self) -> str:
        """What the PID runs (/proc/PID/exe), to show that it is the server and not a shell."""
        try:
            return os.readlink(f"/proc/{self.pid}/exe")
        except OSError:
            return self.command[0]

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s; safe to call twice, or before ``start``."""
        proc, self.process = self.process, None
        stop(proc)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None


# ---------------------------------------------------------------- one cell: N clients, fixed requests


@dataclass
class CellTimes:
    """What the clients saw: each request's milliseconds, the wall time, the failures."""

    ms: list[float]
    seconds: float
    errors: int
    error_samples: list[str] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)  # non-200 status (0: no answer) -> count


def _client(target: Target, paths: Sequence[str], barrier: threading.Barrier, ms: list[float],
            failures: list[tuple[int, bytes]], span: list[float]) -> None:
    conn = target.connection()
    try:
        try:
            conn.connect()  # outside the clock; a failure here shows on the first request
        except OSError:
            conn.close()
        barrier.wait()
        start = time.perf_counter()
        for path in paths:
            t0 = time.perf_counter()
            status, body = target.fetch(conn, path)
            ms.append((time.perf_counter() - t0) * 1e3)
            if status != 200:
                failures.append((status, body[:300]))
        span[:] = [start, time.perf_counter()]
    finally:
        conn.close()


def run_cell(target: Target, paths: Sequence[str], clients: int, bar: Any | None = None) -> CellTimes:
    """Send ``paths`` (one GET each) from ``clients`` threads, request ``i`` from thread
    ``i % clients``, all starting together; returns every request's time and the failures."""
    shares = [list(paths[i::clients]) for i in range(clients)]
    barrier = threading.Barrier(clients)
    ms: list[list[float]] = [[] for _ in range(clients)]
    failures: list[list[tuple[int, bytes]]] = [[] for _ in range(clients)]
    spans: list[list[float]] = [[] for _ in range(clients)]
    threads = [threading.Thread(target=_client, args=(target, shares[i], barrier, ms[i], failures[i], spans[i]),
                                name=f"bench-client-{i}", daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    done = 0
    while any(t.is_alive() for t in threads):
        time.sleep(0.1)
        if bar is not None:
            now = sum(len(m) for m in ms)
            bar.update(now - done)
            done = now
    if bar is not None:
        bar.update(sum(len(m) for m in ms) - done)
    if any(not s for s in spans):
        raise RuntimeError(f"a client thread failed before finishing its {len(paths)} requests")
    seconds = max(s[1] for s in spans) - min(s[0] for s in spans)
    failed = [f for fs in failures for f in fs]
    statuses = collections.Counter(status for status, _ in failed)
    samples = [f"{status or 'no answer'}: {body.decode('utf-8', 'replace').strip()}"
               for status, body in failed[:ERROR_SAMPLES]]
    return CellTimes([x for m in ms for x in m], seconds, len(failed), samples, dict(statuses))


# ---------------------------------------------------------------- where the server's time goes


_FRAME = re.compile(r"^(?P<fn>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")
#: leaf functions of a thread that waits rather than works (py-spy counts some of them as active)
WAITING = frozenset({"Condition.wait", "Event.wait", "EpollSelector.select", "KqueueSelector.select",
                     "Thread.join", "Thread._wait_for_tstate_lock", "Queue.get", "Lock.acquire"})


def _frame(frame: str) -> tuple[str, str]:
    """``fn (path/to/file.py:12)`` as (``fn (to/file.py)``, the full path): lines merged."""
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip(), ""
    return f"{m['fn']} ({'/'.join(Path(m['file']).parts[-2:])})", m["file"]


def summarise_profile(raw: str, top: int = 12) -> str:
    """Where the samples of py-spy's ``--format raw`` fall (collapsed stacks, ``frame;frame count``
    per line, outermost first), waiting threads left out: functions by own samples, Workbench's
    functions by the samples under them, and the hottest call paths (their last 4 frames).

    >>> print(summarise_profile("a (/w/workbench/m.py:1);b (/w/workbench/m.py:2) 3\\n"
    ...                         "a (/w/workbench/m.py:1) 1\\na (/w/workbench/m.py:1);Condition.wait (t.py:3) 5", top=2))
    4 samples in working threads (5 more waiting; ...).
    own time:
       75.0%  b (workbench/m.py)
       25.0%  a (workbench/m.py)
    Workbench's functions, inclusive:
      100.0%  a (workbench/m.py)
       75.0%  b (workbench/m.py)
    hottest paths:
       75.0%  a > b
       25.0%  a
    """
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    paths: collections.Counter[str] = collections.Counter()
    total = waiting = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [_frame(f) for f in stack.split(";") if f.strip()]
        if not frames:
            continue
        n = int(count)
        if frames[-1][0].split(" (")[0] in WAITING:
            waiting += n
            continue
        total += n
        own[frames[-1][0]] += n
        for name in {name for name, path in frames if path.startswith("workbench/") or "/workbench/" in path}:
            inclusive[name] += n
        paths[" > ".join(name.split(" (")[0] for name, _ in frames[-4:])] += n
    if not total:
        return "no samples"

    def block(counter: collections.Counter[str]) -> list[str]:
        return [f"  {100 * n / total:6.1f}%  {name}" for name, n in counter.most_common(top)]

    return "\n".join([f"{total:,} samples in working threads ({waiting:,} more waiting; a thread blocked inside C, "
                      "such as a queue's get, can still show as its caller's own time).", "own time:", *block(own),
                      "Workbench's functions, inclusive:", *block(inclusive), "hottest paths:", *block(paths)])


def profile_server(server: Server, load: Callable[[], object], out: Path, *, rate: int = 200) -> str:
    """Sample ``server`` with py-spy (every thread, Python frames) while ``load()`` runs; the
    collapsed stacks go to ``out``, the summary is returned. Raises RuntimeError without py-spy."""
    binary = shutil.which("py-spy")
    if binary is None:
        raise RuntimeError("py-spy is not installed, so the server cannot be profiled: pip install py-spy")
    log = out.with_name(out.name + ".log")
    with open(log, "wb") as log_file:
        spy = subprocess.Popen([binary, "record", "--pid", str(server.pid), "--rate", str(rate), "--format", "raw",
                                "--output", str(out), "--nonblocking"],
                               stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT)
    try:
        time.sleep(1.0)  # let it attach
        if spy.poll() is not None:
            raise RuntimeError(f"py-spy failed: {log.read_text(errors='replace')[-2000:]}")
        load()
    finally:
        if spy.poll() is None:
            spy.send_signal(signal.SIGINT)  # py-spy writes its output when interrupted
            try:
                spy.wait(timeout=30)
            except subprocess.TimeoutExpired:
                spy.kill()
                spy.wait()
    if not out.exists():
        raise RuntimeError("py-spy wrote no profile")
    return summarise_profile(out.read_text(encoding="utf-8", errors="replace"))
