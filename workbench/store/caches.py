"""What is kept beside one store object: one keeper per store (the base store or a reader's
view), found again with :meth:`PerStore.of` and let go with the store."""

from __future__ import annotations

import threading
import weakref
from typing import Any, Self

from workbench.store.base import Store


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

    @classmethod
    def of(cls, store: Store) -> Self:
        with cls._finding:
            kept = cls._kept.get(store)
            if kept is None:
                kept = cls._kept[store] = cls(store)
            return kept
