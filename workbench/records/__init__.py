"""Reading records back: one by id, a filtered list (normal, as-of), and the audit chain.

Normal reads see active records. An as-of read sees what was effective on a date: a record applies
from its effective_from (or, lacking one, from its source's captured_at, or from when it was
recorded) until its effective_to or until a record that supersedes it starts to apply. Retracted
records are seen by the audit only. Dates compare at day granularity.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import pyoxigraph as ox

from workbench import limits
from workbench.errors import Invalid, NotFound, Unsupported
from workbench.ids import TOKENS_GRAPH, id_from_iri, record_iri
from workbench.store import Store
from workbench.store.base import reach
from workbench.store.caches import Kept
from workbench.values.records import Record, RecordType, Source, Status, Tombstone
from workbench.vocab import DCTERMS, PREFIXES, PROV, WB

# The inverse of SUPERSEDES, named only inside queries here; never stored.
_SUPERSEDED_BY = ox.NamedNode("urn:wb:query:superseded-by")


def check_date(text: str, what: str = "date") -> str:
    """An ISO date (YYYY-MM-DD) for as-of reads; a date-time is cut to its day."""
    day = text[:10]
    try:
        dt.date.fromisoformat(day)
    except ValueError:
        raise Invalid(f"{what} must be an ISO date like 2026-05-01, not {text!r}") from None
    return day


def as_of_day(store: Store, as_of: str | None, what: str = "date") -> str | None:
    """A read's as-of date, checked (:func:`check_date`); Unsupported where the store's engine gets
    such reads wrong (``Capabilities.as_of_reads``): refused, never answered wrongly."""
    if not as_of:
        return None
    day = check_date(as_of, what)
    if not store.capabilities.as_of_reads:
        raise Unsupported(f"reading as of a date is not available on this store's engine "
                          f"({store.capabilities.engine}): it keeps superseded records in such reads "
                          "(docs/deployment.md); ask without a date")
    return day


def meta_graph(r: str) -> str:
    """The variable for the graph that holds the metadata of the assertion ``r`` (a variable, or
    an IRI in angle brackets): its source's graph, where the source is described too. Named after
    ``r``, so every pattern about one record in a query names the same graph.

    >>> meta_graph("?g"), meta_graph("<urn:wb:record:r1>")
    ('?_g_m', '?_m_3779cd3f0d')
    """
    if r.startswith(("?", "$")):
        return f"?_{r[1:]}_m"
    return "?_m_" + hashlib.sha256(r.encode()).hexdigest()[:10]


def meta(r: str, body: str) -> str:
    """``body``, triples about the assertion ``r``, in the graph that holds its metadata."""
    return f"GRAPH {meta_graph(r)} {{ {body} }}"


def applies_from(r: str, out: str) -> str:
    """SPARQL, to put inside :func:`meta` of ``r``, binding ``out`` to when the assertion ``r`` (a
    variable) started to apply: its effective_from; lacking one, when its source said it (the
    source's captured_at, in the same graph); lacking that, when it was recorded."""
    v = "?_" + r.lstrip("?$") + "_a"
    return f"""{r} prov:generatedAtTime {v}c . OPTIONAL {{ {r} wb:effectiveFrom {v}f }}
        OPTIONAL {{ {r} prov:wasDerivedFrom {v}s . {v}s prov:generatedAtTime {v}sc }}
        BIND(COALESCE({v}f, {v}sc, {v}c) AS {out})"""


def effective(r: str = "?r", *, as_of: str | None = None, status: Status | None = Status.ACTIVE) -> str:
    """SPARQL keeping the assertions ``r`` (a variable) that a read sees, each read in the graph
    that holds its metadata (:func:`meta`): those with ``status`` for a normal read, those
    effective on ``as_of`` for an as-of read (from when they started to apply,
    :func:`applies_from`, until their effective_to or until a record that supersedes them starts
    to apply). Every variable it adds is named after ``r``, so several can share a query."""
    v = "?_" + r.lstrip("?$")
    if as_of is None:
        if status is Status.ACTIVE:
            return meta(r, f"{r} wb:status {status.iri} .") + unsuperseded(r)
        if status is Status.SUPERSEDED:
            return meta(r, f"{r} wb:status {v}_st . FILTER({v}_st IN (wb:Active, wb:Superseded))") + (
                f" FILTER({v}_st = wb:Superseded || EXISTS {{ GRAPH {v}_byg {{ {v}_by wb:supersedes {r} }} }})")
        return meta(r, f"{r} wb:status {status.iri} .") if status else ""
    d = ox.Literal(check_date(as_of))
    return meta(r, f"""{r} wb:status {v}_st . FILTER({v}_st != wb:Retracted)
        {applies_from(r, v + "_from")} OPTIONAL {{ {r} wb:effectiveTo {v}_t }}
        FILTER(SUBSTR(STR({v}_from), 1, 10) <= {d})
        FILTER(!BOUND({v}_t) || SUBSTR(STR({v}_t), 1, 10) > {d})""") + f"""
        FILTER NOT EXISTS {{ {meta(v + "_n", f"{v}_n wb:supersedes {r} . {applies_from(v + '_n', v + '_nfrom')}")}
            FILTER(SUBSTR(STR({v}_nfrom), 1, 10) <= {d}) }}"""


def active(store: Store, record: ox.NamedNode | ox.BlankNode) -> bool:
    """Whether a normal read sees the assertion ``record``, as :func:`effective` with no as-of
    date keeps it (active, and no record superseding it), read by quad patterns: for a store
    whose patterns are cheap (:attr:`Store.cheap_patterns`). Kept while the store's version
    stays (:class:`_Active`)."""
    return _Active.of(store).many([record], functools.partial(_active, store))[record]


def _active(store: Store, records: list[ox.NamedNode | ox.BlankNode]) -> dict[ox.NamedNode | ox.BlankNode, bool]:
    return {r: bool(store.matching(r, WB.status, WB.Active)) and not store.matching(None, WB.supersedes, r)
            for r in records}


def seen(store: Store, s: ox.NamedNode | ox.BlankNode | ox.Literal | None, p: ox.NamedNode | None,
         o: ox.NamedNode | ox.BlankNode | ox.Literal | None) -> Sequence[ox.Quad]:
    """The quads matching ``s p o`` in the records a normal read sees (:func:`active`): what
    ``GRAPH ?g { s p o }`` with :func:`effective` reads, by quad patterns. Kept while the
    store's version stays (:class:`_Seen`) when they are at most :data:`SEEN_KEPT`: a question
    asked again, or another about the same thing, reads its recorded facts once a version (a
    pattern over a whole class is read again rather than held)."""
    return _Seen.of(store).one((s, p, o), functools.partial(_seen, store, s, p, o), _few)


SEEN_KEPT = 1_000  # a pattern's matches kept for the version at most


def _few(quads: Sequence[ox.Quad]) -> bool:
    return len(quads) <= SEEN_KEPT


def _seen(store: Store, s: ox.NamedNode | ox.BlankNode | ox.Literal | None, p: ox.NamedNode | None,
          o: ox.NamedNode | ox.BlankNode | ox.Literal | None) -> tuple[ox.Quad, ...]:
    quads = store.matching(s, p, o)
    if not quads:
        return ()
    graphs: list[ox.NamedNode | ox.BlankNode] = [q.graph_name for q in quads]  # type: ignore[misc]  # named only
    sees = _Active.of(store).many(graphs, functools.partial(_active, store))
    return tuple(q for q, g in zip(quads, graphs, strict=True) if sees[g])


class _Active(Kept):
    """:func:`active` for the records asked about, kept for one store while its version stays:
    a record's status, and what supersedes it, change only by a write, which moves it."""

    LIMIT = 100_000


class _Seen(Kept):
    """:func:`seen`'s quads for the patterns asked, kept for one store while its version stays
    (what a record says, and whether it is seen, change only by a write, which moves it). A
    tuple each: handed out as kept, never changed."""

    LIMIT = 50_000


def find(
    store: Store,
    *,
    as_of: str | None = None,
    status: Status | None = Status.ACTIVE,
    record_type: RecordType | None = None,
    about: ox.NamedNode | None = None,
    limit: int | None = None,
) -> list[Record]:
    """Records matching the filters, oldest first (by when they started to apply, then id).
    ``limit``, when given, is a count from 1 to ``limits.MAX_COUNT`` (Invalid naming ``limit``)."""
    as_of = as_of_day(store, as_of)
    if limit is not None:
        limit = limits.check_count(limit, "limit")
    type_filter = f"?r wb:recordType {record_type.iri} ." if record_type else ""
    about_filter = f"?r wb:about {about} ." if about is not None else ""
    described = f"""?r a wb:Assertion ; wb:status ?st ; dcterms:identifier ?id .
        {type_filter} {about_filter} {applies_from("?r", "?from")}"""
    rows = store.select(
        PREFIXES
        + f"""SELECT ?r WHERE {{ {meta("?r", described)}
            {effective("?r", as_of=as_of, status=status)} }}
        ORDER BY STR(?from) ?id {"" if limit is None else f"LIMIT {limit}"}"""
    )
    return load(store, [row["r"] for row in rows])  # type: ignore[misc]


def unsuperseded(r: str) -> str:
    """SPARQL keeping the assertion ``r`` only if no record the read sees supersedes it. A record's
    own status says "superseded" only when whoever sees it sees its successor too; a narrower
    successor (a private correction of a public record) supersedes it by its link alone."""
    v = "?_" + r.lstrip("?$") if r.startswith(("?", "$")) else "?_" + meta_graph(r)[4:]
    return f"FILTER NOT EXISTS {{ GRAPH {v}_byg {{ {v}_by wb:supersedes {r} }} }}"


def shown_status(r: str, stored: str, out: str) -> str:
    """SPARQL binding ``out`` to the status of the assertion ``r`` (a variable) as the read sees
    it, from its own status ``stored`` (a variable bound in its metadata): superseded when a
    record the read sees supersedes it (see :func:`unsuperseded`). To put after the pattern
    binding ``stored``, in the same group."""
    # OPTIONAL, not EXISTS inside IF, which Virtuoso 7 cannot parse; a record twice superseded
    # gives two rows that differ only in variables a read does not select (select DISTINCT).
    v = "?_" + r.lstrip("?$")
    return (f"OPTIONAL {{ GRAPH {v}_byg {{ {v}_by wb:supersedes {r} }} }} "
            f"BIND(IF({stored} = wb:Active && BOUND({v}_by), wb:Superseded, {stored}) AS {out})")


def status_and_home(store: Store, iri: ox.NamedNode) -> tuple[Status, ox.NamedNode] | None:
    """A record's status as ``store`` shows it (superseded by a record it sees, whatever the
    record's own status says), and the graph of its metadata (its source's); None if unknown."""
    rows = store.select(PREFIXES + f"""SELECT ?s ?m ?by WHERE {{ GRAPH ?m {{ {iri} a wb:Assertion ; wb:status ?s }}
        OPTIONAL {{ GRAPH ?x {{ ?by wb:supersedes {iri} }} }} }} LIMIT 1""")
    if not rows:
        return None
    status = Status.from_iri(rows[0]["s"].value)  # type: ignore[union-attr]
    if status is Status.ACTIVE and rows[0]["by"] is not None:
        status = Status.SUPERSEDED
    return status, rows[0]["m"]  # type: ignore[return-value]


def get(store: Store, record_id: str) -> Record:
    records = load(store, [record_iri(record_id)])
    if not records:
        stone = tombstone(store, record_iri(record_id))
        if stone:
            raise NotFound(f"record {record_id!r} was erased on {stone.erased_at} ({stone.reason})")
        raise NotFound(f"no record {record_id!r}")
    return records[0]


def load(store: Store, iris: Iterable[ox.NamedNode]) -> list[Record]:
    """Records for these assertion IRIs, in the order given; unknown IRIs are skipped."""
    order = list(dict.fromkeys(iris))
    if not order:
        return []
    values = " ".join(str(i) for i in order)
    rows = store.select(
        PREFIXES
        + f"""SELECT ?r ?p ?o ?sp ?so WHERE {{ VALUES ?r {{ {values} }}
            {{ {meta("?r", "?r ?p ?o")} }}
            UNION {{ {meta("?n", "?n wb:supersedes ?r")} BIND({_SUPERSEDED_BY} AS ?p) BIND(?n AS ?o) }}
            UNION {{ {meta("?r", "?r prov:wasDerivedFrom ?src . ?src ?sp ?so")} }} }}"""
    )
    found: dict[str, dict[str, list[ox.NamedNode | ox.Literal]]] = {}
    for row in rows:
        r = row["r"].value  # type: ignore[union-attr]
        entry = found.setdefault(r, {})
        if row["p"] is not None:
            entry.setdefault(row["p"].value, []).append(row["o"])  # type: ignore[arg-type]
        if row["sp"] is not None:
            entry.setdefault("source:" + row["sp"].value, []).append(row["so"])  # type: ignore[arg-type]
    triples = _content(store, [i for i in order if i.value in found])
    return [
        _record(i, found[i.value], triples.get(i.value, ()))
        for i in order
        if i.value in found and (WB.statement.value in found[i.value])
    ]


def _content(store: Store, graphs: list[ox.NamedNode]) -> dict[str, tuple[tuple[str, str, str], ...]]:
    if not graphs:
        return {}
    values = " ".join(str(g) for g in graphs)
    rows = store.select(
        f"SELECT ?g ?s ?p ?o WHERE {{ VALUES ?g {{ {values} }} GRAPH ?g {{ ?s ?p ?o }} }} ORDER BY ?g ?s ?p ?o"
    )
    out: dict[str, list[tuple[str, str, str]]] = {}
    for row in rows:
        out.setdefault(row["g"].value, []).append((str(row["s"]), str(row["p"]), str(row["o"])))  # type: ignore[union-attr]
    return {g: tuple(ts) for g, ts in out.items()}


def _record(
    iri: ox.NamedNode, m: dict[str, list[ox.NamedNode | ox.Literal]], triples: tuple[tuple[str, str, str], ...]
) -> Record:
    def one(key: str) -> str | None:
        values = m.get(key)
        return values[0].value if values else None

    def many(key: str) -> tuple[str, ...]:
        return tuple(sorted(v.value for v in m.get(key, [])))

    def agent(key: str) -> str | None:
        value = one(key)
        return id_from_iri(ox.NamedNode(value)) if value else None

    src_iri = one(PROV.wasDerivedFrom.value) or ""
    source = Source(
        id=one("source:" + DCTERMS.identifier.value) or id_from_iri(ox.NamedNode(src_iri)),
        said_by=", ".join(sorted(id_from_iri(ox.NamedNode(v)) for v in many("source:" + PROV.wasAttributedTo.value))),
        captured_at=one("source:" + PROV.generatedAtTime.value),
        locator=one("source:" + WB.locator.value),
        text=one("source:" + WB.sourceText.value),
        visible_to=tuple(id_from_iri(ox.NamedNode(v)) for v in many("source:" + WB.visibleTo.value)),
    )
    return Record(
        id=one(DCTERMS.identifier.value) or id_from_iri(iri),
        iri=iri.value,
        statement=one(WB.statement.value) or "",
        type=RecordType.from_iri(one(WB.recordType.value) or WB.Observation.value),
        status=Status.SUPERSEDED if m.get(_SUPERSEDED_BY.value) and one(WB.status.value) == WB.Active.value
        else Status.from_iri(one(WB.status.value) or WB.Active.value),  # see unsuperseded()
        source=source,
        created_at=one(PROV.generatedAtTime.value) or "",
        said_by=agent(PROV.wasAttributedTo.value) or "",
        effective_from=one(WB.effectiveFrom.value),
        effective_to=one(WB.effectiveTo.value),
        extracted_by=agent(WB.extractedBy.value),
        prompt_version=one(WB.promptVersion.value),
        confirmed_by=agent(WB.confirmedBy.value),
        about=many(WB.about.value),
        applies_to=many(WB.appliesTo.value),
        decided_by=one(WB.decidedBy.value),
        supersedes=tuple(id_from_iri(ox.NamedNode(v)) for v in many(WB.supersedes.value)),
        superseded_by=tuple(id_from_iri(ox.NamedNode(v)) for v in many(_SUPERSEDED_BY.value)),
        admitted=one(WB.admitted.value) == "true",
        triples=triples,
    )


def chain(store: Store, record_id: str) -> list[Record | Tombstone]:
    """The audit view: every record linked to this one by SUPERSEDES, oldest first; erased links
    appear as their tombstones."""
    start = record_iri(record_id)
    out = chains(store, [start])[1][start]
    if not out:
        get(store, record_id)  # raises the right NotFound
    return out


def chains(store: Store, starts: Sequence[ox.NamedNode]
           ) -> tuple[dict[str, Record], dict[ox.NamedNode, list[Record | Tombstone]]]:
    """:func:`chain` for several records at once, read together (the links a level a query for
    all of them, then each record once): every record read, by IRI, and each start's chain."""
    reached = reach(store, meta_graph("?a"), WB.supersedes, list(starts), backward=True)
    records = {r.iri: r for r in load(store, [i for s in starts for i in reached[s]])}
    return records, {s: _ordered(store, reached[s], records) for s in starts}


def _ordered(store: Store, iris: list[ox.NamedNode], records: dict[str, Record]) -> list[Record | Tombstone]:
    out: list[Record | Tombstone] = []
    for iri in iris:
        rec = records.get(iri.value)
        if rec is not None:
            out.append(rec)
        else:
            stone = tombstone(store, iri)
            if stone:
                out.append(stone)
    by_id = {x.id: x for x in out if isinstance(x, Record)}
    rank: dict[str, int] = {}

    def later(rid: str) -> int:  # how far down the chain of what it supersedes goes: a tie's order
        if rid not in rank:
            rank[rid] = 0
            rec = by_id.get(rid)
            rank[rid] = 1 + max((later(s) for s in rec.supersedes), default=-1) if rec else 0
        return rank[rid]

    return sorted(out, key=lambda x: (x.created_at, later(x.id)) if isinstance(x, Record) else (x.erased_at, 0))


def tombstone(store: Store, iri: ox.NamedNode) -> Tombstone | None:
    rows = store.select(
        PREFIXES + f"SELECT ?kind ?who ?when ?why WHERE {{ GRAPH ?stone {{ {iri} a wb:Tombstone ; "
        "wb:erasedKind ?kind ; prov:wasAttributedTo ?who ; prov:invalidatedAtTime ?when ; wb:reason ?why } }"
    )
    if not rows:
        return None
    r = {k: v for k, v in rows[0].items() if v is not None}
    return Tombstone(
        iri=iri.value,
        kind=r["kind"].value,
        erased_by=id_from_iri(ox.NamedNode(r["who"].value)),
        erased_at=r["when"].value,
        reason=r["why"].value,
    )


def stats(store: Store) -> dict[str, Any]:
    """Counts of records by type and status, sources, entities, tombstones and quads."""
    rows = store.select(
        PREFIXES + "SELECT ?t ?s (COUNT(DISTINCT ?r) AS ?n) WHERE { "
        + meta("?r", "?r a wb:Assertion ; wb:recordType ?t ; wb:status ?own") + shown_status("?r", "?own", "?s")
        + " } GROUP BY ?t ?s"
    )
    by_type: dict[str, int] = {}
    by_status: dict[str, int] = {}
    for r in rows:
        n = int(r["n"].value)  # type: ignore[union-attr]
        t = RecordType.from_iri(r["t"].value).value  # type: ignore[union-attr]
        s = Status.from_iri(r["s"].value).value  # type: ignore[union-attr]
        by_type[t] = by_type.get(t, 0) + n
        by_status[s] = by_status.get(s, 0) + n
    # Token hashes are not counted (nor their graph, nor any left in the users graph by an older
    # store): a reader's view holds none, and the count would tell a restricted reader from one
    # who reads the store.
    # per graph, so that a reader's store filters graphs, not every quad (Store.per_graph)
    counts = store.per_graph(
        PREFIXES + "SELECT ?g "
        "(SUM(IF(?g = ?s && ?p = rdf:type && ?o = wb:Source, 1, 0)) AS ?sources) (COUNT(*) AS ?quads) "
        f"WHERE {{ GRAPH ?g {{ ?s ?p ?o }} FILTER(?p != wb:tokenHash && ?g != {TOKENS_GRAPH}) }} GROUP BY ?g"
    )
    # an entity may be described in several graphs (beside each restricted record that named it)
    tomb = store.select(
        PREFIXES + "SELECT (COUNT(DISTINCT ?t) AS ?n) (COUNT(DISTINCT ?e) AS ?entities) WHERE { "
        "{ GRAPH ?stone { ?t a wb:Tombstone } } UNION { GRAPH ?d { ?e a wb:Entity } } }"
    )[0]
    return {
        "records": sum(by_type.values()),
        "by_type": dict(sorted(by_type.items())),
        "by_status": dict(sorted(by_status.items())),
        "sources": sum(int(r["sources"].value) for r in counts if r["sources"] is not None),
        "entities": int(tomb["entities"].value),  # type: ignore[union-attr]
        "tombstones": int(tomb["n"].value),  # type: ignore[union-attr]
        "quads": sum(int(r["quads"].value) for r in counts if r["quads"] is not None),
    }
