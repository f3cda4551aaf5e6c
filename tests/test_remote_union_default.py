"""Workbench reads only graphs it names: on a server whose default graph is the union of all
named graphs (Amazon Neptune, QLever, Fuseki with ``unionDefaultGraph``, ``oxigraph serve
--union-default-graph``) it answers exactly as on the embedded store. docs/deployment.md relies
on this; here it is a real ``oxigraph serve --union-default-graph``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXED_NOW, ServerProcess, free_port
from tests.test_ask import QUESTIONS, ask_all
from workbench.service import Workbench
from workbench.store import RemoteStore


class UnionDefaultServer(ServerProcess):
    name = "oxigraph serve --union-default-graph"

    def __init__(self, location: Path) -> None:
        binary = shutil.which("oxigraph")
        assert binary, "the `oxigraph` server is not installed: pip install -e '.[test]'"
        self.url = f"http://127.0.0.1:{free_port()}"
        self.start([binary, "serve", "--location", str(location), "--bind", self.url.removeprefix("http://"),
                    "--union-default-graph"], f"{self.url}/query?query=ASK%7B%7D")


@pytest.fixture
def union_server(tmp_path: Path) -> Iterator[UnionDefaultServer]:
    server = UnionDefaultServer(tmp_path / "oxigraph")
    yield server
    server.stop()


def test_a_union_default_graph_changes_no_answer(union_server: UnionDefaultServer, tmp_path: Path) -> None:
    store = RemoteStore(union_server.url)
    # The server's default graph really is the union: a triple in a named graph shows without GRAPH.
    store.update("INSERT DATA { GRAPH <urn:wb:test:g> { <urn:wb:test:s> <urn:wb:test:p> <urn:wb:test:o> } }")
    assert store.ask("ASK { <urn:wb:test:s> <urn:wb:test:p> <urn:wb:test:o> }")
    store.update("DROP GRAPH <urn:wb:test:g>")
    with Workbench(store, user="tester", clock=lambda: FIXED_NOW) as remote:
        remote.init(sample=True)
        over_union = ask_all(remote, QUESTIONS)
        remote_stats = {**remote.stats(), "backend": "-"}
    with Workbench.open(tmp_path / "memory", create=True, user="tester", clock=lambda: FIXED_NOW) as local:
        local.init(sample=True)
        assert ask_all(local, QUESTIONS) == over_union
        assert {**local.stats(), "backend": "-"} == remote_stats


def test_a_readers_query_of_the_default_graph_is_refused_there(union_server: UnionDefaultServer,
                                                              tmp_path: Path) -> None:
    """A reader who may not see every source reads the server through the rewrite; on a server
    whose default graph is every graph, a pattern outside GRAPH would read past the reader's filter:
    refused, found by asking the default graph (Workbench never writes it), not by the engine's name."""
    from workbench.errors import Unsupported

    store = RemoteStore(union_server.url)
    with Workbench(store, user="root", clock=lambda: FIXED_NOW) as wb:
        wb.init(sample=True)
        wb.add_user("root", ["admin"])
        wb.add_user("bob", ["viewer"])
        path = tmp_path / "private.jsonl"
        path.write_text('{"id": "p-1", "statement": "A private note.", "type": "observation", '
                        '"visible_to": ["group:family"], "source": {"id": "fam-1", "said_by": "me"}, '
                        '"triples": [["the family van", "is a", "car"]]}\n')
        wb.import_files([path])
        bob = wb.seen_by("bob")
        with pytest.raises(Unsupported, match="outside GRAPH reads every graph"):
            bob.sparql("SELECT ?s WHERE { ?s ?p ?o }")
        rows = bob.sparql('SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } FILTER(CONTAINS(STR(?g), "p-1")) }')
        assert b"p-1" not in rows
        assert wb.seen_by("root").sparql('SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 1')
        # Workbench's own reads name their graphs: every question still answers there
        assert bob.ask("my car", "needs", "gas").tier.value == "derived"
        assert "p-1" not in {r.id for r in bob.records()}
