"""The Store contract: the same behaviour from the embedded store, a real ``oxigraph serve`` and a
real Virtuoso."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator

import pyoxigraph as ox
import pytest

from tests.conftest import dump, empty_store
from workbench.errors import ParseError, WorkbenchError
from workbench.store import Batch, Store

G = ox.NamedNode("urn:test:g")
S, P = ox.NamedNode("urn:test:s"), ox.NamedNode("urn:test:p")


@pytest.fixture(params=["embedded", "remote", "virtuoso"])
def store(request: pytest.FixtureRequest, tmp_path) -> Iterator[Store]:  # type: ignore[no-untyped-def]
    """Every backend, Virtuoso too."""
    s = empty_store(request, tmp_path)
    yield s
    s.close()


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


def test_an_empty_store_has_no_graphs(store: Store) -> None:
    """A server's own graphs (Virtuoso keeps its schema in a few) are not the store's."""
    assert store.graph_names() == frozenset()
    assert list(store.quads()) == []
    store.write(Batch(quads=[_quad("a")]))
    assert store.graph_names() == frozenset({G})


def test_blank_nodes_are_written_and_read_back(store: Store) -> None:
    node = ox.BlankNode()
    store.write(Batch(quads=[ox.Quad(S, P, node, G), ox.Quad(node, P, ox.Literal("inside"), G)]))
    rows = store.select(f'SELECT ?b WHERE {{ GRAPH {G} {{ {S} {P} ?b . ?b {P} "inside" }} }}')
    assert len(rows) == 1 and isinstance(rows[0]["b"], ox.BlankNode)
    store.apply(insert=[ox.Quad(S, P, ox.BlankNode(), G)])  # the small write's way too
    assert len(store.select(f"SELECT ?b WHERE {{ GRAPH {G} {{ {S} {P} ?b FILTER(isBlank(?b)) }} }}")) == 2


XSD = "http://www.w3.org/2001/XMLSchema#"


@pytest.mark.parametrize(("written", "kind"), [
    ("1.50", "decimal"), ("01", "integer"), ("1e3", "double"), ("true", "boolean"), ("-3", "negativeInteger"),
    ("2026-11-30T12:00:00Z", "dateTime"),
])
def test_a_typed_literal_comes_back_with_an_equal_value(store: Store, written: str, kind: str) -> None:
    """Engines keep a literal's value, not always its spelling (pyoxigraph and Virtuoso both write
    "1.50" as "1.5"; Virtuoso's JSON writes true as "1"): equal as values, on every backend."""
    lit = ox.Literal(written, datatype=ox.NamedNode(XSD + kind))
    store.write(Batch(quads=[ox.Quad(S, P, lit, G)]))
    back = [q.object for q in store.quads(G)]
    assert len(back) == 1
    assert store.ask(f"ASK {{ GRAPH {G} {{ {S} {P} ?o FILTER(?o = {lit}) }} }}")
    assert store.ask(f"ASK {{ FILTER({back[0]} = {lit}) }}")


@pytest.mark.parametrize("fmt", [ox.QueryResultsFormat.JSON, ox.QueryResultsFormat.XML])
def test_ask_answers_a_boolean_in_each_format(store: Store, fmt: ox.QueryResultsFormat) -> None:
    store.write(Batch(quads=[_quad("a")]))
    for query, expected in ((f"ASK {{ GRAPH {G} {{ ?s ?p ?o }} }}", True), ("ASK { FILTER(false) }", False)):
        raw = store.query_raw(query, results=fmt, graph=ox.RdfFormat.TURTLE)
        assert bool(ox.parse_query_results(raw, fmt)) is expected, raw


def test_construct_serialises_as_turtle_and_select_as_asked(store: Store) -> None:
    """The answer is in the format asked for, whatever the query's form (Virtuoso answers by the
    Accept header's order alone: a CONSTRUCT asked with a results format first came back as a table)."""
    store.write(Batch(quads=[_quad("a")]))
    raw = store.query_raw(f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {G} {{ ?s ?p ?o }} }}",
                          results=ox.QueryResultsFormat.JSON, graph=ox.RdfFormat.TURTLE)
    assert [str(t) for t in ox.parse(raw, ox.RdfFormat.TURTLE)] == [f'{S} {P} "a"']
    raw = store.query_raw(f"SELECT ?o WHERE {{ GRAPH {G} {{ ?s ?p ?o }} }}",
                          results=ox.QueryResultsFormat.JSON, graph=ox.RdfFormat.TURTLE)
    assert json.loads(raw)["results"]["bindings"][0]["o"]["value"] == "a"


def test_the_engine_is_named(store: Store, request: pytest.FixtureRequest) -> None:
    """A remote store says which engine's differences it found when it opened (docs/deployment.md)."""
    backend = request.node.callspec.params["store"]
    assert store.capabilities.engine == {"embedded": "", "remote": "sparql", "virtuoso": "virtuoso"}[backend]


def test_a_write_that_fails_on_the_server_changes_nothing(store: Store) -> None:
    """Removals and insertions land together or not at all, even where the server would apply
    part of a request of several operations (Virtuoso 7: they go as one operation there)."""
    store.write(Batch(quads=[_quad("kept")]))
    before = dump(store)
    bad = ox.Literal("P1D", datatype=ox.NamedNode(XSD + "duration"))  # Virtuoso 7 has no durations
    with contextlib.suppress(WorkbenchError):  # a server may refuse it, or keep it
        store.write(Batch(quads=[_quad("new"), ox.Quad(S, P, bad, G)], removals=[_quad("kept")]))
        return  # kept: nothing to undo
    assert dump(store) == before


def test_a_drop_that_fails_on_the_server_changes_nothing(store: Store) -> None:
    """An erasure's change (drop a graph, replace a status, add a tombstone) lands whole or not at
    all, on a server that would apply part of a request of several operations too."""
    store.write(Batch(quads=[_quad("content"), _quad("status", ox.NamedNode("urn:test:meta"))]))
    before = dump(store)
    bad = ox.Quad(S, P, ox.Literal("P1D", datatype=ox.NamedNode(XSD + "duration")), ox.NamedNode("urn:test:meta"))
    with contextlib.suppress(WorkbenchError):  # Virtuoso 7 refuses durations; the others keep them
        store.apply(drop=[G], delete=[_quad("status", ox.NamedNode("urn:test:meta"))], insert=[bad])
        assert not store.has_graph(G)
        assert [q.object for q in store.quads(ox.NamedNode("urn:test:meta"))] == [bad.object]
        return
    assert dump(store) == before
    store.apply(drop=[G, ox.NamedNode("urn:test:none")], insert=[_quad("stone", ox.NamedNode("urn:test:meta"))])
    assert not store.has_graph(G)
    assert {str(q.object) for q in store.quads(ox.NamedNode("urn:test:meta"))} == {'"status"', '"stone"'}


def test_a_large_write_that_fails_on_the_server_changes_nothing(store: Store) -> None:
    """Too large to be one DELETE/INSERT operation on Virtuoso (5,000 quads): the insertion goes
    first there, so the literal it refuses stops the request before anything changes."""
    store.write(Batch(quads=[_quad("kept")]))
    before = dump(store)
    many = [ox.Quad(ox.NamedNode(f"urn:test:s{i}"), P, ox.Literal(str(i)), G) for i in range(5_000)]
    bad = ox.Quad(S, P, ox.Literal("P1D", datatype=ox.NamedNode(XSD + "duration")), G)
    with contextlib.suppress(WorkbenchError):  # Virtuoso 7 refuses durations; the others keep them
        store.write(Batch(quads=[*many, bad], removals=[_quad("kept")]))
        assert len(list(store.quads(G))) == 5_001
        return
    assert dump(store) == before
    store.write(Batch(quads=many, removals=[_quad("kept")]))
    assert len(list(store.quads(G))) == 5_000


def test_held_graphs_names_those_the_store_holds(store: Store) -> None:
    others = [ox.NamedNode(f"urn:test:g{i}") for i in range(3)]
    store.write(Batch(quads=[_quad("a"), _quad("b", others[0])]))
    asked = [G, *others, *(ox.NamedNode(f"urn:test:many{i}") for i in range(1200))]  # more than one batch
    assert store.held_graphs(asked) == {G, others[0]} == store.held_graphs(reversed(asked))
    assert store.held_graphs([]) == frozenset() and store.held_graphs(others[1:]) == frozenset()
    assert store.held_graphs(asked) <= store.graph_names()


def test_an_import_never_lists_every_graph(store: Store, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """An import asks about the graphs its files name: its cost does not grow with the store's
    graphs. A file naming a graph the store holds with the same triples is recognised."""
    from workbench.imports.landing import import_rdf
    from workbench.imports.rdf import RdfOptions

    store.write(Batch(quads=[_quad(f"x{i}", ox.NamedNode(f"urn:test:h{i}")) for i in range(50)]))
    data = tmp_path / "d.trig"
    data.write_text(f"<urn:test:h3> {{ {S} {P} \"x3\" }}\n<urn:test:new> {{ {S} {P} \"y\" }}\n")

    def listed() -> frozenset[ox.NamedNode]:
        raise AssertionError("the import listed every graph")

    monkeypatch.setattr(store, "graph_names", listed)
    landed = import_rdf(store, [data], RdfOptions(actor="t", now="2026-12-05T00:00:00Z"), None)
    monkeypatch.undo()
    assert landed.plan.records_added == 1 and landed.plan.records_unchanged == 1
    assert ox.NamedNode("urn:test:new") in store.graph_names()


def test_a_prefetched_select_rides_with_the_version_check(store: Store) -> None:
    """A question's first SELECT sent ahead (Store.prefetch) comes back with the version check:
    on a server one round trip for both, rows equal to asking it alone, used once; a write in
    between throws them away. Elsewhere prefetch changes nothing."""
    store.write(Batch(quads=[_quad("x"), _quad("y", ox.NamedNode("urn:test:h"))]))
    query = "PREFIX t: <urn:test:> SELECT ?o ?g WHERE { GRAPH ?g { t:s t:p ?o } }"

    def rows(found: list[dict[str, object]]) -> list[str]:
        return sorted(json.dumps({k: str(v) for k, v in r.items()}, sort_keys=True) for r in found)

    alone = rows(store.select(query))

    def trips() -> int:
        return int(getattr(store, "round_trips", 0))

    with store.reading():
        start = trips()
        store.prefetch(query)
        version = store.version()
        ahead = rows(store.select(query))
        both = trips() - start
        again = rows(store.select(query))
    assert ahead == alone == again and len(alone) == 2
    if store.capabilities.round_trips:
        assert both == 1 and trips() - start == 2
    with store.reading():
        assert store.version() == version
        store.prefetch(query)
        store.version()
        store.write(Batch(quads=[_quad("z")]))
        assert len(store.select(query)) == 3  # asked again after the write, not the rows sent ahead


def test_a_dataset_of_hundreds_of_graphs_is_read_as_given(store: Store) -> None:
    """A tool's dataset (the Protocol's default-graph-uri / named-graph-uri) of 600 graphs: in a
    URL, `oxigraph serve` reset the connection past about 8 KiB; Virtuoso answers one header per
    graph, past the 100 Python's http.client took."""
    store.write(Batch(quads=[_quad("one", ox.NamedNode("urn:test:g1")), _quad("two", ox.NamedNode("urn:test:g2"))]))
    many = [ox.NamedNode(f"urn:test:absent-graph-number-{i}") for i in range(600)]

    def values(query: str, **dataset: list[ox.NamedNode]) -> list[str]:
        raw = store.query_raw(query, results=ox.QueryResultsFormat.TSV, graph=ox.RdfFormat.TURTLE, **dataset)
        return sorted(raw.decode().split()[1:])

    named = [*many[:300], ox.NamedNode("urn:test:g2"), *many[300:]]
    assert values("SELECT ?o WHERE { GRAPH ?g { ?s ?p ?o } }", named_graphs=named) == ['"two"']
    assert values("SELECT ?o WHERE { ?s ?p ?o }", default_graph=[*many, ox.NamedNode("urn:test:g1")]) == ['"one"']
