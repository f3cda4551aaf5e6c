"""Rules: loading and checking rule files, and the engine's edge cases.

Rule files are written to ``tmp_path``. Loading refuses a bad rule with a clear error naming the
file (and the rule id, line and column where they apply), as ParseError or Invalid. The engine
answers recursive rules over cycles in bounded time, says ``incomplete`` when its depth bound
cuts (never a wrong "no"), never uses Draft rules, and never writes to the store.

Tests marked ``xfail(strict=True, reason="BUG: ...")`` show product bugs; they fail today and will
start passing (and so be reported by pytest) once the bug is fixed.
"""

from __future__ import annotations

import functools
import json
import re
import time
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from tests.conftest import FIXED_NOW, ROOT, dump
from workbench.errors import Invalid, ParseError
from workbench.rules import Engine, load_rules, run_tests
from workbench.rules import engine as engine_module
from workbench.service import Workbench
from workbench.values.answers import Answer, Derived, Recorded, Tier
from workbench.vocab import WB

RULES = ROOT / "rules"
PART_OF = ox.NamedNode("https://w3id.org/workbench/ns#partOf")
RELATIONS = frozenset(
    q.subject.value
    for q in ox.parse(path=str(ROOT / "ontology" / "relations.ttl"), format=ox.RdfFormat.TURTLE)
    if q.predicate == WB.relationLabel
)

PREFIXES = """@prefix sh:      <http://www.w3.org/ns/shacl#> .
@prefix rdf:     <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix wb:      <https://w3id.org/workbench/ns#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix rule:    <urn:wb:rule:> .
"""

TRANSITIVE = "CONSTRUCT { $this wb:partOf ?z } WHERE { $this wb:partOf ?y . ?y wb:partOf ?z }"
CHAIN = "e:a wb:partOf e:b . e:b wb:partOf e:c ."


def entity(slug: str) -> ox.NamedNode:
    return ox.NamedNode(f"urn:wb:entity:{slug}")


def rule_ttl(
    rid: str = "part-chain",
    construct: str = TRANSITIVE,
    *,
    given: str = CHAIN,
    expect: str = "e:a wb:partOf e:c .",
    expect_not: str = "e:c wb:partOf e:a .",
    status: str = "wb:Active",
    target: str = "sh:targetSubjectsOf wb:partOf",
    version: str = "1",
    extra: str = "",
) -> str:
    """One SPARQL rule in a file; the sh:construct starts on the line after its opening quotes."""
    return (
        PREFIXES
        + f'''
rule:{rid} a sh:NodeShape ;
    {target} ;
    sh:rule rule:{rid}-v{version} .

rule:{rid}-v{version} a sh:SPARQLRule ;
    dcterms:identifier "{rid}" ;
    wb:ruleVersion {version} ;
    dcterms:creator "tester" ;
    wb:ruleStatus {status} ;
    wb:reading "A rule written for a test ({rid})." ;{extra}
    sh:construct """
PREFIX wb:   <https://w3id.org/workbench/ns#>
PREFIX rdf:  <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
{construct}""" ;
    wb:testCase [
        rdfs:label "the case" ;
        wb:given """{given}""" ;
        wb:expect """{expect}""" ;
        wb:expectNot """{expect_not}""" ] .
'''
    )


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def load(path: Path) -> Any:
    return load_rules([path], relations=RELATIONS)


def refused(path: Path, kind: type[Exception], *needles: str) -> str:
    """Loading ``path`` raises ``kind`` naming the file and every needle."""
    with pytest.raises(kind) as info:
        load(path)
    text = str(info.value)
    assert str(path) in text, f"the error does not name the file: {text}"
    for needle in needles:
        assert needle in text, f"{needle!r} not in {text!r}"
    return text


def bench(wb: Workbench, rules_dir: Path) -> Workbench:
    """The same store, answered with the rules in ``rules_dir``."""
    return Workbench(wb.store, user="tester", clock=lambda: FIXED_NOW, rules_dir=rules_dir)


def record(rid: str, *triples: list[Any], statement: str | None = None) -> dict[str, Any]:
    return {
        "id": rid,
        "statement": statement or f"Record {rid}.",
        "type": "observation",
        "source": {"id": f"src-{rid}", "said_by": "me"},
        "triples": [list(t) for t in triples],
    }


def import_records(wb: Workbench, tmp_path: Path, name: str, records: list[dict[str, Any]]) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    wb.import_files([path])


def chain(wb: Workbench, tmp_path: Path, names: list[str]) -> None:
    """Records saying names[0] part of names[1], names[1] part of names[2], ..."""
    recs = [record(f"p-{a}", [a, "part of", b]) for a, b in zip(names, names[1:], strict=False)]
    import_records(wb, tmp_path, "chain-" + names[0], recs)


def self_support(answer: Answer) -> list[str]:
    """Derived proofs whose conclusion appears among their own premises, at any depth."""

    def below(p: Recorded | Derived) -> list[tuple[str, str, str]]:
        out = [(p.statement.subject, p.statement.predicate, p.statement.object)]
        if isinstance(p, Derived):
            for q in p.premises:
                out += below(q)
        return out

    bad = []
    stack: list[Recorded | Derived] = [p for f in answer.findings for p in f.proofs]
    while stack:
        p = stack.pop()
        if isinstance(p, Derived):
            me = (p.statement.subject, p.statement.predicate, p.statement.object)
            if any(me in below(q) for q in p.premises):
                bad.append(p.statement.text)
            stack += list(p.premises)
    return bad


# ---------------------------------------------------------------------- the shipped rules


def test_the_shipped_rules_load_and_pass_every_test_case() -> None:
    rules = load_rules(sorted(RULES.glob("*.ttl")), relations=RELATIONS)
    assert {r.id for r in rules.rules} == {"advisor-university", "current-decision", "inherit-kind", "kind-of"}
    assert all(r.status == "active" and r.version == 1 and r.tests for r in rules.rules)
    results = run_tests(rules)
    assert len(results) == sum(len(r.tests) for r in rules.rules) == 5
    assert [c for c in results if not c.passed] == []


def test_the_workbench_loads_the_shipped_rules_once(wb: Workbench) -> None:
    assert wb.rules is wb.rules
    assert {r.id for r in wb.rules.active()} == {"advisor-university", "current-decision", "inherit-kind", "kind-of"}


def test_a_shipped_rules_test_case_catches_a_broken_rule(tmp_path: Path) -> None:
    """The test cases are not decoration: the inherit-kind rule without its closure fails one."""
    text = (
        (RULES / "inherit-kind.ttl")
        .read_text(encoding="utf-8")
        .replace("rdfs:subClassOf* ?kind", "rdfs:subClassOf ?kind")
    )
    rules = load(write(tmp_path, "inherit-kind.ttl", text))
    failed = [c for c in run_tests(rules) if not c.passed]
    assert failed and failed[0].rule == "inherit-kind v1"
    assert any("wheels" in m or "transport" in m or "charging" in m for m in failed[0].missing)


# ---------------------------------------------------------------------- bad rule files


def test_a_turtle_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    text = rule_ttl().replace("wb:ruleVersion 1 ;", "wb:ruleVersion 1 ;; oops")
    text = refused(write(tmp_path, "broken.ttl", text), ParseError, "Turtle syntax error")
    assert re.search(r"line \d+", text) and "column" in text


def test_a_sparql_syntax_error_names_file_rule_line_and_column(tmp_path: Path) -> None:
    construct = (
        "CONSTRUCT { $this wb:partOf ?z }\nWHERE {\n  $this wb:partOf ?y .\n  ?y wb:partOf ?z\n  FILTER(?z = ) }"
    )
    text = refused(
        write(tmp_path, "bad-sparql.ttl", rule_ttl(construct=construct)),
        ParseError,
        "rule part-chain",
        "SPARQL syntax error",
    )
    m = re.search(r"line (\d+), column (\d+)", text)
    assert m, text
    # The line is counted in the sh:construct text (4 lines of PREFIX and the empty first line).
    assert int(m.group(1)) == 9


def test_an_unknown_prefix_in_sparql_is_a_parse_error(tmp_path: Path) -> None:
    construct = "CONSTRUCT { $this zz:partOf ?y } WHERE { $this wb:partOf ?y }"
    refused(write(tmp_path, "prefix.ttl", rule_ttl(construct=construct)), ParseError, "rule part-chain", "zz")


@pytest.mark.parametrize(
    "update",
    [
        "INSERT DATA { <urn:wb:entity:a> wb:partOf <urn:wb:entity:b> }",
        "DELETE WHERE { ?s ?p ?o }",
        "delete data { <urn:wb:entity:a> wb:partOf <urn:wb:entity:b> }",
        "INSERT { ?s wb:partOf ?o } WHERE { ?s wb:partOf ?o }",
        "DROP ALL",
        "CLEAR GRAPH <urn:wb:graph:meta>",
    ],
)
def test_sparql_update_in_a_rule_is_refused(tmp_path: Path, update: str) -> None:
    refused(write(tmp_path, "update.ttl", rule_ttl(construct=update)), Invalid, "rule part-chain", "Update")


def test_service_in_the_body_is_refused(tmp_path: Path) -> None:
    construct = (
        "CONSTRUCT { $this wb:partOf ?z } WHERE { $this wb:partOf ?y . "
        "SERVICE <http://example.org/sparql> { ?y wb:partOf ?z } }"
    )
    refused(write(tmp_path, "service.ttl", rule_ttl(construct=construct)), Invalid, "rule part-chain", "SERVICE")


def test_graph_in_the_body_is_refused(tmp_path: Path) -> None:
    construct = "CONSTRUCT { $this wb:partOf ?z } WHERE { $this wb:partOf ?y . GRAPH ?g { ?y wb:partOf ?z } }"
    refused(write(tmp_path, "graph.ttl", rule_ttl(construct=construct)), Invalid, "rule part-chain", "GRAPH")


def test_from_is_refused(tmp_path: Path) -> None:
    construct = "CONSTRUCT { $this wb:partOf ?z } FROM <urn:wb:graph:meta> WHERE { $this wb:partOf ?z }"
    refused(write(tmp_path, "from.ttl", rule_ttl(construct=construct)), Invalid, "rule part-chain", "FROM")


@pytest.mark.parametrize(
    ("head", "written"),
    [
        ("$this wb:status wb:Retracted", "https://w3id.org/workbench/ns#status"),
        ("$this wb:supersedes ?y", "https://w3id.org/workbench/ns#supersedes"),
        ("$this wb:appliesTo ?y", "https://w3id.org/workbench/ns#appliesTo"),
        ("$this wb:recordType wb:Decision", "https://w3id.org/workbench/ns#recordType"),
        ("$this <http://www.w3.org/ns/prov#wasAttributedTo> ?y", "http://www.w3.org/ns/prov#wasAttributedTo"),
        ("$this <http://www.w3.org/ns/prov#wasDerivedFrom> ?y", "http://www.w3.org/ns/prov#wasDerivedFrom"),
        ('$this <http://www.w3.org/2004/02/skos/core#prefLabel> "x"', "http://www.w3.org/2004/02/skos/core#prefLabel"),
        ("$this <http://www.w3.org/2002/07/owl#sameAs> ?y", "http://www.w3.org/2002/07/owl#sameAs"),
        ('$this <http://purl.org/dc/terms/identifier> "x"', "http://purl.org/dc/terms/identifier"),
    ],
)
def test_a_conclusion_writing_record_metadata_or_provenance_is_refused(tmp_path: Path, head: str, written: str) -> None:
    construct = f"CONSTRUCT {{ {head} }} WHERE {{ $this wb:partOf ?y }}"
    refused(write(tmp_path, "meta.ttl", rule_ttl(construct=construct)), Invalid, "rule part-chain", written)


def test_a_free_predicate_restricted_to_include_metadata_is_refused(tmp_path: Path) -> None:
    construct = "CONSTRUCT { $this ?p ?y } WHERE { $this wb:partOf ?k . ?k ?p ?y FILTER(?p IN (wb:has, wb:status)) }"
    refused(write(tmp_path, "meta-in.ttl", rule_ttl(construct=construct)), Invalid, "rule part-chain", "ns#status")


@pytest.mark.parametrize(
    "predicate",
    [
        "<http://www.w3.org/2000/01/rdf-schema#label>",
        "<http://example.org/anything>",
        "<http://www.w3.org/2002/07/owl#differentFrom>",
    ],
)
def test_a_conclusion_outside_the_relations_is_refused(tmp_path: Path, predicate: str) -> None:
    construct = f"CONSTRUCT {{ $this {predicate} ?y }} WHERE {{ $this wb:partOf ?y }}"
    refused(write(tmp_path, "foreign.ttl", rule_ttl(construct=construct)), Invalid, "rule part-chain")


def test_a_data_triple_in_a_rule_file_is_refused(tmp_path: Path) -> None:
    text = rule_ttl() + "\n<urn:wb:entity:x> wb:needs <urn:wb:entity:y> .\n"
    refused(write(tmp_path, "data.ttl", text), Invalid, "<urn:wb:entity:x>", "is data")


@pytest.mark.parametrize(
    ("where", "construct_name"),
    [
        ("$this wb:partOf ?y . OPTIONAL { ?y wb:partOf ?z }", "OPTIONAL"),
        ("{ $this wb:partOf ?z } UNION { $this wb:locatedIn ?z }", "UNION"),
        ("$this wb:partOf ?y . BIND(?y AS ?z)", "BIND"),
        ("$this wb:partOf ?z . MINUS { ?z wb:partOf $this }", "MINUS"),
        ("$this wb:partOf ?z . VALUES ?z { <urn:wb:entity:a> }", "VALUES"),
        ("$this wb:partOf ?z . FILTER EXISTS { ?z wb:partOf ?q }", "EXISTS"),
        ("$this (wb:partOf|wb:locatedIn) ?z", "path"),
        (
            "$this wb:partOf ?z FILTER NOT EXISTS { ?z wb:partOf ?q FILTER NOT EXISTS { ?q wb:partOf ?r } }",
            "NOT EXISTS",
        ),
    ],
)
def test_constructs_whose_solutions_are_no_proofs_are_refused(tmp_path: Path, where: str, construct_name: str) -> None:
    construct = f"CONSTRUCT {{ $this wb:partOf ?z }} WHERE {{ {where} }}"
    refused(write(tmp_path, "construct.ttl", rule_ttl(construct=construct)), Invalid, "rule part-chain", construct_name)


def test_a_subquery_in_the_body_is_refused(tmp_path: Path) -> None:
    construct = (
        "CONSTRUCT { $this wb:partOf ?z } WHERE { $this wb:partOf ?y . { SELECT ?y ?z WHERE { ?y wb:partOf ?z } } }"
    )
    refused(write(tmp_path, "subquery.ttl", rule_ttl(construct=construct)), Invalid, "rule part-chain")


def test_a_select_query_is_refused(tmp_path: Path) -> None:
    refused(
        write(tmp_path, "select.ttl", rule_ttl(construct="SELECT ?z WHERE { $this wb:partOf ?z }")),
        Invalid,
        "CONSTRUCT",
    )


def test_a_conclusion_variable_the_body_never_binds_is_refused(tmp_path: Path) -> None:
    construct = "CONSTRUCT { $this wb:partOf ?z } WHERE { $this wb:partOf ?y }"
    refused(write(tmp_path, "unbound.ttl", rule_ttl(construct=construct)), Invalid, "?z", "never binds")


def test_a_variable_bound_only_inside_not_exists_is_unbound(tmp_path: Path) -> None:
    construct = "CONSTRUCT { $this wb:partOf ?z } WHERE { $this wb:partOf ?y FILTER NOT EXISTS { ?y wb:locatedIn ?z } }"
    refused(write(tmp_path, "unbound2.ttl", rule_ttl(construct=construct)), Invalid, "?z", "never binds")


@pytest.mark.parametrize(
    "where",
    [
        "$this wb:partOf ?k . ?k ?p ?y",
        "$this wb:partOf ?k . ?k ?p ?y FILTER(?p IN (wb:has) || ?p = wb:needs)",
        "$this wb:partOf ?k . ?k ?p ?y FILTER(?p NOT IN (wb:status))",
    ],
)
def test_a_free_conclusion_predicate_without_filter_in_is_refused(tmp_path: Path, where: str) -> None:
    construct = f"CONSTRUCT {{ $this ?p ?y }} WHERE {{ {where} }}"
    refused(write(tmp_path, "free.ttl", rule_ttl(construct=construct)), Invalid, "rule part-chain", "free predicate")


def test_a_conclusion_not_about_this_and_an_unconnected_premise_are_refused(tmp_path: Path) -> None:
    construct = "CONSTRUCT { ?y wb:partOf ?z } WHERE { $this wb:partOf ?y . ?y wb:partOf ?z }"
    refused(write(tmp_path / "a", "not-this.ttl", rule_ttl(construct=construct)), Invalid, "$this")
    construct = "CONSTRUCT { $this wb:partOf ?z } WHERE { $this wb:partOf ?y . ?q wb:partOf ?z }"
    refused(write(tmp_path / "b", "unconnected.ttl", rule_ttl(construct=construct)), Invalid, "does not connect")


def test_blank_nodes_in_a_rule_are_refused(tmp_path: Path) -> None:
    construct = "CONSTRUCT { $this wb:partOf _:b } WHERE { $this wb:partOf ?y }"
    refused(write(tmp_path, "bnode.ttl", rule_ttl(construct=construct)), Invalid, "blank nodes")


@pytest.mark.parametrize(
    ("what", "old", "new", "needle"),
    [
        ("version", "wb:ruleVersion 1 ;", "", "ruleVersion"),
        ("two versions", "wb:ruleVersion 1 ;", "wb:ruleVersion 1, 2 ;", "ruleVersion"),
        ("a version in words", "wb:ruleVersion 1 ;", 'wb:ruleVersion "one" ;', "whole number"),
        ("status", "wb:ruleStatus wb:Active ;", "", "ruleStatus"),
        (
            "an unknown status",
            "wb:ruleStatus wb:Active ;",
            "wb:ruleStatus wb:Approved ;",
            "wb:Active, wb:Draft or wb:Retired",
        ),
        ("author", 'dcterms:creator "tester" ;', "", "creator"),
        ("reading", 'wb:reading "A rule written for a test (part-chain)." ;', "", "reading"),
        (
            "an unexpected property",
            "wb:ruleStatus wb:Active ;",
            "wb:ruleStatus wb:Active ; wb:whatever 3 ;",
            "whatever",
        ),
    ],
)
def test_a_rule_missing_what_it_must_carry_is_refused(
    tmp_path: Path, what: str, old: str, new: str, needle: str
) -> None:
    text = rule_ttl()
    assert old in text
    refused(write(tmp_path, "missing.ttl", text.replace(old, new)), Invalid, "rule part-chain", needle)


def test_a_rule_without_test_cases_is_refused(tmp_path: Path) -> None:
    text = rule_ttl()
    text = text[: text.index("    wb:testCase")].rstrip().rstrip(";") + " .\n"
    refused(write(tmp_path, "untested.ttl", text), Invalid, "rule part-chain", "test cases")


def test_a_test_case_without_given_facts_is_refused(tmp_path: Path) -> None:
    refused(write(tmp_path, "nogiven.ttl", rule_ttl(given="")), Invalid, "rule part-chain", "wb:given")


@pytest.mark.parametrize("ident", ["", 'dcterms:identifier "part-chain", "other" ;'])
def test_a_rule_without_exactly_one_id_is_refused(tmp_path: Path, ident: str) -> None:
    text = rule_ttl().replace('dcterms:identifier "part-chain" ;', ident)
    refused(write(tmp_path, "noid.ttl", text), Invalid, "identifier")


def test_a_shape_without_one_target_is_refused(tmp_path: Path) -> None:
    text = rule_ttl().replace("sh:targetSubjectsOf wb:partOf ;", "")
    refused(write(tmp_path, "notarget.ttl", text), Invalid, "target")


def test_a_file_without_rules_is_refused(tmp_path: Path) -> None:
    refused(write(tmp_path, "empty.ttl", PREFIXES), Invalid, "no rule here")


def test_one_rule_version_defined_twice_is_refused(tmp_path: Path) -> None:
    a = write(tmp_path, "a.ttl", rule_ttl())
    b = write(tmp_path, "b.ttl", rule_ttl().replace("rule:part-chain", "rule:part-chain-copy"))
    with pytest.raises(Invalid) as info:
        load_rules([a, b], relations=RELATIONS)
    assert "defined twice" in str(info.value) and str(a) in str(info.value) and str(b) in str(info.value)


def test_a_test_case_with_bad_turtle_is_a_parse_error_naming_rule_and_case(tmp_path: Path) -> None:
    rules = load(write(tmp_path, "badcase.ttl", rule_ttl(given="e:a e:a wb:partOf e:b .")))
    with pytest.raises(ParseError) as info:
        run_tests(rules)
    text = str(info.value)
    assert str(tmp_path / "badcase.ttl") in text and "rule part-chain" in text and "'the case'" in text


def test_a_test_case_turtle_error_is_on_the_line_of_the_given_text(tmp_path: Path) -> None:
    rules = load(write(tmp_path, "badcase.ttl", rule_ttl(given="e:a e:a wb:partOf e:b .")))
    with pytest.raises(ParseError) as info:
        run_tests(rules)
    assert "line 1" in str(info.value)


def test_a_rule_whose_own_test_fails_stops_every_answer(wb: Workbench, tmp_path: Path) -> None:
    # The rule concludes a partOf c; its test wrongly expects c partOf a.
    chain(wb, tmp_path, ["alpha", "beta", "gamma"])
    rules_dir = tmp_path / "rules"
    write(rules_dir, "wrong.ttl", rule_ttl(expect="e:c wb:partOf e:a .", expect_not=""))
    before = dump(wb.store)
    w = bench(wb, rules_dir)
    for _ in range(2):  # refused every time, not only the first
        with pytest.raises(Invalid) as info:
            w.ask("alpha", "part of")
        text = str(info.value)
        assert "rule part-chain v1" in text and "'the case'" in text and str(rules_dir) in text
        assert "missing" in text and "urn:wb:entity:c" in text
    assert dump(wb.store) == before


# ---------------------------------------------------------------------- engine: recursion


def transitive_dir(tmp_path: Path) -> Path:
    rules_dir = tmp_path / "rules"
    write(rules_dir, "part-chain.ttl", rule_ttl())
    return rules_dir


def test_a_transitive_rule_over_a_cycle_answers_in_bounded_time(wb: Workbench, tmp_path: Path) -> None:
    chain(wb, tmp_path, ["alpha", "beta", "gamma", "alpha"])
    w = bench(wb, transitive_dir(tmp_path))
    before = dump(wb.store)
    started = time.monotonic()
    answers = {name: w.ask(name, "part of") for name in ("alpha", "beta", "gamma")}
    closed = w.ask("alpha", "part of", "gamma")
    assert time.monotonic() - started < 10
    for name, a in answers.items():
        assert a.tier is Tier.DERIVED, a.summary
        assert set(a.values) == {"alpha", "beta", "gamma"}, name
        assert not a.incomplete
        assert self_support(a) == [], a.text()
    alpha = {f.label: f for f in answers["alpha"].findings}
    assert isinstance(alpha["beta"].proofs[0], Recorded)
    assert isinstance(alpha["gamma"].proofs[0], Derived) and alpha["gamma"].proofs[0].rule == "part-chain"
    assert [leaf.record for leaf in alpha["gamma"].proofs[0].leaves()] == ["p-alpha", "p-beta"]
    assert closed.tier is Tier.DERIVED and closed.values == ["gamma"]
    assert dump(wb.store) == before


def test_a_self_loop_is_recorded_and_never_its_own_proof(wb: Workbench, tmp_path: Path) -> None:
    import_records(wb, tmp_path, "loop", [record("p-loop", ["ouroboros", "part of", "ouroboros"])])
    a = bench(wb, transitive_dir(tmp_path)).ask("ouroboros", "part of")
    assert a.tier is Tier.RECORDED and a.values == ["ouroboros"]
    assert isinstance(a.findings[0].proofs[0], Recorded)


def long_chain(wb: Workbench, tmp_path: Path, n: int) -> list[str]:
    names = [f"link {i}" for i in range(n + 1)]
    chain(wb, tmp_path, names)
    return names


RIGHT_RECURSIVE = (
    "CONSTRUCT { $this wb:partOf ?z } WHERE { $this wb:locatedIn ?y . ?y wb:partOf ?z }"
)
BASE = "CONSTRUCT { $this wb:partOf ?y } WHERE { $this wb:locatedIn ?y }"


def located_chain_dir(tmp_path: Path) -> Path:
    """Two rules: what a thing is located in, it is part of; and part of whatever that is part
    of. Right recursion through a different relation: each level is a new sub-goal, so the
    depth bound really cuts (nothing is met again, no later pass reaches further)."""
    rules_dir = tmp_path / "located-rules"
    given = "e:a wb:locatedIn e:b . e:b wb:locatedIn e:c ."
    write(rules_dir, "located-base.ttl", rule_ttl("located-base", BASE, given=given, expect="e:a wb:partOf e:b .",
                                                  target="sh:targetSubjectsOf wb:locatedIn"))
    write(rules_dir, "located-chain.ttl", rule_ttl("located-chain", RIGHT_RECURSIVE, given=given,
                                                   expect="", expect_not="e:c wb:partOf e:a .",
                                                   target="sh:targetSubjectsOf wb:locatedIn"))
    return rules_dir


def located_chain(wb: Workbench, tmp_path: Path, n: int) -> list[str]:
    """Records saying link 0 located in link 1, ..., link n-1 located in link n."""
    names = [f"link {i}" for i in range(n + 1)]
    recs = [record(f"l-{a}", [a, "located in", b]) for a, b in zip(names, names[1:], strict=False)]
    import_records(wb, tmp_path, "located", recs)
    return names


def test_a_chain_deeper_than_the_bound_is_incomplete_never_a_wrong_no(
    wb: Workbench, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = located_chain(wb, tmp_path, 12)
    w = bench(wb, located_chain_dir(tmp_path))
    first, last = entity("link-0"), entity("link-12")
    truth = {entity(f"link-{i}") for i in range(1, 13)}

    shallow = Engine(wb.store, w.rules, max_depth=3).solve(first, PART_OF)
    assert shallow.incomplete
    assert entity("link-1") in {t[2] for t in shallow.found}
    assert {t[2] for t in shallow.found} < truth

    deep = Engine(wb.store, w.rules, max_depth=30).solve(first, PART_OF)
    assert not deep.incomplete
    assert {t[2] for t in deep.found} == truth

    closed = Engine(wb.store, w.rules, max_depth=3).solve(first, PART_OF, last)
    assert closed.incomplete and not closed.found

    # Through the answers, with the engine's bound lowered to 3.
    monkeypatch.setattr("workbench.answers.ask.Engine", functools.partial(Engine, max_depth=3))
    open_answer = w.ask(names[0], "part of")
    assert open_answer.tier is Tier.DERIVED and open_answer.incomplete
    assert "link 1" in open_answer.values and len(open_answer.values) < 12
    assert "Incomplete" in open_answer.text()
    assert open_answer.to_json()["incomplete"] is True
    no = w.ask(names[0], "part of", names[-1])
    assert no.tier is Tier.NO_EVIDENCE and no.incomplete
    assert "depth bound" in no.summary


def test_tabled_passes_reach_past_the_bound_for_a_transitive_rule(wb: Workbench, tmp_path: Path) -> None:
    """A left-recursive rule meets its own sub-goal in progress; later passes read the tables and
    reach the whole chain. What is found is true, and a last pass that met the bound says so."""
    long_chain(wb, tmp_path, 12)
    w = bench(wb, transitive_dir(tmp_path))
    first = entity("link-0")
    truth = {entity(f"link-{i}") for i in range(1, 13)}
    result = Engine(wb.store, w.rules, max_depth=3).solve(first, PART_OF)
    found = {t[2] for t in result.found}
    assert entity("link-1") in found and found <= truth
    assert result.incomplete or found == truth

def test_the_default_bound_is_eight_and_a_longer_chain_is_flagged(wb: Workbench, tmp_path: Path) -> None:
    assert engine_module.MAX_DEPTH == 8
    located_chain(wb, tmp_path, 14)
    a = bench(wb, located_chain_dir(tmp_path)).ask("link 0", "part of")
    assert a.tier is Tier.DERIVED and a.incomplete
    assert "link 1" in a.values and "link 8" in a.values
    assert self_support(a) == []


def test_a_closed_question_over_a_long_chain_is_fast(tmp_path: Path) -> None:
    w = Workbench.open(tmp_path / "memory", create=True, user="tester", clock=lambda: FIXED_NOW)
    try:
        w.init()
        long_chain(w, tmp_path, 16)
        w.rules_dir = transitive_dir(tmp_path)
        started = time.monotonic()
        w.ask("link 0", "part of")
        open_time = time.monotonic() - started
        started = time.monotonic()
        a = w.ask("link 0", "part of", "link 2")
        closed_time = time.monotonic() - started
        assert a.tier is Tier.DERIVED
        assert open_time < 1.0
        assert closed_time < 1.0, f"closed question took {closed_time:.1f} s"
    finally:
        w.close()


# ---------------------------------------------------------------------- engine: what rules may read


def test_not_exists_over_what_a_rule_concludes_is_refused_at_load(tmp_path: Path) -> None:
    rules_dir = tmp_path / "rules"
    write(rules_dir, "part-chain.ttl", rule_ttl())
    top = rule_ttl(
        "top-part",
        "CONSTRUCT { $this wb:locatedIn ?y } WHERE { $this wb:partOf ?y FILTER NOT EXISTS { ?y wb:partOf ?z } }",
        expect="e:b wb:locatedIn e:c .",
        expect_not="e:a wb:locatedIn e:b .",
    )
    path = write(rules_dir, "top-part.ttl", top)
    with pytest.raises(Invalid) as info:
        load_rules(sorted(rules_dir.glob("*.ttl")), relations=RELATIONS)
    text = str(info.value)
    assert str(path) in text and "rule top-part" in text and "NOT EXISTS" in text
    # Alone (nothing concludes wb:partOf), the same rule loads and passes its test.
    rules = load_rules([path], relations=RELATIONS)
    assert all(c.passed for c in run_tests(rules))


def test_not_exists_over_what_the_rule_itself_concludes_is_refused(tmp_path: Path) -> None:
    construct = "CONSTRUCT { $this wb:partOf ?z } WHERE { $this wb:partOf ?y . ?y wb:partOf ?z FILTER NOT EXISTS { ?z wb:partOf $this } }"
    refused(write(tmp_path, "self-not.ttl", rule_ttl(construct=construct)), Invalid, "NOT EXISTS")


def test_a_closure_over_what_a_rule_concludes_is_refused(tmp_path: Path) -> None:
    rules_dir = tmp_path / "rules"
    write(rules_dir, "part-chain.ttl", rule_ttl())
    path = write(
        rules_dir,
        "located.ttl",
        rule_ttl(
            "located",
            "CONSTRUCT { $this wb:locatedIn ?z } WHERE { $this wb:partOf+ ?z }",
            expect="e:a wb:locatedIn e:c .",
        ),
    )
    with pytest.raises(Invalid) as info:
        load_rules(sorted(rules_dir.glob("*.ttl")), relations=RELATIONS)
    assert str(path) in str(info.value) and "part-chain" in str(info.value)


def test_a_draft_rule_is_never_used(wb: Workbench, tmp_path: Path) -> None:
    chain(wb, tmp_path, ["alpha", "beta", "gamma"])
    drafts = tmp_path / "drafts"
    write(drafts, "part-chain.ttl", rule_ttl(status="wb:Draft"))
    w = bench(wb, drafts)
    assert [r.status for r in w.rules.rules] == ["draft"] and w.rules.active() == ()
    a = w.ask("alpha", "part of")
    assert a.tier is Tier.RECORDED and a.values == ["beta"]
    assert w.ask("alpha", "part of", "gamma").tier is Tier.NO_EVIDENCE
    # The same rule, active, does derive it.
    assert bench(wb, transitive_dir(tmp_path)).ask("alpha", "part of", "gamma").tier is Tier.DERIVED


def test_a_draft_whose_tests_fail_does_not_block_answers(wb: Workbench, tmp_path: Path) -> None:
    """Drafts are not used, so their tests are `rules check`'s business, not every answer's."""
    chain(wb, tmp_path, ["alpha", "beta", "gamma"])
    drafts = tmp_path / "failing-draft"
    write(drafts, "part-chain.ttl", rule_ttl(status="wb:Draft", expect="e:c wb:partOf e:a ."))
    w = bench(wb, drafts)
    assert w.ask("alpha", "part of").values == ["beta"]
    active = tmp_path / "failing-active"
    write(active, "part-chain.ttl", rule_ttl(expect="e:c wb:partOf e:a ."))
    with pytest.raises(Invalid, match="fails its test"):
        bench(wb, active).ask("alpha", "part of")


@pytest.mark.parametrize(("status", "extra"), [("wb:Retired", ""), ("wb:Active", "\n    sh:deactivated true ;")])
def test_retired_and_deactivated_rules_are_never_used(wb: Workbench, tmp_path: Path, status: str, extra: str) -> None:
    chain(wb, tmp_path, ["alpha", "beta", "gamma"])
    retired = tmp_path / "retired"
    write(retired, "part-chain.ttl", rule_ttl(status=status, extra=extra))
    w = bench(wb, retired)
    assert w.rules.active() == ()
    assert w.ask("alpha", "part of", "gamma").tier is Tier.NO_EVIDENCE


def test_without_rules_only_recorded_facts_answer(sample: Workbench, tmp_path: Path) -> None:
    empty = tmp_path / "none"
    empty.mkdir()
    w = bench(sample, empty)
    assert w.ask("my car", "needs", "gas").tier is Tier.NO_EVIDENCE
    assert w.ask("my car", "is a", "petrol car").tier is Tier.RECORDED
    assert w.decision("Project Atlas").tier is Tier.NO_EVIDENCE  # the current-decision rule draws it


def test_two_rules_that_differ_only_in_variable_names_conclude_the_same(wb: Workbench, tmp_path: Path) -> None:
    given = "e:a wb:partOf e:b . e:b wb:needs e:oil . e:c wb:needs e:water ."
    rules_dir = tmp_path / "rules"
    for rid, var in (("alpha-needs", "y"), ("beta-needs", "w")):
        construct = f"CONSTRUCT {{ $this wb:needs ?z }} WHERE {{ $this wb:partOf ?{var} . ?{var} wb:needs ?z }}"
        write(
            rules_dir,
            f"{rid}.ttl",
            rule_ttl(rid, construct, given=given, expect="e:a wb:needs e:oil .", expect_not="e:a wb:needs e:water ."),
        )
    import_records(
        wb,
        tmp_path,
        "pump",
        [
            record("m-pump", ["pump", "part of", "engine"]),
            record("m-engine", ["engine", "needs", "oil"]),
            record("m-plant", ["plant", "needs", "water"]),
        ],
    )
    a = bench(wb, rules_dir).ask("pump", "needs")
    assert a.values == ["oil"], a.text()


def test_sample_answers_through_inherit_kind_are_complete(sample: Workbench) -> None:
    assert not sample.ask("my car", "needs", "gas").incomplete
    assert not sample.ask("Sparky", "needs").incomplete


def test_engine_results_do_not_depend_on_the_order_of_questions(sample: Workbench) -> None:
    first = sample.ask("Sparky", "is a")
    sample.ask("Sparky", "needs")
    again = sample.ask("Sparky", "is a")
    assert json.dumps(first.to_json(), sort_keys=True) == json.dumps(again.to_json(), sort_keys=True)


# ---------------------------------------------------------------------- nothing is written


BAD_RULES = {
    "turtle.ttl": rule_ttl().replace("wb:ruleVersion 1 ;", "wb:ruleVersion 1 ;; oops"),
    "update.ttl": rule_ttl(construct="INSERT DATA { <urn:wb:entity:a> wb:partOf <urn:wb:entity:b> }"),
    "delete.ttl": rule_ttl(construct="DELETE WHERE { ?s ?p ?o }"),
    "meta.ttl": rule_ttl(construct="CONSTRUCT { $this wb:status wb:Retracted } WHERE { $this wb:partOf ?y }"),
    "data.ttl": rule_ttl() + "\n<urn:wb:entity:x> wb:needs <urn:wb:entity:y> .\n",
    "failing.ttl": rule_ttl(expect="e:c wb:partOf e:a .", expect_not=""),
}


@pytest.mark.parametrize("name", sorted(BAD_RULES))
def test_bad_rules_and_questions_with_them_leave_the_store_unchanged(
    sample: Workbench, tmp_path: Path, name: str
) -> None:
    rules_dir = tmp_path / "bad"
    write(rules_dir, name, BAD_RULES[name])
    before = dump(sample.store)
    w = bench(sample, rules_dir)
    for question in (
        lambda: w.ask("my car", "needs", "gas"),
        lambda: w.decision("Project Atlas"),
        lambda: w.ask("Paris", "located in"),
    ):
        with pytest.raises(Invalid) as info:
            question()
        assert str(rules_dir) in str(info.value)
    # Questions that need no rules still answer.
    assert w.current("me", "weight").tier is Tier.RECORDED
    assert w.count("wedding", about="me").count == 5
    assert dump(sample.store) == before


def test_custom_rules_answer_without_writing(sample: Workbench, tmp_path: Path) -> None:
    chain(sample, tmp_path, ["alpha", "beta", "gamma", "alpha"])
    before = dump(sample.store)
    w = bench(sample, transitive_dir(tmp_path))
    for _ in range(3):
        w.ask("alpha", "part of")
        w.ask("gamma", "part of", "beta")
        w.ask("my car", "needs", "gas")  # no rule for it here: no evidence
    assert w.ask("my car", "needs", "gas").tier is Tier.NO_EVIDENCE
    assert dump(sample.store) == before
