"""A remote backend: any SPARQL 1.1 Query + Update endpoint, by URL (tested against real
``oxigraph serve`` and Virtuoso servers; only the SPARQL 1.1 Protocol is used). Each import is
one SPARQL Update request, which servers apply atomically. Every request has a timeout: a server
down, slow or answering garbage gives :class:`StoreUnavailable`, never a hang. Queries go over
kept-alive connections (:mod:`workbench.store.transport`); what a server needs: docs/deployment.md.
For Oxigraph the URLs are ``http://host:port/query`` and ``/update`` (give the base URL and both
are found, or give both); a URL ending in ``/sparql`` (Virtuoso, Neptune) takes updates itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import math
import re
import tempfile
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import IO, Any

import pyoxigraph as ox

from workbench.errors import Invalid, ParseError, StoreUnavailable
from workbench.ids import META_GRAPH, RULES_GRAPH, STORE_NODE
from workbench.sparqlcheck import query_form, split_prologue
from workbench.store.base import (
    Batch,
    Capabilities,
    Check,
    Graphs,
    Progress,
    Row,
    Store,
    data_block,
    insert_data,
    rows_of,
)
from workbench.store.dialect import JSON, STANDARD, VIRTUOSO, Dialect, not_engine_graph
from workbench.store.transport import Expired, Transport, shown
from workbench.vocab import WB

DEFAULT_TIMEOUT = 30.0
# An import is one request; a large one takes the server a while to apply.
WRITE_TIMEOUT = 600.0
# A dump is one answer holding every quad (17M at 10M relations): this long in all, and never
# silent for longer than the store's timeout.
DUMP_TIMEOUT = 3600.0
# A graph name nobody writes: the stand-in for "an empty dataset" in a Protocol request.
EMPTY_GRAPH = "urn:wb:graph:none"
PROBE_IRI = ox.NamedNode("urn:wb:probe")
XSD_INTEGER = ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")
VIRTUOSO_ASK = "__ASK_RETVAL"  # the column Virtuoso 7 answers an ASK in
# Rows a server that may cut answers short must give when asked for them (Virtuoso's stock
# ResultSetMaxRows is 10,000): checked when the store opens, one small CSV answer.
ROW_PROBE = 10_001
# Quads a change may hold to go as one DELETE/INSERT operation where a request of several is not
# atomic (Virtuoso 7 refuses a template of 1,500 triples: "generated SQL text has exceeded 10000 lines")
ONE_OPERATION = 200
# Graph names a query asks about at once (held_graphs)
HELD_BATCH = 500


VIRTUOSO_BNODE = re.compile(rb'("type"\s*:\s*"bnode"\s*,\s*"value"\s*:\s*")nodeID://')
VIRTUOSO_BOOLEAN = re.compile(rb'("datatype"\s*:\s*"http://www\.w3\.org/2001/XMLSchema#boolean"\s*,\s*"value"\s*:\s*")([01])(?=")')
_BOOLEANS: dict[bool, ox.QueryBoolean] = {
    b: ox.Store().query("ASK { }" if b else "ASK { FILTER(false) }") for b in (True, False)  # type: ignore[misc]
}


class Garbled(StoreUnavailable):
    """The server answered, but not in a form this client reads."""


_OWN = ("wb_revision", "wb_rule", "wb_status", "wb_rider")  # the version check's own columns


class RemoteStore(Store):
    """A Workbench store kept in a SPARQL 1.1 server."""

    capabilities = Capabilities(
        name="remote", on_disk=False, crash_safe_imports=True, bulk_load=False, staged_writes=False, round_trips=True
    )

    def __init__(self, url: str, *, update_url: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        base = url.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise Invalid(f"an endpoint must be an http(s) URL, not {url!r}")
        if base.endswith("/query"):  # Oxigraph, Fuseki, Stardog: .../update beside it
            self.query_url = base
            self.update_url = update_url or base.rsplit("/", 1)[0] + "/update"
        elif base.endswith("/sparql"):  # Virtuoso, Blazegraph, Neptune, QLever: updates to the same URL
            self.query_url = base
            self.update_url = update_url or base
        else:
            self.query_url = base + "/query"
            self.update_url = update_url or base + "/update"
        self.timeout = timeout
        self.location = self.query_url
        self._http = Transport()
        self._reads = threading.local()  # per thread: the version pinned for a question (reading())
        # Fail now, clearly, if nothing that speaks SPARQL is there; and learn how it speaks.
        self.dialect = self._dialect()
        self._lateral: bool | None = None
        d = self.dialect
        self.capabilities = replace(RemoteStore.capabilities, engine=d.name, as_of_reads=d.as_of_reads,
                                    union_default_graph=d.union_default, engine_graphs=d.own_graphs)

    def _dialect(self) -> Dialect:
        """How this server answers (:class:`Dialect`), from one small query on a standard server:
        SPARQL 1.1 as written, or Virtuoso 7's (its TSV writes an IRI as a quoted string, its ASK
        answers a table). A server that answers neither way is unavailable, in its own words."""
        self.dialect = STANDARD
        if self._probe(lenient=True):  # a standard server: it takes a query POSTed directly
            return replace(STANDARD, direct_post=True)
        self.dialect = replace(STANDARD, name="sparql", select_accept=JSON)
        self._probe(lenient=False)
        _, data = self._query(self.query_url, "ASK { }", JSON)
        if VIRTUOSO_ASK.encode() not in data:
            return self.dialect
        side = " ".join(str(i) for i in range(math.isqrt(ROW_PROBE) + 1))
        _, data = self._query(self.query_url, f"SELECT ?a WHERE {{ VALUES ?a {{ {side} }} VALUES ?b {{ {side} }} }} "
                              f"LIMIT {ROW_PROBE}", "text/csv")
        self._whole(data.count(b"\n") - 1, ROW_PROBE)
        return VIRTUOSO

    def takes_lateral(self) -> bool:
        """Whether the server evaluates LATERAL (SEP-0006; Oxigraph, Jena: a group evaluated once per
        solution of the one before it, which a question's first reads need: rules/primed), asked
        the first time it matters (a query that uses it, answered right), never of Virtuoso 7."""
        if self._lateral is None:
            self._lateral = self.dialect.name != "virtuoso" and self._probe_lateral()
        return self._lateral

    def _probe_lateral(self) -> bool:
        try:
            rows = self.select("SELECT ?b WHERE { VALUES ?a { 1 } LATERAL { BIND(?a + 1 AS ?b) } }")
        except (Invalid, StoreUnavailable):  # refused: a standard server need not know it
            return False
        return [str(r.get("b")) for r in rows] == [str(ox.Literal("2", datatype=XSD_INTEGER))]

    def _whole(self, got: int, expected: int) -> None:
        """Refuse an answer the server cut short without saying so (``Dialect.cuts_answers``)."""
        if got < expected:
            raise StoreUnavailable(
                f"the server at {self.query_url} gave {got} of {expected} rows, cutting the answer short without "
                "saying so (Virtuoso: ResultSetMaxRows in [SPARQL] of virtuoso.ini); Workbench needs complete "
                "answers: raise it above the store's largest result (docs/deployment.md)")

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
              *, reuse: bool = True, sink: IO[bytes] | None = None, idle: float | None = None) -> tuple[str, bytes]:
        """POST and read the whole answer within ``timeout`` seconds in all, or raise; returns the
        answer's media type and body. ``reuse``: a kept-alive connection (queries); updates take a new
        one, since a request sent twice must not be an update (see :mod:`workbench.store.transport`)."""
        limit, where = timeout or self.timeout, shown(url)
        headers = {"Content-Type": content_type, "Accept": accept}
        try:
            status, media_type, data = self._http.post(url, body, headers, timeout=limit, reuse=reuse, sink=sink,
                                                       idle=idle)
        except (OSError, http.client.HTTPException) as exc:
            if isinstance(exc, TimeoutError):  # the deadline (Expired) or a socket timeout
                if idle is not None and not isinstance(exc, Expired):
                    raise StoreUnavailable(f"the SPARQL server at {where} was silent for {idle:g} s") from exc
                raise StoreUnavailable(f"the SPARQL server at {where} did not answer within {limit:g} s") from exc
            if isinstance(exc, http.client.HTTPException):
                raise StoreUnavailable(f"the SPARQL server at {where} sent a broken answer: {exc!r}") from exc
            raise StoreUnavailable(f"cannot reach the SPARQL server at {where}: {exc}") from exc
        if status == 206:  # Virtuoso's "anytime" answers: cut short by a timeout or a row limit, never an answer
            raise StoreUnavailable(f"the SPARQL server at {where} answered 206: partial results (a server-side timeout "
                                   "or result limit cut them short)")
        if status >= 300:
            detail = data.decode("utf-8", "replace").strip()[:500]
            if status == 400:
                raise ParseError(f"the SPARQL server refused the request: {detail}")
            raise StoreUnavailable(f"the SPARQL server at {where} answered {status}: {detail}")
        return media_type, data

    def _probe(self, *, lenient: bool) -> bool:
        """Whether the server answers a SELECT in ``dialect.select_accept`` with what was asked: an
        IRI, a literal with a language, one with a datatype. Not ``lenient``: a wrong answer raises."""
        want = [PROBE_IRI, ox.Literal("a", language="en"), ox.Literal("1", datatype=XSD_INTEGER)]
        values = " ".join(str(v) for v in want)
        try:
            rows = self.select(f"SELECT ?x WHERE {{ VALUES ?x {{ {values} }} }}")
        except Garbled:
            if lenient:
                return False
            raise
        except Invalid:  # not a table
            rows = []
        if sorted(str(r["x"]) for r in rows) == sorted(str(v) for v in want):
            return True
        if lenient:
            return False
        raise StoreUnavailable(f"the server at {self.query_url} does not answer SPARQL queries as expected")

    def _query(self, url: str, query: str, accept: str, dataset: list[tuple[str, str]] | None = None,
               **post: Any) -> tuple[str, bytes]:
        """A query POSTed directly (``Dialect.direct_post``: no URL encoding, which costs Python
        0.2-0.4 ms a question's query); else, and always with the Protocol's dataset parameters, by
        URL-encoded POST with the dataset in the same form (Virtuoso 7 never answers a direct POST,
        and a server's dialect is found this way; in the URL, a dataset of a few hundred graphs
        made ``oxigraph serve`` reset the connection). ``post``: :meth:`_post`'s ``timeout``, ``sink``, ``idle``."""
        if self.dialect.direct_post and not dataset:
            return self._post(url, query.encode(), "application/sparql-query", accept, **post)
        body = urllib.parse.urlencode([("query", query), *(dataset or [])]).encode()
        return self._post(url, body, "application/x-www-form-urlencoded", accept, **post)

    def ask(self, query: str) -> bool:
        result = self._answer(query)
        if isinstance(result, ox.QueryBoolean):
            return bool(result)
        raise Invalid("expected an ASK query")

    def _answer(self, query: str, accept: str = JSON) -> ox.QuerySolutions | ox.QueryBoolean:
        media_type, data = self._query(self.query_url, query, accept)
        return self._parsed(media_type, data)

    def _parsed(self, media_type: str, data: bytes) -> ox.QuerySolutions | ox.QueryBoolean:
        # Parsed as the server says it answered; JSON when it does not say (or says something else).
        fmt = ox.QueryResultsFormat.from_media_type(media_type) or ox.QueryResultsFormat.JSON
        if self.dialect.virtuoso_json:
            data = VIRTUOSO_BNODE.sub(rb"\1", data)
            data = VIRTUOSO_BOOLEAN.sub(lambda m: m.group(1) + (b"true" if m.group(2) == b"1" else b"false"), data)
        try:
            parsed = ox.parse_query_results(data, fmt)
        except (SyntaxError, ValueError) as exc:
            raise Garbled(f"the SPARQL server at {self.query_url} answered garbage: {exc}") from exc
        if isinstance(parsed, ox.QuerySolutions) and [v.value for v in parsed.variables] == [VIRTUOSO_ASK]:
            # Virtuoso 7 answers ASK as a table: a row holding 1 for yes, no row for no.
            yes = any(row[0] is not None and row[0].value not in ("0", "false") for row in parsed)
            return _BOOLEANS[yes]
        return parsed

    def select(self, query: str) -> list[Row]:
        ahead = self.prefetched(query)
        if ahead is not None:  # sent with the version check (prefetch)
            return ahead
        result = self._answer(query, self.dialect.select_accept)
        if not isinstance(result, ox.QuerySolutions):
            raise Invalid("expected a SELECT query")
        return rows_of(result)

    def close(self) -> None:
        self._http.close()

    # ------------------------------------------------------------------ reads

    def construct(self, query: str) -> list[ox.Triple]:
        _, data = self._query(self.query_url, query, "application/n-triples")
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
        params: list[tuple[str, str]] = []
        if default_graph is not None or named_graphs is not None:
            # The server applies the Protocol's dataset rules itself; pass the parameters on.
            params = [("default-graph-uri", g.value) for g in default_graph or []]
            params += [("named-graph-uri", g.value) for g in named_graphs or []]
            if not params:  # an empty dataset: nothing to name, so no parameter can say it
                params = [("default-graph-uri", EMPTY_GRAPH), ("named-graph-uri", EMPTY_GRAPH)]
        if not self.dialect.negotiates:
            return self._query(self.query_url, query, accept, params)[1]
        # The server picks a format by the Accept header's order, not by the query's form: ask
        # for the form's own, in a format it writes faithfully, and write the one asked here.
        if query_form(query) in ("CONSTRUCT", "DESCRIBE"):
            _, data = self._query(self.query_url, query, "application/n-triples", params)
            return ox.serialize(ox.parse(data, ox.RdfFormat.N_TRIPLES), format=graph) or b""
        media_type, data = self._query(self.query_url, query, JSON, params)
        answer = self._parsed(media_type, data)
        return answer.serialize(format=results) or b""

    def has_graph(self, graph: ox.NamedNode) -> bool:
        return self.ask(f"ASK {{ GRAPH {graph} {{ ?s ?p ?o }} }}")

    def quads(self, graph: ox.NamedNode | None = None, *,
              rewrite: Callable[[str], str] | None = None) -> Iterator[ox.Quad]:
        """Every quad (of ``graph``), read from one answer that goes to a temporary file as it
        comes and is parsed a row at a time: a dump, an export or a view's copy never holds the
        store in memory (from a standard server; Virtuoso's JSON is mended whole first).
        ``rewrite``: each query as a reader sends it (:mod:`workbench.access.restricted`)."""
        g = str(graph) if graph is not None else "?g"
        where = f"WHERE {{ GRAPH {g} {{ ?s ?p ?o }} {not_engine_graph(g, self.dialect.own_graphs)} }}"
        sent = rewrite or (lambda q: q)
        with tempfile.TemporaryFile() as answer:
            media_type, _ = self._query(self.query_url, sent(f"SELECT ?s ?p ?o ?g {where}"), self.dialect.select_accept,
                                        timeout=max(DUMP_TIMEOUT, self.timeout), idle=self.timeout, sink=answer)
            answer.seek(0)
            if self.dialect.virtuoso_json:
                parsed = self._parsed(media_type, answer.read())
            else:
                fmt = ox.QueryResultsFormat.from_media_type(media_type) or ox.QueryResultsFormat.JSON
                parsed = ox.parse_query_results(answer, fmt)
            if not isinstance(parsed, ox.QuerySolutions):
                raise Garbled(f"the SPARQL server at {self.query_url} answered a SELECT with a boolean")
            rows: Iterator[ox.QuerySolution] | list[ox.QuerySolution] = parsed
            if self.dialect.cuts_answers:  # a dump, an export, a view: every quad or an error
                rows = list(parsed)
                counted = self.select(sent(f"SELECT (COUNT(*) AS ?n) {where}"))[0]["n"]
                self._whole(len(rows), int(counted.value) if counted is not None else 0)
            try:
                for row in rows:
                    name = graph if graph is not None else row["g"]
                    yield ox.Quad(row["s"], row["p"], row["o"], name)
            except SyntaxError as exc:
                raise Garbled(f"the SPARQL server at {self.query_url} answered garbage: {exc}") from exc

    def quads_rewritten(self, rewrite: Callable[[str], str], graph: ox.NamedNode | None = None) -> Iterator[ox.Quad]:
        return self.quads(graph, rewrite=rewrite)

    def dump(self, out: IO[bytes], *, format: ox.RdfFormat) -> None:
        ox.serialize(self.quads(), out, format=format)

    # ------------------------------------------------------------------ writes

    def update(self, update: str) -> None:
        self._changed()
        self._post(self.update_url, update.encode(), "application/sparql-update", "*/*", reuse=False)

    owned = False  # other processes write the server too

    def version(self) -> str:
        """This process's writes, the server's revision token (every Workbench that writes records
        changes it) and the stored rule versions' statuses, in one round trip; once per question
        inside :meth:`reading`."""
        pinned = getattr(self._reads, "version", None)
        if pinned is not None:
            return str(pinned)
        where = (f"{{ GRAPH {META_GRAPH} {{ {STORE_NODE} {WB.revision} ?wb_revision }} }} "
                 f"UNION {{ GRAPH {RULES_GRAPH} {{ ?wb_rule {WB.ruleStatus} ?wb_status }} }}")
        split = [(r, *split_prologue(r)) for r in getattr(self._reads, "rider", None) or ()]
        self._reads.rider = None
        sent = [(r, body) for r, pro, body in split if pro == split[0][1]]  # one prologue for all
        if not sent:
            rows = self.select(f"SELECT ?wb_revision ?wb_rule ?wb_status WHERE {{ {where} }}")
        else:  # one round trip for all; each rider's rows are told apart by ?wb_rider
            rides = " UNION ".join(f"{{ {{ {body} }} BIND({i} AS ?wb_rider) }}" for i, (_, body) in enumerate(sent))
            try:
                both = self.select(f"{split[0][1]}\nSELECT * WHERE {{ {where} UNION {rides} }}")
            except ParseError:
                if not any("LATERAL" in r for r, _ in sent):
                    raise
                # a server that took the LATERAL probe but not a question's first reads
                # (rules/primed): none from now on, and the version asked again without them
                self._lateral, self._reads.rider = False, tuple(r for r, _ in sent if "LATERAL" not in r)
                return self.version()
            rows = [r for r in both if r.get("wb_rider") is None]
            fetched: dict[str, list[Row]] = {r: [] for r, _ in sent}
            for r in both:
                if (i := r.get("wb_rider")) is not None:
                    fetched[sent[int(i.value)][0]].append({k: v for k, v in r.items() if k not in _OWN})
            self._reads.fetched = fetched
        token = next((r["wb_revision"].value for r in rows if r["wb_revision"] is not None), "")
        rules = sorted(f"{r['wb_rule']} {r['wb_status']}" for r in rows if r["wb_rule"] is not None)
        digest = hashlib.blake2b("\n".join(rules).encode(), digest_size=8).hexdigest()
        found = f"{self.generation}/{token}/{digest}"
        if getattr(self._reads, "depth", 0):
            self._reads.version = found
        return found

    def prefetch(self, *queries: str) -> None:
        """Inside :meth:`reading`, before its version is asked: the version check is made now,
        with ``queries`` riding along (one round trip for all; a question that needs no version
        pays nothing for them). Their rows wait for :meth:`select` of the same text, once each."""
        if getattr(self._reads, "depth", 0) and getattr(self._reads, "version", None) is None:
            self._reads.rider = queries
            self.version()

    def prefetched(self, query: str) -> list[Row] | None:
        return (getattr(self._reads, "fetched", None) or {}).pop(query, None)  # type: ignore[no-any-return]

    def known_version(self) -> str | None:
        pinned = getattr(self._reads, "version", None)  # taken once in this thread's question
        return None if pinned is None else str(pinned)

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        reads = self._reads
        reads.depth = getattr(reads, "depth", 0) + 1
        try:
            yield
        finally:
            reads.depth -= 1
            if not reads.depth:
                reads.version = reads.rider = reads.fetched = None

    def _changed(self) -> None:
        super()._changed()
        self._reads.version = self._reads.fetched = None  # a write inside a question: the version moved

    def apply(
        self, *, insert: Sequence[ox.Quad] = (), delete: Sequence[ox.Quad] = (), drop: Sequence[ox.NamedNode] = ()
    ) -> None:
        if change := self._change(drop=drop, delete=delete, insert=insert):
            self.update(change)

    def _change(self, *, drop: Sequence[ox.NamedNode] = (), delete: Sequence[ox.Quad] = (),
                insert: Sequence[ox.Quad] = ()) -> str:
        """One update request that drops, deletes and inserts. Where the server may apply part of
        a request of several operations (Virtuoso 7 keeps the first when the second fails), a small
        change is one DELETE/INSERT operation, the graphs to drop matched in its WHERE (only those
        that hold something: Virtuoso gives no solution for a UNION or OPTIONAL that matches
        nothing). A larger one cannot be (Virtuoso turns a template into SQL and gives up past about
        a thousand triples): its insertion goes first, the part a server refuses (an ill-typed or
        unknown literal), so that a refusal changes nothing."""
        ops = [f"DROP SILENT GRAPH {g}" for g in drop]
        if not self.dialect.atomic_requests and (delete or insert or drop):
            full = [g for g in drop if self.has_graph(g)]
            blank = any(isinstance(t, ox.BlankNode) for q in insert for t in (q.subject, q.object))
            if len(delete) + len(insert) <= ONE_OPERATION and not (full and blank):
                # (a blank node would be inserted once per matched triple)
                emptied = " ".join(f"GRAPH {g} {{ ?s{i} ?p{i} ?o{i} }}" for i, g in enumerate(full))
                where = " UNION ".join(f"{{ GRAPH {g} {{ ?s{i} ?p{i} ?o{i} }} }}" for i, g in enumerate(full))
                return (f"DELETE {{ {data_block(delete)} {emptied} }} INSERT {{ {data_block(insert)} }} "
                        f"WHERE {{ {where} }}")
            ops = [insert_data(insert)] if insert else []
            ops += [f"DELETE DATA {{ {data_block(delete)} }}"] if delete else []
            return " ;\n".join([*ops, *(f"DROP SILENT GRAPH {g}" for g in drop)])
        if delete:
            ops.append(f"DELETE DATA {{ {data_block(delete)} }}")
        if insert:
            ops.append(insert_data(insert))
        return " ;\n".join(ops)

    def remove(self, quads: Sequence[ox.Quad]) -> None:
        if quads:
            self.update(f"DELETE DATA {{ {data_block(quads)} }}")

    def graph_names(self) -> frozenset[ox.NamedNode]:
        inside = "" if self.dialect.lists_graphs else "?s ?p ?o"
        ours = not_engine_graph("?g", self.dialect.own_graphs)
        rows = self.select(f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ {inside} }} {ours} }}")
        return frozenset(r["g"] for r in rows if isinstance(r["g"], ox.NamedNode))

    def held_graphs(self, graphs: Iterable[ox.NamedNode]) -> frozenset[ox.NamedNode]:
        inside = "" if self.dialect.lists_graphs else "?s ?p ?o"
        wanted, held = sorted(set(graphs), key=str), set[ox.NamedNode]()
        for i in range(0, len(wanted), HELD_BATCH):
            values = " ".join(str(g) for g in wanted[i:i + HELD_BATCH])
            rows = self.select(f"SELECT DISTINCT ?g WHERE {{ VALUES ?g {{ {values} }} GRAPH ?g {{ {inside} }} }}")
            held.update(r["g"] for r in rows if isinstance(r["g"], ox.NamedNode))
        return frozenset(held)

    def write(self, batch: Batch, *, progress: Progress | None = None, check: Check | None = None) -> None:
        more = check() if check else []  # a remote write cannot be staged: plan first, then one request
        self._changed()
        quads = list(batch.quads)
        for load in batch.files:
            parsed = list(ox.parse(path=str(load.path), format=load.format))
            named = {q.graph_name for q in parsed if isinstance(q.graph_name, ox.NamedNode)}
            before = self.held_graphs(named | ({load.to_graph} if load.to_graph is not None else set()))
            for quad in parsed:
                g = quad.graph_name
                if isinstance(g, ox.DefaultGraph):
                    if load.to_graph is None or load.to_graph in before:
                        continue
                    quad = ox.Quad(quad.subject, quad.predicate, quad.object, load.to_graph)
                elif g in before:
                    continue
                quads.append(quad)
        quads += more
        change = self._change(delete=batch.removals, insert=quads)
        if change:
            # One request: the server applies it entirely or not at all.
            body = change.encode()
            self._post(self.update_url, body, "application/sparql-update", "*/*", max(self.timeout, WRITE_TIMEOUT),
                       reuse=False)
        if progress:
            progress(len(quads))

