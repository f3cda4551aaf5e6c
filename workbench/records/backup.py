"""Exports and restores: the whole store to a file, and a file back into an empty store.

An export in TriG, N-Quads or JSON-LD holds every graph (Workbench's own too: users, record
metadata, the audit, the queue, rules) and every bit of provenance, but the store's revision
token, which only belongs to the store and its indexes. It comes back with :func:`restore`,
into an empty store, never with an import: an import lands data in record graphs only
(:mod:`workbench.access.writes`). Turtle, N-Triples and RDF/XML hold no graphs: an export in
them is the triples of the active records, for other tools, without provenance.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import pyoxigraph as ox

from workbench.errors import Conflict, Invalid
from workbench.formats import EXTENSIONS
from workbench.ids import ONTOLOGY_GRAPH, STORE_NODE
from workbench.imports.common import ProgressFactory
from workbench.imports.landing import import_rdf
from workbench.imports.rdf import RdfOptions
from workbench.records import effective, layout
from workbench.store import Store
from workbench.values.records import ImportReport
from workbench.vocab import PREFIXES

T = TypeVar("T")


def export(store: Store, target: Path) -> int:
    """Write ``store`` (what the exporting reader may read) to ``target``, in the format its
    extension names. Returns the quads written."""
    if not target.parent.is_dir():
        raise Invalid(f"no such directory: {target.parent}", where=str(target))
    if target.is_dir():
        raise Invalid("is a directory; name the file to write", where=str(target))
    found = EXTENSIONS.get(target.suffix.lower())
    fmt = found.rdf if found else None
    if fmt is None:
        raise Invalid(f"cannot tell the format from {target.suffix!r}; use one of {', '.join(sorted(EXTENSIONS))}",
                      where=str(target))
    written = 0

    def counted(terms: Iterable[T]) -> Iterator[T]:
        nonlocal written
        for term in terms:
            written += 1
            yield term

    if fmt.supports_datasets or fmt == ox.RdfFormat.JSON_LD:
        # A quad at a time from the store to the file: an export never holds the store in memory.
        terms: Iterable[ox.Quad] | Iterable[ox.Triple] = (q for q in store.quads() if q.subject != STORE_NODE)
    else:
        rows = store.select(
            PREFIXES + f"SELECT DISTINCT ?s ?p ?o WHERE {{ {effective('?g')} GRAPH ?g {{ ?s ?p ?o }} }}"
        )
        terms = [ox.Triple(r["s"], r["p"], r["o"]) for r in rows]  # type: ignore[arg-type]
    part = target.with_name(target.name + ".part")
    try:
        with open(part, "wb") as out:
            ox.serialize(counted(terms), out, format=fmt)  # type: ignore[arg-type]  # quads or triples, one kind
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    part.replace(target)
    return written


def restore(store: Store, path: Path, *, actor: str, now: str, progress: ProgressFactory | None = None) -> ImportReport:
    """Land an export in ``store``, which must be empty (at most its ontology), all or nothing.
    Raises Invalid (no such file, not an export), Conflict (the store holds data), ParseError."""
    if not path.is_file():
        raise Invalid(f"no such file: {path}")
    held = sorted(g.value for g in store.graph_names() - {ONTOLOGY_GRAPH})
    if held:
        raise Conflict(f"an export is restored into an empty store; {store.location} already holds {len(held)} "
                       f"graphs ({held[0]}, ...): create a new store (workbench --store NEW init) and restore there")
    landed = import_rdf(store, [path], RdfOptions(actor=actor, now=now, restore=True), progress)
    layout.migrate(store)  # an export written before sources had graphs of their own
    return ImportReport(
        files=(str(path),),
        records_added=landed.plan.records_added,
        records_unchanged=landed.plan.records_unchanged,
        entities_created=0,
        quads_added=landed.quads_added,
        activity="",
    )
