"""A question's first lookups written before its names are bound, sent with the version check
(rules/primed; issue 19, parts 1 and 3), on a real `oxigraph serve`: the same answers as
without, in fewer round trips; used only for the entities the names did bind."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyoxigraph as ox
import pytest

from tests.conftest import FIXED_NOW, OxigraphServer
from tests.test_batched_lookups import QUESTIONS
from workbench.answers import ask
from workbench.names.keys import name_key
from workbench.service import Workbench
from workbench.store.remote import RemoteStore
from workbench.values.answers import Tier

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
        return answers, remote.store.round_trips - trips  # type: ignore[attr-defined]

    run()  # the rules and relations read once: what the first reads are written from
    ahead, fewer = run()
    monkeypatch.setattr("workbench.service.questions._first_reads", lambda *args: None)
    plain, more = run()
    assert ahead == plain
    assert fewer <= more - len(questions) + 1, (fewer, more)  # a round trip fewer a question (the unknown name: none)
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
