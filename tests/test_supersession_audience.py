"""A correction seen by fewer readers than the record it corrects (issue 20, part 1).

A record's own status is in its source's graph, seen by everyone who sees the record. When its
successor is narrower (a private correction of a public record), some of them may not see the
successor: the older record's own status stays active, and the successor's link
(``wb:supersedes``, in the successor's source's graph) makes it superseded to whoever sees that
link. A record may not name, in its metadata, a record or source narrower than itself: its
readers would learn that the other exists. Both are checked here on the store itself, where the
audience filter of a restricted read will act, and through the readers' views.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import FIXED_NOW, dump
from workbench.access.audience import covers
from workbench.errors import Conflict
from workbench.ids import record_iri, source_iri
from workbench.records import layout
from workbench.service import Workbench
from workbench.store import MemoryStore
from workbench.values.records import Status
from workbench.vocab import PREFIXES, WB

AUDIENCES = [[], ["alice"], ["group:family"], ["alice", "group:family"], ["bob"]]
READERS = {"alice": [], "bob": [], "fay": ["group:family"], "olga": []}


def _line(rid: str, audience: list[str], colour: str, **more: object) -> dict[str, object]:
    return {"id": rid, "statement": f"The van is {colour}.", "type": "observation", "visible_to": audience,
            "source": {"id": f"src-{rid}", "said_by": "carol"}, "triples": [["the van", "is a", f"{colour} van"]],
            **more}


def _world(tmp: Path, lines: list[dict[str, object]]) -> Workbench:
    wb = Workbench(MemoryStore(), user="root", clock=lambda: FIXED_NOW)
    wb.init()
    wb.add_user("root", ["admin"])
    for name, groups in READERS.items():
        wb.add_user(name, ["curator"], groups=groups)
    path = tmp / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    wb.import_files([path])
    return wb


def _own_status(wb: Workbench, rid: str) -> str:
    rows = wb.store.select(PREFIXES + f"SELECT ?s WHERE {{ GRAPH ?m {{ {record_iri(rid)} wb:status ?s }} }}")
    return rows[0]["s"].value.rsplit("#", 1)[1]  # type: ignore[union-attr]


@pytest.mark.parametrize("how", ["supersede", "import"])
def test_a_private_correction_leaves_the_public_record_active_for_others(tmp_path: Path, how: str) -> None:
    lines = [_line("pub", [], "white")]
    if how == "import":
        lines.append(_line("fam", ["group:family"], "blue", supersedes="pub"))
    wb = _world(tmp_path, lines if how == "import" else [*lines, _line("fam", ["group:family"], "blue")])
    if how == "supersede":
        wb.supersede("pub", "fam", reason="the family repainted it")
    assert _own_status(wb, "pub") == "Active"  # its own graph is everyone's
    for who, sees in (("root", True), ("fay", True), ("olga", False), ("bob", False)):
        reader = wb.seen_by(who)
        status = reader.record("pub").status
        assert status == (Status.SUPERSEDED if sees else Status.ACTIVE), who
        active = [r.id for r in reader.records()]
        assert ("pub" in active) != sees and ("fam" in active) == sees, who
        assert [r.id for r in reader.records(status=Status.SUPERSEDED)] == (["pub"] if sees else []), who
        counts = reader.stats()["by_status"]
        assert counts.get("superseded", 0) == (1 if sees else 0), who
        answer = reader.ask("the van", "is a", "blue van" if sees else "white van")
        assert answer.tier.value == "recorded", who
        if sees:  # and the older value is no longer on record for them
            assert reader.ask("the van", "is a", "white van").tier.value != "recorded", who
    # the family can still not correct the public record twice; an outsider can, unaware of it
    with pytest.raises(Conflict, match="not active"):
        wb.seen_by("fay").supersede("pub", "fam", reason="again")


@pytest.mark.parametrize("how", ["supersede", "import", "supported_by"])
def test_a_record_cannot_name_a_narrower_one(tmp_path: Path, how: str) -> None:
    wb = _world(tmp_path, [_line("fam", ["group:family"], "blue"), _line("pub", [], "white")])
    before = dump(wb.store)
    path = tmp_path / "more.jsonl"
    with pytest.raises(Conflict, match="visible to everyone.*cannot name.*visible to group:family.*would learn it exists"):
        if how == "supersede":
            wb.supersede("fam", "pub", reason="the public one is newer")
        else:
            more = {"supersedes": "fam"} if how == "import" else {"supported_by": ["src-fam"]}
            path.write_text(json.dumps(_line("pub-2", [], "green", **more)) + "\n")
            wb.import_files([path])
    assert dump(wb.store) == before
    # within the audience it is fine: a record for the family may name a public one
    path.write_text(json.dumps(_line("fam-2", ["group:family", "alice"], "red", supported_by=["src-pub"])) + "\n")
    wb.import_files([path])
    assert source_iri("src-pub").value in str(wb.store.select(
        PREFIXES + f"SELECT ?s WHERE {{ GRAPH ?g {{ {record_iri('fam-2')} wb:supportedBy ?s }} }}"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(old=st.integers(0, len(AUDIENCES) - 1), new=st.integers(0, len(AUDIENCES) - 1), by_import=st.booleans())
def test_whoever_sees_the_successor_sees_the_record_superseded(tmp_path_factory: pytest.TempPathFactory,
                                                                 old: int, new: int, by_import: bool) -> None:
    tmp = tmp_path_factory.mktemp("supersession")
    older, newer = AUDIENCES[old], AUDIENCES[new]
    lines = [_line("a", older, "white"), _line("b", newer, "blue", **({"supersedes": "a"} if by_import else {}))]
    if not covers(older, newer):
        with pytest.raises(Conflict):
            wb = _world(tmp, lines)
            if not by_import:
                wb.supersede("a", "b", reason="newer")
        return
    wb = _world(tmp, lines)
    if not by_import:
        wb.supersede("a", "b", reason="newer")
    for name, groups in READERS.items():
        agents = {name, *groups}
        sees_a, sees_b = (not aud or bool(agents & set(aud)) for aud in (older, newer))
        reader = wb.seen_by(name)
        if not sees_a:
            assert "a" not in [r.id for r in reader.records(status=None)]
            continue
        assert reader.record("a").status == (Status.SUPERSEDED if sees_b else Status.ACTIVE), name
    # the record's own status says superseded exactly when everyone who sees it sees its successor
    assert (_own_status(wb, "a") == "Superseded") == covers(newer, older)


def test_an_older_stores_private_correction_no_longer_says_superseded_to_everyone(tmp_path: Path) -> None:
    """Before 2026-12-06 a narrower correction stored "superseded" on the public record (a view
    set it back for outsiders); opening such a store sets it back on the store itself, and leaves
    a correction everyone who sees the older record sees alone."""
    wb = _world(tmp_path, [_line("pub", [], "white"), _line("fam", ["group:family"], "blue", supersedes="pub"),
                           _line("old", [], "red"), _line("new", [], "green", supersedes="old")])
    before = dump(wb.store)
    assert (_own_status(wb, "pub"), _own_status(wb, "old")) == ("Active", "Superseded")
    home = wb.store.select(PREFIXES + f"SELECT ?m WHERE {{ GRAPH ?m {{ {record_iri('pub')} wb:status ?s }} }}")[0]["m"]
    wb.store.apply(insert=[ox.Quad(record_iri("pub"), WB.status, WB.Superseded, home)],  # type: ignore[arg-type]
                   delete=[ox.Quad(record_iri("pub"), WB.status, WB.Active, home)])  # type: ignore[arg-type]
    wb.store.update(PREFIXES + "INSERT { GRAPH <urn:wb:graph:meta> { ?run a wb:Import } } WHERE { "
                    "GRAPH ?g { ?run a wb:Import } }")  # and something else of the older layout
    assert layout.outdated(wb.store)
    assert layout.migrate(wb.store)
    assert (_own_status(wb, "pub"), _own_status(wb, "old")) == ("Active", "Superseded")
    assert dump(wb.store) == before
