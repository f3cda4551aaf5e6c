"""Whose record it is, in recall: a question about someone who speaks in the memory is about
what they said or did (:mod:`workbench.records.owners`). Their own records answer; records that
only mention or address them rank lower, and alone give "no memory" with a note; and the best
match among the records of the people they talk with (:func:`rival`) tells the gate when the
question has mixed two people up. Step 4 of recall (:mod:`workbench.recall.bundles`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from workbench.names import entities
from workbench.recall.coverage import Lexicon
from workbench.recall.memory import Memory
from workbench.recall.scope import scope_records
from workbench.records.cache import RecordCache
from workbench.records.owners import named, owners
from workbench.store import Store
from workbench.values.records import Record, RecordType, Status
from workbench.vectors.index import VectorIndex

MENTION_WEIGHT = 0.5  # a record that only mentions whom the question asks about ranks at half its score


@dataclass(frozen=True)
class Owned:
    """A scope's ranking read for whose record each is (:func:`own`)."""

    ranked: list[Memory]  # own records first at their score, mentions at MENTION_WEIGHT of theirs
    note: str = ""  # when only mentions matched: whose record did (then ``ranked`` is empty)
    contrast: float = 0.0  # the best own record's score less the best mention's (0: nobody named speaks)
    speaks: bool = False  # whether anyone the question names speaks here
    mention_first: bool = False  # whether a mention still ranks first, above every own record


def own(cache: RecordCache, ids: set[str], asked: set[str], ranked: list[Memory]) -> Owned:
    """Whose record it is (:mod:`workbench.records.owners`): when someone the question names
    speaks in this memory, the question is about what they said or did, so their own records
    answer and records that merely mention or address them rank lower. When only such mentions
    match, the answer is no memory, with a note naming whose record matched (the reader may see
    it: recall reads their view)."""
    if not ranked:
        return Owned(ranked)
    store = cache.store
    owner_of, speakers = owners(store, [m.record for m in ranked], cache.resolve)  # the rest only if need be:
    if not asked & speakers and (unread := sorted(ids - set(owner_of))):  # does anyone asked about speak?
        speakers |= owners(store, list(cache.load(unread).values()), cache.resolve)[1]
    if not asked & speakers:
        return Owned(ranked)  # nobody named speaks here (a project, a person only talked about)
    mine = [m for m in ranked if owner_of.get(m.record.id, frozenset()) & asked]
    if not mine:
        best = ranked[0].record
        whose = best.source.said_by or best.said_by
        return Owned([], f"{whose}'s record {best.id} matches, but it only mentions {asked_names(store, asked)}",
                     -1.0, True, True)
    rest = [replace(m, score=m.score * MENTION_WEIGHT, why=m.why + "; only mentions them") for m in ranked
            if not owner_of.get(m.record.id, frozenset()) & asked]
    contrast = mine[0].score - (max(m.score for m in rest) / MENTION_WEIGHT if rest else 0.0)
    out = sorted(mine + rest, key=lambda m: (-m.score, m.record.id))
    return Owned(out, "", contrast, True, out[0] is not mine[0])


RIVALS = 20  # the nearest records of the people the asked one talks with, weighed as someone else's


def rival(cache: RecordCache, index: VectorIndex, qvec: np.ndarray, asked: set[str], weight: dict[str, float],
          cue_types: set[RecordType], want_history: bool, scope_ids: set[str],
          bag_of: Callable[[Record], frozenset[str]]) -> Memory | None:
    """The best match that belongs to someone other than whom the question asks about, among the
    nearest records of the people they talk with (named beside them in the scope's records;
    anyone's when nobody is), scored as records in the scope are (the scope's salience for
    coverage, half each with the cosine): "What did Priya realise after her half-marathon?" when
    the race is Ravi's, who never names her. ``bag_of`` gives a record's terms as the scope's
    lexicon holds them."""
    partners = tuple(sorted(set().union(*(named(r) for r in cache.load(scope_ids).values())) - asked))
    theirs: set[str] | None = None
    if partners:
        by_partner = cache.remember(("scope", partners), lambda: scope_records(cache.store, partners))
        theirs = set().union(*by_partner.values())
    hits = index.search(qvec, RIVALS, within=theirs)
    found = cache.load(i for i, _ in hits)
    owner_of, _ = owners(cache.store, list(found.values()), cache.resolve)
    held = Lexicon({rid: bag_of(r) for rid, r in found.items()}).coverage(weight)
    best: Memory | None = None
    for rid, cos in hits:
        rec = found.get(rid)
        if rec is None or rec.status is Status.RETRACTED or owner_of.get(rid, frozenset()) & asked:
            continue
        if rec.status is Status.SUPERSEDED and not want_history:
            continue
        kw = held.shares.get(rid, 0.0)
        score = 0.5 * kw + 0.5 * max(cos, 0.0) + (0.1 if rec.type in cue_types else 0.0)
        if best is None or score > best.score:
            best = Memory(rec, score, "recorded", "", kw, cos)
    return best


def asked_names(store: Store, asked: set[str]) -> str:
    found = entities.describe(store, sorted(asked))
    return " and ".join(e.names[0] if e.names else e.iri for e in found) or "them"
