"""The recall evaluation harness: the dev set, its checks, the metrics, the plain recipe it is
compared with, distractor mode, the supersession scenario and the ``eval`` command.

One sample store serves the module (building it per test would triple the run time); every
test only reads it, and one test checks exactly that.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import dump
from workbench.cli import main
from workbench.errors import Invalid
from workbench.recall.baseline import Found, PlainRecipe
from workbench.service import Workbench
from workbench.service import evaluation as ev
from workbench.values.records import Status

GOOD = {"id": "a", "question": "what does Ravi work on?", "expect": ["m-friend-1"]}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workbench]:
    wb = Workbench.open(tmp_path_factory.mktemp("eval") / "memory", create=True, user="me")
    wb.init(sample=True)
    yield wb
    wb.close()


def write_set(path: Path, *lines: object) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in lines),
                    encoding="utf-8")
    return path


# ---------------------------------------------------------------------- the set and its checks


def test_the_dev_set_loads_and_names_only_sample_records(sample: Workbench) -> None:
    qs = ev.load_set("dev")
    assert ev.set_path("dev") == ev.DEV_SET and len(qs) >= 40
    assert len({q.id for q in qs}) == len(qs)
    assert sum(q.no_memory for q in qs) >= 12
    assert {q.purpose for q in qs} == {"default", "writing", "decision"}
    assert any(q.stale for q in qs)
    ev.check_records(sample, qs)  # every expected and stale id is a sample record


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "must be a JSON object"),
        ({"id": "b", "question": "q?"}, "field 'expect' is missing"),
        ({"id": "b", "question": "q?", "expect": "m-friend-1"}, "field 'expect' must be a list of record ids"),
        ({"id": "b", "question": "q?", "expect": ["m-1", "m-1"]}, "field 'expect' lists a record twice"),
        ({"id": "b", "question": "  ", "expect": ["m-friend-1"]}, "field 'question' must be non-empty text"),
        ({"id": 7, "question": "q?", "expect": ["m-friend-1"]}, "field 'id' must be non-empty text"),
        ({"id": "b", "question": "q?", "expect": []}, "field 'expect' names no record"),
        ({"id": "b", "question": "q?", "expect": ["m-1"], "no_memory": True}, "'expect' must be empty when no_memory"),
        ({"id": "b", "question": "q?", "expect": [], "no_memory": "yes"}, "field 'no_memory' must be true or false"),
        ({"id": "b", "question": "q?", "expect": ["m-1"], "purpose": "fun"}, "field 'purpose' must be one of"),
        ({"id": "b", "question": "q?", "expect": ["m-1"], "stale": ["m-1"]}, "field 'stale' lists expected records"),
        ({"id": "b", "question": "q?", "expect": ["m-1"], "colour": "red"}, "unknown field 'colour'"),
        ({"id": "a", "question": "q?", "expect": ["m-1"]}, "field 'id': 'a' is already used on line 1"),
    ],
)
def test_a_malformed_set_is_refused_naming_file_line_and_field(tmp_path: Path, line: object, says: str) -> None:
    path = write_set(tmp_path / "set.jsonl", GOOD, line)
    with pytest.raises(Invalid) as err:
        ev.load_set(path)
    assert str(err.value).startswith(f"{path}:2: ") and says in str(err.value)


def test_an_empty_or_missing_set_and_an_unknown_record_are_refused(tmp_path: Path, sample: Workbench) -> None:
    with pytest.raises(Invalid, match="holds no questions"):
        ev.load_set(write_set(tmp_path / "empty.jsonl", ""))
    with pytest.raises(Invalid, match="no such question set"):
        ev.load_set(tmp_path / "absent.jsonl")
    path = write_set(tmp_path / "set.jsonl", GOOD, {"id": "b", "question": "q?", "expect": ["m-nope"]})
    with pytest.raises(Invalid, match=rf"^{path}:2: field 'expect': no record 'm-nope' in the store"):
        ev.evaluate(sample, ev.load_set(path))


# ---------------------------------------------------------------------- metrics


def found(rid: str, status: Status = Status.ACTIVE, text: str = "ten chars.") -> Found:
    return Found(rid, text, status, 0.5)


def test_metrics_on_a_hand_made_set() -> None:
    """Five questions whose every number is known: computed by hand below."""
    qs = [
        ev.Question("a", "rank two", ("A",)),
        ev.Question("b", "false abstention", ("D",)),
        ev.Question("c", "right silence", (), no_memory=True),
        ev.Question("d", "false memory, and stale", (), no_memory=True),
        ev.Question("e", "hit, and a listed stale one", ("G",), stale=("F",)),
        ev.Question("f", "a superseded record it expects is not stale", ("S",)),
    ]
    answers = {
        "a": ("recorded", [found("B"), found("A"), found("C")]),
        "b": ("no_memory", []),
        "c": ("no_memory", []),
        "d": ("guessed", [found("E", Status.SUPERSEDED)]),
        "e": ("recorded", [found("G"), found("F")]),
        "f": ("recorded", [found("S", Status.SUPERSEDED)] + [found(f"X{i}") for i in range(6)]),
    }
    run = ev.run("stub", qs, lambda q: answers[q.id], frozenset({"C", "X5"}))
    by = {o.id: o for o in run.outcomes}
    assert (by["a"].rank, by["a"].hit, by["a"].unrelated, by["a"].distractors) == (2, True, ("B", "C"), ("C",))
    assert by["b"].abstained and not by["b"].hit and not by["b"].ok
    assert by["c"].abstained and by["c"].ok and by["c"].chars == 0
    assert (by["d"].abstained, by["d"].stale, by["d"].unrelated, by["d"].ok) == (False, ("E",), ("E",), False)
    assert (by["e"].rank, by["e"].stale, by["e"].ok) == (1, ("F",), False)
    assert (by["f"].rank, by["f"].stale, by["f"].chars) == (1, (), 70)
    t = run.totals
    assert (t.questions, t.answerable, t.no_memory) == (6, 4, 2)
    assert (t.hit_at_1, t.hit_at_5, t.hit_at_10) == (0.5, 0.75, 0.75)
    assert (t.abstention, t.false_abstention) == (0.5, 0.25)
    assert (t.stale_returned, t.distractors_returned) == (2, 2)
    assert t.mean_unrelated == round((2 + 0 + 0 + 1 + 1 + 6) / 6, 2)
    assert t.mean_chars == round((30 + 0 + 0 + 10 + 20 + 70) / 6, 1)
    js = run.to_json()
    assert js["totals"]["hit_at_5"] == 0.75 and js["questions"][1]["false_abstention"] is True
    assert js["questions"][2]["correct_abstention"] is True


def test_rates_with_nothing_to_count_are_none() -> None:
    t = ev.run("stub", [ev.Question("c", "q", (), no_memory=True)], lambda q: ("no_memory", [])).totals
    assert (t.hit_at_1, t.false_abstention, t.abstention) == (None, None, 1.0)


def test_the_plain_recipe_ranks_every_record_and_never_abstains(sample: Workbench) -> None:
    enc = sample._indexes.records().ready().encoder
    plain = PlainRecipe(sample.store, enc, k=4)
    assert "common-sense-v1" in plain.ids and "d-atlas-region-1" in plain.ids  # everything, as found
    got = plain.search("my friend Ravi works on chip design")
    assert len(got) == 4 and got[0].id == "m-friend-1"
    assert [f.score for f in got] == sorted((f.score for f in got), reverse=True)
    assert plain.search("zzzz qqqq") != []
    with pytest.raises(Invalid, match="at least 1"):
        PlainRecipe(sample.store, enc, k=0)


def test_both_systems_on_the_sample(tmp_path: Path, sample: Workbench) -> None:
    path = write_set(
        tmp_path / "set.jsonl",
        GOOD,
        {"id": "b", "question": "Where does Project Atlas keep customer data?", "expect": ["d-atlas-region-2"],
         "purpose": "decision", "stale": ["d-atlas-region-1"]},
        {"id": "c", "question": "What is Paris Hilton's favourite food?", "expect": [], "no_memory": True},
    )
    report = ev.evaluate(sample, ev.load_set(path), set_name=str(path), k=10)
    wb, plain = ({o.id: o for o in r.outcomes} for r in (report.workbench, report.plain))
    assert wb["a"].rank == 1 and wb["b"].rank == 1 and not wb["b"].stale and wb["c"].abstained
    assert report.workbench.totals.abstention == 1.0 and report.workbench.totals.false_abstention == 0.0
    assert report.plain.system == "plain top-10" and report.plain.totals.abstention == 0.0
    assert all(len(o.returned) == 10 for o in plain.values())
    assert "d-atlas-region-1" in plain["b"].stale  # the plain recipe knows no supersession
    assert plain["a"].chars == sum(len(sample.record(i).statement) for i in plain["a"].returned)
    assert wb["a"].chars == sum(len(sample.record(i).statement) for i in wb["a"].returned)
    js = report.to_json()
    assert js["k"] == 10 and js["encoder"].startswith("minilm-onnx") and len(js["plain"]["questions"]) == 3


# ---------------------------------------------------------------------- scratch stores


def test_distractors_are_seeded_records_in_the_memory_format() -> None:
    rows, probes = ev.distractors(7)
    assert (rows, probes) == ev.distractors(7) and rows != ev.distractors(8)[0]
    assert len({r["id"] for r in rows}) == len(rows) and all(r["id"].startswith("x-") for r in rows)
    superseded = {r["supersedes"] for r in rows if "supersedes" in r}
    assert superseded and superseded <= {r["id"] for r in rows}
    assert any(r["type"] == "preference" for r in rows) and any("Borealis" in r["statement"] for r in rows)
    assert {s for q in probes for s in q.stale} == superseded and all(q.purpose == "decision" for q in probes)


def test_distractor_mode_keeps_scope_and_the_store_under_test_untouched(sample: Workbench) -> None:
    before = dump(sample.store)
    qs = ev.load_set("dev")
    noisy = ev.with_distractors(sample, qs, set_name="dev", k=10)
    assert dump(sample.store) == before
    assert noisy.records > 40 and noisy.superseded > 0 and noisy.probes > 0
    assert noisy.report.workbench.totals.questions == len(qs) + noisy.probes
    assert noisy.scoping_holds, noisy.leaks
    dev = [o for o in noisy.report.workbench.outcomes if not o.id.startswith("x-")]
    assert [o.id for o in dev if o.stale] == []  # the dev questions get no superseded record, noise or not
    assert [o.id for o in dev if o.tier == "recorded" and o.distractors] == []
    assert noisy.supersession_holds == (noisy.report.workbench.totals.stale_returned == 0)
    plain = noisy.report.plain.totals  # the peer is hit by the same noise: the mode has teeth
    assert plain.stale_returned > 0 and plain.distractors_returned > 0
    assert noisy.to_json()["scoping_holds"] is True


def test_the_supersession_scenario_passes() -> None:
    result = ev.supersession_scenario("me")
    assert result.passed, result.steps
    assert (result.old, result.new) == ("d-atlas-region-2", "d-atlas-region-3")
    assert [s.passed for s in result.steps] == [True] * 4
    assert result.steps[0].got == ("d-atlas-region-2 [issue-ATL-142]",)
    assert "d-atlas-region-2" not in result.steps[2].got
    assert result.to_json()["passed"] is True


# ---------------------------------------------------------------------- the command


@pytest.fixture
def cli_store(tmp_path: Path) -> Path:
    store = tmp_path / "memory"
    result = CliRunner().invoke(main, ["--store", str(store), "--as", "me", "init", "--sample"])
    assert result.exit_code == 0, result.output
    return store


def test_eval_prints_a_table_and_json(cli_store: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["--store", str(cli_store), "--as", "me", "eval", "dev", "--distractors", "--scenario"])
    assert out.exit_code == 0, out.output + out.stderr
    text = out.output
    assert "q01  what does Ravi work on?" in text and "plain top-10" in text
    for label in ("hit@1", "hit@5", "hit@10", "abstained (14 no memory)", "false abstention", "mean context chars"):
        assert label in text
    assert "█" in text and "with distractors" in text and "supersession scenario: PASS" in text
    js = runner.invoke(main, ["--store", str(cli_store), "--as", "me", "eval", "dev", "--k", "5", "--json"])
    assert js.exit_code == 0, js.output + js.stderr
    data = json.loads(js.output)
    assert data["k"] == 5 and data["plain"]["system"] == "plain top-5" and "distractors" not in data
    assert len(data["workbench"]["questions"]) == len(ev.load_set("dev"))
    assert set(data["workbench"]["totals"]) >= {"hit_at_1", "hit_at_5", "hit_at_10", "abstention", "false_abstention",
                                                "stale_returned", "mean_chars"}


def test_eval_refuses_a_bad_set_in_one_line_and_changes_nothing(cli_store: Path, tmp_path: Path) -> None:
    with Workbench.open(cli_store) as wb:
        before = dump(wb.store)
    path = write_set(tmp_path / "bad.jsonl", GOOD, {"id": "b", "question": "q?", "expect": "m-1"})
    out = CliRunner().invoke(main, ["--store", str(cli_store), "eval", str(path)])
    assert out.exit_code == 1
    assert out.stderr.strip() == f"error: {path}:2: field 'expect' must be a list of record ids"
    with Workbench.open(cli_store) as wb:
        assert dump(wb.store) == before
