"""Planning an import of memory records (JSON Lines): bind names, build assertions, check all.

Names bind exactly to existing entities; a name that matches none creates a new entity, recorded
as created by this import; a name that matches several stops the import, naming the candidates.
A record already imported with the same content is left alone; a different record under a taken
id, or an id that was erased, is refused.

A triple whose relation label starts with "not " records a negative fact: an OWL 2
``owl:NegativePropertyAssertion`` (a blank node) in the record's graph, see :func:`negative_quads`.
A record that says a fact and its negative is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from workbench.access import audience
from workbench.access.writes import Writer, check_term, everything, taken
from workbench.errors import Conflict, Forbidden, Invalid
from workbench.ids import ENTITIES_GRAPH, record_iri, source_iri
from workbench.imports import literals
from workbench.imports.common import (
    AssertionSpec,
    Plan,
    SourceSpec,
    assertion_quads,
    check_shapes,
    source_quads,
)
from workbench.names import entities, given
from workbench.names.keys import name_key
from workbench.names.relations import Relations, negated
from workbench.records import jsonl, meta, status_and_home
from workbench.records.acts import import_activity, run_per_source
from workbench.store import Batch, Store
from workbench.values.records import Status
from workbench.vocab import OWL, PREFIXES, RDF, WB, XSD

_PREFIXED = {
    "xsd:": "http://www.w3.org/2001/XMLSchema#",
    "rdf:": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs:": "http://www.w3.org/2000/01/rdf-schema#",
    "wb:": "https://w3id.org/workbench/ns#",
    "skos:": "http://www.w3.org/2004/02/skos/core#",
    "owl:": "http://www.w3.org/2002/07/owl#",
}




def negative_quads(fact: ox.Triple, graph: ox.NamedNode) -> list[ox.Quad]:
    """The negative of ``fact`` in ``graph``, the OWL 2 way: a fresh blank node that is an
    ``owl:NegativePropertyAssertion`` with the fact's subject, predicate and object (an entity's
    as ``owl:targetIndividual``, a literal as ``owl:targetValue``).

    >>> s, p, o = ox.NamedNode("urn:wb:entity:my-car"), WB.needs, ox.NamedNode("urn:wb:entity:charging")
    >>> [(q.predicate.value.split("#")[1], q.object) for q in negative_quads(ox.Triple(s, p, o), record_iri("r1"))]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('type', <NamedNode value=http://www.w3.org/2002/07/owl#NegativePropertyAssertion>),
     ('sourceIndividual', <NamedNode value=urn:wb:entity:my-car>),
     ('assertionProperty', <NamedNode value=https://w3id.org/workbench/ns#needs>),
     ('targetIndividual', <NamedNode value=urn:wb:entity:charging>)]
    """
    node = ox.BlankNode()
    target = OWL.targetValue if isinstance(fact.object, ox.Literal) else OWL.targetIndividual
    return [
        ox.Quad(node, RDF.type, OWL.NegativePropertyAssertion, graph),
        ox.Quad(node, OWL.sourceIndividual, fact.subject, graph),
        ox.Quad(node, OWL.assertionProperty, fact.predicate, graph),
        ox.Quad(node, target, fact.object, graph),
    ]


def expand(text: str) -> ox.NamedNode | None:
    """``<iri>`` or ``prefix:local`` for a known prefix, else None. Raises Forbidden for one of
    Workbench's own IRIs or bookkeeping terms (:mod:`workbench.access.writes`)."""
    iri = None
    if text.startswith("<") and text.endswith(">"):
        iri = text[1:-1]
    for prefix, ns in _PREFIXED.items():
        if text.startswith(prefix) and " " not in text:
            iri = ns + text[len(prefix) :]
    if iri is None:
        return None
    try:
        node = ox.NamedNode(iri)
    except ValueError as exc:
        raise Invalid(f"{text} is not a valid IRI ({exc})") from None
    check_term(node, None)
    return node


class RecordsPlanner:
    """Plans an import of memory records by a writer: what the records name (the records they
    supersede, the sources they cite, the names they bind, the relations) is looked up in the
    writer's view, so a write answers as if what they may not see did not exist."""

    def __init__(self, store: Store, *, actor: str, now: str, writer: Writer | None = None) -> None:
        self.store = store
        self.writer = writer or everything(store)
        self.seen = self.writer.seen
        self.actor = actor
        self.now = now

    def plan(self, paths: Sequence[Path], *, used: Sequence[str] | None = None) -> Plan:
        """The import of these JSON Lines files, not yet written. ``used`` names what the import
        used in its provenance, when the files are only a vehicle (a candidate being approved)."""
        records: list[jsonl.RecordIn] = []
        seen: dict[str, str] = {}
        file_of: dict[str, str] = {}
        for path in paths:
            for rec in jsonl.parse_file(path):
                if rec.id in seen:
                    raise Invalid(f"record id {rec.id!r} is also used at {seen[rec.id]}", where=rec.where)
                seen[rec.id] = rec.where
                file_of[rec.id] = str(path)
                records.append(rec)
        activity = import_activity(self.actor, self.now, ())[0]
        plan = Plan(batch=Batch(), files=tuple(str(p) for p in paths), activity=activity)
        todo = self._new_records(records, plan)
        if not todo:
            plan.batch = Batch()  # nothing new: leave no trace of an empty import
            return plan
        bind = self._bind_names(todo, plan)
        relations = Relations.load(self.seen)
        in_batch = {r.id for r in todo}
        sources: dict[str, tuple[SourceSpec, str]] = {}
        self._superseded: set[ox.NamedNode] = set()
        self._replaced: set[ox.NamedNode] = set()  # superseded for whoever sees them (see _supersedes)
        self._batch_seen = {rec.id: rec.visible_to for rec in todo}
        for rec in todo:
            self._add_record(rec, plan, bind, relations, sources, in_batch)
        files: dict[str, list[str]] = {}
        for rec in todo:
            files.setdefault(rec.source.id, []).extend(used or [file_of[rec.id]])
        plan.batch.quads += run_per_source(self.actor, self.now, activity, files)
        # Records superseded by another record of this same import land superseded.
        landing = {record_iri(i) for i in in_batch} & self._replaced
        stale = {q for q in plan.batch.quads
                 if q.subject in landing and q.predicate == WB.status and q.object == Status.ACTIVE.iri}
        plan.batch.quads = [q for q in plan.batch.quads if q not in stale]
        plan.batch.quads += [
            ox.Quad(q.subject, WB.status, Status.SUPERSEDED.iri, q.graph_name) for q in sorted(stale, key=str)
        ]
        check_shapes(plan.batch.quads, plan.origins)
        return plan

    # -------------------------------------------------------------- steps

    def _new_records(self, records: list[jsonl.RecordIn], plan: Plan) -> list[jsonl.RecordIn]:
        if not records:
            return []
        values = " ".join(str(record_iri(r.id)) for r in records)
        rows = self.store.select(
            PREFIXES + f"SELECT ?r ?d ?erased WHERE {{ VALUES ?r {{ {values} }} "
            f"{{ {meta('?r', '?r a wb:Assertion OPTIONAL { ?r wb:recordDigest ?d }')} }} UNION "
            f"{{ GRAPH ?stone {{ ?r a wb:Tombstone }} BIND(true AS ?erased) }} }}"
        )
        existing = {row["r"].value: row for row in rows}  # type: ignore[union-attr]
        seen = existing
        if self.writer.restricted and existing:
            rows = self.seen.select(
                PREFIXES + f"SELECT ?r WHERE {{ VALUES ?r {{ {' '.join(f'<{r}>' for r in existing)} }} "
                f"{{ {meta('?r', '?r a wb:Assertion')} }} UNION "
                f"{{ GRAPH ?stone {{ ?r a wb:Tombstone }} }} }}"
            )
            seen = {r["r"].value: existing[r["r"].value] for r in rows}  # type: ignore[union-attr]
        todo = []
        for rec in records:
            row = existing.get(record_iri(rec.id).value)
            if row is None:
                todo.append(rec)
            elif record_iri(rec.id).value not in seen:
                raise taken("record", rec.id, rec.where)
            elif row["erased"] is not None:
                raise Conflict(f"record {rec.id!r} was erased; an erased id cannot be imported again", where=rec.where)
            elif row["d"] is not None and row["d"].value == rec.digest:
                plan.records_unchanged += 1
            else:
                raise Conflict(
                    f"record {rec.id!r} already exists with different content; to correct it, import a new "
                    f'record with "supersedes": {rec.id!r}',
                    where=rec.where,
                )
        return todo

    def _bind_names(self, records: list[jsonl.RecordIn], plan: Plan) -> dict[str, ox.NamedNode]:
        """Name key -> entity, for every name the records use, bound in the writer's view; new
        entities are planned. Each entity is noted as named in each record that names it
        (``wb:namedIn``): its names are seen by whoever may see one of those records."""
        first: dict[str, tuple[str, str]] = {}  # key -> (name as written, where)
        naming: dict[str, list[jsonl.RecordIn]] = {}  # key -> the records that name it
        for rec in records:
            names = list(rec.about) + list(rec.applies_to)
            names += [rec.decided_by] if rec.decided_by else []
            try:
                for s, _, o in rec.triples:
                    names += [x for x in (s, o) if isinstance(x, str) and expand(x) is None]
            except (Invalid, Forbidden) as exc:
                raise type(exc)(f"triples: {exc.message}", where=rec.where) from None
            for name in names:
                key = name_key(name)
                first.setdefault(key, (name, rec.where))
                if rec not in naming.setdefault(key, []):
                    naming[key].append(rec)
        bound = entities.resolve_keys(self.seen, first)
        entities.check_bindings(bound, {k: w for k, (_, w) in first.items()})
        described = entities.descriptions(self.store, {i for iris in bound.values() for i in iris})
        out: dict[str, ox.NamedNode] = {}
        minted: set[str] = set()
        for key, iris in sorted(bound.items()):
            # Where the entity is described: the entities graph once a record anyone may see
            # names it; else beside each restricted record that names it (its source's graph).
            private = all(r.visible_to for r in naming[key])
            homes = sorted({source_iri(r.source.id) for r in naming[key]}, key=str) if private else [ENTITIES_GRAPH]
            if iris:
                out[key] = ox.NamedNode(iris[0])
                have = described.get(iris[0], {})
                if have and ENTITIES_GRAPH not in have:  # copies, with its aliases, where it is not yet
                    said = given.held(self.store, out[key], min(have, key=str))
                    plan.batch.quads += [ox.Quad(q.subject, q.predicate, q.object, g) for g in homes if g not in have
                                         for q in said]
            else:
                name, where = first[key]
                # An entity only restricted records name gets an IRI that does not spell a
                # name others could mint: a later "Mia" from someone who may not see it is
                # minted as if it did not exist.
                seed = f"{record_iri(naming[key][0].id).value} {key}" if private else None
                iri = entities.mint(self.store, name, minted, seed=seed)
                for g in homes:
                    plan.batch.quads += entities.entity_quads(iri, name, plan.activity, graph=g)
                plan.origins[iri.value] = where
                plan.new_entities.append(iri.value)
                out[key] = iri
            # each naming record's link is beside the record's metadata, seen with it
            plan.batch.quads += [ox.Quad(out[key], WB.namedIn, record_iri(r.id), source_iri(r.source.id))
                                 for r in naming[key]]
        return out

    def _add_record(
        self,
        rec: jsonl.RecordIn,
        plan: Plan,
        bind: dict[str, ox.NamedNode],
        relations: Relations,
        sources: dict[str, tuple[SourceSpec, str]],
        in_batch: set[str],
    ) -> None:
        graph = record_iri(rec.id)
        plan.origins[graph.value] = rec.where
        facts = [self._triple(t, i, rec, bind, relations) for i, t in enumerate(rec.triples)]
        problems = literals.check(t.object for t, _ in facts if isinstance(t.object, ox.Literal))
        if problems:
            raise Invalid(problems[0].message, where=rec.where)
        said: dict[ox.Triple, int] = {}  # a fact this record says -> its first triples[i]
        denied: dict[ox.Triple, int] = {}  # the same for the facts it says are not so
        for i, (t, negative) in enumerate(facts):
            (denied if negative else said).setdefault(t, i)
        for t, i in sorted(denied.items(), key=lambda item: item[1]):
            if t in said:
                j = said[t]
                first, second = sorted((i, j))
                raise Invalid(
                    f"triples[{second}] contradicts triples[{first}]: a record cannot say "
                    f"{rec.triples[j][1]!r} and {rec.triples[i][1]!r} of the same subject and object",
                    where=rec.where,
                )
        plan.batch.quads += [ox.Quad(t.subject, t.predicate, t.object, graph) for t, negative in facts if not negative]
        for t in denied:
            plan.batch.quads += negative_quads(t, graph)

        src = SourceSpec(
            rec.source.id,
            rec.source.said_by,
            rec.source.captured_at,
            rec.source.text,
            rec.source.locator,
            rec.visible_to,
        )
        self._add_source(src, rec.where, plan, sources)
        supports = []
        for item in rec.supported_by:
            if isinstance(item, str):
                if item not in sources and not self._source_exists(item):
                    raise Invalid(
                        f"supported_by: no source {item!r} is recorded; describe it as an object with id and said_by",
                        where=rec.where,
                    )
                cited = sources[item][0].visible_to if item in sources else audience.of_source(
                    self.store, source_iri(item))
                audience.check_named(f"record {rec.id!r}", rec.visible_to, f"source {item!r}", cited, where=rec.where)
                supports.append(item)
            else:
                self._add_source(
                    SourceSpec(item.id, item.said_by, item.captured_at, item.text, item.locator, rec.visible_to),
                    rec.where,
                    plan,
                    sources,
                )
                supports.append(item.id)
        supersedes = self._supersedes(rec, plan, in_batch) if rec.supersedes else None
        spec = AssertionSpec(
            iri=graph,
            id=rec.id,
            statement=rec.statement,
            type=rec.type,
            source_id=rec.source.id,
            said_by=rec.source.said_by,
            activity=plan.activity,
            created_at=self.now,
            effective_from=rec.effective_from,
            effective_to=rec.effective_to,
            extracted_by=rec.extracted_by,
            prompt_version=rec.prompt_version,
            confirmed_by=rec.confirmed_by,
            about=tuple(bind[name_key(n)] for n in rec.about),
            applies_to=tuple(bind[name_key(n)] for n in rec.applies_to),
            decided_by=bind[name_key(rec.decided_by)] if rec.decided_by else None,
            supported_by=tuple(supports),
            supersedes=supersedes,
            digest=rec.digest,
        )
        plan.batch.quads += assertion_quads(spec)
        plan.records_added += 1

    def _add_source(self, src: SourceSpec, where: str, plan: Plan, sources: dict[str, tuple[SourceSpec, str]]) -> None:
        if src.id in sources:
            other, other_where = sources[src.id]
            if other != src:
                raise Invalid(f"source {src.id!r} is described differently at {other_where}", where=where)
            return
        sources[src.id] = (src, where)
        quads = source_quads(src)
        node = source_iri(src.id)
        plan.origins.setdefault(node.value, where)
        rows = self.store.select(PREFIXES + f"SELECT ?p ?o WHERE {{ GRAPH {node} {{ {node} ?p ?o }} }}")
        if rows and self.writer.restricted and not self._source_exists(src.id):
            raise taken("source", src.id, where)
        if rows:
            have = {(r["p"].value, str(r["o"])) for r in rows}  # type: ignore[union-attr]
            want = {(q.predicate.value, str(q.object)) for q in quads if q.subject == node}
            if have != want:
                raise Conflict(f"source {src.id!r} is already recorded with a different description", where=where)
        plan.batch.quads += quads

    def _source_exists(self, source_id: str) -> bool:
        """Whether the writer may see a recorded source ``source_id``."""
        node = source_iri(source_id)
        return self.seen.ask(PREFIXES + f"ASK {{ GRAPH {node} {{ {node} a wb:Source }} }}")

    def _supersedes(self, rec: jsonl.RecordIn, plan: Plan, in_batch: set[str]) -> ox.NamedNode:
        old_id = rec.supersedes or ""
        old = record_iri(old_id)
        if old_id == rec.id:
            raise Invalid("a record cannot supersede itself", where=rec.where)
        if old in self._superseded:
            raise Conflict(f"record {old_id!r} is superseded twice in this import", where=rec.where)
        self._superseded.add(old)
        if old_id in in_batch:
            old_seen = self._batch_seen[old_id]
            audience.check_named(f"record {rec.id!r}", rec.visible_to, f"record {old_id!r}", old_seen, where=rec.where)
            if audience.covers(rec.visible_to, old_seen):
                self._replaced.add(old)  # it lands already superseded: see plan()
            return old
        found = status_and_home(self.seen, old)
        if found is None:
            raise Invalid(f'"supersedes": no record {old_id!r} to supersede', where=rec.where)
        status, home = found  # home: its metadata's graph, its source's
        if status is not Status.ACTIVE:
            raise Conflict(
                f"record {old_id!r} is not active (it is {status.value}); supersede the active one", where=rec.where
            )
        old_seen = audience.of_record(self.store, old)
        audience.check_named(f"record {rec.id!r}", rec.visible_to, f"record {old_id!r}", old_seen, where=rec.where)
        if audience.covers(rec.visible_to, old_seen):  # else superseded by its link alone (records.unsuperseded)
            plan.batch.removals.append(ox.Quad(old, WB.status, Status.ACTIVE.iri, home))
            plan.batch.quads.append(ox.Quad(old, WB.status, Status.SUPERSEDED.iri, home))
        return old

    def _triple(
        self, t: tuple[Any, Any, Any], i: int, rec: jsonl.RecordIn, bind: dict[str, ox.NamedNode], relations: Relations
    ) -> tuple[ox.Triple, bool]:
        """The triple, and whether the record says it is not so (a relation label "not ...")."""
        s, p, o = t
        where = rec.where
        try:
            subject = expand(s) or bind[name_key(s)]
            rest = negated(p)
            label = p if rest is None else rest
            predicate = expand(label) or relations.get(label)
            if predicate is None:
                negation = "" if rest is None else f" (in {p!r}, a negative fact)"
                raise Invalid(f"unknown relation {label!r}{negation}; known relations: {relations.labels()}")
            return ox.Triple(subject, predicate, self._object(o, i, where, bind)), rest is not None
        except (Invalid, Forbidden) as exc:
            if exc.where:
                raise
            raise type(exc)(f"triples[{i}]: {exc.message}", where=where) from None

    @staticmethod
    def _object(o: Any, i: int, where: str, bind: dict[str, ox.NamedNode]) -> ox.NamedNode | ox.Literal:
        if isinstance(o, bool):
            return ox.Literal(o)
        if isinstance(o, int):
            return ox.Literal(str(o), datatype=XSD.integer)
        if isinstance(o, Decimal):
            # A JSON number is a value, not a spelling: keep it in the store's canonical form
            # (xsd:decimal has no exponent, so 2E3 is written out as 2000).
            return literals.canonical(ox.Literal(format(o, "f"), datatype=XSD.decimal))
        if isinstance(o, dict):
            value = o["value"]
            if not isinstance(value, str):
                raise Invalid(f'triples[{i}] object "value" must be a string', where=where)
            if "lang" in o:
                try:
                    return ox.Literal(value, language=o["lang"])
                except (ValueError, TypeError):
                    raise Invalid(
                        f"triples[{i}] object: {o['lang']!r} is not a language tag (BCP 47, e.g. en, zh-Hans)",
                        where=where,
                    ) from None
            if "datatype" in o:
                dt = expand(o["datatype"]) if isinstance(o["datatype"], str) else None
                if dt is None:
                    raise Invalid(f"triples[{i}] datatype must be xsd:NAME or <IRI>", where=where)
                return ox.Literal(value, datatype=dt)
            return ox.Literal(value)
        if not isinstance(o, str):
            raise Invalid(
                f'triples[{i}] object must be a name, <IRI>, number, boolean or {{"value": ...}}', where=where
            )
        return expand(o) or bind[name_key(o)]
