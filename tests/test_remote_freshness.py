"""A question over a shared SPARQL server checks once whether the store moved (issue 19, part 3):
the server's revision and the stored rule versions' statuses come in one round trip, taken once
per question, and a rule another process signs off is in force at the next question."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest

from tests.conftest import FIXED_NOW, OxigraphServer
from tests.test_ask import negative_record, write_jsonl
from tests.test_rulebook import inherit_kind, people, write
from workbench.service import Workbench
from workbench.store.remote import RemoteStore
from workbench.values.answers import Tier

RDFS_SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"


@pytest.fixture()
def shared(oxigraph_server: OxigraphServer) -> Iterator[tuple[Workbench, Workbench]]:
    """Two Workbench processes' worth of objects on one server: alice's and bob's, each with a
    RemoteStore of its own (nothing shared but the server)."""
    oxigraph_server.clear()
    first = RemoteStore(oxigraph_server.url)
    alice = Workbench(first, user="alice", clock=lambda: FIXED_NOW)
    alice.init(sample=True)
    people(first)
    second = RemoteStore(oxigraph_server.url)
    bob = Workbench(second, user="bob", clock=lambda: FIXED_NOW)
    yield alice, bob
    first.close()
    second.close()


def _versions(store: RemoteStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    real = RemoteStore.select

    def select(self: RemoteStore, query: str) -> list:  # type: ignore[type-arg]
        if "revision" in query:
            asked.append(query)
        return real(self, query)

    monkeypatch.setattr(RemoteStore, "select", select)
    return asked


def test_a_question_asks_the_server_whether_it_moved_once(shared: tuple[Workbench, Workbench],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    alice, _ = shared
    alice.ask("my car", "needs")  # caches warm
    asked = _versions(alice.store, monkeypatch)  # type: ignore[arg-type]
    trips = alice.store.round_trips  # type: ignore[attr-defined]
    assert alice.ask("my car", "needs").tier is Tier.DERIVED
    assert len(asked) == 1  # the relations, the rules and the views all read the one version
    # the version with the names, the goal, its negatives and first sub-goals riding along
    # (written before the names were bound: rules/primed); the kinds (a closure) with what each
    # has and is (the next lookups and their first sub-goals, fetched with the walk's edges); the
    # labels and sources were described when the caches warmed, at this version, and the kinds
    # walked then too (rules/walked): 10 before one version a question, 9 before batched lookups,
    # 6 before the names rode, 5 before the walk fetched ahead, 4 before descriptions were kept,
    # 3 before the first lookups rode, 2 before the kinds' edges were kept
    assert alice.store.round_trips - trips == 1  # type: ignore[attr-defined]
    alice.ask("me", "owns")
    assert len(asked) == 2  # and the next question asks again


def test_a_rule_another_process_signs_off_answers_at_the_next_question(
        shared: tuple[Workbench, Workbench], tmp_path: Path) -> None:
    alice, bob = shared
    assert alice.ask("my car", "needs", "gas").tier is Tier.DERIVED  # rules/inherit-kind.ttl v1
    Workbench(bob.store, user="alice", clock=lambda: FIXED_NOW).propose_rules(
        write(tmp_path, "ik.ttl", inherit_kind(2, narrower=True)))
    assert alice.ask("my car", "needs", "gas").tier is Tier.DERIVED  # proposed only: not in force
    bob.signoff_rule("inherit-kind", comment="narrower")
    assert alice.ask("my car", "needs", "gas").tier is Tier.NO_EVIDENCE  # seen through the version
    assert [r.label for r in alice.rules.active() if r.id == "inherit-kind"] == ["inherit-kind v2"]


@pytest.mark.parametrize("question", ["ask", "count", "current", "decision"])
def test_every_kind_of_question_binds_its_names_with_the_version_check(
        shared: tuple[Workbench, Workbench], monkeypatch: pytest.MonkeyPatch, question: str) -> None:
    """The names' query rides with the version check (Store.prefetch): never a request of its own."""
    alice, _ = shared
    asking = {"ask": lambda: alice.ask("my car", "needs"), "count": lambda: alice.count("wedding", about="me"),
              "current": lambda: alice.current("me", "weight"), "decision": lambda: alice.decision("Project Atlas")}[question]
    first = asking()
    sent: list[str] = []
    real = RemoteStore._answer

    def answer(self: RemoteStore, query: str, *args: object, **kwargs: object) -> object:
        sent.append(query)
        return real(self, query, *args, **kwargs)

    monkeypatch.setattr(RemoteStore, "_answer", answer)
    again = asking()
    names = [q for q in sent if "?k ?e ?into" in q]
    assert names and all("wb_rider" in q and "wb_revision" in q for q in names), names
    assert again.to_json() == first.to_json() and again.tier is not Tier.UNKNOWN_ENTITY


def test_what_answers_described_is_asked_again_after_another_process_writes(
        shared: tuple[Workbench, Workbench], tmp_path: Path) -> None:
    """The words and sources kept for proofs (:class:`Described`) last one version of the
    shared server: a record another Workbench imports moves it, and the next question asks
    for its proof's words and sources again (a stale status or name would be shown otherwise)."""
    from workbench.answers.evidence import Described

    alice, bob = shared
    first = alice.ask("my car", "needs", "gas")
    kept = Described.of(alice.store)
    words = ["urn:wb:entity:gasoline", "urn:wb:entity:my-car"]  # (sorted)
    with alice.store.reading():
        assert kept.wanted(words, ["urn:wb:record:m-car-1"]) == ([], [])  # described, kept
    bike = negative_record("m-bike-1", "My bike is a vehicle.", ["my bike", "is a", "vehicle"])
    Workbench(bob.store, user="alice", clock=lambda: FIXED_NOW).import_files([write_jsonl(tmp_path / "b.jsonl", [bike])])
    with alice.store.reading():
        assert kept.wanted(words, ["urn:wb:record:m-car-1"]) == (words, ["urn:wb:record:m-car-1"])
    assert alice.ask("my car", "needs", "gas") == first


def test_kinds_walked_are_walked_again_after_another_process_writes(
        shared: tuple[Workbench, Workbench], tmp_path: Path) -> None:
    """The kinds' edges a walk read (:class:`Walked`) last one version of the shared server: a
    kind another Workbench records moves it, and the next question walks to the new kind (and
    what it has) instead of stopping where the kept edges did."""
    from workbench.rules.walked import Walked

    alice, bob = shared
    before = alice.ask("my car", "needs")
    assert "maintenance" in before.values and "lubricant" not in before.values
    with alice.store.reading():
        version = alice.store.version()
        assert Walked.of(alice.store).get(version, (RDFS_SUBCLASS, True), [ox.NamedNode("urn:wb:entity:car")],
                                          frozenset())[0]  # car's edges kept at this version
    facts = [negative_record("m-veh-1", "A vehicle is a kind of machine.", ["vehicle", "kind of", "machine"]),
             negative_record("m-mach-1", "A machine needs lubricant.", ["machine", "needs", "lubricant"])]
    Workbench(bob.store, user="alice", clock=lambda: FIXED_NOW).import_files([write_jsonl(tmp_path / "m.jsonl", facts)])
    after = alice.ask("my car", "needs")
    assert "lubricant" in after.values and after.tier is Tier.DERIVED
    assert set(before.values) < set(after.values)
