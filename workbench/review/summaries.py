"""Summaries of a defined set of records ("Project Atlas's active decisions"), proposed like any
candidate and approved by a curator. A summary holds the ids and digests of exactly the records
it summarises and is **fresh** only while every one of them is still active and unchanged: the
moment one is superseded, retracted or erased it reads as **stale**, with the reason (an erased
record keeps its link, not its digest: :func:`workbench.records.lifecycle.summary_copies`). Freshness
is computed on every read, so there is no moment at which a stale summary passes for fresh. A
summary is never evidence: answers read assertions only, and a summary's graph (its own, named by
the summary, seen by whoever sees every record it summarises) is not one.

A summary candidate is a JSON object ``{"id", "summary", "of": [record ids], "about"?: [names],
"span"?}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyoxigraph as ox

from workbench.errors import Conflict, Invalid
from workbench.ids import SUMMARY_PREFIX, id_from_iri, record_iri, summary_iri
from workbench.records import shown_status
from workbench.store import Store
from workbench.vocab import PREFIXES, PROV, RDF, WB

FIELDS = {"id", "summary", "of", "about", "span"}


@dataclass(frozen=True)
class Summary:
    id: str
    text: str
    of: tuple[str, ...]
    fresh: bool
    why_stale: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "summary": self.text, "of": list(self.of), "fresh": self.fresh,
                "why_stale": list(self.why_stale)}


def is_summary(raw: Mapping[str, Any]) -> bool:
    return "summary" in raw


def check(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A summary candidate, checked field by field. Raises Invalid naming where."""
    unknown = sorted(set(raw) - FIELDS)
    if unknown:
        raise Invalid(f"unknown field {unknown[0]!r} in a summary (fields: {', '.join(sorted(FIELDS))})", where=where)
    if not isinstance(raw.get("id"), str) or not raw["id"].strip():
        raise Invalid("a summary needs an 'id'", where=where)
    if not isinstance(raw.get("summary"), str) or not raw["summary"].strip():
        raise Invalid("'summary' must be the summary's text", where=where)
    of = raw.get("of")
    if not isinstance(of, list) or not of or not all(isinstance(i, str) and i.strip() for i in of):
        raise Invalid("'of' must list the ids of the records it summarises", where=where)
    if len(set(of)) != len(of):
        raise Invalid("'of' names a record twice", where=where)
    return dict(raw)


def _state(store: Store, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """For each record id: (status, digest), "erased" for a tombstone, "missing" otherwise."""
    values = " ".join(str(record_iri(i)) for i in ids)
    rows = store.select(
        PREFIXES + f"""SELECT ?r ?st ?d ?t WHERE {{ VALUES ?r {{ {values} }}
        OPTIONAL {{ GRAPH ?m {{ ?r wb:status ?own OPTIONAL {{ ?r wb:recordDigest ?d }} }}
            {shown_status("?r", "?own", "?st")} }}
        OPTIONAL {{ GRAPH ?stone {{ ?r a wb:Tombstone BIND(true AS ?t) }} }} }}"""
    )
    out = {}
    for r in rows:
        rid = id_from_iri(r["r"])  # type: ignore[arg-type]
        if r["st"] is not None:
            out[rid] = (r["st"].value.rsplit("#", 1)[1].lower(), r["d"].value if r["d"] else "")
        else:
            out[rid] = ("erased" if r["t"] is not None else "missing", "")
    return out


def check_rests_on(store: Store, summary: Mapping[str, Any]) -> None:
    """A summary proposed must summarise records that are recorded (in ``store``: the store as
    the proposer may see it). Raises Invalid naming the first that is not."""
    state = _state(store, list(summary["of"]))
    for rid in summary["of"]:
        status = state.get(rid, ("missing", ""))[0]
        if status in ("missing", "erased"):
            raise Invalid(f"summary {summary['id']}: 'of' names {rid!r}, which is not a recorded record",
                          where=f"summary {summary['id']}")


def plan_approval(
    store: Store, summary: Mapping[str, Any], act: ox.NamedNode, candidate: ox.NamedNode
) -> list[ox.Quad]:
    """The quads of an approved summary. Raises Conflict when a record it names is not active."""
    ids = list(summary["of"])
    state = _state(store, ids)
    bad = [f"{i} is {state.get(i, ('missing', ''))[0]}" for i in ids if state.get(i, ("missing", ""))[0] != "active"]
    if bad:
        raise Conflict(f"summary {summary['id']} cannot be approved: {'; '.join(bad)}")
    node = summary_iri(summary["id"])
    g = node  # a graph of its own: withheld from whoever may not see a record it summarises
    quads = [ox.Quad(node, RDF.type, WB.Summary, g), ox.Quad(node, WB.summaryText, ox.Literal(summary["summary"]), g),
             ox.Quad(node, WB.fromCandidate, candidate, g),
             ox.Quad(node, PROV.wasGeneratedBy, act, g)]
    for i in ids:
        quads += [ox.Quad(node, WB.summarizes, record_iri(i), g),
                  ox.Quad(node, WB.basis, ox.Literal(f"{i}@{state[i][1]}"), g)]
    return quads


def summaries(store: Store, *, of: str | None = None, include_stale: bool = False) -> list[Summary]:
    """Approved summaries (optionally those summarising record ``of``), fresh ones only unless
    ``include_stale``; each says whether it is fresh and, if not, why."""
    pin = f"?s wb:summarizes {record_iri(of)} ." if of else ""
    rows = store.select(
        PREFIXES + f"""SELECT ?s ?text ?r ?basis WHERE {{ GRAPH ?s {{ ?s a wb:Summary . {pin}
        {{ ?s wb:summarizes ?r }} UNION {{ ?s wb:basis ?basis }} OPTIONAL {{ ?s wb:summaryText ?text }} }} }}"""
    )
    # The records a summary rests on are its wb:summarizes links; each has a basis (ID@DIGEST)
    # until the record is erased, which takes the digest with it (see records.lifecycle.summary_copies).
    texts: dict[str, str] = {}
    digests: dict[str, dict[str, str]] = {}
    for r in rows:
        s = r["s"].value  # type: ignore[union-attr]
        texts.setdefault(s, "")
        if r["text"] is not None:  # none: erased with a record it rested on
            texts[s] = r["text"].value
        if r["r"] is not None:
            digests.setdefault(s, {}).setdefault(id_from_iri(r["r"]), "")  # type: ignore[arg-type]
        if r["basis"] is not None:
            rid, _, digest = r["basis"].value.rpartition("@")
            digests.setdefault(s, {})[rid] = digest
    found = {s: (texts[s], sorted(digests.get(s, {}).items(), key=lambda b: f"{b[0]}@{b[1]}")) for s in texts}
    state = _state(store, sorted({rid for _, basis in found.values() for rid, _ in basis})) if found else {}
    out = []
    for iri, (text, basis) in sorted(found.items()):
        why = []
        for rid, digest in basis:
            status, now = state.get(rid, ("missing", ""))
            if status != "active":
                why.append(f"{rid} is {status}")
            elif now != digest:
                why.append(f"{rid} changed")
        s = Summary(iri.removeprefix(SUMMARY_PREFIX), text, tuple(r for r, _ in basis), not why, tuple(why))
        if s.fresh or include_stale:
            out.append(s)
    return out
