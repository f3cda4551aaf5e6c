"""Answers: every one says its tier and carries its evidence. No bare values.

An :class:`Answer` holds findings; each :class:`Finding` is a value with its proofs. A proof is
either a :class:`Recorded` leaf (a record and its source: who said it, where, when) or a
:class:`Derived` node (a rule id and version, the bindings, and premises that are themselves
recorded leaves or derived nodes, plus any :class:`Absence` a ``FILTER NOT EXISTS`` relied on).

``to_json()`` is stable: the same store and question give byte-identical JSON (keys sorted by
the caller's serialiser, every list in a fixed order).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from workbench.values.guesses import Guess
from workbench.values.records import Source


class Tier(enum.Enum):
    """Where an answer's knowledge comes from, or why there is none."""

    RECORDED = "recorded"
    DERIVED = "derived"
    GUESSED = "guessed"
    NO_EVIDENCE = "no_evidence"
    AMBIGUOUS = "ambiguous"
    CONFLICTING = "conflicting"
    UNKNOWN_ENTITY = "unknown_entity"


@dataclass(frozen=True)
class Statement:
    """One triple: its terms in N-Triples form (for machines) and in words (for people)."""

    subject: str
    predicate: str
    object: str
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"subject": self.subject, "predicate": self.predicate, "object": self.object, "text": self.text}


@dataclass(frozen=True)
class Recorded:
    """A premise or answer that a record states: the record and where it came from."""

    statement: Statement
    record: str
    record_type: str
    status: str
    source: Source
    admitted: bool = False
    effective_from: str | None = None
    created_at: str = ""

    def to_json(self) -> dict[str, Any]:
        src = self.source
        return {
            "kind": "recorded",
            "statement": self.statement.to_json(),
            "record": self.record,
            "record_type": self.record_type,
            "status": self.status,
            "admitted": self.admitted,
            "effective_from": self.effective_from,
            "created_at": self.created_at,
            "source": {"id": src.id, "said_by": src.said_by, "captured_at": src.captured_at, "locator": src.locator},
        }


@dataclass(frozen=True)
class Absence:
    """What a rule relied on not being recorded (``FILTER NOT EXISTS``), instantiated."""

    pattern: str
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": "absence", "pattern": self.pattern, "text": self.text}


@dataclass(frozen=True)
class Derived:
    """A conclusion, the rule version that drew it, and its premises."""

    statement: Statement
    rule: str
    version: int
    reading: str
    bindings: tuple[tuple[str, str], ...]
    premises: tuple[Recorded | Derived, ...]
    absences: tuple[Absence, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "derived",
            "statement": self.statement.to_json(),
            "rule": self.rule,
            "version": self.version,
            "reading": self.reading,
            "bindings": dict(self.bindings),
            "premises": [p.to_json() for p in self.premises],
            "absences": [a.to_json() for a in self.absences],
        }

    def leaves(self) -> list[Recorded]:
        """Every recorded fact the proof rests on, depth first."""
        out: list[Recorded] = []
        for p in self.premises:
            out.extend(p.leaves() if isinstance(p, Derived) else [p])
        return out

    def conclusions(self) -> list[Statement]:
        """This conclusion and every derived conclusion below it."""
        out = [self.statement]
        for p in self.premises:
            if isinstance(p, Derived):
                out.extend(p.conclusions())
        return out


Proof = Recorded | Derived


@dataclass(frozen=True)
class Finding:
    """One value of an answer with its proofs. ``value`` is machine-readable (an N-Triples term
    or a plain number), ``label`` is what people read; ``details`` are (what, value) pairs, such
    as who decided a decision or why it superseded another. ``negated`` marks a value a recorded
    negative fact says does not hold."""

    value: str
    label: str
    proofs: tuple[Proof, ...] = ()
    note: str = ""
    details: tuple[tuple[str, str], ...] = ()
    negated: bool = False  # a record says this value does NOT hold

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "label": self.label,
            "negated": self.negated,
            "note": self.note,
            "details": [{"what": k, "value": v} for k, v in self.details],
            "proofs": [p.to_json() for p in self.proofs],
        }


@dataclass(frozen=True)
class Answer:
    """The answer to one question: its tier, a one-line summary, and the findings behind it.

    ``count`` and ``undated`` are set by counting questions (``at_least`` when undated events
    could not be placed), ``history`` by current-state and decision questions, ``candidates``
    by an ambiguous name. ``incomplete`` says the depth bound was hit: there may be more.
    ``guesses`` (tier ``guessed`` only) are ranked model guesses, apart from the findings.
    """

    kind: str  # "ask" | "count" | "current" | "decision"
    question: str
    tier: Tier
    summary: str
    findings: tuple[Finding, ...] = ()
    as_of: str | None = None
    count: int | None = None
    at_least: bool = False
    undated: tuple[Finding, ...] = ()
    history: tuple[Finding, ...] = ()
    candidates: tuple[str, ...] = ()
    incomplete: bool = False
    params: tuple[tuple[str, str], ...] = field(default=())
    guesses: tuple[Guess, ...] = ()  # model guesses for a gap: never values, never facts

    @property
    def values(self) -> list[str]:
        """The values that hold (a value a record says does not hold is a finding, not a value)."""
        return [f.label for f in self.findings if not f.negated]

    def to_json(self) -> dict[str, Any]:
        return {
            "tier": self.tier.value,
            "kind": self.kind,
            "question": self.question,
            "params": dict(self.params),
            "summary": self.summary,
            "as_of": self.as_of,
            "values": self.values,
            "findings": [f.to_json() for f in self.findings],
            "count": self.count,
            "at_least": self.at_least,
            "undated": [f.to_json() for f in self.undated],
            "history": [f.to_json() for f in self.history],
            "candidates": list(self.candidates),
            "incomplete": self.incomplete,
            "guesses": [g.to_json() for g in self.guesses],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Answer:
        """An answer back from :meth:`to_json` (as the JSON API sends it): ``from_json(a.to_json())``
        gives an answer whose ``to_json()`` is equal."""
        return cls(
            kind=data["kind"], question=data["question"], tier=Tier(data["tier"]), summary=data["summary"],
            findings=tuple(_finding(f) for f in data["findings"]), as_of=data["as_of"], count=data["count"],
            at_least=data["at_least"], undated=tuple(_finding(f) for f in data["undated"]),
            history=tuple(_finding(f) for f in data["history"]), candidates=tuple(data["candidates"]),
            incomplete=data["incomplete"], params=tuple(data["params"].items()),
            guesses=tuple(Guess(g["value"], g["score"], tuple(g["because"]), g["label"], g.get("chance"),
                                g.get("model", "")) for g in data["guesses"]),
        )

    def text(self) -> str:
        """The answer in words, with its reasons (see :mod:`workbench.values.words`)."""
        from workbench.values.words import render

        return render(self)

    def _repr_html_(self) -> str:
        """Jupyter's rich view: the tier as a label, the proof tree as nested lists, model guesses
        apart (:mod:`workbench.presentation.notebook`)."""
        from workbench.presentation.notebook import answer_html

        return answer_html(self)


def _statement(d: dict[str, Any]) -> Statement:
    return Statement(d["subject"], d["predicate"], d["object"], d["text"])


def _proof(d: dict[str, Any]) -> Proof:
    if d["kind"] == "derived":
        return Derived(
            statement=_statement(d["statement"]), rule=d["rule"], version=d["version"], reading=d["reading"],
            bindings=tuple(d["bindings"].items()), premises=tuple(_proof(p) for p in d["premises"]),
            absences=tuple(Absence(a["pattern"], a["text"]) for a in d["absences"]),
        )
    src = d["source"]
    return Recorded(
        statement=_statement(d["statement"]), record=d["record"], record_type=d["record_type"], status=d["status"],
        source=Source(src["id"], src["said_by"], src["captured_at"], src["locator"]), admitted=d["admitted"],
        effective_from=d["effective_from"], created_at=d["created_at"],
    )


def _finding(d: dict[str, Any]) -> Finding:
    return Finding(value=d["value"], label=d["label"], proofs=tuple(_proof(p) for p in d["proofs"]), note=d["note"],
                   details=tuple((x["what"], x["value"]) for x in d["details"]), negated=d["negated"])
