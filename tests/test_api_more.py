"""The rest of the JSON API (entities, imports, review, records over time, rules, eval, users)
against a real `workbench serve` process, with the Python client.

The store (sample data, four users, queued candidates, an approved summary, a proposed rule
version) is copied before the server starts: the copy (the *twin*) gets every call the embedded
way, the server the same call through ``workbench.connect``, and their answers must be equal
(``to_json()`` after a JSON round trip; times and activity IRIs masked where each side stamps its
own). Bad input is 400 naming the field or the line, a missing role 403, and neither changes the
store (every quad, through /sparql, before and after).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

import workbench
from tests.test_server import Server
from workbench.client import Client
from workbench.errors import Forbidden, Invalid, NotFound, ParseError
from workbench.resources import RULES_DIR
from workbench.server.routes import TABLE
from workbench.service import Workbench
from workbench.service import evaluation as ev
from workbench.values.records import Record, Tombstone

TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
ACT = re.compile(r"urn:wb:activity:[^\s\"'<>]+")
PATH = re.compile(r"(?:/[^/\s\";]+)+/([^/\s\";]+)")  # a file path: its base name stays


def _cand(cid: str, statement: str) -> dict[str, Any]:
    return {"id": cid, "statement": statement, "type": "observation", "about": ["Ravi"],
            "source": {"id": f"chat-{cid}", "said_by": "me"}}


def _rec(rid: str, statement: str, **more: Any) -> dict[str, Any]:
    return {"id": rid, "statement": statement, "type": "observation", "about": ["Quinn"],
            "source": {"id": f"src-{rid}", "said_by": "me"}, **more}


def _json(value: Any) -> Any:
    """What a client can compare: to_json() where there is one, after a JSON round trip."""
    if isinstance(value, (list, tuple)):
        value = [v.to_json() if hasattr(v, "to_json") else v for v in value]
    elif hasattr(value, "to_json"):
        value = value.to_json()
    elif hasattr(value, "value"):  # an IRI
        value = value.value
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def _masked(value: Any, *, paths: bool = False) -> Any:
    """``_json(value)`` with times and activity IRIs (each side stamps its own) masked; with
    ``paths``, file paths cut to their base name (an upload's temporary file, the twin's file)."""
    text = ACT.sub("<act>", TIME.sub("<time>", json.dumps(_json(value), sort_keys=True)))
    return json.loads(PATH.sub(r"\1", text) if paths else text)


def _rule_v(version: int) -> str:
    text = (RULES_DIR / "kind-of.ttl").read_text(encoding="utf-8")
    return text.replace("kind-of-v1", f"kind-of-v{version}").replace("wb:ruleVersion 1", f"wb:ruleVersion {version}") \
        .replace("wb:ruleStatus wb:Active", "wb:ruleStatus wb:Draft")


@dataclass
class Api:
    server: Server
    path: Path
    twin_path: Path
    tokens: dict[str, str]

    @property
    def root(self) -> str:
        return self.server.url.removesuffix("/sparql")

    def client(self, who: str | None = None) -> Client:
        return workbench.connect(self.root, self.tokens[who] if who else None, timeout=60)

    @contextmanager
    def twin(self, who: str) -> Iterator[Workbench]:
        """The copy of the store, embedded, acting as ``who``."""
        with Workbench.open(self.twin_path, user=who) as wb:
            yield wb

    def snapshot(self) -> list[str]:
        """Every quad in the store, through /sparql as the admin."""
        r = httpx.get(self.server.url, params={"query": "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }"},
                      headers={"Authorization": f"Bearer {self.tokens['root']}"}, timeout=30)
        assert r.status_code == 200, r.text
        return sorted(json.dumps(b, sort_keys=True) for b in r.json()["results"]["bindings"])

    def http(self, method: str, path: str, who: str | None, *, headers: dict[str, str] | None = None,
             **kw: Any) -> httpx.Response:
        sent = {**(headers or {}), **({"Authorization": f"Bearer {self.tokens[who]}"} if who else {})}
        return httpx.request(method, self.root + path, headers=sent, timeout=60, **kw)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    base = tmp_path_factory.mktemp("api-more")
    path, twin = base / "store", base / "twin"
    queued = base / "c.jsonl"
    summary = {"id": "s-atlas", "summary": "Atlas keeps customer data in the EU.", "of": ["d-atlas-region-2"]}
    rows = [_cand("c-1", "Ravi likes tea."), _cand("c-2", "Ravi likes green tea."),
            _cand("c-3", "Ravi drinks coffee."), _cand("c-4", "Ravi drinks coffee!"), summary]
    queued.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (base / "kind-of-v2.ttl").write_text(_rule_v(2), encoding="utf-8")
    with Workbench.open(path, create=True, user="root") as wb:
        wb.init(sample=True)
        tokens = {"root": wb.add_user("root", ["admin"])}
        for name, role in (("cora", "curator"), ("vic", "viewer"), ("rex", "reviewer")):
            tokens[name] = wb.add_user(name, [role])
        as_cora = Workbench(wb.store, user="cora")
        as_cora.import_candidates(queued)
        as_cora.approve(["s-atlas"])
        as_cora.propose_rules(base / "kind-of-v2.ttl")
    shutil.copytree(path, twin)
    server = Server(path)
    yield Api(server, path, twin, tokens)
    server.stop()


# ---------------------------------------------------------------------- reads: the same answers

READS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("entities", (), {}),
    ("entity", ("Paris",), {}),
    ("entity", ("urn:wb:entity:paris",), {}),
    ("resolve", ("巴黎",), {}),
    ("resolve", ("Nobody Known",), {}),
    ("candidate", ("c-1",), {}),
    ("check_candidate", ("c-1",), {}),
    ("check_candidate", ("c-3",), {}),
    ("summaries", (), {}),
    ("summaries", (), {"of": "d-atlas-region-2", "include_stale": True}),
    ("audit", ("d-atlas-region-2",), {}),
    ("history", ("d-atlas-region-2",), {}),
    ("rule_list", (), {}),
    ("rule_versions", (), {}),
    ("rule_versions", ("kind-of",), {}),
    ("run_rule_tests", ("kind-of",), {}),
    ("run_rule_tests", ("inherit-kind",), {}),
    ("dry_run_rule", ("kind-of",), {}),
    ("rule_history", ("kind-of",), {}),
    ("users", (), {}),
]


def _tests_json(result: tuple[str, list[Any]]) -> Any:
    label, cases = result
    return [label, [[c.rule, c.case, list(c.missing), list(c.unwanted), c.passed] for c in cases]]


@pytest.mark.parametrize("index", range(len(READS)), ids=[f"{r[0]}-{i}" for i, r in enumerate(READS)])
def test_reads_answer_as_the_embedded_api(api: Api, index: int) -> None:
    name, args, kwargs = READS[index]
    with api.twin("root") as wb:
        expected = getattr(wb, name)(*args, **kwargs)
    got = getattr(api.client("root"), name)(*args, **kwargs)
    if name == "run_rule_tests":
        assert _tests_json(got) == _tests_json(expected)
    else:
        assert _json(got) == _json(expected)
        if isinstance(got, list):
            assert [type(g) for g in got] == [type(e) for e in expected]
        else:
            assert type(got) is type(expected)


def test_rebuilt_types_behave(api: Api) -> None:
    client = api.client("root")
    assert client.resolve("Paris").entity == "urn:wb:entity:paris"
    assert client.check_candidate("c-1").unbound == []
    history = client.history("d-atlas-region-2")
    assert all(isinstance(h, Record) for h in history) and history[-1].id == "d-atlas-region-2"
    versions = client.rule_versions("kind-of")
    assert versions[0].label == "kind-of v2" and "ruleVersion 2" in versions[0].text
    assert client.dry_run_rule("kind-of").text().startswith("dry run of kind-of v2")


def test_eval_answers_as_the_embedded_run(api: Api) -> None:
    with api.twin("root") as wb:
        expected = ev.evaluate(wb, ev.load_set(ev.DEV_SET), set_name="dev", k=5).to_json()
    got = api.client("root").evaluate("dev", k=5)
    assert _json(got) == _json(expected)
    assert got["workbench"]["totals"]["questions"] == len(ev.load_set(ev.DEV_SET))


def test_export_rules_writes_the_same_files(api: Api, tmp_path: Path) -> None:
    with api.twin("root") as wb:
        expected = wb.export_rules(tmp_path / "embedded")
    got = api.client("root").export_rules(tmp_path / "client")
    assert [p.name for p in got] == [p.name for p in expected] == ["kind-of.ttl"]
    assert [p.read_text() for p in got] == [p.read_text() for p in expected]
    assert got[0].parent == tmp_path / "client"


# ---------------------------------------------------------------------- bad input: 400, nothing changed

GOOD_TTL = "<urn:wb:entity:zed> <http://www.w3.org/2004/02/skos/core#prefLabel> \"zed\" .\n"
BAD_LINES = json.dumps(_rec("q-1", "fine")) + "\n" + json.dumps({**_rec("q-2", "bad"), "type": "gossip"}) + "\n"

BAD: list[tuple[str, str, dict[str, Any], str, str]] = [
    # (method, path, JSON body or query, the field or line named, a word of the message)
    ("POST", "/api/entities", {"name": 3}, "name", "string"),
    ("POST", "/api/entities", {"name": "a\ud800"}, "name", "Unicode"),
    ("POST", "/api/entities", {"name": "Nowhere", "lang": "not a tag!"}, "lang", "language tag"),
    ("POST", "/api/entities/alias", {"entity": "Paris"}, "alias", "required"),
    ("POST", "/api/entities/merge", {"keep": "a", "other": "b"}, "reason", "required"),
    ("POST", "/api/entities/split", {"entity": "x", "reason": 1}, "reason", "string"),
    ("GET", "/api/entity", {}, "ref", "required"),
    ("GET", "/api/resolve", {"name": "x", "lang": "en"}, "lang", "unknown"),
    ("POST", "/api/import/records", {"records": 5}, "records", "string or an array"),
    ("POST", "/api/import/records", {"records": [_rec("q-1", "fine"), 2]}, "records", "item 2"),
    ("POST", "/api/import/records", {"records": BAD_LINES}, "records:2", "gossip"),
    ("POST", "/api/import/records", {"records": [_rec("q-1", "fine"), {**_rec("q-2", "x"), "type": 7}]},
     "records:2", "type"),
    ("POST", "/api/import/records", {"records": "{not json\n", "name": "mine.jsonl"}, "mine.jsonl:1", "JSON"),
    ("POST", "/api/import/records", {"records": [{**_rec("q-1", "a"), "statement": 1}], "name": "../x"}, "x:1",
     "statement"),
    ("POST", "/api/import/records", {"records": [_rec("q-1", "a")], "name": "/"}, "name", "file name"),
    ("POST", "/api/import/rdf", {"data": GOOD_TTL, "format": "gif"}, "format", "turtle"),
    ("POST", "/api/import/rdf", {"data": GOOD_TTL}, "format", "required"),
    ("POST", "/api/import/rdf", {"data": "<urn:a> <urn:b> .\n", "format": "ntriples"}, "data", "line 1"),
    ("POST", "/api/import/rdf", {"data": GOOD_TTL, "format": "turtle", "type": "gossip"}, "type", "gossip"),
    ("POST", "/api/import/rdf", {"data": GOOD_TTL, "format": "turtle", "visible_to": "me"}, "visible_to", "array"),
    ("POST", "/api/review/merge", {"keep": "c-3", "others": "c-4"}, "others", "array"),
    ("GET", "/api/summaries", {"include_stale": "maybe"}, "include_stale", "true or false"),
    ("POST", "/api/records/supersede", {"id": "m-car-1", "reason": "r"}, "by", "required"),
    ("POST", "/api/records/retract", {"id": "m-car-1"}, "reason", "required"),
    ("POST", "/api/records/erase", {"reason": "x"}, "id", "required"),
    ("POST", "/api/rules/propose", {"text": 1}, "text", "string"),
    ("POST", "/api/rules/propose", {"text": "@prefix x: <urn:x> .\nx:a x:b ."}, "rules.ttl", "line 2"),
    ("POST", "/api/rules/propose", {"text": _rule_v(3).replace("sh:rule rule", "sh:rule; rule"),
                                    "name": "mine.ttl"}, "mine.ttl", "line"),
    ("GET", "/api/rules/kind-of/test", {"version": "two"}, "version", "integer"),
    ("GET", "/api/rules/kind-of/dry-run", {"version": "x"}, "version", "integer"),
    ("POST", "/api/rules/signoff", {"rule": "kind-of"}, "comment", "required"),
    ("POST", "/api/rules/retire", {"rule": "kind-of", "reason": "x", "version": "2"}, "version", "integer"),
    ("GET", "/api/eval", {"set": "/etc/passwd"}, "set", "dev"),
    ("GET", "/api/eval", {"k": "0"}, "k", "at least"),
    ("POST", "/api/users", {"name": "x", "roles": "admin"}, "roles", "array"),
    ("POST", "/api/users", {"name": "x", "roles": ["admin"], "extra": 1}, "extra", "unknown"),
    ("POST", "/api/review/approve", {"ids": "not a list"}, "ids", "array"),
]


@pytest.mark.parametrize(("method", "path", "given", "named", "says"), BAD,
                         ids=[f"{b[1]}-{b[3]}" for b in BAD])
def test_bad_input_is_400_naming_the_field_or_line(api: Api, method: str, path: str, given: dict[str, Any],
                                                   named: str, says: str) -> None:
    before = api.snapshot()
    kw: dict[str, Any] = {"params": given}
    if method == "POST":  # as JSON escapes: a lone surrogate is sent as \\ud800, as any JSON client may
        kw = {"content": json.dumps(given).encode(), "headers": {"Content-Type": "application/json"}}
    r = api.http(method, path, "root", **kw)
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["error"] in ("Invalid", "ParseError") and body["where"] == named, body
    assert says in body["message"], body
    assert "workbench-upload" not in r.text  # the temporary file is never named
    assert api.snapshot() == before


def test_client_errors_map_back(api: Api, tmp_path: Path) -> None:
    cora = api.client("cora")
    with pytest.raises(Invalid) as bad:
        cora.import_records(BAD_LINES)
    assert bad.value.where == "records:2"
    with pytest.raises(ParseError):
        cora.propose_rules(_write(tmp_path / "r.ttl", "@prefix x: <urn:x> .\nx:a x:b ."))
    with pytest.raises(NotFound):
        cora.candidate("c-none")
    with pytest.raises(NotFound):
        cora.rule_history("no-such-rule")
    with pytest.raises(Invalid, match="one file at a time"):
        cora.import_files([tmp_path / "a.jsonl", tmp_path / "b.jsonl"])


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------- roles: 403 (or 401), nothing changed

WRITES: list[tuple[str, tuple[Any, ...], dict[str, Any], str]] = [
    # (client method, args, kwargs, who tries: without the role it needs)
    ("add_entity", ("Nowhere",), {}, "vic"),
    ("add_alias", ("Paris", "Lutetia"), {}, "vic"),
    ("merge", ("Paris", "Berlin"), {"reason": "no"}, "vic"),
    ("split", ("Paris",), {"reason": "no"}, "vic"),
    ("import_records", ([_rec("q-9", "Quinn is here.")],), {}, "vic"),
    ("import_rdf", (GOOD_TTL,), {"format": "turtle"}, "vic"),
    ("import_records", ([_rec("q-9", "Quinn is here.")],), {}, "rex"),
    ("merge_candidates", ("c-3", ["c-4"]), {}, "vic"),
    ("supersede", ("m-car-1", "m-sparky-1"), {"reason": "no"}, "vic"),
    ("retract", ("m-car-1",), {"reason": "no"}, "vic"),
    ("erase", ("m-car-1",), {"reason": "no"}, "vic"),
    ("erase", ("m-car-1",), {"reason": "no"}, "cora"),
    ("propose_rules", ("RULE_FILE",), {}, "vic"),
    ("signoff_rule", ("kind-of",), {"comment": "fine"}, "vic"),
    ("signoff_rule", ("kind-of",), {"comment": "fine"}, "cora"),
    ("retire_rule", ("inherit-kind",), {"reason": "no"}, "cora"),
    ("add_user", ("mallory", ["admin"]), {}, "cora"),
    ("users", (), {}, "vic"),
]


@pytest.mark.parametrize(("name", "args", "kwargs", "who"), WRITES, ids=[f"{w[0]}-{w[3]}" for w in WRITES])
def test_a_missing_role_is_403_and_changes_nothing(api: Api, tmp_path: Path, name: str, args: tuple[Any, ...],
                                                   kwargs: dict[str, Any], who: str) -> None:
    args = tuple(_write(tmp_path / "k.ttl", _rule_v(5)) if a == "RULE_FILE" else a for a in args)
    before = api.snapshot()
    with pytest.raises(Forbidden, match="role") as refused:
        getattr(api.client(who), name)(*args, **kwargs)
    assert who in str(refused.value)
    with pytest.raises(Forbidden):  # no token at all: 401, which the client raises as Forbidden
        getattr(api.client(), name)(*args, **kwargs)
    assert api.snapshot() == before


def test_writes_without_a_token_are_401(api: Api) -> None:
    for route in (r for r in TABLE if r.writes):
        r = httpx.request(route.method, api.root + route.path, json={}, timeout=30)
        assert r.status_code == 401 and r.json()["error"] == "Unauthorized", route.name
        assert r.headers["www-authenticate"].startswith("Bearer")


# ---------------------------------------------------------------------- writes: the same acts, run last


def _both(api: Api, who: str, name: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """The call through the client, then the same on the twin: (client's, embedded)."""
    got = getattr(api.client(who), name)(*args, **kwargs)
    with api.twin(who) as wb:
        return got, getattr(wb, name)(*args, **kwargs)


def test_entities_change_as_embedded(api: Api) -> None:
    for name, args, kwargs in [("add_entity", ("Quinn",), {}), ("add_entity", ("Quinn Q.",), {"lang": "en"}),
                               ("add_alias", ("Quinn", "Q"), {"lang": "en"}), ("merge", ("Quinn", "Quinn Q."),
                                                                              {"reason": "the same person"}),
                               ("split", ("Quinn Q.",), {"reason": "not after all"})]:
        got, expected = _both(api, "cora", name, *args, **kwargs)
        assert _masked(got) == _masked(expected), name
    got, expected = _both(api, "root", "entities")
    assert _json(got) == _json(expected)
    assert api.client("root").entity("Q").names == ("Quinn",)


def test_imports_land_as_embedded(api: Api, tmp_path: Path) -> None:
    lines = "".join(json.dumps(r) + "\n" for r in (_rec("q-1", "Quinn likes tea."), _rec("q-2", "Quinn likes jam.")))
    file = _write(tmp_path / "quinn.jsonl", lines)
    got = api.client("cora").import_records(lines, name="quinn.jsonl")
    with api.twin("cora") as wb:  # the twin's provenance names what the server's names: the upload
        expected = wb.import_files([file], used=[f"upload:{file.name}"])
    assert _masked(got, paths=True) == _masked(expected, paths=True)
    assert got.records_added == 2 and got.files == ("quinn.jsonl",)
    # An array of record objects, and a local file through import_files, land the same way.
    as_array = api.client("cora").import_records([_rec("q-3", "Quinn likes rye.")])
    got_file = api.client("root").import_files([_write(tmp_path / "q4.jsonl", json.dumps(_rec("q-4", "Q4.")))])
    with api.twin("cora") as wb:
        q3 = _write(tmp_path / "records.jsonl", json.dumps(_rec("q-3", "Quinn likes rye.")))
        expected_array = wb.import_files([q3], used=["upload:records.jsonl"])
    with api.twin("root") as wb:
        expected_file = wb.import_files([tmp_path / "q4.jsonl"], used=["upload:q4.jsonl"])
    assert as_array.files == ("records",)  # an upload with no name is called after its field
    assert {**_masked(as_array), "files": []} == {**_masked(expected_array), "files": []}
    assert _masked(got_file, paths=True) == _masked(expected_file, paths=True)
    # RDF with its options; the record keeps the upload's name as its source.
    ttl = _write(tmp_path / "zed.ttl", GOOD_TTL)
    options = {"record_type": "observation", "said_by": "me", "statement": "Zed is called zed."}
    got = api.client("cora").import_files([ttl], **options)
    with api.twin("cora") as wb:
        expected = wb.import_files([ttl], **options, used=[f"upload:{ttl.name}"])  # what the client's upload says
    assert _masked(got, paths=True) == _masked(expected, paths=True) and got.records_added == 1
    assert api.client("root").record("zed.ttl").source.locator == "upload:zed.ttl"  # never a temporary path
    for rid in ("q-1", "q-3", "zed.ttl"):
        seen = api.client("root").record(rid)
        with api.twin("root") as wb:
            assert _masked(seen, paths=True) == _masked(wb.record(rid), paths=True), rid
    trig = "<urn:wb:entity:y> <http://www.w3.org/2004/02/skos/core#prefLabel> \"why\" .\n"
    report = api.client("cora").import_rdf(trig, format="ntriples", name="why", source="why-src")
    assert report.records_added == 1 and report.files == ("why",)
    with api.twin("cora") as wb:
        wb.import_files([_write(tmp_path / "why.nt", trig)], source="why-src")


def test_review_and_records_over_time_as_embedded(api: Api) -> None:
    got, expected = _both(api, "cora", "merge_candidates", "c-3", ["c-4"])
    assert got is None and expected is None
    got, expected = _both(api, "root", "candidate", "c-4")
    assert _masked(got) == _masked(expected) and got.merged_into == "urn:wb:candidate:c-3"
    for name, args, kwargs in [("supersede", ("q-1", "q-2"), {"reason": "corrected"}),
                               ("retract", ("q-3",), {"reason": "withdrawn"})]:
        got, expected = _both(api, "cora", name, *args, **kwargs)
        assert got is None and expected is None
    for rid in ("q-1", "q-2", "q-3"):
        got, expected = _both(api, "root", "history", rid)
        assert _masked(got) == _masked(expected)
        got, expected = _both(api, "root", "audit", rid)
        assert _masked(got, paths=True) == _masked(expected, paths=True)
    stone, expected_stone = _both(api, "root", "erase", "q-2", reason="asked to forget")
    assert isinstance(stone, Tombstone) and _masked(stone) == _masked(expected_stone)
    assert stone.erased_by == "root"
    got, expected = _both(api, "root", "history", "q-2")
    assert [type(h) for h in got] == [Tombstone] and _masked(got) == _masked(expected)
    with pytest.raises(NotFound):
        api.client("root").record("q-2")


def test_the_rule_lifecycle_as_embedded(api: Api, tmp_path: Path) -> None:
    rule = _write(tmp_path / "kind-of-v3.ttl", _rule_v(3))
    got, expected = _both(api, "cora", "propose_rules", rule)
    assert _json(got) == _json(expected) == [{"id": "kind-of", "version": 3, "outcome": "proposed"}]
    got, expected = _both(api, "root", "dry_run_rule", "kind-of", 3)
    assert _json(got) == _json(expected)
    got, expected = _both(api, "rex", "signoff_rule", "kind-of", comment="read the dry run", version=2)
    assert _masked(got) == _masked(expected) and got.status == "active" and got.signed_off.who == "rex"
    got, expected = _both(api, "rex", "retire_rule", "kind-of", reason="too broad", version=3)
    assert _masked(got) == _masked(expected) and got.status == "retired"
    for name in ("rule_history", "rule_versions"):
        got, expected = _both(api, "root", name, "kind-of")
        assert _masked(got) == _masked(expected)
    got, expected = _both(api, "root", "rule_list")
    assert _json(got) == _json(expected)
    assert any(r["where"] == "store" and r["version"] == 2 and r["answers"] for r in got)
    assert api.client("vic").ask("my car", "needs", "gas").tier is workbench.Tier.DERIVED  # rules still answer


def test_users_are_added_as_embedded(api: Api) -> None:
    token = api.client("root").add_user("newbie", ["viewer"], groups=["group:atlas"])
    with api.twin("root") as wb:
        wb.add_user("newbie", ["viewer"], groups=["group:atlas"])
    assert token.startswith("wb_")
    got, expected = _both(api, "root", "users")
    assert _json(got) == _json(expected) and "newbie" in [u.name for u in got]
    assert workbench.connect(api.root, token).resolve("Paris").outcome == "bound"  # the token works at once
    with pytest.raises(workbench.Conflict):
        api.client("root").add_user("newbie", ["viewer"])


def test_relations_rules_may_conclude_as_embedded(api: Api) -> None:
    with api.twin("root") as wb:
        expected = wb.relations()
    assert api.client("vic").relations() == expected and "https://w3id.org/workbench/ns#needs" in expected


def test_the_store_matches_its_twin_after_every_write(api: Api) -> None:
    """The same acts, one through the server and one embedded, leave the same counts."""
    with api.twin("root") as wb:
        expected = wb.stats()
    got = api.client("root").stats()
    assert {k: v for k, v in got.items() if k != "backend"} == {k: v for k, v in expected.items() if k != "backend"}


def test_a_relation_imported_through_the_api_answers_at_once(api: Api) -> None:
    ttl = ("@prefix wb: <https://w3id.org/workbench/ns#> .\n<https://example.org/adores> wb:relationLabel \"adores\" ."
           "\n<urn:wb:entity:paris> <https://example.org/adores> <urn:wb:entity:paris> .\n")
    api.client("cora").import_rdf(ttl, format="turtle", name="adores")
    assert api.client("root").ask("Paris", "adores").values == ["Paris"]


# ---------------------------------------------------------------------- the schema


def test_openapi_documents_every_route_and_its_errors(api: Api) -> None:
    doc = api.http("GET", "/api/openapi.json", "vic").json()
    ops = {op["operationId"]: op for ops in doc["paths"].values() for op in ops.values()}
    assert set(ops) == {r.name for r in TABLE}
    for route in TABLE:
        op = ops[route.name]
        assert op["responses"]["200"]["content"]["application/json"]["schema"]["type"] in ("object", "array", "null")
        for code in ("400", "401", "403", "404", "409", "413"):
            schema = op["responses"][code]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/Error"}, (route.name, code)
        assert ("security" in op) == route.writes
        assert op.get("x-role") == route.role
    assert doc["components"]["schemas"]["Error"]["required"] == ["error", "message"]
    records = doc["paths"]["/api/import/records"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert records["properties"]["records"]["type"] == ["string", "array"] and records["required"] == ["records"]
