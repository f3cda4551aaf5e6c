"""How a SPARQL server answers: what the remote store learns about its server when it opens
(:meth:`workbench.store.remote.RemoteStore._dialect`) and the engines whose differences it knows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

JSON = "application/sparql-results+json"
# SELECT results: TSV first (from Oxigraph half JSON's bytes, and 13% less time for 100k rows; no
# difference on a question's few rows), JSON or XML from a server that prefers them; ASK stays JSON
# (TSV has no boolean form).
SELECT_ACCEPT = f"text/tab-separated-values, {JSON};q=0.9, application/sparql-results+xml;q=0.8"

@dataclass(frozen=True)
class Dialect:
    """How a SPARQL server answers, learnt when the store opens (:meth:`RemoteStore._dialect`)."""

    name: str  # "sparql" (SPARQL 1.1 as written) or the engine whose differences it has: "virtuoso"
    select_accept: str = SELECT_ACCEPT  # what to ask a SELECT's answer in
    # The server picks an answer's format by the Accept header's order, whatever the query's form:
    # query_raw asks for the form's own format and writes the one asked for here.
    negotiates: bool = False
    # Virtuoso 7's JSON: blank nodes as "nodeID://b1", which no parser takes, and xsd:boolean
    # true and false as "1" and "0" (valid, but not the form everything else writes and reads)
    virtuoso_json: bool = False
    # Prefixes of the graphs the engine keeps for itself (its schema, its service description):
    # never read as the store's.
    own_graphs: tuple[str, ...] = ()
    lists_graphs: bool = True  # GRAPH ?g { } lists the graphs (Virtuoso 7: nothing; a triple pattern does)
    # evaluates the as-of filter (workbench.records.effective) right: Virtuoso 7 ignores the BIND
    # inside its FILTER NOT EXISTS and keeps superseded records, and fails to compile it inside EXISTS
    as_of_reads: bool = True
    # applies an update request of several operations whole or not at all (Virtuoso 7 keeps the
    # operations before one that fails)
    atomic_requests: bool = True
    # may cut an answer at a configured number of rows with status 200, saying nothing (Virtuoso 7's
    # ResultSetMaxRows): checked when the store opens and on every dump
    cuts_answers: bool = False
    # takes a query POSTed directly (application/sparql-query), as the Protocol requires: found
    # after the probes, which go URL-encoded (Virtuoso 7 never answers a direct POST)
    direct_post: bool = False
    # a query with no dataset reads every graph as its default graph (Virtuoso 7; `FROM <x>` empties
    # it there and leaves every named graph to GRAPH ?g): a restricted reader's query is given one
    union_default: bool = False


STANDARD = Dialect("sparql")
VIRTUOSO = Dialect(
    "virtuoso", select_accept=JSON, negotiates=True, virtuoso_json=True,
    own_graphs=("http://www.openlinksw.com/", "http://www.w3.org/ns/ldp", "http://localhost:8890/",
                "http://localuriqaserver/", "http://www.w3.org/2002/07/owl"),
    lists_graphs=False, as_of_reads=False, atomic_requests=False, cuts_answers=True, union_default=True,
)


def not_engine_graph(g: str, prefixes: Sequence[str]) -> str:
    """A filter keeping the graphs whose IRI starts with one of ``prefixes`` (the engine's own:
    :attr:`Dialect.own_graphs`) out of the variable ``g``; nothing for an IRI or no prefixes."""
    if not prefixes or not g.startswith(("?", "$")):
        return ""
    return "FILTER(" + " && ".join(f'!STRSTARTS(STR({g}), "{p}")' for p in prefixes) + ")"
