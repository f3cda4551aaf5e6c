"""Relations people name in records and questions, found by their label.

Labels come from ``wb:relationLabel`` statements in any graph (ontology/relations.ttl, or an
imported vocabulary) and match through the same key as names do.

A label that starts with "not " names the negative of the relation the rest names (a negative
fact, stored as an ``owl:NegativePropertyAssertion``; see docs/data-model.md):

>>> negated("not needs"), negated("  NOT   is a"), negated("not <urn:p>"), negated("needs"), negated("nothing")
('needs', 'is a', '<urn:p>', None, None)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyoxigraph as ox

from workbench.errors import Conflict
from workbench.names.keys import name_key
from workbench.store import Store
from workbench.vocab import PREFIXES

_NOT = re.compile(r"\s*not\s+(\S.*?)\s*", re.IGNORECASE | re.DOTALL)


def negated(label: str) -> str | None:
    """The rest of a "not ..." relation label (the relation it negates, as written), else None."""
    found = _NOT.fullmatch(label)
    return found.group(1) if found else None


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
