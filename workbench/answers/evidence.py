"""Evidence for answers: the words for terms, and recorded leaves with their sources.

Everything an answer needs is asked at once: one query gives the words for all its terms and
the provenance of all its records (:func:`describe`), whatever the size of its proofs. Plain
star patterns in a UNION, assembled here: an OPTIONAL or a GROUP BY costs 10x on this engine.
What was described is kept while the store's version stays (:class:`Described`): the kinds,
relations and common-sense records most proofs share are asked once, and a question's own
terms can ride with its first query (:meth:`Described.wanted`), a round trip fewer on a server.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import pyoxigraph as ox

from workbench.ids import ENTITIES_GRAPH, ONTOLOGY_GRAPH, SOURCE_PREFIX, id_from_iri
from workbench.records import meta
from workbench.store import Row, Store
from workbench.store.caches import PerStore
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
        return 2 if g == ENTITIES_GRAPH.value or g.startswith(SOURCE_PREFIX) else 3  # an entity's own
    if p == RDFS.label.value:
        return 4 if g == ONTOLOGY_GRAPH.value else None
    return 5 if g.startswith(SOURCE_PREFIX) else None  # a record's id, beside its source


class Labels:
    """Words for terms: an entity's preferred name, a relation's label, a record's id."""

    def __init__(self, store: Store | None = None, terms: Iterable[object] = (), *, rows: Iterable[Row] = (),
                 words: dict[str, str] | None = None) -> None:
        found = list(rows)
        iris = iris_of(terms)
        if store is not None and iris:
            found += store.select(PREFIXES + f"SELECT ?t ?lg ?lp ?w WHERE {{ {_words_pattern(iris)} }}")
        self.words: dict[str, str] = {**(words or {}), **best_words(found)}
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


def best_words(rows: Iterable[Row]) -> dict[str, str]:
    """Each term's word among :func:`_words_pattern`'s solutions: the best ranked (:func:`_rank`)."""
    best: dict[str, tuple[int, str]] = {}
    for row in rows:
        if row.get("w") is None:
            continue
        rank = _rank(row["lp"].value, row["lg"].value)  # type: ignore[union-attr]
        if rank is None:
            continue
        cand = (rank, row["w"].value)  # type: ignore[union-attr]
        t = row["t"].value  # type: ignore[union-attr]
        if t not in best or cand < best[t]:
            best[t] = cand
    return {t: w for t, (_, w) in best.items()}


def iris_of(terms: Iterable[object]) -> list[str]:
    """The IRIs among ``terms``, sorted, once each."""
    return sorted({t.value for t in terms if isinstance(t, ox.NamedNode)})


def _words_pattern(iris: list[str]) -> str:
    values = " ".join(f"<{i}>" for i in iris)
    return f"VALUES ?t {{ {values} }} GRAPH ?lg {{ ?t ?lp ?w }} FILTER(?lp IN {_WORDS})"


def _meta_pattern(records: list[str]) -> str:
    # VALUES inside each group that uses it: a group a reader's filter closes (access.rewrite) is
    # not evaluated per outer binding by Oxigraph, but on its own (82 s at 1.27M, not 3 ms)
    values = "VALUES ?r { " + " ".join(f"<{r}>" for r in records) + " }"
    return f"""{{ {values} {meta("?r", f"?r ?p ?o FILTER(?p IN {_RECORD})")} }}
        UNION {{ {values} {meta("?r", f"?r prov:wasDerivedFrom ?src . ?src ?sp ?so FILTER(?sp IN {_SOURCE})")} }}"""


class Described(PerStore):
    """The words of terms and the provenance of records, as :func:`describe` read them, kept
    for one readable store (the base store or a reader's view, so never what its reader may not
    see) while its version stays: both change only with a write, which moves the version. Found
    with :meth:`of`; thread-safe (a server answers in several threads)."""

    LIMIT = 20_000  # terms and records kept at most (about 0.9 KB each); past it the cache starts again

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self._version: str | None = None
        self._words: dict[str, str | None] = {}  # an IRI: its word (None: it has none)
        self._rows: dict[str, list[Row]] = {}  # a record: its provenance
        self._leaves: Leaves = {}  # what _leaves built from them
        self._lock = threading.Lock()

    def wanted(self, iris: Sequence[str], records: Sequence[str] = ()) -> tuple[list[str], list[str]]:
        """The ``iris`` and ``records`` (each sorted, once each: :func:`iris_of`) not described at
        this version."""
        return self.kept(iris, records)[2]

    def kept(self, iris: Sequence[str], records: Sequence[str] = ()
             ) -> tuple[dict[str, str], list[Row], tuple[list[str], list[str]]]:
        """What is kept of ``iris``' words and ``records``' provenance at this version (the
        words, the provenance's rows), and what is not (:meth:`wanted`), read at once: a later
        :meth:`take` may start the keeper again, so a question keeps its own."""
        version = self.store.version()  # inside a question's reading: asked once for all
        with self._lock:
            if version != self._version:
                self._version = version
                self._words.clear()
                self._rows.clear()
                self._leaves.clear()
            words: dict[str, str] = {}
            unnamed = []
            known = self._words
            for i in iris:
                if i not in known:
                    unnamed.append(i)
                elif (w := known[i]) is not None:
                    words[i] = w
            rows = [row for r in records for row in self._rows.get(r, ())]
            undescribed = [r for r in records if r not in self._rows]
        return words, rows, (unnamed, undescribed)

    def take(self, iris: Iterable[str], records: Iterable[str], rows: Iterable[Row]) -> None:
        """Keep what a query of :func:`pattern` for ``iris`` and ``records`` found (nothing
        found is kept too: such a term has no words)."""
        rows = list(rows)
        words: dict[str, str | None] = dict.fromkeys(iris)
        words.update((t, w) for t, w in best_words(r for r in rows if r.get("t") is not None).items() if t in words)
        found: dict[str, list[Row]] = {r: [] for r in records}
        for row in rows:
            if row.get("t") is None and (r := row["r"].value) in found:  # type: ignore[union-attr]
                found[r].append(row)
        with self._lock:
            if len(self._words) + len(self._rows) + len(words) + len(found) > self.LIMIT:
                self._words.clear()
                self._rows.clear()
                self._leaves.clear()
            self._words.update(words)
            self._rows.update(found)

    def leaves(self, pairs: list[tuple[Triple, ox.NamedNode]], labels: Labels, rows: list[Row]) -> Leaves:
        """The recorded leaves of ``pairs``, from their records' provenance ``rows``, built once
        a version."""
        with self._lock:
            version = self._version
            out = {k: leaf for t, r in pairs if (leaf := self._leaves.get(k := (t, r.value))) is not None}
        todo = [(t, r) for t, r in pairs if (t, r.value) not in out]
        if todo:
            out.update(built := _leaves(rows, todo, labels))
            with self._lock:
                if version == self._version:
                    if len(self._leaves) + len(built) > self.LIMIT:
                        self._leaves.clear()
                    self._leaves.update(built)
        return out


def pattern(iris: list[str], records: list[str]) -> str | None:
    """A group pattern for the words of ``iris`` and the provenance of ``records`` (rows with
    ?t and ?r apart), or None for nothing to ask."""
    parts = [f"{{ {_words_pattern(iris)} }}"] if iris else []
    if records:
        parts.append(f"{{ {_meta_pattern(records)} }}")
    return " UNION ".join(parts) or None


def describe(
    store: Store, terms: Iterable[object], facts: Iterable[tuple[Triple, ox.NamedNode]]
) -> tuple[Labels, Leaves]:
    """Words for ``terms`` and recorded leaves for (triple, record) pairs, in one query for what
    the store's :class:`Described` does not hold yet (none when it holds everything)."""
    pairs = list(dict.fromkeys(facts))
    iris = iris_of([*terms, *(t for triple, _ in pairs for t in triple)])
    records = sorted({r.value for _, r in pairs})
    kept = Described.of(store)
    words, rows, missing = kept.kept(iris, records)
    found: list[Row] = []
    if (asked := pattern(*missing)) is not None:
        found = store.select(PREFIXES + f"SELECT * WHERE {{ {asked} }}")
        kept.take(*missing, found)
        rows += [r for r in found if r.get("t") is None]
    labels = Labels(rows=[r for r in found if r.get("t") is not None], words=words)
    return labels, kept.leaves(pairs, labels, rows)


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
