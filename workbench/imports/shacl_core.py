"""A small SHACL Core evaluator for the constructs ``shapes/`` uses, in plain Python.

pySHACL is the reference, and stays the judge: :func:`workbench.imports.shapes.validate` uses this
evaluator only when every construct in the shapes is one it knows, and falls back to pySHACL
otherwise; tests compare the two on random graphs (tests/test_shapes.py). It exists because an
import validates one metadata record per assertion, and pySHACL costs about 140 µs a focus node
here (2.5 s for the 1,800 assertions of the essay's 1.27M relations), this about 5 µs.

Known: targets by ``sh:targetClass`` (with ``rdfs:subClassOf`` in the data graph); property shapes
whose path is one IRI; ``sh:minCount``, ``sh:maxCount``, ``sh:datatype``, ``sh:nodeKind``,
``sh:in``, ``sh:hasValue``, ``sh:node``, ``sh:or``, ``sh:and``, ``sh:not``, ``sh:property``;
``sh:name``, ``sh:message``, ``sh:description`` and comments are read or ignored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import pyoxigraph as ox

from workbench.imports import literals

SH = "http://www.w3.org/ns/shacl#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDF_FIRST = "http://www.w3.org/1999/02/22-rdf-syntax-ns#first"
RDF_REST = "http://www.w3.org/1999/02/22-rdf-syntax-ns#rest"
RDF_NIL = "http://www.w3.org/1999/02/22-rdf-syntax-ns#nil"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
IGNORED = {RDF_TYPE, "http://www.w3.org/2000/01/rdf-schema#comment", "http://www.w3.org/2000/01/rdf-schema#label",
           SH + "name", SH + "message", SH + "description", SH + "order", SH + "group"}
KNOWN = {SH + k for k in ("targetClass", "path", "minCount", "maxCount", "datatype", "nodeKind", "in", "hasValue",
                         "node", "or", "and", "not", "property")}

Term = ox.NamedNode | ox.BlankNode | ox.Literal


class UnknownConstruct(Exception):
    """The shapes use something this evaluator does not know; use pySHACL."""


class Index:
    """Triples by subject and predicate, and subjects by predicate and object."""

    def __init__(self, triples: Iterable[ox.Triple | ox.Quad]) -> None:
        self.out: dict[Term, dict[str, list[Term]]] = defaultdict(lambda: defaultdict(list))
        self.by_object: dict[tuple[str, Term], list[Term]] = defaultdict(list)
        seen: set[tuple[object, str, object]] = set()
        for t in triples:
            s, p, o = t.subject, t.predicate.value, t.object
            if (s, p, o) in seen:  # a graph is a set of triples
                continue
            seen.add((s, p, o))
            self.out[s][p].append(o)  # type: ignore[index, arg-type]
            self.by_object[(p, o)].append(s)  # type: ignore[index, arg-type]

    def values(self, node: Term, predicate: str) -> list[Term]:
        found = self.out.get(node)
        return found.get(predicate, []) if found else []

    def one(self, node: Term, predicate: str) -> Term | None:
        values = self.values(node, predicate)
        return values[0] if values else None

    def items(self, head: Term | None) -> list[Term]:
        out = []
        while head is not None and not (isinstance(head, ox.NamedNode) and head.value == RDF_NIL):
            first = self.one(head, RDF_FIRST)
            if first is None:
                raise UnknownConstruct("a malformed RDF list in the shapes")
            out.append(first)
            head = self.one(head, RDF_REST)
        return out


@dataclass
class Shape:
    node: Term
    name: str | None
    message: str | None
    path: str | None = None
    params: dict[str, list[Term]] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    focus: str
    path: str | None
    message: str


class Shapes:
    """Shapes compiled once from a shapes graph."""

    def __init__(self, shapes: Iterable[ox.Triple | ox.Quad]) -> None:
        self.g = Index(shapes)
        self.cache: dict[Term, Shape] = {}
        self.roots = [self.shape(n) for n in self.g.by_object[(RDF_TYPE, ox.NamedNode(SH + "NodeShape"))]]

    def shape(self, node: Term) -> Shape:
        if node in self.cache:
            return self.cache[node]
        params: dict[str, list[Term]] = {}
        for p, values in self.g.out.get(node, {}).items():
            if p in IGNORED:
                continue
            if p not in KNOWN:
                raise UnknownConstruct(f"{p} in shape {node}")
            params[p] = values
        path = self.g.one(node, SH + "path")
        if path is not None and not isinstance(path, ox.NamedNode):
            raise UnknownConstruct(f"a complex path in shape {node}")
        name, message = self.g.one(node, SH + "name"), self.g.one(node, SH + "message")
        shape = Shape(node, name.value if name else None, message.value if message else None,
                      path.value if path else None, params)
        self.cache[node] = shape
        for p in ("node", "not", "property"):
            for v in params.get(SH + p, []):
                self.shape(v)
        for p in ("or", "and"):
            for head in params.get(SH + p, []):
                for v in self.g.items(head):
                    self.shape(v)
        return shape

    def validate(self, data: Iterable[ox.Triple | ox.Quad]) -> list[Result]:
        g = Index(data)
        results: list[Result] = []
        for root in self.roots:
            for target in root.params.get(SH + "targetClass", []):
                for focus in _instances(g, target):
                    results += self._node(root, focus, g)
        return results

    # -------------------------------------------------------------- evaluation

    def _node(self, shape: Shape, focus: Term, g: Index) -> list[Result]:
        """Results of checking a node shape on one focus node."""
        failed = [c for c in self._failing(shape, [focus], g)]
        out = [Result(str(focus)[1:-1] if isinstance(focus, ox.NamedNode) else str(focus), None,
                      shape.message or c) for c in failed]
        for prop in shape.params.get(SH + "property", []):
            out += self._property(self.shape(prop), focus, g)
        return out

    def _property(self, shape: Shape, focus: Term, g: Index) -> list[Result]:
        values = g.values(focus, shape.path or "")
        problems = []
        low, high = shape.params.get(SH + "minCount"), shape.params.get(SH + "maxCount")
        if low and len(values) < int(low[0].value):
            problems.append(f"needs at least {low[0].value} value(s), has {len(values)}")
        if high and len(values) > int(high[0].value):
            problems.append(f"allows at most {high[0].value} value(s), has {len(values)}")
        problems += self._failing(shape, values, g)
        for prop in shape.params.get(SH + "property", []):  # nested property shapes on each value
            for v in values:
                problems += [r.message for r in self._property(self.shape(prop), v, g)]
        where = str(focus)[1:-1] if isinstance(focus, ox.NamedNode) else str(focus)
        return [Result(where, shape.name or shape.path, shape.message or p) for p in problems]

    def _failing(self, shape: Shape, values: list[Term], g: Index) -> list[str]:
        """Messages for the value-node constraints of ``shape`` that some value fails."""
        out: list[str] = []
        p = shape.params
        for dt in p.get(SH + "datatype", []):
            out += [f"{v} is not a {dt}" for v in values if not _has_datatype(v, dt)]
        for kind in p.get(SH + "nodeKind", []):
            out += [f"{v} is not a {kind}" for v in values if not _has_kind(v, kind)]
        for head in p.get(SH + "in", []):
            allowed = set(self.g.items(head))
            out += [f"{v} is not one of the allowed values" for v in values if v not in allowed]
        for wanted in p.get(SH + "hasValue", []):
            if wanted not in values:
                out.append(f"has no value {wanted}")
        for other in p.get(SH + "node", []):
            out += [f"{v} does not conform to {other}" for v in values if not self._conforms(other, v, g)]
        for other in p.get(SH + "not", []):
            out += [f"{v} conforms to {other}, which it must not" for v in values if self._conforms(other, v, g)]
        for head in p.get(SH + "or", []):
            options = self.g.items(head)
            out += [f"{v} conforms to none of the alternatives" for v in values
                    if not any(self._conforms(o, v, g) for o in options)]
        for head in p.get(SH + "and", []):
            options = self.g.items(head)
            out += [f"{v} does not conform to all of the shapes" for v in values
                    if not all(self._conforms(o, v, g) for o in options)]
        return out

    def _conforms(self, node: Term, value: Term, g: Index) -> bool:
        shape = self.shape(node)
        if shape.path is not None:
            return not self._property(shape, value, g)
        return not self._node(shape, value, g)


def _instances(g: Index, cls: Term) -> list[Term]:
    classes, todo = {cls}, [cls]
    while todo:
        for sub in g.by_object[(SUBCLASS, todo.pop())]:
            if sub not in classes:
                classes.add(sub)
                todo.append(sub)
    seen: dict[Term, None] = {}
    for c in classes:
        for s in g.by_object[(RDF_TYPE, c)]:
            seen.setdefault(s)
    return list(seen)


def _has_datatype(value: Term, dt: Term) -> bool:
    if not isinstance(value, ox.Literal) or not isinstance(dt, ox.NamedNode):
        return False
    actual = RDF_LANGSTRING if value.language else value.datatype.value
    if actual != dt.value:
        return False
    return not (literals.needs_check(value) and literals.ill_typed(value))


_KINDS = {
    "IRI": (ox.NamedNode,), "Literal": (ox.Literal,), "BlankNode": (ox.BlankNode,),
    "BlankNodeOrIRI": (ox.BlankNode, ox.NamedNode), "BlankNodeOrLiteral": (ox.BlankNode, ox.Literal),
    "IRIOrLiteral": (ox.NamedNode, ox.Literal),
}


def _has_kind(value: Term, kind: Term) -> bool:
    name = kind.value[len(SH):] if isinstance(kind, ox.NamedNode) and kind.value.startswith(SH) else ""
    if name not in _KINDS:
        raise UnknownConstruct(f"node kind {kind}")
    return isinstance(value, _KINDS[name])
