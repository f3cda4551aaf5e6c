"""The store as one restricted reader may see it, read through the engine: no copy (issue 20).

A :class:`RestrictedStore` sends every query to the store itself, rewritten
(:func:`workbench.access.rewrite.restrict`) so that the engine drops the solutions from the graphs
the reader may not see: each ``GRAPH`` pattern carries the audience filter, ``FROM`` and
``FROM NAMED`` keep only the graphs the reader may see. Since 2026-12-06 everything a reader may
be denied is a set of named graphs that carry their audience (records, sources with their
records' metadata and import runs, acts, summaries, tombstones, candidates, names given by
restricted records), and the shared graphs hold only what every reader may see
(docs/decisions/20261205-visibility-the-engine-enforces.md), so Workbench's own reads give, from
the whole store, what they give from a view (:mod:`workbench.access.views`) that copied it
without what the reader may not see: the tests hold the two against each other, and against a
store that never held it, on every engine.

Its cost is the filter's, per graph a solution binds, whatever the store's size; a view's is a
copy of the store after every write (on a SPARQL server: the whole dump, minutes at 10M
relations). It is what every named reader of a store on a SPARQL server reads (an admin's
withholds only the token hashes' graph, whose audience is no reader), for questions, SPARQL and
exports; the embedded store keeps its views (a checkpoint: milliseconds) until the rewrite is
measured faster there. The version it reports is the store's, so a write the reader may not see
moves it too: a reader learns that the store changed, never what. On a server whose default
graph is every graph (Virtuoso 7) a query that reads the default graph, or names a dataset, is
refused (:meth:`RestrictedStore.rewritten`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO

import pyoxigraph as ox

from workbench.access.audience import withheld
from workbench.access.rewrite import NONE_GRAPH, restrict
from workbench.access.views import Viewer
from workbench.errors import ParseError, Unsupported
from workbench.sparqlcheck import parses
from workbench.store.base import Graphs, ReadOnly, Row, Store

CACHED_LENGTH = 16_384  # longer queries (long VALUES lists) are rewritten each time, not kept


class RestrictedStore(ReadOnly):
    """``base`` as ``reader`` may see it, every query rewritten for the engine (see the module's
    note); for a reader who sees every source, only what no reader sees is withheld (token hashes).
    :meth:`select`, :meth:`ask`, :meth:`construct` and :meth:`prefetch` take Workbench's own
    queries, whose metadata groups beside their record go unfiltered (:func:`restrict`'s
    ``own``); a tool's SPARQL goes through :meth:`query_raw`, which filters every group."""

    def __init__(self, base: Store, reader: Viewer) -> None:
        self.base = base
        self.reader = reader
        self.location = f"{base.location} as seen by {reader.name or 'the public'}"
        self.capabilities = replace(base.capabilities, name="restricted")
        self._agents = None if reader.sees_all else tuple(sorted(reader.agents))
        # Workbench never writes the default graph: anything there is every graph, served as the
        # default (Virtuoso, Neptune, `oxigraph serve --union-default-graph`), where the filter
        # cannot follow a pattern outside GRAPH
        self._union_default = base.capabilities.union_default_graph or base.ask("ASK { ?s ?p ?o }")
        self._cached = functools.lru_cache(maxsize=2048)(self._rewrite)  # Workbench's queries repeat

    def rewritten(self, query: str, *, dataset: bool = False, own: bool = False) -> str:
        """``query`` as the engine should run it for this reader (``dataset``: the Protocol gives
        one; ``own``: Workbench's own query, never a tool's, see :func:`restrict`: a tool's goes
        through :meth:`query_raw`). Raises Unsupported for a triple pattern outside every GRAPH
        with no dataset, on a server whose default graph is every graph: the engine reads it there
        unfiltered; and on Virtuoso 7 for any dataset (its ``GRAPH <iri>`` in an ASK reads past one)."""
        text, names, reads_default = (self._cached(query, own) if len(query) < CACHED_LENGTH
                                      else self._rewrite(query, own))
        if self.capabilities.union_default_graph and (names or dataset):  # Virtuoso 7: docs/deployment.md
            raise Unsupported("on this SPARQL server a query's dataset (FROM, FROM NAMED, default-graph-uri, "
                              "named-graph-uri) does not hold a GRAPH <iri> to it, so it cannot be read as "
                              "someone who may not see every graph: pick the graphs with GRAPH ?g { ... } and "
                              "a FILTER on ?g instead")
        if self._union_default and reads_default and not (names or dataset):
            raise Unsupported("on this SPARQL server a triple pattern outside GRAPH reads every graph: name "
                              "the graphs (GRAPH ?g { ... }) in the query of a reader who may not see every one")
        return text

    def _ours(self, query: str) -> str:
        """Workbench's own ``query``, rewritten (a tool's is :meth:`rewritten` as it is)."""
        return self.rewritten(query, own=True)

    def _rewrite(self, query: str, own: bool) -> tuple[str, bool, bool]:
        # a tool's GRAPH ?g never binds the engine's own graphs (Workbench's own queries cannot)
        found = restrict(query, self._agents, own=own, foreign=() if own else self.capabilities.engine_graphs)
        text = found.query(self._visible(found.dataset) if found.dataset else ())
        return text, bool(found.dataset), found.reads_default

    def _visible(self, graphs: Sequence[str]) -> frozenset[str]:
        """Of ``graphs`` (a query's ``FROM`` / ``FROM NAMED``), those the reader may see."""
        values = " ".join(f"<{g}>" for g in graphs)
        rows = self.base.select(f"SELECT ?g WHERE {{ VALUES ?g {{ {values} }} {withheld('?g', self._agents)} }}")
        return frozenset(r["g"].value for r in rows if isinstance(r["g"], ox.NamedNode))

    # ------------------------------------------------------------------ reading, rewritten

    def version(self) -> str:
        return self.base.version()

    def known_version(self) -> str | None:
        return self.base.known_version()

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        with self.base.reading():
            yield

    def prefetch(self, *queries: str) -> None:
        self.base.prefetch(*map(self._ours, queries))

    def prefetched(self, query: str) -> list[Row] | None:
        return self.base.prefetched(self._ours(query))

    def _answer(self, query: str) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        return self.base._answer(self._ours(query))

    def select(self, query: str) -> list[Row]:
        return self.base.select(self._ours(query))

    def ask(self, query: str) -> bool:
        return self.base.ask(self._ours(query))

    def construct(self, query: str) -> list[ox.Triple]:
        return self.base.construct(self._ours(query))

    def query_raw(self, query: str, *, results: ox.QueryResultsFormat, graph: ox.RdfFormat,
                  default_graph: Graphs = None, named_graphs: Graphs = None) -> bytes:
        """Serialised, with the Protocol's dataset (if given) cut to the graphs the reader may see."""
        text = self.rewritten(query, dataset=default_graph is not None or named_graphs is not None)
        none = ox.NamedNode(NONE_GRAPH[1:-1])

        def cut(graphs: Graphs) -> Graphs:  # an empty list would read as no list: the empty graph instead
            return None if graphs is None else [ox.NamedNode(g) for g in sorted(self._visible(
                [g.value for g in graphs]))] or [none]

        if (default_graph is None) != (named_graphs is None):  # the Protocol: the other is empty (Virtuoso:
            default_graph, named_graphs = default_graph or [none], named_graphs or [none]  # said, or all)
        default_graph, named_graphs = cut(default_graph), cut(named_graphs)
        try:
            return self.base.query_raw(text, results=results, graph=graph,
                                       default_graph=default_graph, named_graphs=named_graphs)
        except ParseError:  # a tool's own mistake: said at its line and column, not the rewrite's
            parses(query)
            raise

    def per_graph(self, query: str) -> list[Row]:
        rows = self.base.select(query)  # Workbench's own query, each row of one graph: kept only if seen
        graphs = sorted({r["g"].value for r in rows if isinstance(r.get("g"), ox.NamedNode)})  # type: ignore[union-attr]
        shown = frozenset().union(*(self._visible(graphs[i:i + 1000]) for i in range(0, len(graphs), 1000)))
        return [r for r in rows if isinstance(r.get("g"), ox.NamedNode) and r["g"].value in shown]  # type: ignore[union-attr]

    def graph_names(self) -> frozenset[ox.NamedNode]:
        rows = self.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")
        return frozenset(r["g"] for r in rows if isinstance(r["g"], ox.NamedNode))

    def has_graph(self, graph: ox.NamedNode) -> bool:
        return self.ask(f"ASK {{ GRAPH {graph} {{ ?s ?p ?o }} }}")

    def held_graphs(self, graphs: Iterable[ox.NamedNode]) -> frozenset[ox.NamedNode]:
        asked = list(graphs)
        if not asked:
            return frozenset()
        rows = self.select(f"""SELECT ?g WHERE {{ VALUES ?g {{ {" ".join(map(str, asked))} }}
            FILTER EXISTS {{ GRAPH ?g {{ ?s ?p ?o }} }} {withheld("?g", self._agents)} }}""")
        return frozenset(r["g"] for r in rows if isinstance(r["g"], ox.NamedNode))

    def quads(self, graph: ox.NamedNode | None = None) -> Iterator[ox.Quad]:
        return self.base.quads_rewritten(self._ours, graph)  # a server's streamed, never whole in memory

    def dump(self, out: IO[bytes], *, format: ox.RdfFormat) -> None:
        ox.serialize(self.quads(), out, format=format)

    @property
    def round_trips(self) -> int:
        """The store's round trips so far (a SPARQL server's; none elsewhere)."""
        return int(getattr(self.base, "round_trips", 0))

    @property
    def files_dir(self) -> Path:
        """Its own vector indexes, beside the store's, one folder per set of agents (as a view's)."""
        return self.base.files_dir / "views" / self.reader.key
