"""SPARQL Update at /sparql: a curator's or admin's INSERT DATA into record graphs lands as an
import (validation, provenance, all or nothing); everything else is refused, the store unchanged.

One real ``workbench serve`` process over a store with three users (an admin, a curator, a
viewer) and one record only the group ``group:atlas`` may see. Every refused request is checked
against an N-Quads dump of the whole store taken through /sparql before and after it.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

import workbench
from tests.conftest import dump
from tests.test_server import Server
from workbench.errors import WorkbenchError
from workbench.server import updates
from workbench.server.protocol import ProtocolError
from workbench.service import Workbench
from workbench.store.embedded import EmbeddedStore

UPDATE = {"Content-Type": "application/sparql-update"}
EX = "PREFIX ex: <http://example.org/>\n"
BASE = "http://127.0.0.1/sparql"


@dataclass
class Served:
    server: Server
    path: Path
    admin: str
    curator: str
    viewer: str

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {getattr(self, who)}"}

    def update(self, text: str, who: str | None = "curator") -> httpx.Response:
        headers = {**UPDATE, **(self.auth(who) if who else {})}
        return httpx.post(self.server.url, content=text.encode(), headers=headers, timeout=30)

    def ask(self, query: str, who: str = "viewer") -> bool:
        r = httpx.get(self.server.url, params={"query": query}, headers=self.auth(who), timeout=30)
        assert r.status_code == 200, r.text
        return bool(r.json()["boolean"])

    def dump(self) -> bytes:
        """Every quad the admin can see through /sparql (every graph), sorted, as N-Quads."""
        query = "SELECT ?s ?p ?o ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
        r = httpx.get(self.server.url, params={"query": query},
                      headers={**self.auth("admin"), "Accept": "application/sparql-results+xml"}, timeout=60)
        assert r.status_code == 200, r.text
        quads = [ox.Quad(row["s"], row["p"], row["o"], row["g"])  # type: ignore[arg-type]
                 for row in ox.parse_query_results(r.content, ox.QueryResultsFormat.XML)]  # type: ignore[union-attr]
        return b"".join(sorted(ox.serialize([q], format=ox.RdfFormat.N_QUADS) or b"" for q in quads))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("updates")
    path = folder / "store"
    secret = folder / "secret.trig"
    secret.write_text("GRAPH <urn:wb:record:atlas-secret> { <http://example.org/atlas> "
                      "<http://example.org/region> \"eu\" }\n")
    with Workbench.open(path, create=True, user="root") as wb:
        wb.init()
        admin = wb.add_user("root", ["admin"])
        curator = wb.add_user("cora", ["curator"])
        viewer = wb.add_user("vic", ["viewer"])
        wb.import_files([secret], source="atlas-notes", visible_to=["group:atlas"])
        wb.add_entity("Paris")
    server = Server(path)
    yield Served(server, path, admin, curator, viewer)
    server.stop()


def refused(served: Served, text: str, who: str | None, status: int, says: str) -> httpx.Response:
    """Send an update that must be refused with ``status`` saying ``says``, and the store unchanged."""
    before = served.dump()
    r = served.update(text, who)
    assert r.status_code == status, r.text
    assert says in r.text and r.headers["content-type"].startswith("text/plain"), r.text
    assert served.dump() == before
    return r


# ---------------------------------------------------------------------- accepted


def test_curator_insert_data_lands_as_a_record_with_provenance(served: Served) -> None:
    text = EX + 'INSERT DATA { GRAPH <urn:wb:record:car-1> { ex:my-car ex:needs "gasoline" ; a ex:PetrolCar } }'
    r = served.update(text)
    assert r.status_code == 200, r.text
    done = r.json()
    assert done["records_added"] == 1 and done["records_unchanged"] == 0 and done["said_by"] == "cora"
    assert done["graphs"] == ["urn:wb:record:car-1"] and done["source"].startswith("sparql-update:")
    act = done["import"]
    # Visible to a viewer through a query: the triples, and their provenance.
    assert served.ask(EX + 'ASK { GRAPH <urn:wb:record:car-1> { ex:my-car ex:needs "gasoline" } }')
    source = "<urn:wb:source:" + urllib.parse.quote(done["source"], safe="-._~!$&'()*+,;=@") + ">"
    assert served.ask(f"""PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX wb: <https://w3id.org/workbench/ns#>
        PREFIX dcterms: <http://purl.org/dc/terms/>
        ASK {{ GRAPH {source} {{  # the import run, beside the source it took the record from
            <{act}> a wb:Import ; prov:wasAssociatedWith <urn:wb:agent:cora> ; prov:used ?file .
            FILTER(?file = "SPARQL Update {done['source']}")  # what it came from, not a temporary file
        }}
        GRAPH {source} {{  # the source, in its own graph, with the record's metadata
            <urn:wb:record:car-1> a wb:Assertion ; wb:status wb:Active ; wb:recordType wb:Observation ;
                prov:wasAttributedTo <urn:wb:agent:cora> ; prov:wasGeneratedBy <{act}> ;
                prov:wasDerivedFrom {source} .
            {source} a wb:Source ; dcterms:identifier "{done['source']}" ; prov:wasAttributedTo <urn:wb:agent:cora> .
            FILTER NOT EXISTS {{ {source} wb:visibleTo ?anyone }}
        }} }}""")
    # The JSON API tells the same record, attributed to the curator.
    record = workbench.connect(served.server.url, served.viewer).record("car-1")
    assert record.said_by == "cora" and record.source.id == done["source"]
    # The same triples again: unchanged, nothing added.
    before = served.dump()
    again = served.update(text)
    assert again.status_code == 200 and again.json()["records_added"] == 0 and again.json()["records_unchanged"] == 1
    assert served.dump() == before


def test_form_post_by_an_admin_several_graphs_and_literals_as_written(served: Served) -> None:
    text = EX + """PREFIX ex2: <http://example.org/two/>
        BASE <http://example.org/base/>
        INSERT DATA {
          GRAPH <urn:wb:record:form-1> { ex:atlas ex:region "EU"@en ; ex:since "2026-06-01"^^<http://www.w3.org/2001/XMLSchema#date> } .
          GRAPH <relative-graph> { ex:atlas ex:note '''a "quoted" } brace; and # not a comment''' }
        } ;
        INSERT DATA { GRAPH <urn:wb:record:form-2> { ex2:a ex2:b [ ex2:c ( 1 2.5 ) ] } }"""
    r = httpx.post(served.server.url, data={"update": text}, headers=served.auth("admin"), timeout=30)
    assert r.status_code == 200, r.text
    assert r.json()["records_added"] == 3 and r.json()["said_by"] == "root"
    assert served.ask('ASK { GRAPH <http://example.org/base/relative-graph> { ?s ?p ?o '
                      'FILTER(CONTAINS(?o, "brace; and # not")) } }')
    assert served.ask('ASK { GRAPH <urn:wb:record:form-2> { ?list <http://www.w3.org/1999/02/22-rdf-syntax-ns#first> '
                      '?one . ?rest <http://www.w3.org/1999/02/22-rdf-syntax-ns#first> "2.5"^^'
                      '<http://www.w3.org/2001/XMLSchema#decimal> } }')


def test_a_relation_inserted_by_an_update_answers_at_once(served: Served) -> None:
    """The server's Workbench reads relation labels once; an update that brings one makes it forget."""
    client = workbench.connect(served.server.url, served.admin)
    with pytest.raises(WorkbenchError):
        client.ask("Paris", "adores")  # not a relation yet (and now the labels are read)
    text = ('PREFIX wb: <https://w3id.org/workbench/ns#>\nINSERT DATA { GRAPH <urn:wb:record:adores-1> { '
            '<https://example.org/adores> wb:relationLabel "adores" . '
            '<urn:wb:entity:paris> <https://example.org/adores> <urn:wb:entity:paris> } }')
    assert served.update(text).status_code == 200
    assert client.ask("Paris", "adores").values == ["Paris"]


def test_sparqlwrapper_sends_an_update(served: Served) -> None:
    SPARQLWrapper = pytest.importorskip("SPARQLWrapper", reason="SPARQLWrapper is not installed")
    client = SPARQLWrapper.SPARQLWrapper(served.server.url)
    client.setMethod(SPARQLWrapper.POST)
    client.addCustomHttpHeader("Authorization", f"Bearer {served.curator}")
    client.setQuery(EX + 'INSERT DATA { GRAPH <urn:wb:record:wrapper-1> { ex:tool ex:sends "updates" } }')
    result = client.query()
    assert result.response.status == 200
    assert served.ask(EX + 'ASK { GRAPH <urn:wb:record:wrapper-1> { ex:tool ex:sends "updates" } }')


def test_service_description_lists_update_for_curators_only(served: Served) -> None:
    sd = b"sparql-service-description#SPARQL11Update"
    for who, listed in (("curator", True), ("admin", True), ("viewer", False)):
        r = httpx.get(served.server.url, headers={**served.auth(who), "Accept": "text/turtle"}, timeout=10)
        assert r.status_code == 200
        triples = ox.serialize(ox.parse(r.content, ox.RdfFormat.TURTLE), format=ox.RdfFormat.N_TRIPLES) or b""
        assert (sd in triples) is listed, who


# ---------------------------------------------------------------------- refused: who


def test_viewer_update_is_403_and_changes_nothing(served: Served) -> None:
    refused(served, EX + 'INSERT DATA { GRAPH <urn:wb:record:v-1> { ex:a ex:b "c" } }', "viewer", 403,
            "needs the curator or admin role; vic has viewer")


def test_no_token_is_401(served: Served) -> None:
    r = refused(served, EX + 'INSERT DATA { GRAPH <urn:wb:record:n-1> { ex:a ex:b "c" } }', None, 401, "token")
    assert r.headers["www-authenticate"].startswith("Bearer")


def test_an_update_needs_a_token_even_on_a_store_without_users(tmp_path: Path) -> None:
    path = tmp_path / "open"
    with Workbench.open(path, create=True, user="me") as wb:
        wb.init()
    server = Server(path)
    try:
        r = httpx.post(server.url, content=b'INSERT DATA { GRAPH <urn:wb:record:o-1> { <urn:a> <urn:b> "c" } }',
                       headers=UPDATE, timeout=30)
        assert r.status_code == 401 and "curator" in r.text and r.headers["www-authenticate"].startswith("Bearer")
    finally:
        server.stop()
    with EmbeddedStore(path) as store:
        assert not store.has_graph(ox.NamedNode("urn:wb:record:o-1"))


def test_update_by_get_or_in_the_url_is_400(served: Served) -> None:
    text = EX + 'INSERT DATA { GRAPH <urn:wb:record:g-1> { ex:a ex:b "c" } }'
    before = served.dump()
    r = httpx.get(served.server.url, params={"update": text}, headers=served.auth("admin"), timeout=10)
    assert r.status_code == 400 and "cannot be sent by GET" in r.text
    r = httpx.post(served.server.url, params={"update": text}, data={"x": "y"}, headers=served.auth("admin"))
    assert r.status_code == 400 and "request body, not the URL" in r.text
    r = httpx.post(served.server.url, params={"using-graph-uri": "urn:g"}, content=text.encode(),
                   headers={**UPDATE, **served.auth("admin")})
    assert r.status_code == 400 and "INSERT DATA, has none" in r.text
    assert served.dump() == before


# ---------------------------------------------------------------------- refused: what


REFUSED_FORMS = [
    ("DELETE DATA", EX + 'DELETE DATA { GRAPH <urn:wb:record:car-1> { ex:my-car ex:needs "gasoline" } }'),
    ("DELETE WHERE", "DELETE WHERE { GRAPH ?g { ?s ?p ?o } }"),
    ("DELETE", EX + "DELETE { GRAPH ?g { ?s ?p ?o } } INSERT { GRAPH ?g { ?s ?p 1 } } WHERE { GRAPH ?g { ?s ?p ?o } }"),
    ("INSERT", "INSERT { GRAPH <urn:wb:record:w> { ?s ?p ?o } } WHERE { GRAPH ?g { ?s ?p ?o } }"),
    ("WITH", "WITH <urn:wb:record:car-1> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }"),
    ("LOAD", "LOAD <http://127.0.0.1:1/data.ttl> INTO GRAPH <urn:wb:record:l-1>"),
    ("CLEAR", "CLEAR ALL"),
    ("DROP", "DROP GRAPH <urn:wb:record:car-1>"),
    ("CREATE", "CREATE GRAPH <urn:wb:record:c-1>"),
    ("ADD", "ADD <urn:wb:record:car-1> TO <urn:wb:record:c-2>"),
    ("MOVE", "MOVE <urn:wb:record:car-1> TO <urn:wb:record:c-2>"),
    ("COPY", "COPY <urn:wb:record:car-1> TO <urn:wb:record:c-2>"),
    ("CLEAR", 'INSERT DATA { GRAPH <urn:wb:record:c-3> { <urn:a> <urn:b> "c" } } ; CLEAR GRAPH <urn:wb:graph:meta>'),
]


@pytest.mark.parametrize(("form", "text"), REFUSED_FORMS, ids=[f"{f} {i}" for i, (f, _) in enumerate(REFUSED_FORMS)])
def test_every_other_update_form_is_refused_by_an_admin_too(served: Served, form: str, text: str) -> None:
    r = refused(served, text, "admin", 403, f"refused: {form}.")
    for command in ("INSERT DATA", "workbench import", "workbench retract", "workbench supersede", "workbench erase"):
        assert command in r.text


def test_insert_data_into_the_metadata_graph_is_refused(served: Served) -> None:
    refused(served, 'PREFIX wb: <https://w3id.org/workbench/ns#>\nINSERT DATA { GRAPH <urn:wb:graph:meta> { '
            '<urn:wb:record:car-1> wb:status wb:Retracted } }', "admin", 403,
            "INSERT DATA into <urn:wb:graph:meta> is refused")
    refused(served, 'INSERT DATA { GRAPH <urn:wb:graph:users> { <urn:wb:agent:vic> '
            '<https://w3id.org/workbench/ns#role> <https://w3id.org/workbench/ns#Admin> } }', "curator", 403,
            "INSERT DATA into <urn:wb:graph:users> is refused")
    refused(served, 'INSERT DATA { GRAPH <urn:wb:source:x> { <urn:a> <urn:b> "c" } }', "curator", 403,
            "Workbench writes its own graphs")


def test_insert_data_into_the_default_graph_is_refused(served: Served) -> None:
    refused(served, EX + 'INSERT DATA { ex:a ex:b "c" . GRAPH <urn:wb:record:d-1> { ex:a ex:b "c" } }', "curator",
            403, "INSERT DATA into the default graph is refused")


def test_malformed_update_is_400_with_the_parsers_message(served: Served) -> None:
    refused(served, EX + "INSERT DATA { GRAPH <urn:wb:record:m-1> { ex:a ex:b } }", "curator", 400, "error at 2:")
    refused(served, "INSERT DATA { GRAPH ?g { <urn:a> <urn:b> <urn:c> } }", "curator", 400, "error at 1:")
    refused(served, "INSRT DATA { }", "curator", 400, "error at 1:")


def test_update_failing_the_imports_validation_is_400_and_changes_nothing(served: Served) -> None:
    """The import's own checks refuse it before anything lands: here a literal the store would
    rewrite (a curator's value is never changed behind their back) and an ill-typed one."""
    refused(served, EX + 'INSERT DATA { GRAPH <urn:wb:record:bad-1> { ex:a ex:count "007"^^'
            '<http://www.w3.org/2001/XMLSchema#integer> } }', "curator", 400,
            'would be stored as "7"^^<http://www.w3.org/2001/XMLSchema#integer>; write that instead')
    r = refused(served, EX + 'INSERT DATA { GRAPH <urn:wb:record:bad-2> { ex:a ex:on "2026-13-45"^^'
                '<http://www.w3.org/2001/XMLSchema#date> } GRAPH <urn:wb:record:bad-3> { ex:a ex:b "fine" } }',
                "curator", 400, "is not a valid xsd:date")
    assert "/tmp" not in r.text and "the update" in r.text  # no temporary file named to the client


def test_a_recorded_graph_is_never_rewritten(served: Served) -> None:
    assert served.update(EX + 'INSERT DATA { GRAPH <urn:wb:record:atlas-1> { ex:x ex:y "one" } }').status_code == 200
    refused(served, EX + 'INSERT DATA { GRAPH <urn:wb:record:atlas-1> { ex:x ex:y "two" } }', "curator", 409,
            "records are never rewritten")


def test_a_graph_the_curator_may_not_see_is_as_taken_as_any_other(served: Served) -> None:
    """Cora is not in group:atlas: its record is hidden from her, and she cannot write into it. The
    answer is one, whatever she writes: it confirms nothing of what the graph holds."""
    assert not served.ask("ASK { GRAPH <urn:wb:record:atlas-secret> { ?s ?p ?o } }", "curator")
    for triple in ('ex:atlas ex:region "eu"', 'ex:atlas ex:region "secret"'):
        refused(served, EX + f"INSERT DATA {{ GRAPH <urn:wb:record:atlas-secret> {{ {triple} }} }}", "curator",
                409, "the update: the record id 'atlas-secret' is taken; choose another id")


def test_store_after_everything(served: Served) -> None:
    """Runs last: stop the server; what landed is exactly the accepted updates' records."""
    served.server.stop()
    with EmbeddedStore(served.path) as store:
        records = sorted(g.value for g in store.graph_names() if g.value.startswith("urn:wb:record:"))
        assert dump(store).count(b"prov#wasAttributedTo> <urn:wb:agent:cora>") >= 2
    assert records == ["urn:wb:record:adores-1", "urn:wb:record:atlas-1", "urn:wb:record:atlas-secret",
                       "urn:wb:record:car-1",
                       "urn:wb:record:form-1", "urn:wb:record:form-2", "urn:wb:record:wrapper-1"]


# ---------------------------------------------------------------------- reading the text (no server)


@pytest.mark.parametrize("text", [
    # Each hides a LOAD from a reader that takes too much for a comment; none may reach pyoxigraph.
    "PREFIX ex: <http://e/> INSERT DATA { GRAPH <urn:wb:record:a> { ex:s ex:p ex:o\\# } } ; "
    "LOAD <http://127.0.0.1:1/> ; INSERT DATA { GRAPH <urn:wb:record:a> { ex:s ex:p ex:o \n} }",
    "INSERT DATA { GRAPH <urn:wb:record:a> { <urn:s> <urn:p> <urn:\\u0063#> } } ; "
    "LOAD <http://127.0.0.1:1/> ; INSERT DATA { GRAPH <urn:wb:record:a> { <urn:s> <urn:p> <urn:o> \n} }",
    "INSERT DATA { GRAPH <urn:wb:record:a> { <urn:s> <urn:p> <urn:o> } } # comment\r"
    "; LOAD <http://127.0.0.1:1/>",
    "insert data { graph <urn:wb:record:a> { <urn:s> <urn:p> <urn:o> } } ; load <http://127.0.0.1:1/>",
])
def test_a_hidden_load_is_refused_before_anything_runs(text: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        updates.read_insert(text, BASE)
    assert caught.value.status == 403 and "LOAD" in caught.value.message


def test_insert_data_is_read_as_written() -> None:
    text = ("PREFIX ex: <http://e/>\n# a comment with INSERT DATA { and } and ;\n"
            'INSERT DATA { GRAPH ex:g { ex:s ex:p "007"^^<http://www.w3.org/2001/XMLSchema#integer>, "a;b}" ;'
            " ex:q ex:o\\#x } . GRAPH <rel> { _:b ex:p _:b } . } ;\n INSERT DATA { GRAPH <http://other/g2> "
            "{ <s> <p> <o> } } ;")
    found = updates.read_insert(text, BASE)
    assert [g.value for g in found.graphs] == ["http://127.0.0.1/rel", "http://e/g", "http://other/g2"]
    literals = {q.object for q in found.quads if isinstance(q.object, ox.Literal)}
    assert ox.Literal("007", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")) in literals
    assert ox.NamedNode("http://e/o#x") in {q.object for q in found.quads}
    assert len(found.quads) == 5
