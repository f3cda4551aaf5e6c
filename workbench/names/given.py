"""The names records gave, and what erasing one of those records does to them.

An entity an import made is *named in* the records that named it (``wb:namedIn``, beside each
record's metadata, in its source's graph). Its description (its type, first name, key and the
run that made it: :data:`workbench.names.entities.DESCRIPTION`) is in the shared entities graph
once a record anyone may see names it, and otherwise beside each restricted record that names
it, so whoever may see one of those records sees the names and nobody else does
(docs/decisions/20261205-visibility-the-engine-enforces.md). A person's registrations
(``workbench entities add``, aliases, merges) are in the entities graph.

Erasing a record (:func:`erased`) takes its links and keeps that true for what remains: an
entity no other record names loses its names everywhere (and the aliases registered for it);
one that only restricted records name from now on moves from the shared graph to beside them;
a copy beside the erased record's source goes when no other record of that source names it.
"""

from __future__ import annotations

import pyoxigraph as ox

from workbench.ids import ENTITIES_GRAPH
from workbench.names.entities import descriptions, registered
from workbench.store import Store
from workbench.vocab import PREFIXES, WB

Quads = list[ox.Quad]


def erased(store: Store, record: ox.NamedNode, home: ox.NamedNode) -> tuple[Quads, Quads]:
    """What erasing ``record`` (whose metadata is in ``home``, its source's graph) deletes and
    inserts among names: see the module's text."""
    # (Virtuoso 7 cannot parse EXISTS inside an expression: an OPTIONAL says who sees the other)
    rows = store.select(PREFIXES + f"""SELECT ?e ?g ?other ?og ?audience ?made WHERE {{
        GRAPH ?g {{ ?e wb:namedIn {record} }}
        OPTIONAL {{ GRAPH ?og {{ ?e wb:namedIn ?other }} FILTER(?other != {record})
                   OPTIONAL {{ GRAPH ?og {{ ?og wb:visibleTo ?audience }} }} }}
        OPTIONAL {{ GRAPH {ENTITIES_GRAPH} {{ ?e prov:wasGeneratedBy ?made . ?made a prov:Activity }} }} }}""")
    links: dict[ox.NamedNode, ox.NamedNode] = {}
    others: dict[ox.NamedNode, set[tuple[ox.NamedNode, ox.NamedNode, bool]]] = {}
    registered: set[ox.NamedNode] = set()
    for r in rows:
        e = r["e"]
        links[e] = r["g"]  # type: ignore[index,assignment]
        others.setdefault(e, set())  # type: ignore[arg-type]
        if r["other"] is not None:
            others[e].add((r["other"], r["og"], r["audience"] is None))  # type: ignore[arg-type, index]
        if r["made"] is not None:
            registered.add(e)  # type: ignore[arg-type]
    delete = [ox.Quad(e, WB.namedIn, record, g) for e, g in links.items()]
    insert: Quads = []
    described = descriptions(store, [e.value for e in links])
    for e in sorted(links, key=str):
        have = described.get(e.value, {})
        rest = others[e]
        if not rest and e not in registered:
            delete += held(store, e)  # its last name: gone everywhere, with the aliases and merges on it
            continue
        if home in have and home != ENTITIES_GRAPH and not any(og == home for _, og, _ in rest):
            delete += held(store, e, home)  # no other record of this source names it
        if ENTITIES_GRAPH in have and e not in registered and rest and not any(public for *_, public in rest):
            said = held(store, e, ENTITIES_GRAPH)  # only restricted records name it now: beside them
            delete += said
            beside = sorted({og for _, og, _ in rest if og not in have}, key=str)
            insert += [ox.Quad(q.subject, q.predicate, q.object, og) for og in beside for q in said]
    return delete, insert


def held(store: Store, e: ox.NamedNode, graph: ox.NamedNode | None = None) -> Quads:
    """What ``graph`` (default: every graph where entities are registered) says of the entity
    ``e``: its description and aliases, the merges naming it, and the acts that made them."""
    g = str(graph) if graph is not None else "?g"
    rows = store.select(PREFIXES + f"""SELECT DISTINCT ?s ?p ?o ?g WHERE {{ GRAPH {g} {{
        {{ {e} ?p ?o BIND({e} AS ?s) FILTER(?p != wb:namedIn) }}
        UNION {{ ?s wb:aliasOf|wb:mergedEntity|wb:mergedInto {e} ; ?p ?o }}
        UNION {{ ?s owl:sameAs {e} BIND(owl:sameAs AS ?p) BIND({e} AS ?o) }} }}
        {registered('?g') if graph is None else f"BIND({g} AS ?g)"} }}""")
    return [ox.Quad(r["s"], r["p"], r["o"], r["g"]) for r in rows]  # type: ignore[arg-type]
