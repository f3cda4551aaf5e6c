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
from workbench.names.entities import descriptions
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
            delete += [ox.Quad(e, p, o, g) for g, said in have.items() for p, o in said]
            delete += _registrations(store, e)
            continue
        if home in have and home != ENTITIES_GRAPH and not any(og == home for _, og, _ in rest):
            delete += [ox.Quad(e, p, o, home) for p, o in have[home]]
        if ENTITIES_GRAPH in have and e not in registered and rest and not any(public for *_, public in rest):
            said = have[ENTITIES_GRAPH]  # only restricted records name it now: beside them
            delete += [ox.Quad(e, p, o, ENTITIES_GRAPH) for p, o in said]
            insert += [ox.Quad(e, p, o, og) for og in sorted({og for _, og, _ in rest}, key=str) for p, o in said
                       if og not in have]
    return delete, insert


def _registrations(store: Store, e: ox.NamedNode) -> Quads:
    """What the entities graph says of a nameless entity: aliases registered for it, and links to it."""
    g = ENTITIES_GRAPH
    rows = store.select(PREFIXES + f"""SELECT DISTINCT ?s ?p ?o WHERE {{ GRAPH {g} {{
        {{ {e} ?p ?o BIND({e} AS ?s) }} UNION {{ ?s wb:aliasOf {e} ; ?p ?o }}
        UNION {{ ?s ?p {e} BIND({e} AS ?o) }} }} }}""")
    return [ox.Quad(r["s"], r["p"], r["o"], g) for r in rows]  # type: ignore[arg-type]

