"""Time is explicit: corrections supersede, history is never rewritten, as-of reads see the past."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import dump
from workbench.errors import Conflict, Invalid, NotFound
from workbench.service import Workbench
from workbench.values.records import Record, Status


def _write_record(path: Path, record: dict[str, object]) -> None:
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")


def _ids(records: list[Record]) -> list[str]:
    return [r.id for r in records]


def test_normal_reads_see_the_active_decision(sample: Workbench) -> None:
    decisions = sample.records(record_type="decision")
    assert _ids(decisions) == ["d-atlas-region-2"]
    assert decisions[0].supersedes == ("d-atlas-region-1",)
    assert decisions[0].decided_by == "urn:wb:entity:dana-okafor"


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        ("2026-01-01", []),
        ("2026-02-10", ["d-atlas-region-1"]),
        ("2026-05-31", ["d-atlas-region-1"]),
        ("2026-06-01", ["d-atlas-region-2"]),
        ("2026-11-30", ["d-atlas-region-2"]),
    ],
)
def test_as_of_reads_what_was_effective(sample: Workbench, day: str, expected: list[str]) -> None:
    assert _ids(sample.records(record_type="decision", as_of=day)) == expected


def test_the_superseded_record_keeps_its_history(sample: Workbench) -> None:
    old = sample.record("d-atlas-region-1")
    assert old.status is Status.SUPERSEDED
    assert old.superseded_by == ("d-atlas-region-2",)
    assert old.source.text == "Decision: customer data stays in the EU region only."
    chain = sample.history("d-atlas-region-2")
    assert [c.id for c in chain if isinstance(c, Record)] == ["d-atlas-region-1", "d-atlas-region-2"]


def test_weight_logged_three_times_is_three_dated_states(sample: Workbench) -> None:
    states = sample.records(record_type="state", about="me")
    assert [(r.effective_from, r.triples[0][2]) for r in states] == [
        ("2026-03-03", '"72.5"^^<http://www.w3.org/2001/XMLSchema#decimal>'),
        ("2026-04-10", '"71.8"^^<http://www.w3.org/2001/XMLSchema#decimal>'),
        ("2026-05-20", '"71.2"^^<http://www.w3.org/2001/XMLSchema#decimal>'),
    ]
    assert _ids(sample.records(record_type="state", as_of="2026-03-31")) == ["m-weight-1"]


def test_supersede_command_links_records_and_attributes_the_act(sample: Workbench, tmp_path: Path) -> None:
    fix = tmp_path / "fix.jsonl"
    _write_record(fix, {
        "id": "m-pref-2",
        "statement": "Use British English in my writing.",
        "type": "preference",
        "about": ["me"],
        "source": {"id": "chat-2026-11-01#1", "said_by": "me"},
    })
    sample.import_files([fix])
    sample.supersede("m-pref-1", "m-pref-2", reason="I moved to London")
    assert _ids(sample.records(record_type="preference")) == ["m-pref-2"]
    assert sample.record("m-pref-1").status is Status.SUPERSEDED
    rows = sample.store.select(
        "PREFIX wb: <https://w3id.org/workbench/ns#> PREFIX prov: <http://www.w3.org/ns/prov#> "
        "SELECT ?who ?why WHERE { GRAPH ?a { ?a a wb:Supersession ; "  # the act, a graph of its own
        "prov:wasAssociatedWith ?who ; wb:reason ?why } }"
    )
    assert [(r["who"].value, r["why"].value) for r in rows] == [("urn:wb:agent:tester", "I moved to London")]  # type: ignore[union-attr]
    before = dump(sample.store)
    with pytest.raises(Conflict):
        sample.supersede("m-pref-2", "m-pref-1", reason="cycle")  # m-pref-1 is no longer active
    with pytest.raises(Invalid):
        sample.supersede("m-pref-2", "m-pref-2", reason="self")
    with pytest.raises(NotFound):
        sample.supersede("m-pref-2", "no-such-record", reason="x")
    assert dump(sample.store) == before


def test_retracted_records_leave_normal_reads_but_not_the_audit(sample: Workbench) -> None:
    sample.retract("m-friend-1", reason="Ravi asked")
    assert "m-friend-1" not in _ids(sample.records())
    assert "m-friend-1" not in _ids(sample.records(as_of="2026-11-30"))
    assert sample.record("m-friend-1").status is Status.RETRACTED


def test_superseding_a_superseded_record_in_an_import_is_refused(sample: Workbench, tmp_path: Path) -> None:
    bad = tmp_path / "late.jsonl"
    _write_record(bad, {
        "id": "d-late",
        "statement": "Another region rule.",
        "type": "decision",
        "about": ["Project Atlas"],
        "supersedes": "d-atlas-region-1",
        "source": {"id": "late", "said_by": "me"},
    })
    before = dump(sample.store)
    with pytest.raises(Conflict, match="late.jsonl:1"):
        sample.import_files([bad])
    assert dump(sample.store) == before


def test_as_of_needs_a_date(sample: Workbench) -> None:
    with pytest.raises(Invalid, match="ISO date"):
        sample.records(as_of="last tuesday")


def test_a_record_without_effective_from_applies_from_when_its_source_said_it(sample: Workbench) -> None:
    # m-car-1 has no effective_from; its source was captured 2026-01-04, long before the import.
    assert "m-car-1" not in _ids(sample.records(as_of="2026-01-03"))
    assert "m-car-1" in _ids(sample.records(as_of="2026-01-04"))
    # A source with no captured_at (the admitted common sense) falls back to when it was recorded.
    assert "common-sense-v1" not in _ids(sample.records(as_of="2026-11-29"))
    assert "common-sense-v1" in _ids(sample.records(as_of="2026-11-30"))
