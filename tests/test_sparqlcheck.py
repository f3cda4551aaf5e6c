"""What SPARQL from outside may be (workbench.sparqlcheck): SERVICE refused however spelled, size
and nesting bounded before any parser sees the text, and no false alarms on ordinary queries.

The SERVICE check is tested against pyoxigraph itself: a seeded stream of queries mixing SERVICE
(in every spelling and place) with the lexical tricks that fool a masking reader goes to a real
pyoxigraph store beside a local listener, and every query that made pyoxigraph connect must have
been refused. The bounds are tested the same way: queries right at each limit run, in a child
process, on a 2 MiB stack (a quarter of the default) without crashing.
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner

from tests.test_security_sparql import Listener
from tests.test_security_sparql import listener as listener_fixture
from workbench.cli import main
from workbench.errors import Invalid
from workbench.service import Workbench
from workbench.sparqlcheck import (
    MAX_CHAIN,
    MAX_CHARS,
    MAX_DEPTH,
    check_query,
    expand_escapes,
    on_big_stack,
    query_form,
    scan,
)


def regression(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.regression(reason)


U = "http://127.0.0.1:9/sparql"
SERVICE_QUERIES = {
    # the two from the security issue
    "a '<' read as an IRI hides SERVICE": f"SELECT * WHERE {{ FILTER(''<'>') SERVICE <{U}> {{ ?s ?p ?o }} FILTER(1 != 'x') }}",
    "SERVICE after a dot": f"SELECT * WHERE {{ BIND(1 AS ?a) .SERVICE <{U}> {{ ?s ?p ?o }} }}",
    # found while fixing it
    "a comment ended by CR": f"SELECT * WHERE {{ BIND(1 AS ?a) # x\rSERVICE <{U}> {{ ?s ?p ?o }}\n }}",
    "glued to a number": f"SELECT * WHERE {{ ?s ?p 1SERVICE <{U}> {{ }} }}",
    "glued to a decimal point": f"SELECT * WHERE {{ ?s ?p 1.SERVICE <{U}> {{ }} }}",
    "glued to true": f"SELECT * WHERE {{ ?s ?p trueSERVICE <{U}> {{ }} }}",
    "glued to SILENT": f"SELECT * WHERE {{ BIND(1 AS ?a) SERVICESILENT <{U}> {{ }} }}",
    "less than a triple-term-looking IRI": f"SELECT * WHERE {{ FILTER(?o<<urn:x>) BIND(1 AS ?a) SERVICE <{U}> {{ }} }}",
    "a unicode escape (engines that expand them)": f"SELECT * WHERE {{ \\u0053ERVICE <{U}> {{ }} }}",
    # every place a group pattern stands
    "lower case": f"select * where {{ service <{U}> {{ ?s ?p ?o }} }}",
    "silent": f"SELECT * WHERE {{ SERVICE SILENT <{U}> {{ ?s ?p ?o }} }}",
    "no space": f"SELECT * WHERE {{SERVICE<{U}>{{?s ?p ?o}}}}",
    "a variable": f"SELECT * WHERE {{ VALUES ?e {{ <{U}> }} SERVICE ?e {{ ?s ?p ?o }} }}",
    "a subquery": f"SELECT * WHERE {{ {{ SELECT * WHERE {{ SERVICE <{U}> {{ ?s ?p ?o }} }} }} }}",
    "FILTER EXISTS": f"ASK {{ FILTER EXISTS {{ SERVICE <{U}> {{ ?s ?p ?o }} }} }}",
    "FILTER(NOT EXISTS)": f"ASK {{ FILTER(NOT EXISTS {{ SERVICE <{U}> {{ ?s ?p ?o }} }}) }}",
    "MINUS": f"SELECT * WHERE {{ ?a ?b ?c MINUS {{ SERVICE <{U}> {{ ?a ?b ?c }} }} }}",
    "OPTIONAL": f"SELECT * WHERE {{ OPTIONAL {{ SERVICE <{U}> {{ ?a ?b ?c }} }} }}",
    "CONSTRUCT": f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ SERVICE <{U}> {{ ?s ?p ?o }} }}",
    "DESCRIBE": f"DESCRIBE ?s WHERE {{ SERVICE <{U}> {{ ?s ?p ?o }} }}",
    "after a comment line": f"# SERVICE in a comment\nASK {{ SERVICE <{U}> {{ ?s ?p ?o }} }}",
}
HARMLESS = {
    "a string": "SELECT * WHERE { ?s ?p 'SERVICE <http://x/> { }' }",
    "a long string": 'SELECT * WHERE { ?s ?p """a\nSERVICE <http://x/> { }""" }',
    "an IRI": "SELECT * WHERE { ?s ?p <http://example.org/service/1> }",
    "an IRI compared": "SELECT * WHERE { ?s ?p ?o FILTER(?o < <http://ex/service>) }",
    "prefixed names": "PREFIX schema: <http://schema.org/> SELECT ?s WHERE { ?s a schema:Service ; schema:serviceType ?t }",
    "a prefix": "PREFIX service: <urn:s:> SELECT * WHERE { ?s service:x ?o }",
    "a variable": "SELECT ?service WHERE { ?service ?p ?o } ORDER BY ?service",
    "a comment": "SELECT * WHERE { ?s ?p ?o } # SERVICE <http://x/> { }",
    "an escaped quote in a string": 'SELECT * WHERE { ?s ?p ?o FILTER(?o = "a\\"SERVICE") }',
    "a language tag": 'SELECT * WHERE { ?s ?p "x"@en-service }',
    "a path": "SELECT * WHERE { ?s <p>/<service>/<q> ?o }",
    "a collection": "SELECT * WHERE { ?s ?p (<a> <service> <b>) }",
    "a dotted local name": "PREFIX ex: <urn:> SELECT * WHERE { ?s ?p ex:a.service }",
}


@regression("SERVICE was refused by masking the text, which strings, '<' and dots fooled (security issue, finding 2)")
@pytest.mark.parametrize("query", list(SERVICE_QUERIES.values()), ids=list(SERVICE_QUERIES))
def test_service_is_refused_however_spelled(query: str) -> None:
    with pytest.raises(Invalid, match="SERVICE is refused"):
        check_query(query)


@pytest.mark.parametrize("query", list(HARMLESS.values()), ids=list(HARMLESS))
def test_the_word_service_elsewhere_is_fine(query: str) -> None:
    check_query(query)


# ---------------------------------------------------------------------- against pyoxigraph itself


listener = listener_fixture  # the same loopback listener as the server's tests

SPELLINGS = ["SERVICE", "service", "SeRvIcE", "SERVICE SILENT", "SERVICESILENT", "SERVICE\t", "SERVICE#c\n",
             "SERVICE#c\r"]
GLUE = [" ", "", ".", " . ", "\n", "\r", "\t", " 1", " true", "#x\r", "#x\n", " ;", "}", ")", "'", '"', "\\", "<", ">"]
NOISE = [
    "FILTER(''<'>')", "FILTER(1 != 'x')", "BIND('''a'b''' AS ?n1)", 'BIND("""a"b""" AS ?n2)', "BIND('\\'' AS ?n3)",
    'BIND("\\u0022" AS ?n4)', "BIND(<urn:x'y> AS ?n5)", "BIND(<urn:x#y> AS ?n6)", "?s ?p ?o", "?s <urn:p> 1",
    "# a comment with SERVICE <x> {}\n", "#c\r", "VALUES ?v { 1 'a' <urn:a> }", "OPTIONAL { ?s ?p ?o }",
    "FILTER(?o < 2)", "FILTER(1<2)", "FILTER(?o<<urn:x>)", "BIND(1 AS ?a)", "{ BIND(2 AS ?b) }", "MINUS { ?q ?q ?q }",
    "FILTER NOT EXISTS { ?q ?q ?q }", "FILTER(''<'>' && '>' < '')", 'FILTER(""<">")', "BIND(ex:a\\#b AS ?n7)",
    "BIND(ex:a\\'b AS ?n8)", 'BIND("x"@en AS ?n9)', "BIND(1.5e3 AS ?n10)", "BIND(true AS ?n11)", ".",
    "FILTER(?o<'>')", "FILTER(<urn:a'b> = <urn:c>)", 'BIND("a#b" AS ?n12)', "BIND('''a\n''' AS ?n13)",
]
WRAPS = ["{}", "{{ {} }}", "{{ SELECT * WHERE {{ BIND(1 AS ?k) {} }} }}", "FILTER EXISTS {{ BIND(1 AS ?k) {} }}",
         "FILTER(EXISTS {{ BIND(1 AS ?k) {} }})", "OPTIONAL {{ BIND(1 AS ?k) {} }}"]
HEADS = ["SELECT * WHERE ", "ASK ", "CONSTRUCT { ?a ?b ?c } WHERE ", "SELECT * ", "DESCRIBE ?zz WHERE "]


def _generated(rng: random.Random, url: str) -> str:
    parts = [rng.choice(NOISE) for _ in range(rng.randint(0, 4))]
    service = f"{rng.choice(GLUE)}{rng.choice(SPELLINGS)} <{url}> {{ ?x ?y ?z }}"
    service = rng.choice(WRAPS).format(service)
    parts.insert(rng.randint(0, len(parts)), ("BIND(1 AS ?zz) " if rng.random() < 0.7 else "") + service)
    return "PREFIX ex: <urn:ex:>\n" + rng.choice(HEADS) + "{ " + " ".join(parts) + " }"


def _calls_out(store: ox.Store, query: str, listener: Listener) -> bool:
    before = len(listener.seen)
    try:
        found = store.query(query, base_iri="http://base/")
        if isinstance(found, ox.QuerySolutions | ox.QueryTriples):
            list(found)
    except (SyntaxError, OSError, ValueError, RuntimeError):
        pass
    deadline = time.monotonic() + 0.05
    while len(listener.seen) == before and time.monotonic() < deadline:
        time.sleep(0.002)
    return len(listener.seen) > before


@regression("masking missed SERVICE that pyoxigraph then ran (security issue, finding 2)")
def test_every_query_that_pyoxigraph_would_send_out_is_refused(listener: Listener) -> None:
    store = ox.Store()
    store.add(ox.Quad(ox.NamedNode("urn:s"), ox.NamedNode("urn:p"), ox.Literal(1)))
    url = f"http://127.0.0.1:{listener.port}/sparql"
    rng = random.Random(20261201)
    called = missed = 0
    for _ in range(400):
        query = _generated(rng, url)
        try:
            check_query(query)
            refused = False
        except Invalid:
            refused = True
        if _calls_out(store, query, listener):
            called += 1
            if not refused:
                missed += 1
                print("not refused, and pyoxigraph called out:", repr(query))
    assert called > 100, "the generated queries should reach the network often, or the test proves little"
    assert missed == 0


# ---------------------------------------------------------------------- size and nesting


def _nested(kind: str, n: int) -> str:
    return {
        "parentheses": "ASK { FILTER(" + "(" * n + "1" + ")" * n + ") }",
        "braces": "SELECT * WHERE " + "{" * n + "}" * n,
        "brackets": "SELECT * WHERE { ?s ?p " + "[ ?p " * n + "1" + " ]" * n + " }",
        "nots": "ASK { FILTER(" + "!" * n + "true) }",
        "ors": "ASK { FILTER(" + " || ".join(["false"] * n) + ") }",
        "sums": "ASK { FILTER(" + "+".join(["1"] * n) + " = 1) }",
        "differences glued": "PREFIX ex: <urn:> ASK { FILTER(ex:" + "-1" * n + " = 1) }",
        "path sequence": "ASK { ?s " + "/".join(["<p>"] * n) + " ?o }",
        "path alternatives": "ASK { ?s " + "|".join(["<p>"] * n) + " ?o }",
        "unions": "SELECT * WHERE { " + " UNION ".join(["{}"] * n) + " }",
        "optionals": "SELECT * WHERE { " + " ".join(["OPTIONAL { }"] * n) + " }",
        "minuses": "SELECT * WHERE { " + " ".join(["MINUS { }"] * n) + " }",
        "filters": "SELECT * WHERE { " + " ".join(["FILTER(true)"] * n) + " }",
        "binds": "SELECT * WHERE { " + " ".join(f"BIND(1 AS ?v{i})" for i in range(n)) + " }",
        "groups in a group": "SELECT * WHERE { " + "{} " * n + "}",
        "subqueries": "SELECT * WHERE " + "{ SELECT * WHERE " * n + "{}" + " }" * n,
        "exists": "ASK { " + "FILTER EXISTS { " * n + " }" * n + " }",
        "function calls": "ASK { FILTER(" + "STR(" * n + "1" + ")" * n + " = '1') }",
        "coalesce": "ASK { FILTER(" + "COALESCE(" * n + "1" + ")" * n + " = 1) }",
        "if": "ASK { FILTER(" + "IF(true, " * n + "1" + ", 0)" * n + " = 1) }",
        "nested optionals": "SELECT * WHERE " + "{ OPTIONAL " * n + "{}" + " }" * n,
        "nested graphs": "SELECT * WHERE " + "{ GRAPH ?g " * n + "{}" + " }" * n,
        "not exists in expressions": "ASK { FILTER(" + "NOT EXISTS { FILTER(" * n + "true" + ") }" * n + ") }",
        "triple terms": "SELECT * WHERE { ?s ?p " + "<<( <a> <b> " * n + "<c>" + " )>>" * n + " }",
        "an unclosed string of parentheses": "ASK { FILTER(" + "(" * n,
    }[kind]


# What crashed pyoxigraph 0.5.13 in an 8 MiB thread (the security issue, finding 3, and
# docs/decisions/20261201-sparql-checked-by-parsing.md): each is refused, quickly, naming its limit.
CRASHERS = {"parentheses": 5_000, "braces": 5_000, "nots": 10_000, "ors": 20_000, "sums": 20_000,
            "differences glued": 20_000, "path alternatives": 20_000, "unions": 20_000, "optionals": 20_000,
            "minuses": 5_000, "filters": 20_000, "binds": 5_000, "subqueries": 3_000, "exists": 1_000,
            "function calls": 1_000, "groups in a group": 20_000, "an unclosed string of parentheses": 100_000}


@regression("a 10 KB query from any token killed the server: pyoxigraph's parser has no depth guard (finding 3)")
@pytest.mark.parametrize(("kind", "n"), list(CRASHERS.items()), ids=list(CRASHERS))
def test_a_query_that_would_crash_the_engine_is_refused(kind: str, n: int) -> None:
    started = time.monotonic()
    with pytest.raises(Invalid, match=rf"more than ({MAX_DEPTH}|{MAX_CHAIN}) .*\(the limit\)") as caught:
        check_query(_nested(kind, n))
    assert caught.value.status == 400
    assert time.monotonic() - started < 2


def test_a_query_longer_than_the_limit_is_413() -> None:
    with pytest.raises(Invalid, match=f"characters long; the limit is {MAX_CHARS:,}") as caught:
        check_query("ASK {}" + " " * MAX_CHARS)
    assert caught.value.status == 413


AT_THE_LIMITS = {
    "parentheses": _nested("parentheses", MAX_DEPTH - 2),
    "braces": _nested("braces", MAX_DEPTH),
    "function calls": _nested("function calls", MAX_DEPTH - 2),
    "coalesce": _nested("coalesce", MAX_DEPTH - 3),
    "if": _nested("if", MAX_DEPTH - 3),
    "nested optionals": _nested("nested optionals", MAX_DEPTH - 2),
    "nested graphs": _nested("nested graphs", MAX_DEPTH - 2),
    "not exists in expressions": _nested("not exists in expressions", (MAX_DEPTH - 2) // 2),
    "exists": _nested("exists", MAX_DEPTH - 1),
    "subqueries": _nested("subqueries", MAX_DEPTH // 2 - 1),
    "triple terms": _nested("triple terms", MAX_DEPTH // 2 - 1),
    "binds": _nested("binds", MAX_CHAIN - 2),
    "minuses": _nested("minuses", (MAX_CHAIN - 2) // 2),
    "unions": _nested("unions", (MAX_CHAIN - 2) // 2),
    "ors": _nested("ors", MAX_CHAIN - 3),
    "sums": _nested("sums", MAX_CHAIN - 4),
    "nots": _nested("nots", MAX_CHAIN - 3),
    "path alternatives": _nested("path alternatives", MAX_CHAIN - 2),
    # a deep expression at the bottom of a long chain of BINDs: the two add up
    "deep first bind, then binds": "SELECT * WHERE { BIND(" + "STR(" * (MAX_DEPTH - 4) + "1" + ")" * (MAX_DEPTH - 4)
                                   + " AS ?v) " + " ".join(f"BIND(1 AS ?w{i})" for i in range(MAX_CHAIN - MAX_DEPTH - 10))
                                   + " }",
    "a chain at every level": "ASK { FILTER(" + ("1+" * (MAX_CHAIN // MAX_DEPTH - 1) + "(") * (MAX_DEPTH - 3) + "1"
                              + ")" * (MAX_DEPTH - 3) + " = 1) }",
}
_RUN = """
import sys, threading, pyoxigraph as ox
query = sys.stdin.read()
store = ox.Store()
store.add(ox.Quad(ox.NamedNode("urn:s"), ox.NamedNode("urn:p"), ox.NamedNode("urn:o")))
def run():
    found = store.query(query, base_iri="http://b/")
    if isinstance(found, (ox.QuerySolutions, ox.QueryTriples)):
        list(found)
    print("answered")
threading.stack_size(2 * 1024 * 1024)
thread = threading.Thread(target=run)
thread.start()
thread.join()
"""


@pytest.mark.parametrize("query", list(AT_THE_LIMITS.values()), ids=list(AT_THE_LIMITS))
def test_queries_at_the_limits_run_on_a_quarter_of_the_default_stack(query: str) -> None:
    """The margin: what the check lets through runs on a 2 MiB stack (pyoxigraph's default
    thread has 8 MiB, oxigraph serve's request threads too), in a child so a crash shows."""
    check_query(query)
    child = subprocess.run([sys.executable, "-c", _RUN], input=query, capture_output=True, text=True, timeout=120)
    assert child.returncode == 0 and child.stdout.strip() == "answered", (child.returncode, child.stderr[-500:])


def test_long_lists_are_fine_and_read_quickly() -> None:
    values = "SELECT * WHERE { VALUES (?a ?b ?c) { " + " ".join(
        f'(<urn:x:{i}/a> <urn:y/{i}> "v{i}")' for i in range(20_000)) + " } }"
    in_list = "SELECT * WHERE { ?s ?p ?o FILTER(?o IN (" + ", ".join(f"<urn:a/{i}>" for i in range(20_000)) + ")) }"
    concat = "ASK { FILTER(CONCAT(" + ",".join(['"a"'] * 20_000) + ") != '') }"
    for query in (values, in_list, concat):
        started = time.monotonic()
        check_query(query)
        assert time.monotonic() - started < 3, len(query)


def test_scan_reports_its_measures() -> None:
    shape = scan("SELECT * WHERE { ?s ?p ?o FILTER(?o < 3 || (?o > 7)) }")
    assert (shape.depth, shape.service) == (3, False)
    assert scan("SELECT * WHERE { SERVICE <x> { } }").service


def test_escapes_are_expanded_as_the_spec_says() -> None:
    assert expand_escapes("\\u0053ERVICE \\U0001F600 \\uD800") == "SERVICE \U0001f600 \\uD800"


@pytest.mark.parametrize(("text", "form"), [
    ("SELECT * {}", "SELECT"),
    ("  # SELECT\n ask {}", "ASK"),
    ("PREFIX ex: <http://e/#> PREFIX : <urn:> BASE <http://b/> construct { } where { }", "CONSTRUCT"),
    ("PREFIX ex:<http://e/>DESCRIBE ?x", "DESCRIBE"),
    ("BASE <http://b/> INSERT DATA { }", "INSERT"),
    ("{ }", None),
])
def test_query_form(text: str, form: str | None) -> None:
    assert query_form(text) == form


def test_on_big_stack_hands_back_values_and_errors() -> None:
    assert on_big_stack(lambda: threading.current_thread().name) == "workbench-sparql"

    def fails() -> None:
        raise Invalid("no")

    with pytest.raises(Invalid, match="no"):
        on_big_stack(fails)


# ---------------------------------------------------------------------- every entry point


@regression("the check lived in the HTTP layer only: Workbench.sparql and the CLI ran SERVICE (finding 2)")
def test_workbench_sparql_refuses_on_every_backend(wb: Workbench, listener: Listener) -> None:
    url = f"http://127.0.0.1:{listener.port}/sparql"
    for query in (SERVICE_QUERIES["a '<' read as an IRI hides SERVICE"].replace(U, url),
                  SERVICE_QUERIES["SERVICE after a dot"].replace(U, url)):
        with pytest.raises(Invalid, match="SERVICE is refused"):
            wb.sparql(query)
    with pytest.raises(Invalid, match="the limit"):
        wb.sparql(_nested("parentheses", 5_000))  # on the remote backend, oxigraph serve would have crashed
    time.sleep(0.1)
    assert listener.seen == []
    assert wb.sparql("ASK { }") == b'{"head":{},"boolean":true}'


def test_the_cli_refuses(tmp_path: Path, listener: Listener) -> None:
    store = tmp_path / "store"
    with Workbench.open(store, create=True, user="me") as wb:
        wb.init()
    url = f"http://127.0.0.1:{listener.port}/sparql"
    query = SERVICE_QUERIES["SERVICE after a dot"].replace(U, url)
    result = CliRunner().invoke(main, ["--store", str(store), "sparql", query])
    assert result.exit_code != 0 and "SERVICE is refused" in result.output
    result = CliRunner().invoke(main, ["--store", str(store), "sparql", _nested("braces", 5_000)])
    assert result.exit_code != 0 and "the limit" in result.output
    assert listener.seen == []


# ---------------------------------------------------------------------- rules


def test_a_rule_is_bounded_before_rdflib_reads_it(tmp_path: Path) -> None:
    from tests.test_rules import PREFIXES, rule_ttl
    from workbench.rules.load import load_file

    def load(text: str) -> str:
        path = tmp_path / "rule.ttl"
        path.write_text(text)
        with pytest.raises(Invalid) as caught:
            load_file(path)
        return str(caught.value)

    deep = "CONSTRUCT { $this wb:partOf ?z } WHERE { $this wb:partOf ?z FILTER(" + "(" * 5000 + "?z" + ")" * 5000 + ") }"
    assert f"more than {MAX_DEPTH} deep (the limit)" in load(rule_ttl(construct=deep))
    rdflib_deep = deep.replace("(" * 5000, "(" * 120).replace(")" * 5000, ")" * 120)  # under MAX_DEPTH, past rdflib
    assert "too deeply for rdflib's SPARQL parser" in load(rule_ttl(construct=rdflib_deep))
    path = "[ sh:inversePath " * 3000 + "wb:partOf" + " ]" * 3000
    triple_rule = PREFIXES + f"""
rule:t a sh:NodeShape ; sh:targetSubjectsOf wb:partOf ; sh:rule rule:t-v1 .
rule:t-v1 a sh:TripleRule ; dcterms:identifier "t" ; wb:ruleVersion 1 ; dcterms:creator "tester" ;
    wb:ruleStatus wb:Active ; wb:reading "r" ; sh:subject sh:this ; sh:predicate wb:partOf ;
    sh:object [ sh:path {path} ] .
"""
    assert f"a SHACL path nested more than {MAX_DEPTH} deep (the limit)" in load(triple_rule)
