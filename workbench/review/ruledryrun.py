"""Dry run of a rule version: what it would derive on the current store, against the version in use.

A reviewer signs off a rule having seen its effect: the conclusions it adds and removes (counts,
and samples with their proofs), and any conclusion a recorded negative fact says is not so.
Nothing is written: conclusions are computed, compared and shown.

How: the goal-directed engine answers ``subject predicate ?`` questions; it needs a subject, so
the subjects come first. For each rule conclusion the change could affect (the rule's own, and
those of rules reading what it concludes, transitively), the candidate subjects are the nodes
that can fill the conclusion's subject in one of the rule's premises: recorded facts with that
premise's predicate, plus whatever other rules could conclude there (followed the same way,
with a guard against cycles). Each candidate is then asked every affected predicate twice, with
the rules in use and with the candidate version in place of its rule, each in a fresh engine.
That is correct for every subject a conclusion could have, and costs 2 x subjects x predicates
questions (each a few SELECTs): a second for a few hundred subjects, minutes for 100k.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

from workbench.answers.proofs import Prover
from workbench.ids import id_from_iri
from workbench.records import effective, meta
from workbench.review.rulebook import with_version
from workbench.rules.engine import Engine
from workbench.rules.proof import Fact, Step, Support
from workbench.store import Store
from workbench.values.answers import Derived
from workbench.values.rules import Closure, Node, Premise, Rule, RuleSet, Var
from workbench.values.words import proof_lines, source
from workbench.vocab import PREFIXES

Triple = tuple[Node, ox.NamedNode, Node]
SAMPLES = 10


@dataclass(frozen=True)
class Conclusion:
    """A derived triple, in N-Triples and in words, with its proof as text."""

    triple: tuple[str, str, str]
    text: str
    proof: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"triple": list(self.triple), "text": self.text, "proof": list(self.proof)}


@dataclass(frozen=True)
class Contradiction:
    """A conclusion the candidate version draws that a recorded negative fact says is not so."""

    conclusion: Conclusion
    record: str
    said: str  # the negative fact's source, in words
    new: bool  # drawn only with the candidate version (not by the rules in use)

    def to_json(self) -> dict[str, Any]:
        return {**self.conclusion.to_json(), "record": self.record, "said": self.said, "new": self.new}


@dataclass(frozen=True)
class DryRun:
    rule: str  # the candidate, "id vN"
    against: str | None  # the version in use, if any
    predicates: tuple[str, ...]
    subjects: int
    before: int
    after: int
    added: tuple[Conclusion, ...]  # samples
    removed: tuple[Conclusion, ...]
    added_count: int
    removed_count: int
    contradictions: tuple[Contradiction, ...] = ()
    incomplete: bool = False
    questions: int = field(default=0, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "against": self.against, "predicates": list(self.predicates),
            "subjects": self.subjects, "questions": self.questions,
            "counts": {"before": self.before, "after": self.after, "added": self.added_count,
                       "removed": self.removed_count},
            "added": [c.to_json() for c in self.added], "removed": [c.to_json() for c in self.removed],
            "contradictions": [c.to_json() for c in self.contradictions], "incomplete": self.incomplete,
        }

    def text(self) -> str:
        against = f"against {self.against} (in use)" if self.against else "against no version in use"
        lines = [
            f"dry run of {self.rule} {against}: {self.subjects} subject(s), {self.questions} question(s)",
            f"conclusions: {self.before} before, {self.after} after; {self.added_count} added, "
            f"{self.removed_count} removed",
        ]
        for title, mark, items, n in (("added", "+", self.added, self.added_count),
                                      ("removed", "-", self.removed, self.removed_count)):
            if items:
                lines.append(f"{title} ({len(items)} of {n} shown):")
                for c in items:
                    lines.append(f"  {mark} {c.text}")
                    lines += [f"    {line}" for line in c.proof]
        if self.contradictions:
            lines.append(f"contradicts recorded negative facts ({len(self.contradictions)}):")
            for x in self.contradictions:
                lines.append(f"  ! {x.conclusion.text}" + (" (new)" if x.new else " (also drawn today)")
                             + f": record {x.record} says it is not so ({x.said})")
        if self.incomplete:
            lines.append("incomplete: the depth bound was reached; there may be more")
        return "\n".join(lines)


def dry_run(store: Store, current: RuleSet, candidate: Rule, *, samples: int = SAMPLES) -> DryRun:
    """What ``candidate`` would derive in place of its rule in ``current`` (the rules in use)."""
    new = with_version(current, candidate)
    in_use = [r for r in current.active() if r.id == candidate.id]
    both = RuleSet(tuple({(r.iri, r.version): r for r in (*current.active(), *new.active())}.values()))
    heads = frozenset().union(*(r.concludes or frozenset() for r in (*in_use, candidate)))
    preds = _affected(both, heads)
    finder = _Subjects(store, both)
    goals: dict[ox.NamedNode, set[str]] = {}
    finder.changed = True
    while finder.changed:  # rules that feed each other: until no slot finds more (a fixpoint)
        finder.changed = False
        for r in both.active():
            wanted = (r.concludes or frozenset()) & preds
            for h in r.head if wanted else ():
                for s in finder.slot(r, h.s):
                    goals.setdefault(s, set()).update(wanted)
    before: dict[Triple, Support] = {}
    after: dict[Triple, Support] = {}
    incomplete, questions = False, 0
    for s in sorted(goals, key=str):
        for p in sorted(goals[s]):
            for rules, into in ((current, before), (new, after)):
                engine = Engine(store, rules)
                found = engine.solve(s, ox.NamedNode(p))
                incomplete = incomplete or engine.incomplete
                questions += 1
                into.update({t: sup for t, sup in found.found.items() if isinstance(sup, Step)})
    added = sorted(set(after) - set(before), key=_key)
    removed = sorted(set(before) - set(after), key=_key)
    negatives = _negatives(store, preds)
    clash = [t for t in sorted(after, key=_key) if t in negatives]
    shown_after = [*added[:samples], *clash]
    new_words = Prover(store, [after[t] for t in shown_after] + [negatives[t] for t in clash])
    old_words = Prover(store, [before[t] for t in removed[:samples]])
    return DryRun(
        rule=candidate.label,
        against=in_use[0].label if in_use else None,
        predicates=tuple(sorted(preds)),
        subjects=len(goals),
        before=len(before),
        after=len(after),
        added=tuple(_conclusion(new_words, after[t]) for t in added[:samples]),
        removed=tuple(_conclusion(old_words, before[t]) for t in removed[:samples]),
        added_count=len(added),
        removed_count=len(removed),
        contradictions=tuple(_contradiction(new_words, after[t], negatives[t], t in set(added)) for t in clash),
        incomplete=incomplete,
        questions=questions,
    )


def _key(t: Triple) -> str:
    return " ".join(map(str, t))


def _conclusion(prover: Prover, support: Support) -> Conclusion:
    proof = prover.proof(support)
    assert isinstance(proof, Derived)
    s = proof.statement
    return Conclusion((s.subject, s.predicate, s.object), s.text, tuple(proof_lines(proof)))


def _contradiction(prover: Prover, support: Support, negative: Fact, new: bool) -> Contradiction:
    said = prover.proof(negative)
    return Contradiction(_conclusion(prover, support), id_from_iri(negative.record),
                         source(said) if not isinstance(said, Derived) else "", new)


def _affected(rules: RuleSet, start: frozenset[str]) -> frozenset[str]:
    """The predicates a change to conclusions of ``start`` can reach: those, and what every rule
    reading one of them concludes, transitively."""
    preds = set(start)
    grown = True
    while grown:
        grown = False
        for r in rules.active():
            reads = any(_reads(r, p, preds) for p in r.body)
            more = (r.concludes or frozenset()) - preds
            if reads and more:
                preds |= more
                grown = True
    return frozenset(preds)


def _reads(rule: Rule, p: Premise, preds: set[str]) -> bool:
    if isinstance(p.p, Closure) or p.metadata:
        return False  # closures and record metadata read recorded facts only
    if isinstance(p.p, ox.NamedNode):
        return p.p.value in preds
    domain = rule.domain(p.p.name)
    return domain is None or bool(domain & preds)


def _negatives(store: Store, preds: Iterable[str]) -> dict[Triple, Fact]:
    """Recorded negative facts (owl:NegativePropertyAssertion in active records) about these
    predicates, by the triple they deny."""
    values = " ".join(f"<{p}>" for p in sorted(preds))
    if not values:
        return {}
    rows = store.select(PREFIXES + f"""SELECT ?s ?p ?o ?g WHERE {{ VALUES ?p {{ {values} }}
        GRAPH ?g {{ ?n a owl:NegativePropertyAssertion ; owl:sourceIndividual ?s ; owl:assertionProperty ?p .
            {{ ?n owl:targetIndividual ?o }} UNION {{ ?n owl:targetValue ?o }} }}
        {effective("?g")} }}""")
    out: dict[Triple, Fact] = {}
    for r in sorted(rows, key=lambda r: (str(r["s"]), str(r["p"]), str(r["o"]), str(r["g"]))):
        t = (r["s"], r["p"], r["o"])
        out.setdefault(t, Fact(t, r["g"]))  # type: ignore[arg-type]
    return out


class _Subjects:
    """The nodes that can fill a slot of a rule: from one premise that mentions it, recorded
    facts in that position plus what rules could conclude there."""

    def __init__(self, store: Store, rules: RuleSet) -> None:
        self.store = store
        self.rules = rules
        self._seen: dict[tuple[str, int, int, str], set[ox.NamedNode]] = {}  # what each head slot may hold
        self._active: set[tuple[str, int, int, str]] = set()
        self._queried: dict[tuple[str, str, bool], set[ox.NamedNode]] = {}
        self._everything: set[ox.NamedNode] | None = None
        self.changed = False

    def slot(self, rule: Rule, slot: object) -> set[ox.NamedNode]:
        if not isinstance(slot, Var):
            return {slot} if isinstance(slot, ox.NamedNode) else set()
        premise = self._premise(rule, slot)
        if premise is None:
            return self.everything()
        pos = "s" if premise.s == slot else "o"
        if isinstance(premise.p, Closure):
            return self._recorded(premise.p.predicate, pos, metadata=False)
        if isinstance(premise.p, Var):
            domain = rule.domain(premise.p.name)
            out: set[ox.NamedNode] = set()
            for p in sorted(domain) if domain is not None else [None]:
                out |= self._at(ox.NamedNode(p) if p else None, pos)
            return out
        if premise.metadata:
            return self._recorded(premise.p, pos, metadata=True)
        return self._at(premise.p, pos)

    def _premise(self, rule: Rule, slot: Var) -> Premise | None:
        """A premise with ``slot`` at subject or object: a plain relation first, then a
        non-empty closure or a variable relation (a ``p*`` closure binds anything)."""
        def rank(p: Premise) -> int:
            if isinstance(p.p, ox.NamedNode):
                return 0
            if isinstance(p.p, Closure):
                return 1 if p.p.min_len > 0 else 9
            return 2
        found = sorted((p for p in rule.body if slot in (p.s, p.o) and p.s != p.o), key=lambda p: (rank(p), p.index))
        return found[0] if found and rank(found[0]) < 9 else None

    def _at(self, p: ox.NamedNode | None, pos: str) -> set[ox.NamedNode]:
        """Nodes at ``pos`` of a ``p`` fact (any predicate for None): recorded or concluded."""
        out = self._recorded(p, pos, metadata=False)
        for r in self.rules.concluding(p if p is not None else Var("p")):
            for i, h in enumerate(r.head):
                if p is not None and isinstance(h.p, ox.NamedNode) and h.p != p:
                    continue
                key = (r.iri, r.version, i, pos)
                if key in self._active:  # a cycle: what is known so far; the caller repeats until a fixpoint
                    out |= self._seen.get(key, set())
                    continue
                self._active.add(key)
                try:
                    found = self.slot(r, h.s if pos == "s" else h.o)
                finally:
                    self._active.discard(key)
                known = self._seen.get(key, set())
                if not found <= known:
                    self._seen[key] = known | found
                    self.changed = True
                out |= self._seen.get(key, set())
        return out

    def _recorded(self, p: ox.NamedNode | None, pos: str, *, metadata: bool) -> set[ox.NamedNode]:
        key = (str(p), pos, metadata)
        if key not in self._queried:
            self._queried[key] = self._query(p, pos, metadata=metadata)
        return self._queried[key]

    def _query(self, p: ox.NamedNode | None, pos: str, *, metadata: bool) -> set[ox.NamedNode]:
        pred = str(p) if p is not None else "?p"
        triple = f"?x {pred} ?y" if pos == "s" else f"?y {pred} ?x"
        if metadata:
            record = "?x" if pos == "s" else "?y"
            where = f"{meta(record, triple)} {effective(record)}"
        else:
            where = f"GRAPH ?g {{ {triple} }} {effective('?g')}"
        rows = self.store.select(PREFIXES + f"SELECT DISTINCT ?x WHERE {{ {where} FILTER(isIRI(?x)) }}")
        return {r["x"] for r in rows if isinstance(r["x"], ox.NamedNode)}

    def everything(self) -> set[ox.NamedNode]:
        if self._everything is None:
            self._everything = self._recorded(None, "s", metadata=False) | self._recorded(None, "o", metadata=False)
        return self._everything
