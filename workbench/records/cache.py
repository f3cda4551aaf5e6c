"""Records read back once per store version: recall reads the same records question after
question, and reading them was 82% of its time (docs/recall.md, "Speed").

A :class:`RecordCache` belongs to one readable store (the base store or one reader's view, so
it never holds what its reader may not see) and forgets everything when the store's version
moves (:meth:`Store.version`: every write through this process, and on a shared server every
Workbench write anywhere). It caches what :func:`workbench.records.load` returns, each
record's words, how names resolve (:func:`workbench.names.entities.resolve_keys`) and what a
caller computed from those at this version (:meth:`RecordCache.remember`: recall's scopes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from workbench import records
from workbench.ids import record_iri
from workbench.names import entities
from workbench.store import Store
from workbench.values.records import Record
from workbench.vectors.encoders import terms

LIMIT = 100_000  # records kept at most; past it the cache starts again (about 2 KB a record)
T = TypeVar("T")


class RecordCache:
    """Records by id, and their words, for the version of ``store`` last :meth:`checked`."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._version: str | None = None
        self._records: dict[str, Record | None] = {}  # None: no such record (or not readable here)
        self._words: dict[str, frozenset[str]] = {}
        self._names: dict[str, tuple[str, ...]] = {}
        self._memo: dict[Any, Any] = {}

    def _clear(self) -> None:
        for part in (self._records, self._words, self._names, self._memo):
            part.clear()

    def check(self) -> None:
        """Forget everything if the store changed since the last check (one call per question:
        on a remote store, asking the version is a round trip)."""
        version = self.store.version()
        if version != self._version:
            self._version = version
            self._clear()

    def load(self, ids: Iterable[str]) -> dict[str, Record]:
        """The records with these ids that exist, by id (as :func:`workbench.records.load`)."""
        want = list(dict.fromkeys(ids))
        missing = [i for i in want if i not in self._records]
        if missing:
            if len(self._records) + len(missing) > LIMIT:
                self._clear()
            found = {r.id: r for r in records.load(self.store, [record_iri(i) for i in missing])}
            for i in missing:
                self._records[i] = found.get(i)
        return {i: r for i in want if (r := self._records.get(i)) is not None}

    def words(self, record: Record) -> frozenset[str]:
        """The content terms of a record's statement and of its source's text, as recall's coverage
        reads them (:func:`workbench.vectors.encoders.terms`)."""
        hit = self._words.get(record.id)
        if hit is None:
            hit = self._words[record.id] = frozenset(terms(" ".join([record.statement, record.source.text or ""])))
        return hit

    def resolve(self, keys: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Name keys to the entities they bind, as :func:`entities.resolve_keys` (keys that bind
        nothing map to ``()`` here)."""
        want = set(keys)
        missing = want - set(self._names)
        if missing:
            found = entities.resolve_keys(self.store, missing)
            for k in missing:
                self._names[k] = tuple(found.get(k, ()))
        return {k: self._names[k] for k in want}

    def remember(self, key: Any, compute: Callable[[], T]) -> T:
        """``compute()``, once per store version and key."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]  # type: ignore[no-any-return]
