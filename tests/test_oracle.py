"""The rule engine against a reference: pySHACL's SHACL-AF rule expansion of the same rules.

On small graphs, what the engine concludes (goal-directed, at question time) must equal what
pySHACL adds when it expands the same rule files over the same triples until nothing changes.
pySHACL is used here only, as a test oracle; where it is wrong (it inherits rdflib's SPARQL
bugs) the W3C semantics decide, and the case is an explicit strict xfail listed in
docs/decisions/20261130-rule-oracle.md.

- Oracle: an rdflib graph of the given triples, ``pyshacl.shacl_rules(..., iterate_rules=True)``
  (advanced mode) on a copy, repeated until the graph stops growing (pySHACL iterates each
  shape's rules to a fixpoint, but runs the shapes once, in order: a rule that feeds a rule of an
  earlier shape needs another pass). Its conclusions: the expanded graph minus the input.
- Engine: for every IRI in the graph and every predicate a loaded rule can conclude,
  ``Engine(scratch(triples), ruleset).solve(node, predicate)``; the conclusions are the found
  triples supported by a Step (derived) that are not given.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any
from unittest import mock

import pyoxigraph as ox
import pyshacl
import pytest
import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib.plugins.sparql import processor
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.parser import parseQuery

from workbench.errors import Invalid
from workbench.rules.check import parse_turtle, scratch
from workbench.rules.engine import Engine
from workbench.rules.load import load_rules
from workbench.rules.proof import Fact, Step
from workbench.store import Store
from workbench.values.rules import RuleSet
from workbench.vocab import RDF, RDFS, WB

ROOT = Path(__file__).resolve().parent.parent
RULE_FILES = {p.stem: p for p in sorted((ROOT / "rules").glob("*.ttl"))}
RELATIONS = frozenset(
    str(t.subject.value)
    for t in (q.triple for q in ox.parse(path=str(ROOT / "ontology" / "relations.ttl"), format=ox.RdfFormat.TURTLE))
    if t.predicate == RDF.type and t.object == WB.Relation
)
XSD_INTEGER = ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")
SH_FAILURE = rdflib.URIRef("http://www.w3.org/ns/shacl#ValidationFailure")

Triples = frozenset[ox.Triple]


# ---------------------------------------------------------------------- the two sides


_SHAPES: dict[tuple[Path, ...], rdflib.Graph] = {}


def _shapes(paths: tuple[Path, ...]) -> rdflib.Graph:
    if paths not in _SHAPES:
        g = rdflib.Graph()
        for p in paths:
            g.parse(p, format="turtle")
        _SHAPES[paths] = g
    return _SHAPES[paths]


@contextlib.contextmanager
def _prepared_queries() -> Iterator[None]:
    """rdflib re-parses a rule's query for every focus node, three quarters of the oracle's time;
    translate each query text once and evaluate the translation again (what rdflib's own
    prepareQuery does). Only the oracle's speed changes."""
    memo: dict[tuple[str, str | None, tuple[tuple[str, str], ...]], Any] = {}

    def translate(text: Any, base: str | None = None, init_ns: Mapping[str, Any] | None = None) -> Any:
        key = (text, base, tuple(sorted((k, str(v)) for k, v in (init_ns or {}).items())))
        if key not in memo:
            memo[key] = translateQuery(parseQuery(text), base, init_ns)
        return memo[key]

    with mock.patch(f"{processor.__name__}.parseQuery", lambda text: text), mock.patch(f"{processor.__name__}.translateQuery", translate):
        yield


def oracle(triples: Iterable[ox.Triple], paths: Iterable[Path]) -> Triples:
    """What pySHACL's rule expansion adds to ``triples``, iterated to a fixpoint, on a copy."""
    given_ = frozenset(triples)
    g = rdflib.Graph()
    g.parse(data=(ox.serialize(sorted(given_, key=str), format=ox.RdfFormat.N_TRIPLES) or b"").decode(), format="nt")
    shapes = _shapes(tuple(sorted(paths)))
    with _prepared_queries():
        for _ in range(50):
            size = len(g)
            out = pyshacl.shacl_rules(g, shacl_graph=shapes, iterate_rules=True)  # advanced mode; clones g
            assert isinstance(out, rdflib.Graph) and (None, rdflib.RDF.type, SH_FAILURE) not in out, out
            g = out
            if len(g) == size:
                break
        else:  # pragma: no cover
            raise AssertionError("pySHACL's expansion did not reach a fixpoint")
    expanded = {q.triple for q in ox.parse(g.serialize(format="nt").encode(), format=ox.RdfFormat.N_TRIPLES)}
    return frozenset(expanded - given_)


def concludable(ruleset: RuleSet) -> list[ox.NamedNode]:
    """Every predicate an active rule can conclude."""
    out: set[str] = set()
    for rule in ruleset.active():
        for head in rule.head:
            if isinstance(head.p, ox.NamedNode):
                out.add(head.p.value)
            else:
                assert rule.concludes is not None
                out |= rule.concludes
    return [ox.NamedNode(p) for p in sorted(out)]


def subjects(triples: Iterable[ox.Triple]) -> list[ox.NamedNode]:
    nodes = {n for t in triples for n in (t.subject, t.object)}
    return sorted((n for n in nodes if isinstance(n, ox.NamedNode)), key=str)


def engine(triples: Iterable[ox.Triple], ruleset: RuleSet) -> tuple[Triples, dict[ox.Triple, Step], list[str]]:
    """The engine's derived conclusions about every node of the graph, their proofs, and the
    questions that came back incomplete. Each question gets its own Engine, as the engine asks."""
    given_ = frozenset(triples)
    store = scratch(sorted(given_, key=str))
    proofs: dict[ox.Triple, Step] = {}
    incomplete: list[str] = []
    for node in subjects(given_):
        for p in concludable(ruleset):
            result = Engine(store, ruleset).solve(node, p)
            if result.incomplete:
                incomplete.append(f"{node} {p} ?")
            for triple, support in result.found.items():
                t = _triple(triple)
                if isinstance(support, Step) and t not in given_:
                    proofs[t] = support
    return frozenset(proofs), proofs, incomplete


def check_proof(support: Fact | Step, given_: Triples, above: frozenset[ox.Triple] = frozenset()) -> None:
    """A proof never lists a conclusion among its own premises (at any depth), and bottoms out in
    given triples."""
    t = _triple(support.triple)
    assert t not in above, f"{t} is a premise of its own proof"
    if isinstance(support, Fact):
        assert t in given_, f"a Fact that is not given: {t}"
        return
    for premise in support.premises:
        check_proof(premise, given_, above | {t})


def agree(triples: Iterable[ox.Triple], paths: Iterable[Path], ruleset: RuleSet) -> Triples:
    """The engine's conclusions equal the oracle's; no question about a tiny graph comes back
    incomplete; each conclusion is also found when asked with its object bound; every proof is
    acyclic. Returns the conclusions."""
    given_ = frozenset(triples)
    want = oracle(given_, list(paths))
    got, proofs, incomplete = engine(given_, ruleset)
    assert _show(got - want) == [] and _show(want - got) == [], (
        f"engine and pySHACL disagree\nonly engine: {_show(got - want)}\nonly pySHACL: {_show(want - got)}\n"
        f"given:\n{_turtle(given_)}"
    )
    assert incomplete == [], f"incomplete on a tiny graph: {incomplete}\ngiven:\n{_turtle(given_)}"
    store = scratch(sorted(given_, key=str))
    missed = [t for t in sorted(want, key=str) if not found(store, ruleset, t)]
    assert _show(missed) == [], f"not found when asked with the object bound\ngiven:\n{_turtle(given_)}"
    for step in proofs.values():
        check_proof(step, given_)
    return got


def _triple(t: tuple[object, object, object]) -> ox.Triple:
    return ox.Triple(*t)  # type: ignore[arg-type]


def found(store: Store, ruleset: RuleSet, t: ox.Triple, *, bound: bool = True) -> bool:
    """Whether the engine finds ``t`` asked (s p o), or with ``bound`` False asked (s p ?)."""
    s, p, o = t.subject, t.predicate, t.object
    assert isinstance(s, ox.NamedNode | ox.BlankNode) and not isinstance(o, ox.Triple)
    return (s, p, o) in Engine(store, ruleset).solve(s, p, o if bound else None).found


def _show(ts: Iterable[ox.Triple]) -> list[str]:
    return sorted(f"{t.subject} {t.predicate} {t.object}" for t in ts)


def _turtle(ts: Iterable[ox.Triple]) -> str:
    return "\n".join(f"  {x} ." for x in _show(ts))


@functools.cache
def shipped(*names: str) -> tuple[list[Path], RuleSet]:
    paths = [RULE_FILES[n] for n in names]
    return paths, load_rules(paths, relations=RELATIONS)


# ---------------------------------------------------------------------- random graphs

E = "urn:wb:entity:"
LETTERS = "abcdefgh"
UNIVERSITY = ox.NamedNode(E + "university")
CONTENT = [RDF.type, RDFS.subClassOf, WB.has, WB.usedFor, WB.dependsOn, WB.needs, WB.locatedIn, WB.advisor, WB.teachesAt]
INHERITED = {WB.has, WB.usedFor, WB.dependsOn, WB.needs}
RECORDS = [ox.NamedNode(f"urn:wb:record:d{i}") for i in range(1, 5)]


@st.composite
def content_graphs(draw: st.DrawFn) -> frozenset[ox.Triple]:
    """5-8 entities (and urn:wb:entity:university), 0-4 edges of each relation: cycles in
    rdfs:subClassOf, things of two kinds, classes that are themselves typed, a literal or two."""
    n = draw(st.integers(min_value=5, max_value=8))
    nodes = [ox.NamedNode(E + c) for c in LETTERS[:n]] + [UNIVERSITY]
    node = st.sampled_from(nodes)
    value = st.one_of(node, st.sampled_from([ox.Literal("spare"), ox.Literal("2", datatype=XSD_INTEGER)]))
    out: set[ox.Triple] = set()
    for p in CONTENT:
        k = draw(st.integers(min_value=0, max_value=4 if p in (RDF.type, RDFS.subClassOf) else 3))
        obj = value if p in INHERITED else node
        for _ in range(k):
            out.add(ox.Triple(draw(node), p, draw(obj)))
    return frozenset(out)


@st.composite
def record_graphs(draw: st.DrawFn) -> frozenset[ox.Triple]:
    """Records r:d1..d4 with wb:appliesTo a scope, a record type (Decision, Observation, both or
    none) and random wb:supersedes edges (self-supersession and cycles included)."""
    scopes = [ox.NamedNode(E + "a"), ox.NamedNode(E + "b")]
    kinds = [WB.Decision, WB.Observation]
    out: set[ox.Triple] = set()
    for r in RECORDS[: draw(st.integers(min_value=1, max_value=4))]:
        for s in draw(st.sets(st.sampled_from(scopes), max_size=2)) or {scopes[0]}:
            out.add(ox.Triple(r, WB.appliesTo, s))
        for k in draw(st.sets(st.sampled_from(kinds), max_size=2)):
            out.add(ox.Triple(r, WB.recordType, k))
    live = sorted({t.subject for t in out}, key=str)
    for a, b in draw(st.lists(st.tuples(st.sampled_from(live), st.sampled_from(live)), max_size=4)):
        out.add(ox.Triple(a, WB.supersedes, b))
    return frozenset(out)


FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", ["kind-of", "inherit-kind", "advisor-university"])
@FAST
@given(graph=content_graphs())
def test_each_content_rule_agrees_with_pyshacl(name: str, graph: frozenset[ox.Triple]) -> None:
    paths, ruleset = shipped(name)
    agree(graph, paths, ruleset)


@FAST
@given(graph=record_graphs())
def test_current_decision_agrees_with_pyshacl(graph: frozenset[ox.Triple]) -> None:
    paths, ruleset = shipped("current-decision")
    agree(graph, paths, ruleset)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=content_graphs(), records=record_graphs())
def test_all_shipped_rules_together_agree_with_pyshacl(content: frozenset[ox.Triple], records: frozenset[ox.Triple]) -> None:
    paths, ruleset = shipped(*RULE_FILES)
    agree(content | records, paths, ruleset)


# ---------------------------------------------------------------------- the shipped rules, by hand


def test_chaining_through_all_shipped_rules() -> None:
    """kind-of feeds inherit-kind (a derived kind passes on what it has) and advisor-university
    (a derived kind under university); a subclass cycle; a thing of two kinds."""
    graph = parse_turtle(
        """
        e:me wb:advisor e:lin .
        e:lin wb:teachesAt e:tsinghua , e:city-hall .
        e:tsinghua a e:research-university .
        e:research-university rdfs:subClassOf e:institution .
        e:institution rdfs:subClassOf e:university , e:research-university .
        e:university wb:has e:library .
        e:city-hall a e:building , e:office .
        e:office wb:usedFor e:work .
        r:d1 wb:appliesTo e:me ; wb:recordType wb:Decision .
        r:d2 wb:appliesTo e:me ; wb:recordType wb:Decision ; wb:supersedes r:d1 .
        """,
        "test",
    )
    paths, ruleset = shipped(*RULE_FILES)
    got = agree(graph, paths, ruleset)
    assert {
        "<urn:wb:entity:me> <https://w3id.org/workbench/ns#advisorUniversity> <urn:wb:entity:tsinghua>",
        "<urn:wb:entity:tsinghua> <https://w3id.org/workbench/ns#has> <urn:wb:entity:library>",
        "<urn:wb:entity:tsinghua> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <urn:wb:entity:university>",
        "<urn:wb:entity:city-hall> <https://w3id.org/workbench/ns#usedFor> <urn:wb:entity:work>",
        "<urn:wb:entity:me> <https://w3id.org/workbench/ns#governedBy> <urn:wb:record:d2>",
    } <= set(_show(got))


# ---------------------------------------------------------------------- test-local rules

HEAD = """@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix wb: <https://w3id.org/workbench/ns#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix rule: <urn:wb:rule:> .
"""


def rule_file(where: Path, name: str, target: str, construct: str) -> Path:
    """A rule file with the metadata the loader demands, one SPARQL rule, one test case."""
    path = where / f"{name}.ttl"
    path.write_text(
        HEAD
        + f"""
rule:{name} a sh:NodeShape ; {target} ; sh:rule rule:{name}-v1 .
rule:{name}-v1 a sh:SPARQLRule ;
    dcterms:identifier "{name}" ; wb:ruleVersion 1 ; dcterms:creator "tests" ; wb:ruleStatus wb:Active ;
    wb:reading "a rule written for the oracle tests" ;
    sh:construct \"\"\"PREFIX wb: <https://w3id.org/workbench/ns#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
{construct}\"\"\" ;
    wb:testCase [ rdfs:label "given only" ; wb:given "e:a wb:partOf e:b ." ] .
""",
        encoding="utf-8",
    )
    return path


def local(tmp_path: Path, *rules: tuple[str, str, str]) -> tuple[list[Path], RuleSet]:
    paths = [rule_file(tmp_path, *r) for r in rules]
    return paths, load_rules(paths, relations=RELATIONS)


TRANSITIVE = (
    "part-of-transitive",
    "sh:targetSubjectsOf wb:partOf",
    "CONSTRUCT { $this wb:partOf ?z } WHERE { $this wb:partOf ?y . ?y wb:partOf ?z }",
)
# Not recursive itself, but reads wb:partOf, which TRANSITIVE concludes.
LOCATED_BY_PART = (
    "located-by-part",
    "sh:targetSubjectsOf wb:has",
    "CONSTRUCT { $this wb:locatedIn ?z } WHERE { $this wb:has ?y . ?y wb:partOf ?z }",
)
# Recursive through its first premise (left-linear): locatedIn climbs up partOf.
LOCATED_UP = (
    "located-up",
    "sh:targetSubjectsOf wb:locatedIn",
    "CONSTRUCT { $this wb:locatedIn ?z } WHERE { $this wb:locatedIn ?y . ?y wb:partOf ?z }",
)


def test_transitive_rule_over_a_cycle_terminates_and_agrees(tmp_path: Path) -> None:
    paths, ruleset = local(tmp_path, TRANSITIVE)
    graph = parse_turtle(
        "e:a wb:partOf e:b . e:b wb:partOf e:c . e:c wb:partOf e:a . e:c wb:partOf e:d . e:d wb:partOf e:d .", "test"
    )
    got = agree(graph, paths, ruleset)
    # every node on the cycle is part of every node on it (itself included) and of d
    assert len(got) == 3 * 4 - 4  # 12 pairs, 4 of them given


def test_a_rule_chained_on_a_recursive_rule_agrees(tmp_path: Path) -> None:
    paths, ruleset = local(tmp_path, TRANSITIVE, LOCATED_BY_PART)
    graph = parse_turtle(
        "e:kit wb:has e:p1 . e:p1 wb:partOf e:p2 . e:p2 wb:partOf e:p3 . e:p3 wb:partOf e:p1 . e:p3 wb:partOf e:p4 .",
        "test",
    )
    got = agree(graph, paths, ruleset)
    assert {f"<urn:wb:entity:kit> <https://w3id.org/workbench/ns#locatedIn> <urn:wb:entity:{x}>" for x in ("p1", "p2", "p3", "p4")} <= set(_show(got))


@pytest.fixture(scope="module")
def transitive(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], RuleSet]:
    return local(tmp_path_factory.mktemp("rules"), TRANSITIVE)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edges=st.sets(st.tuples(st.sampled_from(LETTERS[:6]), st.sampled_from(LETTERS[:6])), max_size=9))
def test_transitive_rule_on_random_graphs_agrees(transitive: tuple[list[Path], RuleSet], edges: set[tuple[str, str]]) -> None:
    """Random wb:partOf graphs over 6 nodes: cycles, self loops, diamonds."""
    paths, ruleset = transitive
    graph = [ox.Triple(ox.NamedNode(E + a), WB.partOf, ox.NamedNode(E + b)) for a, b in sorted(edges)]
    agree(graph, paths, ruleset)


@pytest.fixture(scope="module")
def recursive(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], RuleSet]:
    return local(tmp_path_factory.mktemp("rules"), TRANSITIVE, LOCATED_BY_PART, LOCATED_UP)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edges=st.sets(st.tuples(st.sampled_from(LETTERS[:6]), st.sampled_from(["partOf", "has", "locatedIn"]), st.sampled_from(LETTERS[:6])), max_size=10))
def test_recursive_rules_together_on_random_graphs_agree(recursive: tuple[list[Path], RuleSet], edges: set[tuple[str, str, str]]) -> None:
    """Transitive partOf, locatedIn through has/partOf, and the left-recursive locatedIn climb,
    chained over random graphs (cycles in both relations)."""
    paths, ruleset = recursive
    graph = [ox.Triple(ox.NamedNode(E + a), getattr(WB, p), ox.NamedNode(E + b)) for a, p, b in sorted(edges)]
    agree(graph, paths, ruleset)


def test_prebound_this_inside_not_exists_agrees(tmp_path: Path) -> None:
    """$this is pre-bound inside FILTER NOT EXISTS too (SHACL pre-binding): b's own locatedIn
    blocks b, a's does not."""
    paths, ruleset = local(
        tmp_path,
        (
            "needs-unplaced",
            "sh:targetSubjectsOf wb:has",
            "CONSTRUCT { $this wb:needs ?y } WHERE { $this wb:has ?y . FILTER NOT EXISTS { $this wb:locatedIn ?y } }",
        ),
    )
    graph = parse_turtle("e:a wb:has e:k . e:b wb:has e:k . e:b wb:locatedIn e:k .", "test")
    assert _show(agree(graph, paths, ruleset)) == ["<urn:wb:entity:a> <https://w3id.org/workbench/ns#needs> <urn:wb:entity:k>"]


# ---------------------------------------------------------------------- engine bugs the oracle found
# Each states the input, the rule, what pySHACL and the W3C semantics conclude, and what the
# engine answered. Those marked ``regression`` failed on an earlier engine and pass now.


def bug(reason: str) -> pytest.MarkDecorator:
    """Marks a test that once showed an engine bug (fixed since); kept as a regression test."""
    return pytest.mark.regression(reason)


@bug("variant sub-goal cut without tabling lost conclusions of a left-recursive rule, incomplete=False")
def test_left_recursive_rule_finds_every_conclusion(tmp_path: Path) -> None:
    """x is in the room, the room is part of the building, the building part of the campus: x is
    in the campus. Asked (x locatedIn ?), the engine cut the sub-goal (x locatedIn ?y) as a
    variant of the question, so only recorded facts fed the first premise: the second step up was
    lost and the result not marked incomplete (a wrong "no")."""
    paths, ruleset = local(tmp_path, LOCATED_UP)
    graph = parse_turtle("e:x wb:locatedIn e:room . e:room wb:partOf e:building . e:building wb:partOf e:campus .", "test")
    assert _show(oracle(graph, paths)) == [
        "<urn:wb:entity:x> <https://w3id.org/workbench/ns#locatedIn> <urn:wb:entity:building>",
        "<urn:wb:entity:x> <https://w3id.org/workbench/ns#locatedIn> <urn:wb:entity:campus>",
    ]
    result = Engine(scratch(graph), ruleset).solve(ox.NamedNode(E + "x"), WB.locatedIn)
    assert sorted(str(t[2]) for t in result.found) == [
        "<urn:wb:entity:building>", "<urn:wb:entity:campus>", "<urn:wb:entity:room>",
    ]
    assert not result.incomplete


def test_left_recursive_rule_with_the_object_bound_agrees(tmp_path: Path) -> None:
    """The same rule asked with the object bound walks partOf backwards from the object; every
    sub-goal is bound."""
    paths, ruleset = local(tmp_path, LOCATED_UP)
    graph = parse_turtle(
        "e:x wb:locatedIn e:room . e:room wb:partOf e:building . e:building wb:partOf e:campus . e:campus wb:partOf e:city .",
        "test",
    )
    city = ox.Triple(ox.NamedNode(E + "x"), WB.locatedIn, ox.NamedNode(E + "city"))
    assert city in oracle(graph, paths)
    assert found(scratch(graph), ruleset, city)


@bug("variant sub-goal cut: inherit-kind asked with the object bound missed a kind two derivations up, incomplete=False")
def test_inherit_kind_asked_with_the_object_bound() -> None:
    """Found by the property test. rex is a dog, dog is a species, species is a taxon, a taxon has
    a latin name: rex has a latin name (pySHACL agrees; asked (rex has ?) the engine found it).
    Asked (rex has latin-name), the engine bound ?k = dog, then took ``?kind wb:has latin-name``
    (two bound terms) before the closure ``dog rdfs:subClassOf* ?kind`` (one), i.e. the
    open-subject sub-goal (? has latin-name); inside it the same premise is a variant of that
    sub-goal and was cut, so only the recorded taxon fed it: species had it, dog was never
    reached. Found nothing, incomplete False."""
    paths, ruleset = shipped("inherit-kind")
    graph = parse_turtle("e:rex a e:dog . e:dog a e:species . e:species a e:taxon . e:taxon wb:has e:latin-name .", "test")
    fact = ox.Triple(ox.NamedNode(E + "rex"), WB.has, ox.NamedNode(E + "latin-name"))
    assert fact in oracle(graph, paths)
    store = scratch(graph)
    assert found(store, ruleset, fact, bound=False)
    assert found(store, ruleset, fact)


@bug("the one-premise lookup cache returned bindings under another premise's variable names: KeyError")
def test_one_premise_cache_keeps_each_rules_variable_names(tmp_path: Path) -> None:
    """The cache key renamed variables by role, but the cached bindings kept the names of the
    premise that filled it. Rule needs-if-used reads ``$this wb:has ?y`` (cached as {y: k}); its
    sub-goal (x usedFor ?w) runs rule used-for, whose ``$this wb:has ?z`` has the same shape and
    got {y: k} back: ?z unbound, KeyError('z'). pySHACL: x usedFor k, x needs k."""
    paths, ruleset = local(
        tmp_path,
        ("needs-if-used", "sh:targetSubjectsOf wb:has",
         "CONSTRUCT { $this wb:needs ?y } WHERE { $this wb:has ?y . $this wb:usedFor ?w }"),
        ("used-for", "sh:targetSubjectsOf wb:has", "CONSTRUCT { $this wb:usedFor ?z } WHERE { $this wb:has ?z }"),
    )
    assert len(agree(parse_turtle("e:x wb:has e:k .", "test"), paths, ruleset)) == 2


@bug("the one-premise lookup cache: kind-of got inherit-kind's ?k, its closure had no bound end, incomplete=True")
def test_shipped_rules_answer_a_plain_kind_question_completely() -> None:
    """rex is a dog, a dog is an animal, an animal needs food. Asked (rex needs ?) with all shipped
    rules, inherit-kind looked up ``rex a ?k``; its sub-goal (rex a ?) ran kind-of, whose
    ``$this a ?_2`` hit the cache and got {k: dog}: ?_2 unbound, the closure
    ``?_2 rdfs:subClassOf+ ?_1`` had neither end, and the result was marked incomplete."""
    _, ruleset = shipped(*RULE_FILES)
    graph = parse_turtle("e:rex a e:dog . e:dog rdfs:subClassOf e:animal . e:animal wb:needs e:food .", "test")
    result = Engine(scratch(graph), ruleset).solve(ox.NamedNode(E + "rex"), WB.needs)
    assert [str(t[2]) for t in result.found] == ["<urn:wb:entity:food>"]
    assert not result.incomplete


FILTER_FALSE = (
    "never",
    "sh:targetSubjectsOf wb:has",
    "CONSTRUCT { $this wb:needs ?y } WHERE { $this wb:has ?y . FILTER(false) }",
)


def test_filter_false_concludes_nothing(tmp_path: Path) -> None:
    """ENGINE BUG (inherited from rdflib's parser). FILTER(false) removes every solution (SPARQL
    1.1 §17.2: a FILTER keeps only solutions whose expression is true), so the rule concludes
    nothing. rdflib's algebra (``translateGroupGraphPattern``: ``if filters:``) drops a filter
    whose expression is a falsy literal (false, 0, ""), and compile.parse_construct reads the
    translated algebra, so the engine concludes a needs k. Refusing the rule at load (a filter
    that is a constant) would be right too."""
    try:
        _, ruleset = local(tmp_path, FILTER_FALSE)
    except Invalid:
        return
    graph = parse_turtle("e:a wb:has e:k .", "test")
    result = Engine(scratch(graph), ruleset).solve(ox.NamedNode(E + "a"), WB.needs)
    assert list(result.found) == []


# ---------------------------------------------------------------------- pySHACL's bugs (W3C decides)


@pytest.mark.xfail(strict=True, reason="pySHACL/rdflib 7.6 drops FILTER(false) (a falsy literal) when translating the query; W3C: no solutions")
def test_pyshacl_filter_false(tmp_path: Path) -> None:
    paths, _ = local(tmp_path, FILTER_FALSE)
    assert oracle(parse_turtle("e:a wb:has e:k .", "test"), paths) == frozenset()


TIMES_SEVEN = (
    "integer-weight",
    "sh:targetSubjectsOf wb:weight",
    "CONSTRUCT { $this wb:needs ?y } WHERE { $this wb:weight ?w . $this wb:has ?y . FILTER(DATATYPE(?w * 7) = xsd:integer) }",
)


def test_integer_times_integer_is_an_integer_in_the_engine(tmp_path: Path) -> None:
    """W3C (SPARQL 1.1 §17.3, XPath op:numeric-multiply): xsd:integer * xsd:integer is an
    xsd:integer, so the rule fires. The engine (Oxigraph's evaluator) gets this right."""
    paths, ruleset = local(tmp_path, TIMES_SEVEN)
    graph = parse_turtle("e:a wb:weight 8 ; wb:has e:k .", "test")
    got, _, _ = engine(graph, ruleset)
    assert _show(got) == ["<urn:wb:entity:a> <https://w3id.org/workbench/ns#needs> <urn:wb:entity:k>"]


@pytest.mark.xfail(strict=True, reason="pySHACL/rdflib 7.6 types 8*7 as xsd:decimal; W3C: integer*integer is xsd:integer")
def test_pyshacl_integer_times_integer(tmp_path: Path) -> None:
    paths, ruleset = local(tmp_path, TIMES_SEVEN)
    agree(parse_turtle("e:a wb:weight 8 ; wb:has e:k .", "test"), paths, ruleset)
