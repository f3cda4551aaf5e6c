"""Closure edges kept between questions (rules/walked; issue 19, part 2): a walk that takes a
node's edges from what an earlier question walked at the same store version answers exactly as
a fresh walk, in no more queries, and a write that adds edges is walked again, on random graphs
with every shipped rule."""

from __future__ import annotations

import pyoxigraph as ox
from hypothesis import given

from tests.test_oracle import FAST, RULE_FILES, concludable, content_graphs, shipped, subjects
from workbench.rules.check import GIVEN, scratch
from workbench.rules.engine import Engine
from workbench.store import Store
from workbench.values.rules import RuleSet


def _answers(store: Store, ruleset: RuleSet, goals: list[tuple[ox.NamedNode, ox.NamedNode]]) -> tuple[list, int]:
    found, queries = [], 0
    for s, p in goals:
        engine = Engine(store, ruleset)
        got = engine.solve(s, p, None)
        found.append(({t: step.key for t, step in got.found.items()}, got.incomplete))
        queries += engine.queries
    return found, queries


@FAST
@given(content=content_graphs(), more=content_graphs())
def test_kept_walks_answer_as_fresh_ones(content: frozenset[ox.Triple], more: frozenset[ox.Triple]) -> None:
    _, ruleset = shipped(*RULE_FILES)
    store = scratch(sorted(content, key=str))
    goals = [(n, p) for n in subjects(content | more) for p in concludable(ruleset)]
    cold, cold_queries = _answers(store, ruleset, goals)  # walks kept as they go
    warm, warm_queries = _answers(store, ruleset, goals)  # every walk kept already
    assert warm == cold and warm_queries <= cold_queries
    # A write moves the version: the edges it adds are walked, as on a store that never kept any.
    store.apply(insert=[ox.Quad(t.subject, t.predicate, t.object, GIVEN) for t in sorted(more - content, key=str)])
    fresh = scratch(sorted(content | more, key=str))
    assert _answers(store, ruleset, goals)[0] == _answers(fresh, ruleset, goals)[0]
