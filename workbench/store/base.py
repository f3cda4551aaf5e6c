"""The Store interface every backend implements.

Everything above ``workbench.store`` talks SPARQL to a :class:`Store` and never branches on the
backend. Terms are pyoxigraph's (``NamedNode``, ``Literal``, ``BlankNode``, ``Quad``) on every
backend: the remote one parses its server's answers into the same types.

Writes come in two sizes. :meth:`Store.update` runs one SPARQL Update atomically.
:meth:`Store.write` lands a :class:`Batch` (an import) entirely or not at all, even if the process
is killed in the middle; how is each backend's business. What a write removes is gone from the
store's answers at once, but may stay readable in its files until :meth:`Store.purge` rewrites
them (an erasure's last step; see docs/decisions/20261201-erasure-reaches-the-disk.md).
"""

from __future__ import annotations

import abc
import contextlib
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pyoxigraph as ox

from workbench.errors import Forbidden, Invalid, Unsupported
from workbench.progress import Progress as Progress

Term = ox.NamedNode | ox.BlankNode | ox.Literal
Row = dict[str, Term | None]
Check = Callable[[], list[ox.Quad]]
# A query's dataset as the SPARQL 1.1 Protocol gives it (default-graph-uri, named-graph-uri);
# None keeps the query's own FROM / FROM NAMED, or else the whole store.
Graphs = Sequence[ox.NamedNode] | None
# Bytes of N-Quads per bulk load when copying through a dump. A remote view at 1.27M relations
# (2.1M quads from `oxigraph serve`, 2026-12-05): 4 MiB slices peak at 207 MiB of RSS, 8 at 236,
# 16 at 292, 32 at 440, all in 40-44 s; the whole dump at once at 1.5 GiB.
COPY_SLICE = 8 * 2**20


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do; asking for more raises :class:`workbench.errors.Unsupported`."""

    name: str
    on_disk: bool
    crash_safe_imports: bool
    bulk_load: bool
    staged_writes: bool  # can write an import's content before its check passes, and undo it
    # purge() rewrites the store's own files, so that what was removed cannot be read back from the
    # disk; without it purge() does nothing (a SPARQL server's files are its operator's business)
    erases_from_disk: bool = False
    # every query is a round trip over a network: fewer, larger queries cost less (on an embedded
    # store a call costs about 0.1 ms, and a larger query more than the calls it saves)
    round_trips: bool = False
    engine: str = ""  # a remote store: the engine whose differences it has ("sparql": none, "virtuoso")
    # reads as of a date (which records were effective then, superseded ones not) come out right:
    # Virtuoso 7 keeps superseded records in them, silently, so there they are refused
    as_of_reads: bool = True
    # a query with no dataset reads every graph as its default graph (Virtuoso 7): a restricted
    # reader's is given an empty one (workbench.access.restricted)
    union_default_graph: bool = False
    # prefixes of graphs the engine keeps for itself (Virtuoso's schema, its service description):
    # never the store's, so never a restricted reader's (workbench.access.restricted)
    engine_graphs: tuple[str, ...] = ()


@dataclass(frozen=True)
class FileLoad:
    """An RDF file to load as it is. ``to_graph`` receives the file's default-graph triples."""

    path: Path
    format: ox.RdfFormat
    to_graph: ox.NamedNode | None = None


@dataclass
class Batch:
    """What one import adds: loose quads, the content of whole files, and quads it removes
    (a status that a correction changes). A backend lands all of it or none of it."""

    quads: list[ox.Quad] = field(default_factory=list)
    files: list[FileLoad] = field(default_factory=list)
    removals: list[ox.Quad] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.quads) + len(self.files)


class Store(abc.ABC):
    """A quad store that answers SPARQL 1.1 and lands imports atomically."""

    capabilities: Capabilities
    location: str  # where the store is, for people: a directory or a URL
    generation: int = 0  # writes through this object so far: what this process changed
    owned: bool = True  # only this process writes it, so generation alone says when it changed

    def _changed(self) -> None:
        self.generation += 1

    def version(self) -> str:
        """Changes whenever the store's content may have changed: caches built from it (the
        per-viewer views of :mod:`workbench.access.views`) compare it. A store owned by this
        process counts its own writes; a shared server overrides this to ask the server too."""
        return str(self.generation)

    def known_version(self) -> str | None:
        """:meth:`version` if it is known without asking anyone, else None: what a cache may
        key on in the middle of a question. A store this process owns always knows it."""
        return self.version()

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """One question's reads, in which the store's version is taken once: a shared server is
        asked once per question rather than by every cache that checks it (each ask is a round
        trip). Nothing else changes; a store this process owns counts its own writes anyway."""
        yield

    def prefetch(self, *queries: str) -> None:  # noqa: B027  (only a shared server has round trips to save)
        """SELECTs this reading will make: a shared server sends them with the reading's version
        check, in one round trip, and :meth:`select` of the same text answers from it. Elsewhere
        nothing happens."""

    def prefetched(self, query: str) -> list[Row] | None:
        """The rows of a query :meth:`prefetch` sent, once; None when it was not sent (then
        nothing is asked: the caller decides whether to)."""
        return None

    @abc.abstractmethod
    def _answer(self, query: str) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        """The answer to a SPARQL query, as the backend's engine gives it."""

    def select(self, query: str) -> list[Row]:
        """Rows of a SPARQL SELECT, each a dict from variable name to term (None if unbound)."""
        result = self._answer(query)
        if not isinstance(result, ox.QuerySolutions):
            raise Invalid("expected a SELECT query")
        return rows_of(result)

    def ask(self, query: str) -> bool:
        """The answer of a SPARQL ASK."""
        result = self._answer(query)
        if not isinstance(result, ox.QueryBoolean):
            raise Invalid("expected an ASK query")
        return bool(result)

    @abc.abstractmethod
    def construct(self, query: str) -> list[ox.Triple]:
        """The triples of a SPARQL CONSTRUCT or DESCRIBE."""

    @abc.abstractmethod
    def query_raw(
        self,
        query: str,
        *,
        results: ox.QueryResultsFormat,
        graph: ox.RdfFormat,
        default_graph: Graphs = None,
        named_graphs: Graphs = None,
    ) -> bytes:
        """A query's answer serialised: ``results`` for SELECT/ASK, ``graph`` for CONSTRUCT.

        ``default_graph`` / ``named_graphs`` set the query's dataset as the SPARQL 1.1 Protocol's
        ``default-graph-uri`` / ``named-graph-uri`` do: given, they replace the query's own FROM and
        FROM NAMED; giving only one of them leaves the other empty (the Protocol's rule).
        """

    @abc.abstractmethod
    def update(self, update: str) -> None:
        """Run one SPARQL Update; it lands entirely or not at all."""

    @abc.abstractmethod
    def write(self, batch: Batch, *, progress: Progress | None = None, check: Check | None = None) -> None:
        """Land an import entirely or not at all, even across a crash.

        ``check`` finishes the import's plan: it returns more quads to add (metadata), or raises
        to undo everything. A backend that can stage writes runs it after writing the files'
        content and before committing, so a plan made in another process overlaps the write.
        """

    @abc.abstractmethod
    def remove(self, quads: Sequence[ox.Quad]) -> None:
        """Remove these quads in one atomic step."""

    @abc.abstractmethod
    def graph_names(self) -> frozenset[ox.NamedNode]:
        """Every named graph the store holds."""

    @abc.abstractmethod
    def has_graph(self, graph: ox.NamedNode) -> bool:
        """Whether a named graph holds any quad."""

    def per_graph(self, query: str) -> list[Row]:
        """The rows of ``query``, a SELECT each of whose rows speaks of the graph its ``?g`` names
        alone (grouped by ``?g``): every row here; a reader's store keeps the rows of the graphs
        they may see, the filter run once a graph rather than once a solution (counting every quad)."""
        return self.select(query)

    @abc.abstractmethod
    def held_graphs(self, graphs: Iterable[ox.NamedNode]) -> frozenset[ox.NamedNode]:
        """Of ``graphs``, those the store holds (as :meth:`graph_names` would list them): what an
        import asks, at a cost that grows with the import, not with the store."""

    @abc.abstractmethod
    def quads(self, graph: ox.NamedNode | None = None) -> Iterator[ox.Quad]:
        """Every quad in named graphs (or in one graph), for export and audit."""

    # reads one quad pattern (:meth:`matching`) without SPARQL in a few microseconds, where a
    # query's parse and plan alone take 35-90 (pyoxigraph in this process): worth a call a pattern
    cheap_patterns = False

    def matching(self, s: ox.NamedNode | ox.BlankNode | ox.Literal | None, p: ox.NamedNode | None,
                 o: ox.NamedNode | ox.BlankNode | ox.Literal | None,
                 graph: ox.NamedNode | ox.BlankNode | None = None, *, limit: int | None = None) -> list[ox.Quad]:
        """The quads in named graphs (or in ``graph``) matching ``s p o`` (None: any term), as
        ``GRAPH ?g { s p o }`` reads them (a literal subject matches nothing), at most ``limit``
        of them. By SPARQL here, so a reader's store filters them as it filters every read; where
        blank nodes cannot be written in a query, they are refused: ask one only where
        :attr:`cheap_patterns`."""
        if isinstance(s, ox.Literal):
            return []
        slots = ((s, "s"), (p, "p"), (o, "o"), (graph, "g"))
        if any(isinstance(t, ox.BlankNode) for t, _ in slots):
            raise Unsupported("a blank node cannot be matched by a SPARQL query")
        terms = [str(t) if t is not None else f"?{v}" for t, v in slots]
        cap = "" if limit is None else f" LIMIT {limit}"
        rows = self.select(f"SELECT * WHERE {{ GRAPH {terms[3]} {{ {' '.join(terms[:3])} }} }}{cap}")
        return [ox.Quad(*(t if t is not None else r[v] for t, v in slots)) for r in rows]  # type: ignore[arg-type]

    def quads_rewritten(self, rewrite: Callable[[str], str], graph: ox.NamedNode | None = None) -> Iterator[ox.Quad]:
        """:meth:`quads` as a reader reads them whose every query is ``rewrite(query)``
        (:mod:`workbench.access.restricted`); a backend that streams its dump streams this too."""
        pattern = f"GRAPH {graph} {{ ?s ?p ?o }} BIND({graph} AS ?g)" if graph else "GRAPH ?g { ?s ?p ?o }"
        for r in self.select(rewrite(f"SELECT ?g ?s ?p ?o WHERE {{ {pattern} }}")):
            yield ox.Quad(r["s"], r["p"], r["o"], r["g"])  # type: ignore[arg-type]

    @abc.abstractmethod
    def dump(self, out: IO[bytes], *, format: ox.RdfFormat) -> None:
        """Serialise every named graph in a dataset format (TriG, N-Quads)."""

    def copy_into(self, directory: Path) -> ox.Store:
        """A pyoxigraph database holding every quad, made in ``directory`` (which must not exist;
        its parent must), to read apart from the store: a reader's view
        (:mod:`workbench.access.views`). Here the dump streams into a temporary file beside it and
        is bulk loaded a slice at a time: neither the dump nor the loader's batches (about 1.4 GiB
        for a whole 2.1M-quad dump at once) hold the store in memory. Backends that can do better
        do.

        Raises OSError when the directory cannot be made or written.
        """
        with tempfile.TemporaryFile(dir=directory.parent) as dumped:
            self.dump(dumped, format=ox.RdfFormat.N_QUADS)
            dumped.seek(0)
            db = ox.Store(str(directory))
            try:
                # N-Quads is a quad a line, so whole lines make a slice that parses on its own.
                while block := dumped.read(COPY_SLICE):
                    db.bulk_load(block + dumped.readline(), format=ox.RdfFormat.N_QUADS)
            except BaseException:
                del db  # closed before the caller removes the directory
                raise
        return db

    def apply(
        self, *, insert: Sequence[ox.Quad] = (), delete: Sequence[ox.Quad] = (), drop: Sequence[ox.NamedNode] = ()
    ) -> None:
        """Drop graphs, delete and insert quads in one atomic SPARQL Update (small changes)."""
        ops = [f"DROP SILENT GRAPH {g}" for g in drop]
        if delete:
            ops.append(f"DELETE DATA {{ {data_block(delete)} }}")
        if insert:
            ops.append(insert_data(insert))
        if ops:
            self.update(" ;\n".join(ops))

    def purge(self) -> None:  # noqa: B027  (most backends cannot; see Capabilities.erases_from_disk)
        """Rewrite the store's files so that nothing removed from it can be read back from the
        disk: the last step of an erasure. A backend with ``capabilities.erases_from_disk`` does
        (the embedded one); the others do nothing: a store in memory has no files, and a SPARQL
        server's files are its operator's to compact (docs/decisions/20261201-erasure-reaches-the-disk.md).

        >>> from workbench.store import MemoryStore
        >>> MemoryStore().purge()
        """

    @contextlib.contextmanager
    def purging(self) -> Iterator[None]:
        """Removals made in the block reach the disk when it ends (:meth:`purge`), even when it
        raises after writing; a block that wrote nothing purges nothing.

        >>> from workbench.store import MemoryStore
        >>> with MemoryStore().purging():
        ...     pass
        """
        start = self.generation
        try:
            yield
        finally:
            if self.generation != start:
                self.purge()

    @property
    def files_dir(self) -> Path:
        """Where files that belong with this store live (its vector indexes): inside an on-disk
        store; for any other, a folder per location under the user's cache
        (``$XDG_CACHE_HOME/workbench``, else ``~/.cache/workbench``)."""
        import hashlib
        import os

        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "workbench"
        return cache / hashlib.sha256(self.location.encode()).hexdigest()[:16]

    def close(self) -> None:  # noqa: B027  (most backends hold nothing to release)
        """Release the store. Further calls fail."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ReadOnly(Store):
    """A store one reader reads (a view, or the store read through the rewrite): every write is
    refused, naming where writes go."""

    def _refuse(self) -> Forbidden:
        return Forbidden(f"{self.location} is read-only, as one reader sees it: writes go to the store itself")

    def update(self, update: str) -> None:
        raise self._refuse()

    def remove(self, quads: Sequence[ox.Quad]) -> None:
        raise self._refuse()

    def write(self, batch: Batch, *, progress: Progress | None = None, check: Check | None = None) -> None:
        raise self._refuse()


def data_block(quads: Sequence[ox.Quad], most: int = 2000) -> str:
    """Quads as the body of INSERT DATA / DELETE DATA, grouped by graph, at most ``most`` triples
    a block (Virtuoso 7's parser gives up past about 5,000 in one block; several blocks of one graph
    say the same)."""
    by_graph: dict[str, list[str]] = {}
    for q in quads:
        key = "" if isinstance(q.graph_name, ox.DefaultGraph) else str(q.graph_name)
        by_graph.setdefault(key, []).append(f"{q.subject} {q.predicate} {q.object} .")
    parts = []
    for g, triples in by_graph.items():
        for start in range(0, len(triples), most):
            body = "\n".join(triples[start:start + most])
            parts.append(f"GRAPH {g} {{\n{body}\n}}" if g else body)
    return "\n".join(parts)


def insert_data(quads: Sequence[ox.Quad]) -> str:
    """The update that inserts ``quads``: INSERT DATA, or the same quads as an INSERT template
    when some are blank nodes (the same in SPARQL 1.1: fresh blank nodes each time; Virtuoso 7
    refuses blank nodes in INSERT DATA)."""
    block = data_block(quads)
    if any(isinstance(t, ox.BlankNode) for q in quads for t in (q.subject, q.object)):
        return f"INSERT {{ {block} }} WHERE {{ }}"
    return f"INSERT DATA {{ {block} }}"


def reach(store: Store, graph: ox.NamedNode | str, predicate: ox.NamedNode, starts: Sequence[ox.NamedNode], *,
          forward: bool = True, backward: bool = False, most: int = 1000,
          within: str = "") -> dict[ox.NamedNode, list[ox.NamedNode]]:
    """For each start, itself and every node it reaches along ``predicate`` edges in ``graph`` (an
    IRI, or a variable: edges in any graph), ``forward``, ``backward`` or both, nearest first: one
    query a level for all starts, with plain triple patterns. Not a property path: Virtuoso 7
    refuses ``(p|^p)*`` and ``?x p+ ?y`` with ?x unbound ("transitive start not given"), and
    drops rows when a path sits inside OPTIONAL. At most ``most`` levels (a longer chain is a cycle).
    ``within``: a filter on the graph variable, which graphs count."""
    seen = {s: [s] for s in starts}
    frontier = {(s, s) for s in starts}  # (start, node reached at this level)
    ways = [w for w, on in ((f"{{ ?a {predicate} ?b }}", forward), (f"{{ ?b {predicate} ?a }}", backward)) if on]
    for _ in range(most):
        if not frontier:
            break
        values = " ".join(f"({o} {n})" for o, n in sorted(frontier, key=str))
        rows = store.select(f"SELECT DISTINCT ?o ?b WHERE {{ VALUES (?o ?a) {{ {values} }} GRAPH {graph} {{ "
                            f"{' UNION '.join(ways)} }} {within} }}")
        frontier = set()
        for r in sorted(rows, key=lambda r: str(r["b"])):
            o, b = r["o"], r["b"]
            if isinstance(b, ox.NamedNode) and isinstance(o, ox.NamedNode) and b not in seen[o]:
                seen[o].append(b)
                frontier.add((o, b))
    return seen


def truth(term: object) -> bool:
    """A boolean a query computed (``BIND(EXISTS {...} AS ?x)``): true, or 1 (Virtuoso 7 gives
    EXISTS as an integer)."""
    return isinstance(term, ox.Literal) and term.value in ("true", "1")


def rows_of(result: ox.QuerySolutions) -> list[Row]:
    """Solutions as rows. A solution iterates its values in the variables' order, None where
    unbound: 2.7x faster than looking each up by name, on a question's several small results."""
    names = [v.value for v in result.variables]
    return [dict(zip(names, sol, strict=True)) for sol in result]
