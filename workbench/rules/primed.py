"""A question's first lookups, sent with its version check before its names are bound.

Over a network a question's first round trip is the version check, with the query that binds
its names riding along (:meth:`Store.prefetch`); the engine's first lookups (the goal's recorded
matches and each concluding rule's first premise: :meth:`Engine.first_lookups`) could follow
only once the names were bound, a round trip of their own. Here they are written with each
name's candidate entities in place of the entity (a subquery on the name's key), so they ride
in that same round trip; once the names are bound, the rows for the bound entities go into the
engine's lookup cache as if it had fetched them (:meth:`Primed.into`). Nothing is assumed: a
name bound to an entity that was not among its candidates (a merge followed past one level) is
not primed, and the engine asks as it always did. The caller's own patterns (what the question
needs beside the goal) ride too, written with :data:`SUBJECT` and :data:`OBJECT`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pyoxigraph as ox

from workbench.names.entities import literal, registered
from workbench.rules.engine import Engine
from workbench.rules.reads import Lookup
from workbench.store import Store
from workbench.store.base import Row
from workbench.values.rules import Premise, RuleSet, Var
from workbench.vocab import PREFIXES

SUBJECT = ox.NamedNode("urn:wb:primed:subject")  # stand-ins for the entities names will bind
OBJECT = ox.NamedNode("urn:wb:primed:object")
_VAR = {SUBJECT: "wb_s", OBJECT: "wb_o"}
_CANDIDATES = -1000  # ?lookup of the rows listing the names' candidates


def possible(store: Store) -> bool:
    """Whether ``store`` is a server worth sending first reads to: one with round trips to save
    that evaluates LATERAL (see :class:`Primed`)."""
    takes_lateral = getattr(store, "takes_lateral", None)
    return store.capabilities.round_trips and takes_lateral is not None and bool(takes_lateral())


class Template:
    """What a question's first reads are for one relation, with or without an object, under one
    rule set: the same for every such question but its names (built once: :meth:`Primed.of`).

    The names' candidates come first, then every branch in one LATERAL group, evaluated once per
    candidate: a plain join makes Oxigraph evaluate the branches on their own first (the words of
    every thing in the store: 70 ms at 100k relations, against 0.13 ms), and the candidates
    written into each branch cost 1.9 ms a question against 0.6 (docs/benchmarks.md)."""

    def __init__(self, store: Store, rules: RuleSet, relation: ox.NamedNode, with_object: bool,
                 extras: dict[str, list[str]]) -> None:
        self.rules = rules
        engine = Engine(store, rules)
        self.wanted = engine.first_lookups(SUBJECT, relation, OBJECT if with_object else None)
        branches = [f"{engine.reads.pattern(_ground(lookup), 'g0')} BIND({i} AS ?lookup)"
                    for i, lookup in enumerate(self.wanted)]
        self.extras = [(name, branch) for name, some in extras.items() for branch in some]
        branches += [f"{branch} BIND({-1 - k} AS ?lookup)" for k, (_, branch) in enumerate(self.extras)]
        branches.append(f"BIND({_CANDIDATES} AS ?lookup)")
        union = " UNION ".join(f"{{ {b} }}" for b in branches)
        for stand_in, var in _VAR.items():
            union = union.replace(str(stand_in), "?" + var)
        # only the branches' own columns, once each (an entity named twice gives its rows twice)
        names = sorted(set(re.findall(r"\?([A-Za-z_]\w*)", union)) | {"wb_s", *(["wb_o"] if with_object else [])})
        self.head = "SELECT DISTINCT " + " ".join("?" + v for v in names)
        self.union = union


class Primed:
    """The first reads of one question: its :class:`Template` with its names' keys."""

    _templates: dict[tuple[str, bool, tuple[str, ...]], Template] = {}

    def __init__(self, template: Template, relation: ox.NamedNode, subject: str, obj: str | None) -> None:
        self.relation = relation
        self.wanted, self._extras = template.wanted, template.extras
        self.keys = {SUBJECT: subject, **({OBJECT: obj} if obj is not None else {})}
        names = " ".join(self._candidates(s) for s in self.keys)
        self.query = PREFIXES + f"{template.head} WHERE {{ {names} LATERAL {{ {template.union} }} }}"
        self._rows: list[Row] | None = None
        self._bound: dict[str, ox.NamedNode] = {}

    @classmethod
    def of(cls, store: Store, rules: RuleSet, relation: ox.NamedNode, subject: str, obj: str | None,
           extras: Callable[[], dict[str, list[str]]], kind: tuple[str, ...] = ()) -> Primed:
        """The first reads of ``subject relation (object)`` (name keys) under ``rules``, and the
        caller's ``extras`` (union branches written with the stand-ins; ``kind`` names them)."""
        key = (relation.value, obj is not None, kind)
        template = cls._templates.get(key)
        if template is None or template.rules is not rules:
            if len(cls._templates) > 1000:
                cls._templates.clear()
            template = cls._templates[key] = Template(store, rules, relation, obj is not None, extras())
        return cls(template, relation, subject, obj)

    def _candidates(self, stand_in: ox.NamedNode) -> str:
        """The entities a name's key may bind (as ``entities.names_query`` finds them, and what
        each was merged into, a level): a superset of the one it binds."""
        v = "?" + _VAR[stand_in]
        k, e, g = (f"{v}_{x}" for x in "keg")

        def named(entity: str) -> str:
            return (f"{{ GRAPH {g} {{ {entity} wb:nameKey {k} }} }} "
                    f"UNION {{ GRAPH {g} {{ {entity} skos:prefLabel {k} }} }} "
                    f"UNION {{ GRAPH {g} {{ {entity} skos:altLabel {k} }} }}")
        return (f"VALUES {k} {{ {literal(self.keys[stand_in])} }} {{ {named(v)} }} "
                f"UNION {{ {named(e)} GRAPH {v}_m {{ {e} owl:sameAs {v} }} {registered(v + '_m')} }}")

    def bind(self, store: Store, subject: ox.NamedNode, obj: ox.NamedNode | None) -> bool:
        """Take this query's rows (if it rode with the version check) for the entities the names
        bound; whether they are usable: sent, and each entity among its name's candidates."""
        rows = store.prefetched(self.query)
        if rows is None:
            return False
        bound = {SUBJECT: subject, **({OBJECT: obj} if obj is not None else {})}
        if set(bound) != set(self.keys):
            return False
        pairs = {tuple(r[_VAR[s]] for s in self.keys) for r in rows if _lookup(r) == _CANDIDATES}
        if tuple(bound[s] for s in self.keys) not in pairs:
            return False
        self._bound = {_VAR[s]: e for s, e in bound.items()}
        self._rows = [r for r in rows if all(r.get(v) in (None, e) for v, e in self._bound.items())]
        return True

    def into(self, engine: Engine) -> None:
        """The first lookups' rows into ``engine``'s lookup cache, for the bound entities."""
        assert self._rows is not None, "bind() first"
        bound = {SUBJECT: self._bound.get("wb_s"), OBJECT: self._bound.get("wb_o")}

        def actual(t: Any) -> Any:
            return (bound.get(t) or t) if isinstance(t, ox.NamedNode) else t

        wanted: list[Lookup] = [(Premise(actual(p.s), p.p, actual(p.o), p.index), cols,
                                 [tuple(actual(t) for t in key) for key in keys]) for p, cols, keys in self.wanted]
        rows = []
        for r in self._rows:
            i = _lookup(r)
            if 0 <= i < len(wanted):
                _, cols, keys = wanted[i]
                # the bound columns were written into the pattern (_ground): their values are the key's
                rows.append({**r, **{f"v_{c}": t for c, t in zip(cols, keys[0], strict=True)}})
        engine.reads.take(wanted, rows)

    def extra(self, name: str) -> list[Row]:
        """The rows of the caller's branches ``name``, for the bound entities."""
        assert self._rows is not None, "bind() first"
        mine = {-1 - k for k, (n, _) in enumerate(self._extras) if n == name}
        return [r for r in self._rows if _lookup(r) in mine]


def _lookup(row: Row) -> int:
    found = row.get("lookup")
    return int(found.value) if found is not None else _CANDIDATES + 1


def _ground(lookup: Lookup) -> Premise:
    """A first lookup as one premise: its bound columns written in (one key: the goal's)."""
    p, cols, keys = lookup
    assert len(keys) == 1, "a question's first lookups have one key each"
    vals = dict(zip(cols, keys[0], strict=True))

    def one(t: Any) -> Any:
        return vals.get(t.name, t) if isinstance(t, Var) else t
    return Premise(one(p.s), one(p.p), one(p.o), p.index)
