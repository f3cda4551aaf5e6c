"""Recorded facts kept between questions (rules/walked; issue 19, part 2): closure edges, what a
walk reaches and what a lone lookup matches. A question that takes them from what an earlier
question read at the same store version answers exactly as a fresh one, in no more queries, and
a write is read again, on random graphs with every shipped rule; asked again, a derived answer
walks and looks up nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given

from tests.test_oracle import FAST, RULE_FILES, concludable, content_graphs, shipped, subjects
from workbench.rules.check import GIVEN, scratch
from workbench.rules.engine import Engine
from workbench.service import Workbench
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


VANS = [
    ("v1", "My van is a van.", [["my van", "is a", "van"]]),
    ("v2", "A van is a kind of road vehicle.", [["van", "kind of", "road vehicle"]]),
    ("v3", "A road vehicle needs a licence plate.", [["road vehicle", "needs", "licence plate"]]),
    ("v4", "A van needs diesel.", [["van", "needs", "diesel"]]),
]


def test_a_derived_question_asked_again_walks_and_looks_up_nothing_until_a_write(tmp_path: Path) -> None:
    """What a walk from a kind reaches and what a lone lookup matches (recorded facts, never a
    conclusion) are kept for the store's version: asked again, a derived answer walks nothing,
    looks nothing up and matches no fact again, and is the same; the rules still derive it. After a
    write (the kinds' edge retracted, then a kind's fact) the next answer no longer rests on it."""
    from workbench.rules import reads

    file = tmp_path / "vans.jsonl"
    file.write_text("".join(json.dumps({"id": i, "statement": text, "type": "observation", "triples": triples,
                                        "source": {"id": f"chat#{i}", "said_by": "me"}}) + "\n"
                            for i, text, triples in VANS), encoding="utf-8")
    wb = Workbench.open(tmp_path / "store", create=True)
    wb.init()
    wb.import_files([file])
    try:
        def asked() -> tuple[dict[str, object], dict[str, int]]:
            calls = {"walk": 0, "lookup": 0, "match": 0}

            def counted(name: str, real: Callable[..., object]) -> Callable[..., object]:
                def call(*a: object, **k: object) -> object:
                    calls[name] += 1
                    return real(*a, **k)
                return call

            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(reads.Reads, "_walk", counted("walk", reads.Reads._walk))
                mp.setattr(reads.Reads, "by_patterns", counted("lookup", reads.Reads.by_patterns))
                mp.setattr(reads, "match", counted("match", reads.match))
                return wb.ask("my van", "needs").to_json(), calls

        def values(answer: dict[str, object]) -> list[tuple[str, str]]:
            return sorted((f["label"], f["proofs"][0]["kind"]) for f in answer["findings"])  # type: ignore[index, union-attr]

        first, done = asked()
        assert values(first) == [("diesel", "derived"), ("licence plate", "derived")]
        assert done["walk"] and done["match"], done  # the first time: walked and matched
        again, done = asked()
        assert again == first and done == {"walk": 0, "lookup": 0, "match": 0}
        wb.retract("v2", reason="tested: the kinds' edge goes")
        after, done = asked()
        assert values(after) == [("diesel", "derived")] and done["walk"], done
        wb.retract("v4", reason="tested: the kind's fact goes")
        after, done = asked()
        assert after["tier"] == "no_evidence" and done["match"] + done["lookup"], (after["summary"], done)
    finally:
        wb.close()


def test_kept_walks_and_lookups_stay_bounded_and_answer_the_same(tmp_path: Path) -> None:
    """Past its bound each keeper starts again (a server running for weeks without a write keeps
    at most that much); the sample's answers are the same as with room for everything."""
    from tests.test_patterns import QUESTIONS
    from workbench.rules.walked import Looked, Reached

    wb = Workbench.open(tmp_path, create=True)
    wb.init(sample=True)
    try:
        def run() -> list[str]:
            return [json.dumps(wb.ask(s, r, o).to_json(), sort_keys=True) for s, r, o in QUESTIONS * 2]

        def sizes() -> tuple[int, int]:
            return len(Looked.of(wb.store)._values), len(Reached.of(wb.store)._values)

        roomy = run()
        full = sizes()
        assert min(full) > 2, full
        with pytest.MonkeyPatch.context() as mp:
            for keeper in (Looked, Reached):
                mp.setattr(keeper, "LIMIT", 2)
                keeper._kept.clear()
            assert run() == roomy
            assert max(sizes()) <= 2, sizes()
    finally:
        wb.close()
