"""The guessed tier: ranked model guesses for genuine gaps, apart from facts, never stored,
never premises; and kinds ranked by graph vectors that are computed, never copied from a kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.conftest import dump
from workbench.cli import main
from workbench.service import Workbench
from workbench.values.answers import Tier


def _records(path: Path, items: list[tuple[str, str, list[list[Any]]]]) -> Path:
    lines = [
        {"id": rid, "statement": st, "type": "observation", "about": [t[0][0]],
         "source": {"id": f"chat-{rid}", "said_by": "me", "captured_at": "2026-11-01"}, "triples": t}
        for rid, st, t in items
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


KETTLES = [
    ("m-k1", "Kettle One is a kettle.", [["Kettle One", "is a", "kettle"]]),
    ("m-k2", "Kettle Two is a kettle used for tea.", [["Kettle Two", "is a", "kettle"], ["Kettle Two", "used for", "tea"]]),
    ("m-k3", "Kettle Three boils tea and noodles.",
     [["Kettle Three", "is a", "kettle"], ["Kettle Three", "used for", "tea"], ["Kettle Three", "used for", "noodles"]]),
]


def test_a_gap_is_answered_with_ranked_guesses_apart_from_values(sample: Workbench, tmp_path: Path) -> None:
    sample.import_files([_records(tmp_path / "k.jsonl", KETTLES)])
    off = sample.ask("Kettle One", "used for")
    assert off.tier is Tier.NO_EVIDENCE and not off.guesses
    before = dump(sample.store)
    on = sample.ask("Kettle One", "used for", guess=True)
    assert on.tier is Tier.GUESSED
    assert on.values == [] and on.findings == ()  # a guess is never shown as a fact
    assert [g.label for g in on.guesses] == ["tea", "noodles"]  # both similar kettles have tea
    assert on.guesses[0].score > on.guesses[1].score and all(0 < g.score <= 1 for g in on.guesses)
    assert set(on.guesses[0].because) == {"Kettle Two", "Kettle Three"}
    assert "model guess" in on.text().lower() or "Model guesses" in on.text()
    assert all(g["kind"] == "model guess" for g in on.to_json()["guesses"])
    assert dump(sample.store) == before  # never written
    assert sample.ask("Kettle One", "used for", guess=True).to_json() == on.to_json()  # same question, same answer


def test_guesses_are_never_premises(sample: Workbench, tmp_path: Path) -> None:
    sample.import_files([_records(tmp_path / "k.jsonl", KETTLES)])
    derived = sample.ask("my car", "needs").to_json()
    sample.ask("Kettle One", "used for", guess=True)
    assert sample.ask("my car", "needs").to_json() == derived
    # and a recorded or derived answer stays what it is when guesses are on
    assert sample.ask("my car", "needs", guess=True).tier is Tier.DERIVED
    assert sample.ask("Kettle Two", "used for", guess=True).tier is Tier.RECORDED


def test_a_closed_question_says_where_the_value_ranks(sample: Workbench, tmp_path: Path) -> None:
    sample.import_files([_records(tmp_path / "k.jsonl", KETTLES)])
    yes = sample.ask("Kettle One", "used for", "tea", guess=True)
    assert yes.tier is Tier.GUESSED and "tea ranks 1 of 2" in yes.summary
    other = sample.ask("Kettle One", "used for", "Paris", guess=True)
    assert "not among" in other.summary


def test_nothing_similar_means_no_evidence(sample: Workbench) -> None:
    answer = sample.ask("Paris Hilton", "located in", guess=True)
    assert answer.tier is Tier.NO_EVIDENCE and not answer.guesses


def test_as_of_questions_get_no_guesses(sample: Workbench, tmp_path: Path) -> None:
    sample.import_files([_records(tmp_path / "k.jsonl", KETTLES)])
    assert sample.ask("Kettle One", "used for", as_of="2026-11-15", guess=True).tier is Tier.NO_EVIDENCE


def test_kinds_rank_from_the_things_own_facts_and_multi_kind_things_sit_between(
    sample: Workbench, tmp_path: Path
) -> None:
    sample.import_files([_records(tmp_path / "k.jsonl", [
        ("m-z", "Zappy is an electric car.", [["Zappy", "is a", "electric car"]]),
        ("m-r", "Rusty is a petrol car.", [["Rusty", "is a", "petrol car"]]),
    ])])
    sample.import_files([_records(tmp_path / "d.jsonl", [
        ("m-d", "Duo is a petrol car and a kettle.", [["Duo", "is a", "petrol car"], ["Duo", "is a", "kettle"]]),
    ])])
    zappy = [g.label for g in sample.guess_kinds("Zappy", top=50)]
    rusty = [g.label for g in sample.guess_kinds("Rusty", top=50)]
    assert zappy[0] == "electric car" and rusty[0] == "petrol car"
    assert set(g.label for g in sample.guess_kinds("Duo", top=2)) == {"petrol car", "kettle"}  # both kinds, first
    ranked = sample.guess_kinds("Zappy")
    assert all(g.model.startswith("kinds-naive-bayes-v1@") for g in ranked)
    assert [g.score for g in ranked] == sorted((g.score for g in ranked), reverse=True)
    # X's features come from X's own triples (its kinds and the kinds above them), never K's facts
    things = sample._indexes.things()
    x = set(things.features(sample.resolve("Zappy").entity or ""))
    k = set(things.features(sample.resolve("electric car").entity or ""))
    assert {"a <urn:wb:entity:electric-car>", "a <urn:wb:entity:car>", "a <urn:wb:entity:appliance>"} <= x
    assert not {f for f in x if not f.startswith("a <")} and {f for f in k if not f.startswith("a <")}


def test_cli_ask_guess_and_guess_kinds(tmp_path: Path) -> None:
    store = str(tmp_path / "memory")
    runner = CliRunner()
    assert runner.invoke(main, ["--store", store, "init", "--sample"]).exit_code == 0
    path = _records(tmp_path / "k.jsonl", KETTLES)
    assert runner.invoke(main, ["--store", store, "import", str(path)]).exit_code == 0
    out = runner.invoke(main, ["--store", store, "ask", "Kettle One", "used for", "--guess", "--json"])
    data = json.loads(out.output)
    assert data["tier"] == "guessed" and data["values"] == [] and data["guesses"][0]["label"] == "tea"
    plain = runner.invoke(main, ["--store", store, "ask", "Kettle One", "used for", "--json"])
    assert json.loads(plain.output)["tier"] == "no_evidence"
    kinds = runner.invoke(main, ["--store", store, "guess-kinds", "Sparky", "--json"])
    assert json.loads(kinds.output)["kinds"][0]["label"] == "electric car"
    assert "model guess" in runner.invoke(main, ["--store", store, "guess-kinds", "Sparky"]).output
