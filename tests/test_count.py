"""Counting events: each event once, undated ones never silently placed, zero never proof of none."""

from __future__ import annotations

import datetime as dt
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import FIXED_NOW, queries_sent, shown
from workbench.answers.count import count_events
from workbench.service import Workbench
from workbench.values.answers import Answer, Recorded, Tier

WEDDING = ox.NamedNode("urn:wb:entity:wedding")
ME = ox.NamedNode("urn:wb:entity:me")
Y2026 = (dt.date(2026, 1, 1), dt.date(2026, 12, 31))
Y2025 = (dt.date(2025, 1, 1), dt.date(2025, 12, 31))


def count(
    wb: Workbench,
    period: tuple[dt.date | None, dt.date | None] = (None, None),
    *,
    kind: ox.NamedNode = WEDDING,
    about: ox.NamedNode | None = ME,
    as_of: str | None = None,
) -> Answer:
    return count_events(
        wb.store, kind=kind, about=about, start=period[0], end=period[1], as_of=as_of,
        question="how many weddings?", params=(("kind", "wedding"),),
    )


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def event(rid: str, name: str, *, kind: str = "wedding", day: str | None = None, about: str = "me") -> dict[str, Any]:
    rec: dict[str, Any] = {
        "id": rid, "statement": f"I attended {name}.", "type": "event", "about": [about, name],
        "source": {"id": f"src-{rid}", "said_by": about},
        "triples": [[name, "is a", kind], [about, "attended", name]],
    }
    if day is not None:
        rec["effective_from"] = day
    return rec


def labels(answer: Answer) -> list[str]:
    return [f.label for f in answer.findings]


def test_weddings_in_2026_are_at_least_three_with_marcos_undated(sample: Workbench) -> None:
    a = count(sample, Y2026)
    assert a.tier is Tier.RECORDED and a.kind == "count"
    assert (a.count, a.at_least) == (3, True)
    assert labels(a) == ["Anna and Ben's wedding", "Chen Jing's wedding", "Lea's wedding"]
    assert [f.note for f in a.findings] == ["2026-04-18", "2026-06-06", "2026-09-12"]
    assert [(f.label, f.note) for f in a.undated] == [("Marco's wedding", "undated")]
    assert a.summary == "At least 3 weddings between 2026-01-01 and 2026-12-31; 1 undated one could not be placed."


def test_weddings_in_2025_are_at_least_sam_and_kits(sample: Workbench) -> None:
    a = count(sample, Y2025)
    assert (a.count, a.at_least, labels(a)) == (1, True, ["Sam and Kit's wedding"])
    assert [f.label for f in a.undated] == ["Marco's wedding"]


def test_without_a_period_undated_weddings_count_exactly(sample: Workbench) -> None:
    a = count(sample)
    assert (a.count, a.at_least, a.undated) == (5, False, ())
    assert labels(a)[0] == "Sam and Kit's wedding" and labels(a)[-1] == "Marco's wedding"
    assert a.findings[-1].note == "undated"
    assert a.summary == "5 weddings."


def test_as_of_sees_only_what_had_happened(sample: Workbench) -> None:
    # On 2026-05-01 only Anna and Ben's wedding had happened; Marco's undated record was made later
    # (its record dates from the import), so it is not seen and nothing is left unplaced.
    a = count(sample, Y2026, as_of="2026-05-01")
    assert (a.count, labels(a), a.at_least) == (1, ["Anna and Ben's wedding"], False)
    assert a.as_of == "2026-05-01" and "as of 2026-05-01" in a.summary


def test_each_counted_wedding_carries_its_type_and_tie_with_source(sample: Workbench) -> None:
    first = count(sample, Y2026).findings[0]
    assert first.value == "<urn:wb:entity:anna-and-ben-s-wedding>"
    proofs = [p for p in first.proofs if isinstance(p, Recorded)]
    assert [p.statement.text for p in proofs] == ["Anna and Ben's wedding is a wedding", "me attended Anna and Ben's wedding"]
    assert {(p.record, p.source.id, p.source.said_by) for p in proofs} == {("m-wedding-1", "chat-2026-04-19#1", "me")}


def test_events_outside_the_period_are_neither_counted_nor_listed(sample: Workbench) -> None:
    a = count(sample, (dt.date(2026, 5, 1), dt.date(2026, 6, 30)))
    assert (a.count, labels(a)) == (1, ["Chen Jing's wedding"])
    assert [f.label for f in a.undated] == ["Marco's wedding"]
    listed = {f.value for f in a.findings + a.undated}
    assert "<urn:wb:entity:lea-s-wedding>" not in listed and "<urn:wb:entity:sam-and-kit-s-wedding>" not in listed


def test_two_records_about_one_wedding_count_it_once(sample: Workbench, tmp_path: Path) -> None:
    again = event("m-wedding-1b", "Anna and Ben's wedding", day="2026-04-18")
    sample.import_files([write_jsonl(tmp_path / "again.jsonl", [again])])
    a = count(sample)
    assert a.count == 5
    anna = next(f for f in a.findings if f.label == "Anna and Ben's wedding")
    assert {p.record for p in anna.proofs if isinstance(p, Recorded)} == {"m-wedding-1", "m-wedding-1b"}


def test_a_kind_below_wedding_counts_with_its_subclass_edge(sample: Workbench, tmp_path: Path) -> None:
    ttl = tmp_path / "kinds.ttl"
    ttl.write_text(
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
        "<urn:wb:entity:garden-wedding> skos:prefLabel \"garden wedding\" ; rdfs:subClassOf <urn:wb:entity:wedding> .\n"
        "<urn:wb:entity:tiny-garden-wedding> skos:prefLabel \"tiny garden wedding\" ;"
        " rdfs:subClassOf <urn:wb:entity:garden-wedding> .\n",
        encoding="utf-8",
    )
    sample.import_files([ttl], record_type="common_sense", source="cs-2", said_by="curators")
    sample.import_files([write_jsonl(tmp_path / "garden.jsonl", [
        event("m-garden-1", "Olive's wedding", kind="garden wedding", day="2026-07-04"),
        event("m-garden-2", "Pia's wedding", kind="tiny garden wedding", day="2026-08-01"),
    ])])
    a = count(sample, Y2026)
    assert a.count == 5
    assert labels(a)[2:4] == ["Olive's wedding", "Pia's wedding"]
    pia = [p for p in a.findings[3].proofs if isinstance(p, Recorded)]
    assert [p.statement.text for p in pia] == [
        "Pia's wedding is a tiny garden wedding",
        "tiny garden wedding kind of garden wedding",
        "garden wedding kind of wedding",
        "me attended Pia's wedding",
    ]
    assert [p.source.id for p in pia] == ["src-m-garden-2", "cs-2", "cs-2", "src-m-garden-2"]


def test_retracted_events_are_not_counted(sample: Workbench) -> None:
    sample.retract("m-wedding-3", reason="it was someone else's cousin")
    assert count(sample, Y2026).count == 2


def test_a_record_about_someone_ties_its_event_to_them(sample: Workbench, tmp_path: Path) -> None:
    rec = {
        "id": "m-ravi-wedding", "statement": "Ravi went to a wedding.", "type": "event",
        "about": ["Ravi", "Dev's wedding"], "source": {"id": "chat-ravi", "said_by": "Ravi"},
        "effective_from": "2026-03-01", "triples": [["Dev's wedding", "is a", "wedding"]],
    }
    sample.import_files([write_jsonl(tmp_path / "ravi.jsonl", [rec])])
    a = count(sample, about=ox.NamedNode("urn:wb:entity:ravi"))
    assert (a.count, labels(a)) == (1, ["Dev's wedding"])
    assert [p.statement.predicate for p in a.findings[0].proofs if isinstance(p, Recorded)] == [
        "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", "<https://w3id.org/workbench/ns#about>"]
    assert count(sample).count == 5  # not tied to me


def test_no_recorded_event_is_no_evidence_not_zero_proof(sample: Workbench) -> None:
    a = count(sample, kind=ox.NamedNode("urn:wb:entity:stove"), about=None)  # the stove record is no event
    assert (a.tier, a.count, a.findings, a.undated) == (Tier.NO_EVIDENCE, 0, (), ())
    assert "not proof" in a.summary


def test_only_events_outside_the_period_is_no_evidence(wb: Workbench, tmp_path: Path) -> None:
    wb.import_files([write_jsonl(tmp_path / "e.jsonl", [event("e1", "Old wedding", day="2020-05-05")])])
    a = count(wb, Y2026)
    assert (a.tier, a.count, a.findings, a.undated) == (Tier.NO_EVIDENCE, 0, (), ())
    assert "1 recorded outside this period" in a.summary and "not proof" in a.summary


def test_the_same_question_gives_identical_json(sample: Workbench) -> None:
    first, second = (json.dumps(count(sample, Y2026).to_json(), sort_keys=True) for _ in range(2))
    assert first == second



def test_events_and_their_ties_come_in_one_query(sample: Workbench) -> None:
    """The events of the kinds and what the person's records say about them are one read (a
    round trip on a shared server): names, the kinds below, the events, their labels and sources."""
    count(sample, Y2026)  # caches warm
    with queries_sent(sample.store) as sent:
        a = count(sample, Y2026)
    assert len(labels(a)) >= 3
    assert len([q for q in sent if "wb:recordType wb:Event" in q]) == 1, shown(sent)

DAYS = st.one_of(st.none(), st.dates(dt.date(2024, 1, 1), dt.date(2027, 12, 31)))
TAGS = itertools.count()


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workbench, Path]]:
    """One embedded store for every example; each example writes its own kind and person."""
    wb = Workbench.open(tmp_path_factory.mktemp("count") / "s", create=True, user="t", clock=lambda: FIXED_NOW)
    wb.init()
    yield wb, tmp_path_factory.mktemp("count-files")
    wb.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(days=st.lists(DAYS, max_size=8), start=DAYS, end=DAYS)
def test_count_matches_brute_force(
    bench: tuple[Workbench, Path], days: list[dt.date | None], start: dt.date | None, end: dt.date | None
) -> None:
    wb, files = bench
    tag = f"k{next(TAGS)}"
    records = [
        event(f"{tag}-{i}", f"{tag} event {i}", kind=f"{tag} kind", about=f"{tag} person",
              day=d.isoformat() if d else None)
        for i, d in enumerate(days)
    ]
    if records:
        wb.import_files([write_jsonl(files / f"{tag}.jsonl", records)])
    a = count_events(
        wb.store, kind=ox.NamedNode(f"urn:wb:entity:{tag}-kind"), about=ox.NamedNode(f"urn:wb:entity:{tag}-person"),
        start=start, end=end, as_of=None, question="q", params=(),
    )
    bounded = start is not None or end is not None
    inside = [d for d in days if d is not None and (start is None or d >= start) and (end is None or d <= end)]
    undated = sum(d is None for d in days)
    assert a.count == len(inside) + (0 if bounded else undated)
    assert len(a.undated) == (undated if bounded else 0)
    assert a.at_least == (bounded and undated > 0)
    assert a.tier is (Tier.RECORDED if a.count or a.undated else Tier.NO_EVIDENCE)
