"""A question's first lookups written before its names are bound, sent with the version check
(rules/primed; issue 19, parts 1 and 3), on a real `oxigraph serve`: the same answers as
without, in fewer round trips; used only for the entities the names did bind."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyoxigraph as ox
import pytest
from hypothesis import given

from tests.conftest import FIXED_NOW, OxigraphServer
from tests.test_batched_lookups import QUESTIONS
from tests.test_oracle import FAST, RULE_FILES, concludable, content_graphs, record_graphs, shipped, subjects
from workbench.answers import ask
from workbench.names.keys import name_key
from workbench.rules.check import scratch
from workbench.rules.engine import Engine
from workbench.rules.primed import Primed
from workbench.service import Workbench
from workbench.store.remote import RemoteStore
from workbench.values.answers import Tier
from workbench.vocab import SKOS

MORE = [("my car", "is a", None), ("Paris", "needs", "gas"), ("my auto", "needs", "gas"), ("nobody", "needs", "gas")]


@pytest.fixture()
def remote(oxigraph_server: OxigraphServer) -> Iterator[Workbench]:
    oxigraph_server.clear()
    wb = Workbench(RemoteStore(oxigraph_server.url), user="root", clock=lambda: FIXED_NOW)
    wb.init(sample=True)
    wb.add_entity("my auto")
    wb.merge("my car", "my auto", reason="the same car")  # "my auto" binds to my car, through a merge
    yield wb
    wb.close()


def test_the_same_answers_in_fewer_round_trips(remote: Workbench, monkeypatch: pytest.MonkeyPatch) -> None:
    questions = QUESTIONS + MORE

    def run() -> tuple[list[str], int]:
        trips = remote.store.round_trips  # type: ignore[attr-defined]
        answers = [json.dumps(remote.ask(s, r, o).to_json(), sort_keys=True) for s, r, o in questions]
        answers.append(json.dumps(remote.decision("Project Atlas").to_json(), sort_keys=True))  # its lookups alone
        return answers, remote.store.round_trips - trips  # type: ignore[attr-defined]

    run()  # the rules and relations read once: what the first reads are written from
    ahead, fewer = run()
    monkeypatch.setattr("workbench.service.questions._first_reads", lambda *args: None)
    plain, more = run()
    assert ahead == plain
    assert fewer <= more - len(questions), (fewer, more)  # a round trip fewer a question (the unknown name: none)
    ahead.pop()
    assert json.loads(ahead[-1])["tier"] == Tier.UNKNOWN_ENTITY.value
    assert json.loads(ahead[-2])["tier"] == json.loads(ahead[0])["tier"] == Tier.DERIVED.value


def test_rows_are_taken_only_for_an_entity_among_the_name_s_candidates(remote: Workbench) -> None:
    """The rows are written for every entity the name may bind; an entity that is not one of
    them (here: another thing) gets none, so the engine asks for it as it always did."""
    store = remote.store
    remote.ask("my car", "needs", "gas")  # the rules loaded
    needs = ox.NamedNode("https://w3id.org/workbench/ns#needs")
    for entity, usable in (("urn:wb:entity:gasoline", False), ("urn:wb:entity:my-car", True)):
        first = ask.primed(store, remote.rules, needs, name_key("my auto"), None)
        with store.reading():
            store.prefetch(first.query)
            assert first.bind(store, ox.NamedNode(entity), None) is usable
    first = ask.primed(store, remote.rules, needs, name_key("my car"), None)
    with store.reading():
        store.version()  # asked already: nothing rides, nothing is taken
        store.prefetch(first.query)
        assert first.bind(store, ox.NamedNode("urn:wb:entity:my-car"), None) is False


def test_a_server_refusing_the_first_reads_still_answers(remote: Workbench, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that took the LATERAL probe but refuses a question's first reads (here: made
    malformed) answers the question all the same, through the version check sent again without
    them; no first reads are sent to it afterwards."""
    expected = remote.ask("my car", "needs", "gas")
    real = Primed.__init__

    def malformed(self: Primed, *args: object, **kwargs: object) -> None:
        real(self, *args, **kwargs)  # type: ignore[arg-type]
        self.query = self.query[:-1] + " LATERAL { }"

    monkeypatch.setattr(Primed, "__init__", malformed)
    assert remote.store.takes_lateral()  # type: ignore[attr-defined]
    assert remote.ask("my car", "needs", "gas") == expected
    assert not remote.store.takes_lateral()  # type: ignore[attr-defined]
    assert remote.ask("my car", "needs", "gas") == expected


# ---------------------------------------------------------------------- random graphs

@FAST
@given(content=content_graphs(), records=record_graphs())
def test_first_reads_answer_as_the_engine_s_own_lookups(content: frozenset[ox.Triple],
                                                         records: frozenset[ox.Triple]) -> None:
    """On random graphs with every shipped rule, open and ground goals: the engine seeded with
    the first reads (the query evaluated on the same engine, as a server that takes LATERAL
    would) finds the same conclusions and proofs as the engine alone, in no more queries. Each
    node is named by its IRI's last part; a second name, shared by two nodes, makes candidates
    that are not the bound entity."""
    _, ruleset = shipped(*RULE_FILES)
    graph = content | records
    store = scratch(sorted(graph, key=str))
    nodes = subjects(graph)
    named = [ox.Quad(n, SKOS.prefLabel, ox.Literal(_key(n)), ox.NamedNode("urn:wb:names")) for n in nodes]
    named += [ox.Quad(n, SKOS.altLabel, ox.Literal("shared"), ox.NamedNode("urn:wb:names")) for n in nodes[:2]]
    store._db.extend(named)  # type: ignore[attr-defined]
    goals = [(n, p, None) for n in nodes for p in concludable(ruleset)]
    goals += [(n, p, o) for n in nodes[:3] for p in concludable(ruleset) for o in nodes]
    for s, p, o in goals:
        alone = Engine(store, ruleset)
        expected = alone.solve(s, p, o)
        for key in (_key(s), "shared"):
            first = Primed.of(store, ruleset, p, key, _key(o) if o is not None else None, dict)
            rows = store.select(first.query)
            store.prefetched = lambda query, rows=rows: rows  # type: ignore[method-assign]
            seeded = Engine(store, ruleset)
            if not first.bind(store, s, o):
                assert key == "shared" and s not in nodes[:2]
                continue
            first.into(seeded)
            got = seeded.solve(s, p, o)
            assert {t: st.key for t, st in got.found.items()} == {t: st.key for t, st in expected.found.items()}
            assert got.incomplete == expected.incomplete
            assert seeded.queries <= alone.queries


def _key(n: ox.NamedNode) -> str:
    return n.value.rsplit("/", 1)[-1].rsplit(":", 1)[-1].lower()
