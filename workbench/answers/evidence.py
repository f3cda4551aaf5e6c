"""Evidence for answers: the words for terms, and recorded leaves with their sources.

Everything an answer needs is asked at once: one query gives the words for all its terms and
the provenance of all its records (:func:`describe`), whatever the size of its proofs. Plain
star patterns in a UNION, assembled here: an OPTIONAL or a GROUP BY costs 10x on this engine.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyoxigraph as ox

from workbench.ids import ENTITIES_GRAPH, META_GRAPH, ONTOLOGY_GRAPH, id_from_iri
from workbench.store import Row, Store
from workbench.values.answers import Recorded, Statement
from workbench.values.records import RecordType, Source, Status
from workbench.vocab import DCTERMS, PREFIXES, PROV, RDF, RDFS, SKOS, WB

Triple = tuple[ox.NamedNode | ox.BlankNode | ox.Literal, ox.NamedNode, ox.NamedNode | ox.BlankNode | ox.Literal]
Leaves = dict[tuple[Triple, str], Recorded]

_WORDS = "(wb:relationLabel, skos:prefLabel, rdfs:label, dcterms:identifier)"
_RECORD = "(dcterms:identifier, wb:recordType, wb:status, prov:generatedAtTime, wb:effectiveFrom, wb:admitted)"
_SOURCE = "(dcterms:identifier, prov:wasAttributedTo, prov:generatedAtTime, wb:locator)"


def _rank(p: str, g: str) -> int | None:
    """Which word for a term wins: relation label, registered name, any SKOS label, rdfs:label
    of a vocabulary term, record id (lower is better); None for a word that does not count."""
    if p == WB.relationLabel.value:
        return 1 if g == ONTOLOGY_GRAPH.value else None
    if p == SKOS.prefLabel.value:
        return 2 if g == ENTITIES_GRAPH.value else 3
    if p == RDFS.label.value:
        return 4 if g == ONTOLOGY_GRAPH.value else None
    return 5 if g == META_GRAPH.value else None


class Labels:
    """Words for terms: an entity's preferred name, a relation's label, a record's id."""

    def __init__(self, store: Store | None = None, terms: Iterable[object] = (), *, rows: Iterable[Row] = ()) -> None:
        self.words: dict[str, str] = {}
        found = list(rows)
        iris = _iris(terms)
        if store is not None and iris:
            found += store.select(PREFIXES + f"SELECT ?t ?lg ?lp ?w WHERE {{ {_words_pattern(iris)} }}")
        best: dict[str, tuple[int, str]] = {}
        for row in found:
            if row.get("w") is None:
                continue
            rank = _rank(row["lp"].value, row["lg"].value)  # type: ignore[union-attr]
            if rank is None:
                continue
            cand = (rank, row["w"].value)  # type: ignore[union-attr]
            t = row["t"].value  # type: ignore[union-attr]
            if t not in best or cand < best[t]:
                best[t] = cand
        self.words = {t: w for t, (_, w) in best.items()}
        self.words[RDF.type.value] = "is a"

    def __call__(self, term: object) -> str:
        if isinstance(term, ox.NamedNode):
            return self.words.get(term.value) or id_from_iri(term)
        if isinstance(term, ox.Literal):
            return term.value
        return str(term)

    def statement(self, triple: Triple) -> Statement:
        s, p, o = triple
        return Statement(str(s), str(p), str(o), f"{self(s)} {self(p)} {self(o)}")


def _iris(terms: Iterable[object]) -> list[str]:
    return sorted({t.value for t in terms if isinstance(t, ox.NamedNode)})


def _words_pattern(iris: list[str]) -> str:
    values = " ".join(f"<{i}>" for i in iris)
    return f"VALUES ?t {{ {values} }} GRAPH ?lg {{ ?t ?lp ?w }} FILTER(?lp IN {_WORDS})"


def _meta_pattern(records: list[str]) -> str:
    values = " ".join(f"<{r}>" for r in records)
    return f"""VALUES ?r {{ {values} }} GRAPH {META_GRAPH} {{
        {{ ?r ?p ?o FILTER(?p IN {_RECORD}) }}
        UNION {{ ?r prov:wasDerivedFrom ?src . ?src ?sp ?so FILTER(?sp IN {_SOURCE}) }} }}"""


def describe(
    store: Store, terms: Iterable[object], facts: Iterable[tuple[Triple, ox.NamedNode]]
) -> tuple[Labels, Leaves]:
    """Words for ``terms`` and recorded leaves for (triple, record) pairs, in one query."""
    pairs = list(dict.fromkeys(facts))
    iris = _iris([*terms, *(t for triple, _ in pairs for t in triple)])
    records = sorted({r.value for _, r in pairs})
    parts = [f"{{ {_words_pattern(iris)} }}"] if iris else []
    if records:
        parts.append(f"{{ {_meta_pattern(records)} }}")
    if not parts:
        return Labels(), {}
    rows = store.select(PREFIXES + "SELECT * WHERE { " + " UNION ".join(parts) + " }")
    labels = Labels(rows=[r for r in rows if r.get("t") is not None])
    return labels, _leaves([r for r in rows if r.get("r") is not None], pairs, labels)


def _leaves(rows: list[Row], pairs: list[tuple[Triple, ox.NamedNode]], labels: Labels) -> Leaves:
    meta: dict[str, dict[str, list[str]]] = {}
    for row in rows:
        entry = meta.setdefault(row["r"].value, {})  # type: ignore[union-attr]
        if row.get("p") is not None:
            entry.setdefault(row["p"].value, []).append(row["o"].value)  # type: ignore[union-attr]
        elif row.get("sp") is not None:
            entry.setdefault("src:" + row["sp"].value, []).append(row["so"].value)  # type: ignore[union-attr]
    out: Leaves = {}
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
