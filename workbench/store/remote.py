"""A remote backend: any SPARQL 1.1 Query + Update endpoint, by URL.

Tested against a real ``oxigraph serve``; it uses only the SPARQL 1.1 Protocol, so Fuseki,
GraphDB, Virtuoso, QLever or Neptune answer it the same way. Each import is one SPARQL Update
request, which SPARQL 1.1 servers apply atomically. Every request has a timeout: a server that is
down, slow or answering garbage gives a :class:`StoreUnavailable` error, never a hang. Queries go
over kept-alive connections (:mod:`workbench.store.transport`); what a server needs to hold a
Workbench store, and notes per engine: docs/deployment.md.

For Oxigraph the query URL is ``http://host:port/query`` and the update URL
``http://host:port/update``; give the server's base URL and these are found, or give both.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from typing import IO

import pyoxigraph as ox

from workbench.errors import Invalid, ParseError, StoreUnavailable
from workbench.ids import META_GRAPH, RULES_GRAPH, STORE_NODE
from workbench.store.base import Batch, Capabilities, Check, Graphs, Progress, Row, Store, data_block, rows_of
from workbench.store.transport import Transport
from workbench.vocab import WB

DEFAULT_TIMEOUT = 30.0
# An import is one request; a large one takes the server a while to apply.
WRITE_TIMEOUT = 600.0
JSON = "application/sparql-results+json"
# SELECT results: TSV first (from Oxigraph half JSON's bytes, and 13% less time for 100k rows; no
# difference on a question's few rows), JSON or XML from a server that prefers them; ASK stays JSON
# (TSV has no boolean form).
SELECT_ACCEPT = f"text/tab-separated-values, {JSON};q=0.9, application/sparql-results+xml;q=0.8"
# A graph name nobody writes: the stand-in for "an empty dataset" in a Protocol request.
EMPTY_GRAPH = "urn:wb:graph:none"


class RemoteStore(Store):
    """A Workbench store kept in a SPARQL 1.1 server."""

    capabilities = Capabilities(
        name="remote", on_disk=False, crash_safe_imports=True, bulk_load=False, staged_writes=False, round_trips=True
    )

    def __init__(self, url: str, *, update_url: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        base = url.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise Invalid(f"an endpoint must be an http(s) URL, not {url!r}")
        if base.endswith(("/query", "/sparql")):
            self.query_url = base
            self.update_url = update_url or base.rsplit("/", 1)[0] + "/update"
        else:
            self.query_url = base + "/query"
            self.update_url = update_url or base + "/update"
        self.timeout = timeout
        self.location = self.query_url
        self._http = Transport()
        self._reads = threading.local()  # per thread: the version pinned for a question (reading())
        # Fail now, clearly, if nothing that speaks SPARQL is there.
        if not isinstance(self._answer("ASK {}"), ox.QueryBoolean):
            raise StoreUnavailable(f"the server at {self.query_url} does not answer SPARQL queries as expected")

    # ------------------------------------------------------------------ HTTP

    @property
    def round_trips(self) -> int:
        """HTTP requests this store has sent (``bench ask --backends remote`` reads it)."""
        return self._http.round_trips

    @property
    def round_trip_s(self) -> float:
        """Seconds spent in them, from sending to the last byte read."""
        return self._http.round_trip_s

    def _post(self, url: str, body: bytes, content_type: str, accept: str, timeout: float | None = None,
              *, reuse: bool = True) -> tuple[str, bytes]:
        """POST and read the whole answer within ``timeout`` seconds in all, or raise; returns the
        answer's media type and body. ``reuse``: a kept-alive connection (queries); updates take a
        new one, since a request sent twice must not be an update (see :mod:`workbench.store.transport`).
        """
        limit = timeout or self.timeout
        headers = {"Content-Type": content_type, "Accept": accept}
        try:
            status, media_type, data = self._http.post(url, body, headers, timeout=limit, reuse=reuse)
        except (OSError, http.client.HTTPException) as exc:
            if isinstance(exc, TimeoutError):  # the deadline (Expired) or a socket timeout
                raise StoreUnavailable(f"the SPARQL server at {url} did not answer within {limit:g} s") from exc
            if isinstance(exc, http.client.HTTPException):
                raise StoreUnavailable(f"the SPARQL server at {url} sent a broken answer: {exc!r}") from exc
            raise StoreUnavailable(f"cannot reach the SPARQL server at {url}: {exc}") from exc
        if status == 206:  # Virtuoso's "anytime" answers: cut short by a timeout or a row limit, never an answer
            raise StoreUnavailable(f"the SPARQL server at {url} answered 206: partial results (a server-side timeout "
                                   "or result limit cut them short)")
        if status >= 300:
            detail = data.decode("utf-8", "replace").strip()[:500]
            if status == 400:
                raise ParseError(f"the SPARQL server refused the request: {detail}")
            raise StoreUnavailable(f"the SPARQL server at {url} answered {status}: {detail}")
        return media_type, data

    def _answer(self, query: str, accept: str = JSON) -> ox.QuerySolutions | ox.QueryBoolean:
        media_type, data = self._post(self.query_url, query.encode(), "application/sparql-query", accept)
        # Parsed as the server says it answered; JSON when it does not say (or says something else).
        fmt = ox.QueryResultsFormat.from_media_type(media_type) or ox.QueryResultsFormat.JSON
        try:
            parsed = ox.parse_query_results(data, fmt)
        except (SyntaxError, ValueError) as exc:
            raise StoreUnavailable(f"the SPARQL server at {self.query_url} answered garbage: {exc}") from exc
        return parsed

    def select(self, query: str) -> list[Row]:
        result = self._answer(query, SELECT_ACCEPT)
        if not isinstance(result, ox.QuerySolutions):
            raise Invalid("expected a SELECT query")
        return rows_of(result)

    def close(self) -> None:
        self._http.close()

    # ------------------------------------------------------------------ reads

    def construct(self, query: str) -> list[ox.Triple]:
        _, data = self._post(self.query_url, query.encode(), "application/sparql-query", "application/n-triples")
        try:
            return [q.triple for q in ox.parse(data, ox.RdfFormat.N_TRIPLES)]
        except SyntaxError as exc:
            raise StoreUnavailable(f"the SPARQL server at {self.query_url} answered garbage: {exc}") from exc

    def query_raw(
        self,
        query: str,
        *,
        results: ox.QueryResultsFormat,
        graph: ox.RdfFormat,
        default_graph: Graphs = None,
        named_graphs: Graphs = None,
    ) -> bytes:
        accept = f"{results.media_type}, {graph.media_type};q=0.9"
        url = self.query_url
        if default_graph is not None or named_graphs is not None:
            # The server applies the Protocol's dataset rules itself; pass the parameters on.
            params = [("default-graph-uri", g.value) for g in default_graph or []]
            params += [("named-graph-uri", g.value) for g in named_graphs or []]
            if params:
                url += ("&" if "?" in url else "?") + urllib.parse.urlencode(params)
            else:  # an empty dataset: nothing to name, so no parameter can say it
                url += ("&" if "?" in url else "?") + urllib.parse.urlencode(
                    [("default-graph-uri", EMPTY_GRAPH), ("named-graph-uri", EMPTY_GRAPH)]
                )
        return self._post(url, query.encode(), "application/sparql-query", accept)[1]

    def has_graph(self, graph: ox.NamedNode) -> bool:
        return self.ask(f"ASK {{ GRAPH {graph} {{ ?s ?p ?o }} }}")

    def quads(self, graph: ox.NamedNode | None = None) -> Iterator[ox.Quad]:
        g = str(graph) if graph is not None else "?g"
        rows = self.select(f"SELECT ?s ?p ?o ?g WHERE {{ GRAPH {g} {{ ?s ?p ?o }} }}")
        for row in rows:
            name = graph if graph is not None else row["g"]
            yield ox.Quad(row["s"], row["p"], row["o"], name)  # type: ignore[arg-type]

    def dump(self, out: IO[bytes], *, format: ox.RdfFormat) -> None:
        ox.serialize(self.quads(), out, format=format)

    # ------------------------------------------------------------------ writes

    def update(self, update: str) -> None:
        self._changed()
        self._post(self.update_url, update.encode(), "application/sparql-update", "*/*", reuse=False)

    owned = False  # other processes write the server too

    def version(self) -> str:
        """This process's writes, the server's revision token (which every Workbench that writes
        records changes: another process writing through Workbench shows up here too) and the
        stored rule versions' statuses, in one round trip; once per question inside
        :meth:`reading`."""
        pinned = getattr(self._reads, "version", None)
        if pinned is not None:
            return str(pinned)
        rows = self.select(
            f"""SELECT ?r ?v ?s WHERE {{ {{ GRAPH {META_GRAPH} {{ {STORE_NODE} {WB.revision} ?r }} }}
            UNION {{ GRAPH {RULES_GRAPH} {{ ?v {WB.ruleStatus} ?s }} }} }}"""
        )
        token = next((r["r"].value for r in rows if r["r"] is not None), "")
        rules = sorted(f"{r['v']} {r['s']}" for r in rows if r["v"] is not None)
        digest = hashlib.blake2b("\n".join(rules).encode(), digest_size=8).hexdigest()
        found = f"{self.generation}/{token}/{digest}"
        if getattr(self._reads, "depth", 0):
            self._reads.version = found
        return found

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        reads = self._reads
        reads.depth = getattr(reads, "depth", 0) + 1
        try:
            yield
        finally:
            reads.depth -= 1
            if not reads.depth:
                reads.version = None

    def _changed(self) -> None:
        super()._changed()
        self._reads.version = None  # a write inside a question: the version moved

    def remove(self, quads: Sequence[ox.Quad]) -> None:
        if quads:
            self.update(f"DELETE DATA {{ {data_block(quads)} }}")

    def graph_names(self) -> frozenset[ox.NamedNode]:
        rows = self.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { } }")
        return frozenset(r["g"] for r in rows if isinstance(r["g"], ox.NamedNode))

    def write(self, batch: Batch, *, progress: Progress | None = None, check: Check | None = None) -> None:
        more = check() if check else []  # a remote write cannot be staged: plan first, then one request
        self._changed()
        before = self.graph_names() if batch.files else frozenset()
        quads = list(batch.quads)
        for load in batch.files:
            for quad in ox.parse(path=str(load.path), format=load.format):
                g = quad.graph_name
                if isinstance(g, ox.DefaultGraph):
                    if load.to_graph is None or load.to_graph in before:
                        continue
                    quad = ox.Quad(quad.subject, quad.predicate, quad.object, load.to_graph)
                elif g in before:
                    continue
                quads.append(quad)
        quads += more
        operations = []
        if batch.removals:
            operations.append(f"DELETE DATA {{ {data_block(batch.removals)} }}")
        if quads:
            operations.append(f"INSERT DATA {{ {data_block(quads)} }}")
        if operations:
            # One request: the server applies it entirely or not at all.
            body = " ;\n".join(operations).encode()
            self._post(self.update_url, body, "application/sparql-update", "*/*", max(self.timeout, WRITE_TIMEOUT),
                       reuse=False)
        if progress:
            progress(len(quads))
