"""What a reader may not see, and taking it out of a copy of the store.

:func:`hidden` reads the store for what one reader may not see: the sources visible only to
others, and the candidates that came from them or name an audience without the reader. It is a
value (:class:`Hidden`): readers who may not see the same things get the same view, whoever they
are, so they share one. :func:`redact` deletes it, and everything that follows from it (see
:mod:`workbench.access.views` for the list), from a copy, every step in pyoxigraph's engine.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyoxigraph as ox

from workbench.ids import (
    ENTITIES_GRAPH,
    ENTITY_PREFIX,
    META_GRAPH,
    QUEUE_GRAPH,
    SUMMARIES_GRAPH,
    USERS_GRAPH,
    agent_iri,
    id_from_iri,
)
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

    @property
    def key(self) -> str:
        """Names the view: readers who may not see the same things share one."""
        text = "\n".join([*map(str, self.sources), "", *map(str, self.candidates)])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def __bool__(self) -> bool:
        return bool(self.sources or self.candidates)


@dataclass(frozen=True)
class Queued:
    """A candidate as the access rule reads it: its source's id and the audience it names."""

    iri: ox.NamedNode
    source: str | None
    visible_to: frozenset[str]


def hidden_sources(store: Store, agents: frozenset[str]) -> list[ox.NamedNode]:
    """The sources that a reader with ``agents`` (their name and groups) may not see."""
    names = " ".join(str(agent_iri(a)) for a in sorted(agents))
    rows = store.select(
        PREFIXES + f"""SELECT DISTINCT ?s WHERE {{ GRAPH {META_GRAPH} {{ ?s wb:visibleTo ?any }}
        FILTER NOT EXISTS {{ GRAPH {META_GRAPH} {{ ?s wb:visibleTo ?a }} VALUES ?a {{ {names} }} }} }}"""
    )
    return [r["s"] for r in rows if isinstance(r["s"], ox.NamedNode)]


def queued(store: Store) -> list[Queued]:
    """Every candidate in the review queue, with what decides who may see it."""
    rows = store.select(PREFIXES + f"SELECT ?c ?payload WHERE {{ GRAPH {QUEUE_GRAPH} {{ ?c wb:payload ?payload }} }}")
    found = []
    for row in rows:
        iri, payload = row["c"], row["payload"]
        if not isinstance(iri, ox.NamedNode) or payload is None:
            continue
        try:
            record = json.loads(payload.value)
        except ValueError:
            continue  # not a candidate's record: nothing to judge it by
        if not isinstance(record, dict):
            continue
        source = record.get("source")
        source_id = source.get("id") if isinstance(source, dict) else source
        found.append(Queued(iri, source_id if isinstance(source_id, str) else None,
                            frozenset(record.get("visible_to") or ())))
    return found


def hidden(store: Store, agents: frozenset[str] | None, queue: Sequence[Queued]) -> Hidden:
    """What a reader with ``agents`` (None: one who sees every source) may not see in ``store``,
    whose review queue is ``queue``."""
    if agents is None:
        return Hidden()
    sources = sorted(hidden_sources(store, agents), key=str)
    ids = {id_from_iri(s) for s in sources}
    candidates = sorted((c.iri for c in queue if c.source in ids or (c.visible_to and not c.visible_to & agents)),
                        key=str)
    return Hidden(tuple(sources), tuple(candidates))


def _column(db: ox.Store, query: str, var: str = "e") -> list[ox.NamedNode]:
    """One variable's IRIs from a SELECT over ``db``."""
    result = db.query(query)
    assert isinstance(result, ox.QuerySolutions)
    return [s[var] for s in result if isinstance(s[var], ox.NamedNode)]


def _values(terms: Iterable[ox.NamedNode]) -> str:
    return " ".join(str(t) for t in terms)


def redact(db: ox.Store, hidden: Hidden) -> None:
    """Take out of ``db`` (a copy of the store) what ``hidden`` says, with what follows from it,
    and every token hash."""
    db.update(PREFIXES + f"DELETE WHERE {{ GRAPH {USERS_GRAPH} {{ ?u wb:tokenHash ?h }} }}")
    meta, ents, sources = META_GRAPH, ENTITIES_GRAPH, hidden.sources
    if sources:
        records = _column(
            db, PREFIXES + f"SELECT DISTINCT ?r WHERE {{ VALUES ?s {{ {_values(sources)} }} "
            f"GRAPH {meta} {{ ?r prov:wasDerivedFrom ?s }} }}", "r"
        )
        gone = _values([*records, *sources])
        mentioned = _column(
            db, f"""SELECT DISTINCT ?e WHERE {{ VALUES ?r {{ {_values(records)} }}
            {{ GRAPH ?r {{ {{ ?e ?p ?o }} UNION {{ ?o ?p ?e }} }} }} UNION {{ GRAPH {meta} {{ ?r ?p ?e }} }}
            FILTER(isIRI(?e) && STRSTARTS(STR(?e), "{ENTITY_PREFIX}")) }}"""
        )
        steps = [f"DROP SILENT GRAPH {r}" for r in records]
        steps += [
            f"DELETE {{ GRAPH {meta} {{ ?x ?p ?o }} }} WHERE {{ VALUES ?x {{ {gone} }} GRAPH {meta} {{ ?x ?p ?o }} }}",
            f"DELETE {{ GRAPH ?g {{ ?s ?p ?x }} }} WHERE {{ VALUES ?x {{ {gone} }} GRAPH ?g {{ ?s ?p ?x }} }}",
            f"""DELETE {{ GRAPH {SUMMARIES_GRAPH} {{ ?m ?p ?o }} }} WHERE {{ VALUES ?x {{ {gone} }}
                GRAPH {SUMMARIES_GRAPH} {{ ?m wb:summarizes ?x ; ?p ?o }} }}""",
        ]
        db.update(PREFIXES + " ;\n".join(steps))
        _drop_entities(db, mentioned)
    if hidden.candidates:
        drop = _values(hidden.candidates)
        db.update(
            f"""DELETE {{ GRAPH {QUEUE_GRAPH} {{ ?c ?p ?o }} }} WHERE {{ VALUES ?c {{ {drop} }}
            GRAPH {QUEUE_GRAPH} {{ ?c ?p ?o }} }} ;
            DELETE {{ GRAPH {QUEUE_GRAPH} {{ ?a ?q ?b }} }} WHERE {{ VALUES ?c {{ {drop} }}
            GRAPH {QUEUE_GRAPH} {{ ?a ?p ?c ; ?q ?b }} }}"""
        )
    # What nothing left refers to: import and proposal runs, then agents, graph by graph.
    db.update(
        PREFIXES + f"""DELETE {{ GRAPH ?g {{ ?a ?p ?o }} }} WHERE {{ VALUES ?g {{ {meta} {QUEUE_GRAPH} }}
        GRAPH ?g {{ ?a a ?kind ; ?p ?o }} VALUES ?kind {{ wb:Import wb:Proposal }}
        FILTER NOT EXISTS {{ GRAPH ?g {{ ?x ?q ?a }} }} }} ;
        DELETE {{ GRAPH ?g {{ ?a ?p ?o }} }} WHERE {{ VALUES ?g {{ {meta} {QUEUE_GRAPH} {ents} {SUMMARIES_GRAPH} }}
        GRAPH ?g {{ ?a ?p ?o }} FILTER(STRSTARTS(STR(?a), "urn:wb:agent:"))
        FILTER NOT EXISTS {{ GRAPH ?g {{ ?x ?q ?a }} }} }}"""
    )


def _drop_entities(db: ox.Store, mentioned: list[ox.NamedNode]) -> None:
    """Entities the hidden assertions mentioned that nothing visible mentions any more."""
    if not mentioned:
        return
    ents = ENTITIES_GRAPH
    orphans = _column(
        db, f"""SELECT ?e WHERE {{ VALUES ?e {{ {_values(mentioned)} }}
        FILTER NOT EXISTS {{ GRAPH ?g {{ {{ ?e ?p ?o }} UNION {{ ?o ?p ?e }} }} FILTER(?g != {ents}) }} }}"""
    )
    if orphans:
        db.update(
            f"""DELETE {{ GRAPH {ents} {{ ?a ?q ?b }} }} WHERE {{ VALUES ?e {{ {_values(orphans)} }}
            GRAPH {ents} {{ ?a ?p ?e ; ?q ?b }} }} ;
            DELETE {{ GRAPH {ents} {{ ?e ?p ?o }} }} WHERE {{ VALUES ?e {{ {_values(orphans)} }}
            GRAPH {ents} {{ ?e ?p ?o }} }}"""
        )
