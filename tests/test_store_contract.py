"""The Store contract: the same behaviour from the embedded store and a real oxigraph server."""

from __future__ import annotations

import io
import json

import pyoxigraph as ox
import pytest

from tests.conftest import dump
from workbench.errors import ParseError
from workbench.store import Batch, Store

G = ox.NamedNode("urn:test:g")
S, P = ox.NamedNode("urn:test:s"), ox.NamedNode("urn:test:p")


def _quad(o: str, g: ox.NamedNode = G) -> ox.Quad:
    return ox.Quad(S, P, ox.Literal(o), g)


def test_write_then_read_back(store: Store) -> None:
    store.write(Batch(quads=[_quad("a"), _quad("b")]))
    assert store.has_graph(G)
    assert not store.has_graph(ox.NamedNode("urn:test:other"))
    assert sorted(str(q.object) for q in store.quads(G)) == ['"a"', '"b"']
    rows = store.select(f"SELECT ?o WHERE {{ GRAPH {G} {{ ?s ?p ?o }} }} ORDER BY ?o")
    assert [r["o"] for r in rows] == [ox.Literal("a"), ox.Literal("b")]
    assert store.ask(f'ASK {{ GRAPH {G} {{ {S} {P} "a" }} }}')
    triples = store.construct(f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {G} {{ ?s ?p ?o }} }}")
    assert len(triples) == 2


def test_unbound_variables_are_none(store: Store) -> None:
    rows = store.select("SELECT ?x ?y WHERE { BIND(1 AS ?x) }")
    assert rows == [
        {"x": ox.Literal("1", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")), "y": None}
    ]


def test_removals_and_apply_are_atomic_updates(store: Store) -> None:
    store.write(Batch(quads=[_quad("old")]))
    store.write(Batch(quads=[_quad("new")], removals=[_quad("old")]))
    assert [str(q.object) for q in store.quads(G)] == ['"new"']
    store.apply(insert=[_quad("x")], delete=[_quad("new")])
    assert [str(q.object) for q in store.quads(G)] == ['"x"']
    store.apply(drop=[G])
    assert not store.has_graph(G)


@pytest.mark.parametrize(
    ("fmt", "check"),
    [
        (ox.QueryResultsFormat.JSON, lambda b: json.loads(b)["results"]["bindings"][0]["o"]["value"] == "a"),
        (ox.QueryResultsFormat.CSV, lambda b: b.decode().splitlines() == ["o", "a"]),
        (ox.QueryResultsFormat.TSV, lambda b: b.decode().splitlines() == ["?o", '"a"']),
        (ox.QueryResultsFormat.XML, lambda b: b"<literal>a</literal>" in b),
    ],
)
def test_results_serialise_in_every_format(store: Store, fmt: ox.QueryResultsFormat, check) -> None:  # type: ignore[no-untyped-def]
    store.write(Batch(quads=[_quad("a")]))
    raw = store.query_raw(f"SELECT ?o WHERE {{ GRAPH {G} {{ ?s ?p ?o }} }}", results=fmt, graph=ox.RdfFormat.TURTLE)
    assert check(raw), raw


def test_construct_serialises_as_rdf(store: Store) -> None:
    store.write(Batch(quads=[_quad("a")]))
    raw = store.query_raw(
        f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {G} {{ ?s ?p ?o }} }}",
        results=ox.QueryResultsFormat.JSON,
        graph=ox.RdfFormat.N_TRIPLES,
    )
    assert [str(t) for t in ox.parse(raw, ox.RdfFormat.N_TRIPLES)] == [f'{S} {P} "a"']


def test_syntax_errors_are_parse_errors_and_change_nothing(store: Store) -> None:
    store.write(Batch(quads=[_quad("a")]))
    before = dump(store)
    with pytest.raises(ParseError):
        store.select("SELECT ?x WHERE { ?x")
    with pytest.raises(ParseError):
        store.update("INSERT DATA { <urn:a> <urn:b> }")
    assert dump(store) == before


def test_dump_writes_a_dataset(store: Store) -> None:
    store.write(Batch(quads=[_quad("a")]))
    out = io.BytesIO()
    store.dump(out, format=ox.RdfFormat.N_QUADS)
    assert [q for q in ox.parse(out.getvalue(), ox.RdfFormat.N_QUADS)] == [_quad("a")]


def test_capabilities_are_declared(store: Store) -> None:
    caps = store.capabilities
    assert caps.name in {"embedded", "remote"}
    assert caps.crash_safe_imports
    assert store.location


def test_a_failing_check_undoes_the_whole_write(store: Store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from workbench.errors import Invalid
    from workbench.store import FileLoad

    store.write(Batch(quads=[_quad("kept")]))
    before = dump(store)
    data = tmp_path / "more.nq"
    data.write_bytes(ox.serialize([_quad(f"file-{i}", ox.NamedNode("urn:test:file")) for i in range(3)],
                                  format=ox.RdfFormat.N_QUADS) or b"")

    def refuse() -> list[ox.Quad]:
        raise Invalid("the plan failed")

    with pytest.raises(Invalid):
        store.write(Batch(quads=[_quad("new")], files=[FileLoad(data, ox.RdfFormat.N_QUADS)], removals=[_quad("kept")]),
                    check=refuse)
    assert dump(store) == before
    store.write(Batch(files=[FileLoad(data, ox.RdfFormat.N_QUADS)]), check=lambda: [_quad("meta")])
    assert len(list(store.quads(ox.NamedNode("urn:test:file")))) == 3
    assert ox.Literal("meta") in {q.object for q in store.quads(G)}
