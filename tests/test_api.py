"""The JSON API and the Python client, against a real `workbench serve` process.

The store (sample data, three users, three queued candidates) first answers every question
embedded; then a server runs on it and ``workbench.connect`` must give the same answers
(``to_json()`` equal after a JSON round trip), raise the same errors, refuse bad input naming the
field, and leave the store exactly as it was after every refused request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

import workbench
from tests.test_guess import KETTLES, _records
from tests.test_server import Server
from workbench.client import Client
from workbench.errors import Forbidden, Invalid, NotFound
from workbench.server.routes import TABLE
from workbench.service import Workbench


def _cand(cid: str, statement: str) -> dict[str, Any]:
    return {"id": cid, "statement": statement, "type": "observation", "about": ["Ravi"],
            "source": {"id": f"chat-{cid}", "said_by": "me"}}


def _rt(value: Any) -> Any:
    """A JSON round trip: what a client can compare."""
    return json.loads(json.dumps(value, sort_keys=True))


# Each question: (method, args, kwargs); the same call goes to the embedded API and the client.
QUESTIONS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("ask", ("my car", "needs", "gas"), {}),
    ("ask", ("my car", "needs"), {}),
    ("ask", ("Paris", "located in"), {"guess": True}),
    ("ask", ("Kettle One", "used for"), {"guess": True}),  # guessed
    ("ask", ("Kettle One", "used for", "noodles"), {"guess": True}),
    ("ask", ("Kim", "is a"), {}),  # ambiguous
    ("ask", ("Nobody Known", "needs"), {}),  # unknown entity
    ("proof", ("urn:wb:entity:my-car", "https://w3id.org/workbench/ns#needs", "urn:wb:entity:gasoline"), {}),
    ("proof", ("urn:wb:entity:sparky", "https://w3id.org/workbench/ns#needs"), {}),
    ("count", ("wedding",), {"about": "me", "year": 2026}),
    ("count", ("wedding",), {"start": "2025-01-01", "end": "2025-12-31"}),
    ("current", ("me", "weight"), {}),
    ("current", ("me", "weight"), {"as_of": "2026-02-01"}),
    ("decision", ("Project Atlas",), {}),
    ("decision", ("Project Atlas",), {"as_of": "2026-03-01"}),
    ("recall", ("Where does Project Atlas keep customer data?",), {}),
    ("recall", ("what car do I drive?",), {"purpose": "decision", "limit": 2}),
    ("records", (), {"record_type": "decision"}),
    ("records", (), {"about": "me", "limit": 3}),
    ("record", ("d-atlas-region-2",), {}),
    ("stats", (), {}),
    ("candidates", (), {}),
]


def _result(value: Any) -> Any:
    if isinstance(value, list):
        return _rt([v.to_json() if hasattr(v, "to_json") else v for v in value])
    return _rt(value.to_json() if hasattr(value, "to_json") else value)


@dataclass
class Api:
    server: Server
    path: Path
    tokens: dict[str, str]
    expected: list[Any] = field(default_factory=list)

    @property
    def root(self) -> str:
        return self.server.url.removesuffix("/sparql")

    def client(self, who: str | None = None) -> Client:
        return workbench.connect(self.root, self.tokens[who] if who else None, timeout=20)

    def snapshot(self) -> list[Any]:
        """Every quad in the store, through /sparql as the admin."""
        r = httpx.get(self.server.url, params={"query": "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }"},
                      headers={"Authorization": f"Bearer {self.tokens['root']}"}, timeout=20)
        assert r.status_code == 200, r.text
        return sorted(json.dumps(b, sort_keys=True) for b in r.json()["results"]["bindings"])


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    path = tmp_path_factory.mktemp("api") / "store"
    queued = tmp_path_factory.mktemp("queue") / "c.jsonl"
    queued.write_text("".join(json.dumps(_cand(f"c-{i}", f"Ravi likes tea number {i}.")) + "\n" for i in (1, 2, 3)))
    with Workbench.open(path, create=True, user="root") as wb:
        wb.init(sample=True)
        wb.import_files([_records(queued.with_name("k.jsonl"), KETTLES)])
        for i, slug in enumerate(("kim-one", "kim-two")):
            ttl = queued.with_name(f"kim{i}.ttl")
            ttl.write_text(f'<urn:wb:entity:{slug}> <http://www.w3.org/2004/02/skos/core#prefLabel> "kim" .\n')
            wb.import_files([ttl], source=f"kim-src-{i}", said_by="me")
        tokens = {"root": wb.add_user("root", ["admin"])}
        as_cora = Workbench(wb.store, user="root")
        tokens["cora"] = as_cora.add_user("cora", ["curator"])
        tokens["vic"] = as_cora.add_user("vic", ["viewer"])
        wb.import_candidates(queued)
        vic = wb.seen_by("vic")  # what the viewer may see: not the family's sample record
        expected = [_result(getattr(vic, name)(*args, **kwargs)) for name, args, kwargs in QUESTIONS]
    server = Server(path)
    yield Api(server, path, tokens, expected)
    server.stop()


@pytest.mark.parametrize("index", range(len(QUESTIONS)), ids=[f"{q[0]}-{i}" for i, q in enumerate(QUESTIONS)])
def test_client_answers_as_the_embedded_api(api: Api, index: int) -> None:
    name, args, kwargs = QUESTIONS[index]
    with api.client("vic") as client:
        got = getattr(client, name)(*args, **kwargs)
    assert _result(got) == api.expected[index]


def test_rebuilt_types_are_the_real_ones(api: Api) -> None:
    client = api.client("vic")
    answer = client.ask("my car", "needs", "gas")
    assert isinstance(answer, workbench.Answer) and answer.tier is workbench.Tier.DERIVED
    assert "gasoline" in answer.text()
    guessed = client.ask("Kettle One", "used for", guess=True)
    assert guessed.tier is workbench.Tier.GUESSED and [g.label for g in guessed.guesses] == ["tea", "noodles"]
    assert client.ask("Kim", "is a").tier is workbench.Tier.AMBIGUOUS
    bundle = client.recall("Where does Project Atlas keep customer data?")
    assert bundle.text().startswith(f"[{bundle.tier}]")
    record = client.record("d-atlas-region-2")
    assert isinstance(record, workbench.Record) and record.type is workbench.RecordType.DECISION


def test_errors_map_back_and_change_nothing(api: Api) -> None:
    before = api.snapshot()
    vic, anonymous = api.client("vic"), api.client()
    with pytest.raises(Invalid, match="relation"):
        vic.ask("my car", "flibbertigibbets")
    with pytest.raises(NotFound):
        vic.record("no-such-record")
    with pytest.raises(workbench.Ambiguous) as ambiguous:
        vic.records(about="Kim")
    assert ambiguous.value.data["candidates"] == ["urn:wb:entity:kim-one", "urn:wb:entity:kim-two"]
    with pytest.raises(Forbidden, match="curator"):
        vic.approve(["c-1"])
    with pytest.raises(Forbidden):
        vic.reject(["c-1"], reason="no")
    with pytest.raises(Forbidden):  # a store with users: every request needs a token
        anonymous.stats()
    with pytest.raises(Forbidden):
        workbench.connect(api.root, "wb_not_a_token").stats()
    with pytest.raises(Forbidden):  # no token on a write
        anonymous.approve(["c-1"])
    with pytest.raises(NotFound):
        api.client("cora").approve(["c-none"])
    assert api.snapshot() == before


@pytest.mark.parametrize(("path", "body", "named"), [
    ("/api/ask", {"subject": "me", "relation": 3}, "relation"),
    ("/api/ask", {"relation": "needs"}, "subject"),
    ("/api/ask", {"subject": "me", "relation": "needs", "guess": "yes"}, "guess"),
    ("/api/count", {"event_type": "wedding", "year": 2026.5}, "year"),
    ("/api/recall", {"question": "tea?", "limit": "3"}, "limit"),
    ("/api/review/approve", {"ids": "c-1"}, "ids"),
    ("/api/review/approve", {"ids": [1]}, "ids"),
    ("/api/review/reject", {"ids": ["c-1"]}, "reason"),
    ("/api/decision", {"scope": "x", "extra": 1}, "extra"),
    ("/api/current", [1, 2], "body"),
])
def test_wrong_fields_are_400_naming_them(api: Api, path: str, body: Any, named: str) -> None:
    before = api.snapshot()
    r = httpx.post(api.root + path, json=body, headers={"Authorization": f"Bearer {api.tokens['cora']}"})
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "Invalid" and r.json()["where"] == named
    assert not any(k.lower().startswith("access-control") for k in r.headers)
    assert api.snapshot() == before


def test_bad_bodies_and_limits(api: Api) -> None:
    before = api.snapshot()
    auth = {"Authorization": f"Bearer {api.tokens['cora']}", "Content-Type": "application/json"}
    r = httpx.post(api.root + "/api/ask", content=b"{not json", headers=auth)
    assert r.status_code == 400 and r.json()["error"] == "ParseError"
    r = httpx.post(api.root + "/api/ask", content=b"[" * 1_100_000, headers=auth)
    assert r.status_code == 413 and r.json()["error"] == "TooLarge"
    r = httpx.post(api.root + "/api/review/reject", json={"ids": ["c-1"], "reason": "x"})
    assert r.status_code == 401 and r.json()["error"] == "Unauthorized"
    r = httpx.get(api.root + "/api/records", params={"limit": "many"}, headers=auth)
    assert r.status_code == 400 and r.json()["where"] == "limit"
    r = httpx.get(api.root + "/api/records", params={"type": "gossip"}, headers=auth)
    assert r.status_code == 400 and r.json()["where"] == "type"
    r = httpx.options(api.root + "/api/ask", headers={**auth, "Origin": "http://evil.example",
                                                       "Access-Control-Request-Method": "POST"})
    assert not any(k.lower().startswith("access-control") for k in r.headers)
    assert api.snapshot() == before


def test_openapi_lists_every_route(api: Api) -> None:
    r = httpx.get(api.root + "/api/openapi.json", headers={"Authorization": f"Bearer {api.tokens['vic']}"})
    doc = json.loads(r.text)
    assert doc["openapi"] == "3.1.0"
    listed = {(method.upper(), path) for path, ops in doc["paths"].items() for method in ops}
    assert listed == {(route.method, route.path) for route in TABLE}
    assert {op["operationId"] for ops in doc["paths"].values() for op in ops.values()} == {r.name for r in TABLE}
    ask = doc["paths"]["/api/ask"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert ask["required"] == ["subject", "relation"] and ask["properties"]["guess"]["type"] == "boolean"


def test_review_through_the_client(api: Api) -> None:
    """Runs last: it writes. The curator's acts are attributed to the token's user."""
    cora = api.client("cora")
    assert [c.id for c in cora.candidates()] == ["c-1", "c-2", "c-3"]
    done = cora.approve(["c-1"])
    cora.reject(["c-2"], reason="a duplicate")
    assert cora.record(done[0]).statement == "Ravi likes tea number 1."
    decided = {c.id: c for c in cora.candidates(status=None)}
    assert decided["c-1"].status == "approved" and decided["c-1"].decided_by == "cora"
    assert decided["c-2"].status == "rejected" and decided["c-2"].reason == "a duplicate"
    assert [c.id for c in cora.candidates()] == ["c-3"]
    assert done[0] in [r.id for r in cora.records(about="Ravi")]  # the shared indexes saw the new record
    assert any(m.record.id == done[0] for m in cora.recall("What does Ravi like? tea").memories)
    seen = cora.record(done[0]).to_json()
    api.server.stop()
    with Workbench.open(api.path) as wb:
        assert _rt(wb.record(done[0]).to_json()) == _rt(seen)


def test_a_store_without_users_reads_without_a_token_but_never_writes(tmp_path: Path) -> None:
    """In process (the same app `workbench serve` runs): writes need a token even here."""
    from starlette.testclient import TestClient

    from workbench.server import create_app

    with Workbench.open(tmp_path / "s", create=True, user="t") as wb, TestClient(create_app(wb)) as http:
        wb.init()
        assert http.get("/api/stats").status_code == 200
        for path, body in (("/api/review/approve", {"ids": ["c-1"]}), ("/api/review/reject", {"ids": ["c-1"],
                                                                                             "reason": "x"})):
            r = http.post(path, json=body)
            assert r.status_code == 401 and r.json()["error"] == "Unauthorized"
            assert r.headers["www-authenticate"].startswith("Bearer")
