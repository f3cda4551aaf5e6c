"""The guesser's proposals in the review queue (issue 18, part 3): likely kinds for entities with
none, likely merges of entities that look like one, each a candidate labelled as a model proposal
with its version, score, stated chance and evidence; nothing typed or merged until a curator
approves. The store is real: 30 synthetic worlds admitted as common sense (about 21,000
relations), new things recorded with their facts and no kind, and distractors: things named
alike whose facts differ, and one thing recorded twice under two names.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchmarks import synth
from benchmarks.audit import Case, plan
from tests.conftest import dump, in_queue
from workbench.cli import main
from workbench.errors import Conflict, Forbidden, Invalid
from workbench.guesses.model import MODEL
from workbench.guesses.proposals import MERGE_MODEL
from workbench.review import queue
from workbench.service import Workbench
from workbench.values.answers import Tier

WORLDS = 30


def _record(rid: str, name: str, facts: Any, **extra: Any) -> dict[str, Any]:
    return {"id": rid, "statement": f"What is known of {name}.", "type": "observation", "about": [name],
            "source": {"id": f"chat#{rid}", "said_by": "me"}, **extra,
            "triples": [[name, f"<{p}>", f"<{o}>"] for p, o in facts]}


def _build(base: Path, cases: list[Case], extra: list[dict[str, Any]] = ()) -> Workbench:  # type: ignore[assignment]
    synth.write(base / "worlds.nq", n_worlds=WORLDS, seed=0)
    wb = Workbench.open(base / "store", create=True, user="me")
    wb.init()
    wb.import_files([base / "worlds.nq"], record_type="common_sense", source="synth-0", said_by="bench",
                    statement="Synthetic common-sense worlds.")
    lines = [_record(f"x{c.number}", c.name, c.first_facts[:4]) for c in cases]
    first = cases[0]
    lines += [
        # the same thing recorded twice, under two names spelled alike: a merge to propose
        _record("twin-a", "Kovon widget", first.first_facts[:3]),
        _record("twin-b", "Kovon widgets", first.first_facts[:3]),
        # a thing with a kind already: nothing to propose for it
        {**_record("typed", "Typed thing", first.first_facts[:2]),
         "triples": [["Typed thing", "is a", f"<{first.kinds[0]}>"]]},
        *extra,
    ]
    (base / "things.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    wb.import_files([base / "things.jsonl"])
    wb.add_user("me", ["admin"])
    return wb


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return plan(WORLDS, cases=6, multi=1, seed=0)[0]


@pytest.fixture(scope="module")
def proposed(tmp_path_factory: pytest.TempPathFactory, cases: list[Case]) -> Iterator[tuple[Workbench, list[str]]]:
    wb = _build(tmp_path_factory.mktemp("proposals"), cases)
    before = set(dump(wb.store).splitlines())
    new = wb.propose_guesses()
    after = set(dump(wb.store).splitlines())
    # proposing wrote candidates into the queue and nothing else
    assert before <= after and {q for q in after - before if not in_queue(q)} == set()
    yield wb, new
    wb.close()


def _kinds(wb: Workbench) -> list[queue.Candidate]:
    return [c for c in wb.candidates(status=None) if c.id.startswith("g-kind-")]


def test_each_new_thing_gets_its_own_kind_proposed_with_a_measured_chance(
        proposed: tuple[Workbench, list[str]], cases: list[Case]) -> None:
    wb, new = proposed
    found = _kinds(wb)
    assert {c.id for c in found} <= set(new)
    by_subject: dict[str, list[queue.Candidate]] = {}
    for c in found:
        by_subject.setdefault(c.record["triples"][0][0], []).append(c)
    for case in cases:
        iri = f"<{wb.resolve(case.name).entities[0]}>"
        mine = sorted(by_subject.get(iri, []), key=lambda c: c.guess["rank"])  # type: ignore[index]
        assert mine, f"no kind proposed for {case.name}"
        top = mine[0]
        assert top.record["triples"] == [[iri, "is a", f"<{case.kinds[0]}>"]]
        assert top.guess is not None and top.guess["chance"] >= 0.5 and top.guess["model"].startswith(f"{MODEL}@")
        # labelled as the model's proposal: the proposer and the source are the model and its version
        assert top.model == top.guess["model"] and top.proposed_by == f"model:{top.guess['model']}"
        assert top.record["source"]["said_by"] == f"model:{top.guess['model']}"
        assert "such guesses were right" in top.record["source"]["text"]
        # the evidence is the nearest things of that kind, with the facts they share
        assert top.guess["evidence"] and top.guess["evidence"][0]["shares"]
    # entities that have a kind, and kinds themselves, get none
    typed = f"<{wb.resolve('Typed thing').entities[0]}>"
    assert typed not in by_subject and len(by_subject) == len(cases) + 2  # + the two twins


def test_a_proposal_is_no_fact_until_approved(proposed: tuple[Workbench, list[str]], cases: list[Case]) -> None:
    wb, _ = proposed
    case = cases[0]
    kind = wb.ask(case.name, "is a")
    assert kind.tier is Tier.NO_EVIDENCE and not kind.findings


def test_only_names_alike_with_agreeing_facts_are_proposed_as_one(proposed: tuple[Workbench, list[str]]) -> None:
    wb, _ = proposed
    merges = [c for c in wb.candidates(status=None) if c.id.startswith("g-merge-")]
    # "new thing 1" .. "new thing 6" are spelled alike too, but their facts differ: never proposed
    assert len(merges) == 1, [c.record["statement"] for c in merges]
    m = merges[0]
    twins = {wb.resolve("Kovon widget").entities[0], wb.resolve("Kovon widgets").entities[0]}
    assert {m.record["merge"]["keep"], m.record["merge"]["other"]} == twins
    assert m.guess is not None and m.guess["chance"] is None and m.guess["score"] == 1.0
    assert m.guess["model"].startswith(f"{MERGE_MODEL}@") and m.proposed_by == f"model:{m.guess['model']}"
    assert wb.check_candidate(m.id).valid


def test_proposing_again_queues_nothing_new(proposed: tuple[Workbench, list[str]]) -> None:
    wb, new = proposed
    assert new and wb.propose_guesses() == []


def test_approving_a_kind_records_it_attributed_to_model_and_curator(
        proposed: tuple[Workbench, list[str]], cases: list[Case]) -> None:
    wb, _ = proposed
    case = cases[1]
    iri = f"<{wb.resolve(case.name).entities[0]}>"
    cand = next(c for c in _kinds(wb) if c.record["triples"][0][0] == iri and c.guess["rank"] == 1)  # type: ignore[index]
    assert wb.check_candidate(cand.id).valid
    (rid,) = wb.approve([cand.id])
    record = wb.record(rid)
    assert cand.guess and record.extracted_by and record.extracted_by.endswith(f"model:{cand.guess['model']}")
    assert record.confirmed_by == "me" and record.said_by == f"model:{cand.guess['model']}"
    answer = wb.ask(case.name, "is a")  # recorded now (and the kinds above it derived)
    assert answer.tier is not Tier.NO_EVIDENCE and f"<{case.kinds[0]}>" in {f.value for f in answer.findings}
    assert f"recorded: {case.kind_names[0]}" in answer.summary
    assert wb.candidate(cand.id).status == "approved" and wb.propose_guesses() == []


def test_rejecting_keeps_the_reason_and_it_is_not_proposed_again(
        proposed: tuple[Workbench, list[str]], cases: list[Case]) -> None:
    wb, _ = proposed
    iri = f"<{wb.resolve(cases[2].name).entities[0]}>"
    cand = next(c for c in _kinds(wb) if c.record["triples"][0][0] == iri)
    wb.reject([cand.id], reason="the model is wrong here")
    assert wb.candidate(cand.id).reason == "the model is wrong here"
    assert cand.id not in wb.propose_guesses()


def test_approving_a_merge_merges_and_a_split_undoes_it(proposed: tuple[Workbench, list[str]]) -> None:
    wb, _ = proposed
    m = next(c for c in wb.candidates() if c.id.startswith("g-merge-"))
    keep, other = m.record["merge"]["keep"], m.record["merge"]["other"]
    wb.approve([m.id])
    assert wb.resolve("Kovon widget").entities == wb.resolve("Kovon widgets").entities == (keep,)
    decided = wb.candidate(m.id)
    assert decided.status == "approved" and decided.approved_as and "merge" in decided.approved_as
    reason = wb.store.select(
        f"SELECT ?r WHERE {{ GRAPH <urn:wb:graph:entities> {{ ?m <https://w3id.org/workbench/ns#mergedEntity> <{other}> ;"
        " <https://w3id.org/workbench/ns#reason> ?r } }")
    assert [r["r"].value for r in reason] == [f"proposed by model {m.model} as candidate {m.id}; approved by me"]
    wb.split(other, reason="not the same after all")
    assert wb.resolve("Kovon widgets").entities == (other,)
    # the pair is decided: it is not proposed again, and the candidate cannot be approved twice
    assert m.id not in wb.propose_guesses()
    with pytest.raises(Conflict, match="already approved"):
        wb.approve([m.id])


def test_erasing_a_record_erases_the_proposals_that_repeat_it(
        proposed: tuple[Workbench, list[str]], cases: list[Case]) -> None:
    wb, _ = proposed
    case = cases[4]
    iri = f"<{wb.resolve(case.name).entities[0]}>"
    mine = [c for c in _kinds(wb) if c.record["triples"][0][0] == iri]
    assert mine and all(c.guess and f"x{case.number}" in c.guess["rests_on"] for c in mine)
    words = f"for {case.name} from what is recorded of it".encode()
    assert words in dump(wb.store)
    wb.erase(f"x{case.number}", reason="asked to forget it")
    assert words not in dump(wb.store)  # the proposal's text and basis repeated the erased facts
    assert not [c for c in _kinds(wb) if c.id in {m.id for m in mine}]
    assert not [c for c in _kinds(wb) if c.record["triples"][0][0] == iri and c.status == "pending"]


def test_a_merge_that_no_longer_holds_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    with Workbench.open(tmp_path / "s", create=True, user="me") as wb:
        wb.init(sample=True)
        wb.add_user("me", ["admin"])
        ravi, lin = wb.resolve("Ravi").entities[0], wb.resolve("Professor Lin").entities[0]
        wb.propose(queue.parse([("test", {"id": "g-merge-x", "statement": "Ravi and Professor Lin are one.",
                                          "merge": {"keep": f"<{ravi}>", "other": lin},
                                          "guess": {"model": "m@1", "score": 0.6, "chance": None}})]),
                   queue.Proposal("model", "test", model="m@1"))
        wb.merge("Ravi", "Professor Lin", reason="by hand")
        checks = wb.check_candidate("g-merge-x")
        assert not checks.valid and "already the same entity" in checks.problems[0]
        before = dump(wb.store)
        with pytest.raises(Conflict, match="already the same entity"):
            wb.approve(["g-merge-x"])
        assert dump(wb.store) == before and wb.candidate("g-merge-x").status == "pending"


@pytest.mark.parametrize(("raw", "says"), [
    ({"merge": {"keep": "urn:a", "other": "urn:a"}}, "the same entity"),
    ({"merge": {"keep": "not an iri", "other": "urn:b"}}, "'merge.keep' must be an entity's IRI"),
    ({"merge": {"keep": "urn:a"}}, "'keep' and 'other'"),
    ({"merge": {"keep": "urn:a", "other": "urn:b"}, "colour": "red"}, "unknown field 'colour'"),
    ({"merge": {"keep": "urn:a", "other": "urn:b"}, "guess": {"model": "m", "score": 2}}, "'guess.score'"),
    ({"merge": {"keep": "urn:a", "other": "urn:b"}, "guess": {"model": "m", "score": 0.5, "chance": -1}},
     "'guess.chance'"),
    ({"merge": {"keep": "urn:a", "other": "urn:b"}, "guess": {"score": 0.5}}, "'guess.model'"),
    ({"merge": {"keep": "urn:a", "other": "urn:b"}, "guess": {"model": "m", "score": 0.5, "evidence": [{}]}},
     "'guess.evidence[0]'"),
])
def test_a_bad_proposal_is_refused_naming_the_field_and_queues_nothing(tmp_path: Path, raw: dict[str, Any],
                                                                       says: str) -> None:
    file = tmp_path / "c.jsonl"
    good = {"id": "ok", "statement": "Fine.", "type": "observation", "source": {"id": "s", "said_by": "me"},
            "about": ["me"], "guess": {"model": "m@1", "score": 0.5, "chance": 0.4}}
    bad = {"id": "g-bad", "statement": "Bad.", **raw}
    file.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with Workbench.open(tmp_path / "s", create=True, user="me") as wb:
        wb.init()
        with pytest.raises(Invalid, match=says.replace("(", r"\(").replace("[", r"\[")) as err:
            wb.import_candidates(file)
        assert str(err.value.where).startswith(f"{file}:2")
        assert wb.candidates(status=None) == []


def test_readers_and_restricted_sources(tmp_path: Path, cases: list[Case]) -> None:
    """A viewer may not propose; what only a group may see is never a proposal's basis."""
    secret = _record("secret", "Hidden gadget", cases[3].first_facts[:4], visible_to=["group:atlas"])
    wb = _build(tmp_path, cases[:2], extra=[secret])
    try:
        wb.add_user("vic", ["viewer"])
        wb.add_user("cora", ["curator"])
        with pytest.raises(Forbidden):
            wb.acting_as("vic").propose_guesses()
        new = wb.acting_as("cora").propose_guesses()
        hidden = f"<{wb.resolve('Hidden gadget').entities[0]}>"
        queued = [wb.candidate(i) for i in new]
        assert queued and all(hidden not in json.dumps(c.to_json()) for c in queued)
        assert all(c.proposed_by.startswith("model:") for c in queued)
    finally:
        wb.close()


def test_guesses_propose_on_the_command_line(tmp_path: Path) -> None:
    store = str(tmp_path / "memory")
    runner = CliRunner()
    assert runner.invoke(main, ["--store", store, "init", "--sample"]).exit_code == 0
    # the sample's common sense is too small to measure a chance: nothing passes the default bar
    shown = runner.invoke(main, ["--store", store, "guesses", "propose"])
    assert shown.exit_code == 0, shown.output
    assert "Nothing new to propose" in shown.output
    shown = runner.invoke(main, ["--store", store, "guesses", "propose", "--min-chance", "0", "--top", "1", "--json"])
    assert shown.exit_code == 0, shown.output
    queued = json.loads(shown.output)
    assert queued and all(c["guess"]["chance"] is None and c["guess"]["rank"] == 1 for c in queued)
    listed = runner.invoke(main, ["--store", store, "candidates", "show", queued[0]["id"]])
    assert "guess: chance not measured; score" in listed.output and listed.exit_code == 0
    bad = runner.invoke(main, ["--store", store, "guesses", "propose", "--min-chance", "2"])
    assert bad.exit_code == 2 and "2" in bad.output
