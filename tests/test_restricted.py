"""Restricted readers read the store through the rewrite, no copy (issue 20, parts 1 and 2): every
Workbench read gives what the reader's view gives (the oracle), on the embedded store, ``oxigraph
serve`` and Virtuoso, and over random audiences, acts and candidates; a write builds nothing."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings

from tests.test_audience import ENGINES, READERS, WORLDS, _world, engine_world
from tests.test_visibility import _outcome
from workbench.access.restricted import RestrictedStore
from workbench.access.views import ViewStore, viewer
from workbench.errors import Forbidden, ParseError, Unsupported
from workbench.ids import record_iri, source_iri
from workbench.service import Workbench

READS: dict[str, Callable[[Workbench], Any]] = {
    "records": lambda wb: wb.records(),
    "records, any status": lambda wb: [wb.record(f"r{i}") for i in range(10)],
    "candidates": lambda wb: wb.candidates(status=None),
    "a candidate": lambda wb: [wb.candidate(f"c{i}") for i in range(20)],
    "entities": lambda wb: wb.entities(),
    "resolve": lambda wb: [wb.resolve(f"thing {i}") for i in range(10)],
    "asks": lambda wb: [wb.ask(f"thing {i}", "is a") for i in range(10)],
    "summaries": lambda wb: wb.summaries(include_stale=True),
    "audit": lambda wb: [wb.audit(f"r{i}") for i in range(10)],
    "stats": lambda wb: {k: v for k, v in wb.stats().items() if k != "backend"},
}


def _both(wb: Workbench, name: str) -> tuple[Workbench, Workbench]:
    """``name``'s Workbench read through the rewrite, and the same reader's on a view."""
    shared = wb._shared
    shared.rewriting, shared.handed = True, {}
    rewritten = wb.seen_by(name)
    shared.rewriting, shared.handed = False, {}
    on_view = wb.seen_by(name)
    shared.rewriting = None
    return rewritten, on_view


def _same_reads(wb: Workbench) -> None:
    for name in READERS:
        rewritten, on_view = _both(wb, name)
        assert isinstance(rewritten.store, RestrictedStore)
        assert isinstance(on_view.store, ViewStore) or on_view.store is wb.store  # nothing hidden: the store
        for what, read in READS.items():
            assert _outcome(read, rewritten) == _outcome(read, on_view), (name, what)


@pytest.mark.parametrize("backend", ENGINES)
def test_every_read_through_the_rewrite_equals_the_view(backend: str, request: pytest.FixtureRequest,
                                                         tmp_path: Path) -> None:
    wb = engine_world(backend, request, tmp_path)
    try:
        _same_reads(wb)
    finally:
        wb.close()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**WORLDS)
def test_over_random_audiences_acts_and_candidates(tmp_path_factory: pytest.TempPathFactory, sources: list[int],
                                                   records: list[int], acts: list[tuple[int, int, int]]) -> None:
    _same_reads(_world(tmp_path_factory.mktemp("restricted"), sources, records, acts))


def test_a_reader_on_a_server_reads_through_the_rewrite_and_a_write_copies_nothing(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    wb = engine_world("oxigraph", request, tmp_path)
    wb._shared.rewriting = None  # as on any server: through the rewrite
    try:
        bob = wb.seen_by("bob")
        assert isinstance(bob.store, RestrictedStore)
        before = bob.records()
        path = tmp_path / "public.jsonl"
        path.write_text('{"id": "new-1", "statement": "A new public record.", "type": "observation", '
                        '"source": {"id": "new-src", "said_by": "me"}, "triples": [["thing 1", "is a", "car"]]}\n')
        wb.import_files([path])
        after = wb.seen_by("bob")
        assert after.store is bob.store  # the same reader's store: nothing rebuilt
        assert {r.id for r in after.records()} == {r.id for r in before} | {"new-1"}
        assert wb._shared._views is None or not wb._shared._views._copies  # no view was ever copied
        with pytest.raises(Forbidden, match="read-only"):
            after.store.update("INSERT DATA { GRAPH <urn:x:g> { <urn:x:s> <urn:x:p> <urn:x:o> } }")
    finally:
        wb.close()


def test_a_dataset_keeps_only_the_graphs_the_reader_may_see(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """FROM / FROM NAMED in the query, and the Protocol's dataset, cut to what the reader may see."""
    wb = engine_world("oxigraph", request, tmp_path)
    wb._shared.rewriting = None  # as on any server: through the rewrite
    try:
        # r1 is from s1, which only alice may see; r0 from s0, which everyone may
        hidden, shown = record_iri("r1"), record_iri("r0")
        for name, sees in (("alice", {hidden, shown}), ("bob", {shown})):
            store = wb.seen_by(name).store
            rows = store.select(f"SELECT DISTINCT ?g FROM NAMED <{hidden.value}> FROM NAMED <{shown.value}> "
                                "WHERE { GRAPH ?g { ?s ?p ?o } }")
            assert {r["g"] for r in rows} == sees, name
            rows = store.select(f"SELECT DISTINCT ?s FROM <{hidden.value}> WHERE {{ ?s ?p ?o }}")
            assert bool(rows) is (hidden in sees), name
            raw = store.query_raw("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }",
                                  results=ox.QueryResultsFormat.TSV, graph=ox.RdfFormat.N_QUADS,
                                  named_graphs=[hidden, shown, source_iri("s1")])
            assert (hidden.value in raw.decode()) is (hidden in sees) and shown.value in raw.decode(), name
            assert viewer(wb.store, name).agents
    finally:
        wb.close()


def test_token_hashes_are_in_a_graph_no_reader_sees_and_older_stores_are_moved(tmp_path: Path) -> None:
    from tests.conftest import FIXED_NOW
    from workbench.access import users
    from workbench.ids import TOKENS_GRAPH, USERS_GRAPH
    from workbench.vocab import PREFIXES

    find = PREFIXES + "SELECT ?g ?h WHERE { GRAPH ?g { ?u wb:tokenHash ?h } }"
    with Workbench.open(tmp_path / "s", create=True, user="root", clock=lambda: FIXED_NOW) as wb:
        wb.init()
        wb.add_user("root", ["admin"])
        token = wb.add_user("bob", ["viewer"])
        assert {r["g"] for r in wb.store.select(find)} == {TOKENS_GRAPH}
        assert users.by_token(wb.store, token).name == "bob"
        assert RestrictedStore(wb.store, viewer(wb.store, "bob")).select(find) == []  # its audience is no reader
        # an older store kept them in the users graph
        wb.store.update(PREFIXES + f"""INSERT {{ GRAPH {USERS_GRAPH} {{ ?u wb:tokenHash ?h }} }}
            WHERE {{ GRAPH {TOKENS_GRAPH} {{ ?u wb:tokenHash ?h }} }} ; DROP GRAPH {TOKENS_GRAPH}""")
    with Workbench.open(tmp_path / "s", user="root", clock=lambda: FIXED_NOW) as wb:
        assert {r["g"] for r in wb.store.select(find)} == {TOKENS_GRAPH}
        assert users.by_token(wb.store, token).name == "bob"


def test_workbenchs_own_reads_skip_the_metadata_filter_and_a_tools_keep_it(tmp_path: Path) -> None:
    """What the engine is sent: Workbench's own query (select, ask, construct, prefetch) without
    the filter on a record's metadata beside it, a tool's (query_raw) with every filter."""
    from workbench.records import effective
    from workbench.store import MemoryStore
    from workbench.vocab import PREFIXES

    wb = Workbench(MemoryStore(), user="root")
    wb.init()
    wb.add_user("root", ["admin"])
    wb.add_user("bob", ["viewer"])
    restricted = RestrictedStore(wb.store, viewer(wb.store, "bob"))
    query = PREFIXES + f"SELECT ?g WHERE {{ GRAPH ?g {{ ?s ?p ?o }} {effective('?g')} }}"
    sent: list[str] = []
    select, raw = wb.store.select, wb.store.query_raw
    wb.store.select = lambda q: sent.append(q) or select(q)  # type: ignore[method-assign]
    wb.store.query_raw = lambda q, **kw: sent.append(q) or raw(q, **kw)  # type: ignore[method-assign]
    restricted.select(query)
    restricted.query_raw(query, results=ox.QueryResultsFormat.JSON, graph=ox.RdfFormat.N_TRIPLES)
    assert sent == [restricted.rewritten(query, own=True), restricted.rewritten(query)]
    assert sent[1].count("FILTER NOT EXISTS { {") == 3  # ?g, its metadata, its superseder
    assert sent[0].count("FILTER NOT EXISTS { {") == 2


def _parsed(data: bytes, query: str) -> list[str]:
    """An answer's rows (or triples), sorted, as text: the same whichever engine wrote it."""
    if "CONSTRUCT" in query:
        return sorted(str(t) for t in ox.parse(data, format=ox.RdfFormat.N_TRIPLES))
    result = ox.parse_query_results(data, ox.QueryResultsFormat.JSON)
    if isinstance(result, ox.QueryBoolean):
        return [str(bool(result))]
    return sorted(str(sorted((v.value, str(row[v])) for v in result.variables if row[v] is not None))
                  for row in result)


REASONED = ("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> SELECT ?x ?k ?g ?c ?r WHERE { GRAPH ?g { ?x a ?k } "
            'FILTER(STRSTARTS(STR(?g), "urn:wb:")) '  # not Virtuoso's own graphs, which no view holds
            "OPTIONAL { GRAPH <urn:wb:graph:derived> { ?c <http://www.w3.org/1999/02/22-rdf-syntax-ns#subject> ?x ; "
            "<http://www.w3.org/ns/prov#wasDerivedFrom> ?r } } }")


@pytest.mark.parametrize("backend", ENGINES)
def test_sparql_with_reasoning_through_the_rewrite_as_on_the_view_and_nothing_copied(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """SPARQL with reasoning on reads no copy: the conclusions, drawn through the rewrite from
    what each reader may see, are written into the query and answer as on the reader's view;
    a conclusion resting on a record someone may not see is not theirs."""
    wb = engine_world(backend, request, tmp_path)
    path = tmp_path / "kinds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "kinds-1", "statement": "A car is a kind of vehicle.", "type": "observation", "visible_to": ["alice"],
         "source": {"id": "kinds-src", "said_by": "me"}, "triples": [["car", "kind of", "vehicle"]]}]))
    wb.import_files([path])
    shared = wb._shared
    try:
        rows: dict[str, list[str]] = {}
        for name in [*READERS, "root"]:
            answers = {}
            for rewriting in (True, False):
                shared.rewriting, shared.handed = rewriting, {}
                answers[rewriting] = _parsed(wb.seen_by(name).sparql(REASONED, reasoning=True), REASONED)
            assert answers[True] == answers[False], name
            rows[name] = answers[True]
        vehicle = [r for r in rows["alice"] if "urn:wb:graph:derived" in r and "vehicle" in r]
        assert any("kinds-1" in r for r in vehicle)  # alice may see the record it rests on
        assert not [r for r in rows["bob"] if "vehicle" in r or "kinds-1" in r]  # bob may not
        row = dict(ast.literal_eval(vehicle[0]))
        x, k = row["x"], row["k"]
        ground = f"ASK {{ GRAPH <urn:wb:graph:derived> {{ {x} a {k} }} }}"  # binds nothing
        for rewriting in (True, False):
            shared.rewriting, shared.handed = rewriting, {}
            assert [_parsed(wb.seen_by(n).sparql(ground, reasoning=True), ground) for n in ("alice", "bob")] == [
                ["True"], ["False"]]
        shared.rewriting = None  # as on a server: nothing copied for anyone
        if backend != "embedded":
            assert shared._views is not None
            shared._views.close()  # the oracle's
            shared._views, shared.handed = None, {}
            assert wb.seen_by("alice").sparql(REASONED, reasoning=True)
            assert wb.sparql(REASONED, reasoning=True)
            assert shared._views is None or not shared._views._copies
    finally:
        shared.rewriting = False
        wb.close()


@pytest.mark.parametrize("backend", ["oxigraph", "virtuoso"])
def test_a_tools_sparql_on_a_server_reads_through_the_rewrite_as_the_view(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Tools' queries (paths, OPTIONAL, EXISTS, aggregates, a subquery, FROM and FROM NAMED,
    CONSTRUCT, graphs named by IRI) with and without the Protocol's dataset, as each reader and
    an admin send them: rewritten on the server, as on their view; no token hash for anyone
    named. On Virtuoso, whose default graph is every graph, a pattern outside GRAPH with no
    dataset is refused (the view would answer it from an empty default graph), and so is a
    query with a dataset (Virtuoso 7 keeps a GRAPH <iri> of an ASK outside it)."""
    from tests.test_rewrite import PATH, QUERIES

    wb = engine_world(backend, request, tmp_path)
    shared = wb._shared
    queries = [q for q in QUERIES if not (backend == "virtuoso" and q == PATH)]
    queries += [f"ASK FROM <{record_iri('r2').value}> {{ GRAPH <{record_iri('r1').value}> {{ ?s ?p ?o }} }}",
                f"ASK FROM <{record_iri('r2').value}> {{ GRAPH <{source_iri('s1').value}> {{ ?s ?p ?o }} }}",
                "SELECT ?u ?h WHERE { GRAPH ?g { ?u <https://w3id.org/workbench/ns#tokenHash> ?h } }"]
    default = ["SELECT ?s ?p ?o WHERE { ?s ?p ?o }", "ASK { GRAPH ?g { ?s ?p ?o } FILTER EXISTS { ?s ?p ?o } }"]
    datasets = [(None, [record_iri("r1").value, record_iri("r0").value]), ([record_iri("r1").value], None),
                ([source_iri("s1").value], [record_iri("r1").value])]
    asked = [(q, None, None) for q in queries + default]
    asked += [(q, d, n) for d, n in datasets for q in ("SELECT ?g ?s WHERE { GRAPH ?g { ?s ?p ?o } }",
                                                          "SELECT ?s WHERE { ?s ?p ?o }",
                                                          f"ASK {{ GRAPH <{record_iri('r1').value}> {{ ?s ?p ?o }} }}")]

    def outcome(seen: Workbench, q: str, d: list[str] | None, n: list[str] | None) -> object:
        try:
            return _parsed(seen.sparql(q, format="ntriples" if "CONSTRUCT" in q else "json", default_graph=d,
                                       named_graphs=n), q)
        except Unsupported as exc:
            return f"refused: {exc}"

    try:
        for name in [*READERS, "root"]:
            answers = {}
            for rewriting in (True, False):
                shared.rewriting, shared.handed = rewriting, {}
                seen = wb.seen_by(name)
                assert isinstance(wb._readable(name), RestrictedStore if rewriting else ViewStore)
                answers[rewriting] = [outcome(seen, q, d, n) for q, d, n in asked]
            for (q, d, n), a, b in zip(asked, answers[True], answers[False], strict=True):
                if backend == "virtuoso" and (d is not None or n is not None or " FROM " in q):
                    assert str(a).startswith("refused: on this SPARQL server a query's dataset"), q
                elif backend == "virtuoso" and q in default:
                    assert str(a).startswith("refused: on this SPARQL server a triple pattern outside GRAPH"), q
                else:
                    assert a == b, (name, q, d, n)
            assert answers[True][len(queries) - 1] == []  # no token hash, for anyone named
    finally:
        shared.rewriting = False
        wb.close()


@pytest.mark.parametrize("backend", ["oxigraph", "virtuoso"])
def test_an_export_on_a_server_streams_through_the_rewrite_as_the_view(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Each reader's and the admin's N-Quads export read through the rewrite (one streamed
    answer, never whole in memory) holds what their view's export holds: no token hash."""
    wb = engine_world(backend, request, tmp_path)
    shared = wb._shared
    try:
        for name in [*READERS, "root"]:
            exported = {}
            for rewriting in (True, False):
                shared.rewriting, shared.handed = rewriting, {}
                path = tmp_path / f"{name}-{rewriting}.nq"
                wb.seen_by(name).export(path)
                exported[rewriting] = sorted(path.read_bytes().splitlines())
            assert exported[True] == exported[False], name
            assert not any(b"#tokenHash> \"" in line for line in exported[True]), name  # (the vocabulary names it)
    finally:
        shared.rewriting = False
        wb.close()


@pytest.mark.parametrize("backend", ENGINES)
def test_a_tools_malformed_sparql_is_refused_at_its_own_line_and_column(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """The engine reads the rewritten text; the error names where the tool's own text went wrong,
    for a restricted reader and for an admin (whose query is rewritten too, on a server)."""
    wb = engine_world(backend, request, tmp_path)
    bad = "SELECT * WHERE {\n  GRAPH ?g { ?s ?p ?o }"  # the closing brace missing at line 2, column 24
    try:
        wb._shared.rewriting = True
        for name in ("nobody", "root"):
            with pytest.raises(ParseError, match=r"2:24"):
                wb.seen_by(name).sparql(bad)
    finally:
        wb.store.close()
