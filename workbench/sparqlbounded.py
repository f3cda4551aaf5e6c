"""Queries whose work is bounded by the rows they return, told from the text alone.

pyoxigraph cannot stop a query, so the server runs queries in worker processes it can kill at
the deadline (:mod:`workbench.server.runner`); that hand-off costs more than a point query
itself. Some queries need no such guard: **one triple pattern** (optionally inside one
``GRAPH``), no variable used twice, no property path, filter, DISTINCT, ORDER, OFFSET or
dataset clause. pyoxigraph answers it by scanning one index range in which every entry is a
row, so each row costs the same few microseconds and ``LIMIT n`` bounds the whole work.
:func:`bounded` recognises them; :meth:`Bounded.capped` sets their LIMIT.

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

import re
from dataclasses import dataclass

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
    rf"{_PROLOGUE}{_WS}(?:(?P<select>SELECT)(?:{_WS}\*|(?:{_WS}{_VAR})+)|(?P<ask>ASK))"
    rf"{_WS}(?:WHERE{_WS})?{_BODY}{_WS}(?P<cap>LIMIT{_WS}(?P<limit>[0-9]+){_WS})?\Z",
    re.IGNORECASE,
)


MAX_CHARS = 4096  #: longer texts are not looked at (a point query is a line or two)


@dataclass(frozen=True)
class Bounded:
    """A bounded query: its form (SELECT or ASK), its own LIMIT if any, and where that starts."""

    form: str
    limit: int | None
    limit_at: int | None = None

    def capped(self, query: str, rows: int) -> str:
        """``query`` (the text this shape was read from) returning at most ``rows`` rows: its
        LIMIT lowered to ``rows``, or ``LIMIT rows`` added. An ASK is returned as it is."""
        if self.form == "ASK" or (self.limit is not None and self.limit <= rows):
            return query
        head = query if self.limit_at is None else query[: self.limit_at]
        return f"{head.rstrip()} LIMIT {rows}"


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
    if groups["ask"]:
        return Bounded("ASK", None)
    limit = groups["limit"]
    return Bounded("SELECT", None if limit is None else int(limit), None if limit is None else found.start("cap"))
