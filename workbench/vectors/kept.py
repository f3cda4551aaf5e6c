"""The vector index of records, kept in step with the store.

What is indexed: the statement of every record a person may recall (active or superseded; not
retracted, not admitted common sense). The store stays the truth: recall reads each candidate
record back from the store, so the index only ranks. Erasure removes a record's vector at once
(:meth:`RecordVectors.forget`); imports, supersession and retraction are picked up by
:meth:`RecordVectors.sync`, which compares the store's fingerprint (record counts by status and
tombstones, and the revision token every Workbench write changes) with the one the index was
saved at and applies the difference.
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox

from workbench.ids import META_GRAPH, STORE_NODE
from workbench.records import meta
from workbench.store import Store
from workbench.vectors.encoders import Encoder, HashingEncoder
from workbench.vectors.index import IndexCorrupt, VectorIndex
from workbench.vocab import PREFIXES

Bar = Callable[[str, int], object]  # a progress factory: (description, total) -> bar with update()/close()

RECALLABLE = meta("?r", """?r a wb:Assertion ; dcterms:identifier ?id ; wb:statement ?text ;
    wb:status ?st ; wb:recordType ?t . FILTER(?st != wb:Retracted && ?t != wb:CommonSense)""")


def bump(store: Store) -> None:
    """Give the store a new revision token, after a change to its records or names."""
    store.update(
        PREFIXES + f"DELETE WHERE {{ GRAPH {META_GRAPH} {{ {STORE_NODE} wb:revision ?r }} }} ; "
        f"INSERT DATA {{ GRAPH {META_GRAPH} {{ {STORE_NODE} wb:revision {ox.Literal(secrets.token_hex(8))} }} }}"
    )


def fingerprint(store: Store) -> str:
    """Changes whenever a record is added, changes status, or is erased: the store's revision
    token (changed by every Workbench that writes it) and its record counts."""
    rev = store.select(PREFIXES + f"SELECT ?r WHERE {{ GRAPH {META_GRAPH} {{ {STORE_NODE} wb:revision ?r }} }}")
    rows = store.select(
        PREFIXES + "SELECT ?st (COUNT(?r) AS ?n) WHERE { " + meta("?r", "?r a wb:Assertion ; wb:status ?st")
        + " } GROUP BY ?st ORDER BY ?st"
    )
    tomb = store.select(
        PREFIXES + "SELECT (COUNT(?t) AS ?n) WHERE { GRAPH ?stone { ?t a wb:Tombstone } }"
    )[0]
    parts = [f"{r['st'].value.rsplit('#', 1)[-1]}={r['n'].value}" for r in rows]  # type: ignore[union-attr]
    token = rev[0]["r"].value if rev else ""  # type: ignore[union-attr]
    return ";".join([f"revision={token}", *parts, f"tombstones={tomb['n'].value}"])  # type: ignore[union-attr]


class RecordVectors:
    """Record statements in a :class:`VectorIndex` under ``directory``."""

    def __init__(self, store: Store, directory: Path, encoder: Encoder) -> None:
        self.store = store
        self.index = VectorIndex(directory, encoder)
        self._checked = False
        self.rebuilt_because: str | None = None

    def ready(self, progress: Bar | None = None) -> VectorIndex:
        """The index, loaded and in step with the store: built when missing, rebuilt when its
        files are corrupt (an encoder mismatch is an error, never a silent rebuild)."""
        if not self._checked:
            if self.index.exists:
                try:
                    self.index.load()
                except IndexCorrupt as exc:
                    self.rebuilt_because = str(exc)
                    shutil.rmtree(self.index.directory)
                    self.index = VectorIndex(self.index.directory, self.index.encoder)
            else:
                self.rebuilt_because = "there was no index yet"
            self._checked = True
            self.sync(progress)
        return self.index

    @property
    def in_use(self) -> bool:
        """Loaded and checked against the store in this process (so its encoder fits)."""
        return self._checked

    def stale(self) -> None:
        """Note that the store changed; the next :meth:`ready` brings the index in step."""
        self._checked = False

    def sync(self, progress: Bar | None = None) -> tuple[int, int]:
        """Bring the index in step with the store. Returns (added, removed)."""
        now = fingerprint(self.store)
        if self.index.fingerprint == now and self.index.exists:
            return 0, 0
        rows = self.store.select(PREFIXES + f"SELECT ?id ?text WHERE {{ {RECALLABLE} }}")
        want = {r["id"].value: r["text"].value for r in rows}  # type: ignore[union-attr]
        have = self.index.ids()
        gone = have - set(want)
        new = {k: want[k] for k in sorted(set(want) - have)}
        removed = self.index.remove(gone)
        if new:
            bar = progress("indexing records", len(new)) if progress and len(new) > 1000 else None
            try:
                self.index.add(new, progress=bar.update if bar else None)  # type: ignore[attr-defined]
            finally:
                if bar:
                    bar.close()  # type: ignore[attr-defined]
        self.index.save(now)
        return len(new), removed

    def forget(self, record_id: str) -> None:
        """Remove an erased record's vector now, on disk too."""
        if self._checked:
            if self.index.remove([record_id]):
                self.index.save()  # at the fingerprint it was in step with: what came since is still to sync
        else:
            forget(self.store, self.index.directory, record_id)


def forget(store: Store, directory: Path, record_id: str) -> None:
    """Remove a record's vector from the index on disk, whatever encoder built it (removal
    needs none); a corrupt index is deleted, to be rebuilt from the store."""
    index = VectorIndex(directory, HashingEncoder())
    if not index.exists:
        return
    try:
        index.load(any_encoder=True)
    except IndexCorrupt:
        shutil.rmtree(directory)
        return
    if index.remove([record_id]):
        index.save()  # keeps the fingerprint it was built at: if it lagged the store, it still catches up


class Rebuilt:
    """An index rebuilt whole from the store whenever the store's fingerprint moves: for the
    names and things indexes, whose items may change with any record and are quick to make."""

    def __init__(self, store: Store, directory: Path, encoder: Encoder) -> None:
        self.store = store
        self.index = VectorIndex(directory, encoder)
        self._checked = False

    def stale(self) -> None:
        self._checked = False

    def fingerprint(self) -> str:
        return fingerprint(self.store)

    def items(self) -> dict[str, str]:
        """What to index, id -> text, read from the store."""
        raise NotImplementedError

    def ready(self) -> VectorIndex:
        if self._checked:
            return self.index
        now = self.fingerprint()
        if self.index.exists:
            try:
                self.index.load()
            except IndexCorrupt:
                self.index = VectorIndex(self.index.directory, self.index.encoder)
        if self.index.fingerprint != now:
            fresh = VectorIndex(self.index.directory, self.index.encoder)
            fresh.add(self.items())
            fresh.save(now)
            self.index = fresh
        self._checked = True
        return self.index
