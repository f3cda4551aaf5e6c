"""Facts: subject + relation (+ object). Recorded first, then derived, else no evidence.

"Is X used for cooking?", "what is X used for?", "does my car need gas?". A recorded value keeps
its recorded proof even when a rule could also derive it. Never "no" unless a recorded negative
fact (an owl:NegativePropertyAssertion) says no; a negative fact against a recorded or derived
positive one is ``conflicting``, as are two values of a relation declared functional.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace

import pyoxigraph as ox

from workbench import records
from workbench.answers.evidence import Described, iris_of, pattern
from workbench.answers.proofs import Prover
from workbench.records import effective
from workbench.rules.engine import Engine
from workbench.rules.primed import OBJECT, SUBJECT, Primed
from workbench.rules.proof import Fact, Support
from workbench.store import Store
from workbench.store.base import Row as StoreRow
from workbench.store.caches import Kept
from workbench.values.answers import Answer, Finding, Recorded, Tier
from workbench.values.rules import RuleSet
from workbench.vocab import OWL, RDF


def primed(store: Store, rules: RuleSet, relation: ox.NamedNode, subject: str, obj: str | None) -> Primed:
    """What :func:`ask` reads first, for name keys not bound yet: the goal's first lookups, its
    negative facts and the words of its terms, to send with the version check."""
    return Primed.of(store, rules, relation, subject, obj, lambda: {
        "negatives": _negatives_branches(SUBJECT, relation, OBJECT if obj is not None else None, None)},
        kind=("ask",))


def ask(
    store: Store,
    rules: RuleSet,
    *,
    subject: ox.NamedNode,
    relation: ox.NamedNode,
    obj: ox.NamedNode | None,
    as_of: str | None,
    question: str,
    params: tuple[tuple[str, str], ...],
    first: Primed | None = None,
) -> Answer:
    engine = Engine(store, rules, as_of=as_of)
    own = [subject, relation, *([obj] if obj else [])]
    kept = Described.of(store)
    named = None
    negated: Callable[[], list[StoreRow]]
    if first is not None and as_of is None and first.bind(store, subject, obj):
        # read with the names, before they were bound (rules/primed): a round trip fewer; the
        # words for the question's terms, where not kept, come with the proof's (their 0.18 ms
        # on the server in every question cost more than the round trip they sometimes save)
        first.into(engine)
        negated = functools.partial(first.extra, "negatives")
    else:
        # With the goal's first query: the negative facts, and the words for the question's own
        # terms (what an answer with no proof needs: a round trip fewer for "no evidence"). Where
        # quad patterns are cheap there are no round trips: the words come with the proof's.
        if engine.reads.patterns:
            negated = functools.partial(_negatives_by_patterns, store, subject, relation, obj)
        else:
            negated = engine.ride(_negatives_pattern(subject, relation, obj, as_of))
            unnamed = kept.wanted(iris_of(own))
            named = engine.ride(q) if (q := pattern(*unnamed)) else None
    result = engine.solve(subject, relation, obj)
    if named is not None:
        kept.take(*unnamed, named())
    negatives, functional = _negatives(negated(), subject, relation)
    found: dict[ox.NamedNode | ox.Literal | ox.BlankNode, Support] = {t[2]: s for t, s in result.found.items()}
    prover = Prover(store, [*found.values(), *negatives.values()], extra_terms=own)
    words = prover.labels

    def finding(value: object, support: Support, note: str = "") -> Finding:
        proof = prover.proof(support)
        if note:  # a negative fact: its statement says "not"
            proof = replace(proof, statement=replace(proof.statement, text=f"not: {proof.statement.text}"))
        return Finding(value=str(value), label=words(value), proofs=(proof,), note=note, negated=bool(note))

    by_value = {str(v): sup for v, sup in found.items()}
    order = sorted(found, key=lambda v: (words(v), str(v)))
    findings = tuple(finding(v, found[v]) for v in order)
    said_no = tuple(finding(v, negatives[v], note="recorded as not so") for v in sorted(negatives, key=str))
    asked = f"{words(subject)} {words(relation)}" + (f" {words(obj)}" if obj is not None else "")
    common = dict(kind="ask", question=question, as_of=as_of, params=params, incomplete=engine.incomplete)

    clash = [f for f in said_no if f.value in {x.value for x in findings}]
    if clash:
        # Every value stays; the disputed ones are shown with both sides.
        disputed = {c.value for c in clash}
        both = tuple(f for f in findings) + tuple(clash)
        words_of = ", ".join(sorted(words(v) for v in found if str(v) in disputed))
        return Answer(
            tier=Tier.CONFLICTING,
            findings=both,
            **common,  # type: ignore[arg-type]
            summary=f"Conflicting: records disagree on whether {words(subject)} {words(relation)} "
            f"{words_of}; both sides are shown.",
        )
    if functional and len({f.value for f in findings if isinstance(by_value[f.value], Fact)}) > 1:
        return Answer(
            tier=Tier.CONFLICTING,
            findings=findings,
            **common,  # type: ignore[arg-type]
            summary=f"Conflicting: {words(subject)} {words(relation)} has one value, but records give {len(findings)}.",
        )
    if said_no and not findings:
        return Answer(
            tier=Tier.RECORDED,
            findings=said_no,
            **common,  # type: ignore[arg-type]
            summary=f"No: a record says it is not so that {asked}.",
        )
    if not findings:
        more = " (the depth bound was reached, so there may be more)" if engine.incomplete else ""
        return Answer(
            tier=Tier.NO_EVIDENCE,
            **common,  # type: ignore[arg-type]
            summary=f"No evidence: nothing recorded or derivable says {asked}{more}. That is not a no.",
        )
    recorded = [f for f in findings if isinstance(by_value[f.value], Fact)]
    derived = [f for f in findings if f not in recorded]
    tier = Tier.DERIVED if derived else Tier.RECORDED
    parts = []
    if recorded:
        parts.append("recorded: " + ", ".join(f.label for f in recorded))
    if derived:
        parts.append("derived: " + ", ".join(f.label for f in derived))
    if said_no:  # other values a record says are not so: shown too, never dropped
        parts.append("recorded as not so: " + ", ".join(f.label for f in said_no))
    lead = "Yes" if obj is not None else f"{words(subject)} {words(relation)}"
    return Answer(
        tier=tier,
        findings=findings + said_no,
        **common,  # type: ignore[arg-type]
        summary=f"{lead} ({'; '.join(parts)}).",
    )


def logged_state(answer: Answer) -> bool:
    """Whether an open answer's several values are all recorded by state records: updates of
    one changing state, which the current-state answer collapses to its latest value."""
    proofs = [p for f in answer.findings if not f.negated for p in f.proofs]
    return len(proofs) > 1 and all(isinstance(p, Recorded) and p.record_type == "state" for p in proofs)


def _negatives_pattern(s: ox.NamedNode, p: ox.NamedNode, o: ox.NamedNode | None, as_of: str | None) -> str:
    """Recorded negative facts about ``s p (o)`` (owl:NegativePropertyAssertion in records the
    read sees; the proof is the record that says "not") and whether ``p`` is functional."""
    return " UNION ".join(f"{{ {b} }}" for b in _negatives_branches(s, p, o, as_of))


def _negatives_branches(s: ox.NamedNode, p: ox.NamedNode, o: ox.NamedNode | None, as_of: str | None) -> list[str]:
    same = f"FILTER(?o = {o})" if o is not None else ""
    return [f"""GRAPH ?g {{ ?n owl:sourceIndividual {s} ; owl:assertionProperty {p} .
                 {{ ?n owl:targetIndividual ?o }} UNION {{ ?n owl:targetValue ?o }} }} {same}
               {effective("?g", as_of=as_of)}""",
            f"GRAPH ?x {{ {p} a owl:FunctionalProperty }} BIND(true AS ?f)"]


def _negatives_by_patterns(store: Store, s: ox.NamedNode, p: ox.NamedNode, o: ox.NamedNode | None) -> list[StoreRow]:
    """:func:`_negatives_pattern`'s solutions for a normal read, read by quad patterns (a store
    where they are cheap: :attr:`Store.cheap_patterns`), kept while the store's version stays
    (:class:`_Negated`: recorded facts, which only a write changes)."""
    return _Negated.of(store).one((s, p, o), functools.partial(_read_negatives, store, s, p, o))


class _Negated(Kept):
    """:func:`_negatives_by_patterns`'s rows per question (subject, relation, object), for one
    store at one version; the caller only reads them."""


def _read_negatives(store: Store, s: ox.NamedNode, p: ox.NamedNode, o: ox.NamedNode | None) -> list[StoreRow]:
    rows: list[StoreRow] = []
    for q in store.matching(None, OWL.sourceIndividual, s):
        n, g = q.subject, q.graph_name
        if isinstance(n, ox.Triple) or not store.matching(n, OWL.assertionProperty, p, g):  # type: ignore[arg-type]
            continue
        said = [t.object for way in (OWL.targetIndividual, OWL.targetValue)
                for t in store.matching(n, way, None, g) if o is None or t.object == o]  # type: ignore[arg-type]
        if said and records.active(store, g):  # type: ignore[arg-type]
            rows += [{"o": v, "g": g, "f": None} for v in said]  # type: ignore[dict-item]
    if store.matching(p, RDF.type, OWL.FunctionalProperty):
        rows.append({"o": None, "g": None, "f": ox.Literal(True)})
    return rows


def _negatives(
    rows: list[StoreRow], s: ox.NamedNode, p: ox.NamedNode
) -> tuple[dict[ox.NamedNode | ox.Literal | ox.BlankNode, Support], bool]:
    """The negative facts (each with the record that says "not") and whether ``p`` is functional,
    from :func:`_negatives_pattern`'s solutions."""
    out: dict[ox.NamedNode | ox.Literal | ox.BlankNode, Support] = {}
    functional = False
    for row in sorted(rows, key=lambda r: (str(r["o"]), str(r["g"]))):
        if row["f"] is not None:
            functional = True
            continue
        out.setdefault(row["o"], Fact((s, p, row["o"]), row["g"]))  # type: ignore[arg-type]
    return out, functional
