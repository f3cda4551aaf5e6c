"""Counting events: how many things of a kind happened, in a period, tied to someone.

Plain SPARQL and arithmetic, no rules and no model: an event is a thing an event record types as
the kind (or a kind below it, found by the engine's walk over recorded subclass edges), and it
counts once however many records mention it.
An event without a date cannot be placed in a period, so a count over a period that meets
undated events is a lower bound ("at least"), never silently exact; and a zero count is no
evidence, never proof that nothing happened.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field

import pyoxigraph as ox

from workbench.answers.evidence import Triple, describe
from workbench.records import effective, meta
from workbench.rules.engine import Engine
from workbench.store import Store
from workbench.store.base import truth
from workbench.values.answers import Answer, Finding, Recorded, Tier
from workbench.values.rules import RuleSet
from workbench.vocab import PREFIXES, RDF, RDFS, WB

Fact = tuple[Triple, ox.NamedNode]  # a triple and the record that states it


@dataclass
class _Event:
    """What the records say about one event: the facts that place it and the days they give."""

    node: ox.NamedNode | ox.BlankNode
    types: set[Fact] = field(default_factory=set)
    ties: set[Fact] = field(default_factory=set)
    about_ties: set[Fact] = field(default_factory=set)  # (record wb:about X): used when no content tie
    days: set[datetime.date] = field(default_factory=set)


def _values(terms: Iterable[object]) -> str:
    return " ".join(sorted({str(t) for t in terms}))


def _day(term: object) -> datetime.date | None:
    """The day of an xsd:date or xsd:dateTime; a time of day never moves an event to another day."""
    if not isinstance(term, ox.Literal):
        return None
    try:
        return datetime.date.fromisoformat(term.value[:10])
    except ValueError:
        return None


def sub_kinds(store: Store, kind: ox.NamedNode, as_of: str | None) -> dict[ox.NamedNode, list[Fact]]:
    """``kind`` and every kind below it, each with the subclass edges from it up to ``kind``
    (none for ``kind`` itself): the engine's walk, over the edges the read sees."""
    walked = Engine(store, RuleSet(), as_of=as_of).walk(RDFS.subClassOf, {kind}, forward=False)[kind]
    return {
        k: [((f.triple[0], f.triple[1], f.triple[2]), f.record) for f in reversed(chain)]
        for k, chain in walked.items()
        if isinstance(k, ox.NamedNode)
    }


def _events(store: Store, kinds: Iterable[ox.NamedNode], about: ox.NamedNode | None, as_of: str | None) -> list[_Event]:
    """Events typed one of ``kinds`` in event records the read sees, tied to ``about`` if given:
    one query, a branch for the events and their types, one for ``about``'s facts about them."""
    event = "?r wb:recordType wb:Event . OPTIONAL { ?r wb:effectiveFrom ?ef }"
    typed = f"VALUES ?k {{ {_values(kinds)} }}"
    tied = f"BIND(EXISTS {{ ?r wb:about {about} }} AS ?tied)" if about is not None else ""
    ties = "" if about is None else f"""UNION {{ {typed} GRAPH ?t {{ ?e rdf:type ?k }}
            {meta('?t', '?t wb:recordType wb:Event .')} {effective('?t', as_of=as_of)}
            GRAPH ?r {{ {about} ?p ?e }} {meta('?r', event)} {effective('?r', as_of=as_of)} }}"""
    rows = store.select(
        PREFIXES
        + f"""SELECT DISTINCT ?e ?k ?r ?ef ?tied ?p WHERE {{
            {{ {typed} GRAPH ?r {{ ?e rdf:type ?k }} {meta('?r', event + ' ' + tied)} {effective('?r', as_of=as_of)} }}
            {ties} }}"""
    )
    events: dict[str, _Event] = {}
    for row in (r for r in rows if r["p"] is None):
        e, k, r = row["e"], row["k"], row["r"]
        if not (
            isinstance(e, ox.NamedNode | ox.BlankNode) and isinstance(k, ox.NamedNode) and isinstance(r, ox.NamedNode)
        ):
            continue
        ev = events.setdefault(str(e), _Event(e))
        ev.types.add(((e, RDF.type, k), r))
        if (day := _day(row["ef"])) is not None:
            ev.days.add(day)
        if about is not None and truth(row["tied"]):
            ev.about_ties.add(((r, WB.about, about), r))
    if about is None:
        return list(events.values())
    for row in (r for r in rows if r["p"] is not None):
        e, p, r = row["e"], row["p"], row["r"]
        if isinstance(p, ox.NamedNode) and isinstance(r, ox.NamedNode) and str(e) in events:
            ev = events[str(e)]
            ev.ties.add(((about, p, ev.node), r))
            if (day := _day(row["ef"])) is not None:
                ev.days.add(day)
    return [ev for ev in events.values() if ev.ties or ev.about_ties]


def _plural(word: str, n: int) -> str:
    if n == 1:
        return word
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _period(start: datetime.date | None, end: datetime.date | None) -> str:
    if start and end:
        return f" between {start.isoformat()} and {end.isoformat()}"
    if start:
        return f" on or after {start.isoformat()}"
    return f" on or before {end.isoformat()}" if end else ""


def count_events(
    store: Store,
    *,
    kind: ox.NamedNode,
    about: ox.NamedNode | None,
    start: datetime.date | None,
    end: datetime.date | None,
    as_of: str | None,
    question: str,
    params: tuple[tuple[str, str], ...],
) -> Answer:
    """How many events of ``kind`` (tied to ``about``) fell in [start, end], each with its proofs."""
    kinds = sub_kinds(store, kind, as_of)
    events = _events(store, kinds, about, as_of)
    bounded = start is not None or end is not None
    placed: list[tuple[_Event, datetime.date | None]] = []
    outside = 0
    for ev in events:
        day = min(ev.days) if ev.days else None
        if day is not None and ((start is not None and day < start) or (end is not None and day > end)):
            outside += 1
        else:
            placed.append((ev, day))
    facts: dict[str, list[Fact]] = {}
    for ev, _ in placed:
        typed = sorted(ev.types, key=lambda f: (f[1].value, str(f[0][2])))
        chains = [edge for f in typed if isinstance(f[0][2], ox.NamedNode) for edge in kinds.get(f[0][2], [])]
        ties = sorted(ev.ties or ev.about_ties, key=lambda f: (f[1].value, str(f[0][1])))
        facts[str(ev.node)] = list(dict.fromkeys([*typed, *chains, *ties]))
    terms = {t for fs in facts.values() for f in fs for t in f[0]}
    labels, leaves = describe(store, [kind, *terms], [f for fs in facts.values() for f in fs])

    def finding(ev: _Event, day: datetime.date | None) -> Finding:
        proofs: list[Recorded] = [p for f in facts[str(ev.node)] if (p := leaves.get((f[0], f[1].value)))]
        note = day.isoformat() if day else "undated"
        if len(ev.days) > 1:
            note += " (records also give " + ", ".join(d.isoformat() for d in sorted(ev.days)[1:]) + ")"
        return Finding(value=str(ev.node), label=labels(ev.node), proofs=tuple(proofs), note=note)

    order = sorted(placed, key=lambda p: (p[1] is None, p[1] or datetime.date.min, labels(p[0].node), str(p[0].node)))
    counted = [finding(ev, day) for ev, day in order if day is not None or not bounded]
    undated = [finding(ev, day) for ev, day in order if day is None and bounded]
    word, when = labels(kind), _period(start, end) + (f" (as of {as_of})" if as_of else "")
    if counted or undated:
        tier = Tier.RECORDED
        n, u = len(counted), len(undated)
        summary = f"{n} {_plural(word, n)}{when}."
        if undated:
            head = f"At least {summary[:-1]}" if n else f"No {_plural(word, 0)} placed{when}"
            summary = f"{head}; {u} undated {_plural('one', u)} could not be placed."
    else:
        tier = Tier.NO_EVIDENCE
        more = f" ({outside} recorded outside this period)" if outside else ""
        summary = f"No {_plural(word, 0)} recorded{when}{more}; that is not proof there were none."
    return Answer(
        kind="count",
        question=question,
        tier=tier,
        summary=summary,
        findings=tuple(counted),
        as_of=as_of,
        count=len(counted),
        at_least=bool(undated),
        undated=tuple(undated),
        params=params,
    )
