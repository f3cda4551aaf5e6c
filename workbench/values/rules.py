"""Rules as values: premises, filters, conclusions, test cases, and the rule set.

A rule body is a list of :class:`Premise` (triple patterns over recorded facts, possibly a ``*``
or ``+`` closure of one relation), SPARQL filter expressions, and ``FILTER NOT EXISTS`` groups.
Variables are :class:`Var`; the focus node is ``Var("this")``. Filter text already names
variables as the engine's queries do (``?v_name``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

from workbench.errors import NotFound
from workbench.vocab import WB

Node = ox.NamedNode | ox.Literal | ox.BlankNode

# Record metadata a rule may read as facts about a record (its scope, what it supersedes...).
# A premise with one of these predicates reads the record's metadata; any other reads content.
METADATA_PREDICATES = frozenset(
    p.value for p in (WB.appliesTo, WB.supersedes, WB.decidedBy, WB.recordType, WB.about, WB.supportedBy)
)


@dataclass(frozen=True)
class Var:
    name: str

    def __str__(self) -> str:
        return f"?v_{self.name}"


THIS = Var("this")
Slot = Node | Var


@dataclass(frozen=True)
class Closure:
    """``p*`` (min_len 0) or ``p+`` (min_len 1) over one relation, recorded facts only."""

    predicate: ox.NamedNode
    min_len: int

    def __str__(self) -> str:
        return f"{self.predicate}{'*' if self.min_len == 0 else '+'}"


@dataclass(frozen=True)
class Premise:
    s: Slot
    p: ox.NamedNode | Var | Closure
    o: Slot
    index: int = 0  # position in the rule, for showing premises in the order written; -1 = target
    # Worked out once: a question's lookups, tables and plans ask them dozens of times.
    _hash: int = field(init=False, repr=False, compare=False)
    _vars: frozenset[str] = field(init=False, repr=False, compare=False)
    _metadata: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.s, self.p, self.o, self.index)))
        object.__setattr__(self, "_vars", frozenset(t.name for t in (self.s, self.p, self.o) if isinstance(t, Var)))
        object.__setattr__(self, "_metadata", isinstance(self.p, ox.NamedNode) and self.p.value in METADATA_PREDICATES)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type, tuple[Slot, ox.NamedNode | Var | Closure, Slot, int]]:
        return Premise, (self.s, self.p, self.o, self.index)  # worked out again where it lands

    def vars(self) -> frozenset[str]:
        return self._vars

    @property
    def metadata(self) -> bool:
        """Whether the premise reads a record's metadata (:data:`METADATA_PREDICATES`), not content."""
        return self._metadata

    def __str__(self) -> str:
        return f"{self.s} {self.p} {self.o}"


@dataclass(frozen=True)
class Filter:
    sparql: str  # a SPARQL expression over ?v_ variables
    vars: frozenset[str]
    # For FILTER(?v IN (<iri>, ...)): (v, the IRIs), so the engine can check it without a query.
    domain: tuple[str, frozenset[str]] | None = None


@dataclass(frozen=True)
class NotExists:
    """What must not be recorded; ``vars`` are the rule variables it shares with the body."""

    premises: tuple[Premise, ...]
    vars: frozenset[str]
    filters: tuple[str, ...] = ()


@dataclass(frozen=True)
class TestCase:
    name: str
    given: str  # Turtle
    expect: str = ""
    expect_not: str = ""


@dataclass(frozen=True)
class Rule:
    """One version of a rule, as loaded and checked."""

    iri: str
    id: str
    version: int
    author: str
    reading: str
    status: str  # "active" | "draft" | "retired"
    kind: str  # "sparql" | "triple"
    head: tuple[Premise, ...]
    body: tuple[Premise, ...]
    filters: tuple[Filter, ...] = ()
    absences: tuple[NotExists, ...] = ()
    # Predicates the conclusion may have (None: any); a head with a variable predicate must
    # restrict it with FILTER(?p IN (...)).
    concludes: frozenset[str] | None = None
    # Variables a FILTER(?v IN (...)) restricts to a set of IRIs: (name, IRIs).
    domains: tuple[tuple[str, frozenset[str]], ...] = ()
    # (P, Q) when the rule only extends P along Q: "X P Z <- X P Y . Y Q+ Z" (or Q*).
    extends: tuple[str, str] | None = None
    # Premises "X P ?k" whose ?k serves only as the start of a Q closure: (premise index, P, Q).
    # A rule that extends P along Q adds nothing there (the closure walks those steps anyway).
    fed: tuple[tuple[int, str, str], ...] = ()
    text: str = ""  # the sh:construct query, or the triple rule spelled out
    file: str = ""
    tests: tuple[TestCase, ...] = ()

    def domain(self, name: str) -> frozenset[str] | None:
        return dict(self.domains).get(name)

    def redundant_for(self, premise: Premise, other: Rule) -> bool:
        """Whether applying ``other`` to this rule's ``premise`` can add nothing (see ``fed``)."""
        return other.extends is not None and any(i == premise.index and (p, q) == other.extends for i, p, q in self.fed)

    @property
    def label(self) -> str:
        return f"{self.id} v{self.version}"


@dataclass(frozen=True)
class RuleSet:
    """The rules in use. ``derivable`` tells whether a premise could be concluded by a rule."""

    rules: tuple[Rule, ...] = field(default=())
    # What is worked out from these rules alone (which rules conclude a premise, which premise
    # the engine takes next), kept with them: they never change.
    plans: dict[tuple[object, ...], Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def active(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.status == "active")

    def concluding_premise(self, parent: Rule | None, p: Premise) -> list[Rule]:
        """The rules that could conclude premise ``p`` of rule ``parent`` (of a goal: None),
        those that could add nothing there left out (:meth:`Rule.redundant_for`)."""
        key = ("concluding", parent.iri if parent else "", p)
        found: list[Rule] | None = self.plans.get(key)
        if found is None:
            allowed = parent.domain(p.p.name) if parent and isinstance(p.p, Var) else None
            found = [r for r in self.concluding(p.p, allowed) if parent is None or not parent.redundant_for(p, r)]
            self.plans[key] = found
        return found

    def derivable(self, rule: Rule, p: Premise) -> bool:
        """Whether premise ``p`` of ``rule`` could be concluded by a rule (a closure or a
        record's metadata never is)."""
        return not isinstance(p.p, Closure) and not p.metadata and bool(self.concluding_premise(rule, p))

    def get(self, rule_id: str) -> Rule:
        found = [r for r in self.rules if r.id == rule_id]
        if not found:
            raise NotFound(f"no rule {rule_id!r}; rules: {', '.join(sorted({r.id for r in self.rules}))}")
        return max(found, key=lambda r: r.version)

    def concluding(self, p: ox.NamedNode | Var | Closure, allowed: frozenset[str] | None = None) -> list[Rule]:
        """Active rules whose conclusion could have predicate ``p`` (a variable restricted to
        ``allowed``, or anything)."""
        out = []
        for rule in self.active():
            for h in rule.head:
                hp = h.p
                if isinstance(hp, ox.NamedNode):
                    heads: frozenset[str] | None = frozenset({hp.value})
                else:
                    heads = rule.concludes
                if isinstance(p, ox.NamedNode):
                    ok = heads is None or p.value in heads
                elif isinstance(p, Var):
                    ok = heads is None or allowed is None or bool(heads & allowed)
                else:
                    ok = heads is None or p.predicate.value in heads
                if ok:
                    out.append(rule)
                    break
        return out
