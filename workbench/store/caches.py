"""What is kept beside one store object: one keeper per store (the base store or a reader's
view), found again with :meth:`PerStore.of` and let go with the store."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Self, TypeVar

from workbench.store.base import Store

K = TypeVar("K")
V = TypeVar("V")
_MISSING = object()


class PerStore:
    """A keeper of something read from one store: ``Keeper.of(store)`` finds (or makes) the one
    for ``store``. Each subclass has its own table; thread-safe."""

    _kept: weakref.WeakKeyDictionary[Store, Any]
    _finding: threading.Lock

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._kept = weakref.WeakKeyDictionary()
        cls._finding = threading.Lock()

    def __init__(self, store: Store) -> None:
        self.store = store

    @staticmethod
    def keepers() -> list[type[PerStore]]:
        """Every kind of keeper, however far down (:class:`Kept`'s subclasses too)."""
        out: list[type[PerStore]] = []
        todo: list[type[PerStore]] = [PerStore]
        while todo:
            for cls in todo.pop().__subclasses__():
                out.append(cls)
                todo.append(cls)
        return out

    @classmethod
    def of(cls, store: Store) -> Self:
        kept = cls._kept.get(store)  # found without the lock: made once, never replaced
        if kept is not None:
            return kept  # type: ignore[no-any-return]
        with cls._finding:
            kept = cls._kept.get(store)
            if kept is None:
                kept = cls._kept[store] = cls(store)
            return kept


class Kept(PerStore):
    """Values read from one store, kept while its version stays (every write moves it), at most
    :attr:`LIMIT` of them (past it the keeper starts again); thread-safe. A subclass per kind of
    value, found with :meth:`of`; for a store whose version is known without asking anyone.

    The version and its values are one pair, replaced whole when the version moves: a lookup
    reads the pair without the lock (one attribute read) and can never pair one version with
    another's values."""

    LIMIT = 20_000

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self._kept_at: tuple[str | None, dict[Any, Any]] = (None, {})
        self._lock = threading.Lock()

    @property
    def _values(self) -> dict[Any, Any]:  # what is kept at the version last seen
        return self._kept_at[1]

    def _at(self, version: str) -> dict[Any, Any]:
        """The values kept at ``version``, started afresh if the store has moved to it."""
        at, values = self._kept_at
        if at != version:
            with self._lock:
                at, values = self._kept_at
                if at != version:
                    values = {}
                    self._kept_at = (version, values)
        return values

    def _keep(self, version: str, found: dict[Any, Any]) -> None:
        """Keep ``found``, read at ``version``, unless the store has moved on since."""
        with self._lock:
            at, values = self._kept_at
            if at != version:
                return
            if len(values) + len(found) > self.LIMIT:
                values = {}
                self._kept_at = (version, values)
            values.update(found)

    def many(self, keys: Sequence[K], read: Callable[[list[K]], dict[K, V]]) -> dict[K, V]:
        """The value of each of ``keys``: kept at this version, or ``read`` (the missing ones at
        once) and kept."""
        version = self.store.version()
        values = self._at(version)
        out = {k: values[k] for k in keys if k in values}
        missing = list(dict.fromkeys(k for k in keys if k not in out))
        if missing:
            out.update(found := read(missing))
            self._keep(version, found)
        return out

    def one(self, key: Any, read: Callable[[], V], keep: Callable[[V], bool] | None = None) -> V:
        """:meth:`many` for one key, the common case, with less around it; a value read now is
        kept only if ``keep`` (when given) says so."""
        version = self.store.version()
        found = self._at(version).get(key, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[no-any-return]
        value = read()
        if keep is None or keep(value):
            self._keep(version, {key: value})
        return value

    def peek(self, version: str, key: Any) -> Any:
        """The value kept for ``key`` at ``version`` (the store's, as the caller read it), or
        None; nothing is read."""
        return self._at(version).get(key)

    def put(self, version: str, key: Any, value: Any) -> None:
        """Keep ``value``, read by the caller at ``version``, for ``key`` (unless the store
        has moved on since)."""
        self._keep(version, {key: value})
