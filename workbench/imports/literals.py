"""Keep what was entered: literals the store would silently rewrite are refused on import.

pyoxigraph (embedded, and the Oxigraph server) stores values of XSD datatypes in a native form
and gives back a canonical spelling: ``"007"^^xsd:integer`` comes back as ``"7"``,
``"-3"^^xsd:negativeInteger`` as an ``xsd:integer``, ``"0"^^xsd:boolean`` as ``"false"``.
A curation tool must not change a value's datatype or spelling behind the curator's back, so an
import that holds such a literal is refused, naming it and the canonical form to write instead.
Ill-typed literals (``"abc"^^xsd:integer``) are refused too. See
docs/decisions/20261130-literal-forms.md.

>>> print(check([ox.Literal("007", datatype=XSD.integer)])[0].message.replace(_XSD_NS, "xsd:"))
"007"^^<xsd:integer> would be stored as "7"^^<xsd:integer>; write that instead
>>> check([ox.Literal("7", datatype=XSD.integer), ox.Literal("hi")])
[]
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import pyoxigraph as ox
import rdflib

from workbench.vocab import RDF, XSD

_XSD_NS = "http://www.w3.org/2001/XMLSchema#"
_PLAIN = {XSD.string.value, RDF.langString.value}
_PROBE_S = ox.NamedNode("urn:wb:probe:s")


@dataclass(frozen=True)
class LiteralProblem:
    literal: ox.Literal
    message: str


def needs_check(lit: ox.Literal) -> bool:
    dt = lit.datatype.value
    return dt not in _PLAIN and dt.startswith(_XSD_NS)


def check(literals: Iterable[ox.Literal]) -> list[LiteralProblem]:
    """Problems with these literals, in a stable order; empty when the store keeps them all."""
    distinct = sorted({lit for lit in literals if needs_check(lit)}, key=str)
    if not distinct:
        return []
    problems: list[LiteralProblem] = []
    # The store's own encoding is the judge: round-trip each value through an in-memory store.
    probe = ox.Store()
    predicates = [ox.NamedNode(f"urn:wb:probe:p{i}") for i in range(len(distinct))]
    probe.extend(ox.Quad(_PROBE_S, p, lit) for p, lit in zip(predicates, distinct, strict=True))
    for p, lit in zip(predicates, distinct, strict=True):
        ill = ill_typed(lit)
        if ill:
            problems.append(LiteralProblem(lit, f"{lit} is not a valid {_short(lit.datatype)}"))
            continue
        stored = next(iter(probe.quads_for_pattern(_PROBE_S, p, None))).object
        if stored != lit:
            problems.append(LiteralProblem(lit, f"{lit} would be stored as {stored}; write that instead"))
    return problems


def canonical(lit: ox.Literal) -> ox.Literal:
    """The form the store keeps a literal in (for values given as JSON numbers, not as text)."""
    if not needs_check(lit):
        return lit
    probe = ox.Store()
    probe.add(ox.Quad(_PROBE_S, _PROBE_S, lit))
    stored: ox.Literal = next(iter(probe)).object
    return stored


def _short(dt: ox.NamedNode) -> str:
    return "xsd:" + dt.value[len(_XSD_NS) :] if dt.value.startswith(_XSD_NS) else str(dt)


def ill_typed(lit: ox.Literal) -> bool:
    # rdflib knows the lexical spaces of the XSD types; silence its complaints while it checks.
    logger = logging.getLogger("rdflib.term")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = rdflib.Literal(lit.value, datatype=rdflib.URIRef(lit.datatype.value))
            return bool(value.ill_typed)
    finally:
        logger.setLevel(level)
