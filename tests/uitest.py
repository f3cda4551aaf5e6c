"""What the browser workbench's tests share: a real `workbench serve` over a sample store with
users of each role, and Streamlit's AppTest running one page (or the whole app) against it.

A page runs as the signed-in user it is given: the session holds that user's client and who they
are, as ``workbench.ui.session.sign_in`` leaves them, and ``$WORKBENCH_URL`` names the server.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

import workbench
from tests.ui_server import UiServer, start

APP = Path(__file__).resolve().parent.parent / "workbench" / "ui" / "launch" / "streamlit_app.py"
# Records the sample data lacks: kettles, for a genuine gap with model guesses; and a private record
# only group:family may see (Secret Van), for what a viewer outside it must not get.
EXTRA = [
    {"id": "m-k1", "statement": "Kettle One is a kettle.", "type": "observation", "about": ["Kettle One"],
     "source": {"id": "chat-m-k1", "said_by": "me", "captured_at": "2026-11-01"},
     "triples": [["Kettle One", "is a", "kettle"]]},
    {"id": "m-k2", "statement": "Kettle Two is a kettle used for tea.", "type": "observation",
     "about": ["Kettle Two"], "source": {"id": "chat-m-k2", "said_by": "me", "captured_at": "2026-11-01"},
     "triples": [["Kettle Two", "is a", "kettle"], ["Kettle Two", "used for", "tea"]]},
    {"id": "p-van-1", "statement": "The Secret Van is a petrol car.", "type": "observation",
     "about": ["Secret Van"], "visible_to": ["group:family"],
     "source": {"id": "fam-chat-1", "said_by": "me", "captured_at": "2026-05-01T10:00:00Z",
                "text": "Our Secret Van runs on petrol."},
     "triples": [["Secret Van", "is a", "petrol car"]]},
]
# Candidates waiting in the review queue (the Overview counts them): never facts until approved.
CANDIDATES = [
    {"id": "m-bike-1", "statement": "I own a red bike.", "type": "observation", "about": ["me"],
     "source": {"id": "chat-bike", "said_by": "me", "captured_at": "2026-11-02"}, "span": "my red bike",
     "triples": [["me", "owns", "red bike"]]},
    {"id": "m-bike-2", "statement": "The red bike is a bicycle.", "type": "observation", "about": ["red bike"],
     "source": {"id": "chat-bike", "said_by": "me", "captured_at": "2026-11-02"},
     "triples": [["red bike", "is a", "bicycle"]]},
]


@contextmanager
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    """A real `workbench serve` over the sample data plus :data:`EXTRA` and :data:`CANDIDATES`,
    with ada as the admin, cora, rita and vic (tests/ui_server.py)."""
    ui = start(tmp_path_factory.mktemp("ui"), CANDIDATES, extra=EXTRA, admin="ada")
    try:
        yield ui
    finally:
        ui.stop()


def _page(module: str) -> None:
    import importlib

    importlib.import_module(f"workbench.ui.pages.{module}").render()


def page(ui: UiServer, module: str, user: str, monkeypatch: pytest.MonkeyPatch, timeout: float = 30) -> AppTest:
    """An AppTest of ``workbench.ui.pages.<module>`` signed in as ``user``, run once."""
    monkeypatch.setenv("WORKBENCH_URL", ui.url)
    at = AppTest.from_function(_page, args=(module,), default_timeout=timeout)
    sign_in(at, ui, user)
    return at.run()


def sign_in(at: AppTest, ui: UiServer, user: str) -> None:
    """The session ``workbench.ui.session.sign_in`` leaves: this user's client and who they are."""
    client = workbench.connect(ui.url, ui.tokens[user])
    at.session_state["workbench.client"] = client
    at.session_state["workbench.user"] = client.me()


def app(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The whole app as `workbench up` runs it, signed out, not yet run."""
    monkeypatch.setenv("WORKBENCH_URL", ui.url)
    return AppTest.from_file(str(APP), default_timeout=30)


def texts(at: AppTest) -> str:
    """Everything the page says in words (markdown, captions, alerts, headings, expander labels),
    one per line, to search in."""
    found: list[str] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success",
                 "metric", "expander"):
        for element in getattr(at, kind):
            found.append(str(getattr(element, "label", "") or "") + " " + str(getattr(element, "value", "") or ""))
    return "\n".join(found)


def errors(at: AppTest) -> list[str]:
    """Errors on the page and exceptions a script raised: a page test fails on any it did not expect."""
    return [str(e.value) for e in at.error] + [str(e.value) for e in at.exception]


def elements(at: AppTest, kind: str) -> list[Any]:
    """Elements AppTest has no accessor for (graphviz_chart, download_button...), by proto type."""
    return list(at.get(kind))
