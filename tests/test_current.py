"""Current state: the latest value the read sees, one thing with a history, conflicts shown not settled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from workbench.answers.current import current_state
from workbench.service import Workbench
from workbench.values.answers import Answer, Recorded, Tier
from workbench.vocab import WB

ME = ox.NamedNode("urn:wb:entity:me")


def current(wb: Workbench, *, relation: ox.NamedNode = WB.weight, as_of: str | None = None) -> Answer:
    return current_state(
        wb.store, subject=ME, relation=relation, as_of=as_of, question="what do I weigh?", params=(("relation", "weight"),)
    )


def weigh(path: Path, *rows: tuple[str, str, float] | tuple[str, str, float, str]) -> Path:
    """A JSONL file of weight states: (id, effective_from, kg[, id it supersedes])."""
    records: list[dict[str, Any]] = []
    for rid, day, kg, *old in rows:
        rec: dict[str, Any] = {
            "id": rid, "statement": f"My weight is {kg} kg.", "type": "state", "about": ["me"],
            "source": {"id": f"health-log#{rid}", "said_by": "me"}, "effective_from": day,
            "triples": [["me", "weight", kg]],
        }
        if old:
            rec["supersedes"] = old[0]
        records.append(rec)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def history(a: Answer) -> list[tuple[str, str]]:
    return [(f.label, f.note) for f in a.history]


def test_current_weight_is_the_latest_with_its_history(sample: Workbench) -> None:
    a = current(sample)
    assert (a.tier, a.kind, a.values) == (Tier.RECORDED, "current", ["71.2"])
    assert a.findings[0].value == '"71.2"^^<http://www.w3.org/2001/XMLSchema#decimal>'
    assert history(a) == [("72.5", "2026-03-03"), ("71.8", "2026-04-10"), ("71.2", "2026-05-20")]
    assert a.summary == "me weight: 71.2 (since 2026-05-20; 3 values logged since 2026-03-03)"
    (proof,) = a.findings[0].proofs
    assert isinstance(proof, Recorded)
    assert (proof.record, proof.source.id, proof.statement.text) == ("m-weight-3", "health-log#2026-05-20", "me weight 71.2")
    assert a.count is None  # repeated updates are one thing, not several


def test_as_of_gives_the_value_then_and_hides_later_ones(sample: Workbench) -> None:
    a = current(sample, as_of="2026-04-15")
    assert (a.tier, a.values, a.as_of) == (Tier.RECORDED, ["71.8"], "2026-04-15")
    assert history(a) == [("72.5", "2026-03-03"), ("71.8", "2026-04-10")]


def test_nothing_recorded_is_no_evidence(sample: Workbench, wb: Workbench) -> None:
    for a in (current(sample, relation=WB.teachesAt), current(sample, as_of="2026-01-01")):
        assert (a.tier, a.findings, a.history) == (Tier.NO_EVIDENCE, (), ())
        assert "not proof" in a.summary


def test_same_day_disagreement_is_conflicting_with_both_shown(sample: Workbench, tmp_path: Path) -> None:
    sample.import_files([weigh(tmp_path / "w.jsonl", ("m-w-a", "2026-06-01", 70.9), ("m-w-b", "2026-06-01", 71.1))])
    a = current(sample)
    assert a.tier is Tier.CONFLICTING
    assert a.values == ["70.9", "71.1"]
    assert [[p.record for p in f.proofs if isinstance(p, Recorded)] for f in a.findings] == [["m-w-a"], ["m-w-b"]]
    assert "70.9 (m-w-a) vs 71.1 (m-w-b)" in a.summary and "2026-06-01" in a.summary
    assert len(a.history) == 5


def test_the_same_value_logged_again_collapses_to_one(sample: Workbench, tmp_path: Path) -> None:
    sample.import_files([weigh(tmp_path / "w.jsonl", ("m-w-a", "2026-06-01", 70.5), ("m-w-b", "2026-06-09", 70.5))])
    a = current(sample)
    assert (a.tier, a.values) == (Tier.RECORDED, ["70.5"])
    assert a.summary == "me weight: 70.5 (since 2026-06-01; 5 values logged since 2026-03-03)"
    assert [p.record for p in a.findings[0].proofs if isinstance(p, Recorded)] == ["m-w-b"]


def test_equal_numbers_of_different_types_are_no_conflict(sample: Workbench, tmp_path: Path) -> None:
    sample.import_files([weigh(tmp_path / "w.jsonl", ("m-w-a", "2026-06-01", 71), ("m-w-b", "2026-06-01", 71.0))])
    a = current(sample)  # stored as "71"^^xsd:integer and "71"^^xsd:decimal: one weight
    assert (a.tier, a.values) == (Tier.RECORDED, ["71"])
    assert [p.record for p in a.findings[0].proofs if isinstance(p, Recorded)] == ["m-w-a", "m-w-b"]


def test_a_correction_wins_and_the_corrected_value_stays_in_history(sample: Workbench, tmp_path: Path) -> None:
    sample.import_files([weigh(tmp_path / "w.jsonl", ("m-weight-3b", "2026-05-20", 71.4, "m-weight-3"))])
    a = current(sample)
    assert (a.tier, a.values) == (Tier.RECORDED, ["71.4"])  # the superseded 71.2 of the same day is no rival
    assert history(a)[-2:] == [("71.2", "2026-05-20 (superseded)"), ("71.4", "2026-05-20")]


def test_retracted_values_leave_the_history(sample: Workbench) -> None:
    sample.retract("m-weight-2", reason="the scale was broken")
    assert history(current(sample)) == [("72.5", "2026-03-03"), ("71.2", "2026-05-20")]


def test_a_state_logged_today_counts_from_when_it_was_recorded(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    path.write_text(json.dumps({
        "id": "m-w", "statement": "My weight is 80 kg.", "type": "state", "about": ["me"],
        "source": {"id": "s", "said_by": "me"}, "triples": [["me", "weight", 80]],
    }) + "\n", encoding="utf-8")
    wb.import_files([path])
    a = current(wb)
    assert (a.tier, a.values, history(a)) == (Tier.RECORDED, ["80"], [("80", "2026-11-30T12:00:00Z")])


def test_the_same_question_gives_identical_json(sample: Workbench, tmp_path: Path) -> None:
    sample.import_files([weigh(tmp_path / "w.jsonl", ("m-w-a", "2026-06-01", 70.9), ("m-w-b", "2026-06-01", 71.1))])
    first, second = (json.dumps(current(sample).to_json(), sort_keys=True) for _ in range(2))
    assert first == second


def test_an_undated_state_applies_from_when_its_source_said_it(wb: Workbench, tmp_path: Path) -> None:
    """No effective_from: the value counts from the source's captured_at, as every as-of read does
    (records.applies_from), not from the import, which is later."""
    rec = {
        "id": "m-w-undated", "statement": "My weight is 69.9 kg.", "type": "state", "about": ["me"],
        "source": {"id": "scale-2026-02-01", "said_by": "me", "captured_at": "2026-02-01T07:00:00Z"},
        "triples": [["me", "weight", 69.9]],
    }
    path = tmp_path / "u.jsonl"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    wb.import_files([path])
    a = current(wb, as_of="2026-03-01")
    assert (a.tier, a.values) == (Tier.RECORDED, ["69.9"])
    assert history(a) == [("69.9", "2026-02-01T07:00:00Z")]
    assert current(wb, as_of="2026-01-31").tier is Tier.NO_EVIDENCE
