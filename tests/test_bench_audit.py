"""The essay's audit at a small size: the rule path's properties, not the timings.

Every fact written for X's kinds comes back derived, with a proof resting on X's own record and
the world's common sense; every held-out fact comes back "no evidence"; nothing is written back;
X's vector is its own, not its kind's.
"""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner

from benchmarks import audit, synth
from benchmarks.ask_results import RELATION_NAMES
from workbench.cli import main as cli
from workbench.service import Workbench


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[audit.AuditRun, Path]:
    workdir = tmp_path_factory.mktemp("audit")
    run = audit.main("small", seed=3, cases=6, multi=2, held_out=12, workdir=workdir, echo=lambda _: None)
    return run, workdir / "workbench"


def test_plan_is_seeded_and_multi_kind_things_span_two_trees() -> None:
    cases, held = audit.plan(12, cases=8, multi=3, held_out=10, seed=5)
    assert (cases, held) == audit.plan(12, cases=8, multi=3, held_out=10, seed=5)
    assert (cases, held) != audit.plan(12, cases=8, multi=3, held_out=10, seed=6)
    worlds = {w.index: w for w in synth.generate(12, seed=5)}
    assert [len(c.kinds) for c in cases] == [1] * 5 + [2] * 3
    for c in cases:
        w = worlds[c.world]
        roots = {(w.ancestors(k) or (k,))[-1] for k in c.kinds}
        assert len(roots) == len(c.kinds), "the two kinds of a multi-kind X come from different trees"
        assert set(c.facts) == {f for k in c.kinds for f in w.kind_facts[k]}
    assert len(set(held)) == 10
    for h in held:
        assert any((h.subject, h.predicate, h.obj) in w.held_out for w in worlds.values())
    with pytest.raises(ValueError, match="multi-kind"):
        audit.plan(3, cases=2, multi=3)


def test_every_written_fact_is_derived_with_reasons(ran: tuple[audit.AuditRun, Path]) -> None:
    run, _ = ran
    row = run.rows["inherit"]
    assert row.asked == sum(len(c.facts) for c in run.cases) > 100
    assert row.wrong == [] and row.rule == row.asked
    assert run.multi["second_facts_rule"] == run.multi["second_facts"] > 0
    assert "[rule inherit-kind v1]" in run.example and "said by me, audit-chat#" in run.example
    assert "signed off by audit-reviewer" in run.rule_version


def test_every_left_out_fact_is_no_evidence(ran: tuple[audit.AuditRun, Path]) -> None:
    run, _ = ran
    row = run.rows["held"]
    assert row.asked == 12 and row.wrong == [] and row.rule == 12


def test_answers_checked_again_from_the_store(ran: tuple[audit.AuditRun, Path]) -> None:
    """Outside the audit's own checks: a derived proof's leaves and a held-out fact's tier."""
    run, store = ran
    case = run.cases[-1]  # of two kinds
    with Workbench.open(store, user="audit") as wb:
        for p, f in (case.first_facts[0], case.facts[-1]):
            answer = wb.ask(case.name, RELATION_NAMES[p], case.labels[f])
            assert answer.tier.value == "derived"
            leaves = [leaf for proof in answer.findings[0].proofs for leaf in proof.leaves()]  # type: ignore[union-attr]
            assert {leaf.record for leaf in leaves} >= {f"audit-x{case.number}"}
            assert all(leaf.source.id for leaf in leaves)
        h = run.held[0]
        assert wb.ask(h.subject_name, RELATION_NAMES[h.predicate], h.object_name).tier.value == "no_evidence"


def test_nothing_is_written_back(ran: tuple[audit.AuditRun, Path]) -> None:
    run, store = ran
    assert run.written_back == 0 and run.quads_before > 0
    with Workbench.open(store, user="audit") as wb:
        for case in run.cases:
            x = ox.NamedNode(wb.resolve(case.name).entities[0])
            said = wb.store.select(f"SELECT ?p ?o WHERE {{ GRAPH ?g {{ {x} ?p ?o }} }}")
            # X's record says what kinds it is; none of the relations the rule concludes was stored.
            predicates = {r["p"].value for r in said}  # type: ignore[union-attr]
            assert synth.RDF_TYPE in predicates
            assert not predicates & {*RELATION_NAMES, "https://w3id.org/workbench/ns#needs"}


def test_the_guesser_does_not_copy_the_kinds_vector(ran: tuple[audit.AuditRun, Path]) -> None:
    run, _ = ran
    assert len(run.cosines) == sum(len(c.kinds) for c in run.cases)
    assert max(run.cosines) < 0.99
    kind = run.rows["kind"]
    assert kind.shortcut == kind.asked, "the shortcut puts X's first kind first, by construction"
    assert run.rows["inherit"].embedding < run.rows["inherit"].rule


def test_the_guesser_ranks_each_things_kinds_first_and_states_low_chances_for_facts(
    ran: tuple[audit.AuditRun, Path],
) -> None:
    run, _ = ran  # trained through Workbench.train_guesses, then asked: the path a user takes
    kind, held = run.rows["kind"], run.rows["held"]
    assert kind.embedding == kind.asked and run.multi["both_top2"] == run.multi["cases"]
    assert run.rows["inherit"].chance / run.rows["inherit"].asked < 0.25  # the worlds' facts are random
    assert held.chance / max(1, held.asked - held.no_guess) < 0.25
    assert run.guesser["model"].startswith("kinds-naive-bayes-v1@")


def test_command_prints_the_essays_table_and_writes_the_report(tmp_path: Path) -> None:
    report = tmp_path / "audit.md"
    report.write_text("# Audit\n\n## Results\n\nThe reading, kept.\n", encoding="utf-8")
    args = ["bench", "audit", "--size", "small", "--cases", "3", "--multi", "1", "--held-out", "4",
            "--markdown", str(report), "--out", str(tmp_path / "a.json")]
    for _ in range(2):  # the second run replaces the first one's table
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
    assert "| Right kind ranked first (3 new things X) |" in result.output
    assert '"No evidence" for all 4' in result.output
    text = report.read_text(encoding="utf-8")
    assert text.startswith("# Audit") and text.count("bench audit: begin") == 1 and "The reading, kept." in text
    assert (tmp_path / "a.json").is_file()
    bad = CliRunner().invoke(cli, ["bench", "audit", "--size", "small", "--cases", "2", "--multi", "3"])
    assert bad.exit_code == 2 and "--multi" in bad.output
