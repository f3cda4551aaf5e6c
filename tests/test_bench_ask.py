"""``workbench bench ask`` at a tiny size: every contender answers every tier, the answers match the
synthetic worlds' ground truth, the ratios are numbers, the JSON and the Markdown section are
written. No timing assertions."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from click.testing import CliRunner

from benchmarks import synth
from benchmarks.ask import TIERS, floor_query, pick_questions
from workbench.cli import main

NUMBER = r"\d[\d,]*(?:\.\d+)?"
PAIR = rf"{NUMBER} / {NUMBER}"
RATIO = rf"{NUMBER}×"


def test_bench_ask_tiny(tmp_path: Path) -> None:
    md = tmp_path / "benchmarks.md"
    md.write_text("# Benchmarks\n\n## Load\n\nLoad figures.\n\n## Ask\n\nA hand-written reading.\n")
    out = tmp_path / "ask.json"
    args = ["bench", "ask", "--sizes", "1w,2w", "--questions", "3", "--repeat", "2", "--pyshacl-max", "1w",
            "--workdir", str(tmp_path / "work"), "--out", str(out), "--markdown", str(md)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    text = result.stdout

    assert re.search(r"Machine: \d+ cores .* GiB RAM", text)
    assert "Command: `workbench bench ask --sizes 1w,2w --questions 3 --repeat 2 --seed 0 --pyshacl-max 1w`" in text
    for tier in TIERS.values():
        # size | tier | Workbench | answer layer | engine | queries | one query | floor x 2 | three ratios | pySHACL x 3
        assert re.search(rf"^\| 1w \| {tier} \| {PAIR} \| {PAIR} \| {PAIR} \| {NUMBER} / {NUMBER} \| {PAIR} \| {PAIR} "
                         rf"\| {PAIR} \| {RATIO} \| {RATIO} \| {RATIO} \| {PAIR} \| {NUMBER} \| {PAIR} \|$", text, re.M), tier
        assert re.search(rf"^\| 2w \| {tier} \| {PAIR} \| {PAIR} \| {PAIR} \| {NUMBER} / {NUMBER} \| {PAIR} \| {PAIR} "
                         rf"\| {PAIR} \| {RATIO} \| {RATIO} \| {RATIO} \| skipped \| skipped \| skipped \|$", text,
                         re.M), tier
    assert re.search(rf"- 1w: parse {NUMBER} s \+ materialise {NUMBER} s \({NUMBER} → {NUMBER} triples\)", text)
    assert "- 2w: skipped: above --pyshacl-max 1w" in text
    assert "Answers: all 24 questions answered as the worlds' ground truth says by every contender" in text
    assert re.search(rf"- At 2 worlds, derived: Workbench `ask` ÷ floor {RATIO}, answer layer ÷ floor {RATIO} "
                     rf"\(÷ the floor back to back: {RATIO} and {RATIO}\) — goal ≤ 3×: \*\*(met|missed)\*\* / "
                     r"\*\*(met|missed)\*\*", text)
    assert re.search(rf"- The same question as one hand-written query .* ÷ floor {RATIO}: what a compiled answer "
                     r"costs with the least Python", text)
    assert re.search(r"- Flat from 1 worlds to 2 worlds, derived p50: .* \*\*(met|missed)\*\*", text)

    data = json.loads(out.read_text())
    assert [s["size"] for s in data["sizes"]] == ["1w", "2w"]
    assert math.isfinite(data["goals"]["workbench_ratio"]) and data["goals"]["workbench_ratio"] > 0
    for size in data["sizes"]:
        assert set(size["tiers"]) == set(TIERS)
        for tier in size["tiers"].values():
            assert tier["mismatches"] == []
            assert all(n == 3 for n in tier["agree"].values()), tier["agree"]
            for name in ("workbench", "answer", "engine", "one-query", "floor", "floor-alone"):
                c = tier["contenders"][name]
                assert len(c["samples_ms"]) == 3 and 0 < c["p50_ms"] <= c["p99_ms"], name
            for ratio in tier["ratio_p50"].values():
                assert math.isfinite(ratio) and ratio > 0
            # on the embedded store the engine's lone lookups are quad patterns, not queries
            assert tier["queries_per_question"]["workbench_ask"] + tier["patterns_per_question"] >= 1
            assert tier["queries_per_question"]["workbench_ask"] >= tier["queries_per_question"]["engine"]
    one, two = data["sizes"]
    assert one["pyshacl"]["materialise_s"] > 0 and one["pyshacl"]["triples_after"] > one["pyshacl"]["triples_before"]
    assert "pyshacl" in one["tiers"]["derived"]["contenders"] and "pyshacl-focus" in one["tiers"]["derived"]["contenders"]
    assert two["pyshacl"] == {"skipped": "skipped: above --pyshacl-max 1w"}
    assert two["derived_ask_trace"] and all(q["ms"] >= 0 for q in two["derived_ask_trace"])
    assert data["repeat"] == 2

    doc = md.read_text()
    assert doc.count("## Ask") == 1 and "A hand-written reading." in doc and "## Load\n\nLoad figures." in doc
    assert "| 2w | derived |" in doc.split("## Ask")[1]


def test_questions_are_seeded_and_true_to_their_worlds() -> None:
    qs = pick_questions(4, 5, seed=3)
    assert qs == pick_questions(4, 5, seed=3)
    worlds = list(synth.generate(4, seed=3))
    for tier, questions in qs.items():
        assert len(questions) == 5
        for q in questions:
            found = re.search(r":w(\d+)/", q.subject)
            assert found is not None
            world = worlds[int(found[1])]
            own = set(world.thing_facts.get(q.subject, ()))
            if tier == "recorded":
                assert (q.predicate, q.obj) in own and q.expected == {q.obj}
            elif tier == "derived":
                assert (q.predicate, q.obj) in world.entailed_facts(q.subject) - own and q.expected == {q.obj}
            elif tier == "derived-all":
                assert q.obj is None and q.expected == {o for p, o in world.entailed_facts(q.subject) if p == q.predicate}
            else:
                assert (q.subject, q.predicate, q.obj) in world.held_out and q.expected == set()
            assert q.subject_name == world.labels[q.subject]


def test_floor_query_shapes() -> None:
    qs = pick_questions(1, 1, seed=0)
    assert floor_query(qs["derived"][0]).startswith("ASK { {")
    assert floor_query(qs["derived-all"][0]).startswith("SELECT DISTINCT ?o WHERE {")
    assert "rdf-schema#subClassOf>*" in floor_query(qs["recorded"][0])


def test_the_check_pass_forgets_every_keeper(tmp_path: Path) -> None:
    """The check pass counts a question's store calls as if first asked: every keeper of what
    is read per store version is emptied, a subclass's subclass too (names and records seen
    keep through store.caches.Kept), or their reads go uncounted."""
    from benchmarks.ask import forget_kept
    from workbench.service import Workbench
    from workbench.store.caches import PerStore

    wb = Workbench.open(tmp_path, create=True)
    wb.init(sample=True)
    try:
        assert wb.ask("my car", "needs", "gas").tier.value == "derived"
        holding = {k.__name__ for k in PerStore.keepers() if k._kept.get(wb.store) is not None}
        assert {"_Bound", "_Active", "Described", "Walked"} <= holding
        forget_kept()
        assert [k.__name__ for k in PerStore.keepers() if k._kept.get(wb.store) is not None] == []
    finally:
        wb.close()
