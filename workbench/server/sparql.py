"""The SPARQL 1.1 Protocol endpoint: ``GET``/``POST /sparql``.

One request: check the method, find out who asks (:mod:`workbench.server.access`), read the
Protocol request (:mod:`workbench.server.protocol`), pick the serialisation
(:mod:`workbench.server.negotiation`), then one :meth:`Workbench.sparql` call in a worker thread
with a deadline (:mod:`workbench.server.runner`) over what the requester may see
(:meth:`Workbench.seen_by`): the service checks the query (:mod:`workbench.sparqlcheck`), and
the runner evaluates it in a worker process it kills at the deadline when the requester reads a
view on disk. A one-pattern query by GET skips the thread and the worker: the quick lane
(:meth:`Endpoint.quick`) reads it at once on the event loop. An update (POST only) goes to
:mod:`workbench.server.updates`: a curator's or admin's ``INSERT DATA`` into record graphs lands
as an import, under the lock every write over HTTP holds; everything else is refused.
Errors are text/plain with the status the W3C Protocol tests expect.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
import threading
from dataclasses import dataclass, field

import pyoxigraph as ox
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import Scope

from workbench import sparqlbounded
from workbench.access import users
from workbench.access.users import Role, User
from workbench.errors import ParseError, Unsupported, WorkbenchError
from workbench.formats import parse_answer
from workbench.server import negotiation, updates
from workbench.server.access import authenticate
from workbench.server.description import service_description
from workbench.server.protocol import ProtocolError, QueryRequest, UpdateRequest, read_request
from workbench.server.runner import QueryRunner
from workbench.service import Workbench
from workbench.sparqlcheck import UPDATE_FORMS, answer, query_form
from workbench.store.base import Graphs, Store

log = logging.getLogger(__name__)
ALLOWED = "GET, HEAD, POST"
_LINE = re.compile(r"\bat (\d+):")
# Past this much of a body we stop draining it and let the connection close.
DRAIN_LIMIT = 100_000_000
PATHS = ("/sparql", "/sparql/")  #: where the endpoint answers (the routes, and both quick lanes)
LOOP_ROWS = 100  #: the most rows a bounded query reads on the event loop (well under a millisecond of work)
# A byte each row of an answer holds at least once (every JSON row is an object, every XML row a
# <result> element, every CSV or TSV row a line), so its count bounds the rows from above.
_ROW_MARK = {"json": b"}", "xml": b"<result", "csv": b"\n", "tsv": b"\n"}
_SMALL = 65_536  # answers up to this many bytes are counted whole; larger ones lazily, up to the limit


async def read_body(request: Request, max_body: int) -> bytes:
    """The request body, or 413 past ``max_body``. An oversized body is read to its end (up to
    a bound) and dropped, so that the client, still sending, gets to read the answer."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= max_body:
            chunks.append(chunk)
        elif size > DRAIN_LIMIT:
            break
    if size > max_body:
        raise ProtocolError(413, f"the request body is larger than {max_body} bytes")
    return b"".join(chunks)


@dataclass
class Endpoint:
    """The ``/sparql`` route with its limits: the request body, the query time, the result size.
    ``lock`` is held by every write over HTTP (the JSON API's too: :func:`create_app` passes its)."""

    wb: Workbench
    max_body: int
    result_limit: int
    runner: QueryRunner
    lock: threading.Lock = field(default_factory=threading.Lock)
    _bases: dict[tuple[object, ...], str] = field(default_factory=dict)  # the queries' base IRI, by request URL

    async def handle(self, request: Request) -> Response:
        """Answer one request on /sparql; every failure becomes a plain-text status."""
        try:
            return await self._handle(request)
        except ProtocolError as exc:
            return _text(exc.status, exc.message, exc.headers)
        except Unsupported as exc:  # an update sent as a query: a bad request, not a missing feature
            return _text(400, exc.message)
        except WorkbenchError as exc:
            return _text(exc.status, str(exc))
        except Exception:
            return failed()

    def quick(self, scope: Scope) -> tuple[bytes, str] | None:
        """The answer to ``GET /sparql?query=...`` for a bounded query that needs nothing waited
        for (:meth:`_at_once`), and its media type, read from the ASGI scope without the
        framework's routing and request objects, which cost more than the query; None for
        everything else, errors included, which :meth:`handle` then answers as always."""
        if scope["method"] != "GET" or not self.wb.store.owned:
            return None
        authorization = accept = host = None
        for key, value in scope["headers"]:  # the first of each, as Starlette's Headers.get reads them
            if key == b"authorization" and authorization is None:
                authorization = value.decode("latin-1")
            elif key == b"accept" and accept is None:
                accept = value.decode("latin-1")
            elif key == b"host" and host is None:
                host = value
        try:
            user = authenticate(self.wb, authorization)
            asked = read_request("GET", scope.get("query_string", b""), None, b"")
        except ProtocolError:
            return None
        fmt = negotiation.choose(accept, negotiation.RESULTS)
        if not isinstance(asked, QueryRequest) or fmt is None:
            return None
        text = f"BASE <{self._base_of(scope, host)}>\n{asked.query}"
        try:
            data = self._at_once(asked, text, fmt.name, None if user is None else user.name)
        except WorkbenchError:
            return None  # handle() answers it, with its status and message
        return None if data is None else (data, fmt.media_type)

    def _base_of(self, scope: Scope, host: bytes | None) -> str:
        """:func:`_base` of the request's URL, kept per URL (every query by one client has the same)."""
        server = scope.get("server")
        key = (scope.get("scheme"), host, server and tuple(server), scope.get("root_path"), scope["path"])
        found = self._bases.get(key)
        if found is None:
            if len(self._bases) >= 64:
                self._bases.clear()
            found = self._bases[key] = _base(URL(scope={**scope, "query_string": b""}))
        return found

    async def _handle(self, request: Request) -> Response:
        if request.method not in ("GET", "HEAD", "POST"):
            raise ProtocolError(
                405, f"{request.method} is not allowed on /sparql: query with GET or POST, update with POST",
                headers={"Allow": ALLOWED},
            )
        with users.one_directory():  # who asks, and what they may read, found in one reading of the users
            return await self._answer(request)

    async def _answer(self, request: Request) -> Response:
        authorization = request.headers.get("authorization")
        # Users are cached per version of a store this process owns: no need to leave the loop.
        user = (authenticate(self.wb, authorization) if self.wb.store.owned
                else await run_in_threadpool(authenticate, self.wb, authorization))
        body = await self._body(request) if request.method == "POST" else b""
        ctype = request.headers.get("content-type")
        asked = read_request(request.method, request.scope.get("query_string", b""), ctype, body)
        accept = request.headers.get("accept")
        if asked is None:
            return self._describe(request, accept, user)
        if isinstance(asked, UpdateRequest):
            return await self._update(asked, user, _base(request.url))
        return await self._query(asked, accept, user, _base(request.url))

    async def _body(self, request: Request) -> bytes:
        return await read_body(request, self.max_body)

    def _describe(self, request: Request, accept: str | None, user: User | None) -> Response:
        """The Service Description (a browser got the query editor before reaching here)."""
        endpoint = str(request.url.replace(query=""))
        writes = user is not None and user.may(Role.CURATOR)
        return Response(service_description(endpoint, updates=writes), media_type="text/turtle; charset=utf-8")

    async def _update(self, asked: UpdateRequest, user: User | None, base: str) -> Response:
        updates.needs_role(user)
        assert user is not None
        inserted = await run_in_threadpool(updates.read_insert, asked.update, base)

        def land() -> dict[str, object]:
            assert user is not None
            with self.lock:
                return updates.land(self.wb, user, inserted)

        done = await run_in_threadpool(land)
        return Response(json.dumps(done) + "\n", media_type="application/json")

    async def _query(self, asked: QueryRequest, accept: str | None, user: User | None, base: str) -> Response:
        form = query_form(asked.query)  # only picks the answer's format: the parser has the last word
        if form in UPDATE_FORMS:
            raise ProtocolError(400, "a SPARQL Update sent as a query: send it by POST as update=..., or as "
                                     "a body of type application/sparql-update")
        family = negotiation.GRAPHS if form in ("CONSTRUCT", "DESCRIBE") else negotiation.RESULTS
        fmt = negotiation.choose(accept, family)
        if fmt is None:
            offered = ", ".join(f.media_type for f in family)
            raise ProtocolError(406, f"cannot answer this query as {accept}; ask for one of {offered}")
        default, named = asked.default_graphs, asked.named_graphs
        reader = None if user is None else user.name

        # The service-defined base IRI is the endpoint's own: a BASE line ahead of the query (the
        # query's own BASE, later, wins). Parser messages then count lines from the query again.
        text = f"BASE <{base}>\n{asked.query}"
        proof_base = base.rsplit("/sparql", 1)[0] + "/api/proof"  # where a conclusion's proof is (the JSON API)

        def run() -> tuple[bytes, bool]:
            # Over the view of what the reader may see, so FROM, GRAPH ?g and the dataset
            # parameters cannot reach past it (workbench.access.views). The service checks the
            # query (no SERVICE, bounded size and nesting: workbench.sparqlcheck); the runner
            # evaluates it in a worker process it stops at the deadline, where it can.
            data = self.wb.seen_by(reader).sparql(text, format=fmt.name, default_graph=default, named_graphs=named,
                                                  evaluate=self.runner.evaluate, reasoning=asked.reasoning,
                                                  proof_base=proof_base, deadline=self.runner.deadline())
            return data, _more_than(data, fmt.name, family is negotiation.GRAPHS, self.result_limit)

        try:
            found = self._at_once(asked, text, fmt.name, reader)
            data, too_many = (found, False) if found is not None else await self.runner.run(run)
        except ParseError as exc:
            raise ProtocolError(400, _LINE.sub(lambda m: f"at {int(m.group(1)) - 1}:", exc.message)) from None
        if too_many:
            unit = "triples" if family is negotiation.GRAPHS else "rows"
            raise ProtocolError(413, f"the result has more than {self.result_limit} {unit}; add LIMIT")
        return Response(data, media_type=fmt.media_type)

    def _at_once(self, asked: QueryRequest, text: str, fmt: str, reader: str | None) -> bytes | None:
        """The answer to a bounded query (:mod:`workbench.sparqlbounded`) read here, on the event
        loop, at most :data:`LOOP_ROWS` rows of work: a thread and a worker process cost more than
        such a query. None where that does not hold or would wait (reasoning, a dataset named, a
        store another process owns, a view still to build) and when the answer has more rows:
        those go the guarded way, which answers in full (or 413s)."""
        shape = sparqlbounded.bounded(text)
        if (shape is None or asked.reasoning or asked.default_graphs is not None or asked.named_graphs is not None
                or not self.wb.store.owned):
            return None
        readable = self.wb.readable_now(reader)  # what the reader may see, if nothing must be built first
        if readable is None:
            return None
        rows = min(LOOP_ROWS, self.result_limit)
        if fmt == "json" and readable.cheap_patterns and (direct := shape.json_answer(readable, rows)) is not None:
            return direct  # read as one quad pattern: no query to parse and plan
        query = shape.capped(text, rows + 1)
        # A bounded text is a SELECT or ASK of one pattern, no SERVICE: nothing for read_only to refuse.
        data = answer(readable, query, format=fmt, runner=_here, checked=True)
        return None if query is not text and _more_than(data, fmt, False, rows) else data


def _here(store: Store, query: str, *, results: ox.QueryResultsFormat, graph: ox.RdfFormat,
          default_graph: Graphs = None, named_graphs: Graphs = None) -> bytes:
    """Evaluate in this thread (a bounded query is flat: no big stack needed)."""
    return store.query_raw(query, results=results, graph=graph, default_graph=default_graph, named_graphs=named_graphs)


def _base(url: URL) -> str:
    """The endpoint's URL as the queries' base IRI; a fixed one if the Host header makes it invalid."""
    text = str(url.replace(query="", fragment=""))
    try:
        return ox.NamedNode(text).value
    except ValueError:
        return "http://localhost/sparql"


def _more_than(data: bytes, fmt: str, graph: bool, limit: int) -> bool:
    """Whether a serialised answer holds more than ``limit`` rows or triples.

    The service hands back whole answers, so this counts after serialising (lazily, stopping at
    ``limit + 1``); an answer of at most ``limit`` bytes cannot hold more, and is not parsed.
    """
    if len(data) <= limit:
        return False
    if not graph and data.count(_ROW_MARK[fmt]) <= limit:
        return False  # each row holds at least one of its format's mark: fewer marks, fewer rows
    if fmt == "json" and not graph and len(data) <= _SMALL:  # a lane answer: json's C parser is quickest
        results = json.loads(data).get("results")
        return results is not None and len(results["bindings"]) > limit
    if fmt == "csv":  # lossy, so pyoxigraph does not parse it back; the csv module counts records
        rows = csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
        return any(n > limit for n, _ in enumerate(rows, start=0))
    items = parse_answer(data, fmt, graph=graph)
    if isinstance(items, ox.QueryBoolean):
        return False
    return any(n > limit for n, _ in enumerate(items, start=1))


def failed() -> Response:
    """The answer to a request the endpoint failed on (logged with its traceback)."""
    log.exception("the SPARQL endpoint failed")
    return _text(500, "the server failed on this query; the store is unchanged")


def _text(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """A Protocol error: plain text, as SPARQL clients and the W3C tests expect."""
    return PlainTextResponse(message + "\n", status_code=status, headers=headers)
