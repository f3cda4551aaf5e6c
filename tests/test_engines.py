"""Workbench on each real SPARQL engine: ``oxigraph serve`` and Virtuoso open source 7 (issue 20).

Besides the store contract (tests/test_store_contract.py) and the newcomer's commands
(tests/test_virtuoso.py), the whole of Workbench on a real server: the same answers as the
embedded store for the sample's questions, by every kind of question; the leak matrix's probes, a
reader outside the family on the server holding the family's records against an embedded store
that never held them; and each difference a backend declares (docs/deployment.md, "Virtuoso").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXED_NOW, OxigraphServer, VirtuosoServer, dump
from tests.test_visibility import EMBEDDED_ONLY, PRIVATE, PROBES, _outcome
from workbench.errors import StoreUnavailable, Unsupported
from workbench.service import Workbench
from workbench.store import EmbeddedStore, RemoteStore, Store


def _bench(store: Store, *, private: bool, folder: Path) -> Workbench:
    """The sample data and users on ``store``, with the family's records if ``private``."""
    wb = Workbench(store, user="root", clock=lambda: FIXED_NOW)
    wb.init(sample=True)
    if private:
        file = folder / "private.jsonl"
        file.write_text("".join(json.dumps(r) + "\n" for r in PRIVATE))
        wb.import_files([file])
    wb.add_user("root", ["admin"])
    wb.add_user("bob", ["viewer"])
    wb.add_user("fam", ["curator"])
    wb.set_groups("fam", join=["group:family"])
    return wb


@pytest.fixture(scope="module", params=["oxigraph", "virtuoso"])
def stores(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[Workbench, Workbench, Workbench]]:
    """The server with the family's records, an embedded store with them, and one without."""
    folder = tmp_path_factory.mktemp(f"{request.param}-bench")
    server: OxigraphServer | VirtuosoServer = request.getfixturevalue(f"{request.param}_server")
    server.clear()
    v = _bench(RemoteStore(server.url), private=True, folder=folder)
    e = _bench(EmbeddedStore(folder / "embedded", create=True), private=True, folder=folder)
    without = _bench(EmbeddedStore(folder / "without", create=True), private=False, folder=folder)
    yield v, e, without
    for wb in (v, e, without):
        wb.close()


QUESTIONS: dict[str, Callable[[Workbench], Any]] = {
    "derived": lambda wb: wb.ask("my car", "needs", "gas"),
    "every value": lambda wb: wb.ask("my car", "needs"),
    "recorded": lambda wb: wb.ask("my car", "is a"),
    "no evidence": lambda wb: wb.ask("Paris", "needs", "gas"),
    "unknown entity": lambda wb: wb.ask("my boat", "needs", "gas"),
    "advisor": lambda wb: wb.ask("my advisor", "teaches at"),
    "count": lambda wb: wb.count("wedding", about="me", year=2026),
    "current": lambda wb: wb.current("me", "weight"),
    "decision": lambda wb: wb.decision("Project Atlas"),
    "history": lambda wb: wb.history("d-atlas-region-2"),
    "records": lambda wb: wb.records(),
    "decisions": lambda wb: wb.records(record_type="decision"),
    "records about me": lambda wb: wb.records(about="me"),
    "resolve": lambda wb: wb.resolve("gas"),
    "entities": lambda wb: wb.entities(),
    "recall": lambda wb: wb.recall("what does Ravi work on?"),
    "recall, no memory": lambda wb: wb.recall("What is Paris Hilton's favourite food?"),
    "stats": lambda wb: {k: v for k, v in wb.stats().items() if k != "backend"},  # "remote" / "embedded"
    "candidates": lambda wb: wb.candidates(status=None),
}


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_the_same_answers_as_the_embedded_store(stores: tuple[Workbench, Workbench, Workbench], name: str) -> None:
    v, e, _ = stores
    assert _outcome(QUESTIONS[name], v) == _outcome(QUESTIONS[name], e)


@pytest.mark.parametrize("name", sorted({**PROBES, **EMBEDDED_ONLY}))
def test_an_outsider_on_the_server_cannot_tell_it_holds_the_family_records(
        stores: tuple[Workbench, Workbench, Workbench], name: str) -> None:
    """The leak oracle across engines: what bob reads from the server holding the family's records
    equals what he reads from an embedded store that never held them."""
    v, _, without = stores
    probe = {**PROBES, **EMBEDDED_ONLY}[name]
    seen_v, seen_without = _outcome(probe, v.seen_by("bob")), _outcome(probe, without.seen_by("bob"))
    if name == "stats":  # which backend it is: the one thing that differs, and no leak
        seen_v = seen_v.replace('"backend": "remote"', '"backend": "embedded"')
    assert seen_v == seen_without


def test_the_family_sees_their_records_on_the_server(stores: tuple[Workbench, Workbench, Workbench]) -> None:
    v, e, _ = stores
    fam = {r.id for r in v.seen_by("fam").records()}
    assert {"p-van-1", "p-wedding-1"} <= fam
    assert fam == {r.id for r in e.seen_by("fam").records()}


def test_a_read_as_of_a_date_is_right_or_refused(stores: tuple[Workbench, Workbench, Workbench]) -> None:
    """Declared difference: Virtuoso 7 keeps superseded records in as-of reads, so there they are
    refused; elsewhere they equal the embedded store's."""
    v, e, _ = stores
    assert e.store.capabilities.as_of_reads
    assert v.store.capabilities.as_of_reads is (v.store.capabilities.engine != "virtuoso")
    for read in (lambda wb: wb.decision("Project Atlas", as_of="2026-03-01"),
                 lambda wb: wb.current("me", "weight", as_of="2026-04-15"),
                 lambda wb: wb.records(as_of="2026-03-01")):
        if v.store.capabilities.as_of_reads:
            assert _outcome(read, v) == _outcome(read, e)
        else:
            with pytest.raises(Unsupported, match="as of a date"):
                read(v)


def test_a_literal_the_engine_cannot_hold_is_refused_and_changes_nothing(
        stores: tuple[Workbench, Workbench, Workbench], tmp_path: Path) -> None:
    """Declared difference: Virtuoso 7 has no xsd:duration; the import fails whole, in plain
    words (Oxigraph keeps durations: tests/test_bad_input.py)."""
    v, _, _ = stores
    if v.store.capabilities.engine != "virtuoso":
        pytest.skip("only Virtuoso lacks xsd:duration; importing it here would change the module's store")
    file = tmp_path / "duration.nq"
    file.write_text('<urn:x:s> <urn:x:p> "P1D"^^<http://www.w3.org/2001/XMLSchema#duration> <urn:x:g> .\n')
    before = dump(v.store)
    with pytest.raises(StoreUnavailable, match="duration"):
        v.import_files([file])
    assert dump(v.store) == before
