"""Bindings: unifying goals with conclusions, grounding premises, SPARQL VALUES blocks, walking
closure edges, and keeping the smallest proof per distinct solution."""

from __future__ import annotations

import functools

import pyoxigraph as ox

from workbench.rules.proof import Row, Triple
from workbench.values.rules import Closure, Filter, Node, NotExists, Premise, Slot, Var


def domains(rows: list[Row], filters: list[Filter | NotExists], bound: set[str]) -> list[Row]:
    """Apply FILTER(?v IN (<iri>...)) in Python once ?v is bound (removing it from ``filters``)."""
    for f in [f for f in filters if isinstance(f, Filter) and f.domain and f.domain[0] in bound]:
        name, iris = f.domain  # type: ignore[misc]
        rows = [r for r in rows if isinstance(r.vals[name], ox.NamedNode) and r.vals[name].value in iris]
        filters.remove(f)
    return rows


def shape(p: Premise, cols: list[str]) -> tuple[str, tuple[str, ...]]:
    """A premise's pattern with its variables named by position (bound ones by their column),
    and its free variables in that order."""
    return _shape(p, tuple(cols))


@functools.lru_cache(maxsize=4096)  # a question's lookups ask it several times a premise
def _shape(p: Premise, cols: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    names = {c: f"b{i}" for i, c in enumerate(cols)}
    free: list[str] = []
    for t in (p.s, p.p, p.o):
        if isinstance(t, Var) and t.name not in names:
            names[t.name] = f"f{len(free)}"
            free.append(t.name)

    def show(t: object) -> str:
        return names[t.name] if isinstance(t, Var) else str(t)

    return f"{show(p.s)} {show(p.p)} {show(p.o)} {p.metadata}", tuple(free)


def bound_score(p: Premise, bound: set[str], derivable: bool) -> int:
    """How good a premise is to evaluate next: known terms count, a known subject counts double
    (evaluation is goal-directed from $this), a closure with a known end is cheap, and a premise
    a rule concludes waits until its subject is known (else its sub-goal would scan the store)."""
    s, pred, o = p.s, p.p, p.o
    if isinstance(pred, Closure):
        return 4 if not isinstance(s, Var) or s.name in bound or not isinstance(o, Var) or o.name in bound else -10
    subject = not isinstance(s, Var) or s.name in bound
    score = (subject * 3 + (not isinstance(pred, Var) or pred.name in bound)
             + (not isinstance(o, Var) or o.name in bound))
    return score - 10 if derivable and not subject else score


def value(slot: Slot | ox.NamedNode, vals: dict[str, Node]) -> Node:
    return vals[slot.name] if isinstance(slot, Var) else slot


def ground(p: Premise, vals: dict[str, Node]) -> Triple:
    pred = p.p.predicate if isinstance(p.p, Closure) else value(p.p, vals)
    return (value(p.s, vals), pred, value(p.o, vals))  # type: ignore[return-value]


def unify(head: Premise, goal: Premise, vals: dict[str, Node]) -> dict[str, Node] | None:
    """The rule's initial bindings for a goal (a premise under ``vals``), or None if they clash."""
    init: dict[str, Node] = {}
    for h, g in ((head.s, goal.s), (head.p, goal.p), (head.o, goal.o)):
        gv = vals.get(g.name) if isinstance(g, Var) else g
        if gv is None:
            continue
        if isinstance(h, Var):
            if init.setdefault(h.name, gv) != gv:  # type: ignore[arg-type]
                return None
        elif h != gv:
            return None
    return init


def match(p: Premise, triple: Triple, vals: dict[str, Node]) -> dict[str, Node] | None:
    out = dict(vals)
    for slot, value in zip((p.s, p.p, p.o), triple, strict=True):
        if isinstance(slot, Var):
            if out.setdefault(slot.name, value) != value:
                return None
        elif slot != value:
            return None
    return out


def values_block(cols: list[str], keys: list[tuple[Node, ...]]) -> str | None:
    """A VALUES block; rows binding a blank node are left out (they cannot be written in SPARQL)."""
    if not cols:
        return ""
    ok = [k for k in keys if not any(isinstance(t, ox.BlankNode) for t in k)]
    if not ok:
        return None
    body = " ".join("(" + " ".join(str(t) for t in k) + ")" for k in ok)
    return f"VALUES ({' '.join(f'?v_{c}' for c in cols)}) {{ {body} }}"


def reach(
    start: Node, edges: dict[Node, list[tuple[Node, ox.NamedNode]]], min_len: int
) -> dict[Node, list[tuple[Node, Node, ox.NamedNode]]]:
    """Shortest chain of recorded edges from ``start`` to every node it reaches (breadth first)."""
    out: dict[Node, list[tuple[Node, Node, ox.NamedNode]]] = {start: []} if min_len == 0 else {}
    seen = {start}
    level: list[tuple[Node, list[tuple[Node, Node, ox.NamedNode]]]] = [(start, [])]
    while level:
        nxt = []
        for node, chain in level:
            for b, g in edges.get(node, []):
                path = [*chain, (node, b, g)]
                if b not in out:
                    out[b] = path
                if b not in seen:
                    seen.add(b)
                    nxt.append((b, path))
        level = nxt
    return out


def dedupe(rows: list[Row]) -> list[Row]:
    """One row per distinct bindings (and origin), keeping the smallest proof (the proofs'
    text breaks ties, so the choice is stable; it is built only for ties)."""
    if len(rows) < 2:
        return rows
    best: dict[tuple[int, frozenset[tuple[str, Node]]], tuple[int, Row]] = {}
    for r in rows:
        key = (r.tag, frozenset(r.vals.items()))
        size = sum(s.size for _, s in r.sup)
        old = best.get(key)
        if old is None or size < old[0] or (size == old[0] and _text(r) < _text(old[1])):
            best[key] = (size, r)
    return [v[1] for v in best.values()]


def _text(r: Row) -> str:
    return ";".join(s.key for _, s in r.sup)
