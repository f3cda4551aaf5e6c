"""The browser workbench as a whole (workbench/ui/app.py) in AppTest against a real `workbench
serve`: signing in with a token, pages that follow the role, signing out, and a server that does
not answer said so in words."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import free_port
from tests.uitest import APP, UiServer, app, errors, ui_server

KNOWLEDGE = ["Ask", "Overview", "Entities", "Sources and history", "SPARQL"]


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    with ui_server(tmp_path_factory) as found:
        yield found


def pages(at: AppTest) -> list[str]:
    """The pages st.navigation offers this session, in order. AppTest keeps them (for switching
    pages) but has no public accessor: the sidebar's navigation is not an element."""
    return [str(p["page_name"]) for p in at._registered_pages.values()]


def sign_in(at: AppTest, token: str) -> AppTest:
    at.text_input[0].input(token)
    return at.button[0].click().run()


def test_signed_out_the_only_page_is_the_sign_in(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = app(ui, monkeypatch).run()
    assert errors(at) == []
    assert set(pages(at)) == {"Sign in"}  # at every page's address: the sign-in
    assert at.title[0].value == "Workbench"
    assert ui.url in at.caption[0].value


def test_a_wrong_token_is_refused(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = sign_in(app(ui, monkeypatch).run(), "wb_not-a-token")
    [error] = errors(at)
    assert error.startswith("Not allowed")
    assert set(pages(at)) == {"Sign in"}  # at every page's address: the sign-in


@pytest.mark.parametrize(("user", "curation"), [
    ("vic", []),
    ("cora", ["Review queue", "Rules"]),
    ("rita", ["Rules", "Sign-off"]),  # a reviewer may propose rules too
    ("ada", ["Review queue", "Rules", "Sign-off"]),
])
def test_pages_follow_the_role(ui: UiServer, monkeypatch: pytest.MonkeyPatch, user: str, curation: list[str]) -> None:
    at = sign_in(app(ui, monkeypatch).run(), ui.tokens[user])
    assert errors(at) == []
    assert pages(at) == KNOWLEDGE + curation
    assert at.title[0].value == "Ask"  # the first page opens
    assert any(user in m.value for m in at.sidebar.markdown)  # who is signed in, with their roles


def test_a_viewer_cannot_reach_the_curation_pages(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = sign_in(app(ui, monkeypatch).run(), ui.tokens["vic"])
    for page in ("review", "rules", "signoff"):
        assert page not in [p["url_pathname"] for p in at._registered_pages.values()]


def test_signing_out(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = sign_in(app(ui, monkeypatch).run(), ui.tokens["cora"])
    at.sidebar.button[0].click().run()
    assert set(pages(at)) == {"Sign in"}  # at every page's address: the sign-in
    assert "workbench.client" not in at.session_state


def test_a_server_that_does_not_answer_is_said_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_URL", f"http://127.0.0.1:{free_port()}")
    at = AppTest.from_file(str(APP), default_timeout=30).run()
    at = sign_in(at, "wb_anything")
    [error] = errors(at)
    assert error.startswith("Lost the connection to the Workbench server") and "workbench up" in error
