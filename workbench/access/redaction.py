"""What a reader may not see, and taking it out of a copy of the store.

:func:`hidden` reads the store for what one reader may not see: the sources visible only to
others and the records taken from them, the candidates that came from them, rest on them or name
an audience without the reader, and the tombstones of records erased for others. It is a value
(:class:`Hidden`): readers who may not see the same things get the same view, whoever they are,
so they share one. :func:`redact` deletes it, and everything that follows from it (see
:mod:`workbench.access.views` for the list), from a copy, every step in pyoxigraph's engine.

What rests on something hidden is hidden with it (a candidate too: see :class:`Queued`): a
summary of a hidden record, an act on one (a supersession, a retraction, with its reason), the
names of an entity an import made that only hidden records name (described only beside them),
the link by which a hidden record supersedes a visible one (the visible one then reads as
active, as in a store that never held the hidden one; stores written before 2026-12-06 also
stored that status on the visible record, which a view restores).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyoxigraph as ox

from workbench.ids import (
    ENTITIES_GRAPH,
    ENTITY_PREFIX,
    META_GRAPH,
    STORE_NODE,
    TOKENS_GRAPH,
    USERS_GRAPH,
    agent_iri,
    id_from_iri,
)
from workbench.records.acts import AGENT_KINDS
from workbench.store.base import Store
from workbench.vocab import PREFIXES


@dataclass(frozen=True)
class Hidden:
    """What one reader may not see in the store as it is now (both sorted, for :attr:`key`).
    Nothing hidden is what an admin sees, and anyone else who may see every source.

    >>> Hidden().key == Hidden((), ()).key and not Hidden()
    True
    """

    sources: tuple[ox.NamedNode, ...] = ()
    candidates: tuple[ox.NamedNode, ...] = ()
    records: tuple[ox.NamedNode, ...] = ()  # taken from the hidden sources
    tombstones: tuple[ox.NamedNode, ...] = ()  # of records erased for an audience without the reader

    @functools.cached_property  # asked on every read; hashed once
    def key(self) -> str:
        """Names the view: readers who may not see the same things share one."""
        text = "\n".join([*map(str, self.sources), "", *map(str, self.candidates), "", *map(str, self.tombstones)])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def __bool__(self) -> bool:
        return bool(self.sources or self.candidates or self.tombstones)


@dataclass(frozen=True)
class Queued:
    """A candidate as the access rule reads it, in its graph (:mod:`workbench.records.candidates`):
    the audience it names of its own, and the sources, records, candidates and tombstones it
    rests on (its reader must see each)."""

    iri: ox.NamedNode
    visible_to: frozenset[str] = frozenset()
    rests_on: frozenset[ox.NamedNode] = frozenset()


def hidden_sources(store: Store, agents: frozenset[str]) -> list[ox.NamedNode]:
    """The sources that a reader with ``agents`` (their name and groups) may not see."""
    names = " ".join(str(agent_iri(a)) for a in sorted(agents))
    rows = store.select(
        PREFIXES + f"""SELECT DISTINCT ?s WHERE {{ GRAPH ?s {{ ?s a wb:Source ; wb:visibleTo ?any }}
        FILTER NOT EXISTS {{ GRAPH ?s {{ ?s wb:visibleTo ?a }} VALUES ?a {{ {names} }} }} }}"""
    )
    return [r["s"] for r in rows if isinstance(r["s"], ox.NamedNode)]


def queued(store: Store) -> list[Queued]:
    """Every candidate in the review queue, with what decides who may see it."""
    rows = store.select(PREFIXES + """SELECT ?c ?who ?on WHERE { GRAPH ?c { ?c a wb:Candidate
        OPTIONAL { { ?c wb:visibleTo ?who } UNION { ?c wb:restsOn ?on } } } }""")
    who: dict[ox.NamedNode, set[str]] = {}
    on: dict[ox.NamedNode, set[ox.NamedNode]] = {}
    for row in rows:
        c = row["c"]
        if isinstance(c, ox.NamedNode):
            who.setdefault(c, set()), on.setdefault(c, set())
            if isinstance(row["who"], ox.NamedNode):
                who[c].add(id_from_iri(row["who"]))
            if isinstance(row["on"], ox.NamedNode):
                on[c].add(row["on"])
    return [Queued(c, frozenset(who[c]), frozenset(on[c])) for c in sorted(who, key=str)]


def _agents(agents: frozenset[str]) -> str:
    return " ".join(str(agent_iri(a)) for a in sorted(agents))


def hidden_tombstones(store: Store, agents: frozenset[str]) -> list[ox.NamedNode]:
    """The graphs of tombstones of records erased for an audience that leaves out a reader with ``agents``."""
    rows = store.select(
        PREFIXES + f"""SELECT DISTINCT ?t WHERE {{ GRAPH ?t {{ ?r a wb:Tombstone . ?t wb:visibleTo ?any }}
        FILTER NOT EXISTS {{ GRAPH ?t {{ ?t wb:visibleTo ?a }} VALUES ?a {{ {_agents(agents)} }} }} }}"""
    )
    return [r["t"] for r in rows if isinstance(r["t"], ox.NamedNode)]


def records_of(store: Store, sources: Sequence[ox.NamedNode]) -> list[ox.NamedNode]:
    """The records taken from ``sources``."""
    if not sources:
        return []
    rows = store.select(
        PREFIXES + f"SELECT DISTINCT ?r WHERE {{ VALUES ?s {{ {_values(sources)} }} "
        "GRAPH ?s { ?r prov:wasDerivedFrom ?s } }"
    )
    return [r["r"] for r in rows if isinstance(r["r"], ox.NamedNode)]


def hidden(store: Store, agents: frozenset[str] | None, queue: Sequence[Queued]) -> Hidden:
    """What a reader with ``agents`` (None: one who sees every source) may not see in ``store``,
    whose review queue is ``queue``."""
    if agents is None:
        return Hidden()
    sources = sorted(hidden_sources(store, agents), key=str)
    records = sorted(records_of(store, sources), key=str)
    tombstones = sorted(hidden_tombstones(store, agents), key=str)
    # a candidate: outside its own audience, or resting on something hidden (a candidate rests on
    # the one it was merged into, whose own audience then counts, and on what that rests on)
    outside = {c.iri for c in queue if c.visible_to and not c.visible_to & agents}
    gone = {*sources, *records, *tombstones, *outside}
    candidates = sorted((c.iri for c in queue if c.iri in outside or c.rests_on & gone), key=str)
    return Hidden(tuple(sources), tuple(candidates), tuple(records), tuple(tombstones))


def _column(db: ox.Store, query: str, var: str = "e") -> list[ox.NamedNode]:
    """One variable's IRIs from a SELECT over ``db``."""
    result = db.query(query)
    assert isinstance(result, ox.QuerySolutions)
    return [s[var] for s in result if isinstance(s[var], ox.NamedNode)]


def _values(terms: Iterable[ox.NamedNode]) -> str:
    return " ".join(str(t) for t in terms)


def _listed(terms: Iterable[ox.NamedNode]) -> str:
    """Terms for ``IN (...)``."""
    return ", ".join(str(t) for t in terms)


def redact(db: ox.Store, hidden: Hidden) -> None:
    """Take out of ``db`` (a copy of the store) what ``hidden`` says, with what follows from it,
    every token hash, and give the copy a revision of its own."""
    db.update(PREFIXES + f"DROP SILENT GRAPH {TOKENS_GRAPH} ; "
              f"DELETE WHERE {{ GRAPH {USERS_GRAPH} {{ ?u wb:tokenHash ?h }} }}")  # (a store not yet moved)
    meta, ents, sources, records = META_GRAPH, ENTITIES_GRAPH, hidden.sources, hidden.records
    if sources:
        gone = _values([*records, *sources])
        named = _named_only_in(db, sources)
        mentioned = _column(
            db, f"""SELECT DISTINCT ?e WHERE {{ VALUES ?r {{ {_values(records)} }}
            {{ GRAPH ?r {{ {{ ?e ?p ?o }} UNION {{ ?o ?p ?e }} }} }} UNION {{ GRAPH ?m {{ ?r ?p ?e }} }}
            FILTER(isIRI(?e) && STRSTARTS(STR(?e), "{ENTITY_PREFIX}")) }}"""
        ) if records else []
        steps = [
            # What rests on a hidden record first, while the links that tell are still there:
            # the graphs about it (an act that used it: a supersession, a retraction, with its
            # reason; a summary of it); the status it gave a visible record it superseded.
            f"""DELETE {{ GRAPH ?a {{ ?s ?p ?o }} }} WHERE {{ VALUES ?x {{ {gone} }}
                GRAPH ?a {{ ?a prov:used|wb:summarizes ?x }} GRAPH ?a {{ ?s ?p ?o }} }}""",
            f"""DELETE {{ GRAPH ?rm {{ ?r wb:status wb:Superseded }} }}
                INSERT {{ GRAPH ?rm {{ ?r wb:status wb:Active }} }}
                WHERE {{ VALUES ?x {{ {gone} }} GRAPH ?xm {{ ?x wb:supersedes ?r }}
                GRAPH ?rm {{ ?r wb:status wb:Superseded }}
                FILTER NOT EXISTS {{ GRAPH ?ym {{ ?y wb:supersedes ?r }}
                FILTER(?y NOT IN ({_listed([*records, *sources])})) }} }}""",
            # then the hidden records and sources, with the records' metadata (in their sources' graphs)
            *(f"DROP SILENT GRAPH {g}" for g in [*records, *sources]),
            f"DELETE {{ GRAPH {meta} {{ ?x ?p ?o }} }} WHERE {{ VALUES ?x {{ {gone} }} GRAPH {meta} {{ ?x ?p ?o }} }}",
            f"DELETE {{ GRAPH ?g {{ ?s ?p ?x }} }} WHERE {{ VALUES ?x {{ {gone} }} GRAPH ?g {{ ?s ?p ?x }} }}",
        ]
        db.update(PREFIXES + " ;\n".join(steps))
        _drop_entities(db, sorted(set(named) | set(_orphans(db, mentioned)), key=str))
    if hidden.candidates or hidden.tombstones:  # graphs of their own, with the acts on them
        db.update(" ;\n".join(f"DROP SILENT GRAPH {g}" for g in [*hidden.candidates, *hidden.tombstones]))
    # What nothing left refers to: import and proposal runs (records refer to them from their
    # sources' graphs), then agents, graph by graph (each graph describes the agents it names).
    db.update(
        PREFIXES + f"""DELETE {{ GRAPH ?g {{ ?a ?p ?o }} }} WHERE {{ VALUES ?g {{ {meta} }}
        GRAPH ?g {{ ?a a ?kind ; ?p ?o }} VALUES ?kind {{ wb:Import }}
        FILTER NOT EXISTS {{ GRAPH ?any {{ ?x ?q ?a }} }} }} ;
        DELETE {{ GRAPH ?g {{ ?a ?p ?o }} }} WHERE {{
        VALUES ?g {{ {meta} {ents} }}
        VALUES ?kind {{ {_values(AGENT_KINDS)} }}
        GRAPH ?g {{ ?a a ?kind }} FILTER NOT EXISTS {{ GRAPH ?g {{ ?x ?q ?a }} }}
        GRAPH ?g {{ ?a ?p ?o }} }}"""
    )
    _own_revision(db)


def _named_only_in(db: ox.Store, graphs: Sequence[ox.NamedNode]) -> list[ox.NamedNode]:
    """Entities an import made that only restricted records name, all of them in ``graphs`` (the
    hidden sources' graphs): described nowhere else (see :mod:`workbench.names.given`)."""
    if not graphs:
        return []
    return _column(
        db, PREFIXES + f"""SELECT DISTINCT ?e WHERE {{ VALUES ?g {{ {_values(graphs)} }} GRAPH ?g {{ ?e a wb:Entity }}
        FILTER NOT EXISTS {{ GRAPH ?h {{ ?e a wb:Entity }} FILTER(?h NOT IN ({_listed(graphs)})) }} }}"""
    )


def _orphans(db: ox.Store, mentioned: list[ox.NamedNode]) -> list[ox.NamedNode]:
    """Of the entities hidden records mention, those with no naming record (``wb:namedIn``, made
    before it was kept) that nothing visible mentions any more."""
    if not mentioned:
        return []
    ents = ENTITIES_GRAPH
    return _column(
        db, PREFIXES + f"""SELECT ?e WHERE {{ VALUES ?e {{ {_values(mentioned)} }}
        FILTER NOT EXISTS {{ GRAPH {ents} {{ ?e wb:namedIn ?r }} }}
        FILTER NOT EXISTS {{ GRAPH ?g {{ {{ ?e ?p ?o }} UNION {{ ?o ?p ?e }} }} FILTER(?g != {ents}) }} }}"""
    )


def _drop_entities(db: ox.Store, hidden: list[ox.NamedNode]) -> None:
    """An entity's registration (names, keys, naming records) and the acts on it (aliases,
    merges, splits), and the links to it in the entities graph (a visible entity merged into it
    keeps its own names)."""
    if not hidden:
        return
    ents, values = ENTITIES_GRAPH, _values(hidden)
    db.update(
        PREFIXES + f"""DELETE {{ GRAPH {ents} {{ ?a ?q ?b }} }} WHERE {{ VALUES ?e {{ {values} }}
        GRAPH {ents} {{ ?a ?p ?e ; a ?kind ; ?q ?b }} VALUES ?kind {{ wb:AliasRegistration wb:Merge wb:Split }} }} ;
        DELETE {{ GRAPH {ents} {{ ?e ?p ?o }} }} WHERE {{ VALUES ?e {{ {values} }} GRAPH {ents} {{ ?e ?p ?o }} }} ;
        DELETE {{ GRAPH {ents} {{ ?s ?p ?e }} }} WHERE {{ VALUES ?e {{ {values} }} GRAPH {ents} {{ ?s ?p ?e }} }}"""
    )


# Workbench's graphs of one thing each, found by what each says of itself (an index lookup, not a
# scan of every graph's name: 17.5 s at 1.27M relations, 2.1M quads), counted by kind
OWN_GRAPHS = """{ VALUES ?g { wb:Source wb:Summary wb:Candidate } GRAPH ?h { ?h a ?g } }
    UNION { GRAPH ?h { ?t a wb:Tombstone } BIND(wb:Tombstone AS ?g) }"""


def _own_revision(db: ox.Store) -> None:
    """A view's revision token moves only when what it shows moves: a digest of how much each of
    Workbench's own graphs holds, instead of the store's token, which every write moves (even one
    the reader may not see)."""
    counts = db.query(
        PREFIXES + f"""SELECT ?g (COUNT(*) AS ?n) WHERE {{
        {{ VALUES ?g {{ {META_GRAPH} {ENTITIES_GRAPH} }}
           GRAPH ?g {{ ?s ?p ?o }} FILTER(?s != {STORE_NODE}) }}
        UNION {{ {{ {OWN_GRAPHS} }} GRAPH ?h {{ ?s ?p ?o }} }}
        }} GROUP BY ?g ORDER BY ?g"""
    )
    assert isinstance(counts, ox.QuerySolutions)
    token = hashlib.sha256(" ".join(f"{r['g']}={r['n'].value}" for r in counts).encode()).hexdigest()[:16]
    db.update(
        PREFIXES + f"DELETE WHERE {{ GRAPH {META_GRAPH} {{ {STORE_NODE} wb:revision ?r }} }} ; "
        f"INSERT DATA {{ GRAPH {META_GRAPH} {{ {STORE_NODE} wb:revision {ox.Literal(token)} }} }}"
    )
