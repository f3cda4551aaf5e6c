"""`workbench serve`: the SPARQL 1.1 Protocol endpoint, driven over real HTTP.

Two real server processes (``python -m workbench.cli serve`` under uvicorn), each on its own
store: ``open_server`` has the sample data and the W3C Protocol datasets and no users, so it
takes requests without a token (as a fresh local store does); ``token_server`` has a user, a small
result limit and a short query timeout. The W3C SPARQL 1.1 Protocol manifest runs as data, one
test per test IRI; real clients (SPARQLWrapper, rdflib's SPARQLStore) query the running server;
and bad input must get a clear status and leave the store exactly as it was.
"""

from __future__ import annotations

import csv
import io
import sys
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

from tests.conftest import ROOT, ServerProcess, dump, free_port
from workbench.access import users
from workbench.access.users import Role
from workbench.errors import StoreUnavailable
from workbench.service import Workbench
from workbench.store import Batch, FileLoad, RemoteStore, Store
from workbench.store.embedded import EmbeddedStore

W3C = ROOT / "tests" / "data" / "w3c" / "sparql11-protocol"  # a copy of ../shared/w3c (W3C licence inside)
MF = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#"
HT = "http://www.w3.org/2011/http#"
CNT = "http://www.w3.org/2011/content#"
UT = "http://www.w3.org/2009/sparql/tests/test-update#"
HTS = "http://www.w3.org/2011/http-statusCodes#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
# Each of the W3C update tests starts with CLEAR or DROP, or inserts with INSERT ... WHERE: refused
# by design (403), even with a curator's token; only INSERT DATA into record graphs is accepted
# (tests/test_sparql_update.py). Without a token, as here, every update is 401.
UPDATES_REFUSED = "refused by design: CLEAR, DROP and INSERT ... WHERE are never accepted; only a curator's INSERT DATA"


# ---------------------------------------------------------------------- servers


class Server(ServerProcess):
    """`workbench serve` in a child process on a free loopback port."""

    name = "workbench serve"

    def __init__(self, store: Path, *options: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/sparql"
        self.start([sys.executable, "-m", "workbench.cli", "--store", str(store), "serve", "--port", str(self.port),
                    *options], self.url)


def _w3c_datasets() -> list[tuple[str, str]]:
    """(file, graph IRI) of every dataset a manifest test names with ut:graphData."""
    graph = _manifest()
    found = set()
    for q in graph.quads_for_pattern(None, ox.NamedNode(UT + "graphData"), None):
        node = q.object
        file = next(graph.quads_for_pattern(node, ox.NamedNode(UT + "graph"), None)).object.value  # type: ignore[arg-type]
        label = next(graph.quads_for_pattern(node, ox.NamedNode(RDFS + "label"), None)).object.value  # type: ignore[arg-type]
        found.add((Path(urllib.parse.urlsplit(file).path).name, label))
    return sorted(found)


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A store with the sample data and the W3C datasets (each in the graph the manifest names)."""
    path = tmp_path_factory.mktemp("open") / "store"
    with Workbench.open(path, create=True, user="tester") as wb:
        wb.init(sample=True)
        loads = [FileLoad(W3C / f, ox.RdfFormat.N_TRIPLES, ox.NamedNode(g)) for f, g in _w3c_datasets()]
        wb.store.write(Batch(files=loads))
    server = Server(path)
    yield server
    server.stop()


@dataclass
class TokenServer:
    server: Server
    path: Path
    token: str
    before: bytes = field(default=b"")


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TokenServer]:
    """A store with a user: requests need their token. Small limits to reach them quickly."""
    path = tmp_path_factory.mktemp("tokens") / "store"
    with Workbench.open(path, create=True, user="ada") as wb:
        wb.init()
        token = users.add(wb.store, "ada", [Role.ADMIN], actor="ada", now=wb._now())
        before = dump(wb.store)
    server = Server(path, "--result-limit", "5", "--query-timeout", "1")
    yield TokenServer(server, path, token, before)
    server.stop()


def remote(server: Server) -> Store:
    """The open server seen as a read-only remote store, to compare dumps through it."""
    return RemoteStore(server.url)


# ---------------------------------------------------------------------- the W3C manifest


def _manifest() -> ox.Store:
    store = ox.Store()
    base = (W3C / "manifest.ttl").as_uri()
    store.load(path=str(W3C / "manifest.ttl"), format=ox.RdfFormat.TURTLE, base_iri=base)
    return store


def _one(graph: ox.Store, s: ox.NamedNode | ox.BlankNode, p: str) -> ox.NamedNode | ox.BlankNode | ox.Literal | None:
    found = next(iter(graph.quads_for_pattern(s, ox.NamedNode(p), None)), None)
    return found.object if found else None  # type: ignore[return-value]


def _all(graph: ox.Store, s: ox.NamedNode | ox.BlankNode, p: str) -> list[ox.NamedNode | ox.BlankNode | ox.Literal]:
    return [q.object for q in graph.quads_for_pattern(s, ox.NamedNode(p), None)]  # type: ignore[misc]


def _list(graph: ox.Store, node: ox.NamedNode | ox.BlankNode | ox.Literal | None) -> list[ox.BlankNode]:
    out = []
    while node is not None and node != ox.NamedNode(RDF + "nil"):
        out.append(_one(graph, node, RDF + "first"))  # type: ignore[arg-type]
        node = _one(graph, node, RDF + "rest")  # type: ignore[arg-type]
    return out  # type: ignore[return-value]


def _w3c_tests() -> list[object]:
    graph = _manifest()
    root = next(graph.quads_for_pattern(None, ox.NamedNode(MF + "entries"), None))
    params = []
    for test in _list(graph, root.object):
        name = test.value.rsplit("#", 1)[1]
        marks = [pytest.mark.xfail(reason=UPDATES_REFUSED, strict=True)] if name.startswith("update_") else []
        params.append(pytest.param(test.value, id=name, marks=marks))
    return params


@dataclass
class Step:
    method: str
    path: str
    body: bytes | None
    headers: dict[str, str]
    statuses: set[str]
    boolean: bool | None
    form: str | None


def _steps(test_iri: str) -> list[Step]:
    graph = _manifest()
    action = _one(graph, ox.NamedNode(test_iri), MF + "action")
    steps = []
    for req in _list(graph, _one(graph, action, HT + "requests")):  # type: ignore[arg-type]
        body_node = _one(graph, req, HT + "body")
        body = None
        if body_node is not None:
            chars = _one(graph, body_node, CNT + "chars").value  # type: ignore[union-attr, arg-type]
            encoding = _one(graph, body_node, CNT + "characterEncoding").value  # type: ignore[union-attr, arg-type]
            body = chars.encode(encoding.lower())
        headers = {
            _one(graph, h, HT + "fieldName").value: _one(graph, h, HT + "fieldValue").value  # type: ignore[union-attr, arg-type]
            for h in _list(graph, _one(graph, req, HT + "headers"))
        }
        resp = _one(graph, req, HT + "resp")
        boolean = _one(graph, resp, MF + "expectedBoolean")  # type: ignore[arg-type]
        form = _one(graph, resp, MF + "expectedFormat")  # type: ignore[arg-type]
        steps.append(
            Step(
                method=_one(graph, req, HT + "methodName").value,  # type: ignore[union-attr]
                path=_one(graph, req, HT + "absolutePath").value,  # type: ignore[union-attr]
                body=body,
                headers=headers,
                statuses={s.value.removeprefix(HTS) for s in _all(graph, resp, MF + "expectedStatus")},  # type: ignore[arg-type]
                boolean=None if boolean is None else boolean.value == "true",
                form=None if form is None else form.value,
            )
        )
    return steps


RESULT_TYPES = {
    "application/sparql-results+json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "text/csv": ox.QueryResultsFormat.CSV,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
RDF_TYPES = {
    "text/turtle": ox.RdfFormat.TURTLE,
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "application/rdf+xml": ox.RdfFormat.RDF_XML,
    "application/ld+json": ox.RdfFormat.JSON_LD,
}


def _check(step: Step, response: httpx.Response) -> None:
    code_class = f"StatusCode{response.status_code // 100}xx"
    assert code_class in step.statuses, f"{step.method} {step.path}: {response.status_code} {response.text[:300]}"
    media = response.headers.get("content-type", "").split(";")[0].strip()
    if step.form in ("boolean", "tabular"):
        assert media in RESULT_TYPES, media
        if step.form == "boolean":
            assert media in ("application/sparql-results+json", "application/sparql-results+xml")
        parsed = ox.parse_query_results(response.content, RESULT_TYPES[media])
        if step.boolean is not None:
            assert isinstance(parsed, ox.QueryBoolean) and bool(parsed) is step.boolean
    elif step.form == "RDF":
        assert media in RDF_TYPES, media
        list(ox.parse(response.content, RDF_TYPES[media]))


@pytest.mark.parametrize("test_iri", _w3c_tests())
def test_w3c_protocol(open_server: Server, test_iri: str) -> None:
    before = dump(remote(open_server))
    base = open_server.url.removesuffix("/sparql")
    for step in _steps(test_iri):
        url = base + "/sparql" + step.path.removeprefix("/sparql/").removeprefix("/sparql")
        response = httpx.request(step.method, url, content=step.body, headers=step.headers, timeout=10)
        _check(step, response)
    assert dump(remote(open_server)) == before


# ---------------------------------------------------------------------- protocol details


@pytest.mark.parametrize(
    ("accept", "media"),
    [
        (None, "application/sparql-results+json"),
        ("application/sparql-results+xml", "application/sparql-results+xml"),
        ("text/csv", "text/csv"),
        ("text/tab-separated-values", "text/tab-separated-values"),
        ("text/csv;q=0.2, application/sparql-results+xml;q=0.9", "application/sparql-results+xml"),
    ],
)
def test_select_negotiation(open_server: Server, accept: str | None, media: str) -> None:
    headers = {"Accept": accept} if accept else {}
    query = "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"
    r = httpx.get(open_server.url, params={"query": query}, headers=headers)
    assert r.status_code == 200 and r.headers["content-type"].startswith(media)
    if media == "text/csv":  # lossy: pyoxigraph does not parse it back
        rows = list(csv.reader(io.StringIO(r.text, newline="")))[1:]
    else:
        rows = list(ox.parse_query_results(r.content, RESULT_TYPES[media]))  # type: ignore[arg-type]
    assert len(rows) > 3


@pytest.mark.parametrize(
    ("accept", "media"),
    [
        (None, "text/turtle"),
        ("application/n-triples", "application/n-triples"),
        ("application/ld+json", "application/ld+json"),
        ("application/rdf+xml", "application/rdf+xml"),
    ],
)
def test_construct_negotiation(open_server: Server, accept: str | None, media: str) -> None:
    headers = {"Accept": accept} if accept else {}
    query = "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <urn:wb:graph:ontology> { ?s ?p ?o } } LIMIT 7"
    r = httpx.post(open_server.url, content=query, headers={"Content-Type": "application/sparql-query", **headers})
    assert r.status_code == 200 and r.headers["content-type"].startswith(media)
    assert len(list(ox.parse(r.content, RDF_TYPES[media]))) == 7


def test_unacceptable_accept_is_406(open_server: Server) -> None:
    r = httpx.get(open_server.url, params={"query": "ASK {}"}, headers={"Accept": "image/png"})
    assert r.status_code == 406 and "application/sparql-results+json" in r.text


def test_dataset_parameters_restrict_the_query(open_server: Server) -> None:
    data1 = "http://kasei.us/2009/09/sparql/data/data1.rdf"
    query = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
    r = httpx.get(open_server.url, params=[("query", query), ("named-graph-uri", data1)], headers={"Accept": "text/csv"})
    assert r.text.split() == ["g", data1]
    r = httpx.get(open_server.url, params=[("query", "ASK { ?s ?p ?o }"), ("default-graph-uri", data1)])
    assert r.json()["boolean"] is True


def test_service_description_and_page(open_server: Server) -> None:
    r = httpx.get(open_server.url, headers={"Accept": "text/turtle"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/turtle")
    triples = {(t.subject, t.predicate, t.object) for t in ox.parse(r.content, ox.RdfFormat.TURTLE)}
    sd = "http://www.w3.org/ns/sparql-service-description#"
    assert (ox.NamedNode(open_server.url), ox.NamedNode(RDF + "type"), ox.NamedNode(sd + "Service")) in triples
    page = httpx.get(open_server.url, headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert page.headers["content-type"].startswith("text/html")
    assert '<textarea name="query"' in page.text and "YASGUI" in page.text


def test_other_routes_answer_the_json_error_shape(open_server: Server) -> None:
    r = httpx.get(open_server.url.removesuffix("/sparql") + "/no/such/thing")
    assert r.status_code == 404 and r.json() == {"error": "NotFound", "message": "no such route: /no/such/thing"}


# ---------------------------------------------------------------------- real clients


def test_sparqlwrapper(open_server: Server) -> None:
    SPARQLWrapper = pytest.importorskip("SPARQLWrapper", reason="SPARQLWrapper is not installed")
    client = SPARQLWrapper.SPARQLWrapper(open_server.url)
    client.setQuery("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }")
    client.setReturnFormat(SPARQLWrapper.JSON)
    n = int(client.query().convert()["results"]["bindings"][0]["n"]["value"])  # type: ignore[index]
    assert n > 900
    client.setMethod(SPARQLWrapper.POST)
    client.setQuery("ASK { GRAPH ?g { ?s ?p ?o } }")
    assert client.query().convert()["boolean"] is True  # type: ignore[index]
    client.setQuery("CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <urn:wb:graph:ontology> { ?s ?p ?o } } LIMIT 3")
    client.setReturnFormat(SPARQLWrapper.TURTLE)
    assert len(list(ox.parse(client.query().convert(), ox.RdfFormat.TURTLE))) == 3  # type: ignore[arg-type]


def test_rdflib_sparqlstore(open_server: Server) -> None:
    import rdflib
    from rdflib.plugins.stores.sparqlstore import SPARQLStore

    store = SPARQLStore(open_server.url)
    rows = list(store.query("SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"))
    assert len(rows) > 3 and all(isinstance(r[0], rdflib.URIRef) for r in rows)  # type: ignore[index]
    assert store.query("ASK { GRAPH ?g { ?s ?p ?o } }").askAnswer is True
    store.close()


# ---------------------------------------------------------------------- bad input


BAD = [
    ("malformed", "GET", {"query": "SELECT * WHERE { ?s ?p "}, None, {}, 400, "syntax error"),
    ("service", "GET", {"query": "SELECT * { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"}, None, {}, 400,
     "SERVICE is refused"),
    ("update as query", "GET", {"query": "INSERT DATA { <urn:a> <urn:b> <urn:c> }"}, None, {}, 400, "Update"),
    # A write needs a curator's or an admin's token, even on a store with no users (viewers: 403,
    # forms other than INSERT DATA: 403 for everyone; see tests/test_sparql_update.py).
    ("update param", "POST", None, b"update=CLEAR%20ALL", {"Content-Type": "application/x-www-form-urlencoded"}, 401,
     "SPARQL Update changes the store"),
    ("update body", "POST", None, b"DROP ALL", {"Content-Type": "application/sparql-update"}, 401,
     "SPARQL Update changes the store"),
    ("update by GET", "GET", {"update": "CLEAR ALL"}, None, {}, 400, "cannot be sent by GET"),
    ("too large", "POST", None, b"ASK {}" + b" " * 2_000_000, {"Content-Type": "application/sparql-query"}, 413,
     "larger than"),
    ("put", "PUT", {"query": "ASK {}"}, b"<urn:a> <urn:b> <urn:c> .", {"Content-Type": "text/turtle"}, 405, "PUT"),
    ("delete", "DELETE", None, None, {}, 405, "DELETE"),
    ("bad graph iri", "GET", {"query": "ASK {}", "default-graph-uri": "not an iri"}, None, {}, 400, "not a graph IRI"),
    ("crlf in query", "GET", {"query": "ASK {}\r\nX-Injected: yes\r\n"}, None, {}, 400, "syntax error"),
    ("crlf in graph", "GET", {"query": "ASK {}", "default-graph-uri": "urn:g\r\nX-Injected: yes"}, None, {}, 400,
     "graph IRI"),
]


@pytest.mark.parametrize(("method", "params", "body", "headers", "status", "says"), [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_input_changes_nothing(
    open_server: Server, method: str, params: dict[str, str] | None, body: bytes | None, headers: dict[str, str],
    status: int, says: str,
) -> None:
    before = dump(remote(open_server))
    r = httpx.request(method, open_server.url, params=params, content=body, headers=headers, timeout=10)
    assert r.status_code == status, r.text
    assert says in r.text and r.headers["content-type"].startswith("text/plain")
    if status == 405:
        assert r.headers["allow"] == "GET, HEAD, POST"
    # Nothing a client sends comes back as a header.
    assert "x-injected" not in r.headers
    assert all("\r" not in v and "\n" not in v and "Injected" not in v for v in r.headers.values())
    assert dump(remote(open_server)) == before
    assert httpx.get(open_server.url, params={"query": "ASK {}"}).status_code == 200


def test_fifty_concurrent_connections(open_server: Server) -> None:
    query = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"

    def ask(i: int) -> int:
        with httpx.Client(timeout=30) as client:  # a connection each
            r = client.get(open_server.url, params={"query": query + f" # {i}"})
            return r.status_code if int(r.json()["results"]["bindings"][0]["n"]["value"]) > 900 else -1

    with ThreadPoolExecutor(50) as pool:
        assert list(pool.map(ask, range(50))) == [200] * 50


# ---------------------------------------------------------------------- tokens and limits


def test_tokens(token_server: TokenServer) -> None:
    url, query = token_server.server.url, {"query": "ASK {}"}
    missing = httpx.get(url, params=query)
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    wrong = httpx.get(url, params=query, headers={"Authorization": "Bearer wb_not-a-token"})
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    basic = httpx.get(url, params=query, headers={"Authorization": "Basic YWRhOmFkYQ=="})
    assert basic.status_code == 401
    right = httpx.get(url, params=query, headers={"Authorization": f"Bearer {token_server.token}"})
    assert right.status_code == 200 and right.json()["boolean"] is True


def test_a_second_process_is_told_to_use_the_server(token_server: TokenServer) -> None:
    with pytest.raises(StoreUnavailable, match="if a Workbench server owns it, use its URL"):
        EmbeddedStore(token_server.path)


def test_result_limit(token_server: TokenServer) -> None:
    auth = {"Authorization": f"Bearer {token_server.token}"}
    many = "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }"
    r = httpx.get(token_server.server.url, params={"query": many}, headers=auth)
    assert r.status_code == 413 and "more than 5 rows; add LIMIT" in r.text
    r = httpx.get(token_server.server.url, params={"query": many + " LIMIT 5"}, headers=auth)
    assert r.status_code == 200 and len(r.json()["results"]["bindings"]) == 5
    construct = "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"
    r = httpx.get(token_server.server.url, params={"query": construct}, headers=auth)
    assert r.status_code == 413 and "more than 5 triples" in r.text
    r = httpx.get(token_server.server.url, params={"query": many}, headers={**auth, "Accept": "text/csv"})
    assert r.status_code == 413 and "more than 5 rows" in r.text


def test_query_timeout_keeps_the_server_up(token_server: TokenServer) -> None:
    auth = {"Authorization": f"Bearer {token_server.token}"}
    values = " ".join(str(i) for i in range(100))
    slow = f"SELECT (COUNT(*) AS ?n) {{ VALUES ?a {{{values}}} VALUES ?b {{{values}}} VALUES ?c {{{values}}} " \
           f"VALUES ?d {{{values}}} }}"  # 10^8 rows: seconds, past the 1 s deadline
    started = time.monotonic()
    r = httpx.get(token_server.server.url, params={"query": slow}, headers=auth, timeout=30)
    assert r.status_code == 503 and "did not finish within 1 s" in r.text
    assert time.monotonic() - started < 5
    r = httpx.get(token_server.server.url, params={"query": "ASK {}"}, headers=auth)
    assert r.status_code == 200


def test_token_store_unchanged_after_everything(token_server: TokenServer) -> None:
    """Runs last in this module: stop the server, open its store, compare with the start."""
    token_server.server.stop()
    with EmbeddedStore(token_server.path) as store:
        assert dump(store) == token_server.before


# ---------------------------------------------------------------------- the dataset option on every backend


def test_query_raw_dataset_option(store: Store) -> None:
    g1, g2 = ox.NamedNode("urn:test:g1"), ox.NamedNode("urn:test:g2")
    a, p = ox.NamedNode("urn:test:a"), ox.NamedNode("urn:test:p")
    store.write(Batch(quads=[ox.Quad(a, p, ox.Literal("one"), g1), ox.Quad(a, p, ox.Literal("two"), g2)]))

    def rows(query: str, **dataset: list[ox.NamedNode] | None) -> list[str]:
        raw = store.query_raw(query, results=ox.QueryResultsFormat.TSV, graph=ox.RdfFormat.TURTLE, **dataset)
        return sorted(raw.decode().split()[1:])

    assert rows("SELECT ?o WHERE { ?s ?p ?o }", default_graph=[g1]) == ['"one"']
    assert rows("SELECT ?o WHERE { GRAPH ?g { ?s ?p ?o } }", named_graphs=[g2]) == ['"two"']
    assert rows("SELECT ?o WHERE { GRAPH ?g { ?s ?p ?o } }") == ['"one"', '"two"']
    # Given by the protocol, the dataset replaces the query's own FROM.
    assert rows("SELECT ?o FROM <urn:test:g2> WHERE { ?s ?p ?o }", default_graph=[g1]) == ['"one"']
    assert rows("SELECT ?o WHERE { ?s ?p ?o }", named_graphs=[g1]) == []
