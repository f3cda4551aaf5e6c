"""Planning an import of RDF files: Turtle, TriG, N-Triples, N-Quads, JSON-LD, RDF/XML.

Two kinds of file:

* **Plain data.** Each named graph becomes one assertion (its IRI is the graph's); the triples in
  the default graph become one assertion named after the source. All come from one source (the
  file, unless told otherwise), said by one person, of one record type. Bulk common sense is
  imported this way: one assertion per source document, marked admitted.
* **A Workbench export** (it holds the metadata graph). Its quads are taken as they are, after the
  same checks, so export then import into an empty store gives back an isomorphic dataset.

Planning is pure: :func:`plan_rdf` reads the files (syntax, literals, graphs, names), builds the
metadata and checks it against the shapes, given only the graphs the store held before. So the
service can run it beside the write of a large file, in another process, and undo the write if
the plan fails (see :mod:`workbench.imports.landing`). Files are streamed, never held in memory as
Python objects; only an export's metadata graphs are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox

from workbench import limits
from workbench.access.writes import (
    OWN_STARTS,
    HiddenSnapshot,
    Writer,
    check_graph,
    check_quad,
    own_graph,
    own_iri,
    taken,
    touches_own,
)
from workbench.errors import Invalid, ParseError
from workbench.formats import rdf_format
from workbench.ids import (
    ENTITIES_GRAPH,
    SYSTEM_GRAPHS,
    bookkeeping_graph,
    id_from_iri,
    record_iri,
    source_iri,
)
from workbench.imports import literals
from workbench.imports.common import (
    AssertionSpec,
    ProgressFactory,
    SourceSpec,
    assertion_quads,
    check_shapes,
    source_quads,
)
from workbench.names.keys import name_key
from workbench.progress import open_counted
from workbench.records.acts import import_activity
from workbench.values.records import RecordType
from workbench.vocab import RDF, SKOS, WB

_LABELS = (SKOS.prefLabel, SKOS.altLabel)

# Of the graphs an import names, those the store holds (Store.held_graphs, or a set's intersection)
Held = Callable[[Iterable[ox.NamedNode]], frozenset[ox.NamedNode]]


class _Inspection:
    """What one streaming pass over a file found."""

    def __init__(self) -> None:
        self.graphs: set[ox.NamedNode] = set()
        self.default = False  # it holds triples in the default graph
        self.system = False
        self.typed: set[ox.Literal] = set()
        self.names: set[tuple[ox.NamedNode | ox.BlankNode, str]] = set()  # (entity, key) needing a key
        self.own = False  # some quad names Workbench's own terms (access.writes): refused but in a restore


def inspect(path: Path, fmt: ox.RdfFormat, progress: ProgressFactory | None, *, lenient: bool = False) -> _Inspection:
    """One pass over a file: its graphs, typed literals, labels needing name keys, and whether it
    names Workbench's own terms. ``lenient`` parses without validating IRIs and literals (0.6x
    the time): only for a file that a strict parse of the same bytes accepts, which the write
    beside a large import's plan is."""
    limits.check_rdf(path, fmt)  # before pyoxigraph sees it: long lines, deep JSON, entities that expand
    found = _Inspection()
    # The loop runs once a quad (2.1M at the essay's size) in a process beside the bulk load, which
    # it slows: what need not be done per quad is done once, on the distinct graphs and predicates.
    graphs: set[ox.NamedNode | ox.BlankNode | ox.DefaultGraph] = set()
    predicates: set[ox.NamedNode] = set()
    in_graph, predicate = graphs.add, predicates.add
    longest, needs_check = limits.MAX_LITERAL_CHARS, literals.needs_check
    iri, literal, starts = ox.NamedNode, ox.Literal, OWN_STARTS
    bar = progress(f"checking {path.name}", path.stat().st_size) if progress else None
    reader = open_counted(path, bar.update if bar else None)
    try:
        for quad in ox.parse(reader, fmt, lenient=lenient):
            in_graph(quad.graph_name)
            predicate(quad.predicate)
            s, o = quad.subject, quad.object
            if not found.own and (
                (s.value.startswith(starts) and own_iri(s)) if type(s) is iri
                else type(s) is ox.Triple and touches_own(quad)
            ):
                found.own = True
            kind = type(o)
            if kind is literal:
                value = o.value
                if len(value) > longest:
                    limits.check_literal(value, _line_of(path, o))
                if needs_check(o):
                    found.typed.add(o)
                elif quad.predicate in _LABELS and value.strip() and (o.language or not _is_key(value)):
                    found.names.add((quad.subject, name_key(value)))
            elif not found.own and (
                (o.value.startswith(starts) and own_iri(o)) if kind is iri
                else kind is ox.Triple and touches_own(quad)
            ):
                found.own = True
    except SyntaxError as exc:
        raise ParseError(f"malformed {fmt.name}: {exc}", where=str(path)) from exc
    except ValueError as exc:
        raise ParseError(f"malformed {fmt.name}: {exc}", where=str(path)) from exc
    except MemoryError:  # pyoxigraph's parsers hold one token in at most 16 MiB
        raise limits.parser_buffer_error(fmt, str(path)) from None
    finally:
        reader.close()
        if bar:
            bar.close()
    found.own = found.own or any(own_iri(p) for p in predicates)
    for g in graphs:
        if isinstance(g, ox.DefaultGraph):
            found.default = True
        elif isinstance(g, ox.NamedNode):
            found.system = found.system or g in SYSTEM_GRAPHS
            found.graphs.add(g)
        else:
            raise Invalid("graph names must be IRIs, not blank nodes", where=str(path))
    problems = literals.check(found.typed)
    if problems:
        raise Invalid(problems[0].message, where=_line_of(path, problems[0].literal))
    return found


# An ASCII name that is its own key: no capitals, words split by single spaces (what str.split
# splits on is the white space below, ASCII's part of it).
_ASCII_KEY = re.compile(r"[^A-Z\t\n\x0b\x0c\r\x1c-\x1f ]+(?: [^A-Z\t\n\x0b\x0c\r\x1c-\x1f ]+)*")


def _is_key(value: str) -> bool:
    """Whether a label is already its own name key (:func:`name_key`), without computing the
    key: true of most labels in bulk data, and checked in a third of the time."""
    if value.isascii():
        return _ASCII_KEY.fullmatch(value) is not None
    return name_key(value) == value


def _line_of(path: Path, lit: ox.Literal) -> str:
    """file:line where this literal is written, for the error message: the first line that
    spells the quoted value beside its datatype, else the quoted value, else the bare value."""
    quoted = [f'"{lit.value}"', f"'{lit.value}'", f">{lit.value}<"]  # Turtle/N-Triples, RDF/XML
    datatype = lit.datatype.value
    marks = (datatype, datatype.rsplit("#", 1)[-1])
    # A line is read in pieces of at most a chunk, each searched with the end of the one before
    # (as long as the longest needle): a long line (JSON-LD and RDF/XML are often one) is never held.
    keep = max(map(len, [*quoted, *marks])) - 1
    best: dict[int, int] = {}
    number, tail = 1, ""
    seen: set[str] = set()  # what this line holds so far: (q)uoted, (m)ark, (v)alue

    def rank() -> int | None:
        if "q" in seen:
            return 0 if "m" in seen else 1
        return 2 if "v" in seen else None

    with open(path, encoding="utf-8", errors="replace") as f:
        while piece := f.readline(limits.CHUNK):
            window = tail + piece
            if any(q in window for q in quoted):
                seen.add("q")
            if any(m in window for m in marks):
                seen.add("m")
            if lit.value in window:
                seen.add("v")
            if not piece.endswith("\n"):
                tail = window[-keep:]
                continue
            r = rank()
            if r is not None:
                best.setdefault(r, number)
                if r == 0:
                    break
            number, tail, seen = number + 1, "", set()
        else:  # the last line, if it has no newline
            r = rank()
            if r is not None:
                best.setdefault(r, number)
    return f"{path}:{best[min(best)]}" if best else str(path)


@dataclass(frozen=True)
class RdfOptions:
    """Where plain RDF data came from, and who imports it when."""

    actor: str
    now: str
    record_type: RecordType = RecordType.OBSERVATION
    source_id: str | None = None
    said_by: str | None = None
    statement: str | None = None
    visible_to: tuple[str, ...] = ()
    used: tuple[str, ...] = ()  # what the provenance names instead of the paths (an upload's name)
    # Who writes (access.writes): a file writing a graph or source the store holds and the writer
    # may not see is refused as "taken", whatever it holds. None: someone who sees everything.
    writer: Writer | HiddenSnapshot | None = None
    restore: bool = False  # an export into an empty store (Workbench.restore), not an import

    def source(self, path: Path) -> SourceSpec:
        locator = self.used[0] if len(self.used) == 1 else str(path)
        return SourceSpec(
            self.source_id or path.name, self.said_by or self.actor, locator=locator, visible_to=self.visible_to
        )

    def default_graph(self, path: Path) -> ox.NamedNode:
        """The assertion that receives a file's default-graph triples."""
        return record_iri(self.source(path).id)


@dataclass
class RdfPlan:
    """What importing some RDF files adds besides the files' own content graphs."""

    activity: ox.NamedNode
    loose: list[ox.Quad] = field(default_factory=list)  # metadata, names; an export's system graphs
    new_graphs: set[ox.NamedNode] = field(default_factory=set)
    # Graphs a file writes that the store already held: each must hold exactly what the file says.
    # Values: the file, and the graph its default-graph triples go to.
    existing: dict[ox.NamedNode, tuple[Path, ox.NamedNode]] = field(default_factory=dict)
    records_added: int = 0
    records_unchanged: int = 0
    origins: dict[str, str] = field(default_factory=dict)


def plan_rdf(
    paths: Sequence[Path],
    options: RdfOptions,
    held: Held,
    activity: ox.NamedNode | None = None,
    progress: ProgressFactory | None = None,
    *,
    lenient: bool = False,
) -> RdfPlan:
    """Plan importing RDF files into a store that held, of the graphs the files name, ``held(them)``
    (:meth:`Store.held_graphs`). Raises, naming file and line, for malformed RDF, literals the
    store would rewrite, and metadata the shapes refuse. ``lenient``: see :func:`inspect`."""
    plan = RdfPlan(activity=import_activity(options.actor, options.now, (), activity)[0])
    for path in paths:
        fmt = rdf_format(path)
        found = inspect(path, fmt, progress, lenient=lenient)
        if options.restore:
            if not found.system:
                raise Invalid("not a Workbench export (it holds no metadata graph): import it instead",
                              where=str(path))
            _plan_export(path, fmt, found, plan, options, held)
            continue
        for graph in sorted(found.graphs, key=lambda g: (g not in SYSTEM_GRAPHS, g.value)):
            if own_graph(graph):  # the line only for the error: finding it reads the file
                check_graph(graph, first_line(path, graph.value))
        if found.own:  # the first quad that does, for the error's line: a second pass, only to refuse
            first = next(q for q in ox.parse(path=str(path), format=fmt) if touches_own(q))
            check_quad(first, _line_of_quad(path, first))
        _plan_data(path, found, plan, options, held)
    check_shapes(plan.loose, plan.origins)
    return plan


def _plan_data(path: Path, found: _Inspection, plan: RdfPlan, options: RdfOptions, held: Held) -> None:
    src = options.source(path)
    targets: list[tuple[ox.NamedNode, str]] = [(g, id_from_iri(g)) for g in sorted(found.graphs, key=str)]
    to_graph = options.default_graph(path)
    if found.default:
        targets.append((to_graph, src.id))
    hidden = options.writer.hidden_graphs(g for g, _ in targets) if options.writer else frozenset()
    for graph, rid in targets:
        if graph in hidden:
            raise taken("record", rid, first_line(path, graph.value) if graph != to_graph else str(path))
    graphs_before = held(g for g, _ in targets)
    new = [(g, i) for g, i in targets if g not in graphs_before]
    plan.existing.update({g: (path, to_graph) for g, _ in targets if g in graphs_before})
    plan.records_unchanged += len(targets) - len(new)
    if not new:
        return
    plan.new_graphs.update(g for g, _ in new)
    if options.writer and options.writer.source_hidden(src.id):
        raise taken("source", src.id, str(path))
    plan.loose += source_quads(src)
    # an export brings its own provenance; plain data gets this import's run, in its source's graph
    plan.loose += import_activity(options.actor, options.now, options.used or [str(path)], plan.activity,
                                  source_iri(src.id))[1]
    plan.origins.setdefault(source_iri(src.id).value, str(path))
    for graph, rid in new:
        plan.origins[graph.value] = f"{path} (graph {graph})"
        text = options.statement or f"The triples of {graph.value if graph != to_graph else path.name}."
        spec = AssertionSpec(
            iri=graph,
            id=rid,
            statement=text,
            type=options.record_type,
            source_id=src.id,
            said_by=src.said_by,
            activity=plan.activity,
            created_at=options.now,
        )
        plan.loose += assertion_quads(spec)
        plan.records_added += 1
    # The names a file gives rest on the records holding its labels: all from one source, so
    # any of its new records stands for them (see access.writes). Their keys are in the shared
    # entities graph, or beside the source's records if it is restricted (see names.given).
    home = source_iri(src.id)
    keys_in = home if src.visible_to else ENTITIES_GRAPH
    plan.loose += [ox.Quad(e, WB.nameKey, ox.Literal(k), keys_in) for e, k in sorted(found.names, key=str)]
    keyed = sorted({e for e, _ in found.names if isinstance(e, ox.NamedNode)}, key=str)
    plan.loose += [ox.Quad(e, WB.namedIn, new[0][0], home) for e in keyed]


def _plan_export(
    path: Path,
    fmt: ox.RdfFormat,
    found: _Inspection,
    plan: RdfPlan,
    options: RdfOptions,
    held: Held,
) -> None:
    """A Workbench export: its metadata graphs as they are; its content graphs new or identical."""
    if found.default:
        raise Invalid("a Workbench export holds no default-graph triples; this file has some", where=str(path))
    system = [q for q in ox.parse(path=str(path), format=fmt) if bookkeeping_graph(q.graph_name)]
    content = {g for g in found.graphs if not bookkeeping_graph(g)}
    graphs_before = held(content)
    plan.loose += system
    plan.new_graphs.update(content - graphs_before)
    plan.existing.update({g: (path, options.default_graph(path)) for g in content & graphs_before})
    plan.records_added += len(content - graphs_before)
    plan.records_unchanged += len(content & graphs_before)
    for q in system:
        if q.predicate == RDF.type:
            plan.origins.setdefault(q.subject.value, str(path))


def _line_of_quad(path: Path, quad: ox.Quad) -> str:
    """``file:line`` of the first line naming the quad's first own term (its line, in practice)."""
    for term in (quad.subject, quad.predicate, quad.object):
        if isinstance(term, ox.NamedNode) and touches_own(ox.Quad(term, term, term)):
            return first_line(path, term.value) if term.value.startswith("urn:") else first_line(
                path, term.value.rsplit("#", 1)[-1])
    return str(path)


NEWLINE = b"\n"


def first_line(path: Path, text: str) -> str:
    """``file:line`` of the first line that holds ``text``, for an error; the file if none does.
    Read in pieces (a JSON-LD file can be one line of many megabytes)."""
    needle = text.encode("utf-8")
    line, tail = 1, b""
    with open(path, "rb") as f:
        while piece := f.read(limits.CHUNK):
            data = tail + piece
            found = data.find(needle)
            if found >= 0:
                return f"{path}:{line + data.count(NEWLINE, 0, found)}"
            keep = max(len(needle) - 1, 0)
            cut = len(data) - keep
            line += data.count(NEWLINE, 0, cut)
            tail = data[cut:]
    return str(path)


def file_graph_quads(path: Path, to_graph: ox.NamedNode, graphs: set[ox.NamedNode]) -> dict[ox.NamedNode, set[ox.Quad]]:
    """The quads a file puts in each of ``graphs`` (its default graph going to ``to_graph``)."""
    out: dict[ox.NamedNode, set[ox.Quad]] = {g: set() for g in graphs}
    for quad in ox.parse(path=str(path), format=rdf_format(path)):
        g = quad.graph_name
        if isinstance(g, ox.DefaultGraph):
            quad, g = ox.Quad(quad.subject, quad.predicate, quad.object, to_graph), to_graph
        if g in out:
            out[g].add(quad)
    return out
