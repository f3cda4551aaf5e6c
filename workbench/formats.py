"""Every RDF and SPARQL results format Workbench reads or writes, in one table: the name a
caller gives (``Workbench.sparql(format=)``, the import route's ``format``), the media types
it is sent and asked for as, the file endings that name it, its W3C format IRI and pyoxigraph's
format. Imports, exports, the server's content negotiation, its service description, the
client and the SPARQL page all read it from here.

>>> by_extension(Path("kinds.TTL")).name
'turtle'
>>> sparql_formats("csv")
(<QueryResultsFormat SPARQL Results in CSV>, <RdfFormat Turtle>)
>>> [f.name for f in RESULTS]
['json', 'xml', 'csv', 'tsv']
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from workbench.errors import Invalid


@dataclass(frozen=True)
class Format:
    """One serialisation."""

    name: str  # as callers name it; RDF/XML is "xml" among a query's answers, "rdfxml" as an upload
    label: str  # for people (download buttons)
    media_type: str  # what it is sent as
    aliases: tuple[str, ...] = ()  # other media types that ask for it
    extensions: tuple[str, ...] = ()  # file endings; the first is the one written
    w3c: str = ""  # its name under http://www.w3.org/ns/formats/
    rdf: ox.RdfFormat | None = None
    results: ox.QueryResultsFormat | None = None
    upload: str = ""  # the name the import route takes ("" : not an RDF format)

    @property
    def w3c_iri(self) -> str:
        return "http://www.w3.org/ns/formats/" + self.w3c


TURTLE = Format("turtle", "Turtle", "text/turtle", ("application/x-turtle",), (".ttl", ".turtle"), "Turtle",
                ox.RdfFormat.TURTLE, upload="turtle")
TRIG = Format("trig", "TriG", "application/trig", (), (".trig",), "TriG", ox.RdfFormat.TRIG, upload="trig")
N_TRIPLES = Format("ntriples", "N-Triples", "application/n-triples", ("text/plain",), (".nt",), "N-Triples",
                   ox.RdfFormat.N_TRIPLES, upload="ntriples")
N_QUADS = Format("nquads", "N-Quads", "application/n-quads", (), (".nq",), "N-Quads", ox.RdfFormat.N_QUADS,
                 upload="nquads")
JSON_LD = Format("jsonld", "JSON-LD", "application/ld+json", (), (".jsonld", ".json-ld"), "JSON-LD",
                 ox.RdfFormat.JSON_LD, upload="jsonld")
RDF_XML = Format("xml", "RDF/XML", "application/rdf+xml", ("application/xml", "text/xml"), (".rdf", ".owl", ".xml"),
                 "RDF_XML", ox.RdfFormat.RDF_XML, upload="rdfxml")

# SELECT and ASK answers, in order of preference (the first is the default).
RESULTS = (
    Format("json", "JSON", "application/sparql-results+json", ("application/json",), (".srj",),
           "SPARQL_Results_JSON", results=ox.QueryResultsFormat.JSON),
    Format("xml", "XML", "application/sparql-results+xml", ("application/xml", "text/xml"), (".srx",),
           "SPARQL_Results_XML", results=ox.QueryResultsFormat.XML),
    Format("csv", "CSV", "text/csv", (), (".csv",), "SPARQL_Results_CSV", results=ox.QueryResultsFormat.CSV),
    Format("tsv", "TSV", "text/tab-separated-values", (), (".tsv",), "SPARQL_Results_TSV",
           results=ox.QueryResultsFormat.TSV),
)
# CONSTRUCT and DESCRIBE answers (graphs, no datasets), in order of preference.
GRAPHS = (TURTLE, N_TRIPLES, JSON_LD, RDF_XML)
# What an import reads and an export writes.
RDF = (TURTLE, TRIG, N_TRIPLES, N_QUADS, JSON_LD, RDF_XML)

EXTENSIONS = {ext: f for f in RDF for ext in f.extensions}
UPLOADS = {f.upload: f for f in RDF}


def by_extension(path: Path) -> Format | None:
    """The RDF format a file's ending names, or None."""
    return EXTENSIONS.get(path.suffix.lower())


def rdf_format(path: Path) -> ox.RdfFormat:
    """The RDF format a file's ending names. Raises Invalid naming the file and the endings known."""
    found = by_extension(path)
    if found is None or found.rdf is None:
        known = ", ".join(sorted(EXTENSIONS))
        raise Invalid(f"cannot tell the RDF format from the extension {path.suffix!r}; use one of {known}",
                      where=str(path))
    return found.rdf


def sparql_formats(name: str) -> tuple[ox.QueryResultsFormat, ox.RdfFormat]:
    """What a format name means for a SPARQL answer: the serialisation of results (SELECT/ASK)
    and of a graph (CONSTRUCT/DESCRIBE). Raises Invalid for an unknown name."""
    results = {f.name: f.results for f in RESULTS}
    graphs = {f.name: f.rdf for f in GRAPHS}
    if name not in results and name not in graphs:
        raise Invalid(f"unknown format {name!r}; use one of {', '.join(sorted(set(results) | set(graphs)))}")
    return results.get(name) or ox.QueryResultsFormat.JSON, graphs.get(name) or ox.RdfFormat.TURTLE


def parse_answer(data: bytes, name: str, *, graph: bool) -> Iterator[ox.Triple] | ox.QuerySolutions | ox.QueryBoolean:
    """A serialised SPARQL answer read back: triples for a graph, solutions or a boolean otherwise."""
    results, rdf = sparql_formats(name)
    if graph:
        return (q.triple for q in ox.parse(data, rdf))
    return ox.parse_query_results(data, results)
