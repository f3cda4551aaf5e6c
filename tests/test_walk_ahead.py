"""A closure's walk fetches what the body looks up next about the nodes it reaches (issue 19,
part 1; ``Reads.expand``'s ``ahead``): walking a thing's kinds, each kind's facts with the
predicates the next premise and its sub-rules' first premises ask for come with the kind's edges,
and answer those lookups without a query of their own. Only the number of queries may change: on
random graphs with every shipped rule (cycles, things of two kinds, typed classes), for open and
ground questions, a level a query and several, on chains of kinds deeper than one query walks,
and on the sample over every backend, the conclusions, their proofs and the answers are the same
as without, in no more queries. Fetching ahead saves queries, so every store here is read by
queries (where quad patterns are cheap, lone lookups are patterns instead: tests/test_patterns.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given

from tests.test_oracle import FAST, RELATIONS, RULE_FILES, concludable, content_graphs, record_graphs, shipped, subjects
from workbench.rules.check import parse_turtle, scratch
from workbench.rules.engine import Engine
from workbench.rules.reads import CLOSURE_LEVELS
from workbench.service import Workbench
from workbench.vocab import WB

pytestmark = pytest.mark.usefixtures("walks_read_afresh")  # these count what a walk reads

Goal = tuple[ox.NamedNode, ox.NamedNode, ox.NamedNode | None]


def _answers(store: object, ruleset: object, goals: list[Goal], *, ahead: bool,
             levels: int) -> tuple[dict[str, object], int]:
    out: dict[str, object] = {}
    queries = 0
    for s, p, o in goals:
        eng = Engine(store, ruleset)  # type: ignore[arg-type]
        eng.ahead = ahead
        eng.closure_levels = levels
        result = eng.solve(s, p, o)
        queries += eng.queries
        out[f"{s} {p} {o}"] = (sorted((str(t), st.key) for t, st in result.found.items()), result.incomplete)
    return out, queries


@FAST
@given(content=content_graphs(), records=record_graphs())
def test_fetching_ahead_answers_as_looking_each_up(content: frozenset[ox.Triple], records: frozenset[ox.Triple]) -> None:
    _, ruleset = shipped(*RULE_FILES)
    graph = content | records
    store = scratch(sorted(graph, key=str))
    nodes, preds = subjects(graph), concludable(ruleset)
    goals: list[Goal] = [(n, p, None) for n in nodes for p in preds]
    goals += [(n, p, o) for n in nodes[:3] for p in preds for o in nodes]  # ground: recorded, derived or neither
    for levels in (1, CLOSURE_LEVELS):  # embedded; over a network
        for by_queries in (False, True):  # quad patterns where cheap (the scratch store), or queries
            store.cheap_patterns = not by_queries  # type: ignore[misc]
            ahead, fewer = _answers(store, ruleset, goals, ahead=True, levels=levels)
            each, more = _answers(store, ruleset, goals, ahead=False, levels=levels)
            assert ahead == each
            assert fewer <= more or not by_queries  # a pattern is no query


def _kinds(depth: int) -> str:
    """A thing, a chain of ``depth`` kinds above its kind, a need at the top, wheels below."""
    kinds = " ".join(f"e:k{i} rdfs:subClassOf e:k{i + 1} ." for i in range(depth))
    return f"e:x a e:k0 . {kinds} e:k{depth} wb:needs e:gas . e:k0 wb:has e:wheels ."


@pytest.mark.parametrize("depth", [0, 1, 3, CLOSURE_LEVELS, CLOSURE_LEVELS + 3])
@pytest.mark.parametrize("levels", [1, CLOSURE_LEVELS])
def test_a_chain_of_kinds_is_answered_the_same_in_fewer_queries(depth: int, levels: int) -> None:
    """Each kind's needs come with its edges, however many queries the walk takes."""
    _, ruleset = shipped(*RULE_FILES)
    store = scratch(parse_turtle(_kinds(depth), "kinds"))
    store.cheap_patterns = False  # type: ignore[misc]
    x, gas = ox.NamedNode("urn:wb:entity:x"), ox.NamedNode("urn:wb:entity:gas")
    goals: list[Goal] = [(x, WB.needs, gas), (x, WB.needs, None), (x, WB.has, None)]
    ahead, fewer = _answers(store, ruleset, goals, ahead=True, levels=levels)
    each, more = _answers(store, ruleset, goals, ahead=False, levels=levels)
    assert ahead == each
    found, incomplete = ahead[f"{x} {WB.needs} {gas}"]  # type: ignore[misc]
    assert found and not incomplete
    assert fewer < more


QUESTIONS = [("my car", "needs", "gas"), ("my car", "needs", None), ("Sparky", "needs", None),
             ("Sparky", "is a", None), ("me", "owns", None), ("my car", "needs", "charging"),
             ("Paris", "located in", None), ("my car", "used for", None), ("Sparky", "has", None)]


def test_the_sample_answers_the_same_fetching_ahead(sample: Workbench, monkeypatch: pytest.MonkeyPatch) -> None:
    """On every backend, each answer (tier, values, proofs, sources) is the same with the walk
    fetching ahead as without, in fewer queries."""
    real = Engine.solve

    def run(ahead: bool) -> tuple[list[str], int]:
        counted: list[int] = []

        def solve(self: Engine, *args: object, **kwargs: object) -> object:
            self.ahead = ahead
            result = real(self, *args, **kwargs)  # type: ignore[arg-type]
            counted.append(self.queries)
            return result

        monkeypatch.setattr(Engine, "solve", solve)
        answers = [json.dumps(sample.ask(s, r, o).to_json(), sort_keys=True) for s, r, o in QUESTIONS]
        monkeypatch.undo()
        return answers, sum(counted)

    with pytest.MonkeyPatch.context() as read_by_queries:
        read_by_queries.setattr(type(sample.store), "cheap_patterns", False)
        run(False)  # the rules load first, running their test cases: not the questions' queries
        each, more = run(False)
        ahead, fewer = run(True)
    assert ahead == each
    assert fewer < more


def test_a_lookup_of_a_predicate_not_fetched_ahead_still_asks(tmp_path: Path) -> None:
    """The walk fetched each kind's needs (the next premise); the premise after it asks where the
    kind is, which the walk did not fetch: that lookup goes to the store, and finds it."""
    from tests.test_rules import rule_ttl, write
    from workbench.rules import load_rules

    needs_place = rule_ttl(
        "kind-place",
        "CONSTRUCT { $this wb:dependsOn ?z } WHERE { $this a ?k . ?k rdfs:subClassOf* ?kind . "
        "?kind wb:needs ?y . ?kind wb:locatedIn ?z }",
        given="e:x a e:k0 . e:k0 rdfs:subClassOf e:k1 . e:k1 wb:needs e:gas . e:k1 wb:locatedIn e:garage .",
        expect="e:x wb:dependsOn e:garage .", expect_not="e:k0 wb:dependsOn e:gas .",
        target="sh:targetSubjectsOf rdf:type")
    part_place = rule_ttl(  # makes "located in" a relation a rule concludes: looked up on its own
        "part-place", "CONSTRUCT { $this wb:locatedIn ?z } WHERE { $this wb:partOf ?w . ?w wb:locatedIn ?z }",
        given="e:a wb:partOf e:b . e:b wb:locatedIn e:c .", expect="e:a wb:locatedIn e:c .",
        expect_not="e:b wb:locatedIn e:a .")
    paths = [write(tmp_path, "kind-place.ttl", needs_place), write(tmp_path, "part-place.ttl", part_place)]
    ruleset = load_rules(paths, relations=RELATIONS)
    store = scratch(parse_turtle("e:x a e:k0 . e:k0 rdfs:subClassOf e:k1 . e:k1 wb:needs e:gas . "
                                 "e:k1 wb:locatedIn e:garage .", "kinds"))
    x = ox.NamedNode("urn:wb:entity:x")
    for levels in (1, CLOSURE_LEVELS):
        ahead, _ = _answers(store, ruleset, [(x, WB.dependsOn, None)], ahead=True, levels=levels)
        each, _ = _answers(store, ruleset, [(x, WB.dependsOn, None)], ahead=False, levels=levels)
        assert ahead == each
        found, _ = ahead[f"{x} {WB.dependsOn} None"]  # type: ignore[misc]
        assert [t for t, _ in found] == [str((x, WB.dependsOn, ox.NamedNode("urn:wb:entity:garage")))]


def test_a_node_walked_before_keeps_what_was_fetched_about_it() -> None:
    """A second walk that reaches a node the first one expanded skips its edges and facts (they
    are known): what the first fetched about it still answers its lookups."""
    from workbench.rules.reads import Reads
    from workbench.values.rules import Premise, Var

    store = scratch(parse_turtle("e:k0 rdfs:subClassOf e:k1 . e:k1 wb:needs e:gas .", "kinds"))
    k0, k1 = ox.NamedNode("urn:wb:entity:k0"), ox.NamedNode("urn:wb:entity:k1")
    subclass = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#subClassOf")
    reads = Reads(store, as_of=None)
    reads.closure_levels = CLOSURE_LEVELS
    reads.walk(subclass, {k1}, ahead=frozenset({WB.needs.value}))
    reads.walk(subclass, {k0}, ahead=frozenset({WB.needs.value}))  # reaches k1 again, at level 1
    asked = reads.queries
    needs = Premise(Var("kind"), WB.needs, Var("y"))
    found = reads.lookup(needs, ["kind"], [(k1,), (k0,)])
    assert reads.queries == asked  # both answered from what the walks fetched
    assert [new["y"] for new, _ in found[(k1,)]] == [ox.NamedNode("urn:wb:entity:gas")]
    assert found[(k0,)] == []
