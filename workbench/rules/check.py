"""Running a rule's test cases: given facts, expected conclusions, and ones that must not follow.

Each case runs in a scratch in-memory store, through the same engine that answers questions,
with the rule alone. Given facts are Turtle with the prefixes ``wb: rdf: rdfs: xsd: owl:``,
``e:`` (entities) and ``r:`` (records) declared. Triples whose predicate is record metadata
(``wb:appliesTo``, ``wb:supersedes``, ``wb:recordType``...) describe the record named by their
subject; every other triple is the content of one active record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyoxigraph as ox

from workbench.errors import ParseError
from workbench.ids import record_iri, source_iri
from workbench.rules.engine import Engine
from workbench.store import MemoryStore, Store
from workbench.values.rules import METADATA_PREDICATES, Rule, RuleSet, TestCase
from workbench.vocab import WB

TEST_PREFIXES = """@prefix wb: <https://w3id.org/workbench/ns#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix e: <urn:wb:entity:> .
@prefix r: <urn:wb:record:> .
"""
GIVEN = record_iri("given")


@dataclass(frozen=True)
class CaseResult:
    rule: str
    case: str
    missing: tuple[str, ...]  # expected, not concluded
    unwanted: tuple[str, ...]  # concluded, though it must not follow

    @property
    def passed(self) -> bool:
        return not self.missing and not self.unwanted


def parse_turtle(text: str, where: str) -> list[ox.Triple]:
    try:
        return [q.triple for q in ox.parse(TEST_PREFIXES + text, format=ox.RdfFormat.TURTLE)]
    except SyntaxError as exc:
        # Lines are counted in the test case's own text, not after the prefixes put before it.
        shift = TEST_PREFIXES.count("\n")
        message = re.sub(r"line (\d+)", lambda m: f"line {int(m.group(1)) - shift}", str(exc))
        raise ParseError(f"Turtle syntax error in a test case: {message}", where=where) from None


def scratch(triples: list[ox.Triple]) -> Store:
    """A store where ``triples`` are what the read sees: content of one active record, and
    record metadata on the records they name."""
    store = MemoryStore()
    home = source_iri("rule-check")  # where their metadata is, as a source's graph holds it
    quads = [ox.Quad(GIVEN, WB.status, WB.Active, home)]
    for t in triples:
        if t.predicate.value in METADATA_PREDICATES:
            quads.append(ox.Quad(t.subject, t.predicate, t.object, home))
            quads.append(ox.Quad(t.subject, WB.status, WB.Active, home))
        else:
            quads.append(ox.Quad(t.subject, t.predicate, t.object, GIVEN))
    store._db.extend(quads)
    return store


def run_case(rule: Rule, case: TestCase) -> CaseResult:
    where = f"{rule.file}: rule {rule.id}, test {case.name!r}"
    store = scratch(parse_turtle(case.given, where))
    engine = Engine(store, RuleSet((Rule(**{**rule.__dict__, "status": "active"}),)))

    def follows(t: ox.Triple) -> bool:
        return t.object in {f[2] for f in engine.solve(t.subject, t.predicate, t.object).found}  # type: ignore[arg-type]

    missing = [t for t in parse_turtle(case.expect, where) if not follows(t)]
    unwanted = [t for t in parse_turtle(case.expect_not, where) if follows(t)]
    return CaseResult(rule.label, case.name, tuple(map(str, missing)), tuple(map(str, unwanted)))


def run_tests(rules: RuleSet) -> list[CaseResult]:
    return [run_case(rule, case) for rule in rules.rules for case in rule.tests]
