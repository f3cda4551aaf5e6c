"""Queries whose work is bounded by their rows (workbench.sparqlbounded), checked against pyoxigraph.

Random one-pattern queries (variables that may repeat, constants, literals, ``a``, GRAPH, LIMIT,
prefixes, keyword case and white space all varied) go to a real pyoxigraph store with random
quads: a query is recognised exactly when no variable repeats, and a capped one returns the
first rows of the same answer, as many as the cap and its own LIMIT allow. Near misses (a filter,
two patterns, a path, DISTINCT, OFFSET, a comment, an escape...) are never recognised, and
everything recognised passes the full SERVICE and depth scan the shortcut skips.
"""

from __future__ import annotations

from collections import Counter

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.sparqlbounded import MAX_CHARS, bounded
from workbench.sparqlcheck import MAX_DEPTH, check_query, scan
from workbench.store.pyox import MemoryStore

EX = "http://ex.org/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def _store(quads: list[tuple[int, int, int, int | None]]) -> ox.Store:
    store = ox.Store()
    for s, p, o, g in quads:
        predicate = ox.NamedNode(RDF_TYPE if p == 0 else f"{EX}p{p}")
        obj: ox.NamedNode | ox.Literal = ox.NamedNode(f"{EX}s{o}") if o < 4 else ox.Literal(f"v{o}")
        graph = ox.DefaultGraph() if g is None else ox.NamedNode(f"{EX}g{g}")
        store.add(ox.Quad(ox.NamedNode(f"{EX}s{s}"), predicate, obj, graph))
    return store


QUADS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 6),
                           st.one_of(st.none(), st.integers(0, 1))), max_size=40)
VARS = st.sampled_from(["?a", "?b", "$a", "?x"])


@st.composite
def queries(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A one-pattern query and the variables its pattern (and GRAPH) use."""
    prefixed = draw(st.booleans())

    def name(kind: str, n: int) -> str:
        return f"ex:{kind}{n}" if prefixed else f"<{EX}{kind}{n}>"

    s = draw(st.one_of(VARS, st.integers(0, 3).map(lambda n: name("s", n))))
    p = draw(st.one_of(VARS, st.just("a"), st.integers(1, 2).map(lambda n: name("p", n))))
    o = draw(st.one_of(VARS, st.integers(0, 3).map(lambda n: name("s", n)),
                       st.integers(4, 6).map(lambda n: f'"v{n}"')))
    graph = draw(st.one_of(st.none(), VARS, st.integers(0, 1).map(lambda n: name("g", n))))
    ws = draw(st.sampled_from([" ", "  ", "\n", "\t ", " \r\n "]))
    word = draw(st.sampled_from([str.upper, str.lower, str.title]))
    triple = f"{s}{ws}{p} {o}{draw(st.sampled_from(['', ' .', '.']))}"
    body = triple if graph is None else f"{word('graph')} {graph} {{{ws}{triple}{ws}}}"
    used = [t for t in (s, p, o, graph) if t and t[0] in "?$"]
    projection = draw(st.one_of(st.just("*"), st.lists(VARS, min_size=1, max_size=3, unique_by=lambda v: v[1:]).map(" ".join)))
    form = draw(st.sampled_from(["select", "ask"]))
    head = f"{word('select')} {projection}" if form == "select" else word("ask")
    limit = draw(st.one_of(st.none(), st.integers(0, 12)))
    tail = "" if limit is None or form == "ask" else f"{ws}{word('limit')} {limit}"
    where = draw(st.sampled_from(["", f"{word('where')} "]))
    prologue = f"{word('prefix')} ex: <{EX}>{ws}" if prefixed else ""
    return f"{prologue}{head}{ws}{where}{{{ws}{body}{ws}}}{tail}", used


def _rows(store: ox.Store, query: str) -> Counter[tuple[str, ...]] | bool:
    found = store.query(query)
    if isinstance(found, ox.QueryBoolean):
        return bool(found)
    assert isinstance(found, ox.QuerySolutions)
    names = [v.value for v in found.variables]
    return Counter(tuple(str(row[n]) for n in names) for row in found)


@settings(max_examples=300, deadline=None)
@given(QUADS, queries(), st.integers(0, 8))
def test_recognised_exactly_when_no_variable_repeats_and_capped_keeps_the_answer(
        quads: list[tuple[int, int, int, int | None]], generated: tuple[str, list[str]], cap: int) -> None:
    query, used = generated
    names = [v[1:] for v in used]
    shape = bounded(query)
    assert (shape is not None) == (len(names) == len(set(names))), query
    if shape is None:
        return
    store = _store(quads)
    full = _rows(store, query)
    capped = _rows(store, shape.capped(query, cap))
    if isinstance(full, bool):
        assert shape.form == "ASK" and capped == full
        return
    assert isinstance(capped, Counter)
    assert not capped - full, "a capped query returns rows of the same answer"
    assert capped.total() == min(cap, full.total()), query
    # what the shortcut in check_query skips: the full scan also lets it through
    shape_of_text = scan(query)
    assert not shape_of_text.service and shape_of_text.depth < MAX_DEPTH
    check_query(query)


@pytest.mark.parametrize("query", [
    "SELECT ?s { ?s ?p ?o FILTER(?o) }",
    "SELECT ?s { ?s ?p ?o . ?o ?q ?r }",
    "SELECT ?s { ?s <urn:x:p>/<urn:x:q> ?o }",
    "SELECT ?s { ?s <urn:x:p>* ?o }",
    "SELECT DISTINCT ?s { ?s ?p ?o }",
    "SELECT REDUCED ?s { ?s ?p ?o }",
    "SELECT ?s { ?s ?p ?o } OFFSET 3",
    "SELECT ?s { ?s ?p ?o } LIMIT 3 OFFSET 3",
    "SELECT ?s { ?s ?p ?o } ORDER BY ?s",
    "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }",
    "SELECT ?s FROM <urn:x:g> { ?s ?p ?o }",
    "SELECT ?s # a comment\n{ ?s ?p ?o }",
    'SELECT ?s { ?s ?p "a\\"b" }',
    "SELECT ?s { ?s <urn:x:\\u0070> ?o }",
    "SELECT ?s { _:b ?p ?o }",
    "SELECT ?s { [] ?p ?o }",
    "SELECT ?s { ?s ?p ?o ; ?q ?r }",
    "SELECT ?s { ?s ?p ?o , ?r }",
    "SELECT ?s { { ?s ?p ?o } }",
    "SELECT ?s { ?s ?p ?o } VALUES ?s { <urn:x:a> }",
    "SELECT ?s { SERVICE <http://elsewhere/> { ?s ?p ?o } }",
    "SELECT ?s { GRAPH ?g { ?s ?p ?o } ?s ?q ?r }",
    "SELECT ?s { GRAPH ?s { ?s ?p ?o } }",
    "SELECT ?s { ?s ?p ?s }",
    "SELECT ?s { ?s A <urn:x:K> }",
    "CONSTRUCT { ?s ?p ?o } { ?s ?p ?o }",
    "DESCRIBE <urn:x:a>",
    "INSERT DATA { <urn:x:a> <urn:x:p> <urn:x:b> }",
    "SELECT ?s { ?s ?p ?o }}",
    "SELECT ?s { ?s ?p << <urn:x:a> <urn:x:p> <urn:x:b> >> }",
])
def test_near_misses_are_not_bounded(query: str) -> None:
    assert bounded(query) is None


def test_long_texts_are_not_looked_at() -> None:
    padding = " " * MAX_CHARS
    assert bounded(f"SELECT ?s {{ ?s ?p ?o }}{padding}") is None
    assert bounded("SELECT ?s { ?s ?p ?o }") is not None


def test_capped_lowers_or_adds_a_limit_and_leaves_ask_alone() -> None:
    for query, cap, expected in [
        ("SELECT * { ?s ?p ?o }", 5, "SELECT * { ?s ?p ?o } LIMIT 5"),
        ("SELECT * { ?s ?p ?o } limit\n 70", 5, "SELECT * { ?s ?p ?o } LIMIT 5"),
        ("SELECT * { ?s ?p ?o } LIMIT 3", 5, "SELECT * { ?s ?p ?o } LIMIT 3"),
        ("ASK { ?s ?p ?o }", 5, "ASK { ?s ?p ?o }"),
    ]:
        shape = bounded(query)
        assert shape is not None
        assert shape.capped(query, cap) == expected


# ------------------------------------------------------------------ read as one quad pattern

OBJECTS = [ox.NamedNode(f"{EX}s0"), ox.NamedNode(f"{EX}s1"), ox.BlankNode("b1"), ox.Literal("v"),
           ox.Literal("v", language="en-GB"), ox.Literal("7", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
           ox.Literal('a "quoted" value \\ é \n', language="fr"), ox.Literal("}{<result", datatype=ox.NamedNode(f"{EX}dt"))]
RICH_QUADS = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, len(OBJECTS) - 1),
                                st.one_of(st.none(), st.integers(0, 2))), max_size=30)


def _memory(quads: list[tuple[int, int, int, int | None]]) -> MemoryStore:
    store = MemoryStore()
    for s, p, o, g in quads:
        subject = ox.BlankNode("b1") if s == 2 else ox.NamedNode(f"{EX}s{s}")
        predicate = ox.NamedNode(RDF_TYPE if p == 0 else f"{EX}p{p}")
        graph = ox.DefaultGraph() if g is None else ox.NamedNode(f"{EX}g{g}" if g < 2 else f"{EX}a/./g")
        store._db.add(ox.Quad(subject, predicate, OBJECTS[o], graph))
    return store


@st.composite
def pattern_queries(draw: st.DrawFn) -> str:
    """One-pattern queries as clients write them: prefixed or full IRIs (some relative, some
    with dot segments), literals, GRAPH or not, every projection, LIMIT."""
    prefixes = draw(st.sampled_from(["", f"PREFIX ex: <{EX}> ", f"PREFIX ex: <http://else/> PREFIX ex: <{EX}> ",
                                     "BASE <http://ex.org/> PREFIX ex: <> "]))
    known = prefixes != ""

    def iri(kind: str, n: int) -> str:
        way = draw(st.sampled_from(["full", "prefixed", "relative", "dots"]))
        if way == "prefixed" and known:
            return f"ex:{kind}{n}"
        return {"relative": f"<{kind}{n}>", "dots": f"<{EX}a/../{kind}{n}>"}.get(way, f"<{EX}{kind}{n}>")

    names = iter(draw(st.permutations(["?a", "?b", "$c", "?d"])))
    s = draw(st.one_of(st.just(next(names)), st.integers(0, 1).map(lambda n: iri("s", n))))
    p = draw(st.one_of(st.just(next(names)), st.just("a"), st.integers(1, 2).map(lambda n: iri("p", n))))
    o = draw(st.one_of(st.just(next(names)), st.integers(0, 1).map(lambda n: iri("s", n)),
                       st.sampled_from(['"v"', '"v"@en-gb', "7", f"<{EX}a/./g>"])))
    graph = draw(st.one_of(st.none(), st.just(next(names)), st.integers(0, 1).map(lambda n: iri("g", n)),
                           st.just(f"<{EX}a/./g>")))
    body = f"{s} {p} {o}" if graph is None else f"GRAPH {graph} {{ {s} {p} {o} }}"
    used = sorted({t for t in (s, p, o, graph) if t and t[0] in "?$"})
    head = draw(st.one_of(st.just("SELECT *"), st.just("ASK"),
                          st.lists(st.sampled_from([*used, "?zz"]), min_size=1, max_size=3, unique=True).map(
                              lambda vs: "SELECT " + " ".join(vs))))
    limit = draw(st.one_of(st.none(), st.integers(0, 12))) if head != "ASK" else None
    return f"{prefixes}{head} WHERE {{ {body} }}" + ("" if limit is None else f" LIMIT {limit}")


def _json_rows(data: bytes) -> tuple[list[str], Counter[str]] | bool:
    found = ox.parse_query_results(data, ox.QueryResultsFormat.JSON)
    if isinstance(found, ox.QueryBoolean):
        return bool(found)
    names = [v.value for v in found.variables]
    return names, Counter(" ".join(f"{n}={row[n]}" for n in names) for row in found)


@settings(max_examples=400, deadline=None)
@given(RICH_QUADS, pattern_queries(), st.integers(0, 8))
def test_a_pattern_read_directly_answers_as_the_query(
        quads: list[tuple[int, int, int, int | None]], query: str, rows: int) -> None:
    text = f"BASE <http://endpoint.example/sparql>\n{query}"  # as the server sends every query
    shape = bounded(text)
    assert shape is not None, text
    store = _memory(quads)
    direct = shape.json_answer(store, rows)
    if direct is None:
        return  # declined: the query answers it
    asked = store._db.query(shape.capped(text, rows + 1)).serialize(format=ox.QueryResultsFormat.JSON)
    assert asked is not None
    expected, got = _json_rows(asked), _json_rows(direct)
    if isinstance(expected, bool):
        assert got is expected, text
        return
    assert not isinstance(got, bool)
    assert got[0] == expected[0], text  # the same variables, in the same order
    assert expected[1].total() <= rows, "answered directly only when every row fits"
    assert got[1] == expected[1], text


def test_a_pattern_read_directly_declines_what_it_cannot_read_as_the_query() -> None:
    store = _memory([(0, 1, 0, 0), (0, 1, 3, None)])
    for query in [
        "SELECT ?o WHERE { <http://ex.org/s0> ?p ?o }",  # the default graph
        'SELECT ?s WHERE { GRAPH ?g { ?s ?p "v" } }',  # a literal
        "SELECT ?o WHERE { GRAPH ?g { <s0> ?p ?o } }",  # relative
        "SELECT ?o WHERE { GRAPH ?g { nope:s0 ?p ?o } }",  # an undeclared prefix
        "SELECT ?o ?o WHERE { GRAPH ?g { <http://ex.org/s0> ?p ?o } }",  # pyoxigraph refuses it
    ]:
        shape = bounded(query)
        assert shape is not None and shape.json_answer(store, 10) is None, query
    more = bounded("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }")
    assert more is not None and more.json_answer(store, 0) is None  # more rows than asked for
    shape = bounded("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }")
    assert shape is not None and _json_rows(shape.json_answer(store, 1) or b"") == (
        ["g", "o", "p", "s"], Counter({f"g=<{EX}g0> o=<{EX}s0> p=<{EX}p1> s=<{EX}s0>": 1}))
