"""Erasure is complete: the record and every copy the store manages go; a content-free tombstone stays."""

from __future__ import annotations

import pytest

from tests.conftest import dump
from workbench.errors import Conflict, Invalid, NotFound
from workbench.service import Workbench
from workbench.values.records import Tombstone


def test_erase_removes_every_copy_and_leaves_a_tombstone(sample: Workbench, tmp_path) -> None:  # type: ignore[no-untyped-def]
    rec = sample.record("m-family-1")
    secrets = [rec.statement, rec.source.text or "", rec.source.id]
    stone = sample.erase("m-family-1", reason="Mia asked us to forget it")
    everything = dump(sample.store).decode()
    for secret in secrets:
        assert secret not in everything
    assert stone.kind == "assertion (observation)"
    assert "m-family-1" not in [r.id for r in sample.records(status=None)]
    with pytest.raises(NotFound, match="was erased"):
        sample.record("m-family-1")
    chain = sample.history("m-family-1")
    assert chain == [
        Tombstone(
            iri=stone.iri,
            kind=stone.kind,
            erased_by="tester",
            erased_at=stone.erased_at,
            reason="Mia asked us to forget it",
        )
    ]
    # Exports carry no trace either.
    out = tmp_path / "after.trig"
    sample.export(out)
    for secret in secrets:
        assert secret not in out.read_text(encoding="utf-8")


def test_erased_id_cannot_come_back(sample: Workbench) -> None:
    sample.erase("m-family-1", reason="asked")
    before = dump(sample.store)
    with pytest.raises(Conflict, match="erased"):
        sample.load_sample()
    assert dump(sample.store) == before


def test_a_shared_source_outlives_one_of_its_records(sample: Workbench) -> None:
    sample.erase("d-atlas-region-1", reason="test")
    newer = sample.record("d-atlas-region-2")
    assert newer.supersedes == ("d-atlas-region-1",)  # the link stays, pointing at a tombstone
    kinds = [type(c).__name__ for c in sample.history("d-atlas-region-2")]
    assert sorted(kinds) == ["Record", "Tombstone"]


def test_erasing_common_sense_removes_the_names_it_gave(sample: Workbench) -> None:
    assert sample.resolve("petrol car").outcome == "bound"
    sample.erase("common-sense-v1", reason="replacing the common-sense pack")
    assert sample.resolve("petrol car").outcome == "unknown"


def test_erase_needs_a_reason_and_a_record(sample: Workbench) -> None:
    before = dump(sample.store)
    with pytest.raises(Invalid):
        sample.erase("m-car-1", reason="  ")
    with pytest.raises(NotFound):
        sample.erase("no-such", reason="x")
    assert dump(sample.store) == before
