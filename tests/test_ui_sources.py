"""The Sources and history page (streamlit.testing.v1.AppTest) against a real `workbench serve`:
a record's provenance, its supersession chain, its audit trail, and erasure by an admin only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from tests.ui_server import UiServer, open_page, page, ran, start, texts
from workbench.errors import Forbidden, NotFound
from workbench.ui.md import md


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    server = start(tmp_path_factory.mktemp("ui"))
    yield server
    server.stop()


def test_provenance_of_a_record(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(ui, "sources", "vic", monkeypatch)
    ran(at.text_input(key="src_query").input("d-atlas-region-2"))
    assert at.selectbox(key="src_pick").value == "d-atlas-region-2"
    said = texts(at)
    assert "**Project Atlas stores customer data in the EU or UK regions.**" in said
    assert ("- **Source** `issue-ATL-142`: said by **Dana Okafor**, captured 2026-06-01T11:00:00Z, "
            "at `tracker/ATL-142`; visible to everyone") in said
    assert "> After the UK customer signed, approved: EU or UK regions." in said
    assert "- **Import** by root at " in said
    assert "- **Decided by** `dana-okafor`" in said
    assert ":green-badge[active]" in said


def test_extraction_and_confirmation_are_shown(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(ui, "sources", "vic", monkeypatch)
    ran(at.text_input(key="src_query").input("Corolla"))
    said = texts(at)
    assert "- **Extracted by** model:extractor-small (prompt facts-v1)" in said
    assert "- **Confirmed by** me" in said
    triples = at.dataframe[0].value.to_dict("records")
    assert {"subject": "my-car", "relation": "rdf:type", "object": "petrol-car"} in triples


def test_the_supersession_chain(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(ui, "sources", "vic", monkeypatch)
    ran(at.text_input(key="src_query").input("d-atlas-region-2"))
    chain = next(m.value for m in at.markdown if m.value.startswith("1. "))
    first, later = chain.index("`d-atlas-region-1` · superseded"), chain.index("`d-atlas-region-2` · active")
    assert first < chain.index("↓ superseded by `d-atlas-region-2`") < later
    assert "← **this record**" in chain[later:]
    # The superseded record is found too, once all records are asked for (or by its exact id).
    ran(at.text_input(key="src_query").input("EU region only"))
    assert "No record matches “EU region only”. Try all records, not only active." in texts(at)
    ran(at.toggle(key="src_all").set_value(True))
    assert at.selectbox(key="src_pick").value == "d-atlas-region-1"
    assert ":orange-badge[superseded]" in texts(at)


def test_the_audit_trail(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    ui.client("cora").retract("m-pref-1", reason="no longer true")
    at = open_page(ui, "sources", "vic", monkeypatch)
    ran(at.text_input(key="src_query").input("m-pref-1"))  # retracted: found by its exact id
    events = at.dataframe[-1].value.to_dict("records")
    assert [(e["what"], e["who"]) for e in events] == [("import", "root"), ("retraction", "cora")]
    assert events[1]["detail"] == "no longer true"


def test_a_viewer_cannot_see_a_restricted_source(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(ui, "sources", "vic", monkeypatch)
    ran(at.text_input(key="src_query").input("m-family-1"))
    assert "No record matches “m-family-1”" in texts(at)
    assert "Mia" not in texts(at)
    admin = open_page(ui, "sources", "root", monkeypatch)
    ran(admin.text_input(key="src_query").input("m-family-1"))
    assert "visible to group:family" in texts(admin)


@pytest.mark.parametrize("who, role", [("vic", "viewer"), ("cora", "curator")])
def test_only_an_admin_erases_and_others_are_told_whom_to_ask(ui: UiServer, monkeypatch: pytest.MonkeyPatch,
                                                              who: str, role: str) -> None:
    at = open_page(ui, "sources", who, monkeypatch)
    ran(at.text_input(key="src_query").input("m-stove-1"))
    said = texts(at)
    assert f"Only an admin can erase a record. You are signed in as {who} ({role})." in said
    assert 'workbench erase m-stove-1 --reason "..."' in said
    assert "Erase for good" not in [b.label for b in at.button]
    with pytest.raises(Forbidden):  # and the server refuses it anyway
        ui.client(who).erase("m-stove-1", reason="trying")
    assert ui.client(who).record("m-stove-1").id == "m-stove-1"


def test_an_admin_erases_after_confirming(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(ui, "sources", "root", monkeypatch)
    ran(at.text_input(key="src_query").input("m-stove-1"))
    erase = [b.label for b in at.button].index("Erase for good")
    at.text_input(key="erase_reason").input("asked to forget")
    ran(at.button[erase].click())  # not confirmed: nothing happens
    assert any("tick the confirmation" in e.value for e in at.error)
    assert ui.client("root").record("m-stove-1").statement == "The kitchen stove is a stove."
    assert at.text_input(key="erase_reason").value == "asked to forget"

    at.checkbox(key="erase_confirm").check()
    ran(at.button[[b.label for b in at.button].index("Erase for good")].click())
    assert any(s.value.startswith("Erased m-stove-1: only a tombstone stays") for s in at.success)
    with pytest.raises(NotFound):
        ui.client("root").record("m-stove-1")
    said = texts(at)
    assert "`m-stove-1` was erased: only its tombstone and audit trail remain." in said
    assert "✕ `m-stove-1` **erased** (assertion (observation)) by root" in said
    assert "kitchen stove" not in said.lower()
    events = at.dataframe[-1].value.to_dict("records")
    assert [(e["what"], e["who"], e["detail"]) for e in events][-1] == ("erasure", "root", "asked to forget")


def test_an_unknown_record_and_markdown_in_text(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(ui, "sources", "vic", monkeypatch)
    ran(at.text_input(key="src_query").input("no-such-record"))
    assert "No record matches “no-such-record”" in texts(at)
    assert md("*not bold* [x](y)") == "\\*not bold\\* \\[x\\](y)"


def test_a_record_opens_from_the_url(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_URL", ui.url)
    at = AppTest.from_function(page, kwargs={"module": "sources", "token": ui.tokens["vic"]}, default_timeout=60)
    at.query_params["record"] = "m-car-1"  # ?record=m-car-1, as the Ask page links a leaf's source
    ran(at)
    assert at.text_input(key="src_query").value == "m-car-1"
    assert at.selectbox(key="src_pick").value == "m-car-1"


@pytest.mark.parametrize("module", ["sources", "entities"])
def test_a_lost_server_is_said_plainly(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                                       module: str) -> None:
    ui = start(tmp_path_factory.mktemp("ui"))
    try:
        at = open_page(ui, module, "vic", monkeypatch)
    finally:
        ui.stop()
    ran(at)
    assert any("Lost the connection to the Workbench server" in e.value for e in at.error)
