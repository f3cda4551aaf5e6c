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
