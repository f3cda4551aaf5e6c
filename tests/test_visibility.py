"""Access follows the source (invariant 8): the leak matrix.

Store A holds the sample data plus private records (their source visible only to
``group:family``); store B holds the same without them. A reader outside the family must not be
able to tell A from B: through a direct answer, a derived one, a count, a guess, a recall bundle,
an error message or a "does this exist" probe; embedded, on the CLI, over the JSON API and over
SPARQL. The family member must see the private records (so each check can fail).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench
from tests.conftest import FIXED_NOW
from tests.test_server import Server
from workbench.access.views import ViewStore
from workbench.errors import Forbidden, NotFound, WorkbenchError
from workbench.service import Workbench
from workbench.store import Batch, MemoryStore, RemoteStore, Store

PRIVATE = [
    {"id": "p-van-1", "statement": "The Secret Van is a petrol car; we keep it in Zanzibar.", "type": "observation",
     "about": ["Secret Van"], "visible_to": ["group:family"],
     "source": {"id": "fam-chat-1", "said_by": "me", "captured_at": "2026-05-01T10:00:00Z",
                "text": "Our Secret Van runs on petrol, it stays in Zanzibar."},
     "triples": [["Secret Van", "is a", "petrol car"], ["me", "owns", "Secret Van"]]},
    {"id": "p-wedding-1", "statement": "I attended Zelda's wedding in Zanzibar.", "type": "event",
     "about": ["me", "Zelda's wedding"], "visible_to": ["group:family"], "effective_from": "2026-05-02",
     "source": {"id": "fam-chat-2", "said_by": "me", "captured_at": "2026-05-03T10:00:00Z"},
     "triples": [["Zelda's wedding", "is a", "wedding"], ["me", "attended", "Zelda's wedding"]]},
]
MARKERS = ("secret van", "secret-van", "zanzibar", "zelda", "p-van-1", "p-wedding-1", "fam-chat")
Probe = Callable[[Any], Any]
# What each reader may ask; the same calls go to the embedded API and the HTTP client.
PROBES: dict[str, Probe] = {
    "direct": lambda wb: wb.ask("Secret Van", "is a"),
    "derived": lambda wb: wb.ask("Secret Van", "needs", "gasoline"),
    "derived for me": lambda wb: wb.ask("me", "owns"),
    "count": lambda wb: wb.count("wedding", about="me", year=2026),
    "guess": lambda wb: wb.ask("Secret Van", "needs", guess=True),
    "recall by word": lambda wb: wb.recall("what happened in Zanzibar?"),
    "recall by name": lambda wb: wb.recall("Where is the Secret Van kept?"),
    "recall first person": lambda wb: wb.recall("which weddings did I go to?"),
    "records": lambda wb: wb.records(),
    "records about me": lambda wb: wb.records(about="me"),
    "record probe": lambda wb: wb.record("p-van-1"),
    "stats": lambda wb: wb.stats(),
    "candidates": lambda wb: wb.candidates(status=None),
}
EMBEDDED_ONLY: dict[str, Probe] = {
    "resolve": lambda wb: wb.resolve("Secret Van"),
    "entities": lambda wb: wb.entities(),
    "guess kinds": lambda wb: wb.guess_kinds("Secret Van"),
    # what the guesser learned from and measured, less what names the store's version or the clock
    "guess report": lambda wb: {k: v for k, v in wb.guess_report().items()
                                if k not in ("fingerprint", "version", "trained_at", "seconds")},
    "history probe": lambda wb: wb.history("p-van-1"),
    "proof link": lambda wb: _PROOF(wb),
    # what the rules conclude for SPARQL tools, and the conclusions' descriptions (rules, records)
    "sparql reasoning": lambda wb: json.loads(wb.sparql(
        "SELECT ?s ?p ?o WHERE { GRAPH <urn:wb:graph:derived> { ?s ?p ?o } } ORDER BY ?s ?p ?o", reasoning=True)),
}
# A conclusion's proof link asked by IRI: it echoes the IRI (not a leak), so compared A with B only.
def _PROOF(wb: Any) -> Any:  # noqa: N802
    return wb.proof("urn:wb:entity:secret-van-61aa3dfc",  # minted for a restricted record
                    "https://w3id.org/workbench/ns#needs", "urn:wb:entity:gasoline")


_RANDOM = re.compile(r"urn:wb:activity:[^\"'\s>]+|\"quads\": \d+")


def _outcome(probe: Probe, wb: Any) -> str:
    """A probe's answer, or its error, as comparable text (random activity ids masked)."""
    try:
        value = probe(wb)
    except WorkbenchError as exc:
        value = {"error": type(exc).__name__, "message": str(exc)}
    if isinstance(value, list | tuple):
        value = [v.to_json() if hasattr(v, "to_json") else v for v in value]
    elif hasattr(value, "to_json"):
        value = value.to_json()
    return _RANDOM.sub("…", json.dumps(value, sort_keys=True, ensure_ascii=False, default=str))


# What the probes themselves say: an answer may echo the question, which is no leak.
ASKED = ("where is the secret van kept?", "what happened in zanzibar?", '"name": "zanzibar"', "'zanzibar'",
         "secret van", "p-van-1")


def _leaks(text: str) -> list[str]:
    low = text.casefold()
    for echo in ASKED:
        low = low.replace(echo, "")
    return [m for m in MARKERS if m in low]


def _make(path: Path, private: bool) -> dict[str, str]:
    """A store with the sample data, users and (if ``private``) the family's records."""
    with Workbench.open(path, create=True, user="root", clock=lambda: FIXED_NOW) as wb:
        wb.init(sample=True)
        if private:
            file = path.parent / f"{path.name}-private.jsonl"
            file.write_text("".join(json.dumps(r) + "\n" for r in PRIVATE))
            wb.import_files([file])
        if private:
            queued = path.parent / f"{path.name}-candidates.jsonl"
            queued.write_text(json.dumps({**PRIVATE[0], "id": "c-van-2", "statement": "The Secret Van is blue."}) + "\n")
            wb.import_candidates(queued)
        tokens = {"root": wb.add_user("root", ["admin"])}
        tokens["bob"] = wb.add_user("bob", ["viewer"])
        tokens["cur"] = wb.add_user("cur", ["curator"])
        tokens["fam"] = wb.add_user("fam", ["curator"])
        wb.set_groups("fam", join=["group:family"])
    return tokens


@dataclass
class Pair:
    a: Path  # with the private records
    b: Path  # without
    tokens: dict[str, str]  # store A's
    tokens_b: dict[str, str]

    def hashes(self) -> list[str]:
        return [hashlib.sha256(t.encode()).hexdigest() for t in self.tokens.values()]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Pair:
    root = tmp_path_factory.mktemp("visibility")
    return Pair(root / "a", root / "b", _make(root / "a", private=True), _make(root / "b", private=False))


@pytest.fixture(scope="module")
def embedded(pair: Pair) -> Iterator[tuple[Workbench, Workbench]]:
    a = Workbench.open(pair.a, user="root", clock=lambda: FIXED_NOW)
    b = Workbench.open(pair.b, user="root", clock=lambda: FIXED_NOW)
    yield a, b
    a.close()
    b.close()


@pytest.mark.parametrize("name", sorted({**PROBES, **EMBEDDED_ONLY}))
def test_an_outsider_cannot_tell_the_stores_apart(embedded: tuple[Workbench, Workbench], name: str) -> None:
    a, b = embedded
    probe = {**PROBES, **EMBEDDED_ONLY}[name]
    seen_a, seen_b = _outcome(probe, a.seen_by("bob")), _outcome(probe, b.seen_by("bob"))
    assert seen_a == seen_b  # store B never held the private records: nothing here comes from them


def test_the_family_sees_their_records(embedded: tuple[Workbench, Workbench]) -> None:
    a, _ = embedded
    fam = a.seen_by("fam")
    assert "p-van-1" in json.dumps(fam.ask("Secret Van", "is a").to_json())
    derived = fam.ask("Secret Van", "needs", "gasoline")
    assert derived.tier.value == "derived"
    assert "p-van-1" in json.dumps(derived.to_json())
    assert fam.count("wedding", about="me", year=2026).to_json() != a.seen_by("bob").count(
        "wedding", about="me", year=2026).to_json()
    assert "p-van-1" in {r.id for r in fam.records()}
    # and so does the admin, and the store's owner on this machine
    assert "p-van-1" in {r.id for r in a.seen_by("root").records()}
    assert "p-van-1" in {r.id for r in a.records()}


def test_an_error_for_a_hidden_record_reads_as_for_a_missing_one(embedded: tuple[Workbench, Workbench]) -> None:
    a, _ = embedded
    bob = a.seen_by("bob")
    messages = []
    for rid in ("p-van-1", "no-such-record"):
        with pytest.raises(WorkbenchError) as caught:
            bob.record(rid)
        messages.append((type(caught.value).__name__, str(caught.value).replace(rid, "ID")))
    assert messages[0] == messages[1]


def test_a_view_refuses_writes(embedded: tuple[Workbench, Workbench]) -> None:
    a, _ = embedded
    bob = a.seen_by("bob")
    assert isinstance(bob.store, ViewStore)
    with pytest.raises(Forbidden, match="read-only"):
        bob.store.update("INSERT DATA { <urn:x> <urn:y> <urn:z> }")


def test_a_view_follows_the_store(tmp_path: Path) -> None:
    with Workbench.open(tmp_path / "s", create=True, user="root", clock=lambda: FIXED_NOW) as wb:
        wb.init(sample=True)
        wb.add_user("root", ["admin"])
        wb.add_user("bob", ["viewer"])
        before = {r.id for r in wb.seen_by("bob").records()}
        file = tmp_path / "private.jsonl"
        file.write_text(json.dumps(PRIVATE[0]) + "\n")
        wb.import_files([file])
        assert {r.id for r in wb.seen_by("bob").records()} == before
        wb.set_groups("bob", join=["group:family"])
        assert {r.id for r in wb.seen_by("bob").records()} == before | {"p-van-1", "m-family-1"}
        wb.set_groups("bob", leave=["group:family"])
        assert {r.id for r in wb.seen_by("bob").records()} == before


# ---------------------------------------------------------------------- over HTTP


@pytest.fixture(scope="module")
def servers(pair: Pair) -> Iterator[tuple[Server, Server]]:
    a, b = Server(_copy(pair.a)), Server(_copy(pair.b))  # the embedded tests hold the stores themselves
    yield a, b
    a.stop()
    b.stop()


@pytest.mark.parametrize("name", sorted(PROBES))
def test_over_the_json_api(servers: tuple[Server, Server], pair: Pair, name: str) -> None:
    a, b = servers
    root_a, root_b = a.url.removesuffix("/sparql"), b.url.removesuffix("/sparql")
    bob_a = workbench.connect(root_a, pair.tokens["bob"])
    bob_b = workbench.connect(root_b, pair.tokens_b["bob"])
    seen_a, seen_b = _outcome(PROBES[name], bob_a), _outcome(PROBES[name], bob_b)
    assert seen_a == seen_b
    assert not _leaks(seen_a)
    fam = _outcome(PROBES[name], workbench.connect(root_a, pair.tokens["fam"]))
    if name not in ("stats", "recall first person", "derived for me"):
        assert _leaks(fam), "the family member sees the private records"


def test_a_proof_link_over_the_json_api(servers: tuple[Server, Server], pair: Pair) -> None:
    """GET /api/proof for a conclusion resting on a hidden record: an outsider gets what a store
    that never held it says; the family gets the proof with the record."""
    a, b = servers
    bob_a = workbench.connect(a.url.removesuffix("/sparql"), pair.tokens["bob"])
    bob_b = workbench.connect(b.url.removesuffix("/sparql"), pair.tokens_b["bob"])
    assert _outcome(_PROOF, bob_a) == _outcome(_PROOF, bob_b)
    fam = workbench.connect(a.url.removesuffix("/sparql"), pair.tokens["fam"])
    assert "p-van-1" in _outcome(_PROOF, fam)


@pytest.mark.parametrize("call", [
    lambda wb: wb.approve(["c-van-2"]),
    lambda wb: wb.reject(["c-van-2"], reason="no"),
    lambda wb: wb.candidate("c-van-2"),
    lambda wb: wb.retract("p-van-1", reason="probe"),
], ids=["approve", "reject", "candidate", "retract"])
def test_a_write_naming_what_they_may_not_see(servers: tuple[Server, Server], pair: Pair,
                                              call: Callable[[Any], Any]) -> None:
    """A curator outside the family is told a hidden candidate or record does not exist, as for a
    missing one, and nothing changes."""
    a, _ = servers
    root = a.url.removesuffix("/sparql")
    everything = "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }"
    before = _sparql(a, pair.tokens["root"], everything).json()["results"]["bindings"]
    with pytest.raises(NotFound):
        call(workbench.connect(root, pair.tokens["cur"]))
    after = _sparql(a, pair.tokens["root"], everything).json()["results"]["bindings"]
    assert sorted(map(str, before)) == sorted(map(str, after))


SPARQL_PROBES = [
    ("everything", "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", {}),
    ("default graph", "SELECT * WHERE { ?s ?p ?o }", {"default-graph-uri": ["urn:wb:record:p-van-1"]}),
    ("FROM the record", "SELECT * FROM <urn:wb:record:p-van-1> WHERE { ?s ?p ?o }", {}),
    ("FROM NAMED", "SELECT * FROM NAMED <urn:wb:record:p-van-1> FROM NAMED <urn:wb:graph:meta> "
                   "WHERE { GRAPH ?g { ?s ?p ?o } }", {}),
    ("dataset parameters", "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }",
     {"named-graph-uri": ["urn:wb:record:p-van-1", "urn:wb:graph:meta", "urn:wb:graph:entities"]}),
    ("text search", "SELECT ?s ?o WHERE { GRAPH ?g { ?s ?p ?o FILTER(CONTAINS(LCASE(STR(?o)), 'zanzibar')) } }", {}),
    ("describe", "DESCRIBE <urn:wb:record:p-van-1> <urn:wb:source:fam-chat-1>",  # described in the source's graph
     {"default-graph-uri": ["urn:wb:source:fam-chat-1", "urn:wb:graph:meta"]}),
    ("reasoning: derived needs", "SELECT * WHERE { GRAPH ?g { ?s <https://w3id.org/workbench/ns#needs> ?o } }",
     {"reasoning": ["true"]}),
    ("reasoning: everything", "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", {"reasoning": ["true"]}),
]
PROBE_ASKS = [
    "ASK { GRAPH <urn:wb:record:p-van-1> { ?s ?p ?o } }",
    "ASK { GRAPH ?g { <urn:wb:record:p-van-1> ?p ?o } }",
    "ASK { GRAPH ?g { ?s ?p ?o FILTER(CONTAINS(STR(?o), 'Zanzibar')) } }",
]


def _sparql(server: Server, token: str, query: str, params: dict[str, list[str]] | None = None) -> httpx.Response:
    fields = [("query", query)] + [(k, v) for k, vs in (params or {}).items() for v in vs]
    return httpx.post(server.url, content=urllib.parse.urlencode(fields),
                      headers={"Authorization": f"Bearer {token}", "Accept": "application/sparql-results+json, text/turtle;q=0.9",
                               "Content-Type": "application/x-www-form-urlencoded"}, timeout=30)


@pytest.mark.parametrize("label,query,params", SPARQL_PROBES, ids=[p[0] for p in SPARQL_PROBES])
def test_over_sparql(servers: tuple[Server, Server], pair: Pair, label: str, query: str,
                     params: dict[str, list[str]]) -> None:
    a, _ = servers
    outsider = _sparql(a, pair.tokens["bob"], query, params)
    assert outsider.status_code == 200, outsider.text
    assert not _leaks(outsider.text)
    family = _sparql(a, pair.tokens["fam"], query, params)
    assert _leaks(family.text)
    for text in (outsider.text, family.text):
        assert not [h for h in pair.hashes() if h in text]


@pytest.mark.parametrize("query", PROBE_ASKS)
def test_sparql_existence_probes(servers: tuple[Server, Server], pair: Pair, query: str) -> None:
    a, _ = servers
    assert _sparql(a, pair.tokens["bob"], query).json()["boolean"] is False
    assert _sparql(a, pair.tokens["fam"], query).json()["boolean"] is True


def test_sparql_counts_match_the_store_without(servers: tuple[Server, Server], pair: Pair) -> None:
    a, b = servers
    query = ("PREFIX wb: <https://w3id.org/workbench/ns#> SELECT (COUNT(?r) AS ?n) WHERE { GRAPH ?m { ?r a wb:Assertion } }")
    count = [_sparql(s, t["bob"], query).json()["results"]["bindings"][0]["n"]["value"]
             for s, t in ((a, pair.tokens), (b, pair.tokens_b))]
    assert count[0] == count[1]


def test_no_token_hashes_even_for_an_admin(servers: tuple[Server, Server], pair: Pair) -> None:
    a, _ = servers
    text = _sparql(a, pair.tokens["root"], "SELECT * WHERE { GRAPH <urn:wb:graph:users> { ?s ?p ?o } }").text
    assert "bob" in text
    assert not [h for h in pair.hashes() if h in text]


# ---------------------------------------------------------------------- on the command line


def _cli(store: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "workbench.cli", "--store", str(store), *args],
                          capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr


@pytest.mark.parametrize("args", [
    ("ask", "Secret Van", "is a", "--json"),
    ("count", "wedding", "--about", "me", "--year", "2026", "--json"),
    ("recall", "what happened in Zanzibar?", "--json"),
    ("show", "p-van-1"),
    ("entities", "resolve", "Secret Van"),
    ("sparql", "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }"),
], ids=lambda a: a[0])
def test_on_the_command_line(pair: Pair, args: tuple[str, ...]) -> None:
    outsider = _cli(_copy(pair.a), "--as", "bob", *args)
    assert not _leaks(outsider), outsider
    assert _leaks(_cli(_copy(pair.a), "--as", "fam", *args))


def _copy(path: Path) -> Path:
    """A copy of a closed store (one process owns an open one)."""
    target = Path(tempfile.mkdtemp()) / "store"
    shutil.copytree(path, target, ignore=shutil.ignore_patterns("workbench.lock", "LOCK"))
    return target


# ---------------------------------------------------------------------- the rule itself

AGENTS = ["alice", "bob", "group:g1", "group:g2"]


@pytest.mark.parametrize("backend", ["memory", "oxigraph", "virtuoso"])
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    visibility=st.lists(st.lists(st.sampled_from(AGENTS), max_size=2, unique=True), min_size=1, max_size=6),
    groups=st.lists(st.sampled_from(["group:g1", "group:g2"]), unique=True),
)
def test_a_reader_sees_exactly_the_records_of_visible_sources(backend: str, request: pytest.FixtureRequest,
                                                              visibility: list[list[str]], groups: list[str]) -> None:
    """Over random visibility, on the store in memory and on both real engines (their readers
    read views built from the server)."""
    store: Store = MemoryStore()
    if backend != "memory":
        server = request.getfixturevalue(f"{backend}_server")
        server.clear()
        store = RemoteStore(server.url)
    wb = Workbench(store, user="root", clock=lambda: FIXED_NOW)
    wb.init()
    records = [{"id": f"r{i}", "statement": f"Note {i}.", "type": "observation", "about": [f"Thing {i}"],
                "visible_to": vis, "source": {"id": f"s{i}", "said_by": "me"}}
               for i, vis in enumerate(visibility)]
    file = Path(tempfile.mkdtemp()) / "records.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in records))
    wb.import_files([file])
    wb.add_user("root", ["admin"])
    wb.add_user("carol", ["viewer"])
    if groups:
        wb.set_groups("carol", join=groups)
    mine = {"carol", *groups}
    expected = {r["id"] for r in records if not r["visible_to"] or mine & set(r["visible_to"])}
    seen = wb.seen_by("carol")
    assert {r.id for r in seen.records()} == expected
    names = {n for e in seen.entities() for n in e.names}
    assert {f"Thing {i}" for i, r in enumerate(records) if r["id"] in expected} <= names
    assert not {f"Thing {i}" for i, r in enumerate(records) if r["id"] not in expected} & names
    wb.close()


def test_on_every_backend(wb: Workbench, tmp_path: Path) -> None:
    """The view is built from any store (here also a real `oxigraph serve`), and follows it."""
    wb.load_sample()
    wb.add_user("tester", ["admin"])
    wb.add_user("bob", ["viewer"])
    before = {r.id for r in wb.seen_by("bob").records()}
    assert "m-family-1" not in before and "m-family-1" in {r.id for r in wb.records()}
    file = tmp_path / "private.jsonl"
    file.write_text(json.dumps(PRIVATE[1]) + "\n")
    wb.import_files([file])
    bob = wb.seen_by("bob")
    assert {r.id for r in bob.records()} == before
    assert bob.count("wedding", about="me", year=2026).to_json() == \
        _without(wb, "p-wedding-1").count("wedding", about="me", year=2026).to_json()
    wb.set_groups("bob", join=["group:family"])
    assert {r.id for r in wb.seen_by("bob").records()} == before | {"m-family-1", "p-wedding-1"}


def _without(wb: Workbench, record_id: str) -> Workbench:
    """The owner's Workbench on a scratch copy of the store without one record."""
    copy = MemoryStore()
    copy.write(Batch(quads=[q for q in wb.store.quads() if record_id not in str(q)]))
    return Workbench(copy, user="tester", clock=lambda: FIXED_NOW)


@pytest.mark.parametrize("suffix", [".trig", ".jsonld"])
def test_an_export_holds_only_what_they_may_see(pair: Pair, tmp_path: Path, suffix: str) -> None:
    outside, inside = tmp_path / f"bob{suffix}", tmp_path / f"fam{suffix}"
    _cli(_copy(pair.a), "--as", "bob", "export", str(outside))
    _cli(_copy(pair.a), "--as", "fam", "export", str(inside))
    assert not _leaks(outside.read_text()) and _leaks(inside.read_text())
    assert not [h for h in pair.hashes() if h in outside.read_text() + inside.read_text()]


def test_who_am_i_groups_and_sparql_through_the_client(pair: Pair) -> None:
    server = Server(_copy(pair.a))
    try:
        root = server.url.removesuffix("/sparql")
        bob, admin = workbench.connect(root, pair.tokens["bob"]), workbench.connect(root, pair.tokens["root"])
        me = bob.me()
        assert me is not None and me.name == "bob" and {r.value for r in me.roles} == {"viewer"}
        query = "SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o FILTER(CONTAINS(STR(?o), 'Zanzibar')) } }"
        assert not _leaks(bob.sparql(query, format="csv").decode())
        with pytest.raises(Forbidden):
            bob.set_groups("bob", join=["group:family"])
        assert admin.set_groups("bob", join=["group:family"]).groups == frozenset({"group:family"})
        assert _leaks(bob.sparql(query, format="csv").decode())
        with pytest.raises(WorkbenchError, match="SPARQL syntax error|parse"):
            bob.sparql("SELECT nonsense")
    finally:
        server.stop()
