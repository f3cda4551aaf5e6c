"""A real ``workbench serve`` for the Streamlit pages' tests: the sample data and three users,
root (admin), cora (curator) and vic (viewer). A page runs in ``AppTest`` signed in with one
of their tokens, through the Python client, as in the browser."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

import workbench
from tests.test_server import Server
from workbench.access import users
from workbench.access.users import Role
from workbench.client import Client
from workbench.service import Workbench

PEOPLE = (("root", Role.ADMIN), ("cora", Role.CURATOR), ("vic", Role.VIEWER))


@dataclass
class UiServer:
    server: Server
    path: Path
    tokens: dict[str, str]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def client(self, who: str) -> Client:
        return workbench.connect(self.url, self.tokens[who])

    def stop(self) -> None:
        self.server.stop()


def start(tmp_path_factory: pytest.TempPathFactory) -> UiServer:
    path = tmp_path_factory.mktemp("ui") / "store"
    with Workbench.open(path, create=True, user="root") as wb:
        wb.init(sample=True)
        tokens = {name: users.add(wb.store, name, [role], actor="root", now=wb.now()) for name, role in PEOPLE}
    return UiServer(Server(path), path, tokens)


def page(module: str, token: str) -> None:
    """The AppTest script: sign in once with ``token``, then draw the page."""
    import importlib

    from workbench.ui import session

    if not session.signed_in():
        session.sign_in(token)
    importlib.import_module(f"workbench.ui.pages.{module}").render()


def open_page(ui: UiServer, module: str, who: str, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The page ``module`` as ``who`` sees it, after its first run (failing on any exception)."""
    monkeypatch.setenv("WORKBENCH_URL", ui.url)
    at = AppTest.from_function(page, kwargs={"module": module, "token": ui.tokens[who]}, default_timeout=60)
    return ran(at)


def ran(thing: Any) -> AppTest:
    """The app after running it (an AppTest, or a widget just changed), which must not have raised."""
    at: AppTest = thing.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at: AppTest) -> str:
    """Everything the page says in markdown, captions, alerts and code, as one text to search."""
    parts = [e.value for kind in (at.markdown, at.caption, at.success, at.info, at.warning, at.error, at.code)
             for e in kind]
    return "\n".join(str(p) for p in parts)
