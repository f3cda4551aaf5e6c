"""SPARQL with reasoning on (issue 19, part 5): the signed-off rules' conclusions for a query's
relations, computed for that query, in the reserved graph urn:wb:graph:derived with their proof
links; never stored. The same conclusions as pySHACL's expansion on small random graphs, the
same query without reasoning sees recorded facts only, and real clients (SPARQLWrapper, rdflib's
SPARQLStore) switch it on with a documented parameter.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest
from click.testing import CliRunner
from hypothesis import given

from tests.conftest import dump
from tests.test_oracle import FAST, RULE_FILES, concludable, content_graphs, oracle, record_graphs, shipped
from tests.test_server import Server
from workbench.cli import main
from workbench.errors import Invalid, ParseError, Unsupported
from workbench.ids import DERIVED_GRAPH
from workbench.rules import conclusions as conclusions_module
from workbench.rules.check import scratch
from workbench.rules.conclusions import concluded, conclusion_iri, conclusions, goals_in
from workbench.service import Workbench
from workbench.vocab import RDF, WB

NEEDS = "PREFIX wb: <https://w3id.org/workbench/ns#> SELECT ?x ?y ?g WHERE { GRAPH ?g { ?x wb:needs ?y } }"
DESCRIBED = """PREFIX wb: <https://w3id.org/workbench/ns#> PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
SELECT ?x ?y ?rule ?record ?proof WHERE { GRAPH <urn:wb:graph:derived> {
  ?x wb:needs ?y . ?c a wb:Conclusion ; rdf:subject ?x ; rdf:predicate wb:needs ; rdf:object ?y ;
     wb:byRule ?rule ; prov:wasDerivedFrom ?record . OPTIONAL { ?c wb:proof ?proof } } }"""
E = "urn:wb:entity:"


def _rows(data: bytes) -> set[tuple[str, ...]]:
    out = json.loads(data)
    names = out["head"]["vars"]
    return {tuple(b[n]["value"].removeprefix(E) if n in b else "" for n in names) for b in out["results"]["bindings"]}


def _asked_values(wb: Workbench, subject: str) -> set[str]:
    """What `ask SUBJECT needs` answers as derived: the oracle for the sample's conclusions."""
    answer = wb.ask(subject, "needs").to_json()
    return {f["value"].strip("<>").removeprefix(E) for f in answer["findings"]
            if any(p["kind"] == "derived" for p in f["proofs"])}


def test_the_same_query_sees_conclusions_only_with_reasoning(sample: Workbench) -> None:
    """On every backend: without reasoning only recorded facts; with it the derived needs too,
    in the reserved graph, exactly what `ask` derives, and the recorded rows unchanged."""
    plain = _rows(sample.sparql(NEEDS))
    assert plain and all(g.startswith("urn:wb:record:") for _, _, g in plain)
    assert not [r for r in plain if r[2] == DERIVED_GRAPH.value]
    reasoned = _rows(sample.sparql(NEEDS, reasoning=True))
    derived = {(x, y) for x, y, g in reasoned if g == DERIVED_GRAPH.value}
    assert reasoned - plain == {(x, y, DERIVED_GRAPH.value) for x, y in derived}
    want = {(s, y) for s in ("my-car", "sparky") for y in _asked_values(sample, s.replace("-", " "))}
    assert want and derived == want


def test_nothing_derived_is_stored(sample: Workbench) -> None:
    before = dump(sample.store)
    sample.sparql(NEEDS, reasoning=True)
    sample.sparql("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", reasoning=True)
    assert dump(sample.store) == before
    assert not sample.store.has_graph(DERIVED_GRAPH)
    assert not [r for r in _rows(sample.sparql(NEEDS)) if r[2] == DERIVED_GRAPH.value]  # nor in the shared view


def test_each_conclusion_names_its_rule_records_and_proof(sample: Workbench) -> None:
    rows = _rows(sample.sparql(DESCRIBED, reasoning=True, proof_base="http://example.org/api/proof"))
    gas = {r for r in rows if r[:2] == ("my-car", "gasoline")}
    assert {r[2] for r in gas} == {"urn:wb:rule:inherit-kind-v1"}
    assert {r[3] for r in gas} == {"urn:wb:record:m-car-1", "urn:wb:record:common-sense-v1"}
    (link,) = {r[4] for r in gas}
    asked = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link).query))
    assert link.startswith("http://example.org/api/proof?")
    assert asked == {"subject": E + "my-car", "relation": WB.needs.value, "object": E + "gasoline"}
    answer = sample.proof(**{k if k != "object" else "obj": v for k, v in asked.items()})
    assert answer.tier.value == "derived"
    assert answer.to_json()["findings"][0]["proofs"][0]["rule"] == "inherit-kind"
    # without a base for links (the Python API) a conclusion still names its rule and records
    assert {r[4] for r in _rows(sample.sparql(DESCRIBED, reasoning=True))} == {""}


def test_proof_links_alone_are_found(sample: Workbench) -> None:
    query = ("PREFIX wb: <https://w3id.org/workbench/ns#> SELECT ?p WHERE { GRAPH <urn:wb:graph:derived> "
             "{ ?c wb:proof ?p } }")
    links = _rows(sample.sparql(query, reasoning=True, proof_base="http://example.org/api/proof"))
    assert len(links) == len(_rows(sample.sparql("PREFIX wb: <https://w3id.org/workbench/ns#> SELECT ?s ?p ?o WHERE "
                                                 "{ GRAPH <urn:wb:graph:derived> { ?s ?p ?o FILTER(?p != wb:proof) "
                                                 "FILTER NOT EXISTS { ?s a wb:Conclusion } } }", reasoning=True)))
    assert links


def test_a_conclusion_is_named_by_its_triple() -> None:
    t = (ox.NamedNode(E + "a"), WB.needs, ox.NamedNode(E + "b"))
    assert conclusion_iri(t) == conclusion_iri(t)
    assert conclusion_iri(t) != conclusion_iri((t[0], WB.has, t[2]))


@pytest.mark.parametrize("query,expected", [
    (NEEDS, {"needs"}),
    ("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", "all"),
    ("PREFIX wb: <https://w3id.org/workbench/ns#> SELECT * WHERE { GRAPH ?g { ?s wb:has|wb:usedFor ?o } }",
     {"has", "usedFor"}),
    ("PREFIX wb: <https://w3id.org/workbench/ns#> SELECT * WHERE { GRAPH ?g { ?s !wb:has ?o } }", "all"),
    ("PREFIX wb: <https://w3id.org/workbench/ns#> SELECT * WHERE { GRAPH ?g { ?s wb:locatedIn ?o } }", set()),
    ("PREFIX wb: <https://w3id.org/workbench/ns#> SELECT * WHERE { { SELECT ?s WHERE { GRAPH ?g { ?s wb:needs ?o } } }"
     " FILTER NOT EXISTS { GRAPH ?h { ?s a ?k } } }", {"needs", "type"}),
    ("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 1 OFFSET", "all"),  # rdflib cannot read it: everything
    # the conclusions' descriptions with no relation named: every relation's (found in the last check)
    ("PREFIX wb: <https://w3id.org/workbench/ns#> SELECT ?p WHERE { GRAPH <urn:wb:graph:derived> { ?c wb:proof ?p } }",
     "all"),
    ("PREFIX wb: <https://w3id.org/workbench/ns#> SELECT ?c WHERE { GRAPH ?g { ?c a wb:Conclusion } }", "all"),
    (DESCRIBED, {"needs"}),  # a relation named: its descriptions only
])
def test_relations_a_query_could_match(sample: Workbench, query: str, expected: object) -> None:
    among = concluded(sample.rules)
    assert WB.needs in among and RDF.type in among
    found = goals_in(query, among)
    if expected == "all":
        assert found == dict.fromkeys(among)
    else:
        assert {p.value.rsplit("#", 1)[1] for p in found} == expected
        assert set(found.values()) <= {None}  # variable subjects: every subject


def test_a_named_subject_is_the_only_one_solved(sample: Workbench) -> None:
    among = concluded(sample.rules)
    query = ("PREFIX wb: <https://w3id.org/workbench/ns#> SELECT ?y ?g WHERE { GRAPH ?g { <urn:wb:entity:sparky> wb:needs ?y "
             "OPTIONAL { GRAPH ?h { <urn:wb:entity:my-car> wb:needs ?z } } } }")
    goals = goals_in(query, among)
    assert goals == {WB.needs: frozenset({ox.NamedNode(E + "sparky"), ox.NamedNode(E + "my-car")})}
    found = {(str(t[0]), str(t[2])) for t, _ in conclusions(sample.store, sample.rules, goals)}
    want = {(f"<{E}{s.replace(' ', '-')}>", f"<{E}{y}>") for s in ("sparky", "my car") for y in _asked_values(sample, s)}
    assert found == want
    with pytest.raises(Unsupported, match="GRAPH pattern may not hold another"):  # not exact when joined
        sample.sparql(query, reasoning=True)
    beside = query.replace("?y OPTIONAL", "?y } OPTIONAL").removesuffix(" } } }") + " } }"  # reads the same
    assert goals_in(beside, among) == goals
    rows = _rows(sample.sparql(beside, reasoning=True))
    assert {r[0] for r in rows if r[1] == DERIVED_GRAPH.value} == _asked_values(sample, "sparky")
    mixed = query.replace("<urn:wb:entity:my-car> wb:needs ?z", "?x wb:needs ?z")
    assert goals_in(mixed, among) == {WB.needs: None}  # one pattern with a variable subject: every subject


def test_too_many_conclusions_for_the_query_read_a_copy_here_and_are_refused_by_a_server(
        sample: Workbench, monkeypatch: pytest.MonkeyPatch) -> None:
    """Conclusions are written into the query up to JOINED_CHARS; past it the embedded store adds
    them to a checkpoint of the view (the same answer), and a SPARQL server's reader is told to
    narrow the query rather than have the store copied."""
    want = sample.sparql(NEEDS, reasoning=True)
    monkeypatch.setattr(conclusions_module, "JOINED_CHARS", len(NEEDS) + 200)
    if sample.store.capabilities.round_trips:
        with pytest.raises(Unsupported, match="too many to send to the SPARQL server"):
            sample.sparql(NEEDS, reasoning=True)
    else:
        assert _rows(sample.sparql(NEEDS, reasoning=True)) == _rows(want)


def test_refused_queries_compute_nothing(sample: Workbench) -> None:
    with pytest.raises(Unsupported):
        sample.sparql("INSERT DATA { GRAPH <urn:x> { <urn:a> <urn:b> <urn:c> } }", reasoning=True)
    with pytest.raises(Invalid, match="SERVICE"):
        sample.sparql("SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }", reasoning=True)
    with pytest.raises(ParseError):
        sample.sparql("SELECT * WHERE { GRAPH ?g { ?s ?p } }", reasoning=True)


def test_past_its_deadline_the_reasoning_stops_and_changes_nothing(sample: Workbench) -> None:
    """What the server passes (its request's deadline): computing conclusions stops at its next
    query once past it, with a plain error; before it, the answer is whole."""
    import time

    from workbench.errors import StoreUnavailable

    before = dump(sample.store)
    with pytest.raises(StoreUnavailable, match="deadline"):
        sample.sparql("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", reasoning=True, deadline=time.monotonic() - 1)
    assert dump(sample.store) == before
    assert _rows(sample.sparql(NEEDS, reasoning=True, deadline=time.monotonic() + 60)) == _rows(
        sample.sparql(NEEDS, reasoning=True))


def test_an_import_cannot_write_into_the_derived_graph(sample: Workbench, tmp_path: Path) -> None:
    before = dump(sample.store)
    file = tmp_path / "fake.trig"
    file.write_text("<urn:wb:graph:derived> { <urn:wb:entity:my-car> <https://w3id.org/workbench/ns#needs> "
                    "<urn:wb:entity:diesel> }\n")
    with pytest.raises(Exception, match="derived|Workbench|system|own"):
        sample.import_files([file])
    assert dump(sample.store) == before


@FAST
@given(content=content_graphs(), records=record_graphs())
def test_conclusions_agree_with_pyshacl(content: frozenset[ox.Triple], records: frozenset[ox.Triple]) -> None:
    """What a reasoning query sees in the derived graph is pySHACL's expansion of the graph (every
    shipped rule), nothing more or less: open goals (no subject given) as complete as bound ones."""
    graph = content | records
    paths, ruleset = shipped(*RULE_FILES)
    want = oracle(graph, paths)
    found = conclusions(scratch(sorted(graph, key=str)), ruleset, concludable(ruleset))
    got = {ox.Triple(*t) for t, _ in found}  # type: ignore[arg-type]
    assert sorted(map(str, got - want)) == [] and sorted(map(str, want - got)) == []


def test_an_open_goal_reads_a_sibling_only_when_it_is_done() -> None:
    """Found by the property test above: asked for every subject at once, b's conclusion rests
    on c's, which rests on d's, all sub-goals of one batch; each is solved again once what it
    read has grown, so none is missed."""
    from workbench.rules.check import parse_turtle

    paths, ruleset = shipped("inherit-kind")
    graph = parse_turtle("e:b a e:c . e:c a e:d . e:d a e:a . e:a wb:needs e:a .", "example")
    found = {(str(t[0]), str(t[2])) for t, _ in conclusions(scratch(graph), ruleset, [WB.needs])}
    assert found == {(f"<{E}{x}>", f"<{E}a>") for x in "bcd"}


# ---------------------------------------------------------------------- over HTTP, real clients

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    path = tmp_path_factory.mktemp("reasoning") / "store"
    with Workbench.open(path, create=True, user="tester") as wb:
        wb.init(sample=True)
    running = Server(path)
    yield running
    running.stop()


def test_sparqlwrapper_with_and_without_reasoning(server: Server) -> None:
    from SPARQLWrapper import JSON, SPARQLWrapper

    client = SPARQLWrapper(server.url)
    client.setQuery(NEEDS)
    client.setReturnFormat(JSON)
    plain = client.query().convert()["results"]["bindings"]  # type: ignore[index, call-overload]
    assert plain and {b["g"]["value"] for b in plain} == {"urn:wb:record:common-sense-v1"}
    client.addParameter("reasoning", "true")
    rows = client.query().convert()["results"]["bindings"]  # type: ignore[index, call-overload]
    derived = {(b["x"]["value"], b["y"]["value"]) for b in rows if b["g"]["value"] == DERIVED_GRAPH.value}
    assert (E + "my-car", E + "gasoline") in derived and (E + "sparky", E + "charging") in derived
    assert len(rows) == len(plain) + len(derived)


def test_rdflib_sparqlstore_follows_a_proof_link(server: Server) -> None:
    from rdflib.plugins.stores.sparqlstore import SPARQLStore

    store = SPARQLStore(server.url, params={"reasoning": "true"})
    rows = list(store.query(DESCRIBED))
    store.close()
    links = {str(r[4]) for r in rows if str(r[0]) == E + "sparky" and str(r[1]) == E + "charging"}  # type: ignore[index]
    (link,) = links
    assert link.startswith(server.url.removesuffix("/sparql") + "/api/proof?")
    answer = httpx.get(link, timeout=30).json()
    assert answer["tier"] == "derived"
    premises = answer["findings"][0]["proofs"][0]["premises"]
    assert {p.get("record") for p in premises} >= {"m-sparky-1"}


def test_the_python_client_switches_it_on(server: Server) -> None:
    import workbench

    remote = workbench.connect(server.url.removesuffix("/sparql"))
    plain, reasoned = _rows(remote.sparql(NEEDS)), _rows(remote.sparql(NEEDS, reasoning=True))
    assert {r for r in reasoned - plain} == {r for r in reasoned if r[2] == DERIVED_GRAPH.value} != set()
    assert remote.proof(E + "my-car", WB.needs.value, E + "gasoline").tier.value == "derived"


def test_a_bad_switch_is_a_clear_400(server: Server) -> None:
    r = httpx.get(server.url, params={"query": NEEDS, "reasoning": "maybe"}, timeout=30)
    assert r.status_code == 400 and "reasoning must be true or false" in r.text
    r = httpx.get(server.url, params={"query": "SELECT * WHERE { GRAPH ?g { ?s ?p } }", "reasoning": "true"},
                  timeout=30)
    assert r.status_code == 400 and "1:" in r.text  # the parser's line, as without reasoning
    r = httpx.get(server.url.removesuffix("/sparql") + "/api/proof", params={"subject": "not an iri", "relation": "x"},
                  timeout=30)
    assert r.status_code == 400 and "subject" in r.text


def test_on_the_command_line(tmp_path: Path) -> None:
    store = str(tmp_path / "m")
    runner = CliRunner()
    assert runner.invoke(main, ["--store", store, "init", "--sample"]).exit_code == 0
    plain = runner.invoke(main, ["--store", store, "sparql", NEEDS])
    reasoned = runner.invoke(main, ["--store", store, "sparql", "--reasoning", NEEDS])
    assert plain.exit_code == 0 and reasoned.exit_code == 0, reasoned.output
    assert DERIVED_GRAPH.value not in plain.output and DERIVED_GRAPH.value in reasoned.output
    assert "--reasoning" in runner.invoke(main, ["sparql", "--help"]).output
