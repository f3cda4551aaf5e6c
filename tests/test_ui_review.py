"""The Review queue page, with ``streamlit.testing.v1.AppTest``, against a real `workbench serve`.

The store holds the sample data, four users (root admin, cora curator, rita reviewer, vic viewer)
and queued candidates; each test drives the page as a person would (forms, buttons, selections)
and checks what the server then holds, through the client.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.ui_server import UiServer, start


def _cand(cid: str, statement: str, about: list[str], span: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": cid, "statement": statement, "type": "observation", "about": about,
                           "source": {"id": f"chat-{cid}", "said_by": "me", "text": f"Chat: {statement}"}}
    if span:
        out["span"] = span
    return out


CANDIDATES = [
    _cand("c-approve", "Ravi likes tea.", ["Ravi"], span="Ravi likes tea"),
    _cand("c-edit", "Ravi likes coffe.", ["Ravi"]),
    _cand("c-reject", "Ravi owns a spaceship.", ["Ravi"]),
    _cand("c-bulk-1", "Ravi likes rain.", ["Ravi"]),
    _cand("c-bulk-2", "Ravi likes snow.", ["Ravi"]),
    _cand("c-dup", "Sparky is our electric car.", ["Sparky"]),
    _cand("c-merge-a", "Ravi plays chess.", ["Ravi"]),
    _cand("c-merge-b", "Ravi plays chess on Sundays.", ["Ravi"]),
    _cand("c-conflict", "Ravi likes jazz.", ["Ravi"]),
    _cand("c-new", "Zed Quill visited Ravi.", ["Zed Quill", "Ravi"]),
    _cand("c-many-1", "Ravi reads poems.", ["Ravi"]),
    _cand("c-many-2", "Ravi writes poems.", ["Ravi"]),
    _cand("c-bind", "Rav likes walks.", ["Rav"]),
]


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    server = start(tmp_path_factory.mktemp("ui-review"), CANDIDATES)
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _server_url(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app finds the server by $WORKBENCH_URL, as `workbench up` tells it."""
    monkeypatch.setenv("WORKBENCH_URL", ui.url)


def _open(at: AppTest, cid: str) -> AppTest:
    at.selectbox(key="review.pick").select(cid).run()
    assert not at.exception, at.exception
    assert at.session_state["review.current"] == cid
    return at


def _status(ui: UiServer, cid: str) -> Any:
    return ui.client("root").candidate(cid)


def _texts(at: AppTest, kind: str) -> str:
    return "\n".join(str(e.value) for e in getattr(at, kind))


def test_a_candidate_shows_its_source_checks_and_bindings(ui: UiServer) -> None:
    at = ui.page("review", "cora")
    assert not at.exception, at.exception
    assert at.session_state["review.current"] == "c-approve"  # the oldest pending one opens first
    assert "> Ravi likes tea" in _texts(at, "markdown")  # the span it was taken from
    assert "Valid: it imports as a record." in _texts(at, "success")
    names = at.dataframe[-1].value
    assert list(names["name"]) == ["Ravi"] and list(names["outcome"]) == ["bound"]
    _open(at, "c-dup")
    assert "Says the same as: `m-sparky-1`" in _texts(at, "warning")
    _open(at, "c-new")
    names = at.dataframe[-1].value
    assert dict(zip(names["name"], names["outcome"], strict=True)) == {"Ravi": "bound", "Zed Quill": "unbound"}


def test_approve_then_the_next_pending_opens(ui: UiServer) -> None:
    at = ui.page("review", "cora")
    _open(at, "c-approve")
    order = list(at.dataframe[0].value["id"])
    at.button(key="review.c-approve.approve_go").click().run()
    assert not at.exception, at.exception
    assert "Approved c-approve." in _texts(at, "success")
    assert _status(ui, "c-approve").status == "approved"
    assert _status(ui, "c-approve").decided_by == "cora"
    assert at.session_state["review.current"] == order[order.index("c-approve") + 1]  # the next one in the queue


def test_approve_creating_a_new_name(ui: UiServer) -> None:
    at = _open(ui.page("review", "cora"), "c-new")
    at.button(key="review.c-new.approve_go").click().run()
    assert "binds no entity" in _texts(at, "error")  # not created unless asked: never a fuzzy match
    assert _status(ui, "c-new").status == "pending"
    at.checkbox(key="review.c-new.create.Zed Quill").check()  # a form's widgets count when it is submitted
    at.button(key="review.c-new.approve_go").click().run()
    assert not at.exception, at.exception
    assert _status(ui, "c-new").status == "approved"
    assert ui.client("vic").resolve("Zed Quill").outcome == "bound"


def test_edit_then_approve(ui: UiServer) -> None:
    at = _open(ui.page("review", "cora"), "c-edit")
    at.text_input(key="review.c-edit.e.statement").input("Ravi likes coffee.")
    at.text_input(key="review.c-edit.e.from").input("2026-05-01")
    at.button(key="review.c-edit.edit_go").click().run()
    assert not at.exception, at.exception
    assert "Approved c-edit as edited." in _texts(at, "success")
    cand = _status(ui, "c-edit")
    assert cand.status == "approved"
    record = ui.client("cora").record(cand.approved_as)
    assert record.statement == "Ravi likes coffee." and record.confirmed_by == "cora"


def test_a_bad_edit_points_at_the_line_and_keeps_the_form(ui: UiServer) -> None:
    at = _open(ui.page("review", "cora"), "c-bulk-1")
    rest = at.text_area(key="review.c-bulk-1.e.rest")
    rest.input(str(rest.value).replace('"source": {', '"source": {,'))
    at.text_input(key="review.c-bulk-1.e.statement").input("Ravi likes warm rain.")
    at.button(key="review.c-bulk-1.edit_go").click().run()
    errors = _texts(at, "error")
    assert "other fields (JSON)" in errors and "line 3, column" in errors
    assert at.text_input(key="review.c-bulk-1.e.statement").value == "Ravi likes warm rain."
    assert _status(ui, "c-bulk-1").status == "pending"


def test_reject_needs_and_keeps_a_reason(ui: UiServer) -> None:
    at = _open(ui.page("review", "cora"), "c-reject")
    at.button(key="review.c-reject.reject_go").click().run()
    assert "Please give a reason" in _texts(at, "error")
    at.text_input(key="review.c-reject.reason").input("not said; the model inferred it")
    at.button(key="review.c-reject.reject_go").click().run()
    assert not at.exception, at.exception
    cand = _status(ui, "c-reject")
    assert (cand.status, cand.reason, cand.decided_by) == ("rejected", "not said; the model inferred it", "cora")


def test_bulk_reject(ui: UiServer) -> None:
    at = ui.page("review", "cora")
    at.multiselect(key="review.bulk").select("c-bulk-1").select("c-bulk-2").run()
    at.text_input(key="review.bulk_reason").input("weather is not a preference we keep")
    at.button(key="review.bulk_reject_go").click().run()
    assert not at.exception, at.exception
    assert "Rejected 2 candidate(s)." in _texts(at, "success")
    assert [_status(ui, c).status for c in ("c-bulk-1", "c-bulk-2")] == ["rejected", "rejected"]
    assert at.multiselect(key="review.bulk").value == []  # the selection is cleared after acting


def test_bulk_approve(ui: UiServer) -> None:
    at = _open(ui.page("review", "cora"), "c-many-1")  # one of them is open
    at.multiselect(key="review.bulk").select("c-many-1").select("c-many-2").run()
    at.button(key="review.bulk_approve_go").click().run()
    assert not at.exception, at.exception
    assert "Approved 2 candidate(s)." in _texts(at, "success")
    assert [_status(ui, c).status for c in ("c-many-1", "c-many-2")] == ["approved", "approved"]
    assert "Someone changed this first" not in _texts(at, "error")  # decided here, not by someone else
    assert at.session_state["review.current"] not in ("c-many-1", "c-many-2")


def test_bind_a_name_to_an_existing_entity_then_approve(ui: UiServer) -> None:
    at = _open(ui.page("review", "cora"), "c-bind")
    at.text_input(key="review.c-bind.bind.entity").input("Ravi")
    at.button(key="review.c-bind.bind_go").click().run()
    assert not at.exception, at.exception
    assert "“Rav” now names Ravi." in _texts(at, "success")
    assert ui.client("vic").resolve("Rav").entities == ui.client("vic").resolve("Ravi").entities
    names = at.dataframe[-1].value
    assert dict(zip(names["name"], names["outcome"], strict=True)) == {"Rav": "bound"}
    at.button(key="review.c-bind.approve_go").click().run()
    assert _status(ui, "c-bind").status == "approved"


def test_merge_candidates_and_into_a_duplicate_record(ui: UiServer) -> None:
    at = ui.page("review", "cora")
    at.multiselect(key="review.bulk").select("c-merge-a").select("c-merge-b").run()
    at.selectbox(key="review.bulk_keep").select("c-merge-a").run()
    at.button(key="review.bulk_merge_go").click().run()
    assert not at.exception, at.exception
    merged = _status(ui, "c-merge-b")
    assert merged.status == "merged" and merged.merged_into.endswith("c-merge-a")
    assert _status(ui, "c-merge-a").status == "pending"
    _open(at, "c-dup")
    at.button(key="review.c-dup.merge.m-sparky-1").click().run()
    assert not at.exception, at.exception
    dup = _status(ui, "c-dup")
    assert dup.status == "merged" and dup.merged_into.endswith("m-sparky-1")


def test_a_conflict_shows_what_changed_and_keeps_the_edit(ui: UiServer) -> None:
    at = _open(ui.page("review", "cora"), "c-conflict")
    at.text_input(key="review.c-conflict.e.statement").input("Ravi loves jazz.")
    ui.client("root").reject(["c-conflict"], reason="a duplicate of an older note")  # someone else, first
    at.button(key="review.c-conflict.edit_go").click().run()
    assert not at.exception, at.exception
    assert "Someone changed this first" in _texts(at, "error")
    assert "already rejected by root" in _texts(at, "error")
    changed = at.dataframe[0].value if "field" in at.dataframe[0].value else at.dataframe[1].value
    rows = {r["field"]: (r["when you opened it"], r["now"]) for r in changed.to_dict("records")}
    assert rows["status"] == ("pending", "rejected") and rows["decided by"] == ("", "root")
    assert rows["reason"] == ("", "a duplicate of an older note")
    assert at.text_input(key="review.c-conflict.e.statement").value == "Ravi loves jazz."  # the edit is kept
    assert any('"statement": "Ravi loves jazz."' in c.value for c in at.code)
    assert at.session_state["review.current"] == "c-conflict"  # it stays open
    at.button(key="review.conflict_done").click().run()
    assert at.session_state["review.current"] != "c-conflict"
    assert _status(ui, "c-conflict").status == "rejected"  # nothing written twice


def test_filters_by_status_and_words(ui: UiServer) -> None:
    at = ui.page("review", "cora")
    at.selectbox(key="review.status").select("all").run()
    at.text_input(key="review.words").input("spaceship").run()
    assert not at.exception, at.exception
    assert list(at.dataframe[0].value["id"]) == ["c-reject"]
    at.text_input(key="review.words").input("no such words anywhere").run()
    assert "No candidate matches these filters." in _texts(at, "info")


def test_a_viewer_is_refused(ui: UiServer) -> None:
    at = ui.page("review", "vic")
    assert not at.exception, at.exception
    assert "needs the curator role" in _texts(at, "warning")
    assert not at.button and not at.dataframe
