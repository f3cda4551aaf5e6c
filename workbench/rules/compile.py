"""From a rule's SPARQL (``sh:construct``) to premises, filters and conclusions.

rdflib's SPARQL parser reads the query (it reports line and column); only its parser is used,
never its engine. What a rule may use is deliberately small, so every solution is a proof:
basic graph patterns; property paths made of IRIs, ``/``, ``^`` and ``*``/``+`` over one
relation; FILTER expressions; FILTER NOT EXISTS over recorded facts. Anything else (OPTIONAL,
UNION, BIND, GRAPH, SERVICE, subqueries, updates) is refused with a reason.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox
from rdflib import BNode, Literal, URIRef, Variable
from rdflib.paths import InvPath, MulPath, Path, SequencePath

from workbench.errors import Invalid, ParseError
from workbench.sparqlcheck import check_query, on_new_thread
from workbench.values.rules import Closure, Filter, NotExists, Premise, Slot, Var

_UPDATE = re.compile(r"^\s*(INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)\b", re.IGNORECASE)
_PROLOGUE = re.compile(r"^\s*(PREFIX\s+\S*\s*<[^>]*>|BASE\s*<[^>]*>|#[^\n]*)", re.IGNORECASE)

_OPS = {
    "ConditionalAndExpression": "&&",
    "ConditionalOrExpression": "||",
}
_BUILTINS = {
    "BOUND",
    "isIRI",
    "isURI",
    "isLITERAL",
    "isBLANK",
    "isNUMERIC",
    "STR",
    "LANG",
    "LANGMATCHES",
    "DATATYPE",
    "sameTerm",
    "REGEX",
    "STRSTARTS",
    "STRENDS",
    "CONTAINS",
    "LCASE",
    "UCASE",
    "STRLEN",
    "YEAR",
    "MONTH",
    "DAY",
    "ABS",
    "CEIL",
    "FLOOR",
    "ROUND",
    "SUBSTR",
    "IF",
    "COALESCE",
    "STRDT",
    "STRLANG",
}


@dataclass
class Body:
    premises: list[Premise] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)
    absences: list[NotExists] = field(default_factory=list)
    domains: dict[str, frozenset[str]] = field(default_factory=dict)


class _Fresh:
    def __init__(self) -> None:
        self._n = itertools.count(1)

    def __call__(self) -> Var:
        return Var(f"_{next(self._n)}")


def strip_prologue(text: str) -> str:
    body = text
    while (m := _PROLOGUE.match(body)) is not None:
        body = body[m.end() :]
    return body


def parse_construct(text: str, where: str) -> tuple[list[Premise], Body]:
    """(conclusion templates, body) of a CONSTRUCT query; raises ParseError / Invalid."""
    from rdflib.plugins.sparql import algebra, parser

    if _UPDATE.match(strip_prologue(text)):
        raise Invalid("uses SPARQL Update: a rule only draws conclusions, it never changes the store", where=where)
    try:  # bounded before rdflib (or, later, the store's engine) reads it: size, nesting, SERVICE
        check_query(text)
    except Invalid as exc:
        raise Invalid(exc.message, where=where) from None
    try:
        # On a thread of its own, so that the caller's stack depth does not count against rdflib's.
        tree = on_new_thread(lambda: parser.parseQuery(text))
        if _constant_filter(tree):
            raise Invalid(
                "a FILTER on a constant (such as FILTER(false)) decides nothing about the facts; "
                "remove it or write the condition over the rule's variables",
                where=where,
            )
        query = algebra.translateQuery(tree)
    except Invalid:
        raise
    except RecursionError:
        raise Invalid("sh:construct nests brackets too deeply for rdflib's SPARQL parser (it reads about 20 levels of "
                      "parentheses); write the rule flatter", where=where) from None
    except Exception as exc:  # pyparsing's ParseException, or rdflib's own errors on bad prefixes
        line, col = getattr(exc, "lineno", None), getattr(exc, "col", None)
        at = f"line {line}, column {col}: " if line else ""
        raise ParseError(f"SPARQL syntax error in sh:construct, {at}{getattr(exc, 'msg', exc)}", where=where) from None
    alg = query.algebra
    if alg.name != "ConstructQuery":
        raise Invalid(f"sh:construct must hold a CONSTRUCT query, not {alg.name}", where=where)
    if alg.get("datasetClause"):
        raise Invalid("FROM / FROM NAMED are not allowed: a rule reads the recorded facts", where=where)
    fresh = _Fresh()
    body = Body()
    top = alg.p
    while getattr(top, "name", "") in ("Project", "Distinct", "Reduced"):  # the query's own projection
        top = top.p
    _walk(top, body, fresh, where)
    outer = frozenset().union(*(p.vars() for p in body.premises))
    body.absences = [NotExists(a.premises, a.vars & outer, a.filters) for a in body.absences]
    head = [Premise(_slot(s, where), _head_predicate(p, where), _slot(o, where)) for s, p, o in alg.template]
    for i, p in enumerate(body.premises):
        body.premises[i] = Premise(p.s, p.p, p.o, index=i)
    return head, body


def _constant_filter(tree: Any) -> bool:
    """Whether the parse tree has a FILTER whose expression is a bare literal. rdflib's algebra
    silently drops falsy ones (FILTER(false), FILTER(0)), so they are caught before it."""
    from rdflib.plugins.sparql.parserutils import CompValue

    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, CompValue):
            if node.name == "Filter":
                expr = node.get("expr")
                # The parser wraps a bare term in one-armed Or/And/Relational/... expressions.
                while isinstance(expr, CompValue) and {k for k, v in expr.items() if v not in (None, [])} <= {
                    "expr",
                    "_vars",
                }:
                    expr = expr.get("expr")
                if isinstance(expr, Literal):
                    return True
            stack.extend(node.values())
        elif isinstance(node, list | tuple) or type(node).__name__ == "ParseResults":
            stack.extend(node)
    return False


def _walk(node: Any, body: Body, fresh: _Fresh, where: str) -> None:
    name = getattr(node, "name", type(node).__name__)
    if name == "ToMultiSet" and getattr(node.p, "name", "") == "values":
        raise Invalid("VALUES is not allowed in a rule body; use FILTER(?x IN (...))", where=where)
    if name in ("Project", "Distinct", "Reduced", "ToMultiSet", "SelectQuery"):
        raise Invalid("subqueries are not allowed in a rule body (every solution must be a proof)", where=where)
    elif name == "Join":
        _walk(node.p1, body, fresh, where)
        _walk(node.p2, body, fresh, where)
    elif name == "BGP":
        for s, p, o in node.triples:
            body.premises.extend(_premises(s, p, o, fresh, where))
    elif name == "Filter":
        _walk(node.p, body, fresh, where)
        for conjunct in _conjuncts(node.expr):
            _add_filter(conjunct, body, fresh, where)
    else:
        what = {
            "LeftJoin": "OPTIONAL",
            "Union": "UNION",
            "Extend": "BIND",
            "Graph": "GRAPH",
            "ServiceGraphPattern": "SERVICE",
            "Minus": "MINUS",
            "values": "VALUES (use FILTER(?x IN (...)))",
            "AggregateJoin": "aggregates",
            "Group": "GROUP BY",
        }.get(name, name)
        if name == "ServiceGraphPattern" or "Service" in name:
            raise Invalid("uses SERVICE: a rule may not reach outside the store", where=where)
        raise Invalid(f"{what} is not allowed in a rule body (every solution must be a proof)", where=where)


def _conjuncts(expr: Any) -> Iterator[Any]:
    if getattr(expr, "name", "") == "ConditionalAndExpression":
        yield from _conjuncts(expr.expr)
        for other in expr.other:
            yield from _conjuncts(other)
    else:
        yield expr


def _add_filter(expr: Any, body: Body, fresh: _Fresh, where: str) -> None:
    name = getattr(expr, "name", "")
    if name == "Builtin_NOTEXISTS":
        from rdflib.plugins.sparql import algebra

        graph = expr.graph
        if getattr(graph, "name", "") == "GroupGraphPatternSub":
            graph = algebra.translateGroupGraphPattern(graph)
        inner = Body()
        _walk(graph, inner, fresh, where)
        if inner.absences:
            raise Invalid("FILTER NOT EXISTS inside FILTER NOT EXISTS is not allowed", where=where)
        body.absences.append(
            NotExists(
                premises=tuple(inner.premises),
                vars=frozenset().union(*(p.vars() for p in inner.premises)),
                filters=tuple(f.sparql for f in inner.filters),
            )
        )
        return
    if name == "Builtin_EXISTS":
        raise Invalid("FILTER EXISTS is not allowed; write the pattern as premises", where=where)
    names: set[str] = set()
    text = expression(expr, names, where)
    if not names:
        raise Invalid(
            f"a FILTER on constants only ({text}) decides nothing about the facts; remove it or "
            "write the condition over the rule's variables",
            where=where,
        )
    domain = None
    in_iris = name == "RelationalExpression" and expr.op == "IN" and isinstance(expr.expr, Variable)
    if in_iris and all(isinstance(x, URIRef) for x in expr.other):
        domain = (str(expr.expr), frozenset(str(x) for x in expr.other))
        body.domains[domain[0]] = domain[1]
    body.filters.append(Filter(sparql=text, vars=frozenset(names), domain=domain))


def expression(e: Any, names: set[str], where: str) -> str:
    """A filter expression written back as SPARQL over the engine's variable names."""
    if isinstance(e, Variable):
        names.add(str(e))
        return str(Var(str(e)))
    if isinstance(e, URIRef | Literal):
        return str(_term(e, where))
    if isinstance(e, list):
        return ", ".join(expression(x, names, where) for x in e)
    name = getattr(e, "name", type(e).__name__)
    if name in _OPS:
        parts = [expression(e.expr, names, where)] + [expression(x, names, where) for x in e.other]
        return "(" + f" {_OPS[name]} ".join(parts) + ")"
    if name in ("AdditiveExpression", "MultiplicativeExpression"):
        out = expression(e.expr, names, where)
        for op, x in zip(e.op, e.other, strict=True):
            out += f" {op} {expression(x, names, where)}"
        return f"({out})"
    if name == "RelationalExpression":
        left = expression(e.expr, names, where)
        if e.op in ("IN", "NOT IN"):
            return f"({left} {e.op} ({expression(list(e.other), names, where)}))"
        return f"({left} {e.op} {expression(e.other, names, where)})"
    if name == "UnaryNot":
        return f"(!{expression(e.expr, names, where)})"
    if name == "UnaryMinus":
        return f"(-{expression(e.expr, names, where)})"
    if name.startswith("Builtin_") and name[8:] in _BUILTINS:
        args = [v for k, v in e.items() if k.startswith("arg") or k in ("text", "pattern", "flags")]
        inner = ", ".join(expression(a, names, where) for a in args if a is not None)
        return f"{name[8:]}({inner})"
    raise Invalid(f"{name.removeprefix('Builtin_')} is not allowed in a rule's FILTER", where=where)


def _term(t: Any, where: str) -> ox.NamedNode | ox.Literal:
    if isinstance(t, URIRef):
        return ox.NamedNode(str(t))
    if isinstance(t, Literal):
        if t.language:
            return ox.Literal(str(t), language=t.language)
        if t.datatype:
            return ox.Literal(str(t), datatype=ox.NamedNode(str(t.datatype)))
        return ox.Literal(str(t))
    raise Invalid(f"unexpected term {t!r}", where=where)


def _slot(t: Any, where: str) -> Slot:
    if isinstance(t, Variable):
        return Var(str(t))
    if isinstance(t, BNode):
        raise Invalid("blank nodes are not allowed in rules; use a variable", where=where)
    return _term(t, where)


def _head_predicate(p: Any, where: str) -> ox.NamedNode | Var:
    if isinstance(p, Variable):
        return Var(str(p))
    if isinstance(p, URIRef):
        return ox.NamedNode(str(p))
    raise Invalid("a conclusion's predicate must be an IRI or a variable", where=where)


def _premises(s: Any, p: Any, o: Any, fresh: _Fresh, where: str) -> list[Premise]:
    subj, obj = _slot(s, where), _slot(o, where)
    return path_premises(subj, p, obj, fresh, where)


def path_premises(s: Slot, p: Any, o: Slot, fresh: _Fresh, where: str) -> list[Premise]:
    """Premises for ``s p o`` where p is an IRI, a variable or a path (rdflib's path objects)."""
    if isinstance(p, Variable):
        return [Premise(s, Var(str(p)), o)]
    if isinstance(p, URIRef):
        return [Premise(s, ox.NamedNode(str(p)), o)]
    if isinstance(p, InvPath):
        return path_premises(o, p.arg, s, fresh, where)
    if isinstance(p, SequencePath):
        out: list[Premise] = []
        left = s
        for i, step in enumerate(p.args):
            right = o if i == len(p.args) - 1 else fresh()
            out.extend(path_premises(left, step, right, fresh, where))
            left = right
        return out
    if isinstance(p, MulPath) and p.mod in ("*", "+"):
        inner = p.path
        if isinstance(inner, InvPath) and isinstance(inner.arg, URIRef):
            return [Premise(o, Closure(ox.NamedNode(str(inner.arg)), 0 if p.mod == "*" else 1), s)]
        if isinstance(inner, URIRef):
            return [Premise(s, Closure(ox.NamedNode(str(inner)), 0 if p.mod == "*" else 1), o)]
        raise Invalid("* and + apply to one relation (or its inverse) in a rule", where=where)
    if isinstance(p, Path):
        raise Invalid(f"the property path {p.n3()} is not allowed in a rule (use IRIs, /, ^, * and +)", where=where)
    raise Invalid(f"unexpected predicate {p!r}", where=where)
