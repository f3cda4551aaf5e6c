"""Recall: questions in words -> a bundle of records (recorded or guessed) under a budget, or "no
memory"; and graph guesses, which never touch the store.

Real parts only: an on-disk store, the ``workbench`` command (click's CliRunner, or a subprocess
where bytes or separate processes matter), FAISS files beside the store. The index and encoder
parts (corruption, kept in step, encoders) are in ``test_vectors.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import DATA, FIXED_NOW, ROOT, dump
from workbench.cli import main
from workbench.errors import Invalid
from workbench.recall.bundles import PURPOSES, Bundle
from workbench.service import Workbench
from workbench.values.records import Status

SAMPLE = {r["id"]: r for r in map(json.loads, (DATA / "memories.jsonl").read_text("utf-8").splitlines())}
FUZZY = "what was the name of my friend who works on chips?"


# ---------------------------------------------------------------------- helpers (test_vectors.py uses them too)


def memory(rid: str, statement: str, about: list[str], triples: list[list[Any]], **extra: Any) -> dict[str, Any]:
    """A record in the format of data/memories.jsonl."""
    return {"id": rid, "statement": statement, "type": "observation", "about": about,
            "source": {"id": f"src-{rid}", "said_by": "me", "captured_at": "2026-11-01T10:00:00Z"},
            "triples": triples, **extra}


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def make_store(where: Path, records: list[dict[str, Any]] = ()) -> Path:  # type: ignore[assignment]
    """A closed embedded store with the sample data (and ``records``) at ``where``/memory."""
    location = where / "memory"
    with Workbench.open(location, create=True, user="tester", clock=lambda: FIXED_NOW) as wb:
        wb.init(sample=True)
        if records:
            wb.import_files([write_jsonl(where / "extra.jsonl", list(records))])
    return location


def store_dump(location: Path) -> bytes:
    with Workbench.open(location, user="tester") as wb:
        return dump(wb.store)


def cli(location: Path, *args: str) -> Result:
    """The ``workbench`` command in this process; unexpected exceptions propagate."""
    return CliRunner().invoke(main, ["--store", str(location), "--as", "tester", *args], catch_exceptions=False)


def cli_proc(*args: str | bytes, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The ``workbench`` command in its own process, from this source tree; argv may be bytes."""
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    full.pop("WORKBENCH_ENCODER", None)
    return subprocess.run([sys.executable.encode(), b"-m", b"workbench.cli", *(a if isinstance(a, bytes) else
                          a.encode() for a in args)], capture_output=True, env=full, timeout=120)


def one_error(result: Result, *needles: str) -> str:
    """A refusal: exit status 1 and one plain line on stderr that holds every needle."""
    assert result.exit_code == 1, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def entity(wb: Workbench, name: str) -> str:
    res = wb.resolve(name)
    assert res.outcome == "bound", (name, res)
    return res.entities[0]


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed sample store for commands that only read it."""
    return make_store(tmp_path_factory.mktemp("recall"))


# ---------------------------------------------------------------------- 1. recall on the sample data


def test_a_named_entity_gives_its_record_as_imported(sample: Workbench) -> None:
    bundle = sample.recall("What does Ravi work on?")
    assert bundle.tier == "recorded"
    assert bundle.ids[0] == "m-friend-1"
    assert [e for _, e in bundle.scope] == [entity(sample, "Ravi")]
    top = bundle.memories[0]
    assert top.tier == "recorded" and top.score > 0
    assert top.record.statement == SAMPLE["m-friend-1"]["statement"]
    assert top.record.source.id == SAMPLE["m-friend-1"]["source"]["id"] == "chat-2026-07-22#2"
    assert top.record.source.said_by == SAMPLE["m-friend-1"]["source"]["said_by"]


def test_an_alias_binds_to_its_entity(sample: Workbench) -> None:
    bundle = sample.recall("Which university does my advisor teach at?")
    assert ("my advisor", entity(sample, "Professor Lin")) in bundle.scope


def test_an_alias_brings_the_records_of_its_entity(sample: Workbench) -> None:
    bundle = sample.recall("Which university does my advisor teach at?")
    assert bundle.tier == "recorded", bundle.to_json()
    assert "m-advisor-2" in bundle.ids, bundle.to_json()


def test_paris_hilton_is_not_paris(sample: Workbench) -> None:
    paris, hilton = entity(sample, "Paris"), entity(sample, "Paris Hilton")
    assert "m-paris-1" in sample.recall("Where is Paris?").ids  # Paris's record is recallable ...
    for question in ["Paris Hilton", "Who is Paris Hilton?", "Where does Paris Hilton live?",
                     "What is Paris Hilton famous for?", "What is Paris Hilton's favourite food?"]:
        bundle = sample.recall(question)
        assert "m-paris-1" not in bundle.ids, question  # ... but never for Paris Hilton
        assert paris not in [e for _, e in bundle.scope] and hilton in [e for _, e in bundle.scope], question


def test_a_question_about_a_known_person_with_nothing_recorded_is_no_memory(sample: Workbench) -> None:
    bundle = sample.recall("What is Paris Hilton's favourite food?")
    assert bundle.tier == "no_memory" and bundle.memories == () and bundle.ids == []
    assert bundle.to_json()["records"] == []


def test_a_fuzzy_question_with_no_name_is_a_guess(sample: Workbench) -> None:
    bundle = sample.recall(FUZZY)
    assert bundle.tier == "guessed"
    assert bundle.scope == ()
    assert bundle.memories and {m.tier for m in bundle.memories} == {"guessed"}
    assert bundle.ids[0] == "m-friend-1"


def test_the_text_of_a_guess_says_model_guess(sample_dir: Path) -> None:
    guessed = cli(sample_dir, "recall", FUZZY)
    assert guessed.exit_code == 0 and guessed.stdout.startswith("[guessed]")
    assert "model guess: " + SAMPLE["m-friend-1"]["statement"] in guessed.stdout
    recorded = cli(sample_dir, "recall", "What does Ravi work on?")
    assert recorded.stdout.startswith("[recorded]") and "model guess" not in recorded.stdout


def test_an_unknown_name_gets_suggestions_never_a_binding(sample: Workbench) -> None:
    for question, typo, meant in [("Where does Tsinghua Univeristy stand?", "Tsinghua Univeristy", "Tsinghua University"),
                                  ("What did Dana decide?", "Dana", "Dana Okafor")]:
        bundle = sample.recall(question)
        assert meant in dict(bundle.suggestions).get(typo, ()), bundle.suggestions
        assert entity(sample, meant) not in [e for _, e in bundle.scope]
        assert typo not in [n for n, _ in bundle.scope]
        assert all(m.tier != "recorded" for m in bundle.memories)
        assert bundle.to_json()["suggestions"] == [{"name": n, "did_you_mean": list(c)} for n, c in bundle.suggestions]


def test_a_question_that_is_only_an_unknown_name_gets_suggestions(sample: Workbench) -> None:
    for question, meant in [("Tsinghua Univeristy", "Tsinghua University"), ("Dana", "Dana Okafor")]:
        bundle = sample.recall(question)
        assert meant in dict(bundle.suggestions).get(question, ()), (question, bundle.suggestions)
        assert entity(sample, meant) not in [e for _, e in bundle.scope]


def test_a_decision_is_recalled_by_who_made_it(sample: Workbench) -> None:
    for question in ["What did Dana Okafor decide?", "Which decisions did Dana Okafor make?"]:
        bundle = sample.recall(question)
        assert bundle.tier == "recorded" and bundle.ids[0] == "d-atlas-region-2", bundle.to_json()
        assert "d-atlas-region-1" not in bundle.ids


def test_a_superseded_decision_is_not_recalled_for_a_plain_question(sample: Workbench) -> None:
    for question in ["What data region does Project Atlas use?", "Where does Project Atlas keep customer data?",
                     "Project Atlas data region"]:
        bundle = sample.recall(question)
        assert bundle.tier == "recorded" and "d-atlas-region-2" in bundle.ids, question
        assert "d-atlas-region-1" not in bundle.ids, question


def test_a_question_about_the_past_may_recall_the_superseded_decision(sample: Workbench) -> None:
    bundle = sample.recall("What was the previous data region of Project Atlas?")
    assert "d-atlas-region-1" in bundle.ids  # it is recallable; only plain questions leave it out
    old = next(m for m in bundle.memories if m.record.id == "d-atlas-region-1")
    assert old.record.status is Status.SUPERSEDED and old.record.superseded_by == ("d-atlas-region-2",)


def test_the_json_of_recall(sample_dir: Path) -> None:
    question = "What does Ravi work on?"
    result = cli(sample_dir, "recall", question, "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["tier"] == "recorded" and data["question"] == question
    assert isinstance(data["records"], list) and data["records"]
    for rec in data["records"]:
        assert {"id", "statement", "tier", "score", "source"} <= set(rec)
        assert rec["tier"] == "recorded" and isinstance(rec["score"], float) and rec["score"] > 0
        assert rec["statement"] == SAMPLE[rec["id"]]["statement"]
        assert rec["source"]["id"] == SAMPLE[rec["id"]]["source"]["id"]
    assert data["records"][0]["id"] == "m-friend-1"
    assert {"scope", "suggestions", "budget", "summary"} <= set(data)
    with Workbench.open(sample_dir) as wb:  # the command prints exactly the service's bundle
        assert data == json.loads(json.dumps(wb.recall(question).to_json()))


# ---------------------------------------------------------------------- 2. budget


ZED = [memory(f"m-zed-{i}", f"Zed plays the violin at the {hall} hall.", ["Zed"], [["Zed", "is a", "person"]])
       for i, hall in enumerate(["north", "south", "east", "west", "old", "new", "big", "small", "red", "blue"])]
ZED_Q = "Where does Zed play the violin?"


@pytest.fixture(scope="module")
def zed_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(tmp_path_factory.mktemp("zed"), ZED)


@pytest.fixture
def zed(zed_dir: Path) -> Iterator[Workbench]:
    with Workbench.open(zed_dir, user="tester") as wb:
        yield wb


def test_all_ten_records_match(zed: Workbench) -> None:
    bundle = zed.recall(ZED_Q, limit=10)
    assert sorted(bundle.ids) == sorted(r["id"] for r in ZED) and bundle.tier == "recorded"


@pytest.mark.parametrize("k", [1, 2, 4])
def test_limit_caps_the_records(zed: Workbench, k: int) -> None:
    full = zed.recall(ZED_Q, limit=10).ids
    bundle = zed.recall(ZED_Q, limit=k)
    assert bundle.ids == full[:k]
    assert bundle.to_json()["budget"]["records"] == k


def test_budget_chars_caps_the_sum_of_statements(zed: Workbench) -> None:
    full = zed.recall(ZED_Q, limit=10)
    sizes = [len(m.record.statement) for m in full.memories]
    for chars in (sizes[0], sizes[0] + sizes[1], sizes[0] + sizes[1] + 5, 100):
        bundle = zed.recall(ZED_Q, limit=10, budget_chars=chars)
        used = sum(len(m.record.statement) for m in bundle.memories)
        assert 0 < used <= chars and bundle.chars == used
        assert bundle.ids[0] == full.ids[0]
        for m in full.memories:  # what was left out would not have fit
            assert m.record.id in bundle.ids or used + len(m.record.statement) > chars
    assert zed.recall(ZED_Q, limit=10, budget_chars=sizes[0] + sizes[1]).ids == full.ids[:2]


def test_purposes_set_the_budget(zed: Workbench, sample_dir: Path) -> None:
    counts = {}
    for name, purpose in PURPOSES.items():
        bundle = zed.recall(ZED_Q, purpose=name)
        counts[name] = len(bundle.ids)
        assert len(bundle.ids) == min(purpose.limit, len(ZED))
        assert bundle.chars <= purpose.chars
        assert bundle.to_json()["budget"] == {"purpose": name, "records": purpose.limit, "chars": purpose.chars,
                                              "used_chars": bundle.chars}
    assert counts["decision"] < counts["default"] < counts["writing"]
    with pytest.raises(Invalid, match="purpose"):
        zed.recall(ZED_Q, purpose="gossip")
    assert cli(sample_dir, "recall", ZED_Q, "--purpose", "gossip").exit_code == 2  # a usage error


def test_the_budget_options_of_the_command(zed_dir: Path) -> None:
    def records(*options: str) -> list[dict[str, Any]]:
        result = cli(zed_dir, "recall", ZED_Q, "--json", *options)
        assert result.exit_code == 0, result.stderr
        return list(json.loads(result.stdout)["records"])

    full = [r["id"] for r in records("--limit", "10")]
    assert len(full) == len(ZED)
    assert [r["id"] for r in records("--limit", "3")] == full[:3]
    within = records("--limit", "10", "--budget-chars", "100")
    assert within and sum(len(r["statement"]) for r in within) <= 100 < sum(len(r["statement"]) for r in ZED)
    for name, purpose in PURPOSES.items():
        assert len(records("--purpose", name)) == min(purpose.limit, len(ZED))


@pytest.mark.parametrize(("option", "value"), [("--limit", "0"), ("--limit", "-1"), ("--budget-chars", "0"),
                                               ("--budget-chars", "-5")])
def test_a_budget_below_one_is_refused(sample_dir: Path, option: str, value: str) -> None:
    before = store_dump(sample_dir)
    one_error(cli(sample_dir, "recall", "What does Ravi work on?", option, value), option, value)
    assert store_dump(sample_dir) == before


def test_a_budget_below_one_is_refused_by_the_service(zed: Workbench) -> None:
    before = dump(zed.store)
    with pytest.raises(Invalid, match="--limit"):
        zed.recall(ZED_Q, limit=0)
    with pytest.raises(Invalid, match="--budget-chars"):
        zed.recall(ZED_Q, budget_chars=-1)
    assert dump(zed.store) == before


# ---------------------------------------------------------------------- 3. bad questions


BAD = [("", "empty"), ("   \t\n  ", "empty"), ("a " * 50_000, "characters"), ("é" * 50_000, "characters")]


@pytest.mark.parametrize(("question", "needle"), BAD)
def test_a_bad_question_is_refused_and_changes_nothing(sample_dir: Path, question: str, needle: str) -> None:
    before = store_dump(sample_dir)
    one_error(cli(sample_dir, "recall", question, "--json"), needle)
    assert store_dump(sample_dir) == before


def test_a_bad_question_is_refused_by_the_service(sample: Workbench) -> None:
    before = dump(sample.store)
    for question, needle in BAD:
        with pytest.raises(Invalid, match=needle):
            sample.recall(question)
    assert dump(sample.store) == before


NOT_UTF8 = [b"\xff\xfe", b"What does Ravi\xff work on?"]


@pytest.mark.parametrize("question", NOT_UTF8)
def test_a_question_that_is_not_utf8_changes_nothing(sample_dir: Path, question: bytes) -> None:
    before = store_dump(sample_dir)
    cli_proc("--store", str(sample_dir), "recall", question, "--json")
    assert store_dump(sample_dir) == before


@pytest.mark.parametrize("question", NOT_UTF8)
def test_a_question_that_is_not_utf8_is_a_clear_error(sample_dir: Path, question: bytes) -> None:
    done = cli_proc("--store", str(sample_dir), "recall", question, "--json")
    assert done.returncode == 1, (done.returncode, done.stdout[:300])
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "UTF-8" in lines[0], lines


def test_a_question_with_a_lone_surrogate_is_invalid(sample: Workbench) -> None:
    before = dump(sample.store)
    try:
        for question in ["What does Ravi\udcff work on?", "Ravi \udcff chips", "\ud800 x y"]:
            with pytest.raises(Invalid, match="UTF-8"):
                sample.recall(question)
    finally:
        assert dump(sample.store) == before


# ---------------------------------------------------------------------- 6. same store + same question = same bytes


QUESTIONS = ["What does Ravi work on?", FUZZY, "What did Dana decide?", "What is Paris Hilton's favourite food?"]


def test_two_runs_give_the_same_bytes(tmp_path: Path) -> None:
    location = make_store(tmp_path)
    # Separate processes with different hash seeds; the first builds the index, the second loads it.
    runs = [cli_proc("--store", str(location), "recall", FUZZY, "--json", env={"PYTHONHASHSEED": seed})
            for seed in ("1", "2")]
    assert runs[0].returncode == 0 and runs[0].stdout.startswith(b"{"), runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    first = [cli(location, "recall", q, "--json").stdout_bytes for q in QUESTIONS]
    again = [cli(location, "recall", q, "--json").stdout_bytes for q in QUESTIONS]
    (location / "vectors" / "records" / "index.faiss").unlink()  # a rebuilt index answers the same
    rebuilt = [cli(location, "recall", q, "--json").stdout_bytes for q in QUESTIONS]
    assert first == again == rebuilt
    assert len(set(first)) == len(QUESTIONS)


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workbench, bytes, dict[str, Status]]]:
    location = make_store(tmp_path_factory.mktemp("frozen"))
    with Workbench.open(location, user="tester") as wb:
        wb.recall("Ravi")  # build the indexes once
        statuses = {r.id: r.status for r in wb.records(status=None)}
        yield wb, dump(wb.store), statuses


NAMES = ["Ravi", "Paris", "Paris Hilton", "my advisor", "Project Atlas", "巴黎", "Dana", "Tsinghua Univeristy", "me"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(max_size=200),
                 st.builds(lambda a, n, b: f"{a} {n} {b}", st.text(max_size=40), st.sampled_from(NAMES),
                           st.text(max_size=40))))
def test_recall_on_any_text_is_a_bundle_or_invalid_and_changes_nothing(
        frozen: tuple[Workbench, bytes, dict[str, Status]], question: str) -> None:
    wb, before, statuses = frozen
    try:
        bundle = wb.recall(question)
    except Invalid:
        assert not question.strip() or len(question.strip()) > 10_000
    else:
        assert isinstance(bundle, Bundle)
        assert bundle.tier in {"recorded", "guessed", "no_memory"}
        assert (bundle.tier == "no_memory") == (not bundle.memories)
        for m in bundle.memories:
            assert statuses[m.record.id] in {Status.ACTIVE, Status.SUPERSEDED}
            assert m.record == wb.record(m.record.id)
            assert m.tier in {"recorded", "guessed"} and m.tier == bundle.tier
        assert json.dumps(wb.recall(question).to_json()) == json.dumps(bundle.to_json())
    assert dump(wb.store) == before


# ---------------------------------------------------------------------- 7. guesses never touch the store


def test_a_guess_for_a_thing_known_only_by_its_kind(wb: Workbench, tmp_path: Path) -> None:
    wb.load_sample()
    wb.import_files([write_jsonl(tmp_path / "blaze.jsonl", [
        memory("m-blaze-1", "Blaze is a petrol car.", ["Blaze"], [["Blaze", "is a", "petrol car"]])])])
    common = wb.record("common-sense-v1")
    before = dump(wb.store)
    blaze, needs = entity(wb, "Blaze"), "https://w3id.org/workbench/ns#needs"
    guesses = wb.guess(blaze, needs)
    assert guesses, "no candidates"
    scores = [g.score for g in guesses]
    assert all(0 < s <= 1 for s in scores) and scores == sorted(scores, reverse=True)
    assert guesses[0].value == f"<{entity(wb, 'gasoline')}>"  # what common sense says petrol cars need
    assert len({g.value for g in guesses}) == len(guesses)
    assert wb.guess(blaze, needs) == guesses  # the same store gives the same guesses
    assert dump(wb.store) == before
    assert wb.record("common-sense-v1") == common
