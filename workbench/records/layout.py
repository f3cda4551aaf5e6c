"""Bringing a store written in an earlier layout to the current one.

Since 2026-12-05 a source's description (its id, who said it, when, its text, its locator and
who may see it, with the agents it names) and the metadata of every record taken from it live in
the source's own graph, ``GRAPH <urn:wb:source:ID>``, not in the shared metadata graph: what a
reader may not see of a source is then one named graph, which an engine can withhold
(docs/decisions/20261205-visibility-the-engine-enforces.md). A store or an export from before
keeps them in ``urn:wb:graph:meta``; :func:`migrate` moves them, and is run when a Workbench
opens a store and after a restore.

Since 2026-12-06 a summary is a graph of its own (named by the summary) and so is an erased
record's tombstone (``urn:wb:tombstone:ID``, its audience the graph's ``wb:visibleTo``), where
they were in the shared ``urn:wb:graph:summaries`` and ``urn:wb:graph:audit`` (the audience then
``wb:erasedFor``); and an import run is described in the graph of each source it took records
from, where it was in the metadata graph; the names an import gave are beside the records that
gave them (``wb:namedIn`` in each record's source's graph, and an entity's description there too
when only restricted records name it), and so are a person's aliases and merges of such an
entity (:mod:`workbench.names.given`), where all of it was in the entities graph;
:func:`migrate` moves those too. A record corrected by a narrower one (a private correction
of a public record) keeps its own status active since then (the correction's link supersedes it
for whoever sees it: ``records.unsuperseded``); a store from before had stored "superseded" on
it, which :func:`migrate` sets back. Candidates have a graph each since 2026-12-06 too, where they
were in the shared queue graph (:mod:`workbench.records.candidates`), and API token hashes are in a
graph of their own (``urn:wb:graph:tokens``), where they were in the users graph.
"""

from __future__ import annotations

import pyoxigraph as ox

from workbench.access import audience
from workbench.errors import Conflict
from workbench.ids import (
    AUDIT_GRAPH,
    ENTITIES_GRAPH,
    ENTITY_PREFIX,
    META_GRAPH,
    RECORD_PREFIX,
    SOURCE_PREFIX,
    STORE_NODE,
    SUMMARIES_GRAPH,
    TOKENS_GRAPH,
    TOMBSTONE_PREFIX,
    USERS_GRAPH,
)
from workbench.names import given
from workbench.names.entities import DESCRIPTION, places
from workbench.records import candidates as graphs
from workbench.records.acts import AGENT_KINDS
from workbench.store.base import Store
from workbench.vocab import PREFIXES, WB

_MOVED = "wb:Source wb:Assertion wb:Supersession prov:Activity"  # what moved out of the metadata graph
# a person's act (an alias, a merge) in the entities graph on an entity not described there
_ACTED_ON_PRIVATE = f"""GRAPH {ENTITIES_GRAPH} {{ ?s wb:aliasOf|wb:mergedEntity|wb:mergedInto ?x }}
    FILTER EXISTS {{ GRAPH ?d {{ ?x a wb:Entity }} }}
    FILTER NOT EXISTS {{ GRAPH {ENTITIES_GRAPH} {{ ?x a wb:Entity }} }}"""


def _kinds() -> str:
    return " ".join(str(k) for k in AGENT_KINDS)


def outdated(store: Store) -> bool:
    """Whether the store keeps a source's description, a record's metadata or an act on records
    in the metadata graph, or summaries, tombstones or candidates in shared graphs (one ASK)."""
    return store.ask(PREFIXES + f"""ASK {{ {{ {graphs.OUTDATED} }} UNION
        {{ GRAPH {META_GRAPH} {{ ?s a ?kind }} VALUES ?kind {{ {_MOVED} }} }}
        UNION {{ GRAPH {SUMMARIES_GRAPH} {{ ?s a wb:Summary }} }}
        UNION {{ GRAPH {AUDIT_GRAPH} {{ ?s a wb:Tombstone }} }}
        UNION {{ GRAPH {META_GRAPH} {{ ?s a wb:Import }} }}
        UNION {{ GRAPH {ENTITIES_GRAPH} {{ ?s wb:namedIn ?r }} }} UNION {{ {_ACTED_ON_PRIVATE} }}
        UNION {{ GRAPH {USERS_GRAPH} {{ ?s wb:tokenHash ?h }} }} }}""")


def migrate(store: Store) -> bool:
    """Move every source's description and every record's metadata into the source's own graph,
    and every act on records (a supersession, a retraction) into a graph of its own, with the
    agents they name; True when there was something to move. Each step is its own update and the
    deletes come last, so a move cut short is finished by the next (engines that apply a request
    of several operations in part cannot leave a source half moved and forgotten)."""
    if not outdated(store):
        return False
    _own_graphs(store)
    meta = META_GRAPH
    # What goes where (?to): a source's triples to its graph, a record's to its source's (found
    # wherever a move cut short left it), an act's to its own.
    home = f"""{{ GRAPH {meta} {{ ?x a ?kind }} VALUES ?kind {{ wb:Source wb:Supersession prov:Activity }}
        BIND(?x AS ?to) }}
        UNION {{ GRAPH {meta} {{ ?x a wb:Assertion }} GRAPH ?w {{ ?x prov:wasDerivedFrom ?to }} }}
        GRAPH {meta} {{ ?x ?p ?o }}"""
    store.update(PREFIXES + f"INSERT {{ GRAPH ?to {{ ?x ?p ?o }} }} WHERE {{ {home} }}")
    store.update(PREFIXES + f"""INSERT {{ GRAPH ?to {{ ?o ?q ?b }} }} WHERE {{ {home}
        GRAPH {meta} {{ ?o a ?agent ; ?q ?b }} VALUES ?agent {{ {_kinds()} }} }}""")
    store.update(PREFIXES + f"""DELETE {{ GRAPH {meta} {{ ?x ?p ?o }} }}
        WHERE {{ GRAPH {meta} {{ ?x a ?kind ; ?p ?o }} VALUES ?kind {{ {_MOVED} }} }}""")
    _runs(store)  # they go where their records' metadata now is; so do names
    _names(store)
    _acts_on_entities(store)
    _narrower_corrections(store)
    graphs.migrate(store)  # last: a candidate that rested on an erased record rests on its tombstone
    _tokens(store)
    return True


def _tokens(store: Store) -> None:
    """API token hashes out of the users graph, into a graph of their own that no reader's rewritten
    read returns (its audience is the store node: no reader)."""
    store.update(PREFIXES + f"""INSERT {{ GRAPH {TOKENS_GRAPH} {{ ?u wb:tokenHash ?h .
        {TOKENS_GRAPH} wb:visibleTo {STORE_NODE} }} }} WHERE {{ GRAPH {USERS_GRAPH} {{ ?u wb:tokenHash ?h }} }}""")
    store.update(PREFIXES + f"DELETE WHERE {{ GRAPH {USERS_GRAPH} {{ ?u wb:tokenHash ?h }} }}")


def _own_graphs(store: Store) -> None:
    """Summaries and tombstones out of their shared graphs, into a graph each (a tombstone's
    ``wb:erasedFor`` becomes its graph's ``wb:visibleTo``); the shared graphs held nothing else
    (and the agents they named, which go along), so they are dropped last."""
    stone = f'BIND(IRI(CONCAT("{TOMBSTONE_PREFIX}", STRAFTER(STR(?t), "{RECORD_PREFIX}"))) AS ?to)'
    store.update(f"INSERT {{ GRAPH ?s {{ ?s ?p ?o }} }} WHERE {{ GRAPH {SUMMARIES_GRAPH} {{ ?s ?p ?o }} }}")
    store.update(PREFIXES + f"""INSERT {{ GRAPH ?to {{ ?t ?p ?o }} }} WHERE {{
        GRAPH {AUDIT_GRAPH} {{ ?t a wb:Tombstone ; ?p ?o }} FILTER(?p != wb:erasedFor) {stone} }}""")
    store.update(PREFIXES + f"""INSERT {{ GRAPH ?to {{ ?to wb:visibleTo ?who }} }} WHERE {{
        GRAPH {AUDIT_GRAPH} {{ ?t a wb:Tombstone ; wb:erasedFor ?who }} {stone} }}""")
    store.update(PREFIXES + f"""INSERT {{ GRAPH ?to {{ ?a ?q ?b }} }} WHERE {{
        GRAPH {AUDIT_GRAPH} {{ ?t a wb:Tombstone ; prov:wasAttributedTo ?a . ?a a ?kind ; ?q ?b }}
        VALUES ?kind {{ {_kinds()} }} {stone} }}""")
    store.update(f"DROP SILENT GRAPH {SUMMARIES_GRAPH} ; DROP SILENT GRAPH {AUDIT_GRAPH}")


def _runs(store: Store) -> None:
    """Import runs out of the metadata graph, into the graph of each source whose records they
    made (with every file they used: which file a record came from was not kept), with their
    agents; then the runs and the agents nothing left there names are deleted from it."""
    meta = META_GRAPH
    made = f"""GRAPH {meta} {{ ?a a wb:Import }} GRAPH ?s {{ ?r prov:wasGeneratedBy ?a }}
        FILTER(STRSTARTS(STR(?s), "{SOURCE_PREFIX}"))"""
    store.update(PREFIXES + f"INSERT {{ GRAPH ?s {{ ?a ?p ?o }} }} WHERE {{ {made} GRAPH {meta} {{ ?a ?p ?o }} }}")
    store.update(PREFIXES + f"""INSERT {{ GRAPH ?s {{ ?w ?q ?b }} }} WHERE {{ {made}
        GRAPH {meta} {{ ?a prov:wasAssociatedWith ?w . ?w ?q ?b }} }}""")
    store.update(PREFIXES + f"""DELETE {{ GRAPH {meta} {{ ?a ?p ?o }} }}
        WHERE {{ GRAPH {meta} {{ ?a a wb:Import ; ?p ?o }} }} ;
        DELETE {{ GRAPH {meta} {{ ?w ?q ?b }} }} WHERE {{ GRAPH {meta} {{ ?w a ?kind ; ?q ?b }}
        VALUES ?kind {{ {_kinds()} }} FILTER NOT EXISTS {{ GRAPH {meta} {{ ?x ?y ?w }} }} }}""")


def _names(store: Store) -> None:
    """Each ``wb:namedIn`` link beside its record's metadata; the description of an entity an
    import made that only restricted records name, beside each of them; then out of the entities
    graph."""
    ents = ENTITIES_GRAPH
    store.update(PREFIXES + f"""INSERT {{ GRAPH ?m {{ ?e wb:namedIn ?r }} }} WHERE {{
        GRAPH {ents} {{ ?e wb:namedIn ?r }} GRAPH ?m {{ ?r prov:wasDerivedFrom ?src }} }}""")
    private = f"""GRAPH {ents} {{ ?e a wb:Entity }}
        FILTER NOT EXISTS {{ GRAPH {ents} {{ ?e prov:wasGeneratedBy ?made . ?made a prov:Activity }} }}
        FILTER NOT EXISTS {{ GRAPH ?pub {{ ?e wb:namedIn ?any }} FILTER(?pub != {ents})
                             FILTER NOT EXISTS {{ GRAPH ?pub {{ ?pub wb:visibleTo ?someone }} }} }}
        FILTER EXISTS {{ GRAPH ?x {{ ?e wb:namedIn ?y }} FILTER(?x != {ents}) }}"""
    what = f"VALUES ?p {{ {' '.join(str(p) for p in DESCRIPTION)} }} GRAPH {ents} {{ ?e ?p ?o }}"
    store.update(PREFIXES + f"""INSERT {{ GRAPH ?m {{ ?e ?p ?o }} }} WHERE {{ {private}
        GRAPH ?m {{ ?e wb:namedIn ?r }} FILTER(?m != {ents}) {what} }}""")
    store.update(PREFIXES + f"""DELETE {{ GRAPH {ents} {{ ?e ?p ?o }} }} WHERE {{ {private} {what} }}""")
    store.update(PREFIXES + f"DELETE WHERE {{ GRAPH {ents} {{ ?e wb:namedIn ?r }} }}")


def _acts_on_entities(store: Store) -> None:
    """A person's aliases, merges and splits on an entity that only restricted records name, out
    of the entities graph and into the graphs that describe it (both, for a merge: see
    :func:`workbench.names.entities.places`; one that no graph describes with the other goes
    beside the first: fewer readers than everyone)."""
    rows = store.select(PREFIXES + f"SELECT DISTINCT ?x WHERE {{ {_ACTED_ON_PRIVATE} }} ORDER BY ?x")
    for row in rows:
        e = row["x"]
        said = given.held(store, e, ENTITIES_GRAPH)  # type: ignore[arg-type]
        others = sorted({t for q in said for t in (q.subject, q.object)
                         if isinstance(t, ox.NamedNode) and t != e and t.value.startswith(ENTITY_PREFIX)}, key=str)
        try:
            into = places(store, [e, *others])  # type: ignore[list-item]
        except Conflict:  # merged with a private entity of another source: beside this one, not everyone
            into = places(store, [e])  # type: ignore[list-item]
        if into != [ENTITIES_GRAPH]:
            acts = " ".join(str(q.subject) for q in said)
            agents = [ox.Quad(r["w"], r["p"], r["o"], ENTITIES_GRAPH) for r in store.select(  # type: ignore[arg-type]
                PREFIXES + f"""SELECT DISTINCT ?w ?p ?o WHERE {{ VALUES ?a {{ {acts} }}
                GRAPH {ENTITIES_GRAPH} {{ ?a prov:wasAssociatedWith ?w . ?w ?p ?o }} }}""")]
            store.apply(insert=[ox.Quad(q.subject, q.predicate, q.object, g) for g in into for q in said + agents],
                        delete=said)
    # the agents nothing in the entities graph names any more
    store.update(PREFIXES + f"""DELETE {{ GRAPH {ENTITIES_GRAPH} {{ ?w ?q ?b }} }} WHERE {{
        GRAPH {ENTITIES_GRAPH} {{ ?w a ?kind ; ?q ?b }} VALUES ?kind {{ {_kinds()} }}
        FILTER NOT EXISTS {{ GRAPH {ENTITIES_GRAPH} {{ ?x ?y ?w }} }} }}""")


def _narrower_corrections(store: Store) -> None:
    """A record whose own status says superseded though some who see it may not see any record
    that supersedes it (stored so before 2026-12-06): its own status back to active, as a
    correction written now leaves it (``records.lifecycle.supersede``)."""
    rows = store.select(PREFIXES + """SELECT ?old ?m ?new WHERE { GRAPH ?m { ?old wb:status wb:Superseded }
        GRAPH ?n { ?new wb:supersedes ?old } }""")
    by: dict[ox.NamedNode, tuple[ox.NamedNode, list[ox.NamedNode]]] = {}
    for r in rows:
        by.setdefault(r["old"], (r["m"], []))[1].append(r["new"])  # type: ignore[arg-type]
    back = []
    for old, (home, newer) in sorted(by.items(), key=str):
        seen = audience.of_record(store, old)
        if not any(audience.covers(audience.of_record(store, n), seen) for n in newer):
            back.append((old, home))
    if back:
        store.apply(insert=[ox.Quad(o, WB.status, WB.Active, m) for o, m in back],
                    delete=[ox.Quad(o, WB.status, WB.Superseded, m) for o, m in back])
