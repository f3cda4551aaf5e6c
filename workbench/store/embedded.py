"""The embedded default: pyoxigraph on disk, owned by one process.

Layout of a store directory::

    DIR/workbench.json   marks the directory as a Workbench store (format version)
    DIR/workbench.lock   held (flock) by the one process that has the store open
    DIR/oxigraph/        the RocksDB database
    DIR/checkpoint/      present only while an import is landing: the store as it was before
    DIR/journal.json     present only while an import is landing: says the checkpoint is valid

Imports must land entirely or not at all, even under kill -9, and large ones must be fast:
pyoxigraph's ``bulk_load`` is an order of magnitude faster than a transaction but writes as it
goes. So before an import writes anything, the store takes a RocksDB checkpoint (hard links to
its immutable files: milliseconds, whatever the size) and then fsyncs ``journal.json``. Removing
the journal is the commit. If the import fails, or the process dies before the commit, the
checkpoint replaces the database (at once, or when the store is next opened). See
docs/decisions/20261130-crash-safe-imports.md.
"""

from __future__ import annotations

import fcntl
import gc
import json
import os
import shutil
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox

from workbench.errors import Invalid, NotFound, StoreUnavailable
from workbench.files import fsync_dir, write_atomically
from workbench.progress import open_counted
from workbench.store.base import Batch, Capabilities, Check, FileLoad, Progress
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


class EmbeddedStore(PyoxStore):
    """A Workbench store in a directory on this machine."""

    capabilities = Capabilities(
        name="embedded", on_disk=True, crash_safe_imports=True, bulk_load=True, staged_writes=True
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
        self.recovered = self._recover()
        self._db = self._open_db()
        self._writing = threading.RLock()  # held by a write (import) from checkpoint to commit
        if not marker.exists():
            write_atomically(marker, json.dumps({"format": FORMAT_VERSION}).encode())

    def _open_db(self) -> ox.Store:
        try:
            return ox.Store(str(self.path / "oxigraph"))
        except OSError as exc:
            raise StoreUnavailable(f"cannot open the store at {self.path}: {exc}") from exc

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

    def close(self) -> None:
        if getattr(self, "_db", None) is not None:
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


