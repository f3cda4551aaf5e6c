"""What every pyoxigraph-backed store shares: reads and small writes over ``self._db``.

:class:`workbench.store.EmbeddedStore` (on disk, crash-safe imports) and :class:`MemoryStore`
(a scratch store in memory, for rule test cases and the reasoning oracle) build on it.

>>> s = MemoryStore()
>>> s.ask("ASK { ?s ?p ?o }")
False
"""

from __future__ import annotations

import contextlib
import itertools
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO

import pyoxigraph as ox

from workbench.errors import Invalid, ParseError
from workbench.store.base import Batch, Capabilities, Check, Graphs, Progress, Row, Store, data_block


class PyoxStore(Store):
    """Reads and small writes over a pyoxigraph ``Store`` held in ``self._db``.

    Every read runs inside :meth:`_reading`, from the query to its last row (pyoxigraph's
    results are lazy): a backend that replaces ``self._db`` (the embedded store's
    :meth:`~workbench.store.EmbeddedStore.purge`) waits there for reads to finish.
    """

    _db: ox.Store

    def _reading(self) -> AbstractContextManager[None]:
        """Held while a read uses ``self._db``; here nothing replaces it."""
        return contextlib.nullcontext()

    def select(self, query: str) -> list[Row]:
        with self._reading():
            return super().select(query)

    def ask(self, query: str) -> bool:
        with self._reading():
            return super().ask(query)

    def _answer(
        self, query: str, default_graph: Graphs = None, named_graphs: Graphs = None
    ) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        if default_graph is not None or named_graphs is not None:
            # The Protocol: a dataset given by parameters replaces FROM / FROM NAMED entirely.
            default: list[ox.NamedNode | ox.BlankNode | ox.DefaultGraph] = list(default_graph or [])
            named: list[ox.NamedNode | ox.BlankNode] = list(named_graphs or [])
            try:
                return self._db.query(query, default_graph=default, named_graphs=named)
            except SyntaxError as exc:
                raise ParseError(f"SPARQL syntax error: {exc}") from exc
        try:
            return self._db.query(query)
        except SyntaxError as exc:
            raise ParseError(f"SPARQL syntax error: {exc}") from exc

    def construct(self, query: str) -> list[ox.Triple]:
        with self._reading():
            result = self._answer(query)
            if not isinstance(result, ox.QueryTriples):
                raise Invalid("expected a CONSTRUCT or DESCRIBE query")
            return list(result)

    def query_raw(
        self,
        query: str,
        *,
        results: ox.QueryResultsFormat,
        graph: ox.RdfFormat,
        default_graph: Graphs = None,
        named_graphs: Graphs = None,
    ) -> bytes:
        with self._reading():
            result = self._answer(query, default_graph, named_graphs)
            if isinstance(result, ox.QueryTriples):
                return result.serialize(format=graph) or b""
            return result.serialize(format=results) or b""

    def has_graph(self, graph: ox.NamedNode) -> bool:
        with self._reading():
            return next(iter(self._db.quads_for_pattern(None, None, None, graph)), None) is not None

    cheap_patterns = True

    def matching(self, s: ox.NamedNode | ox.BlankNode | ox.Literal | None, p: ox.NamedNode | None,
                 o: ox.NamedNode | ox.BlankNode | ox.Literal | None,
                 graph: ox.NamedNode | ox.BlankNode | None = None, *, limit: int | None = None) -> list[ox.Quad]:
        if isinstance(s, ox.Literal):
            return []
        with self._reading():
            found = (q for q in self._db.quads_for_pattern(s, p, o, graph)
                     if not isinstance(q.graph_name, ox.DefaultGraph))
            return list(found if limit is None else itertools.islice(found, limit))

    def quads(self, graph: ox.NamedNode | None = None) -> Iterator[ox.Quad]:
        with self._reading():
            for quad in self._db.quads_for_pattern(None, None, None, graph):
                if not isinstance(quad.graph_name, ox.DefaultGraph):
                    yield quad

    def dump(self, out: IO[bytes], *, format: ox.RdfFormat) -> None:
        with self._reading():
            self._db.dump(out, format=format)

    def update(self, update: str) -> None:
        try:
            self._db.update(update)
        except SyntaxError as exc:
            raise ParseError(f"SPARQL Update syntax error: {exc}") from exc
        finally:
            self._changed()

    def remove(self, quads: Sequence[ox.Quad]) -> None:
        if not quads:
            return
        self._changed()
        self._db.update(f"DELETE DATA {{ {data_block(quads)} }}")

    def graph_names(self) -> frozenset[ox.NamedNode]:
        with self._reading():
            return frozenset(g for g in self._db.named_graphs() if isinstance(g, ox.NamedNode))

    def held_graphs(self, graphs: Iterable[ox.NamedNode]) -> frozenset[ox.NamedNode]:
        with self._reading():
            return frozenset(g for g in graphs if self._db.contains_named_graph(g))


class MemoryStore(PyoxStore):
    """A scratch store in memory: nothing survives the process. Used to run rule test cases and
    the reasoning oracle on small graphs; never for anyone's memory."""

    capabilities = Capabilities(
        name="memory", on_disk=False, crash_safe_imports=False, bulk_load=False, staged_writes=False
    )

    def __init__(self) -> None:
        self.location = ":memory:"
        self._db = ox.Store()
        self._files: Path | None = None

    @property
    def files_dir(self) -> Path:
        """A temporary folder of its own, gone with the process's temporary files."""
        if self._files is None:
            self._files = Path(tempfile.mkdtemp(prefix="workbench-scratch-"))
        return self._files

    def copy_into(self, directory: Path) -> ox.Store:
        """In memory, as this store is: ``directory`` is not made."""
        copy = ox.Store()
        copy.bulk_extend(self._db)
        return copy

    def write(self, batch: Batch, *, progress: Progress | None = None, check: Check | None = None) -> None:
        if batch.files:
            raise Invalid("the scratch store takes quads, not files")
        more = check() if check else []
        self._changed()
        self.remove(batch.removals)
        self._db.extend([*batch.quads, *more])
