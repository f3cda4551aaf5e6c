"""Where the review queue's things live: each candidate in a graph of its own, with its audience.

Since 2026-12-06 (docs/decisions/20261205-visibility-the-engine-enforces.md) a candidate is the
graph named by it (``urn:wb:candidate:ID``), which holds what was proposed (its payload, status,
span, guess basis), the run that proposed it and every decision on it (a copy of the act's
description in the graph of each candidate it decided, naming only that one), the agents they
name, and what decides who may see it:

- ``<c> wb:visibleTo`` the people and groups the proposed record names in ``visible_to`` (none:
  no restriction of its own), read like a source's own audience;
- ``<c> wb:restsOn`` the source it came from and the records it summarises (or was approved as,
  or was merged into), each seen by whoever sees that source or record.

A reader sees a candidate when they are in its own audience (if it has one) and see everything it
rests on: a conjunction the engine evaluates per graph (:func:`workbench.access.audience.withheld`),
with no copy and no shared queue graph. The queue graph (``urn:wb:graph:queue``) keeps only the
curators' short claim on the queue. :func:`migrate` moves a store of the earlier layout.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import pyoxigraph as ox

from workbench.ids import CANDIDATE_PREFIX, QUEUE_GRAPH, RECORD_PREFIX, agent_iri, id_from_iri, record_iri, source_iri
from workbench.records.acts import AGENT_KINDS
from workbench.store.base import Store
from workbench.vocab import PREFIXES, WB


def audience(node: ox.NamedNode, record: Mapping[str, Any]) -> list[ox.Quad]:
    """What decides who may see the candidate ``node`` proposing ``record``, in its graph."""
    out = [ox.Quad(node, WB.visibleTo, agent_iri(a), node) for a in record.get("visible_to") or ()
           if isinstance(a, str)]
    source = record.get("source")
    source_id = source.get("id") if isinstance(source, dict) else source
    if isinstance(source_id, str):
        out.append(ox.Quad(node, WB.restsOn, source_iri(source_id), node))
    of = record.get("of")
    if isinstance(of, list):  # a summary: the records it summarises
        out += [ox.Quad(node, WB.restsOn, record_iri(i), node) for i in of if isinstance(i, str)]
    return out


def beside(quads: Iterable[ox.Quad], candidates: Iterable[ox.NamedNode]) -> list[ox.Quad]:
    """``quads`` (an act's description, with its agents) copied into each candidate's graph."""
    quads = list(quads)
    return [ox.Quad(q.subject, q.predicate, q.object, c) for c in candidates for q in quads]


def restrictions(store: Store, node: ox.NamedNode) -> tuple[tuple[str, ...], tuple[ox.NamedNode, ...]]:
    """A candidate's own audience (names) and what it rests on."""
    rows = store.select(PREFIXES + f"""SELECT ?who ?on WHERE {{ GRAPH {node} {{
        {{ {node} wb:visibleTo ?who }} UNION {{ {node} wb:restsOn ?on }} }} }}""")
    return (tuple(sorted(id_from_iri(r["who"]) for r in rows if isinstance(r["who"], ox.NamedNode))),
            tuple(sorted((r["on"] for r in rows if isinstance(r["on"], ox.NamedNode)), key=str)))


def inherited(store: Store, node: ox.NamedNode, target: ox.NamedNode) -> list[ox.Quad]:
    """What the candidate ``node``, merged into ``target`` (a candidate or a record), gains so that
    it is seen only by whoever sees both: it rests on the target (a candidate's own audience, a
    record's source's) and on whatever the target rests on."""
    insert = [ox.Quad(node, WB.restsOn, target, node)]
    if target.value.startswith(CANDIDATE_PREFIX):
        insert += [ox.Quad(node, WB.restsOn, x, node) for x in restrictions(store, target)[1]]
    return insert


# ---------------------------------------------------------------------- the earlier layout


# a store of the earlier layout: candidates in the shared queue graph (a pattern of records.layout's one ASK)
OUTDATED = f"GRAPH {QUEUE_GRAPH} {{ ?c a wb:Candidate }}"


def migrate(store: Store) -> None:
    """Candidates out of the shared queue graph into a graph each, with the runs and decisions on
    them (an act that decided several is described beside each, naming only it) and their
    agents, and their audience read from what they propose; the queue graph is emptied last
    (but the claim), so a move cut short is finished by the next."""
    q = QUEUE_GRAPH
    store.update(PREFIXES + f"""INSERT {{ GRAPH ?c {{ ?c ?p ?o }} }} WHERE {{
        GRAPH {q} {{ ?c a wb:Candidate ; ?p ?o }} }}""")
    acts = f"GRAPH {q} {{ ?c a wb:Candidate . {{ ?a prov:used ?c }} UNION {{ ?c prov:wasGeneratedBy ?a }} }}"
    store.update(PREFIXES + f"""INSERT {{ GRAPH ?c {{ ?a ?p ?o }} }} WHERE {{ {acts}
        GRAPH {q} {{ ?a ?p ?o }} FILTER(?p != prov:used || !isIRI(?o) || ?o = ?c) }}""")
    store.update(PREFIXES + f"""INSERT {{ GRAPH ?c {{ ?w ?p ?o }} }} WHERE {{ {acts}
        GRAPH {q} {{ ?a prov:wasAssociatedWith|wb:extractedBy ?w . ?w a ?kind ; ?p ?o }}
        VALUES ?kind {{ {' '.join(str(k) for k in AGENT_KINDS)} }} }}""")
    # (a candidate whose content an erasure took has no payload: it rests on the erased record's tombstone)
    rows = store.select(PREFIXES + f"""SELECT ?c ?payload ?into WHERE {{ GRAPH {q} {{ ?c a wb:Candidate
        OPTIONAL {{ ?c wb:payload ?payload }} OPTIONAL {{ ?c wb:approvedAs|wb:mergedInto ?into }} }} }}""")
    insert = []
    for r in rows:
        c = r["c"]
        try:
            record = json.loads(r["payload"].value) if r["payload"] else {}
        except ValueError:
            record = {}
        insert += audience(c, record if isinstance(record, dict) else {})  # type: ignore[arg-type]
        into = r["into"]
        if isinstance(into, ox.NamedNode) and into.value.startswith(RECORD_PREFIX):
            insert.append(ox.Quad(c, WB.restsOn, into, c))  # type: ignore[arg-type]
    if insert:
        store.apply(insert=insert)
    rows = store.select(PREFIXES + f"""SELECT ?c ?into WHERE {{ GRAPH {q} {{ ?c a wb:Candidate ; wb:mergedInto ?into }}
        FILTER(STRSTARTS(STR(?into), "{CANDIDATE_PREFIX}")) }}""")
    for _ in rows:  # after every candidate's own audience is in place; a chain, one link a pass
        for r in rows:
            store.apply(insert=inherited(store, r["c"], r["into"]))  # type: ignore[arg-type]
    store.update(PREFIXES + """INSERT { GRAPH ?c { ?c wb:restsOn ?t } } WHERE { GRAPH ?c { ?c a wb:Candidate ;
        wb:restsOn ?r } GRAPH ?t { ?r a wb:Tombstone } }""")  # as an erasure now leaves it
    store.update(PREFIXES + f"""DELETE {{ GRAPH {q} {{ ?s ?p ?o }} }} WHERE {{ GRAPH {q} {{ ?s ?p ?o }}
        FILTER(?p != wb:claim) }}""")
