"""Content coverage: how much of what a question asks a record holds. Each content word of the
question weighs by how rare it is among the records in question (inverse document frequency,
so that a word most of them hold counts for little and one none holds counts most), and matches
a record's word as written or one typing slip away.

>>> lex = Lexicon({"r1": frozenset({"said", "beagle"}), "r2": frozenset({"said"}), "r3": frozenset({"said"})})
>>> held = lex.coverage(lex.salience({"beagle", "said"}))
>>> round(held.shares["r2"], 2) < round(held.shares["r1"], 2)
True
>>> slip("piant", {"paint"})
True
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MIN_COVERAGE = 0.15  # the share of the question's salience a record must hold to be a candidate at all


PRIOR_DOCS = 20  # records assumed not to hold a term: in a small scope every word still says something


@dataclass(frozen=True)
class Held:
    """What the records hold of a question: each record's share of its salience (0 to 1) and
    the terms it holds, and the share that any of them holds (``anywhere``: a term no record
    says is what the question asks that the memory does not know)."""

    shares: dict[str, float]
    terms: dict[str, list[str]]
    anywhere: float


class Lexicon:
    """The words of some records, indexed once (recall keeps one per scope and store version):
    which records hold each word, and the words by length and letter, so that a question's
    terms find their records and their typing slips without reading every record again.

    >>> lex = Lexicon({"r1": frozenset({"said", "beagle"}), "r2": frozenset({"said", "paint"})})
    >>> {term: sorted(ids) for term, ids in lex.holders(["piant", "said", "dog"]).items()}
    {'piant': ['r2'], 'said': ['r1', 'r2'], 'dog': []}
    """

    def __init__(self, bags: Mapping[str, frozenset[str]]) -> None:
        self.size = len(bags)
        self.postings: dict[str, set[str]] = defaultdict(set)
        for rid, bag in bags.items():
            for w in bag:
                self.postings[w].add(rid)
        self._buckets: dict[tuple[int, int, str], list[str]] = defaultdict(list)
        for word in self.postings:
            if len(word) >= 4:
                self._buckets[(len(word), 0, word[0])].append(word)
                self._buckets[(len(word), 1, word[1])].append(word)

    def salience(self, terms: Iterable[str]) -> dict[str, float]:
        """How much each content term of a question says, among these records: its inverse
        document frequency, so that a word most of them hold ("said") counts for little and one
        none of them holds counts most (it is what the question asks that nothing here says)."""
        n = self.size + PRIOR_DOCS
        return {w: math.log((n + 1) / (len(self.postings.get(w, ())) + 0.5)) for w in sorted(set(terms))}

    def slips(self, term: str) -> list[str]:
        """Words here one typing slip away from ``term`` (:func:`slip`)."""
        if len(term) < 5:
            return []
        seen = {w for n in (len(term) - 1, len(term), len(term) + 1) for k in (0, 1)
                for w in self._buckets.get((n, k, term[k]), ())}
        return sorted(w for w in seen if w != term and slip(term, {w}))

    def holders(self, terms: Iterable[str]) -> dict[str, set[str]]:
        """For each term, the records holding it as written or one slip away."""
        out = {}
        for term in terms:
            found = set(self.postings.get(term, ()))
            for w in self.slips(term):
                found |= self.postings[w]
            out[term] = found
        return out

    def coverage(self, weight: dict[str, float]) -> Held:
        """The share of the question's salience (``weight``, from :meth:`salience`) each record
        holds, a term matching a word as written or one typing slip away ("piant" ~ "paint")."""
        total = sum(weight.values())
        holders = self.holders(weight)
        held: dict[str, float] = {}
        terms: dict[str, list[str]] = {}
        for w, v in weight.items():
            for rid in holders[w]:
                held[rid] = held.get(rid, 0.0) + v
                terms.setdefault(rid, []).append(w)
        if total <= 0:
            return Held({}, terms, 0.0)
        anywhere = sum(v for w, v in weight.items() if holders[w]) / total
        return Held({rid: v / total for rid, v in held.items()}, terms, anywhere)


def slip(term: str, have: Iterable[str]) -> bool:
    """One letter changed, added, dropped or two swapped, in a word of five letters or more."""
    if len(term) < 5:
        return False
    for word in have:
        if abs(len(word) - len(term)) > 1 or len(word) < 4 or word[0] != term[0] and word[1] != term[1]:
            continue
        if len(word) == len(term):
            diff = [i for i, (a, b) in enumerate(zip(word, term, strict=True)) if a != b]
            if len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == term[diff[1]]
                                  and word[diff[1]] == term[diff[0]]):
                return True
        else:
            short, long = (word, term) if len(word) < len(term) else (term, word)
            i = next((i for i, (a, b) in enumerate(zip(short, long, strict=False)) if a != b), len(short))
            if short[i:] == long[i + 1:]:
                return True
    return False

