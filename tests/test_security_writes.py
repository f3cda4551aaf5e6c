"""One write policy (invariant 11): data from outside never writes Workbench's own graphs or terms.

The matrix tries every write path that brings data in against every graph Workbench keeps for
itself (and its other ``urn:wb:`` graphs), and against its own terms in a record's graph: each is
refused, with the file and line or the request named, and the store is byte for byte as before.
A Workbench export, which holds all of those graphs, is restored into an empty store by its
owner, never imported (tests/test_export.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

from tests.conftest import FIXED_NOW, dump
from tests.test_server import Server
from workbench.errors import Forbidden
from workbench.ids import SYSTEM_GRAPHS
from workbench.service import Workbench


def regression(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.regression(reason)


WB = "https://w3id.org/workbench/ns#"
GRAPHS = sorted([g.value for g in SYSTEM_GRAPHS] + ["urn:wb:graph:other", "urn:wb:source:chat-1",
                                                     "urn:wb:agent:cora", "urn:wb:activity:import:x"])
# A record's graph with Workbench's own terms in it: an agent's role, a token hash, a record's status.
TERMS = {
    "agent's role": (f"<urn:wb:agent:cora> <{WB}role> <{WB}Admin>", ["<urn:wb:agent:cora>", f"<{WB}role>", f"<{WB}Admin>"]),
    "token hash": (f"<urn:x:a> <{WB}tokenHash> \"00\"", ["<urn:x:a>", f"<{WB}tokenHash>", "00"]),
    "a record's status": (f"<urn:wb:record:m-family-1> <{WB}status> <{WB}Retracted>",
                          ["<urn:wb:record:m-family-1>", f"<{WB}status>", f"<{WB}Retracted>"]),
    "the store's revision": (f"<urn:wb:store> <{WB}revision> \"x\"", ["<urn:wb:store>", f"<{WB}revision>", "x"]),
}


def nquads(graph: str, triple: str = '<urn:x:a> <urn:x:b> "c"') -> str:
    return f"{triple} <{graph}> .\n"


def trig(graph: str, triple: str = '<urn:x:a> <urn:x:b> "c"') -> str:
    return f"<{graph}> {{ {triple} . }}\n"


def jsonld(graph: str) -> str:
    return json.dumps({"@id": graph, "@graph": [{"@id": "urn:x:a", "urn:x:b": "c"}]})


def record(triples: list[list[str]], rid: str = "x-1") -> dict[str, object]:
    return {"id": rid, "statement": "An attempt.", "type": "observation",
            "source": {"id": f"src-{rid}", "said_by": "cora"}, "triples": triples}


def make_store(path: Path) -> dict[str, str]:
    with Workbench.open(path, create=True, user="root", clock=lambda: FIXED_NOW) as wb:
        wb.init(sample=True)
        tokens = {"root": wb.add_user("root", ["admin"])}
        tokens["cora"] = wb.add_user("cora", ["curator"])
        tokens["vic"] = wb.add_user("vic", ["viewer"])
    return tokens


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Workbench]:
    make_store(tmp_path / "store")
    with Workbench.open(tmp_path / "store", user="root", clock=lambda: FIXED_NOW) as wb:
        yield wb


def _refused(wb: Workbench, attempt: Callable[[Workbench], object], where: str) -> str:
    before = dump(wb.store)
    with pytest.raises(Forbidden) as caught:
        attempt(wb.acting_as("cora"))
    assert dump(wb.store) == before
    assert where in str(caught.value), str(caught.value)
    return str(caught.value)


# ---------------------------------------------------------------------- embedded, every graph


@pytest.mark.parametrize("graph", GRAPHS)
@pytest.mark.parametrize("suffix", [".nq", ".trig", ".jsonld"])
@regression("the RDF import wrote Workbench's own graphs: a curator made themselves admin")
def test_an_rdf_file_never_writes_workbench_s_own_graphs(local: Workbench, tmp_path: Path, graph: str,
                                                         suffix: str) -> None:
    text = {".nq": nquads, ".trig": trig, ".jsonld": jsonld}[suffix](graph)
    path = tmp_path / f"attack{suffix}"
    path.write_text(text, encoding="utf-8")
    message = _refused(local, lambda wb: wb.import_files([path]), f"{path}:1")
    assert f"<{graph}>" in message


@pytest.mark.parametrize("graph", GRAPHS)
def test_a_record_never_names_workbench_s_own_graphs(local: Workbench, tmp_path: Path, graph: str) -> None:
    path = tmp_path / "attack.jsonl"
    path.write_text(json.dumps(record([[f"<{graph}>", "<urn:x:b>", "c"]])) + "\n", encoding="utf-8")
    _refused(local, lambda wb: wb.import_files([path]), f"{path}:1")


@pytest.mark.parametrize("name", sorted(TERMS))
@pytest.mark.parametrize("suffix", [".nq", ".trig", ".ttl", ".jsonl"])
@regression("the RDF import let a curator say anything of Workbench's own terms")
def test_data_never_uses_workbench_s_own_terms(local: Workbench, tmp_path: Path, name: str, suffix: str) -> None:
    triple, parts = TERMS[name]
    path = tmp_path / f"attack{suffix}"
    if suffix == ".jsonl":
        path.write_text(json.dumps(record([parts])) + "\n", encoding="utf-8")
    elif suffix == ".ttl":
        path.write_text(f"{triple} .\n", encoding="utf-8")
    else:
        path.write_text((nquads if suffix == ".nq" else trig)("urn:wb:record:mine", triple), encoding="utf-8")
    _refused(local, lambda wb: wb.import_files([path]), f"{path}:1")


OWN_IN = {  # one of Workbench's own terms in each position, the rest ordinary
    "subject": "<urn:wb:source:theirs> <urn:x:b> <urn:x:c>",
    "predicate": f"<urn:x:a> <{WB}visibleTo> <urn:x:c>",
    "object": f"<urn:x:a> <urn:x:b> <{WB}Admin>",
}


@pytest.mark.parametrize("first", sorted(OWN_IN))
def test_the_refusal_names_the_first_line_with_an_own_term_wherever_it_stands(local: Workbench, tmp_path: Path,
                                                                             first: str) -> None:
    """The planning pass checks subjects and objects quad by quad but predicates once each, at
    the end; the error still names the first line that uses an own term, in any position."""
    later = [t for k, t in sorted(OWN_IN.items()) if k != first]
    lines = [f'<urn:x:a{i}> <urn:x:b> "c{i}" <urn:wb:record:mine> .' for i in range(40)]
    lines[17] = f"{OWN_IN[first]} <urn:wb:record:mine> ."
    lines[25], lines[31] = (f"{t} <urn:wb:record:mine> ." for t in later)
    path = tmp_path / "attack.nq"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _refused(local, lambda wb: wb.import_files([path]), f"{path}:18")


def test_a_candidate_approved_as_a_record_is_held_to_the_same_policy(local: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "proposed.jsonl"
    path.write_text(json.dumps({**record([TERMS["agent's role"][1]], "c-1")}) + "\n", encoding="utf-8")
    cora = local.acting_as("cora")
    assert cora.import_candidates(path) == ["c-1"]  # the queue holds what was proposed, never a fact
    queued = dump(local.store)
    with pytest.raises(Forbidden, match="^candidate c-1: triples: names <urn:wb:agent:cora>"):
        cora.approve(["c-1"])  # approving imports it, and the import refuses
    assert dump(local.store) == queued
    assert cora.candidate("c-1").status == "pending"


def test_restoring_an_export_is_the_way_back(local: Workbench, tmp_path: Path) -> None:
    out = tmp_path / "backup.nq"
    local.export(out)
    _refused(local, lambda wb: wb.import_files([out]), str(out))
    with Workbench.open(tmp_path / "copy", create=True, user="root", clock=lambda: FIXED_NOW) as copy:
        copy.restore(out)
        assert {u.name for u in copy.users()} == {"root", "cora", "vic"}
        assert copy.record("m-family-1").statement == local.record("m-family-1").statement


# ---------------------------------------------------------------------- over HTTP and the CLI


@dataclass
class Served:
    server: Server
    path: Path
    tokens: dict[str, str]

    @property
    def api(self) -> str:
        return self.server.url.removesuffix("/sparql") + "/api"

    def snapshot(self) -> list[str]:
        r = httpx.get(self.server.url, params={"query": "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }"},
                      headers={"Authorization": f"Bearer {self.tokens['root']}"}, timeout=20)
        assert r.status_code == 200, r.text
        return sorted(json.dumps(b, sort_keys=True) for b in r.json()["results"]["bindings"])

    def post(self, route: str, body: dict[str, object], who: str = "cora") -> httpx.Response:
        return httpx.post(f"{self.api}/{route}", json=body, timeout=20,
                          headers={"Authorization": f"Bearer {self.tokens[who]}"})


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    path = tmp_path_factory.mktemp("served") / "store"
    tokens = make_store(path)
    server = Server(path)
    yield Served(server, path, tokens)
    server.stop()


HTTP_FORMATS = {"nquads": nquads, "trig": trig, "jsonld": jsonld}


@pytest.mark.parametrize("graph", GRAPHS)
@pytest.mark.parametrize("fmt", sorted(HTTP_FORMATS))
def test_an_upload_never_writes_workbench_s_own_graphs(served: Served, graph: str, fmt: str) -> None:
    before = served.snapshot()
    r = served.post("import/rdf", {"format": fmt, "data": HTTP_FORMATS[fmt](graph), "name": "upload"})
    assert r.status_code == 403, r.text
    assert r.json()["error"] == "Forbidden" and graph in r.json()["message"]
    assert "/tmp" not in r.text  # the upload is named, never the server's temporary file
    assert served.snapshot() == before


@pytest.mark.parametrize("graph", GRAPHS)
def test_a_sparql_update_never_writes_workbench_s_own_graphs(served: Served, graph: str) -> None:
    before = served.snapshot()
    r = httpx.post(served.server.url, content=f"INSERT DATA {{ GRAPH <{graph}> {{ <urn:x:a> <urn:x:b> 'c' }} }}",
                   headers={"Authorization": f"Bearer {served.tokens['cora']}",
                            "Content-Type": "application/sparql-update"}, timeout=20)
    assert r.status_code == 403, r.text
    assert served.snapshot() == before


@pytest.mark.parametrize("name", sorted(TERMS))
def test_uploaded_records_never_use_workbench_s_own_terms(served: Served, name: str) -> None:
    before = served.snapshot()
    r = served.post("import/records", {"records": [record([TERMS[name][1]])]})
    assert r.status_code == 403, r.text
    assert r.json()["where"] == "records:1"
    r = httpx.post(served.server.url,
                   content=f"INSERT DATA {{ GRAPH <urn:wb:record:mine> {{ {TERMS[name][0]} }} }}",
                   headers={"Authorization": f"Bearer {served.tokens['cora']}",
                            "Content-Type": "application/sparql-update"}, timeout=20)
    assert r.status_code == 403, r.text
    assert served.snapshot() == before


@regression("POST /api/import/rdf with an N-Quads line into urn:wb:graph:users made a curator admin")
def test_the_escalation_that_was_found(served: Served) -> None:
    attack = f"<urn:wb:agent:cora> <{WB}role> <{WB}Admin> <urn:wb:graph:users> .\n"
    r = served.post("import/rdf", {"format": "nquads", "data": attack})
    assert r.status_code == 403, r.text
    me = httpx.get(f"{served.api}/me", headers={"Authorization": f"Bearer {served.tokens['cora']}"}, timeout=20)
    assert me.json()["roles"] == ["curator"]
    hidden = httpx.get(f"{served.api}/records/m-family-1",
                       headers={"Authorization": f"Bearer {served.tokens['cora']}"}, timeout=20)
    assert hidden.status_code == 404


def test_the_cli_refuses_the_same(tmp_path: Path) -> None:
    make_store(tmp_path / "store")
    attack = tmp_path / "attack.nq"
    attack.write_text(nquads("urn:wb:graph:meta", f"<urn:wb:record:m-family-1> <{WB}status> <{WB}Retracted>"))
    with Workbench.open(tmp_path / "store") as wb:
        before = dump(wb.store)
    for who in (["--as", "cora"], []):  # a curator, and the store's owner: an import is an import
        done = subprocess.run([sys.executable, "-m", "workbench.cli", "--store", str(tmp_path / "store"), *who,
                               "import", str(attack)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done.stdout + done.stderr
        assert done.stderr.startswith(f"error: {attack}:1: writes Workbench's own graph <urn:wb:graph:meta>")
    with Workbench.open(tmp_path / "store") as wb:
        assert dump(wb.store) == before
        assert wb.record("m-family-1").status.value == "active"


def test_every_own_graph_is_covered() -> None:
    """The matrix above runs over every graph Workbench keeps: a new one is in it by construction."""
    assert {g.value for g in SYSTEM_GRAPHS} <= set(GRAPHS)
    assert all(g.startswith("urn:wb:") for g in GRAPHS)
    assert ox.NamedNode("urn:wb:graph:users") in SYSTEM_GRAPHS
