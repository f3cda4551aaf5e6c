"""Fuzzing a real `workbench serve`: the JSON API from its own OpenAPI document (schemathesis),
and the SPARQL Protocol endpoint with random requests (hypothesis).

One server process over a store with the sample data and two users: an admin, whose token every
API request carries (so requests get past authentication to the calls themselves), and a viewer,
whose token the ``/sparql`` requests carry (or none, or a wrong one).
The JSON API must never answer 5xx, and every answer must match the schema the document gives
for it (the 200 schemas, and the one error shape for every other status). ``/sparql`` must never
answer 5xx whatever the query, form body, method or headers, and must leave the store exactly as
it was (sorted N-Quads equal before and after).

The operations come from :func:`workbench.server.routes.openapi` at collection time, so each gets
its own test id; ``test_served_document_is_the_fuzzed_one`` checks that the server serves exactly
that document.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_server import Server
from tests.test_server_limits import http_dump
from workbench.server.routes import openapi
from workbench.service import Workbench

MAX_EXAMPLES = 25
# No 5xx, and every answer as the document describes it (its media type and its JSON schema). The
# other checks are off: they judge API design choices (which statuses are listed, whether a random
# but well-typed id is "accepted"), not failures.
CONFIG = schemathesis.Config.from_dict({"checks": {
    "enabled": False,
    "not_a_server_error": {"enabled": True},
    "content_type_conformance": {"enabled": True},
    "response_schema_conformance": {"enabled": True},
}})
SCHEMA = schemathesis.openapi.from_dict(openapi(), config=CONFIG)


@dataclass
class Fuzzed:
    server: Server
    path: Path
    admin: str
    viewer: str

    @property
    def root(self) -> str:
        return self.server.url.removesuffix("/sparql")

    def auth(self, who: str = "admin") -> dict[str, str]:
        token = {"admin": self.admin, "viewer": self.viewer, "wrong": "wb_not-a-token"}.get(who)
        return {"Authorization": f"Bearer {token}"} if token else {}


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    path = tmp_path_factory.mktemp("fuzz") / "store"
    with Workbench.open(path, create=True, user="root") as wb:
        wb.init(sample=True)
        admin = wb.add_user("root", ["admin"])
        viewer = wb.add_user("vic", ["viewer"])
    server = Server(path, "--query-timeout", "20")
    yield Fuzzed(server, path, admin, viewer)
    server.stop()


# ---------------------------------------------------------------------- the JSON API, by its schema


def test_served_document_is_the_fuzzed_one(fuzzed: Fuzzed) -> None:
    r = httpx.get(fuzzed.root + "/api/openapi.json", timeout=10)
    assert r.status_code == 200
    assert r.json() == json.loads(json.dumps(openapi()))


@SCHEMA.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                 HealthCheck.function_scoped_fixture])
def test_api_never_fails_and_answers_as_documented(case: schemathesis.Case[Any], fuzzed: Fuzzed) -> None:
    case.call_and_validate(base_url=fuzzed.root, headers=fuzzed.auth(), timeout=60)


@pytest.mark.parametrize(("path", "body"), [
    ("/api/entities", {"name": "Fuzzed Language Tag", "lang": "e"}),
    ("/api/entities/alias", {"entity": "Paris", "alias": "Fuzzed Alias", "lang": "a b"}),
], ids=["entities-one-letter", "alias-space"])
def test_a_bad_language_tag_is_refused_not_a_failure(fuzzed: Fuzzed, path: str, body: dict[str, str]) -> None:
    """What the schema fuzz found (500 until entities._label refused it): a ``lang`` that is not a
    language tag is 400 naming it. (tests/test_api_more.py has ``"not a tag!"`` on /api/entities.)"""
    before = http_dump(fuzzed.server.url, fuzzed.admin)
    r = httpx.post(fuzzed.root + path, json=body, headers=fuzzed.auth(), timeout=10)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "Invalid" and r.json()["where"] == "lang", r.text
    assert http_dump(fuzzed.server.url, fuzzed.admin) == before


# ---------------------------------------------------------------------- /sparql, by hypothesis

RESULT_TYPES = ["application/sparql-results+json", "application/sparql-results+xml", "text/csv",
                "text/tab-separated-values"]
GRAPH_TYPES = ["text/turtle", "application/n-triples", "application/ld+json", "application/rdf+xml"]
CONTENT_TYPES = ["application/x-www-form-urlencoded", "application/sparql-query", "application/sparql-update",
                 "application/sparql-query; charset=latin-1", "application/x-www-form-urlencoded; charset=utf-8",
                 "text/plain", "multipart/form-data", "application/json", ";", "a/b; c=\"d", ""]
KEYS = ["query", "update", "default-graph-uri", "named-graph-uri", "using-graph-uri", "using-named-graph-uri",
        "callback", "format", "output", "timeout", ""]
# Fragments from which random queries are put together: keywords, terms, the dataset's graphs,
# updates and SERVICE. At most one GRAPH pattern over every graph, so no query is expensive.
PIECES = [
    "SELECT", "ASK", "CONSTRUCT", "DESCRIBE", "SELECT *", "SELECT DISTINCT ?s", "SELECT (COUNT(*) AS ?n)",
    "WHERE", "{", "}", "{ ?s ?p ?o }", "GRAPH <urn:wb:graph:meta> { ?s ?p ?o }", "GRAPH ?g { ?s ?p ?o }",
    "FILTER(?o > 3)", 'FILTER(REGEX(STR(?o), "(a+)+$"))', "OPTIONAL { ?s <urn:x> ?x }", "BIND(1/0 AS ?z)",
    "VALUES ?v { 1 2 }", "LIMIT 5", "OFFSET 3", "ORDER BY ?s", "GROUP BY ?s", "PREFIX ex: <http://ex/#>",
    "BASE <http://b/>", "FROM <urn:wb:graph:meta>", "FROM NAMED <urn:x>", "INSERT DATA { <urn:a> <urn:b> <urn:c> }",
    "DELETE WHERE { GRAPH ?g { ?s ?p ?o } }", "CLEAR ALL", "DROP ALL", "LOAD <http://127.0.0.1:9/x>",
    "SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o }", ";", ".", "?s", "<urn:wb:entity:paris>", '"\\u0000"',
    "'''", '"', "#", "\n", "\\", "<", ">", "🙂", "\x00", "\ufeff", "1e999999", "-0", "true", "a", "@en",
    "^^<http://www.w3.org/2001/XMLSchema#integer>", "rdf:type", "_:b0",
]
VALID = [
    "ASK {}", "SELECT * WHERE { GRAPH <urn:wb:graph:meta> { ?s ?p ?o } } LIMIT 3",
    "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <urn:wb:graph:meta> { ?s ?p ?o } } LIMIT 3",
    "DESCRIBE <urn:wb:entity:paris>", "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }",
]
printable = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=60).map(str.strip)
queries = st.one_of(
    st.sampled_from(VALID),
    st.lists(st.sampled_from(PIECES), max_size=12).map(" ".join).filter(lambda q: q.count("GRAPH") <= 1),
    st.text(max_size=200),
)
accepts = st.one_of(
    st.none(),
    st.sampled_from([*RESULT_TYPES, *GRAPH_TYPES, "*/*", "text/html", "image/png", "text/*;q=0.1", ",,;q=x",
                     "application/sparql-results+json;q=0", "text/csv;q=1.5, */*;q=-1"]),
    st.lists(st.sampled_from([*RESULT_TYPES, *GRAPH_TYPES, "*/*"]), min_size=1, max_size=4).map(", ".join),
    printable,
)
content_types = st.one_of(st.none(), st.sampled_from(CONTENT_TYPES), printable)
pairs = st.lists(st.tuples(st.one_of(st.sampled_from(KEYS), st.text(max_size=10)),
                           st.one_of(queries, st.sampled_from(["urn:wb:graph:meta", "not an iri", "<>", ""]))),
                 max_size=4)


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]], bytes | None, dict[str, str]]:
    """A method, query-string pairs, a body and headers: mostly well-formed enough to reach the
    query, often not."""
    method = draw(st.sampled_from(["GET", "GET", "POST", "POST", "POST", "HEAD", "PUT", "PATCH"]))
    params = draw(pairs)
    if draw(st.booleans()):
        params = [("query", draw(queries)), *params]
    body: bytes | None = None
    headers: dict[str, str] = {}
    accept = draw(accepts)
    if accept is not None:
        headers["Accept"] = accept
    if method in ("POST", "PUT", "PATCH"):
        kind = draw(st.sampled_from(["form", "direct", "bytes"]))
        if kind == "form":
            body = urllib.parse.urlencode(draw(pairs)).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif kind == "direct":
            body = draw(queries).encode("utf-8", "surrogatepass")
            headers["Content-Type"] = "application/sparql-query"
        else:
            body = draw(st.binary(max_size=300))
        ctype = draw(content_types)
        if ctype is not None and draw(st.booleans()):
            headers["Content-Type"] = ctype
    return method, params, body, headers


def test_sparql_fuzz_never_fails_and_changes_nothing(fuzzed: Fuzzed) -> None:
    before = http_dump(fuzzed.server.url, fuzzed.admin)
    seen: dict[int, int] = {}

    # As the viewer (or with no token, or a wrong one): whether an admin's SPARQL Update is one day
    # accepted here or not, a viewer's never is, so the store must stay as it was.
    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(request=requests(), who=st.sampled_from(["viewer", "viewer", "viewer", "none", "wrong"]))
    def fuzz(request: tuple[str, list[tuple[str, str]], bytes | None, dict[str, str]], who: str) -> None:
        method, params, body, headers = request
        url = fuzzed.server.url + ("?" + urllib.parse.urlencode(params) if params else "")
        r = httpx.request(method, url, content=body,
                          headers={**headers, **fuzzed.auth(who)}, timeout=60)
        seen[r.status_code] = seen.get(r.status_code, 0) + 1
        assert r.status_code < 500, f"{method} {params!r} {body!r} {headers!r}: {r.status_code} {r.text[:500]}"
        if r.status_code >= 400 and method != "HEAD":
            assert r.headers["content-type"].startswith("text/plain") and r.text.strip(), r.text
        assert all("\r" not in v and "\n" not in v for v in r.headers.values())

    fuzz()
    assert 200 in seen and len(seen) > 3, seen  # the requests reached the query, and were refused in many ways
    assert http_dump(fuzzed.server.url, fuzzed.admin) == before
    assert httpx.get(fuzzed.server.url, params={"query": "ASK {}"}, headers=fuzzed.auth()).json()["boolean"] is True
