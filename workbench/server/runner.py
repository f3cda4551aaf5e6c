"""Running blocking queries off the event loop, each with a deadline, and stopping them at it.

A request's work runs in one of the runner's threads (big stacks: see
:mod:`workbench.sparqlcheck`), at most ``slots`` at once; the request is answered 503 at its
deadline whatever the thread is doing. pyoxigraph cannot cancel a query, so where the query can
run in another process it does: a reader's view of an embedded or remote store is a read-only
RocksDB directory on disk (:mod:`workbench.access.views`), which a **worker process** opens with
``pyoxigraph.Store.read_only`` and queries. At the deadline the worker is killed, so a runaway
query stops using CPU, and a crash in the engine kills only the worker (answered 500); either
way a fresh worker takes its place. A view in memory (a scratch store's) and the store's own
owner reading it directly run in the thread, as before: there the query runs on in the
background after its 503, holding its slot until it ends.

The pool (:class:`Workers`): ``workers`` processes (4 by default), started on first use, each
with only pyoxigraph imported (about 25 MB); one request at a time each, sent as a pickled tuple
(view directory, query, formats, dataset) over its stdin and answered as ``("ok", bytes)``,
``("syntax", message)`` or ``("error", message)`` over its stdout. A worker keeps the views it
opened (at most 8) and closes those whose directory has gone; the server keeps a view's folder
while a request that reads it is running (the request holds the view). A worker exits when its
stdin closes or its parent goes away (it checks every half second).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import logging
import os
import pickle
import queue
import select
import struct
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import pyoxigraph as ox

from workbench.access.views import CACHED_VIEWS, ViewStore
from workbench.errors import ParseError, StoreUnavailable, WorkbenchError
from workbench.sparqlcheck import STACK_BYTES, big_stack_thread
from workbench.store.base import Graphs, Store

T = TypeVar("T")
log = logging.getLogger(__name__)
WORKERS = 4  #: worker processes for queries on views on disk ($WORKBENCH_QUERY_WORKERS; 0: threads only)
_HEADER = struct.Struct(">Q")
_current = threading.local()  # the deadline (time.monotonic()) of the request a runner thread serves


class QueryTimeout(StoreUnavailable):
    """A query did not finish within the server's deadline (503)."""


class QueryRunner:
    """Runs ``fn()`` in a worker thread and waits at most ``timeout`` seconds for it; queries on
    views on disk (:meth:`evaluate`) run in worker processes, killed at the deadline."""

    def __init__(self, *, timeout: float, slots: int = 16, workers: int | None = None) -> None:
        self.timeout = timeout
        if workers is None:
            workers = int(os.environ.get("WORKBENCH_QUERY_WORKERS", WORKERS))
        self.workers = Workers(workers) if workers > 0 else None
        self._slots = asyncio.Semaphore(slots)
        # One thread per slot: a request holds its slot while it runs, so a thread is always free.
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        for n in range(slots):
            big_stack_thread(self._work, name=f"workbench-query-{n}")

    def _work(self) -> None:
        while True:
            self._jobs.get()()

    def _late(self) -> QueryTimeout:
        return QueryTimeout(
            f"the query did not finish within {self.timeout:g} s and was stopped; "
            "narrow it (add LIMIT, bind a subject) and try again"
        )

    async def run(self, fn: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        if self._slots.locked():  # wait for a slot, within the deadline
            try:
                await asyncio.wait_for(self._slots.acquire(), self.timeout)
            except TimeoutError:
                raise self._late() from None
        else:  # a free slot: take it without wait_for's task (measurable on a 0.3 ms request)
            await self._slots.acquire()
        future: asyncio.Future[T] = loop.create_future()
        ends = time.monotonic() + (deadline - loop.time())  # the same moment, on the threads' clock

        def settle(value: T | None, error: BaseException | None) -> None:
            self._slots.release()
            if not future.done():  # else the deadline answered first: the outcome is dropped
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(value)  # type: ignore[arg-type]

        context = contextvars.copy_context()  # the request's, as a thread pool's work has it

        def work() -> None:
            value: T | None = None
            error: BaseException | None = None
            _current.deadline = ends
            try:
                value = context.run(fn)
            except BaseException as exc:  # handed to the waiting request
                error = exc
            finally:
                _current.deadline = None
            with contextlib.suppress(RuntimeError):  # the loop is gone: the server stopped
                loop.call_soon_threadsafe(settle, value, error)

        def late() -> None:
            if not future.done():
                future.set_exception(self._late())

        self._jobs.put(work)
        timer = loop.call_at(deadline, late)
        try:
            return await future
        finally:
            timer.cancel()

    def deadline(self) -> float | None:
        """The deadline (``time.monotonic()``) of the request this runner thread serves, if any:
        for work that can stop itself (the rules' conclusions for a reasoning query)."""
        return getattr(_current, "deadline", None)

    def evaluate(
        self,
        store: Store,
        query: str,
        *,
        results: ox.QueryResultsFormat,
        graph: ox.RdfFormat,
        default_graph: Graphs = None,
        named_graphs: Graphs = None,
    ) -> bytes:
        """A checked query's answer (an :class:`workbench.sparqlcheck.Evaluator`): in a worker
        process for a view on disk, stopped at the request's deadline; else here, in this thread."""
        directory = store.copy.directory if isinstance(store, ViewStore) else None
        if directory is None or self.workers is None:
            return store.query_raw(query, results=results, graph=graph, default_graph=default_graph,
                                   named_graphs=named_graphs)
        ends = getattr(_current, "deadline", None) or time.monotonic() + self.timeout
        request = (str(directory), query, results.media_type, graph.media_type,
                   None if default_graph is None else [g.value for g in default_graph],
                   None if named_graphs is None else [g.value for g in named_graphs])
        try:
            return self.workers.run(request, ends)
        except TimeoutError:
            raise self._late() from None


class Workers:
    """Worker processes that answer queries on read-only views on disk, one request at a time
    each; a worker that overruns its deadline is killed and replaced."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._idle: list[_Worker] = []
        self._alive = 0  # started or starting
        self._cond = threading.Condition()
        self._closed = False
        self._finalizer = weakref.finalize(self, _stop_all, self._idle)  # also at exit

    def run(self, request: tuple[Any, ...], ends: float) -> bytes:
        """The serialised answer to ``request``. Raises TimeoutError past ``ends`` (the worker
        is killed), ParseError for a malformed query, WorkbenchError when the engine failed or
        crashed (the worker is replaced)."""
        worker = self._take(ends)
        healthy = False
        try:
            kind, value = worker.ask(request, ends)
            healthy = True
        finally:
            self._give_back(worker, healthy)
        if kind == "ok":
            assert isinstance(value, bytes)
            return value
        if kind == "syntax":
            raise ParseError(f"SPARQL syntax error: {value}")
        raise WorkbenchError(f"the SPARQL engine failed on this query: {value}")

    def close(self) -> None:
        """Stop every idle worker; busy ones stop when their request ends."""
        with self._cond:
            self._closed = True
        self._finalizer()

    def _take(self, ends: float) -> _Worker:
        with self._cond:
            while not self._idle and self._alive >= self.size:
                if not self._cond.wait(max(0.0, ends - time.monotonic())) and time.monotonic() >= ends:
                    raise TimeoutError
            if self._idle:
                return self._idle.pop()
            self._alive += 1
            first = self._alive == 1
        try:
            worker = _Worker()
        except BaseException:
            with self._cond:
                self._alive -= 1
                self._cond.notify()
            raise
        if first:  # the rest of the pool starts in the background, ready for the next requests
            for _ in range(self.size - 1):
                threading.Thread(target=self._spare, daemon=True).start()
        return worker

    def _give_back(self, worker: _Worker, healthy: bool) -> None:
        with self._cond:
            if healthy and not self._closed:
                self._idle.append(worker)
            else:
                worker.kill()
                self._alive -= 1
                if not self._closed:  # a fresh one for the next request, started meanwhile
                    threading.Thread(target=self._spare, daemon=True).start()
            self._cond.notify()

    def _spare(self) -> None:
        with self._cond:
            if self._alive >= self.size or self._closed:
                return
            self._alive += 1
        try:
            worker = _Worker()
        except OSError:
            log.exception("could not start a SPARQL worker process")
            with self._cond:
                self._alive -= 1
            return
        with self._cond:
            self._idle.append(worker)
            self._cond.notify()


def _stop_all(idle: list[_Worker]) -> None:
    while idle:
        idle.pop().kill()


class _Worker:
    """One worker process and its pipes."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-P", "-c", _source(), str(STACK_BYTES), str(CACHED_VIEWS)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in, self._out = self.process.stdin, self.process.stdout.fileno()
        self._buffer = bytearray()

    def ask(self, request: tuple[Any, ...], ends: float) -> tuple[str, object]:
        """Send one request and wait for its answer until ``ends``. Raises TimeoutError (the
        worker is then killed) or WorkbenchError when the worker died (a crash, reported)."""
        data = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            message = memoryview(_HEADER.pack(len(data)) + data)
            while message:  # an unbuffered pipe may take it in parts
                message = message[self._in.write(message) or 0 :]
            head = self._read(_HEADER.size, ends)
            reply = pickle.loads(self._read(_HEADER.unpack(head)[0], ends))
        except TimeoutError:
            self.kill()
            raise
        except (OSError, EOFError):
            code = self.kill()
            log.error("a SPARQL worker process died on a query (exit status %s)", code)
            raise WorkbenchError(f"the SPARQL engine stopped on this query (exit status {code}); "
                                 "the server keeps serving: simplify the query") from None
        assert isinstance(reply, tuple) and len(reply) == 2
        return str(reply[0]), reply[1]

    def _read(self, size: int, ends: float) -> bytes:
        """``size`` bytes of the answer, waiting for them until ``ends`` (whatever the pipe
        holds beyond them is kept for the next read: an answer usually comes in one piece)."""
        while len(self._buffer) < size:
            left = ends - time.monotonic()
            if left <= 0 or not select.select([self._out], [], [], left)[0]:
                raise TimeoutError
            chunk = os.read(self._out, max(size - len(self._buffer), 1 << 16))
            if not chunk:
                raise EOFError
            self._buffer += chunk
        data, self._buffer = bytes(self._buffer[:size]), self._buffer[size:]
        return data

    def kill(self) -> int | None:
        """Stop the process (SIGKILL: a query cannot be asked to stop); its exit status."""
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(OSError):
            self._in.close()
        code = self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        return code


@functools.cache
def _source() -> str:
    """The worker's program: :func:`_worker_main`'s own source, then a call to it."""
    return inspect.getsource(_worker_main) + "\n_worker_main()\n"


def _worker_main() -> None:  # pragma: no cover - runs in the worker process, from its source
    """A worker process's whole program: read requests from stdin, answer on stdout. Its source
    is run with ``python -c`` (so it imports nothing of Workbench); argv: stack size, views kept."""
    import os
    import pickle
    import struct
    import sys
    import threading
    import time
    from collections import OrderedDict

    import pyoxigraph as ox

    header = struct.Struct(">Q")
    stack, kept = int(sys.argv[1]), int(sys.argv[2])
    requests, answers = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to stderr, never into the answers
    parent = os.getppid()
    stores: OrderedDict[str, ox.Store] = OrderedDict()

    def orphaned() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    def read(n: int) -> bytes:
        data = requests.read(n)
        if len(data) < n:
            os._exit(0)  # the server closed the pipe: it is done with this worker
        return data

    def store(directory: str) -> ox.Store:
        for gone in [d for d in stores if not os.path.isdir(d)]:
            del stores[gone]  # its view was removed: let its files go
        found = stores.get(directory)
        if found is None:
            found = stores[directory] = ox.Store.read_only(directory)
            while len(stores) > kept:
                stores.popitem(last=False)
        stores.move_to_end(directory)
        return found

    def answer(request: tuple[str, str, str, str, list[str] | None, list[str] | None]) -> tuple[str, object]:
        directory, query, results, graph, default, named = request
        try:
            db = store(directory)
            if default is not None or named is not None:  # the Protocol: they replace FROM / FROM NAMED
                found = db.query(query, default_graph=[ox.NamedNode(g) for g in default or []],
                                 named_graphs=[ox.NamedNode(g) for g in named or []])
            else:
                found = db.query(query)
            if isinstance(found, ox.QueryTriples):
                return "ok", found.serialize(format=ox.RdfFormat.from_media_type(graph)) or b""
            return "ok", found.serialize(format=ox.QueryResultsFormat.from_media_type(results)) or b""
        except SyntaxError as exc:
            return "syntax", str(exc)
        except Exception as exc:  # reported to the server, which answers 500
            return "error", f"{type(exc).__name__}: {exc}"

    def serve() -> None:
        while True:
            request = pickle.loads(read(header.unpack(read(header.size))[0]))
            reply = pickle.dumps(answer(request), protocol=pickle.HIGHEST_PROTOCOL)
            answers.write(header.pack(len(reply)) + reply)
            answers.flush()

    threading.Thread(target=orphaned, daemon=True).start()
    threading.stack_size(stack)
    worker = threading.Thread(target=serve)
    worker.start()
    worker.join()
