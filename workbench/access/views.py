"""What a person may see: the store as it looks to them, for every read.

Access follows the source. A source with ``wb:visibleTo`` agents is visible only to those
people and to members (``wb:memberOf``) of those groups; a source with none is visible to
everyone. A requester sees an assertion only if they may see its source. Rather than filter each
of the many reads (lookups, rule bodies, counts, recall, SPARQL with ``GRAPH ?g`` and ``FROM``),
a restricted reader gets a **view**: a copy of the store without what they may not see.
Everything above then runs unchanged on the view, so a derived conclusion can only use premises
they may see, a count counts only those, recall and guesses rank only those, and an unknown id is
unknown whether it is hidden or absent. The view holds no:

- assertion graph whose source is hidden, nor its metadata, nor links to it from visible
  records (``wb:supersedes``, ``wb:supportedBy``), nor the hidden source itself;
- entity mentioned only by hidden assertions (its names, alias registrations and merges);
- candidate taken from a hidden source or naming an audience without them, nor a summary of a
  hidden record;
- import or proposal activity, or agent, that nothing left refers to;
- token hash, for anyone (SPARQL shows the users graph without them).

Admins, and everyone on a store without users, see every source; their SPARQL still runs on a
view (without token hashes). Writes never go through a view. On a SPARQL server a named
reader's questions, SPARQL, exports and a writer's lookups read the server through a rewrite of
each query instead (:mod:`workbench.access.restricted`): a view there is the whole dump, after
every write; only SPARQL with the rules' conclusions still reads one there.

A view is a pyoxigraph database on disk, in a folder of this process's under the store's
``files_dir/views/`` (a scratch store in memory keeps its views in memory): a RocksDB checkpoint
of an embedded store (hard links: milliseconds, whatever the size), else the store's dump
streamed through a file; then redacted (:mod:`workbench.access.redaction`) and reopened
read-only. So memory is bounded by RocksDB's caches, not by the data. Readers who may not see
the same things (:class:`~workbench.access.redaction.Hidden`) share one view: every admin and
everyone who may see every source share one. A view is rebuilt when the store's
:meth:`~workbench.store.Store.version` moves; at most :data:`CACHED_VIEWS` are kept. A replaced
or evicted view's folder is removed once nothing reads it, all of them on :meth:`Views.close`,
and a dead process's left-overs when the next one makes its folder.

An erasure cannot wait for that: a view made before it holds the erased record's bytes (a
checkpoint's files are hard links to the store's files as they were), so :func:`purge` removes
every view of the store at once, read or not, and the next read builds a new one.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import itertools
import os
import shutil
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from workbench.access import users
from workbench.access.redaction import Hidden, Queued, hidden, queued, redact
from workbench.access.users import Role
from workbench.store.base import Capabilities, ReadOnly, Store
from workbench.store.caches import PerStore
from workbench.store.pyox import PyoxStore

CACHED_VIEWS = 8  # views (distinct sets of what is hidden) open at once
COPIES = "copies."  # a process's folder of views under files_dir/views/ starts with this
_LIVE: weakref.WeakSet[Views] = weakref.WeakSet()  # every Views of this process, for purge()
_WITH = itertools.count(1)  # numbers the folders of with_quads


@dataclass(frozen=True)
class Viewer:
    """Who reads: their name and groups (``agents``), or someone who sees every source."""

    name: str | None
    agents: frozenset[str] = frozenset()
    sees_all: bool = False

    @functools.cached_property  # asked on every read; hashed once
    def key(self) -> str:
        """Names the reader's own files beside their view (its vector indexes)."""
        text = "*" if self.sees_all else "\n".join(sorted(self.agents))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


EVERYONE = Viewer(None, sees_all=True)
PUBLIC = Viewer(None)  # in no group: sees only the sources every reader may see


def viewer(store: Store, name: str | None) -> Viewer:
    """The reader ``name`` is on ``store``: every source on a store with no users, for an admin
    and for None (the store's owner on this machine); else their own and their groups' sources.
    A name that is not a user sees the sources visible to everyone and to that name.

    >>> from workbench.store import MemoryStore
    >>> viewer(MemoryStore(), "bob").sees_all
    True
    """
    if name is None:
        return EVERYONE
    everyone = users.by_name(store)
    # Every read asks; the same reader is kept while the users are (until the store changes).
    kept = _Readers.of(store)
    if kept.users is not everyone:
        kept.users, kept.readers = everyone, {}
    found = kept.readers.get(name)
    if found is None:
        found = kept.readers[name] = _viewer(everyone, name)
    return found


class _Readers(PerStore):
    """The readers of one store, as :func:`viewer` found them from these ``users``."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.users: Mapping[str, users.User] | None = None
        self.readers: dict[str, Viewer] = {}


def _viewer(everyone: Mapping[str, users.User], name: str) -> Viewer:
    if not everyone:
        return EVERYONE
    found = everyone.get(name)
    if found is not None and Role.ADMIN in found.roles:
        return Viewer(name, sees_all=True)
    groups = found.groups if found is not None else frozenset()
    return Viewer(name, frozenset({name}) | groups)


class Copy:
    """One redacted copy of the store, shared by the readers who may not see ``hidden``."""

    def __init__(self, db: ox.Store, directory: Path | None, version: str, hidden: Hidden) -> None:
        self.db = db
        self.directory = directory  # None: in memory
        self.version = version
        self.hidden = hidden


class ViewStore(ReadOnly, PyoxStore):
    """A read-only copy of a store as one reader may see it (see the module's note)."""

    capabilities = Capabilities(
        name="view", on_disk=False, crash_safe_imports=False, bulk_load=False, staged_writes=False
    )

    def __init__(self, base: Store, reader: Viewer, copy: Copy) -> None:
        self.base = base
        self.reader = reader
        self.location = f"{base.location} as seen by {reader.name or 'everyone'}"
        self.copy = copy  # keeps the copy's folder until the last reader of it goes
        self._db = copy.db
        self.built_from = copy.version

    @property
    def files_dir(self) -> Path:
        """Its own vector indexes, beside the store's, one folder per set of agents (they
        follow the view incrementally, so they outlive it)."""
        return self.base.files_dir / "views" / self.reader.key


class Views:
    """The views of one store, built on first use and again after the store changes."""

    def __init__(self, base: Store, size: int = CACHED_VIEWS) -> None:
        self.base = base
        self.size = size
        self._copies: OrderedDict[str, Copy] = OrderedDict()  # Hidden.key -> its copy, oldest use first
        self._stores: dict[str, ViewStore] = {}  # Viewer.key -> their store on a cached copy
        self._hidden: dict[str, tuple[str, Hidden]] = {}  # Viewer.key -> (version, what they may not see)
        self._queue: tuple[str, list[Queued]] | None = None  # (version, the review queue)
        self._gone: list[Path] = []  # folders of copies nothing reads any more
        self._folder: Path | None = None
        self._removal: weakref.finalize[[Path, int], Views] | None = None  # removes _folder (close, or collected)
        self._built = 0
        self._lock = threading.Lock()
        _LIVE.add(self)

    def hidden(self, reader: Viewer, version: str | None = None) -> Hidden:
        """What ``reader`` may not see in the store (cached per store version)."""
        if reader.sees_all:
            return Hidden()
        version = self.base.version() if version is None else version
        known = self._hidden.get(reader.key)
        if known is None or known[0] != version:
            queue = self._queue
            if queue is None or queue[0] != version:
                queue = self._queue = (version, queued(self.base))
            known = self._hidden[reader.key] = (version, hidden(self.base, reader.agents, queue[1]))
        return known[1]

    def restricted(self, reader: Viewer) -> bool:
        """Whether the store holds a source or candidate ``reader`` may not see."""
        return bool(self.hidden(reader))

    def view(self, reader: Viewer) -> ViewStore:
        """The view for ``reader``, current with the store."""
        found = self.current(reader)
        if found is not None:
            with contextlib.suppress(KeyError):  # evicted meanwhile: still readable, its folder stays while read
                self._copies.move_to_end(found.copy.hidden.key)
            return found
        with self._lock:  # one build at a time: concurrent readers of a stale view wait for one copy
            version = self.base.version()
            what = self.hidden(reader, version)
            copy = self._copies.get(what.key)
            if copy is None or copy.version != version:
                copy = self._copies[what.key] = self._build(what, version)
            self._copies.move_to_end(what.key)
            while len(self._copies) > self.size:
                self._copies.popitem(last=False)
            found = self._stores.get(reader.key)
            if found is None or found.copy is not copy:
                found = ViewStore(self.base, reader, copy)
            self._stores = {k: s for k, s in self._stores.items() if self.live(s)}
            self._stores[reader.key] = found
            self.sweep()
            return found

    def current(self, reader: Viewer) -> ViewStore | None:
        """The view for ``reader`` if it is built and current with the store, else None. Takes no
        lock and builds nothing (an event loop asks; :meth:`view` also starts here)."""
        version = self.base.version()
        if reader.sees_all:
            what = Hidden()
        else:
            known = self._hidden.get(reader.key)
            if known is None or known[0] != version:
                return None
            what = known[1]
        found = self._stores.get(reader.key)
        if found is None or found.copy.version != version or self._copies.get(what.key) is not found.copy:
            return None
        return found

    def live(self, store: ViewStore) -> bool:
        """Whether ``store`` reads a copy still cached (else a newer one replaced it, or it was
        evicted: let it go, so that its folder can be removed)."""
        return self._copies.get(store.copy.hidden.key) is store.copy

    def sweep(self) -> None:
        """Remove the folders of copies that nothing reads any more."""
        while True:
            try:
                gone = self._gone.pop()
            except IndexError:  # emptied, maybe by another thread between a check and a pop
                return
            shutil.rmtree(gone, ignore_errors=True)

    def close(self) -> None:
        """Forget every view and remove this process's folder of them."""
        with self._lock:
            self._copies.clear()
            self._stores.clear()
            self._gone.clear()
            if self._removal is not None:
                self._removal()
            self._folder = self._removal = None

    def _build(self, what: Hidden, version: str) -> Copy:
        """A copy of the store, less ``what``, in a folder of its own."""
        self._built += 1
        stamp = hashlib.sha256(version.encode()).hexdigest()[:8]
        directory = self._own_folder() / f"{what.key}-{stamp}-{self._built}"
        try:
            db = _redacted(self.base, directory, what)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        copy = Copy(db, directory if directory.exists() else None, version, what)
        if copy.directory is not None:
            # When the last reader of the copy goes (not before: a query may be running on it).
            weakref.finalize(copy, self._gone.append, copy.directory)
        return copy

    def _own_folder(self) -> Path:
        """This Views' folder of copies, made on first use and flock'd while it lives; dead
        processes' folders (their lock free) are removed first."""
        if self._folder is not None:
            return self._folder
        views = self.base.files_dir / "views"
        views.mkdir(parents=True, exist_ok=True)
        _sweep_dead(views)
        # Locked under a name the sweep above ignores, then renamed: never seen unlocked.
        made = Path(tempfile.mkdtemp(prefix=".new-", dir=views))
        held = os.open(made, os.O_RDONLY)  # flock'd while this Views lives: a live process uses the folder
        fcntl.flock(held, fcntl.LOCK_EX)
        folder = views / (COPIES + made.name.removeprefix(".new-"))
        made.rename(folder)
        # Also when a Views is collected unclosed, or at exit: not only on close().
        self._removal = weakref.finalize(self, _remove, folder, held)
        self._folder = folder
        return folder


def with_quads(view: ViewStore, quads: Iterable[ox.Quad]) -> ViewStore:
    """``view`` with ``quads`` added, for one query (reasoning's conclusions: never in the store
    or in the shared view; only those too many to write into the query,
    :func:`workbench.rules.conclusions.joined`): a checkpoint of the view's copy (hard links: milliseconds) in this
    process's folder of views, the quads added, reopened read-only; the folder goes when the
    returned store does. A view in memory is copied in memory."""
    copy = view.copy
    if copy.directory is None:
        db = ox.Store()
        db.bulk_extend(copy.db.quads_for_pattern(None, None, None, None))
        db.extend(quads)
        return ViewStore(view.base, view.reader, Copy(db, None, copy.version, copy.hidden))
    directory = copy.directory.parent / f"with-{os.getpid()}-{next(_WITH)}"
    try:
        copy.db.backup(str(directory))
        added = ox.Store(str(directory))
        added.bulk_extend(quads)  # straight to new files: a scratch copy needs no transaction
        added.flush()
        # Closed and reopened read-only: no compaction then replaces the files a worker process
        # opens (a writable store's would, under a reader of the directory).
        del added
        made = Copy(ox.Store.read_only(str(directory)), directory, copy.version, copy.hidden)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    weakref.finalize(made, shutil.rmtree, directory, True)
    return ViewStore(view.base, view.reader, made)


def purge(base: Store) -> None:
    """After an erasure: every view of ``base`` goes from disk now, in every :class:`Views` of
    this process and whoever still reads one, and so do dead processes' folders of views; the
    next read builds a view from the store as it is. (A reader still holding an old
    :class:`ViewStore` mid-query reads on through files already open, or fails.)

    >>> from workbench.store import MemoryStore
    >>> purge(MemoryStore())
    """
    for views in list(_LIVE):
        if views.base is base or views.base.location == base.location:  # one server, two Store objects on it
            views.close()
    folder = base.files_dir / "views"
    if folder.is_dir():
        _sweep_dead(folder)


def reader_folders(base: Store) -> list[Path]:
    """The readers' own folders beside the views of ``base`` (each a :attr:`ViewStore.files_dir`:
    their vector indexes), whether their views exist now or not."""
    folder = base.files_dir / "views"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((COPIES, ".new-")))


def _sweep_dead(views: Path) -> None:
    """Remove the folders of views whose process is gone (their flock is free)."""
    for old in views.glob(COPIES + "*"):
        with contextlib.suppress(OSError):
            held = os.open(old, os.O_RDONLY)
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(old, ignore_errors=True)
            finally:
                os.close(held)


def _remove(folder: Path, held: int) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    os.close(held)


def _redacted(base: Store, directory: Path, what: Hidden) -> ox.Store:
    """A copy of ``base`` in ``directory`` less ``what``; on disk, settled and reopened read-only
    (no memtables, no compactions, and nothing can write it)."""
    db = base.copy_into(directory)
    try:
        redact(db, what)
        if not directory.exists():
            return db
        db.flush()
    except BaseException:
        del db  # closed before the caller removes its folder
        raise
    del db  # the only reference: RocksDB closes here, before the read-only open
    return ox.Store.read_only(str(directory))
