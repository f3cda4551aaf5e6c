"""The embedded default: pyoxigraph on disk, owned by one process.

Layout of a store directory::

    DIR/workbench.json   marks the directory as a Workbench store (format version)
    DIR/oxigraph/        the RocksDB database
    DIR/journal.json     present only while an import is landing: its undo log
    DIR/journal.nq       the loose quads that import adds

Small writes use pyoxigraph transactions (``extend``), which are atomic. Large imports use
``bulk_load``, which is an order of magnitude faster but writes as it goes; so before an import
writes anything, it leaves an undo log (the graphs it creates, the quads it adds) fsync'd on disk.
Opening a store that has a log undoes that import: a kill -9 at any moment leaves the store as it
was before the import, or with the import complete. The log is made only of things the store did
not hold before, so undoing it never touches older data.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

import pyoxigraph as ox

from workbench.errors import Invalid, NotFound, ParseError, StoreUnavailable
from workbench.progress import open_counted
from workbench.store.base import Batch, Capabilities, Check, FileLoad, Progress, Row, Store, data_block

FORMAT_VERSION = 1
# Above this many loose quads an import goes through bulk loading (measured: a transaction of
# 1.27M quads takes about 12x longer than bulk_load and twice the memory).
# Fault injection for the crash tests: WORKBENCH_CRASH_AT=after-content (a write's files are on
# disk, its metadata not yet) or after-metadata (all written, not yet committed) kills the
# process there with SIGKILL, so recovery is tested on real partial writes at known points.
CRASH_AT = os.environ.get("WORKBENCH_CRASH_AT", "")
BULK_THRESHOLD = 50_000
BULK_BYTES = 4_000_000


def _fsync_write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class EmbeddedStore(Store):
    """A Workbench store in a directory on this machine."""

    capabilities = Capabilities(
        name="embedded", on_disk=True, crash_safe_imports=True, bulk_load=True, staged_writes=True
    )

    def __init__(self, path: str | os.PathLike[str], *, create: bool = False) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        marker = self.path / "workbench.json"
        if not marker.exists():
            if not create:
                raise NotFound(
                    f"no Workbench store at {self.path}; create one with `workbench --store {self.path} init`"
                )
            if self.path.exists() and any(self.path.iterdir()):
                raise Invalid(f"{self.path} exists and is not an empty directory nor a Workbench store")
            self.path.mkdir(parents=True, exist_ok=True)
        try:
            self._db = ox.Store(str(self.path / "oxigraph"))
        except OSError as exc:
            if "lock" in str(exc).lower():
                raise StoreUnavailable(
                    f"the store at {self.path} is open in another process; "
                    "use that process's server URL (workbench --endpoint URL) instead"
                ) from exc
            raise StoreUnavailable(f"cannot open the store at {self.path}: {exc}") from exc
        if not marker.exists():
            _fsync_write(marker, json.dumps({"format": FORMAT_VERSION}).encode())
        self.recovered = self._recover()

    # ------------------------------------------------------------------ reads

    def _query(self, query: str) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        try:
            return self._db.query(query)
        except SyntaxError as exc:
            raise ParseError(f"SPARQL syntax error: {exc}") from exc

    def select(self, query: str) -> list[Row]:
        result = self._query(query)
        if not isinstance(result, ox.QuerySolutions):
            raise Invalid("expected a SELECT query")
        names = [v.value for v in result.variables]
        return [{n: sol[n] for n in names} for sol in result]

    def ask(self, query: str) -> bool:
        result = self._query(query)
        if not isinstance(result, ox.QueryBoolean):
            raise Invalid("expected an ASK query")
        return bool(result)

    def construct(self, query: str) -> list[ox.Triple]:
        result = self._query(query)
        if not isinstance(result, ox.QueryTriples):
            raise Invalid("expected a CONSTRUCT or DESCRIBE query")
        return list(result)

    def query_raw(self, query: str, *, results: ox.QueryResultsFormat, graph: ox.RdfFormat) -> bytes:
        result = self._query(query)
        if isinstance(result, ox.QueryTriples):
            return result.serialize(format=graph) or b""
        return result.serialize(format=results) or b""

    def has_graph(self, graph: ox.NamedNode) -> bool:
        return next(iter(self._db.quads_for_pattern(None, None, None, graph)), None) is not None

    def quads(self, graph: ox.NamedNode | None = None) -> Iterator[ox.Quad]:
        for quad in self._db.quads_for_pattern(None, None, None, graph):
            if not isinstance(quad.graph_name, ox.DefaultGraph):
                yield quad

    def dump(self, out: IO[bytes], *, format: ox.RdfFormat) -> None:
        self._db.dump(out, format=format)

    # ------------------------------------------------------------------ writes

    def update(self, update: str) -> None:
        try:
            self._db.update(update)
        except SyntaxError as exc:
            raise ParseError(f"SPARQL Update syntax error: {exc}") from exc

    def remove(self, quads: Sequence[ox.Quad]) -> None:
        if not quads:
            return
        self._db.update(f"DELETE DATA {{ {data_block(quads)} }}")

    def graph_names(self) -> frozenset[ox.NamedNode]:
        return frozenset(g for g in self._db.named_graphs() if isinstance(g, ox.NamedNode))

    def write(self, batch: Batch, *, progress: Progress | None = None, check: Check | None = None) -> None:
        before = self.graph_names() if batch.files else None
        fresh = [q for q in batch.quads if q.graph_name in batch.new_graphs or not self._contains(q)]
        gone = [q for q in batch.removals if self._contains(q)]
        self._journal_open(batch.new_graphs, before, [q for q in fresh if q.graph_name not in batch.new_graphs], gone)
        try:
            if gone:
                self.remove(gone)
            sizes = sum(f.path.stat().st_size for f in batch.files)
            if len(fresh) < BULK_THRESHOLD and sizes < BULK_BYTES:
                self._db.extend(fresh + [q for f in batch.files for q in _file_quads(f, before or frozenset(), None)])
                if progress:
                    progress(len(fresh) + sizes)
            else:
                self._db.bulk_extend(_counted(fresh, progress))
                for load in batch.files:
                    self._db.bulk_extend(_file_quads(load, before or frozenset(), progress))
            _crash_point("after-content")
            if check:
                more = [q for q in check() if not self._contains(q)]
                self._journal_add(more)
                (self._db.extend if len(more) < BULK_THRESHOLD else self._db.bulk_extend)(more)
            self._db.flush()
            _crash_point("after-metadata")
        except BaseException:
            self._undo()
            raise
        self._journal_close()

    def _contains(self, quad: ox.Quad) -> bool:
        found = self._db.quads_for_pattern(quad.subject, quad.predicate, quad.object, quad.graph_name)
        return next(iter(found), None) is not None

    # ------------------------------------------------------------------ the undo journal

    def _journal_open(
        self,
        new_graphs: set[ox.NamedNode],
        before: frozenset[ox.NamedNode] | None,
        added: list[ox.Quad],
        removed: list[ox.Quad],
    ) -> None:
        """Fsync what undoing this write needs, before writing anything. The journal file itself
        is written last: logs without it are of a write that never started."""
        _fsync_write(self.path / "journal.nq", ox.serialize(added, format=ox.RdfFormat.N_QUADS) or b"")
        _fsync_write(self.path / "journal-removed.nq", ox.serialize(removed, format=ox.RdfFormat.N_QUADS) or b"")
        state = {
            "new_graphs": sorted(g.value for g in new_graphs),
            "graphs_before": None if before is None else sorted(g.value for g in before),
        }
        _fsync_write(self.path / "journal.json", json.dumps(state).encode())

    def _journal_add(self, added: list[ox.Quad]) -> None:
        log = self.path / "journal.nq"
        _fsync_write(log, log.read_bytes() + (ox.serialize(added, format=ox.RdfFormat.N_QUADS) or b""))

    def _journal_close(self) -> None:
        (self.path / "journal.json").unlink()
        for name in ("journal.nq", "journal-removed.nq"):
            (self.path / name).unlink(missing_ok=True)

    def _undo(self) -> None:
        """Put the store back as it was before the journalled write."""
        state = json.loads((self.path / "journal.json").read_bytes())
        doomed = set(state["new_graphs"])
        if state["graphs_before"] is not None:
            # Graphs a file created: every graph now present that was not there before. Ask the
            # quads too, in case a bulk write stopped before it registered a graph's name.
            now = {g.value for g in self.graph_names()}
            rows = self._db.query("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")
            now |= {sol["g"].value for sol in rows}  # type: ignore[union-attr]
            doomed |= now - set(state["graphs_before"])
        for g in sorted(doomed):
            self._db.remove_graph(ox.NamedNode(g))
        added, removed = (
            ox.parse(path=str(self.path / n), format=ox.RdfFormat.N_QUADS) for n in ("journal.nq", "journal-removed.nq")
        )
        for quad in added:
            self._db.remove(quad)
        self._db.extend(list(removed))
        self._db.flush()
        self._journal_close()

    def _recover(self) -> bool:
        """Undo a write that did not finish (the process died). Returns whether there was one."""
        if not (self.path / "journal.json").exists():
            for name in ("journal.nq", "journal-removed.nq"):  # logs of a write that never started
                (self.path / name).unlink(missing_ok=True)
            return False
        self._undo()
        return True

    def close(self) -> None:
        if getattr(self, "_db", None) is not None:
            self._db.flush()
            del self._db


def _crash_point(name: str) -> None:
    if name == CRASH_AT:
        os.kill(os.getpid(), signal.SIGKILL)


def _counted(quads: list[ox.Quad], progress: Progress | None) -> Iterator[ox.Quad]:
    for i, quad in enumerate(quads, start=1):
        if progress and i % 10_000 == 0:
            progress(10_000)
        yield quad


def _file_quads(load: FileLoad, skip: frozenset[ox.NamedNode], progress: Progress | None) -> Iterator[ox.Quad]:
    """A file's quads, its default graph moved into ``load.to_graph``, leaving out graphs in
    ``skip`` (the store held them before); reports bytes read."""
    reader = open_counted(load.path, progress)
    try:
        for quad in ox.parse(reader, load.format):
            g = quad.graph_name
            if isinstance(g, ox.DefaultGraph):
                if load.to_graph is None or load.to_graph in skip:
                    continue
                yield ox.Quad(quad.subject, quad.predicate, quad.object, load.to_graph)
            elif g not in skip:
                yield quad
    finally:
        reader.close()
