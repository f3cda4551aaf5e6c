"""A real ``workbench serve`` for the Streamlit pages' tests: the sample data, four users, root
(admin), cora (curator), rita (reviewer) and vic (viewer), and any candidates a test queues. A
page runs in ``AppTest`` signed in with one of their tokens, through the Python client, as in the
browser."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
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

PEOPLE = (("root", Role.ADMIN), ("cora", Role.CURATOR), ("rita", Role.REVIEWER), ("vic", Role.VIEWER))


@dataclass
class UiServer:
    server: Server
    path: Path
    tokens: dict[str, str]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def client(self, who: str) -> Client:
        return workbench.connect(self.url, self.tokens[who], timeout=60)

    def page(self, module: str, who: str) -> AppTest:
        """One page of the app, signed in as ``who``, run once."""
        return AppTest.from_function(page, kwargs={"module": module, "token": self.tokens[who]},
                                     default_timeout=60).run()

    def stop(self) -> None:
        self.server.stop()


def start(base: Path, candidates: Sequence[Mapping[str, Any]] = (), *, extra: Sequence[Mapping[str, Any]] = (),
          admin: str = "root", guesses: bool = False) -> UiServer:
    """A server on a store in ``base`` with the sample data (and ``extra`` records), :data:`PEOPLE`
    (the admin named ``admin``, who adds the others) and ``candidates`` queued; with ``guesses``,
    the guesser's proposals too (every chance, measured or not)."""
    path = base / "store"
    with Workbench.open(path, create=True, user=admin) as wb:
        wb.init(sample=True)
        if extra:
            wb.import_files([_jsonl(base / "extra.jsonl", extra)])
        if candidates:
            wb.import_candidates(_jsonl(base / "candidates.jsonl", candidates))
        people = [(admin if role is Role.ADMIN else name, role) for name, role in PEOPLE]
        tokens = {name: users.add(wb.store, name, [role], actor=admin, now=wb._now()) for name, role in people}
        if guesses:
            wb.propose_guesses(top=1, min_chance=0)
    return UiServer(Server(path), path, tokens)


def _jsonl(path: Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


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
