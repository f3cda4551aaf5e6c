"""What recall keeps between questions (:mod:`workbench.records.cache`, the scope's
:class:`~workbench.recall.coverage.Lexicon`) changes no answer: the same figures as reading every
record again, forgotten the moment the store changes, and never across readers."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_owners import TALK, _said, _store, _with_viewer
from workbench.recall.coverage import PRIOR_DOCS, Lexicon, slip
from workbench.records.cache import RecordCache

WORDS = st.sampled_from(["paint", "piant", "point", "beagle", "beagel", "said", "kyoto", "temple", "dawn", "walks",
                         "walk", "marathon", "marathn", "garden", "gardens"])
BAGS = st.dictionaries(st.text("abcdefgh", min_size=1, max_size=3), st.frozensets(WORDS, max_size=6), max_size=12)


def salience(terms: set[str], bags: list[frozenset[str]]) -> dict[str, float]:
    """The oracle: inverse document frequency read off every record, one by one."""
    n = len(bags) + PRIOR_DOCS
    return {w: math.log((n + 1) / (sum(w in b for b in bags) + 0.5)) for w in sorted(terms)}


def covered(weight: dict[str, float], have: frozenset[str]) -> float:
    """The oracle: the share of the salience a record holds, its every word tried for a slip."""
    return sum(v for w, v in weight.items() if w in have or slip(w, have)) / sum(weight.values())


@settings(max_examples=300, deadline=None)
@given(BAGS, st.sets(WORDS, min_size=1, max_size=4))
def test_the_lexicon_gives_the_figures_of_reading_every_record(bags: dict[str, frozenset[str]],
                                                               terms: set[str]) -> None:
    lex = Lexicon(bags)
    weight = lex.salience(terms)
    assert weight == salience(terms, list(bags.values()))
    held = lex.coverage(weight)
    for rid, bag in bags.items():
        assert held.shares.get(rid, 0.0) == covered(weight, bag)  # the same sum, in the same order
    assert held.anywhere == covered(weight, frozenset().union(*bags.values()))


def test_a_write_is_seen_by_the_next_question(tmp_path: Path) -> None:
    wb = _store(tmp_path, TALK)
    try:
        assert wb.recall("What did Priya see in Kyoto?").ids == ["r4"]
        more = tmp_path / "more.jsonl"
        more.write_text(json.dumps(_said("r6", "Priya", "Priya saw the Kyoto moss garden in the rain.", ["Priya"]))
                        + "\n", encoding="utf-8")
        wb.import_files([more])
        assert "r6" in wb.recall("What did Priya see in Kyoto?").ids
        wb.retract("r6", reason="a test")
        assert wb.recall("What did Priya see in Kyoto?").ids == ["r4"]
    finally:
        wb.close()


def test_the_cache_forgets_when_the_store_moves(tmp_path: Path) -> None:
    wb = _store(tmp_path, TALK)
    try:
        cache = RecordCache(wb.store)
        cache.check()
        assert set(cache.load(["r1", "r4", "nope"])) == {"r1", "r4"}
        calls = []
        assert cache.remember("k", lambda: calls.append(1) or 1) == cache.remember("k", lambda: calls.append(1) or 2)
        assert calls == [1]
        cache.check()  # the same version: kept
        assert cache.remember("k", lambda: 3) == 1
        wb.retract("r4", reason="a test")
        cache.check()  # a new version: forgotten
        assert cache.remember("k", lambda: 3) == 3
        assert cache.load(["r4"])["r4"].status.value == "retracted"
    finally:
        wb.close()


def test_readers_do_not_share_what_recall_kept(tmp_path: Path) -> None:
    wb = _with_viewer(tmp_path, hidden=3)
    try:
        assert wb.recall("What did Priya see in Kyoto?").ids == ["r4"]  # the owner first, filling its cache
        seen = wb.seen_by("vic").recall("What did Priya see in Kyoto?")
        assert "r4" not in json.dumps(seen.to_json())
    finally:
        wb.close()
