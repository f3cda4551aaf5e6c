"""The audit trail of one record: every attributed act that touched it or the candidate it was
approved from, oldest first: proposed (by a model or a pipeline, with prompt version and input),
approved, imported, superseded, retracted, summarised, erased. All of it is PROV-O in the store,
so the same trail is one SPARQL query away for other tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.errors import NotFound
from workbench.ids import ONTOLOGY_GRAPH, id_from_iri, record_iri
from workbench.store import Store
from workbench.vocab import PREFIXES

# Acts stamped with the same second still happen in this order.
ORDER = {k: i for i, k in enumerate(["proposal", "approval", "import", "supersession", "retraction", "erasure"])}


@dataclass(frozen=True)
class Event:
    when: str
    what: str  # the act's kind, in words ("approval", "supersession", ...)
    who: str
    detail: str = ""  # its reason, prompt version, or what else it used

    def to_json(self) -> dict[str, Any]:
        return {"when": self.when, "what": self.what, "who": self.who, "detail": self.detail}


def trail(store: Store, record_id: str) -> list[Event]:
    """Every act on the record and its candidate, oldest first. Raises NotFound for an id that
    was never recorded (an erased record still has its trail and tombstone)."""
    iri = record_iri(record_id)
    rows = store.select(
        PREFIXES + f"""SELECT DISTINCT ?when ?label ?kind ?who ?why ?pv ?used WHERE {{
        {{ BIND({iri} AS ?x) }} UNION {{ GRAPH ?x {{ ?x wb:approvedAs {iri} }} }}
        UNION {{ GRAPH ?x {{ ?x wb:mergedInto {iri} }} }}
        {{ GRAPH ?g {{ ?act prov:used ?x }} }} UNION {{ GRAPH ?g {{ ?x prov:wasGeneratedBy ?act }} }}
        GRAPH ?h {{ ?act a ?kind ; prov:wasAssociatedWith ?who ; prov:startedAtTime ?when .
            OPTIONAL {{ ?act wb:reason ?why }} OPTIONAL {{ ?act wb:promptVersion ?pv }}
            OPTIONAL {{ ?act prov:used ?used FILTER(isLiteral(?used)) }} }}
        OPTIONAL {{ GRAPH {ONTOLOGY_GRAPH} {{ ?kind rdfs:label ?label }} }}
        FILTER(?kind != prov:Activity || !BOUND(?label)) }} ORDER BY ?when ?kind"""
    )
    events: dict[tuple[str, str, str], Event] = {}
    for r in rows:
        kind = r["label"].value if r["label"] else ("retraction" if r["kind"].value.endswith("#Activity")  # type: ignore[union-attr]
                                                     else r["kind"].value.rsplit("#", 1)[-1].lower())  # type: ignore[union-attr]
        who = id_from_iri(r["who"])  # type: ignore[arg-type]
        detail = "; ".join(x for x in (r["why"].value if r["why"] else "",
                                       f"prompt {r['pv'].value}" if r["pv"] else "",
                                       f"input {r['used'].value}" if r["used"] else "") if x)
        key = (r["when"].value, kind, who)  # type: ignore[union-attr]
        if key not in events or len(detail) > len(events[key].detail):
            events[key] = Event(r["when"].value, kind, who, detail)  # type: ignore[union-attr]
    stone = store.select(
        PREFIXES + f"""SELECT ?when ?who ?why WHERE {{ GRAPH ?stone {{ {iri} a wb:Tombstone ;
        prov:invalidatedAtTime ?when ; prov:wasAttributedTo ?who ; wb:reason ?why }} }}"""
    )
    for r in stone:
        events[(r["when"].value, "erasure", "")] = Event(  # type: ignore[union-attr]
            r["when"].value, "erasure", id_from_iri(r["who"]), r["why"].value)  # type: ignore[arg-type, union-attr]
    if not events and not store.ask(PREFIXES + f"ASK {{ GRAPH ?m {{ {iri} a wb:Assertion }} }}"):
        raise NotFound(f"no record {record_id!r}, now or erased")
    return sorted(events.values(), key=lambda e: (e.when, ORDER.get(e.what, len(ORDER)), e.what))
