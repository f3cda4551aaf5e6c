"""Planning an import of RDF files: Turtle, TriG, N-Triples, N-Quads, JSON-LD, RDF/XML.

Two kinds of file:

* **Plain data.** Each named graph becomes one assertion (its IRI is the graph's); the triples in
  the default graph become one assertion named after the source. All come from one source (the
  file, unless told otherwise), said by one person, of one record type. Bulk common sense is
  imported this way: one assertion per source document, marked admitted.
* **A Workbench export** (it holds the metadata graph). Its quads are taken as they are, after the
  same checks, so export then import into an empty store gives back an isomorphic dataset.

The file is read twice, streaming: once to inspect it (syntax, literals, graphs, names), once
while it is written. It is never held in memory as Python objects unless it is an export.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyoxigraph as ox

from workbench import literals
from workbench.errors import Conflict, Invalid, ParseError
from workbench.ids import ENTITIES_GRAPH, META_GRAPH, SYSTEM_GRAPHS, id_from_iri, record_iri, source_iri
from workbench.imports.common import (
    AssertionSpec,
    Plan,
    ProgressFactory,
    SourceSpec,
    assertion_quads,
    check_shapes,
    new_activity,
    source_quads,
)
from workbench.model import RecordType
from workbench.names import name_key
from workbench.progress import open_counted
from workbench.store import Batch, FileLoad, Store
from workbench.vocab import RDF, SKOS, WB

FORMATS = {
    ".ttl": ox.RdfFormat.TURTLE,
    ".turtle": ox.RdfFormat.TURTLE,
    ".trig": ox.RdfFormat.TRIG,
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".nq": ox.RdfFormat.N_QUADS,
    ".jsonld": ox.RdfFormat.JSON_LD,
    ".json-ld": ox.RdfFormat.JSON_LD,
    ".rdf": ox.RdfFormat.RDF_XML,
    ".owl": ox.RdfFormat.RDF_XML,
    ".xml": ox.RdfFormat.RDF_XML,
}
_LABELS = (SKOS.prefLabel, SKOS.altLabel)


def rdf_format(path: Path) -> ox.RdfFormat:
    try:
        return FORMATS[path.suffix.lower()]
    except KeyError:
        known = ", ".join(sorted(FORMATS))
        raise Invalid(
            f"cannot tell the RDF format from the extension {path.suffix!r}; use one of {known}", where=str(path)
        ) from None


class _Inspection:
    """What one streaming pass over a file found."""

    def __init__(self) -> None:
        self.graphs: set[ox.NamedNode] = set()
        self.default_triples = 0
        self.system = False
        self.typed: set[ox.Literal] = set()
        self.names: set[tuple[ox.NamedNode | ox.BlankNode, str]] = set()  # (entity, key) needing a key
        self.quads = 0


def inspect(path: Path, fmt: ox.RdfFormat, progress: ProgressFactory | None) -> _Inspection:
    found = _Inspection()
    bar = progress(f"checking {path.name}", path.stat().st_size) if progress else None
    reader = open_counted(path, bar.update if bar else None)
    try:
        for quad in ox.parse(reader, fmt):
            found.quads += 1
            g = quad.graph_name
            if isinstance(g, ox.DefaultGraph):
                found.default_triples += 1
            elif isinstance(g, ox.NamedNode):
                if g in SYSTEM_GRAPHS:
                    found.system = True
                found.graphs.add(g)
            else:
                raise Invalid("graph names must be IRIs, not blank nodes", where=str(path))
            o = quad.object
            if isinstance(o, ox.Literal):
                if literals.needs_check(o):
                    found.typed.add(o)
                elif quad.predicate in _LABELS:
                    key = name_key(o.value) if o.value.strip() else ""
                    if key and (key != o.value or o.language):
                        found.names.add((quad.subject, key))
    except SyntaxError as exc:
        raise ParseError(f"malformed {fmt.name}: {exc}", where=str(path)) from exc
    except ValueError as exc:
        raise ParseError(f"malformed {fmt.name}: {exc}", where=str(path)) from exc
    finally:
        reader.close()
        if bar:
            bar.close()
    problems = literals.check(found.typed)
    if problems:
        raise Invalid(problems[0].message, where=_line_of(path, problems[0].literal))
    return found


def _line_of(path: Path, lit: ox.Literal) -> str:
    """file:line where this literal is written, for the error message: the first line that
    spells the quoted value beside its datatype, else the quoted value, else the bare value."""
    quoted = [f'"{lit.value}"', f"'{lit.value}'", f">{lit.value}<"]  # Turtle/N-Triples, RDF/XML
    datatype = lit.datatype.value
    marks = (datatype, datatype.rsplit("#", 1)[-1])
    best: dict[int, int] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, start=1):
            if any(q in line for q in quoted):
                rank = 0 if any(m in line for m in marks) else 1
            elif lit.value in line:
                rank = 2
            else:
                continue
            best.setdefault(rank, number)
            if rank == 0:
                break
    return f"{path}:{best[min(best)]}" if best else str(path)


class RdfPlanner:
    def __init__(self, store: Store, *, actor: str, now: str) -> None:
        self.store = store
        self.actor = actor
        self.now = now

    def plan(
        self,
        paths: Sequence[Path],
        *,
        record_type: RecordType = RecordType.OBSERVATION,
        source_id: str | None = None,
        said_by: str | None = None,
        statement: str | None = None,
        visible_to: tuple[str, ...] = (),
        progress: ProgressFactory | None = None,
    ) -> Plan:
        activity, activity_quads = new_activity(self.actor, self.now, [str(p) for p in paths])
        plan = Plan(batch=Batch(), files=tuple(str(p) for p in paths), activity=activity)
        plain = False
        for path in paths:
            fmt = rdf_format(path)
            found = inspect(path, fmt, progress)
            if found.system:
                self._plan_export(path, fmt, found, plan)
                continue
            src = SourceSpec(source_id or path.name, said_by or self.actor, locator=str(path), visible_to=visible_to)
            plain |= self._plan_data(path, fmt, found, plan, src, record_type, statement)
        if plain:  # an export brings its own provenance; plain data gets this import's
            plan.batch.quads = activity_quads + plan.batch.quads
        check_shapes(plan)
        return plan

    def _plan_data(
        self,
        path: Path,
        fmt: ox.RdfFormat,
        found: _Inspection,
        plan: Plan,
        src: SourceSpec,
        record_type: RecordType,
        statement: str | None,
    ) -> bool:
        targets: list[tuple[ox.NamedNode, str]] = [(g, id_from_iri(g)) for g in sorted(found.graphs, key=str)]
        to_graph = None
        if found.default_triples:
            to_graph = record_iri(src.id)
            targets.append((to_graph, src.id))
        existing = self._existing(path, fmt, to_graph, [g for g, _ in targets])
        new = [(g, i) for g, i in targets if g not in existing]
        plan.records_unchanged += len(existing)
        if not new:
            return False
        plan.batch.files.append(FileLoad(path, fmt, to_graph))
        plan.batch.new_graphs.update(g for g, _ in new)
        plan.batch.quads += source_quads(src)
        plan.origins.setdefault(source_iri(src.id).value, str(path))
        for graph, rid in new:
            plan.origins[graph.value] = f"{path} (graph {graph})"
            text = statement or f"The triples of {graph.value if graph != to_graph else path.name}."
            spec = AssertionSpec(
                iri=graph,
                id=rid,
                statement=text,
                type=record_type,
                source_id=src.id,
                said_by=src.said_by,
                activity=plan.activity,
                created_at=self.now,
            )
            plan.batch.quads += assertion_quads(spec)
            plan.records_added += 1
        plan.batch.quads += [
            ox.Quad(e, WB.nameKey, ox.Literal(k), ENTITIES_GRAPH) for e, k in sorted(found.names, key=str)
        ]
        return True

    def _existing(
        self, path: Path, fmt: ox.RdfFormat, to_graph: ox.NamedNode | None, graphs: list[ox.NamedNode]
    ) -> set[ox.NamedNode]:
        """Graphs of this file the store already holds; each must hold exactly what the file says."""
        existing = {g for g in graphs if self.store.has_graph(g)}
        if not existing:
            return existing
        wanted: dict[ox.NamedNode, set[ox.Quad]] = {g: set() for g in existing}
        for quad in ox.parse(path=str(path), format=fmt):
            g = quad.graph_name
            if isinstance(g, ox.DefaultGraph) and to_graph is not None:
                quad = ox.Quad(quad.subject, quad.predicate, quad.object, to_graph)
                g = to_graph
            if g in wanted:
                wanted[g].add(quad)
        for g, quads in wanted.items():
            if set(self.store.quads(g)) != quads:
                raise Conflict(
                    f"graph {g} is already recorded with other triples; records are never rewritten: "
                    "import the new triples as a new record that supersedes it",
                    where=str(path),
                )
        return existing

    def _plan_export(self, path: Path, fmt: ox.RdfFormat, found: _Inspection, plan: Plan) -> None:
        """A Workbench export: every quad as it is; graphs it adds are new, the rest are checked."""
        quads = list(ox.parse(path=str(path), format=fmt))
        if found.default_triples:
            raise Invalid("a Workbench export holds no default-graph triples; this file has some", where=str(path))
        content = {g for g in found.graphs if g not in SYSTEM_GRAPHS}
        existing = {g for g in content if self.store.has_graph(g)}
        by_graph: dict[ox.NamedNode, set[ox.Quad]] = {g: set() for g in existing}
        for q in quads:
            if q.graph_name in by_graph:
                by_graph[q.graph_name].add(q)
        for g, want in by_graph.items():
            if set(self.store.quads(g)) != want:
                raise Conflict(f"graph {g} is already recorded with other triples", where=str(path))
        # The export's own import activity is kept; this import adds only what is new.
        plan.batch.quads += quads
        plan.batch.new_graphs.update(content - existing)
        plan.records_added += len(content - existing)
        plan.records_unchanged += len(existing)
        for q in quads:
            if q.predicate == RDF.type and q.graph_name == META_GRAPH:
                plan.origins.setdefault(q.subject.value, str(path))
