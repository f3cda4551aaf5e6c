"""What the engine builds: recorded facts and derived steps (the proofs), and partial solutions.

A :class:`Fact` is a triple with the record that states it; a :class:`Step` is a conclusion with
the rule version, bindings and the supports of its premises. Proofs are compared by size, then by
a fixed textual key, so the same store and question always give the same proof.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

import pyoxigraph as ox

from workbench.values.rules import Node, Premise, Rule

Triple = tuple[Node, ox.NamedNode, Node]


@dataclass(frozen=True)
class Fact:
    """A recorded fact: the triple and the record (assertion) that states it."""

    triple: Triple
    record: ox.NamedNode

    size: ClassVar[int] = 1  # a recorded fact is a proof of one step

    @functools.cached_property
    def key(self) -> str:
        return f"{self.triple[0]} {self.triple[1]} {self.triple[2]} {self.record}"


@dataclass(frozen=True)
class Step:
    """A derived fact: the rule, its bindings, the premises' supports and the absences used."""

    triple: Triple
    rule: Rule
    bindings: tuple[tuple[str, Node], ...]
    premises: tuple[Fact | Step, ...]
    absences: tuple[tuple[Premise, tuple[tuple[str, Node], ...]], ...] = ()

    @functools.cached_property
    def size(self) -> int:
        return 1 + sum(p.size for p in self.premises)

    @functools.cached_property
    def key(self) -> str:
        return (
            f"{self.triple[0]} {self.triple[1]} {self.triple[2]} {self.rule.label}("
            + ";".join(p.key for p in self.premises)
            + ")"
        )

    def triples(self) -> Iterable[Triple]:
        for p in self.premises:
            yield p.triple
            if isinstance(p, Step):
                yield from p.triples()


Support = Fact | Step
# One recorded match of a lookup: the new bindings, and the facts (with premise positions) used.
Match = tuple[dict[str, Node], tuple[tuple[int, Support], ...]]


def better(a: Support, b: Support) -> bool:
    """Whether proof ``a`` is preferred: smaller, then by a fixed order (answers are stable)."""
    return (a.size, a.key) < (b.size, b.key)


@dataclass(slots=True)
class Row:
    """One partial solution: bindings, the supports of the premises so far (with their positions
    in the rule), and which sub-goal of a batch it answers."""

    vals: dict[str, Node]
    sup: tuple[tuple[int, Support], ...]
    tag: int = 0


@dataclass
class Result:
    """Conclusions for a goal, each with its best proof; ``incomplete`` if the depth bound cut."""

    found: dict[Triple, Support] = field(default_factory=dict)
    incomplete: bool = False
    queries: int = 0
