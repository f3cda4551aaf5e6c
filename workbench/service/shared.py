"""What the Workbenches on one store share, in two explicit objects instead of fields copied
from one Workbench to the next.

- :class:`Shared`, one per opened store: the base store, the clock, where the rules are, the
  rules loaded from there and from the store (keyed on the rules directory and the stored rule
  versions), readers' views, and the Workbench handed out for each reader.
- :class:`Indexes`, one per store a Workbench reads (the base store, or one reader's view):
  the relation labels and the records recall read back (keyed on that store's version) and the
  vector indexes (records, names, things; each keyed on the store's fingerprint, see
  :mod:`workbench.vectors.kept`).

Every write through a Workbench ends in one call, :meth:`Indexes.changed`, which says what it
changed; nothing else marks a cache stale.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.access.restricted import RestrictedStore
from workbench.access.views import Viewer, Views, ViewStore, reader_folders, viewer
from workbench.access.writes import Writer, everything
from workbench.errors import Invalid
from workbench.guesses.things import Guesser
from workbench.names.relations import Relations
from workbench.names.suggestions import NameIndex
from workbench.records import layout
from workbench.records.cache import RecordCache
from workbench.resources import declared_relations
from workbench.store import Store
from workbench.values.rules import RuleSet
from workbench.vectors.encoders import Encoder, encoder
from workbench.vectors.index import IndexCorrupt, VectorIndex
from workbench.vectors.kept import Bar, RecordVectors, bump, forget

if TYPE_CHECKING:
    from workbench.service import Workbench

Clock = Callable[[], dt.datetime]


class Indexes:
    """The caches answers on one readable store use. Which encoder ranks records is chosen when
    the records index is built (``encoder_spec``, else $WORKBENCH_ENCODER, else the one the index
    on disk was built with, else the default: ``minilm``, or ``hashing`` where its packages are
    missing) and recorded with it."""

    def __init__(self, store: Store, encoder_spec: str | None) -> None:
        self.store = store
        self.encoder_spec = encoder_spec
        self._records: RecordVectors | None = None
        self._names: NameIndex | None = None
        self._things: Guesser | None = None
        self._cache: RecordCache | None = None
        self._relations: tuple[str, Relations] | None = None  # (the store's version, its labels)

    @property
    def directory(self) -> Path:
        return self.store.files_dir / "vectors"

    def encoder(self) -> Encoder:
        spec = self.encoder_spec or os.environ.get("WORKBENCH_ENCODER")
        if not spec:
            index = VectorIndex(self.directory / "records", encoder("hashing"))
            try:
                meta = index.meta() if index.exists else {}
            except IndexCorrupt:
                meta = {}  # an unreadable index is rebuilt (RecordVectors.ready), with the default
            spec = str(meta.get("spec") or "") or None
            if spec == "minilm" and str(meta.get("encoder", "")).startswith("sentence-transformers/"):
                spec = "minilm-torch"  # built before 'minilm' meant the ONNX model: the same model on torch
        return encoder(spec)

    def records(self) -> RecordVectors:
        if self._records is None:
            self._records = RecordVectors(self.store, self.directory / "records", self.encoder())
        return self._records

    def record_cache(self) -> RecordCache:
        """Records recall read back, kept while the store's version stays (it checks)."""
        if self._cache is None:
            self._cache = RecordCache(self.store)
        return self._cache

    def names(self) -> NameIndex:
        if self._names is None:
            self._names = NameIndex(self.store, self.directory / "names")
        return self._names

    def things(self) -> Guesser:
        """The guesser's model, learned from this store (kept under ``guesses/``)."""
        if self._things is None:
            # Versions before the guesser kept graph vectors of every thing in things/: never read
            # again, so never kept in step with erasure; they go.
            shutil.rmtree(self.directory / "things", ignore_errors=True)
            self._things = Guesser(self.store, self.directory / "guesses")
        return self._things

    def last_relations(self) -> Relations | None:
        """The relation labels as last read, without asking whether the store moved (for what a
        question sends with that very check: ``rules/primed``)."""
        return self._relations[1] if self._relations is not None else None

    def relations(self) -> Relations:
        """Relation labels, read again whenever the store's version moves (vocabulary comes with
        imports, made through this Workbench or another acting on the same store)."""
        version = self.store.version()
        if self._relations is None or self._relations[0] != version:
            self._relations = (version, Relations.load(self.store))
        return self._relations[1]

    def changed(self, *, records: bool = False, names: bool = False, erased: str | None = None) -> None:
        """The one invalidation point, after a write: ``records`` (an import, an approval, a
        supersession, a retraction, a restore) gives the store a new revision, so every index here
        or in another process knows it is behind, and one in use here catches up now; ``names``
        (an entity or alias) makes the names index stale; ``erased`` (a record id) removes its
        vector now and rebuilds what was built from names and facts, readers' indexes too."""
        self._relations = None
        if records or erased:
            bump(self.store)
        stale = (self._names, self._things) if records else (self._names,) if names else ()
        for part in stale:
            if part is not None:
                part.stale()
        if records and self._records is not None and self._records.in_use:
            self._records.stale()
            self._records.ready()
        if erased:
            self._erased(erased)

    def _erased(self, record_id: str) -> None:
        if self._records is not None:
            self._records.forget(record_id)
        else:
            forget(self.store, self.directory / "records", record_id)
        names, things = self.names(), self.things()
        names.stale()
        if names.index.exists:
            names.ready()
        things.stale()
        if things.exists:
            things.ready()  # learned again without the erased record
        # Readers' own indexes beside their views were built from views made before the erasure:
        # the record's vector leaves each records index; names and things (whose ids are names
        # and entities) are deleted, to be rebuilt from a new view when next used.
        for folder in reader_folders(self.store):
            forget(self.store, folder / "vectors" / "records", record_id)
            for name in ("names", "things", "guesses"):
                shutil.rmtree(folder / "vectors" / name, ignore_errors=True)

    def rebuild(self, encoder_spec: str | None, progress: Bar | None) -> None:
        """Drop every index and build the records index again (with another encoder if given)."""
        enc = encoder(encoder_spec) if encoder_spec else self.encoder()
        shutil.rmtree(self.directory, ignore_errors=True)
        self.encoder_spec = enc.spec
        self._records = RecordVectors(self.store, self.directory / "records", enc)
        self._names = self._things = None
        self._records.ready(progress)

    def status(self) -> dict[str, Any]:
        """What each index holds and what built it."""
        out: dict[str, Any] = {"directory": str(self.directory)}
        for name in ("records", "names"):
            if (self.directory / name / "meta.json").is_file():
                meta = VectorIndex(self.directory / name, encoder("hashing")).meta()
                out[name] = {k: meta.get(k) for k in ("encoder", "kind", "count", "fingerprint")}
            else:
                out[name] = None
        out["guesses"] = self.things().status()
        return out


class Shared:
    """What every Workbench on one store shares."""

    def __init__(self, store: Store, *, clock: Clock, rules_dir: Path, encoder_spec: str | None) -> None:
        self.store = store  # the base store: writes land here; readers' views are made from it
        if not isinstance(store, ViewStore):
            layout.migrate(store)  # a store written before sources had graphs of their own
        self.clock = clock
        self.rules_dir = rules_dir
        self.indexes = Indexes(store, encoder_spec)  # the base store's
        self.handed: dict[str, Workbench] = {}  # reader key (or "=" + name, acting) -> their Workbench
        self._views: Views | None = None
        self._restricted: dict[str, RestrictedStore] = {}  # Viewer.key -> their store, read through the rewrite
        self.rewriting: bool | None = None  # None: by backend (:meth:`rewrites`)
        self._rules: tuple[object, RuleSet] | None = None  # (what they were built from, the rules)
        self._stamp: tuple[str, tuple[tuple[str, str], ...]] | None = None

    def views(self) -> Views:
        if self._views is None:
            self._views = Views(self.store)
        return self._views

    def let_go(self) -> None:
        """Forget readers' Workbenches on views that a newer one replaced or that were evicted,
        so that nothing holds those any more and their folders go."""
        views = self.views()
        self.handed = {k: w for k, w in self.handed.items()
                       if not isinstance(w.store, ViewStore) or views.live(w.store)}
        views.sweep()

    def forget_views(self) -> None:
        """After an erasure: every view was made before it, so no Workbench may keep reading one."""
        self.handed = {k: w for k, w in self.handed.items() if not isinstance(w.store, ViewStore)}

    def rewrites(self) -> bool:
        """Whether restricted readers read the store through the rewrite (:mod:`workbench.access.restricted`)
        rather than a view: on a SPARQL server, where a view copies the whole store after every write
        (:attr:`rewriting` overrides it: the tests read both ways)."""
        return self.store.capabilities.round_trips if self.rewriting is None else self.rewriting

    def restricted(self, reader: Viewer) -> RestrictedStore:
        """The store as ``reader`` reads it through the rewrite: one per reader."""
        found = self._restricted.get(reader.key)
        if found is None or found.reader != reader:
            found = self._restricted[reader.key] = RestrictedStore(self.store, reader)
        return found

    def seen(self, reader: Viewer) -> Store | None:
        """The store as ``reader`` may see it; None when that is the store itself (they may see everything)."""
        if reader.sees_all:
            return None
        if self.rewrites():
            return self.restricted(reader)
        views = self.views()
        return views.view(reader) if views.restricted(reader) else None

    def readable_now(self, name: str | None) -> Store | None:
        """What :meth:`readable` gives ``name`` if that builds nothing first (:meth:`Views.current`),
        else None; the store's owner reads the store itself."""
        if name is None or self.rewrites():
            return self.readable(name)
        return self.views().current(viewer(self.store, name))

    def readable(self, name: str | None) -> Store:
        """The store a SPARQL query or an export by ``name`` reads: for a named reader always a
        view, or on a SPARQL server the store read through the rewrite (no token hashes; for a
        restricted reader, nothing they may not see), so that ``GRAPH ?g``, ``FROM`` and the
        Protocol's dataset cannot reach past it."""
        if name is None:
            return self.store
        if self.rewrites():  # on a SPARQL server: the query rewritten, no copy (token hashes withheld too)
            return self.restricted(viewer(self.store, name))
        view = self.views().view(viewer(self.store, name))
        self.let_go()
        return view

    def writer(self, name: str | None) -> Writer:
        """Who writes, with the store as they may see it: what a write names is looked up there
        (:mod:`workbench.access.writes`). The store's owner (no name) sees everything."""
        seen = None if name is None else self.seen(viewer(self.store, name))
        if seen is None:
            return everything(self.store)
        self.let_go()
        return Writer(self.store, seen)

    def relations(self) -> frozenset[str]:
        """IRIs of the relations rules may conclude: those the store knows and those this
        version's ontology declares."""
        return frozenset(p.value for p in self.indexes.relations().by_key.values()) | declared_relations()

    def rule_files(self) -> RuleSet:
        from workbench.rules import load_rules

        return load_rules(self.rules_dir.glob("*.ttl"), relations=self.relations())

    def last_rules(self) -> RuleSet | None:
        """The rules as last loaded, without asking whether the store moved (see
        :meth:`Indexes.last_relations`)."""
        return self._rules[1] if self._rules is not None else None

    def rules(self) -> RuleSet:
        """The rules that answer, for every reader alike: loaded and checked again only when the
        rules directory or the stored versions change (see :attr:`Workbench.rules`)."""
        from workbench.review import rulebook
        from workbench.rules import run_tests

        key = (self.rules_dir, self._rule_stamp())
        if self._rules is None or self._rules[0] != key:
            stored = rulebook.versions(self.store) if key[1] else []
            rules = rulebook.effective(self.rule_files(), stored, self.relations())
            # Active rules must pass their tests to be used; drafts are checked by `rules check`.
            failed = [c for c in run_tests(RuleSet(rules.active())) if not c.passed]
            if failed:
                c = failed[0]
                raise Invalid(
                    f"rule {c.rule} fails its test {c.case!r}: missing {list(c.missing)}, unwanted {list(c.unwanted)}",
                    where=str(self.rules_dir),
                )
            self._rules = (key, rules)
        return self._rules[1]

    def _rule_stamp(self) -> tuple[tuple[str, str], ...]:
        """The stored rule versions and their status, read again only when the store's version
        moves: a store this process owns counts its own writes, and a shared server's version
        covers the rule versions' statuses (the remote backend's version), which saves a query
        (a round trip) per question."""
        from workbench.review import rulebook

        version = self.store.version()
        if self._stamp is None or self._stamp[0] != version:
            self._stamp = (version, rulebook.stamp(self.store))
        return self._stamp[1]

    def close(self) -> None:
        self.handed.clear()
        if self._views is not None:
            self._views.close()
        self.store.close()
