"""Recall's calibrated gate (:mod:`workbench.recall.gate`), content coverage, the development
benchmark (data/eval/conversations) and ``workbench eval`` on a benchmark of memories."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from benchmarks import conversations
from workbench.cli import main
from workbench.recall import boosting
from workbench.recall import gate as gates
from workbench.recall.coverage import Lexicon, slip
from workbench.service import Workbench
from workbench.service.evaluation import load_set
from workbench.service.memories import BENCHMARK


def test_the_fit_is_deterministic_and_learns_what_a_line_cannot() -> None:
    """Yes only when both features are high (a rival leads *and* the own record is thin reads
    the same way): an interaction no single weight per feature expresses, learnt from 600 rows
    and right on 600 new ones; the third feature is noise. The same rows give the same trees,
    and the JSON round trip the same probabilities."""
    rng = np.random.default_rng(0)
    x, fresh = rng.uniform(size=(600, 3)), rng.uniform(size=(600, 3))
    truth = lambda v: ((v[:, 0] > 0.5) == (v[:, 1] > 0.5)).astype(float)  # noqa: E731
    y = truth(x)
    one, two = boosting.fit(x, y), boosting.fit(x.copy(), y.copy())
    assert one == two
    assert ((boosting.probabilities(one, fresh) > 0.5) == (truth(fresh) == 1)).mean() > 0.9
    p = boosting.probabilities(one, x)
    back = boosting.Boosted(one.bias, tuple(boosting.Tree.from_json(t.to_json()) for t in one.trees))
    assert [round(back.probability(r), 6) for r in x[:50].tolist()] == [round(v, 6) for v in p[:50]]


def test_a_split_needs_enough_rows_on_each_side_and_distinct_values() -> None:
    x = np.array([[0.0], [0.0], [1.0], [1.0], [1.0], [2.0]])
    y = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    assert boosting.fit(x, y, rounds=1, leaf=2).trees[0].threshold[0] == 0.5  # between 0 and 1, never inside a tie
    assert boosting.fit(x, y, rounds=1, leaf=4).trees[0].feature == (-1,)  # 6 rows cannot leave 4 on each side


def test_reliability_says_how_true_the_stated_chances_are() -> None:
    table, ece = gates.reliability([0.95, 0.95, 0.15, 0.15], [1, 0, 0, 0])
    assert [(r["questions"], r["held"]) for r in table] == [(2, 0.0), (2, 0.5)]
    assert ece == pytest.approx((2 * 0.15 + 2 * 0.45) / 4)


def test_the_shipped_gates_are_this_versions() -> None:
    """Every shipped gate reads this version's features. The default encoder's meets its budget
    with a threshold above nothing; the hashing fallback abstains on more than the budget before
    its gate (its cosine floor), so its gate may stop nothing more."""
    data = json.loads(gates.MODEL.read_text(encoding="utf-8"))
    for g in data["gates"]:
        gate = gates.for_encoder(g["encoder"])
        assert gate is not None and gate.model.trees and 0 <= gate.threshold < 1
        assert all(j < len(gates.FEATURES) for t in gate.model.trees for j in t.feature)
        cv = g["cross_validated"]
        assert cv["memories"] >= 8 and cv["answerable"] >= 700
        assert cv["false_abstention"] <= cv["budget"] or gate.threshold == 0.0, g["encoder"]
    default = next(g for g in data["gates"] if g["encoder"] == "minilm-onnx")
    assert default["threshold"] > 0 and default["cross_validated"]["false_abstention"] <= 0.05


def _rows(n: int, *, answerable: bool, early: bool, memory: str, good: float) -> list[dict[str, object]]:
    rng = np.random.default_rng(len(memory) + n)
    return [{"memory": memory, "kind": "k", "answerable": answerable, "early": early,
             "x": None if early else [float(rng.normal(good, 1.0))], "y": int(answerable and not early)}
            for _ in range(n)]


def test_the_threshold_counts_what_recall_abstained_on_before_the_gate() -> None:
    """The budget is recall's false abstention over every answerable question: those answered
    "no memory" before the gate (an unknown name, nothing in scope) spend it first."""
    from benchmarks import gate as refit

    rows = [r for m in "abcdefgh" for r in _rows(50, answerable=True, early=False, memory=m, good=1.5)
            + _rows(50, answerable=False, early=False, memory=m, good=-1.5)]
    free = refit.refit(rows, "test")["cross_validated"]
    spent = refit.refit(rows + [r for m in "abcdefgh" for r in _rows(2, answerable=True, early=True, memory=m,
                                                                       good=0.0)], "test")
    cv = spent["cross_validated"]
    assert free["false_abstention"] <= 0.05 and cv["false_abstention"] <= 0.05
    assert cv["answerable"] == 416 and cv["rows"] == 800
    assert cv["no_memory"] < free["no_memory"]  # 16 of 416 answerable already lost: less left for the gate


def test_salient_terms_weigh_by_rarity_and_a_slip_still_matches() -> None:
    bags = [{"said", "weather"}, {"said", "puppy", "beagle"}, {"said", "kyoto"}]
    lex = Lexicon({f"r{i}": frozenset(b) for i, b in enumerate(bags)})
    weight = lex.salience({"said", "beagle", "dentist"})
    assert weight["dentist"] > weight["beagle"] > weight["said"]
    held = lex.coverage(weight)
    assert held.shares["r1"] < 2 / 3  # "dentist", the rarest term, is in no record: it costs more than a third
    assert slip("piant", {"paint"}) and slip("harobur", {"harbour"}) and not slip("grandmother", {"grandfather"})


def test_bundles_carry_the_gates_probability(sample: Workbench) -> None:
    scoped = sample.recall("Which university does Professor Lin teach at?")
    assert scoped.probability is not None and 0 <= scoped.probability <= 1
    assert scoped.to_json()["probability"] == round(scoped.probability, 4)
    said = f"chance that these records hold the answer: {scoped.probability:.0%}"
    assert said in scoped.text() and said in scoped._repr_html_()  # the CLI's text and Jupyter's view
    unscoped = sample.recall("Where is Paris?")
    assert unscoped.probability is None and "chance" not in unscoped.text()  # nothing to weigh but the name


def test_the_shipped_benchmark_is_what_the_generator_writes(tmp_path: Path) -> None:
    counts = conversations.write(tmp_path)
    for f in sorted(BENCHMARK.iterdir()):
        assert (tmp_path / f.name).read_bytes() == f.read_bytes(), f.name
    assert counts["memories"] >= 8 and counts["questions"] >= 1000
    kinds = {"single-hop", "multi-hop", "temporal", "wrong-person", "swapped-object", "swapped-activity",
             "unmentioned", "superseded"}
    assert kinds <= set(counts)


def test_every_benchmark_question_names_records_of_its_memory() -> None:
    questions = load_set(BENCHMARK / "questions.jsonl")
    ids = {}
    for f in BENCHMARK.glob("c*.jsonl"):
        rows = [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()]
        assert len(rows) >= 180, f.name  # hundreds of records per memory
        ids[f.stem] = {r["id"] for r in rows}
    for q in questions:
        assert set(q.expect) | set(q.stale) <= ids[q.memory], q.id
        assert q.no_memory == (not q.expect)
    assert sum(q.no_memory for q in questions) / len(questions) > 0.25


def _tiny(tmp_path: Path) -> Path:
    """A benchmark of two memories of a few records each, in the shipped format."""
    def rec(rid: str, who: str, text: str, about: list[str]) -> str:
        return json.dumps({"id": rid, "statement": text, "type": "observation", "about": about,
                           "source": {"id": f"s-{rid}", "said_by": who}}) + "\n"

    (tmp_path / "m1.jsonl").write_text(
        rec("m1-1", "Ravi", "Ravi told Priya that he adopted a beagle puppy.", ["Ravi", "Priya"])
        + rec("m1-2", "Priya", "Priya went to Kyoto and saw a temple.", ["Priya"]), encoding="utf-8")
    (tmp_path / "m2.jsonl").write_text(rec("m2-1", "Mei", "Mei sprained her ankle bouldering.", ["Mei"]),
                                       encoding="utf-8")
    questions = [
        {"id": "q1", "memory": "m1", "kind": "single-hop", "question": "What breed is Ravi's puppy?",
         "expect": ["m1-1"]},
        {"id": "q2", "memory": "m1", "kind": "wrong-person", "question": "What breed is Priya's puppy?",
         "expect": [], "no_memory": True},
        {"id": "q3", "memory": "m2", "kind": "single-hop", "question": "How did Mei hurt her ankle?",
         "expect": ["m2-1"]},
    ]
    (tmp_path / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    (tmp_path / "memories.json").write_text(json.dumps({"distractors": {"m1": "m2"}}), encoding="utf-8")
    return tmp_path


def test_eval_runs_a_benchmark_of_memories_without_a_store(tmp_path: Path) -> None:
    (tmp_path / "bench").mkdir()
    bench = _tiny(tmp_path / "bench")
    run = CliRunner().invoke(main, ["--store", str(tmp_path / "none"), "eval", str(bench), "--json"],
                             catch_exceptions=False)
    assert run.exit_code == 0, run.output
    report = json.loads(run.stdout)
    ours = report["systems"][0]
    assert report["memories"] == 2 and report["records"] == 4  # m1 with m2 beside it, then m2
    assert ours["kinds"]["wrong-person"] == {"questions": 1, "no_memory": 1.0}
    assert ours["kinds"]["single-hop"] == {"questions": 2, "hit_at_5": 1.0}
    assert [s["system"] for s in report["systems"]][1:] == ["plain top-10", f"plain top-10, floor {report['floor']:.2f}"]
    assert "ece" in report["calibration"]
    text = CliRunner().invoke(main, ["--store", str(tmp_path / "none"), "eval", str(bench)]).stdout
    assert "wrong-person (1): no memory" in text and "false abstention" in text and "calibration" in text
    assert not (tmp_path / "none").exists()  # no store was opened or made


def test_a_question_word_with_an_apostrophe_is_not_a_name(sample: Workbench) -> None:
    """ "What's" opens a question; it is no unknown name to say "no memory" about."""
    bundle = sample.recall("What's Ravi working on?")
    assert bundle.tier == "recorded" and "m-friend-1" in bundle.ids, bundle.to_json()
    assert not bundle.suggestions
