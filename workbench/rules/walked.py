"""Recorded facts a question's reads keep for the next question: closure edges (each node's
edges along a predicate, with the record of each edge) and what a walk fetched ahead about the
nodes (:class:`Walked`), what a walk from a node reaches (:class:`Reached`), and a lone lookup's
matches (:class:`Looked`), kept for one readable store while its version stays.

A question's walks read the same kinds again and again (a thing's kind, the kinds above it),
and what the store records about them changes only with a write, which moves the version. So a
walk takes a node's edges from here when the store's version is the one they were read at, and
asks only for the rest. Only recorded facts are kept, never a conclusion: rules still derive at
question time. Kept per readable store (the base store or one reader's view), so a reader never
walks an edge read from a store holding what they may not see; as-of reads are not kept.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence

import pyoxigraph as ox

from workbench.rules.proof import Triple
from workbench.store import Store
from workbench.store.caches import Kept, PerStore
from workbench.values.rules import Node

Edges = dict[Node, list[tuple[Node, ox.NamedNode]]]
# What a walk fetched about a node: the predicates asked for, and its facts with each (by
# predicate, each group in a fixed order); never changed in place.
Held = tuple[Triple, ox.NamedNode]  # a fact with its record (proof.Fact is the dataclass)
About = tuple[frozenset[str], Mapping[ox.NamedNode, Sequence[Held]]]


def by_predicate(facts: Iterable[Held]) -> dict[ox.NamedNode, tuple[Held, ...]]:
    """Facts (each with its record) grouped by predicate, each group sorted: what :data:`About` holds."""
    groups: dict[ox.NamedNode, list[Held]] = {}
    for fact in sorted(facts, key=str):
        groups.setdefault(fact[0][1], []).append(fact)
    return {p: tuple(found) for p, found in groups.items()}


class Walked(PerStore):
    """See the module. Found with :meth:`of`; thread-safe (a server answers in several threads):
    edges are handed out copied (a walk adds to them), what is known about a node as kept (no
    walk changes it); nothing kept is changed in place."""

    LIMIT = 50_000  # nodes kept at most; past it the cache starts again

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self._version: str | None = None
        self._edges: dict[tuple[str, bool], dict[Node, tuple[tuple[Node, ox.NamedNode], ...]]] = {}
        self._about: dict[Node, About] = {}
        self._size = 0
        self._lock = threading.Lock()

    def get(self, version: str, key: tuple[str, bool], nodes: Iterable[Node] | Mapping[Node, int],
            ahead: frozenset[str], *, limit: int | None = None) -> tuple[Edges, dict[Node, About]]:
        """The edges of those ``nodes`` read at ``version`` (and, when a walk fetches ``ahead``,
        only nodes whose facts with those predicates were fetched too), with those facts. With
        ``limit``, ``nodes`` maps each to its depth in the walk, and the nodes its kept edges
        reach are taken too while their depth stays under ``limit`` (a walk's levels at once)."""
        edges: Edges = {}
        about: dict[Node, About] = {}
        level = list(nodes.items()) if isinstance(nodes, Mapping) else [(n, 0) for n in nodes]
        with self._lock:
            if version != self._version:
                return edges, about
            table = self._edges.get(key, {})
            while level:
                further = []
                for node, depth in level:
                    found = None if node in edges else table.get(node)
                    if found is None:
                        continue
                    if ahead:
                        facts = self._about.get(node)
                        if facts is None or not ahead <= facts[0]:
                            continue
                        about[node] = facts  # a tuple: handed out as kept
                    edges[node] = list(found)
                    if limit is not None and depth + 1 < limit:
                        further += [(b, depth + 1) for b, _ in found]
                level = further
        return edges, about

    def put(self, version: str, key: tuple[str, bool], edges: Edges, about: dict[Node, About]) -> None:
        """Keep what a whole walk read at ``version``: each node in ``edges`` fully expanded."""
        with self._lock:
            if version != self._version:
                self._version, self._edges, self._about, self._size = version, {}, {}, 0
            if self._size + len(edges) > self.LIMIT:
                self._edges, self._about, self._size = {}, {}, 0
            table = self._edges.setdefault(key, {})
            for node, found in edges.items():
                if node not in table:
                    self._size += 1
                table[node] = tuple(found)
            for node, (preds, facts) in about.items():
                # what other walks fetched about the node, with other predicates, stays beside it
                had = self._about.get(node)
                if had is not None and not had[0] <= preds:
                    preds, facts = had[0] | preds, by_predicate({f for group in (had[1], facts)
                                                                 for found in group.values() for f in found})
                self._about[node] = (preds, facts)


class Looked(Kept):
    """Lone lookups' matches (see :meth:`Reads.keep`) for one store while its version stays: a
    lookup's matches are recorded facts, which only a write changes, and it moves the version.
    A tuple each, never changed; a question's own cache takes them as they are."""

    LIMIT = 50_000


class Reached(Kept):
    """What a walk from one start reaches (see :meth:`Reads.walk`), for one store while its
    version stays: recorded edges only, which only a write changes. Never changed."""

    LIMIT = 20_000
