"""Evidence for answers: the words for terms, and recorded leaves with their sources.

Both take every term or record an answer needs at once, so an answer costs one query for its
labels and one for its provenance, whatever its size.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyoxigraph as ox

from workbench.answer.model import Recorded, Statement
from workbench.ids import ENTITIES_GRAPH, META_GRAPH, ONTOLOGY_GRAPH, id_from_iri
from workbench.model import RecordType, Source, Status
from workbench.store import Store
from workbench.vocab import DCTERMS, PREFIXES, PROV, RDF, WB

Triple = tuple[ox.NamedNode | ox.BlankNode | ox.Literal, ox.NamedNode, ox.NamedNode | ox.BlankNode | ox.Literal]


class Labels:
    """Words for terms: an entity's preferred name, a relation's label, a record's id."""

    def __init__(self, store: Store, terms: Iterable[object]) -> None:
        iris = sorted({t.value for t in terms if isinstance(t, ox.NamedNode)})
        self.words: dict[str, str] = {RDF.type.value: "is a"}
        if not iris:
            return
        values = " ".join(f"<{i}>" for i in iris)
        # Plain lookups in a UNION (no OPTIONAL, no GROUP BY: those cost 10x here); the best
        # kind of word wins: relation label, registered name, any SKOS label, rdfs:label, id.
        rows = store.select(
            PREFIXES
            + f"""SELECT ?t ?k ?w WHERE {{ VALUES ?t {{ {values} }}
              {{ GRAPH {ONTOLOGY_GRAPH} {{ ?t wb:relationLabel ?w }} BIND(1 AS ?k) }}
              UNION {{ GRAPH {ENTITIES_GRAPH} {{ ?t skos:prefLabel ?w }} BIND(2 AS ?k) }}
              UNION {{ GRAPH ?g {{ ?t skos:prefLabel ?w }} BIND(3 AS ?k) }}
              UNION {{ GRAPH {ONTOLOGY_GRAPH} {{ ?t rdfs:label ?w }} BIND(4 AS ?k) }}
              UNION {{ GRAPH {META_GRAPH} {{ ?t dcterms:identifier ?w }} BIND(5 AS ?k) }} }}"""
        )
        best: dict[str, tuple[int, str]] = {}
        for row in rows:
            cand = (int(row["k"].value), row["w"].value)  # type: ignore[union-attr]
            t = row["t"].value  # type: ignore[union-attr]
            if t not in best or cand < best[t]:
                best[t] = cand
        for t, (_, word) in best.items():
            self.words.setdefault(t, word)

    def __call__(self, term: object) -> str:
        if isinstance(term, ox.NamedNode):
            return self.words.get(term.value) or id_from_iri(term)
        if isinstance(term, ox.Literal):
            return term.value
        return str(term)

    def statement(self, triple: Triple) -> Statement:
        s, p, o = triple
        return Statement(str(s), str(p), str(o), f"{self(s)} {self(p)} {self(o)}")


def recorded(
    store: Store, facts: Iterable[tuple[Triple, ox.NamedNode]], labels: Labels
) -> dict[tuple[Triple, str], Recorded]:
    """Recorded leaves for (triple, record IRI) pairs, keyed by (triple, record IRI value)."""
    pairs = list(dict.fromkeys(facts))
    records = sorted({r.value for _, r in pairs})
    if not records:
        return {}
    values = " ".join(f"<{r}>" for r in records)
    # A star query per record and per source, assembled here (a GROUP BY costs 10x).
    rows = store.select(
        PREFIXES
        + f"""SELECT ?r ?p ?o ?sp ?so WHERE {{ VALUES ?r {{ {values} }} GRAPH {META_GRAPH} {{
            {{ ?r ?p ?o FILTER(?p IN (dcterms:identifier, wb:recordType, wb:status, prov:generatedAtTime,
                                     wb:effectiveFrom, wb:admitted)) }}
            UNION {{ ?r prov:wasDerivedFrom ?src . ?src ?sp ?so FILTER(?sp IN
                    (dcterms:identifier, prov:wasAttributedTo, prov:generatedAtTime, wb:locator)) }} }} }}"""
    )
    meta: dict[str, dict[str, list[str]]] = {}
    for row in rows:
        entry = meta.setdefault(row["r"].value, {})  # type: ignore[union-attr]
        if row["p"] is not None:
            entry.setdefault(row["p"].value, []).append(row["o"].value)  # type: ignore[union-attr]
        else:
            entry.setdefault("src:" + row["sp"].value, []).append(row["so"].value)  # type: ignore[union-attr]
    out: dict[tuple[Triple, str], Recorded] = {}
    for triple, rec in pairs:
        m = meta.get(rec.value)
        if m is None or DCTERMS.identifier.value not in m:
            continue

        def one(key: str, m: dict[str, list[str]] = m) -> str | None:
            values = sorted(m.get(key, []))
            return values[0] if values else None

        said = sorted(id_from_iri(ox.NamedNode(a)) for a in m.get("src:" + PROV.wasAttributedTo.value, []))
        out[(triple, rec.value)] = Recorded(
            statement=labels.statement(triple),
            record=one(DCTERMS.identifier.value) or id_from_iri(rec),
            record_type=RecordType.from_iri(one(WB.recordType.value) or "").value,
            status=Status.from_iri(one(WB.status.value) or "").value,
            source=Source(
                id=one("src:" + DCTERMS.identifier.value) or "",
                said_by=", ".join(said),
                captured_at=one("src:" + PROV.generatedAtTime.value),
                locator=one("src:" + WB.locator.value),
            ),
            admitted=one(WB.admitted.value) == "true",
            effective_from=one(WB.effectiveFrom.value),
            created_at=one(PROV.generatedAtTime.value) or "",
        )
    return out
