"""The SPARQL page (workbench/ui/pages/sparql.py) in AppTest against a real `workbench serve`:
results as a table, ASK as yes or no, CONSTRUCT as Turtle, downloads in the standard formats,
syntax errors with their line and column, and what a viewer may not see."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

import pyoxigraph as ox
import pytest
from streamlit.testing.v1 import AppTest

import workbench
from tests.uitest import UiServer, elements, errors, page, texts, ui_server
from workbench.ui.pages.sparql import EXAMPLES, fetch, query_form, results, run, term


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    with ui_server(tmp_path_factory) as found:
        yield found


def plain(ui: UiServer, user: str, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The page with the plain text box (AppTest cannot type into the code editor component)."""
    at = page(ui, "sparql", user, monkeypatch)
    return at.toggle(key="sparql.plain").set_value(True).run()


def query(at: AppTest, text: str) -> AppTest:
    at.text_area(key="sparql.text").input(text)
    return at.button(key="FormSubmitter:sparql.form-Run").click().run()


def downloads(at: AppTest) -> list[str]:
    return [e.proto.label for e in elements(at, "download_button")]


def test_the_editor_is_the_default_and_its_scripts_ship_with_it(ui: UiServer,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(ui, "sparql", "vic", monkeypatch)
    assert errors(at) == []
    assert [e.proto.component_name for e in elements(at, "component_instance")] == ["code_editor.code_editor"]
    import code_editor

    build = __import__("pathlib").Path(code_editor.__file__).parent / "frontend" / "build"
    assert (build / "index.html").is_file()  # served from the package: nothing loaded from elsewhere
    assert "src=\"http" not in (build / "index.html").read_text(encoding="utf-8")
    assert any("sparql" in p.read_text(encoding="utf-8", errors="replace")[:2000].lower()
               for p in build.glob("*.js"))  # Ace's SPARQL highlighting


def test_a_select_as_a_table_with_downloads(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = plain(ui, "vic", monkeypatch)
    query(at, EXAMPLES["Records and their statements"])
    assert errors(at) == []
    [table] = [d.value for d in at.dataframe]
    assert list(table.columns) == ["id", "statement", "source"]
    assert "m-car-1" in set(table["id"]) and "p-van-1" not in set(table["id"])  # only what vic may see
    assert downloads(at) == ["JSON", "XML", "CSV", "TSV"]
    at.toggle(key="sparql.full").set_value(True).run()
    [table] = [d.value for d in at.dataframe]
    assert table.loc[table["id"] == '"m-car-1"', "source"].tolist() == ["<urn:wb:source:chat-2026-01-04%232>"]


def test_ask_is_yes_or_no_and_construct_is_turtle(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = plain(ui, "vic", monkeypatch)
    query(at, EXAMPLES["Is anything recorded about my car?"])
    assert errors(at) == [] and [s.value for s in at.success] == ["The answer is yes (true)."]
    query(at, "ASK { GRAPH ?g { <urn:wb:entity:secret-van> ?p ?o } }")
    assert [i.value for i in at.info] == ["The answer is no (false)."]  # hidden from vic
    query(at, EXAMPLES["The triples of one record"])
    assert errors(at) == []
    [turtle] = [c.value for c in at.code]
    assert len(list(ox.parse(turtle.encode(), format=ox.RdfFormat.TURTLE))) == 2
    assert "2 triples, as Turtle." in texts(at)
    assert downloads(at) == ["Turtle", "N-Triples", "JSON-LD"]


def test_a_syntax_error_names_its_line_and_column(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = plain(ui, "vic", monkeypatch)
    bad = "SELECT *\nWHER { ?s ?p ?o }"
    query(at, bad)
    [error] = errors(at)
    assert error == "The query has a mistake at line 2, column 7: expected DISTINCT"  # where the parser gave up
    [pointer] = [c.value for c in at.code]
    assert pointer == "   2 | WHER { ?s ?p ?o }\n     |       ^"
    assert at.text_area(key="sparql.text").value == bad  # what was typed is kept
    assert not at.dataframe


def test_updates_are_refused_in_words(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = plain(ui, "ada", monkeypatch)
    query(at, "INSERT DATA { GRAPH <urn:wb:record:x> { <urn:a> <urn:b> <urn:c> } }")
    [error] = errors(at)
    assert "SPARQL Update" in error


def test_examples_fill_the_box(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = plain(ui, "vic", monkeypatch)
    at.selectbox(key="sparql.example").select("The triples of one record").run()
    assert at.text_area(key="sparql.text").value == EXAMPLES["The triples of one record"]


def test_the_rules_conclusions_on_request(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same query without and with the rules' conclusions: derived needs only with them, in
    the reserved graph; a download gives the same rows as the table."""
    name = "What things need, recorded and derived (turn on the rules' conclusions)"
    at = plain(ui, "vic", monkeypatch)
    query(at, EXAMPLES[name])
    [table] = [d.value for d in at.dataframe]
    assert "urn:wb:graph:derived" not in set(table["graph"]) and len(table) > 0
    at.toggle(key="sparql.reasoning").set_value(True).run()
    query(at, EXAMPLES[name])
    assert errors(at) == []
    [table] = [d.value for d in at.dataframe]
    derived = table[table["graph"] == "urn:wb:graph:derived"]
    assert ("urn:wb:entity:my-car", "urn:wb:entity:gasoline") in set(zip(derived["thing"], derived["needs"], strict=True))
    client = workbench.connect(ui.url, ui.tokens["vic"])
    rows = json.loads(fetch(client, EXAMPLES[name], "json", True)())["results"]["bindings"]
    assert len(rows) == len(table)


def test_downloads_fetch_each_format(ui: UiServer) -> None:
    client = workbench.connect(ui.url, ui.tokens["vic"])
    select = EXAMPLES["Records by graph size"]
    assert json.loads(fetch(client, select, "json")())["head"]["vars"] == ["g", "triples"]
    assert b"<sparql" in fetch(client, select, "xml")()
    assert next(csv.reader(io.StringIO(fetch(client, select, "csv")().decode())))[:2] == ["g", "triples"]
    assert fetch(client, select, "tsv")().decode().startswith("?g\t?triples")
    construct = EXAMPLES["The triples of one record"]
    assert len(list(ox.parse(fetch(client, construct, "ntriples")(), format=ox.RdfFormat.N_TRIPLES))) == 2
    assert json.loads(fetch(client, construct, "jsonld")())
    assert run(client, "DESCRIBE <urn:wb:entity:my-car>").form == "graph"


def test_query_forms_and_terms() -> None:
    assert query_form("select * {}") == "SELECT"
    assert query_form("# ASK\nBASE <http://x/>\nPREFIX : <http://x/#a>\nPREFIX ex:<http://e/> DESCRIBE ex:a") == "DESCRIBE"
    assert query_form("INSERT DATA {}") is None
    assert term({"type": "literal", "value": 'say "hi"', "xml:lang": "en"}, True) == '"say \\"hi\\""@en'
    assert term({"type": "literal", "value": "7", "datatype": "http://www.w3.org/2001/XMLSchema#integer"},
                True) == '"7"^^<http://www.w3.org/2001/XMLSchema#integer>'
    assert term({"type": "bnode", "value": "b0"}) == "_:b0"
    table = results(b'{"head": {"vars": ["a", "b"]}, "results": {"bindings": [{"a": {"type": "uri", "value": "x"}}]}}')
    assert not isinstance(table, bool) and table.to_dict("records") == [{"a": "x", "b": None}]
    assert results(b'{"head": {}, "boolean": false}') is False
    numbers = results(b'{"head": {"vars": ["n", "x"]}, "results": {"bindings": [{"n": {"type": "literal", "value": "7", '
                      b'"datatype": "http://www.w3.org/2001/XMLSchema#integer"}, "x": {"type": "literal", "value": "1.5", '
                      b'"datatype": "http://www.w3.org/2001/XMLSchema#decimal"}}]}}')
    assert not isinstance(numbers, bool) and numbers.to_dict("records") == [{"n": 7, "x": 1.5}]  # sorted as numbers
