"""Landing an RDF import: plan it, write it, and commit it only if the plan holds.

A small import, or one into a store that cannot stage writes (a remote server), is planned first
(parse, literals, metadata, SHACL) and then written in one go. A large import into the embedded
store is planned in a second process *while* the main process writes the files' content under the
undo journal; the metadata lands only once the plan passed, and any failure undoes the write.
On the 2-core machine this hides the plan's cost (a Python pass over the file and pySHACL over the
metadata) behind the bulk write: see docs/benchmarks.md.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from workbench import errors, limits
from workbench.access.writes import Writer
from workbench.errors import Conflict, ParseError, WorkbenchError
from workbench.formats import rdf_format
from workbench.ids import activity_iri
from workbench.imports.common import ProgressFactory, write_batch
from workbench.imports.rdf import RdfOptions, RdfPlan, file_graph_quads, inspect, plan_rdf
from workbench.store import Batch, FileLoad, Store

# Files at least this large (in all) are planned beside the write when the store can stage.
STAGE_BYTES = 4_000_000


@dataclass(frozen=True)
class Landed:
    plan: RdfPlan
    quads_added: int


def import_rdf(store: Store, paths: Sequence[Path], options: RdfOptions, progress: ProgressFactory | None) -> Landed:
    """Import RDF files atomically; raises (and leaves the store as it was) if anything is wrong."""
    for path in paths:
        rdf_format(path)  # an unknown extension fails before any work
    activity = activity_iri("import", f"{options.now}/{uuid.uuid4().hex[:8]}")
    files = [FileLoad(p, rdf_format(p), options.default_graph(p)) for p in paths]
    size = sum(p.stat().st_size for p in paths)
    if store.capabilities.staged_writes and size >= STAGE_BYTES:
        for path in paths:  # the plan runs beside the write: what a limit refuses must not reach it
            limits.check_rdf(path, rdf_format(path))
        # The plan's process cannot ask the store: it gets every graph name, and what the writer
        # may not see listed whole (a large import's files name many graphs anyway).
        if isinstance(options.writer, Writer):
            options = dataclasses.replace(options, writer=options.writer.snapshot())
        planner = PlanProcess(list(paths), options, store.graph_names(), activity)
        box: list[RdfPlan] = []
        try:
            write_batch(store, Batch(files=files), progress, size, check=lambda: _finish(store, planner.result(), box))
        except (SyntaxError, ValueError, MemoryError) as exc:
            # The writer's own parse failed (and was undone). The plan beside it parses leniently
            # (it is used only for a file the write accepted): a strict pass names file and line.
            planner.close()
            for path in paths:
                inspect(path, rdf_format(path), None)
            raise ParseError(f"malformed RDF: {exc}", where=str(paths[0])) from exc
        finally:
            planner.close()
        return Landed(box[0], len(box[0].loose))
    plan = plan_rdf(paths, options, store.held_graphs, activity, progress)
    _verify_existing(store, plan)
    if not plan.new_graphs and not plan.loose:
        return Landed(plan, 0)
    batch = Batch(files=files)
    if plan.existing and any(_blank(store.quads(g)) for g in plan.existing):
        # Loading the files again would add fresh copies of the blank nodes of graphs the store
        # already holds (as they are): write only the new graphs' quads.
        batch = Batch(quads=[q for f in files for q in _quads(f) if q.graph_name not in plan.existing])
    write_batch(store, batch, progress, size if batch.files else len(batch.quads), check=lambda: plan.loose)
    return Landed(plan, len(plan.loose))


def _finish(store: Store, plan: RdfPlan, box: list[RdfPlan]) -> list[ox.Quad]:
    _verify_existing(store, plan)
    box.append(plan)
    return plan.loose


def _verify_existing(store: Store, plan: RdfPlan) -> None:
    """Graphs a file writes that the store already held must hold exactly what the file says."""
    by_file: dict[tuple[Path, ox.NamedNode], set[ox.NamedNode]] = {}
    for graph, origin in plan.existing.items():
        by_file.setdefault(origin, set()).add(graph)
    for (path, to_graph), graphs in by_file.items():
        wanted = file_graph_quads(path, to_graph, graphs)
        for graph in sorted(graphs, key=str):
            if not same_graph(set(store.quads(graph)), wanted[graph]):
                raise Conflict(
                    f"graph {graph} is already recorded with other triples; records are never rewritten: "
                    "import the new triples as a new record that supersedes it",
                    where=str(path),
                )


def _blank(quads: Iterable[ox.Quad]) -> bool:
    return any(isinstance(q.subject, ox.BlankNode) or isinstance(q.object, ox.BlankNode) for q in quads)


def _quads(f: FileLoad) -> Iterator[ox.Quad]:
    for q in ox.parse(path=str(f.path), format=f.format):
        if isinstance(q.graph_name, ox.DefaultGraph) and f.to_graph is not None:
            q = ox.Quad(q.subject, q.predicate, q.object, f.to_graph)
        yield q


def same_graph(a: set[ox.Quad], b: set[ox.Quad]) -> bool:
    """Whether two graphs hold the same triples, blank nodes compared by structure (a blank
    node's label is new at every parse and every write), not by label."""
    if not (_blank(a) or _blank(b)):
        return a == b
    if len(a) != len(b):
        return False
    from rdflib import Graph
    from rdflib.compare import isomorphic

    def graph(quads: set[ox.Quad]) -> Graph:
        data = ox.serialize([q.triple for q in quads], format=ox.RdfFormat.N_TRIPLES) or b""
        return Graph().parse(data=data.decode(), format="nt")

    return isomorphic(graph(a), graph(b))


class PlanProcess:
    """:func:`plan_rdf` in a child Python process (``python -m workbench.imports.landing DIR``),
    started now and collected later. A plain subprocess, not multiprocessing: it works the same
    from the CLI, a script on standard input, or a notebook."""

    def __init__(self, paths: list[Path], options: RdfOptions, before: frozenset[ox.NamedNode],
                 activity: ox.NamedNode) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="workbench-plan-"))
        (self.dir / "in.pickle").write_bytes(pickle.dumps((paths, options, before, activity)))
        self.errors = open(self.dir / "stderr.txt", "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen([sys.executable, "-m", "workbench.imports.landing", str(self.dir)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.errors)

    def result(self) -> RdfPlan:
        """The plan, or the planner's error raised here."""
        self.proc.wait()
        out = self.dir / "out.pickle"
        if not out.exists():
            detail = (self.dir / "stderr.txt").read_text(errors="replace").strip()[-2000:]
            raise WorkbenchError(f"the import's planning process failed (exit {self.proc.returncode}): {detail}")
        outcome = pickle.loads(out.read_bytes())
        if outcome[0] == "ok":
            plan: RdfPlan = outcome[1]
            return plan
        _, name, message, where, data = outcome
        cls = getattr(errors, name, WorkbenchError)
        exc = cls.__new__(cls)
        WorkbenchError.__init__(exc, message, where=where, **data)
        raise exc

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.errors.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _plan_elsewhere(
    paths: list[Path], options: RdfOptions, before: frozenset[ox.NamedNode], activity: ox.NamedNode
) -> tuple[Any, ...]:
    """Runs in the planning process: the plan, or the error as plain data (errors carry keyword
    data that pickling would lose)."""
    try:
        return ("ok", plan_rdf(paths, options, before.intersection, activity, lenient=True))
    except WorkbenchError as exc:
        return ("error", type(exc).__name__, exc.message, exc.where, dict(exc.data))


if __name__ == "__main__":
    os.nice(10)  # the write is the critical path; planning fills the gaps beside it
    work = Path(sys.argv[1])
    outcome = _plan_elsewhere(*pickle.loads((work / "in.pickle").read_bytes()))
    (work / "out.part").write_bytes(pickle.dumps(outcome))
    (work / "out.part").replace(work / "out.pickle")
