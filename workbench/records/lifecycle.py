"""What happens to a record after it lands: superseded by a correction, retracted, or erased.

Supersession and retraction never rewrite history: the old record stays, with its status changed
and a link (SUPERSEDES) or an attributed act saying why. Erasure is different: it removes the record
and every copy the store manages (its triples, its metadata, a source only it used, names only it
gave) and leaves a content-free tombstone: what kind of thing, who, when, why.
"""

from __future__ import annotations

import pyoxigraph as ox

from workbench.access import audience
from workbench.errors import Conflict, Invalid, NotFound
from workbench.ids import (
    ENTITIES_GRAPH,
    agent_iri,
    id_from_iri,
    record_iri,
    tombstone_graph,
)
from workbench.names import given
from workbench.names.keys import name_key
from workbench.records import get, meta_graph, status_and_home
from workbench.records.acts import activity, agent_quads
from workbench.store import Store
from workbench.store.base import reach
from workbench.values.records import Status, Tombstone
from workbench.vocab import PREFIXES, PROV, RDF, WB, XSD


def _status(store: Store, iri: ox.NamedNode, record_id: str) -> tuple[ox.NamedNode, ox.NamedNode]:
    """The record's status as ``store`` shows it, and the graph that holds its metadata (its source's)."""
    found = status_and_home(store, iri)
    if found is None:
        get(store, record_id)  # raises NotFound, naming an erasure if there was one
        raise NotFound(f"no record {record_id!r}")
    return found[0].iri, found[1]


def supersede(
    store: Store, old_id: str, new_id: str, *, actor: str, now: str, reason: str, seen: Store | None = None
) -> None:
    """Mark ``old_id`` superseded by ``new_id`` (both recorded). Raises Conflict on a cycle or a
    record that is not active. Both are looked up in ``seen``, the store as the writer may see
    it (default: all of it): a record hidden from them is as missing as one never held."""
    seen = seen or store
    old, new = record_iri(old_id), record_iri(new_id)
    if old == new:
        raise Invalid("a record cannot supersede itself")
    homes = []
    for iri, rid in ((old, old_id), (new, new_id)):
        status, home = _status(seen, iri, rid)
        if status != Status.ACTIVE.iri:
            raise Conflict(f"record {rid!r} is {Status.from_iri(status.value).value}, not active")
        homes.append(home)
    if new in reach(seen, meta_graph("?a"), WB.supersedes, [old])[old]:
        raise Conflict(f"record {old_id!r} already supersedes {new_id!r}; that would be a cycle")
    old_seen, new_seen = audience.of_record(store, old), audience.of_record(store, new)
    audience.check_named(f"record {new_id!r}", new_seen, f"record {old_id!r}", old_seen)
    # The act names both records, so it is seen only by whoever sees both: a graph of its own
    # (the act's IRI), withheld when either record is (the visibility decision of 2026-12-05).
    act, quads = activity("supersession", WB.Supersession, actor=actor, now=now, graph=None, reason=reason)
    quads += [
        ox.Quad(act, PROV.used, old, act),
        ox.Quad(act, PROV.used, new, act),
        ox.Quad(new, WB.supersedes, old, homes[1]),  # the newer record's metadata
    ]
    if not audience.covers(new_seen, old_seen):
        # Some who see the older record may not see the newer: to them the older is still
        # active, so its own status stays; the link makes it superseded to whoever sees it.
        store.apply(insert=quads)
        return
    quads.append(ox.Quad(old, WB.status, WB.Superseded, homes[0]))
    store.apply(insert=quads, delete=[ox.Quad(old, WB.status, WB.Active, homes[0])])


def retract(store: Store, record_id: str, *, actor: str, now: str, reason: str, seen: Store | None = None) -> None:
    """Withdraw an active record without a replacement; the audit still shows it. The record is
    looked up in ``seen`` (see :func:`supersede`)."""
    iri = record_iri(record_id)
    status, home = _status(seen or store, iri, record_id)
    if status != Status.ACTIVE.iri:
        raise Conflict(f"record {record_id!r} is not active")
    # an act on a record is a graph of its own, seen by whoever sees the record; it outlives an
    # erasure of the record (the audit trail keeps it)
    act, quads = activity("retraction", PROV.Activity, actor=actor, now=now, graph=None, reason=reason)
    quads += [
        ox.Quad(act, PROV.used, iri, act),
        ox.Quad(iri, WB.status, WB.Retracted, home),
    ]
    store.apply(insert=quads, delete=[ox.Quad(iri, WB.status, WB.Active, home)])


def erase(store: Store, record_id: str, *, actor: str, now: str, reason: str, seen: Store | None = None) -> Tombstone:
    """Remove a record and every copy of it the store manages; leave a tombstone, seen by those
    who could see the record: its graph's ``wb:visibleTo`` is the source's audience (none: everyone).
    The record is looked up in ``seen`` (see :func:`supersede`)."""
    iri = record_iri(record_id)
    home = _status(seen or store, iri, record_id)[1]
    if not reason.strip():
        raise Invalid("an erasure needs a reason")
    record = get(store, record_id)
    seen_by = [agent_iri(a) for a in audience.of_record(store, iri)]
    doomed = _described(store, iri, home)
    sources = _orphan_sources(store, iri)
    doomed += _orphan_names(store, iri, home)
    names_gone, names_moved = given.erased(store, iri, home)
    doomed += names_gone
    doomed += _candidates(store, iri)
    doomed += summary_copies(store, iri)
    g = tombstone_graph(iri)  # a graph of its own, seen by whoever could see the record
    kind = f"assertion ({record.type.value})"
    stone = [
        *(ox.Quad(g, WB.visibleTo, who, g) for who in seen_by),
        ox.Quad(iri, RDF.type, WB.Tombstone, g),
        ox.Quad(iri, WB.erasedKind, ox.Literal(kind), g),
        ox.Quad(iri, PROV.wasAttributedTo, agent_iri(actor), g),
        ox.Quad(iri, PROV.invalidatedAtTime, ox.Literal(now, datatype=XSD.dateTime), g),
        ox.Quad(iri, WB.reason, ox.Literal(reason), g),
        *agent_quads(actor, g),
    ]
    # a candidate that rested on the record now rests on its tombstone: seen by whoever could see the record
    stone += [ox.Quad(r["c"], WB.restsOn, g, r["c"]) for r in store.select(  # type: ignore[arg-type]
        PREFIXES + f"SELECT DISTINCT ?c WHERE {{ GRAPH ?c {{ ?c wb:restsOn {iri} }} }}")]
    # one request: all of it or none
    moved = [q for q in names_moved if q.graph_name not in sources]
    store.apply(drop=[iri, *sources], delete=doomed, insert=stone + moved)
    return Tombstone(iri=iri.value, kind=kind, erased_by=actor, erased_at=now, reason=reason)


def _described(store: Store, node: ox.NamedNode, home: ox.NamedNode) -> list[ox.Quad]:
    """The quads of ``home`` (the graph that holds a record's metadata) whose subject is ``node``."""
    rows = store.select(f"SELECT ?p ?o WHERE {{ GRAPH {home} {{ {node} ?p ?o }} }}")
    return [ox.Quad(node, r["p"], r["o"], home) for r in rows]  # type: ignore[arg-type]


def _candidates(store: Store, iri: ox.NamedNode) -> list[ox.Quad]:
    """The queue's copies of the record: the candidate it was approved from, candidates merged
    into it and model proposals that repeat its facts in words, with their payload, source span
    and guess basis (what they decided stays, content-free)."""
    rows = store.select(
        PREFIXES + f"SELECT ?c ?p ?o WHERE {{ GRAPH ?c {{ ?c wb:approvedAs|wb:mergedInto|wb:guessRestsOn "
        f"{iri} . ?c ?p ?o FILTER(?p IN (wb:payload, wb:sourceSpan, wb:guessBasis)) }} }}"
    )
    return [ox.Quad(r["c"], r["p"], r["o"], r["c"]) for r in rows]  # type: ignore[arg-type]


def _orphan_sources(store: Store, iri: ox.NamedNode) -> list[ox.NamedNode]:
    """This record's sources that no other record uses: their graphs go (they hold the source text)."""
    rows = store.select(
        PREFIXES + f"SELECT DISTINCT ?src WHERE {{ GRAPH ?m {{ "
        f"{{ {iri} prov:wasDerivedFrom ?src }} UNION {{ {iri} wb:supportedBy ?src }} }} "
        f"FILTER NOT EXISTS {{ GRAPH ?n {{ ?other prov:wasDerivedFrom|wb:supportedBy ?src "
        f"FILTER(?other != {iri}) }} }} }}"
    )
    return [r["src"] for r in rows if isinstance(r["src"], ox.NamedNode)]


def _orphan_names(store: Store, iri: ox.NamedNode, home: ox.NamedNode) -> list[ox.Quad]:
    """Name keys that only this record's labels gave (its metadata is in ``home``)."""
    rows = store.select(
        PREFIXES + f"SELECT ?e ?label WHERE {{ GRAPH {iri} {{ ?e skos:prefLabel|skos:altLabel ?label }} }}"
    )
    out = []
    for row in rows:
        e, label = row["e"], row["label"]
        key = ox.Literal(name_key(label.value))  # type: ignore[union-attr]
        still = store.ask(
            PREFIXES + f"ASK {{ {{ GRAPH ?g {{ {e} skos:prefLabel|skos:altLabel ?l }} FILTER(?g != {iri}) "
            f"FILTER(LCASE(STR(?l)) = LCASE({key})) }} UNION {{ GRAPH ?r {{ "
            f"?a wb:aliasOf {e} ; wb:alias ?l FILTER(LCASE(STR(?l)) = LCASE({key})) }} }} }}"
        )
        if not still:  # in the entities graph, or beside a restricted source's records (imports.rdf)
            out += [ox.Quad(e, WB.nameKey, key, g) for g in (ENTITIES_GRAPH, home)]  # type: ignore[arg-type]
    return out


def summary_copies(store: Store, record: ox.NamedNode) -> list[ox.Quad]:
    """The text of every summary resting on an erased record, the record's basis in it (its
    digest would let anyone confirm a guess of the erased content), and the candidate it was
    approved from: erased with it (the summary's links stay, content-free, so the audit can tell
    it existed, and it reads as stale: "ID is erased")."""
    rid = id_from_iri(record)
    bases = store.select(
        PREFIXES + f"SELECT ?s ?b WHERE {{ GRAPH ?s {{ ?s wb:summarizes {record} ; wb:basis ?b }} }}"
    )
    doomed = {ox.Quad(r["s"], WB.basis, r["b"], r["s"]) for r in bases  # type: ignore[arg-type]
              if r["b"] is not None and r["b"].value.rpartition("@")[0] == rid}
    rows = store.select(
        PREFIXES + f"""SELECT ?s ?t ?c ?p ?o WHERE {{ GRAPH ?s {{ ?s wb:summarizes {record} ;
        wb:summaryText ?t OPTIONAL {{ ?s wb:fromCandidate ?c }} }}
        OPTIONAL {{ GRAPH ?c {{ ?c ?p ?o FILTER(?p IN (wb:payload, wb:sourceSpan)) }} }} }}"""
    )
    out = {ox.Quad(r["s"], WB.summaryText, r["t"], r["s"]) for r in rows}  # type: ignore[arg-type]
    out |= {ox.Quad(r["c"], r["p"], r["o"], r["c"]) for r in rows if r["p"] is not None}  # type: ignore[arg-type]
    return sorted(out | doomed, key=str)
