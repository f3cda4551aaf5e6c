"""Fuzzy name suggestions: "did you mean ...?" for a name that binds nothing. They suggest;
they never bind (names bind only exactly, :mod:`workbench.names.entities`).

Every name and label in the store sits in a small FAISS index of character trigrams, so a
misspelling ("Tsinghua Univeristy") or a part ("Dana") finds the names it resembles.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from workbench.names.entities import registered
from workbench.names.keys import name_key
from workbench.store import Store
from workbench.vectors.encoders import STOPWORDS, HashingEncoder, wordset
from workbench.vectors.kept import Rebuilt, fingerprint
from workbench.vocab import PREFIXES

MIN_SIMILARITY = 0.45
_NAMES = f"""{{ GRAPH ?r {{ ?e skos:prefLabel|skos:altLabel ?n }} {registered('?r')} }}
    UNION {{ GRAPH ?g {{ ?e skos:prefLabel ?n }} }}"""
_CAPITALISED = re.compile(r"^[^\W\d_]")
_NOT_NAMES = wordset(
    "i january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday"
)


class NameIndex(Rebuilt):
    """Names by their spelling, rebuilt when the store or its count of names changes."""

    def __init__(self, store: Store, directory: Path) -> None:
        super().__init__(store, directory, HashingEncoder(256))

    def fingerprint(self) -> str:
        count = self.store.select(PREFIXES + f"SELECT (COUNT(DISTINCT ?n) AS ?c) WHERE {{ {_NAMES} }}")[0]
        return f"{fingerprint(self.store)};names={count['c'].value}"  # type: ignore[union-attr]

    def items(self) -> dict[str, str]:
        by_key: dict[str, str] = {}
        for r in self.store.select(PREFIXES + f"SELECT DISTINCT ?n WHERE {{ {_NAMES} }}"):
            name = r["n"].value  # type: ignore[union-attr]
            by_key.setdefault(name_key(name), name)
        return {name: name for name in sorted(by_key.values())}

    def similar(self, name: str, k: int = 3) -> tuple[str, ...]:
        """Names spelled like ``name`` (never ``name`` itself), best first."""
        index = self.ready()
        hits = index.search(index.encoder.encode([name])[0], k + 1)
        key = name_key(name)
        return tuple(n for n, s in hits if s >= MIN_SIMILARITY and name_key(n) != key)[:k]

    def unbound_runs(self, text: str, left: Sequence[tuple[int, int]]) -> list[str]:
        """Runs of capitalised words among the tokens that bound nothing: by their look, names.
        A question word opening a sentence ("What", "Who"), "I", and month and day names are not."""
        runs: list[list[tuple[int, int]]] = [[]]
        for s, e in left:
            word = text[s:e]
            opens = not text[:s].strip() or text[:s].rstrip()[-1] in ".?!:;\"'“(“"
            folded = word.casefold()
            bare = re.sub(r"['’](s|re|ll|d|ve|m)$", "", folded)  # "What's", "Who'd" open a question too
            capitalised = bool(_CAPITALISED.match(word)) and word[0].isupper()
            if not capitalised or folded in _NOT_NAMES or (opens and bare in STOPWORDS):
                runs.append([])
            elif runs[-1] and not text[runs[-1][-1][1] : s].strip():
                runs[-1].append((s, e))
            else:
                runs.append([(s, e)])
        return [re.sub(r"['’]s$", "", text[run[0][0] : run[-1][1]]) for run in runs if run]
