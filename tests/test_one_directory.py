"""A request to the server reads who is who once (issue 20): on a SPARQL server another process
may change the users, so their directory is not kept between requests, but within one request
the token's owner, the reader their answers are for and what their SPARQL may read come from one
reading of it (they were two or three round trips to the server). Against a real ``oxigraph
serve``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from starlette.testclient import TestClient

from tests.conftest import FIXED_NOW, OxigraphServer
from workbench.access import users
from workbench.server import create_app
from workbench.service import Workbench
from workbench.store.remote import RemoteStore


@dataclass
class Served:
    wb: Workbench
    http: TestClient
    url: str
    admin: str
    rita: str


@pytest.fixture()
def served(oxigraph_server: OxigraphServer) -> Iterator[Served]:
    oxigraph_server.clear()
    store = RemoteStore(oxigraph_server.url)
    wb = Workbench(store, user="ada", clock=lambda: FIXED_NOW)
    wb.init(sample=True)
    admin = wb.add_user("ada", ["admin"])
    rita = wb.add_user("rita", ["viewer"], groups=["group:atlas"])
    with TestClient(create_app(wb)) as http:
        yield Served(wb, http, oxigraph_server.url, admin, rita)
    store.close()


def _directory_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every query any RemoteStore sends that reads the users' directory."""
    read: list[str] = []
    real = RemoteStore.select

    def select(self: RemoteStore, query: str) -> list:  # type: ignore[type-arg]
        if "wb:tokenHash" in query and "wb:User" in query:
            read.append(query)
        return real(self, query)

    monkeypatch.setattr(RemoteStore, "select", select)
    return read


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("request_", [
    ("post", "/api/ask", {"json": {"subject": "my car", "relation": "needs"}}),
    ("get", "/api/me", {}),
    ("get", "/sparql", {"params": {"query": "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"},
                        "headers": {"Accept": "application/sparql-results+json"}}),
], ids=["ask", "me", "sparql"])
@pytest.mark.parametrize("who", ["admin", "rita"])
def test_a_request_reads_the_users_once(served: Served, monkeypatch: pytest.MonkeyPatch,
                                        request_: tuple[str, str, dict], who: str) -> None:  # type: ignore[type-arg]
    method, path, kwargs = request_
    token = served.admin if who == "admin" else served.rita
    getattr(served.http, method)(path, **{**kwargs, "headers": {**kwargs.get("headers", {}), **_as(token)}})
    read = _directory_reads(monkeypatch)
    for _ in range(2):  # and again: nothing is kept from one request to the next
        before = len(read)
        r = getattr(served.http, method)(path, **{**kwargs, "headers": {**kwargs.get("headers", {}), **_as(token)}})
        assert r.status_code == 200, r.text
        assert len(read) - before == 1  # two or three before


def test_a_change_by_another_process_shows_at_the_next_request(served: Served) -> None:
    assert served.http.get("/api/me", headers=_as(served.rita)).json()["groups"] == ["group:atlas"]
    other = RemoteStore(served.url)  # another Workbench process on the same server
    try:
        Workbench(other, user="ada", clock=lambda: FIXED_NOW).set_groups("rita", leave=["group:atlas"])
    finally:
        other.close()
    assert served.http.get("/api/me", headers=_as(served.rita)).json()["groups"] == []


def test_a_write_within_the_request_reads_the_users_again(served: Served) -> None:
    store = served.wb.store
    with users.one_directory():
        assert users.user(store, "bo") is None
        served.wb.add_user("bo", ["viewer"])
        assert users.user(store, "bo") is not None  # this process wrote: read again
