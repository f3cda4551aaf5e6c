"""Queries whose work is bounded by the rows they return, told from the text alone.

pyoxigraph cannot stop a query, so the server runs queries in worker processes it can kill at
the deadline (:mod:`workbench.server.runner`); that hand-off costs more than a point query
itself. Some queries need no such guard: **one triple pattern** (optionally inside one
``GRAPH``), no variable used twice, no property path, filter, DISTINCT, ORDER, OFFSET or
dataset clause. pyoxigraph answers it by scanning one index range in which every entry is a
row, so each row costs the same few microseconds and ``LIMIT n`` bounds the whole work.
:func:`bounded` recognises them; :meth:`Bounded.capped` sets their LIMIT; and
:meth:`Bounded.json_answer` reads the commonest of them (a pattern in ``GRAPH`` of variables and
absolute IRIs) as one quad pattern, with no query to parse and plan.

The recogniser is deliberately narrow: IRIs without escapes, simple prefixed names, variables,
plain strings (no backslash), integers; no comments, blank nodes or other keywords. A text it
accepts has one reading, the one here; anything else is simply not bounded, and goes the
guarded way. Malformed input that fits the shape (an unknown prefix, a bad IRI) still fails in
the parser, with its message, as it would the other way.

>>> bounded("SELECT ?p ?o WHERE { GRAPH ?g { <urn:x:a> ?p ?o } }")
Bounded(form='SELECT', limit=None, limit_at=None)
>>> bounded("SELECT * { ?s ?p ?s }") is None  # a repeated variable: the scan filters rows out
True
>>> query = "SELECT ?s { ?s a <urn:x:K> } LIMIT 5000"
>>> bounded(query).capped(query, 101)
'SELECT ?s { ?s a <urn:x:K> } LIMIT 101'
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyoxigraph as ox

if TYPE_CHECKING:
    from workbench.store.base import Store

# Each token as narrow as (or narrower than) pyoxigraph reads it: never wider.
_WS = r"[ \t\r\n]*+"  # possessive: white space is never given back, so matching stays linear
_IRI = r'<[^<>"{}|^`\\\x00-\x20]*>'
_PNAME = r"(?:[A-Za-z][A-Za-z0-9_\-]*)?:(?:[A-Za-z0-9_](?:[A-Za-z0-9_\-.]*[A-Za-z0-9_\-])?)?"
_VAR = r"[?$][A-Za-z_][A-Za-z0-9_]*"
_NAME = rf"(?:{_IRI}|{_PNAME})"
_LITERAL = rf'''(?:"[^"\\\r\n]*"|'[^'\\\r\n]*')(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^{_NAME})?|[+-]?[0-9]+'''
_NODE = rf"(?:{_VAR}|{_NAME})"
_TRIPLE = (rf"(?P<s>{_NODE}){_WS}(?P<p>{_VAR}|{_NAME}|(?-i:a)(?=[ \t\r\n<?$]))"
           rf"{_WS}(?P<o>{_NODE}|{_LITERAL}){_WS}(?:\.{_WS})?")
_BODY = rf"\{{{_WS}(?:GRAPH{_WS}(?P<g>{_NODE}){_WS}\{{{_WS})?{_TRIPLE}(?(g)\}}{_WS})\}}"
_PROLOGUE = rf"(?:{_WS}(?:BASE{_WS}{_IRI}|PREFIX{_WS}{_PNAME}{_WS}{_IRI}))*"
_SHAPE = re.compile(
    rf"(?P<prologue>{_PROLOGUE}){_WS}(?:(?P<select>SELECT)(?:{_WS}\*|(?P<vars>(?:{_WS}{_VAR})+))|(?P<ask>ASK))"
    rf"{_WS}(?:WHERE{_WS})?{_BODY}{_WS}(?P<cap>LIMIT{_WS}(?P<limit>[0-9]+){_WS})?\Z",
    re.IGNORECASE,
)


MAX_CHARS = 4096  #: longer texts are not looked at (a point query is a line or two)
_DECLARED = re.compile(rf"PREFIX{_WS}(?P<prefix>{_PNAME}){_WS}<(?P<ns>[^>]*)>", re.IGNORECASE)
_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
_STRING = "http://www.w3.org/2001/XMLSchema#string"


@dataclass(frozen=True)
class Bounded:
    """A bounded query: its form (SELECT or ASK), its own LIMIT if any, and where that starts."""

    form: str
    limit: int | None
    limit_at: int | None = None
    # As written: the pattern's subject, predicate, object and graph (None: no GRAPH), the
    # projection (None: * or ASK) and the prologue (for :meth:`json_answer`).
    terms: tuple[str, str, str, str | None] = field(default=("", "", "", None), repr=False)
    projection: tuple[str, ...] | None = field(default=None, repr=False)
    prologue: str = field(default="", repr=False)

    def capped(self, query: str, rows: int) -> str:
        """``query`` (the text this shape was read from) returning at most ``rows`` rows: its
        LIMIT lowered to ``rows``, or ``LIMIT rows`` added. An ASK is returned as it is."""
        if self.form == "ASK" or (self.limit is not None and self.limit <= rows):
            return query
        head = query if self.limit_at is None else query[: self.limit_at]
        return f"{head.rstrip()} LIMIT {rows}"

    def json_answer(self, store: Store, rows: int) -> bytes | None:
        """The answer in SPARQL JSON, read as one quad pattern (:meth:`Store.matching`) instead
        of a query, whose parse and plan cost pyoxigraph more than the read: for a pattern in
        ``GRAPH`` whose terms are variables and absolute IRIs (prefixed or not), answered with at
        most ``rows`` rows. None for anything else (literals, relative IRIs, the default graph,
        more rows, a term JSON here does not write), which the caller then asks as the query."""
        if self.terms[3] is None:
            return None  # the default graph: Store.matching reads named graphs
        prefixes: dict[str, str] = {}
        for declared in _DECLARED.finditer(self.prologue):
            prefixes[declared["prefix"][:-1]] = declared["ns"]  # a later declaration wins
        slots = [_slot(text, prefixes) for text in self.terms if text is not None]
        if any(slot is None for slot in slots):
            return None
        pattern = [slot if isinstance(slot, ox.NamedNode) else None for slot in slots]
        if self.form == "ASK":
            if self.limit is not None:
                return None
            found = store.matching(*pattern, limit=1)
            return b'{"head":{},"boolean":%s}' % (b"true" if found else b"false")
        named = [(i, slot) for i, slot in enumerate(slots) if isinstance(slot, str)]
        head = sorted(name for _, name in named) if self.projection is None else list(self.projection)
        if len(set(head)) != len(head):
            return None  # pyoxigraph refuses the text: let it say why
        cap = rows + 1 if self.limit is None else min(self.limit, rows + 1)
        quads = store.matching(*pattern, limit=cap)
        if len(quads) > rows:
            return None
        bindings = []
        for quad in quads:
            values = (quad.subject, quad.predicate, quad.object, quad.graph_name)
            bound = {name: values[i] for i, name in named}
            row = {}
            for name in head:
                if name in bound:
                    term = _json_term(bound[name])
                    if term is None:
                        return None
                    row[name] = term
            bindings.append(row)
        answer = {"head": {"vars": head}, "results": {"bindings": bindings}}
        return json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode()


def _slot(text: str, prefixes: dict[str, str]) -> ox.NamedNode | str | None:
    """A term as written: a variable's name, an IRI, or None where it is anything else (a
    literal, a relative IRI, an undeclared prefix). An absolute IRI is read as written, dot
    segments too, as pyoxigraph reads it (the tests ask both)."""
    if text[0] in "?$":
        return text[1:]
    if text == "a":
        return _TYPE
    if text[0] == "<":
        iri = text[1:-1]
    elif text[0] in "\"'+-0123456789":
        return None
    else:
        prefix, _, local = text.partition(":")
        ns = prefixes.get(prefix)
        if ns is None:
            return None
        iri = ns + local
    if not _ABSOLUTE.match(iri):
        return None
    try:
        return ox.NamedNode(iri)
    except ValueError:
        return None


def _json_term(term: object) -> dict[str, str] | None:
    """A term as SPARQL JSON results write it, in pyoxigraph's order of keys; None for a quoted
    triple or a literal with a direction."""
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, ox.Literal) and not getattr(term, "direction", None):
        if term.language:
            return {"type": "literal", "value": term.value, "xml:lang": term.language}
        if term.datatype.value != _STRING:
            return {"type": "literal", "value": term.value, "datatype": term.datatype.value}
        return {"type": "literal", "value": term.value}
    return None


def bounded(query: str) -> Bounded | None:
    """The query's form and LIMIT when its work is bounded by its rows (see the module), else None."""
    found = _SHAPE.match(query) if len(query) <= MAX_CHARS else None
    if found is None:
        return None
    groups = found.groupdict()
    terms = [groups[k] for k in ("s", "p", "o", "g") if groups[k]]
    # `a` is rdf:type, not a variable; ?x and $x are one variable
    names = [t[1:] for t in terms if t[0] in "?$"]
    if len(names) != len(set(names)):
        return None
    written = (groups["s"], groups["p"], groups["o"], groups["g"])
    limit = None if groups["limit"] is None else int(groups["limit"])
    if groups["ask"]:
        return Bounded("ASK", limit, None, written, None, groups["prologue"])
    projection = None if groups["vars"] is None else tuple(v[1:] for v in re.findall(_VAR, groups["vars"]))
    return Bounded("SELECT", limit, None if limit is None else found.start("cap"), written, projection,
                   groups["prologue"])
