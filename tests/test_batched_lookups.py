"""Batched sub-goals (issue 19, part 3): the lone lookups a question is about to make one query at
a time (the goal's recorded facts, the first premise of each rule that could conclude it, the
question's negative facts) go in one query. Only the number of queries may change: on random
graphs with every shipped rule, and on the sample's questions, the conclusions, their proofs and
the answers are the same as one lookup a query, and there are never more queries. Batches are
for stores read by queries: where quad patterns are cheap (the embedded store) lone lookups are
read by patterns instead (tests/test_patterns.py), so here every store is read by queries."""

from __future__ import annotations

import json

import pyoxigraph as ox
import pytest
from hypothesis import given

from tests.test_oracle import FAST, RULE_FILES, concludable, content_graphs, record_graphs, shipped, subjects
from workbench.rules.check import scratch
from workbench.rules.engine import Engine
from workbench.rules.reads import CLOSURE_LEVELS
from workbench.service import Workbench


def _solve_all(store: object, ruleset: object, nodes: list[ox.NamedNode], preds: list[ox.NamedNode],
               levels: int = 1) -> tuple[dict[str, object], int]:
    """Every question about the graph; ``levels`` > 1 as over a network (closures several levels
    a query)."""
    out: dict[str, object] = {}
    queries = 0
    for node in nodes:
        for p in preds:
            eng = Engine(store, ruleset)  # type: ignore[arg-type]
            eng.closure_levels = levels
            result = eng.solve(node, p)
            queries += eng.queries
            out[f"{node} {p}"] = (sorted((str(t), s.key) for t, s in result.found.items()), result.incomplete)
    return out, queries


@FAST
@given(content=content_graphs(), records=record_graphs())
def test_batched_lookups_answer_as_one_lookup_a_query(content: frozenset[ox.Triple],
                                                      records: frozenset[ox.Triple]) -> None:
    paths, ruleset = shipped(*RULE_FILES)
    graph = content | records
    store = scratch(sorted(graph, key=str))
    store.cheap_patterns = False  # type: ignore[misc]
    nodes, preds = subjects(graph), concludable(ruleset)
    batched, fewer = _solve_all(store, ruleset, nodes, preds)
    networked, _ = _solve_all(store, ruleset, nodes, preds, levels=CLOSURE_LEVELS)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Engine, "_prefetch", lambda self, premise, rows, parent: None)
        single, more = _solve_all(store, ruleset, nodes, preds)
        walked, _ = _solve_all(store, ruleset, nodes, preds, levels=CLOSURE_LEVELS)
    assert batched == single
    assert networked == walked == single
    assert fewer <= more


QUESTIONS = [("my car", "needs", "gas"), ("my car", "needs", None), ("Sparky", "needs", None),
             ("Sparky", "is a", None), ("me", "owns", None), ("my car", "needs", "charging"),
             ("Paris", "located in", None)]


def test_the_sample_answers_the_same_in_fewer_queries(sample: Workbench) -> None:
    """On every backend: each answer (tier, values, proofs, sources) as before, in fewer queries."""
    def run() -> list[str]:
        return [json.dumps(sample.ask(s, r, o).to_json(), sort_keys=True) for s, r, o in QUESTIONS]

    run()  # the rules load first, running their test cases: not the questions' queries
    counted: list[int] = []
    real = Engine.solve

    def solve(self: Engine, *args: object, **kwargs: object) -> object:
        result = real(self, *args, **kwargs)  # type: ignore[arg-type]
        counted.append(self.queries)
        return result

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Engine, "solve", solve)
        # the first lookups written before the names are bound (rules/primed) would hide the
        # batches on a remote store: tested on their own (test_primed.py)
        mp.setattr("workbench.service.questions._first_reads", lambda *args: None)
        mp.setattr(type(sample.store), "cheap_patterns", False)
        batched = run()
        fewer = sum(counted)
        counted.clear()
        mp.setattr(Engine, "_prefetch", lambda self, premise, rows, parent: None)
        single = run()
        more = sum(counted)
    assert batched == single
    assert fewer < more
