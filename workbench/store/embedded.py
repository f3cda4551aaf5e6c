"""The embedded default: pyoxigraph on disk, owned by one process.

Layout of a store directory::

    DIR/workbench.json   marks the directory as a Workbench store (format version)
    DIR/workbench.lock   held (flock) by the one process that has the store open
    DIR/oxigraph/        the RocksDB database
    DIR/checkpoint/      present only while an import is landing: the store as it was before
    DIR/journal.json     present only while an import is landing: says the checkpoint is valid
    DIR/purge.json       present only while an erasure's rewrite of the database is due
    DIR/oxigraph.new/    present only while that rewrite copies the database (never complete)
    DIR/oxigraph.ready/  the complete copy, for a moment: it replaces DIR/oxigraph

Imports must land entirely or not at all, even under kill -9, and large ones must be fast:
pyoxigraph's ``bulk_load`` is an order of magnitude faster than a transaction but writes as it
goes. So before an import writes anything, the store takes a RocksDB checkpoint (hard links to
its immutable files: milliseconds, whatever the size) and then fsyncs ``journal.json``. Removing
the journal is the commit. If the import fails, or the process dies before the commit, the
checkpoint replaces the database (at once, or when the store is next opened). See
docs/decisions/20261130-crash-safe-imports.md.

Erasure must reach the disk, and RocksDB does not let it: a removed quad leaves its bytes in the
write-ahead log and in SST files until a compaction drops them, and Oxigraph never removes a
string from its dictionary (the ``id2str`` column family) at all, so no compaction does.
:meth:`EmbeddedStore.purge` therefore rewrites the database: it copies what the store holds now
into ``oxigraph.new``, renames that ``oxigraph.ready`` once complete, and swaps it in for the
old database, whose directory is then deleted. ``purge.json`` is written first and removed
last, so a rewrite cut short by a crash is done again when the store is next opened. See
docs/decisions/20261201-erasure-reaches-the-disk.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import json
import os
import shutil
import signal
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyoxigraph as ox

from workbench.errors import Conflict, Invalid, NotFound, StoreUnavailable
from workbench.progress import open_counted
from workbench.store.base import Batch, Capabilities, Check, FileLoad, Progress, Store
from workbench.store.files import fsync_dir, write_atomically
from workbench.store.pyox import PyoxStore

FORMAT_VERSION = 1
# Fault injection for the crash tests: WORKBENCH_CRASH_AT=after-content (a write's files are on
# disk, its metadata not yet) or after-metadata (all written, not yet committed) kills the
# process there with SIGKILL, so recovery is tested on real partial writes at known points.
CRASH_AT = os.environ.get("WORKBENCH_CRASH_AT", "")
# Above these sizes an import is bulk loaded (measured: a transaction of 1.27M quads takes about
# 12x longer than bulk_load, and twice the memory); below, a transaction avoids writing files.
BULK_THRESHOLD = 50_000
BULK_BYTES = 4_000_000
PURGE_DUE = "purge.json"
# How long a purge waits for reads in progress before it leaves the swap to the next open.
SWAP_WAIT_S = 60.0


class _Gate:
    """Reads share the database object; a purge's swap waits for them to finish and holds new
    ones back until the new database is open. A thread that is reading (a ``quads()`` generator
    not yet finished) reads on through it, and cannot swap: it would wait for itself."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._shut = False
        self._mine = threading.local()

    def reading(self) -> _Gate:
        """``with gate.reading():`` a read. Nested in this thread's read, it takes no lock: the
        swap waits for the outer one (a question's, then each of its quad patterns)."""
        return self

    def __enter__(self) -> None:
        depth = getattr(self._mine, "depth", 0)
        if not depth:
            with self._cond:
                self._cond.wait_for(lambda: not self._shut)
                self._readers += 1
        self._mine.depth = depth + 1

    def __exit__(self, *exc: object) -> None:
        self._mine.depth -= 1
        if not self._mine.depth:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    def refuse_a_reader(self) -> None:
        """Raises Conflict when this thread is reading: it would wait for itself."""
        if getattr(self._mine, "depth", 0):
            raise Conflict("the store cannot rewrite its files while this thread is reading them")

    @contextlib.contextmanager
    def shut(self, timeout: float) -> Iterator[None]:
        """No read runs inside. Raises Conflict when this thread is reading, StoreUnavailable
        when reads go on for ``timeout`` seconds."""
        self.refuse_a_reader()
        with self._cond:
            self._shut = True
            if not self._cond.wait_for(lambda: self._readers == 0, timeout):
                self._shut = False
                self._cond.notify_all()
                raise StoreUnavailable(f"reads of the store went on for {timeout:g} s")
        try:
            yield
        finally:
            with self._cond:
                self._shut = False
                self._cond.notify_all()


class EmbeddedStore(PyoxStore):
    """A Workbench store in a directory on this machine."""

    capabilities = Capabilities(
        name="embedded", on_disk=True, crash_safe_imports=True, bulk_load=True, staged_writes=True,
        erases_from_disk=True,
    )

    @property
    def files_dir(self) -> Path:
        return self.path

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
        # Our own lock first: recovery must never run while another process is writing.
        self._lock = open(self.path / "workbench.lock", "a+b")  # noqa: SIM115 - held until close()
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            raise StoreUnavailable(
                f"the store at {self.path} is open in another process; if a Workbench server owns it, "
                "use its URL (workbench --endpoint http://HOST:PORT/sparql) instead"
            ) from None
        # Held by every write: an import from checkpoint to commit (a SPARQL Update in between
        # would be undone with it), and a purge from its copy to its swap (it would be lost).
        self._writing = threading.RLock()
        self._gate = _Gate()
        self._read_only = False  # only after a purge found the database held open elsewhere
        self.recovered = self._recover()
        purge_due = self._finish_purge()
        self._db = self._open_db()
        if not marker.exists():
            write_atomically(marker, json.dumps({"format": FORMAT_VERSION}).encode())
        if purge_due:  # an erasure's rewrite was cut short: do it now
            try:
                self.purge()
            except BaseException:
                self.close()  # the lock too: free what failed it (disk space) and open again
                raise

    def _open_db(self) -> ox.Store:
        try:
            return ox.Store(str(self.path / "oxigraph"))
        except OSError as exc:
            raise StoreUnavailable(f"cannot open the store at {self.path}: {exc}") from exc

    def _reading(self) -> contextlib.AbstractContextManager[None]:
        return self._gate.reading()

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A question's reads inside one pass of the gate: each of its many small reads (quad
        patterns, :attr:`cheap_patterns`) then passes it without taking a lock."""
        with self._gate.reading():
            yield

    def update(self, update: str) -> None:
        with self._writing:
            super().update(update)

    def remove(self, quads: Sequence[ox.Quad]) -> None:
        with self._writing:
            super().remove(quads)

    def write(self, batch: Batch, *, progress: Progress | None = None, check: Check | None = None) -> None:
        with self._writing:
            self._checkpoint()
            self._changed()
            try:
                if batch.removals:
                    self.remove(batch.removals)
                if len(batch.quads) < BULK_THRESHOLD:
                    self._db.extend(batch.quads)
                else:
                    self._db.bulk_extend(_counted(batch.quads, progress))
                for load in batch.files:
                    self._load(load, progress)
                _crash_point("after-content")
                if check:
                    more = check()
                    (self._db.extend if len(more) < BULK_THRESHOLD else self._db.bulk_extend)(more)
                self._db.flush()
                _crash_point("after-metadata")
            except BaseException:
                self._restore()
                raise
            self._commit()

    def copy_into(self, directory: Path) -> ox.Store:
        """A RocksDB checkpoint: hard links to the store's immutable files (a copy where links
        are impossible), in milliseconds whatever the size; its memtables flushed first. Never of
        a write in progress: its content lands before its metadata (the sources' visibility), so a
        view copied in between would show a restricted import's triples."""
        with self._writing:
            self._db.flush()
            self._db.backup(str(directory))
        return ox.Store(str(directory))

    def _load(self, load: FileLoad, progress: Progress | None) -> None:
        size = load.path.stat().st_size
        if size < BULK_BYTES:  # a transaction: no new files on disk for a small import
            self._db.load(path=str(load.path), format=load.format, to_graph=load.to_graph)
            if progress:
                progress(size)
            return
        if progress is None:
            self._db.bulk_load(path=str(load.path), format=load.format, to_graph=load.to_graph)
            return
        reader = open_counted(load.path, progress)
        try:
            self._db.bulk_load(reader, load.format, to_graph=load.to_graph)
        finally:
            reader.close()

    # ------------------------------------------------------------------ undo by checkpoint

    def _checkpoint(self) -> None:
        """Keep the store as it is now, then say so in the journal (fsync'd). Before this, nothing
        was written; after it, anything written can be undone."""
        checkpoint = self.path / "checkpoint"
        if checkpoint.exists():  # a checkpoint never committed to a journal: stale
            shutil.rmtree(checkpoint)
        self._db.flush()
        self._db.backup(str(checkpoint))
        fsync_dir(self.path)
        write_atomically(self.path / "journal.json", json.dumps({"checkpoint": checkpoint.name}).encode())

    def _commit(self) -> None:
        (self.path / "journal.json").unlink()
        fsync_dir(self.path)
        shutil.rmtree(self.path / "checkpoint", ignore_errors=True)

    def _restore(self) -> None:
        """Undo the write in progress: put the checkpoint back in place of the database."""
        del self._db  # pyoxigraph closes the database when its last reference goes
        gc.collect()
        self._recover()
        self._db = self._open_db()

    def _recover(self) -> bool:
        """Put a checkpoint back if a journal says a write did not commit. Returns whether it did.
        Each step is a rename, so a crash during recovery is recovered from on the next open."""
        journal, checkpoint = self.path / "journal.json", self.path / "checkpoint"
        db, old = self.path / "oxigraph", self.path / "oxigraph.undone"
        undone = journal.exists()
        if undone:
            if checkpoint.exists():
                if db.exists():
                    shutil.rmtree(old, ignore_errors=True)
                    db.rename(old)
                checkpoint.rename(db)
                fsync_dir(self.path)
            journal.unlink()
            fsync_dir(self.path)
        shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(checkpoint, ignore_errors=True)
        return undone

    # ------------------------------------------------------------------ purge by rewrite

    def purge(self) -> None:
        """Rewrite the database from what it holds now, so that nothing removed from it stays in
        its files (see the module's note): a copy made beside it, swapped in, the old one
        deleted. Reads go on during the copy; writes wait for the swap. It costs a dump and a
        bulk load of the whole store (docs/decisions/20261201-erasure-reaches-the-disk.md).

        Raises StoreUnavailable when reads keep the old database busy for ``SWAP_WAIT_S``
        seconds, or something in this process holds it open outside the store: the store's
        content is as it was, and the next open rewrites it; Conflict when called while this
        thread is iterating the store. OSError when the disk is full.

        >>> import tempfile
        >>> with EmbeddedStore(tempfile.mkdtemp() + "/s", create=True) as s:
        ...     s.update("INSERT DATA { GRAPH <urn:g> { <urn:a> <urn:b> 'gone' } }")
        ...     s.update("DROP GRAPH <urn:g>")
        ...     s.purge()
        ...     b"gone" in b"".join(f.read_bytes() for f in s.path.rglob("*") if f.is_file())
        False
        """
        self._gate.refuse_a_reader()  # before the copy, not after it
        with self._writing:
            due = self.path / PURGE_DUE
            if not due.exists():
                write_atomically(due, b"{}\n")
            try:
                self._swap(self._copied())
            except StoreUnavailable as exc:
                raise StoreUnavailable(
                    f"{exc}; what was removed is gone from the store's answers, but stays in its files until "
                    "the store is next opened, which rewrites them"
                ) from exc
            self._changed()

    @contextlib.contextmanager
    def purging(self) -> Iterator[None]:
        """As :meth:`Store.purging`; ``purge.json`` is written first, so that a crash in the block
        or the purge leaves the rewrite to the next open."""
        due = self.path / PURGE_DUE
        write_atomically(due, b"{}\n")
        start = self.generation
        try:
            yield
        finally:
            if self.generation != start:
                self.purge()
            else:
                due.unlink(missing_ok=True)

    def _copied(self) -> Path:
        """Every quad (and empty named graph) copied into a new database beside the store, closed
        and complete: ``oxigraph.ready``."""
        new, ready = self.path / "oxigraph.new", self.path / "oxigraph.ready"
        shutil.rmtree(new, ignore_errors=True)
        shutil.rmtree(ready, ignore_errors=True)
        self._db.flush()
        try:
            copy = Store.copy_into(self, new)  # a dump bulk loaded a slice at a time: no checkpoint
            with self._reading():
                graphs = set(self._db.named_graphs())
            for graph in graphs - set(copy.named_graphs()):
                copy.add_graph(graph)
            copy.flush()
            del copy  # the only reference: RocksDB closes here
            fsync_dir(new)
            new.rename(ready)
            fsync_dir(self.path)
        except BaseException:
            shutil.rmtree(new, ignore_errors=True)
            raise
        return ready

    def _swap(self, ready: Path) -> None:
        """Put the complete copy in place of the database, once no read uses it. Until the
        renames begin, a failure discards the copy (the database is the truth: writes may follow);
        after, the copy is the database, and the next open finishes what a failure left."""
        db = self.path / "oxigraph"
        renaming = False
        try:
            with self._gate.shut(SWAP_WAIT_S):
                del self._db  # pyoxigraph closes the database when its last reference goes
                gc.collect()
                try:  # whether it did: RocksDB refuses a second open in one process
                    probe = ox.Store(str(db))
                except OSError as exc:
                    self._db = ox.Store.read_only(str(db))  # reads go on; writes fail until it is reopened
                    self._read_only = True
                    raise StoreUnavailable(
                        f"something in this process holds the database of {self.path} open outside the store"
                    ) from exc
                del probe
                renaming = True
                self._finish_purge()
                self._db = self._open_db()
        except BaseException:
            if not renaming:
                shutil.rmtree(ready, ignore_errors=True)
            raise

    def _finish_purge(self) -> bool:
        """Finish a purge's swap if its copy is complete (each step a rename or a removal, so a
        crash here is finished on the next open too); remove a partial copy. Returns whether a
        rewrite is still due."""
        db, new, ready, old = (self.path / n for n in ("oxigraph", "oxigraph.new", "oxigraph.ready", "oxigraph.purged"))
        due = self.path / PURGE_DUE
        shutil.rmtree(new, ignore_errors=True)
        if ready.exists():
            if db.exists():
                shutil.rmtree(old, ignore_errors=True)
                db.rename(old)
            ready.rename(db)
            fsync_dir(self.path)
            due.unlink(missing_ok=True)
            fsync_dir(self.path)
        shutil.rmtree(old, ignore_errors=True)
        return due.exists()

    def close(self) -> None:
        if getattr(self, "_db", None) is not None:
            if not self._read_only:
                self._db.flush()
            del self._db
        if not self._lock.closed:
            self._lock.close()


def _crash_point(name: str) -> None:
    if name == CRASH_AT:
        os.kill(os.getpid(), signal.SIGKILL)


def _counted(quads: list[ox.Quad], progress: Progress | None) -> Iterator[ox.Quad]:
    for i, quad in enumerate(quads, start=1):
        if progress and i % 10_000 == 0:
            progress(10_000)
        yield quad


