"""Evidence for answers: the words for terms, and recorded leaves with their sources.

Both take every term or record an answer needs at once, so an answer costs one query for its
labels and one for its provenance, whatever its size.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pyoxigraph as ox

from workbench.answer.model import Recorded, Statement
from workbench.ids import ENTITIES_GRAPH, META_GRAPH, ONTOLOGY_GRAPH, id_from_iri
from workbench.model import RecordType, Source, Status
from workbench.store import Store
from workbench.vocab import PREFIXES, RDF

Triple = tuple[ox.NamedNode | ox.BlankNode | ox.Literal, ox.NamedNode, ox.NamedNode | ox.BlankNode | ox.Literal]


class Labels:
    """Words for terms: an entity's preferred name, a relation's label, a record's id."""

    def __init__(self, store: Store, terms: Iterable[object]) -> None:
        iris = sorted({t.value for t in terms if isinstance(t, ox.NamedNode)})
        self.words: dict[str, str] = {RDF.type.value: "is a"}
        if not iris:
            return
        values = " ".join(f"<{i}>" for i in iris)
        rows = store.select(
            PREFIXES
            + f"""SELECT ?t (SAMPLE(?rel) AS ?r) (SAMPLE(?named) AS ?n) (SAMPLE(?pref) AS ?p)
                  (SAMPLE(?lab) AS ?l) (SAMPLE(?ident) AS ?i) WHERE {{ VALUES ?t {{ {values} }}
              OPTIONAL {{ GRAPH {ONTOLOGY_GRAPH} {{ ?t wb:relationLabel ?rel }} }}
              OPTIONAL {{ GRAPH {ENTITIES_GRAPH} {{ ?t skos:prefLabel ?named }} }}
              OPTIONAL {{ GRAPH ?g {{ ?t skos:prefLabel ?pref }} }}
              OPTIONAL {{ GRAPH {ONTOLOGY_GRAPH} {{ ?t rdfs:label ?lab }} }}
              OPTIONAL {{ GRAPH {META_GRAPH} {{ ?t dcterms:identifier ?ident }} }}
            }} GROUP BY ?t"""
        )
        for row in rows:
            word = next((row[k] for k in ("r", "n", "p", "l", "i") if row[k] is not None), None)
            if word is not None:
                self.words.setdefault(row["t"].value, word.value)  # type: ignore[union-attr]

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
    rows = store.select(
        PREFIXES
        + f"""SELECT ?r ?id ?type ?status ?ef ?created ?admitted ?srcid ?cap ?loc
                     (GROUP_CONCAT(DISTINCT STR(?said); separator=" ") AS ?by) WHERE {{
            VALUES ?r {{ {values} }} GRAPH {META_GRAPH} {{
              ?r dcterms:identifier ?id ; wb:recordType ?type ; wb:status ?status ; prov:generatedAtTime ?created ;
                 prov:wasDerivedFrom ?src . ?src dcterms:identifier ?srcid ; prov:wasAttributedTo ?said .
              OPTIONAL {{ ?r wb:effectiveFrom ?ef }} OPTIONAL {{ ?r wb:admitted ?admitted }}
              OPTIONAL {{ ?src prov:generatedAtTime ?cap }} OPTIONAL {{ ?src wb:locator ?loc }} }} }}
          GROUP BY ?r ?id ?type ?status ?ef ?created ?admitted ?srcid ?cap ?loc"""
    )
    meta = {row["r"].value: row for row in rows}  # type: ignore[union-attr]
    out: dict[tuple[Triple, str], Recorded] = {}
    for triple, rec in pairs:
        row = meta.get(rec.value)
        if row is None:
            continue

        def text(key: str, row: Mapping[str, object] = row) -> str | None:
            v = row[key]
            return v.value if isinstance(v, ox.Literal | ox.NamedNode) else None

        said = sorted(id_from_iri(ox.NamedNode(a)) for a in (text("by") or "").split())
        out[(triple, rec.value)] = Recorded(
            statement=labels.statement(triple),
            record=text("id") or id_from_iri(rec),
            record_type=RecordType.from_iri(text("type") or "").value,
            status=Status.from_iri(text("status") or "").value,
            source=Source(
                id=text("srcid") or "", said_by=", ".join(said), captured_at=text("cap"), locator=text("loc")
            ),
            admitted=text("admitted") == "true",
            effective_from=text("ef"),
            created_at=text("created") or "",
        )
    return out
