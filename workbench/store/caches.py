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
    value, found with :meth:`of`; for a store whose version is known without asking anyone."""

    LIMIT = 20_000

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self._version: str | None = None
        self._values: dict[Any, Any] = {}
        self._lock = threading.Lock()

    def many(self, keys: Sequence[K], read: Callable[[list[K]], dict[K, V]]) -> dict[K, V]:
        """The value of each of ``keys``: kept at this version, or ``read`` (the missing ones at
        once) and kept."""
        version = self.store.version()
        with self._lock:
            if version != self._version:
                self._version, self._values = version, {}
            out = {k: self._values[k] for k in keys if k in self._values}
        missing = list(dict.fromkeys(k for k in keys if k not in out))
        if missing:
            out.update(found := read(missing))
            with self._lock:
                if version == self._version:
                    if len(self._values) + len(found) > self.LIMIT:
                        self._values = {}
                    self._values.update(found)
        return out

    def peek(self, version: str, key: Any) -> Any:
        """The value kept for ``key`` at ``version`` (the store's, as the caller read it), or
        None; nothing is read."""
        with self._lock:
            if version != self._version:
                self._version, self._values = version, {}
            return self._values.get(key)

    def put(self, version: str, key: Any, value: Any) -> None:
        """Keep ``value``, read by the caller at ``version``, for ``key`` (unless the store
        has moved on since)."""
        with self._lock:
            if version == self._version:
                if len(self._values) >= self.LIMIT:
                    self._values = {}
                self._values[key] = value

    def one(self, key: Any, read: Callable[[], V], keep: Callable[[V], bool] | None = None) -> V:
        """:meth:`many` for one key, the common case, with less around it; a value read now is
        kept only if ``keep`` (when given) says so."""
        version = self.store.version()
        with self._lock:
            if version != self._version:
                self._version, self._values = version, {}
            found = self._values.get(key, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[no-any-return]
        value = read()
        if keep is not None and not keep(value):
            return value
        with self._lock:
            if version == self._version:
                if len(self._values) >= self.LIMIT:
                    self._values = {}
                self._values[key] = value
        return value
