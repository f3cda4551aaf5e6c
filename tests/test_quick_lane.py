"""The quick lane of ``/sparql``: a bounded query by GET answered on the event loop, without the
worker process (workbench.server.sparql ``Endpoint.quick``, workbench.sparqlbounded).

Over real HTTP, on a store with a record only group:atlas may see and one subject with more rows
than the lane reads, every bounded query must give what the guarded way gives (the same query
with ``FILTER(true)``, which the lane does not take), for each reader and each results format;
errors must be the endpoint's own; a write must show at the next query. In process, the runner
(threads and worker processes) must not be used for what the lane answers, and must be for the
rest.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from tests.test_server import Server
from workbench.formats import sparql_formats
from workbench.server import create_app
from workbench.server.runner import QueryRunner
from workbench.server.sparql import LOOP_ROWS, _more_than
from workbench.service import Workbench
from workbench.sparqlbounded import bounded

WIDE = "http://example.org/wide"
SECRET = "http://example.org/atlas"
FORMATS = {"json": "application/sparql-results+json", "xml": "application/sparql-results+xml",
           "tsv": "text/tab-separated-values", "csv": "text/csv"}


@dataclass
class Served:
    server: Server
    tokens: dict[str, str]

    def get(self, query: str, who: str | None, accept: str = FORMATS["json"]) -> httpx.Response:
        headers = {"Accept": accept}
        if who is not None:
            headers["Authorization"] = f"Bearer {self.tokens[who]}"
        return httpx.get(self.server.url, params={"query": query}, headers=headers)


def _prepare(path: Path, folder: Path) -> dict[str, str]:
    secret = folder / "secret.trig"
    secret.write_text(f'GRAPH <urn:wb:record:atlas-secret> {{ <{SECRET}> <http://example.org/region> "eu" }}\n')
    wide = folder / "wide.trig"
    rows = LOOP_ROWS * 2 + 7
    wide.write_text("GRAPH <urn:wb:record:wide> {\n" + "".join(
        f'<{WIDE}> <http://example.org/p{n % 3}> "value {n}" .\n' for n in range(rows)) + "}\n")
    with Workbench.open(path, create=True, user="root") as wb:
        wb.init(sample=True)
        tokens = {"root": wb.add_user("root", ["admin"]), "cora": wb.add_user("cora", ["curator"]),
                  "vic": wb.add_user("vic", ["viewer"]), "ana": wb.add_user("ana", ["viewer"], groups=["group:atlas"])}
        wb.import_files([secret], source="atlas-notes", visible_to=["group:atlas"])
        wb.import_files([wide], source="wide-notes")
    return tokens


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("lane")
    tokens = _prepare(folder / "store", folder)
    server = Server(folder / "store")
    yield Served(server, tokens)
    server.stop()


def _guarded(query: str) -> str:
    """The same query, which the lane does not take: FILTER(true) changes no row."""
    at = query.rindex("}")
    return query[:at] + " FILTER(true) " + query[at:]


def _rows(response: httpx.Response, fmt: str) -> Counter[tuple[str, ...]] | bool:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].split(";")[0] == FORMATS[fmt]
    if fmt == "csv":  # pyoxigraph does not read CSV back (it is lossy): compare its records
        records = list(csv.reader(io.StringIO(response.text, newline="")))
        return Counter(tuple(r) for r in records[1:]) if records else False
    found = ox.parse_query_results(response.content, ox.QueryResultsFormat.from_media_type(FORMATS[fmt]))
    if isinstance(found, ox.QueryBoolean):
        return bool(found)
    names = [v.value for v in found.variables]
    return Counter(tuple(str(row[n]) for n in names) for row in found)


QUERIES = [
    f"SELECT ?p ?o WHERE {{ GRAPH ?g {{ <{SECRET}> ?p ?o }} }}",
    f"SELECT * {{ GRAPH ?g {{ <{WIDE}> ?p ?o }} }}",  # more rows than the lane reads: the guarded way answers
    f"SELECT ?o {{ GRAPH ?g {{ <{WIDE}> <http://example.org/p1> ?o }} }} LIMIT 500",
    "PREFIX wb: <https://w3id.org/workbench/ns#> SELECT ?r ?s { GRAPH <urn:wb:graph:meta> { ?r wb:source ?s } }",
    "SELECT ?s ?g { GRAPH ?g { ?s a <https://w3id.org/workbench/ns#Record> } }",
    'ASK { GRAPH ?g { ?s <http://example.org/region> "eu" } }',
    'SELECT ?s { ?s ?p "nothing like this" }',
]


@pytest.mark.parametrize("who", ["vic", "ana", "root"])
@pytest.mark.parametrize("query", QUERIES)
def test_a_bounded_query_answers_as_the_guarded_way(served: Served, who: str, query: str) -> None:
    assert bounded(query) is not None and bounded(_guarded(query)) is None
    for fmt, media in FORMATS.items():
        lane, guarded = served.get(query, who, media), served.get(_guarded(query), who, media)
        assert _rows(lane, fmt) == _rows(guarded, fmt), (fmt, query)


def test_what_a_reader_may_not_see_stays_hidden(served: Served) -> None:
    query = QUERIES[0]
    seen = {who: _rows(served.get(query, who), "json") for who in ("vic", "ana", "root")}
    assert seen["vic"] == Counter() and seen["ana"] == seen["root"] == Counter({("<http://example.org/region>", "\"eu\""): 1})
    assert _rows(served.get(QUERIES[5], "vic"), "json") is False and _rows(served.get(QUERIES[5], "ana"), "json") is True


def test_more_rows_than_the_lane_reads_come_in_full(served: Served) -> None:
    rows = _rows(served.get(QUERIES[1], "vic"), "json")
    assert isinstance(rows, Counter) and rows.total() == LOOP_ROWS * 2 + 7
    limited = _rows(served.get(QUERIES[1] + " LIMIT 3", "vic"), "json")
    assert isinstance(limited, Counter) and limited.total() == 3 and not limited - rows


def test_errors_are_the_endpoint_s_own(served: Served) -> None:
    query = QUERIES[0]
    assert served.get(query, None).status_code == 401
    wrong = httpx.get(served.server.url, params={"query": query}, headers={"Authorization": "Bearer wb_nope"})
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    unknown = served.get("SELECT ?s { ?s nope:p ?o }", "vic")
    assert unknown.status_code == 400 and unknown.headers["content-type"].startswith("text/plain")
    assert re.search(r"\bat 1:", unknown.text) or "nope" in unknown.text, unknown.text  # the query's own line
    assert served.get(query, "vic", "image/png").status_code == 406
    head = httpx.head(served.server.url, params={"query": query}, headers={"Authorization": f"Bearer {served.tokens['vic']}"})
    assert head.status_code == 200


def test_a_write_shows_at_the_next_query(served: Served) -> None:
    ask = 'ASK { GRAPH ?g { <http://example.org/fresh> <http://example.org/p> "new" } }'
    assert _rows(served.get(ask, "vic"), "json") is False
    update = 'INSERT DATA { GRAPH <urn:wb:record:fresh-1> { <http://example.org/fresh> <http://example.org/p> "new" } }'
    r = httpx.post(served.server.url, data={"update": update}, headers={"Authorization": f"Bearer {served.tokens['cora']}"})
    assert r.status_code == 200, r.text
    assert _rows(served.get(ask, "vic"), "json") is True


def test_relative_iris_resolve_against_the_url_the_client_asked(served: Served) -> None:
    # The lane keeps each request URL's base IRI: two hosts must not share one.
    update = 'INSERT DATA { GRAPH <urn:wb:record:based-1> { <http://example.org/based> <http://example.org/p> "x" } }'
    r = httpx.post(served.server.url, data={"update": update}, headers={"Authorization": f"Bearer {served.tokens['cora']}"})
    assert r.status_code == 200, r.text
    ask = 'ASK { GRAPH ?g { <based> <p> "x" } }'
    assert bounded(f"BASE <http://h/sparql>\n{ask}") is not None
    for host, held in (("example.org", True), ("example.net", False), ("example.org", True)):
        for query in (ask, _guarded(ask)):
            answer = httpx.get(served.server.url, params={"query": query},
                               headers={"Authorization": f"Bearer {served.tokens['vic']}", "Host": host,
                                        "Accept": FORMATS["json"]})
            assert _rows(answer, "json") is held, (host, query)


def test_the_lane_leaves_the_runner_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tokens = _prepare(tmp_path / "store", tmp_path)
    ran: list[str] = []
    real = QueryRunner.run

    async def counted(self: QueryRunner, fn):  # type: ignore[no-untyped-def]
        ran.append("runner")
        return await real(self, fn)

    monkeypatch.setattr(QueryRunner, "run", counted)
    auth = {"Authorization": f"Bearer {tokens['vic']}"}
    with Workbench.open(tmp_path / "store") as wb, TestClient(create_app(wb, query_workers=0)) as http:
        def ask(query: str) -> None:
            assert http.get("/sparql", params={"query": query}, headers=auth).status_code == 200

        ask(QUERIES[0])  # vic's view is not built yet: the guarded way builds it
        assert ran == ["runner"]
        for query in (QUERIES[0], QUERIES[2], QUERIES[4], QUERIES[5]):
            ask(query)
        assert ran == ["runner"], "the lane answered each of them"
        ask(QUERIES[1])  # more rows than the lane reads
        ask(_guarded(QUERIES[0]))  # not bounded
        ask(f"SELECT ?k {{ GRAPH ?g {{ <{SECRET}> a/<http://www.w3.org/2000/01/rdf-schema#subClassOf>* ?k }} }}")
        assert ran == ["runner"] * 4


_AWKWARD = st.text(alphabet=st.sampled_from(list('ab}{<>"\n\t\r,;/ result')), max_size=12)


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.one_of(_AWKWARD, st.none()), max_size=12), limit=st.integers(0, 8),
       fmt=st.sampled_from(sorted(FORMATS)))
def test_the_row_count_is_exact_whatever_the_values_hold(values: list[str | None], limit: int, fmt: str) -> None:
    # Rows whose values hold each format's row marks (braces, "<result", line breaks), and
    # rows binding nothing: the count that checks the cap must never say fewer rows than there are.
    store = ox.Store()
    rows = " ".join("(UNDEF)" if v is None else f"({ox.Literal(v)})" for v in values)
    data = store.query(f"SELECT ?v WHERE {{ VALUES (?v) {{ {rows} }} }}").serialize(
        format=sparql_formats(fmt)[0]) or b""
    assert _more_than(data, fmt, False, limit) is (len(values) > limit)
