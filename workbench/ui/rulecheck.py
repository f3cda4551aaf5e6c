"""Checking a rule's Turtle in the browser before it is proposed, and the texts around it.

The checks are the service's own: the Turtle is parsed by pyoxigraph, then loaded by the same
loader ``workbench rules check`` and ``rules propose`` use (:func:`workbench.review.rulebook.parse_text`:
shape, allowed constructs, SPARQL syntax, relations rules may conclude), and its test cases run
in a scratch in-memory store through the answering engine (:func:`workbench.rules.check.run_tests`).
Nothing here opens the store: the relations rules may conclude come from the server
(``Client.relations``). Every problem carries the line and column in the
editor's text where one is known (a SPARQL error inside ``sh:construct`` is moved to the file's lines).

>>> locate("x\\nsh:construct '''\\nCONSTRUCT {} WHERE {}\\nFOO''' .",
...        "SPARQL syntax error in sh:construct, line 3, column 1: no")
(4, 1)
>>> locate("", "Turtle syntax error: Parser error at line 15 column 25: x is not a valid predicate")
(15, 25)
>>> print(next_version('rule:r-v1 a sh:SPARQLRule ; dcterms:identifier "r" ; wb:ruleVersion 1 ;\\n'
...                    '  dcterms:creator "ann" ; wb:ruleStatus wb:Active .', "r", 1, 2, "cora"))
rule:r-v2 a sh:SPARQLRule ; dcterms:identifier "r" ; wb:ruleVersion 2 ;
  dcterms:creator "cora" ; wb:ruleStatus wb:Draft .
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyoxigraph as ox

from workbench.errors import WorkbenchError
from workbench.review.rulebook import parse_text
from workbench.rules.check import CaseResult, run_tests
from workbench.values.rules import Rule, RuleSet

_TURTLE_AT = re.compile(r"line (\d+),? (?:column|between columns) (\d+)")
_SPARQL_AT = re.compile(r"sh:construct, line (\d+), column (\d+)")
_CONSTRUCT = re.compile(r"sh:construct\s+(\"\"\"|'''|\"|')")

# A new rule, for the editor's "new rule" button: every part the loader asks for, to fill in.
TEMPLATE = '''@prefix sh:      <http://www.w3.org/ns/shacl#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix wb:      <https://w3id.org/workbench/ns#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix rule:    <urn:wb:rule:> .

rule:my-rule a sh:NodeShape ;
    sh:targetSubjectsOf wb:owns ;
    sh:rule rule:my-rule-v1 .

rule:my-rule-v1 a sh:SPARQLRule ;
    dcterms:identifier "my-rule" ;
    wb:ruleVersion 1 ;
    dcterms:creator "{author}" ;
    wb:ruleStatus wb:Draft ;
    wb:reading "If X owns Y, and Y needs Z, then X needs Z." ;
    sh:construct """
PREFIX wb: <https://w3id.org/workbench/ns#>
CONSTRUCT {{ $this wb:needs ?z }}
WHERE {{ $this wb:owns ?y . ?y wb:needs ?z . }}""" ;
    wb:testCase [
        rdfs:label "an owner needs what their things need" ;
        wb:given """e:ann wb:owns e:car . e:car wb:needs e:fuel .""" ;
        wb:expect """e:ann wb:needs e:fuel .""" ;
        wb:expectNot """e:car wb:needs e:ann .""" ] .
'''


@dataclass(frozen=True)
class Problem:
    """What is wrong with the text, and where (1-based line and column) when known."""

    message: str
    line: int | None = None
    column: int | None = None

    @property
    def at(self) -> str:
        if self.line is None:
            return ""
        return f"line {self.line}" + (f", column {self.column}" if self.column is not None else "")


@dataclass(frozen=True)
class Checked:
    """The rules the text holds (when it loads) and what is wrong with it."""

    rules: tuple[Rule, ...] = ()
    problems: tuple[Problem, ...] = ()
    cases: tuple[CaseResult, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.problems and all(c.passed for c in self.cases)


def locate(text: str, message: str) -> tuple[int, int] | None:
    """The line and column (1-based, in ``text``) a loader message points at."""
    found = _SPARQL_AT.search(message)
    if found:
        line, column = int(found.group(1)), int(found.group(2))
        opening = _CONSTRUCT.search(text)
        if opening is None:
            return line, column
        start = opening.end()
        first_line = text.count("\n", 0, start) + 1
        first_column = start - (text.rfind("\n", 0, start) + 1) + 1
        return first_line + line - 1, (first_column + column - 1 if line == 1 else column)
    found = _TURTLE_AT.search(message)
    return (int(found.group(1)), int(found.group(2))) if found else None


def check(text: str, known: frozenset[str], *, tests: bool = True) -> Checked:
    """Parse and load ``text`` as a rule file, then (``tests``) run its test cases."""
    if not text.strip():
        return Checked(problems=(Problem("the editor is empty: write a rule, or load one"),))
    try:
        list(ox.parse(text, format=ox.RdfFormat.TURTLE))
    except SyntaxError as exc:
        message = re.sub(r"^Parser error at line \d+ (column|between columns) \d+( and \d+)?: ", "", str(exc))
        return Checked(problems=(Problem(f"Turtle syntax error: {message}", exc.lineno, exc.offset),))
    try:
        rules = parse_text(text, "editor", known)
    except WorkbenchError as exc:
        where = locate(text, exc.message)
        named = (exc.where or "").removeprefix("editor: ").removeprefix("editor")
        words = f"{named}: {exc.message}" if named else exc.message
        return Checked(problems=(Problem(words, *(where or (None, None))),))
    if not tests:
        return Checked(rules)
    try:
        cases = tuple(run_tests(RuleSet(rules)))
    except WorkbenchError as exc:
        case = (exc.where or "").removeprefix("editor: ").removeprefix("editor")
        return Checked(rules, (Problem(f"{case}: {exc.message}" if case else exc.message),))
    return Checked(rules, (), cases)


def gutter_marks(problems: Sequence[Problem]) -> list[dict[str, object]]:
    """Problems as the editor's gutter marks (Ace counts rows and columns from 0)."""
    return [{"row": p.line - 1, "column": (p.column or 1) - 1, "type": "error", "text": p.message}
            for p in problems if p.line is not None]


def next_version(text: str, rule_id: str, old: int, new: int, author: str) -> str:
    """``text`` as the start of version ``new`` of ``rule_id``: its version number, its rule node
    (``...-v{old}`` becomes ``...-v{new}``), its author (whoever edits it) and a draft status."""
    out = re.sub(r"(wb:ruleVersion\s+)\d+", rf"\g<1>{new}", text, count=1)
    out = re.sub(rf"({re.escape(rule_id)}-v){old}\b", rf"\g<1>{new}", out)
    out = re.sub(r'(dcterms:creator\s+)"[^"\n]*"', lambda m: m.group(1) + json.dumps(author), out, count=1)
    return re.sub(r"(wb:ruleStatus\s+)wb:[A-Za-z]+", r"\1wb:Draft", out, count=1)


def diff(before: str, after: str, before_name: str, after_name: str) -> str:
    """A unified diff of two rule texts (empty when they say the same)."""
    def lines(text: str) -> list[str]:
        return (text if text.endswith("\n") else text + "\n").splitlines(keepends=True) if text else []

    return "".join(difflib.unified_diff(lines(before), lines(after), fromfile=before_name, tofile=after_name))
