"""Relations people name in records and questions, found by their label.

Labels come from ``wb:relationLabel`` statements in any graph (ontology/relations.ttl, or an
imported vocabulary) and match through the same key as names do.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox

from workbench.errors import Conflict
from workbench.names import name_key
from workbench.store import Store
from workbench.vocab import PREFIXES


@dataclass(frozen=True)
class Relations:
    by_key: dict[str, ox.NamedNode]

    @classmethod
    def load(cls, store: Store) -> Relations:
        rows = store.select(PREFIXES + "SELECT DISTINCT ?p ?l WHERE { GRAPH ?g { ?p wb:relationLabel ?l } }")
        by_key: dict[str, ox.NamedNode] = {}
        for row in rows:
            key = name_key(row["l"].value)  # type: ignore[union-attr]
            p = row["p"]
            if key in by_key and by_key[key] != p:
                raise Conflict(f"the relation label {key!r} names both {by_key[key]} and {p}")
            by_key[key] = p  # type: ignore[assignment]
        return cls(by_key)

    def get(self, label: str) -> ox.NamedNode | None:
        return self.by_key.get(name_key(label))

    def labels(self) -> str:
        return ", ".join(sorted(self.by_key))
