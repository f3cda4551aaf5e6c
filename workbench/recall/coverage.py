"""Content coverage: how much of what a question asks a record holds. Each content word of the
question weighs by how rare it is among the records in question (inverse document frequency,
so that a word most of them hold counts for little and one none holds counts most), and matches
a record's word as written or one typing slip away.

>>> weight = salience({"beagle", "said"}, [{"said", "beagle"}, {"said"}, {"said"}])
>>> round(covered(weight, {"said"}), 2) < round(covered(weight, {"beagle"}), 2)
True
>>> slip("piant", {"paint"})
True
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping

MIN_COVERAGE = 0.15  # the share of the question's salience a record must hold to be a candidate at all


PRIOR_DOCS = 20  # records assumed not to hold a term: in a small scope every word still says something


def salience(terms: set[str], bags: Iterable[set[str]]) -> dict[str, float]:
    """How much each content term of a question says, among these records: its inverse document
    frequency, so that a word most of them hold ("said") counts for little and one none of them
    holds counts most (it is what the question asks that nothing here says)."""
    docs = list(bags)
    n = len(docs) + PRIOR_DOCS
    return {w: math.log((n + 1) / (sum(w in d for d in docs) + 0.5)) for w in sorted(terms)}


def covered(weight: dict[str, float], have: set[str] | frozenset[str]) -> float:
    """The share of the question's salience a record's words hold (0 to 1); a term matches a
    word as written or one typing slip away ("piant" ~ "paint")."""
    total = sum(weight.values())
    return sum(v for w, v in weight.items() if w in have or slip(w, have)) / total if total > 0 else 0.0


class Lexicon:
    """The words of some records, indexed once (recall keeps one per scope and store version):
    which records hold each word, and the words by length and letter, so that a question's
    terms find their records and their typing slips without reading every record again. The
    same figures as :func:`salience` and :func:`covered` over the same records.

    >>> lex = Lexicon({"r1": frozenset({"said", "beagle"}), "r2": frozenset({"said", "paint"})})
    >>> sorted(lex.holders(["piant", "said", "dog"]).items())
    [('dog', set()), ('piant', {'r2'}), ('said', {'r1', 'r2'})]
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
        """As :func:`salience` over these records."""
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

