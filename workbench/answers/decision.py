"""Decisions: which decision governs a scope now (or as of a date), who decided it, on what
source, what it superseded and why.

The current-decision rule draws the conclusion (a decision applies to the scope and nothing the
read sees supersedes it); this module adds the decision's details and its supersession history.
Two decisions governing one scope at once, neither superseding the other, is ``conflicting``.
"""

from __future__ import annotations

import pyoxigraph as ox

from workbench import records
from workbench.answers.evidence import Labels
from workbench.answers.proofs import Prover
from workbench.ids import record_iri
from workbench.rules.engine import Engine
from workbench.rules.primed import Primed
from workbench.store import Store
from workbench.values.answers import Answer, Finding, Tier
from workbench.values.records import Record, Tombstone
from workbench.values.rules import RuleSet
from workbench.vocab import PREFIXES, WB


def decision(
    store: Store,
    rules: RuleSet,
    *,
    scope: ox.NamedNode,
    as_of: str | None,
    question: str,
    params: tuple[tuple[str, str], ...],
    first: Primed | None = None,
) -> Answer:
    engine = Engine(store, rules, as_of=as_of)
    if first is not None and as_of is None and first.bind(store, scope, None):
        first.into(engine)  # read with the name, before it was bound: a round trip fewer
    found = engine.solve(scope, WB.governedBy).found
    iris = sorted((t[2] for t in found if isinstance(t[2], ox.NamedNode)), key=str)  # decisions: records
    # the decisions, their supersession chains and every record in them, read once
    loaded, chains = records.chains(store, iris)
    recs = {i.value: loaded[i.value] for i in iris}
    people = [ox.NamedNode(r.decided_by) for r in recs.values() if r.decided_by]
    prover = Prover(store, found.values(), extra_terms=[scope, *people])
    name = prover.labels(scope)
    common = dict(kind="decision", question=question, as_of=as_of, params=params, incomplete=engine.incomplete)
    if not found:
        return Answer(
            tier=Tier.NO_EVIDENCE,
            **common,  # type: ignore[arg-type]
            summary=f"No evidence: no decision recorded for {name} governs it" + (f" as of {as_of}." if as_of else "."),
        )
    findings = []
    history: list[Finding] = []
    for iri in iris:
        rec = recs[iri.value]
        support = found[(scope, WB.governedBy, iri)]
        findings.append(
            Finding(
                value=str(iri),
                label=rec.statement,
                proofs=(prover.proof(support),),
                note=rec.id,
                details=_details(store, rec, prover.labels, loaded),
            )
        )
        history += [_event(x) for x in chains[iri] if not (isinstance(x, Record) and x.iri == rec.iri)]
    tier = Tier.DERIVED if len(findings) == 1 else Tier.CONFLICTING
    when = f" as of {as_of}" if as_of else " now"
    if tier is Tier.CONFLICTING:
        summary = f"Conflicting: {len(findings)} decisions govern {name}{when}, and none supersedes the other."
    else:
        summary = f"{name} is governed{when} by {findings[0].note}: {findings[0].label}"
    return Answer(tier=tier, findings=tuple(findings), history=tuple(history), summary=summary, **common)  # type: ignore[arg-type]


def _details(store: Store, rec: Record, words: Labels, loaded: dict[str, Record]) -> tuple[tuple[str, str], ...]:
    out = [("decision", rec.id)]
    if rec.decided_by:
        out.append(("decided by", words(ox.NamedNode(rec.decided_by))))
    src = rec.source
    out.append(("source", ", ".join(x for x in (src.id, src.locator, src.captured_at) if x)))
    if src.text:
        out.append(("source says", src.text))
    supported, why = _support_and_why(store, rec)
    for sup in supported:
        out.append(("supported by", sup))
    if rec.effective_from:
        out.append(("effective from", rec.effective_from))
    for old in rec.supersedes:
        # in the chain read with the decision; an erased predecessor shows as its id only
        earlier = loaded.get(record_iri(old).value)
        out.append(("supersedes", f"{old}: {earlier.statement}" if earlier else old))
        out.append(("why", why.get(record_iri(old).value) or src.text or rec.statement))
    return tuple(out)


def _support_and_why(store: Store, rec: Record) -> tuple[list[str], dict[str, str]]:
    """The sources a decision names as its support, and for each record it supersedes by a
    curator's command, the reason they gave (the act used both records): one query."""
    rows = store.select(
        PREFIXES + f"""SELECT ?id ?loc ?old ?why WHERE {{
            {{ {records.meta(f"<{rec.iri}>", f"<{rec.iri}> wb:supportedBy ?s")}
                GRAPH ?s {{ ?s dcterms:identifier ?id OPTIONAL {{ ?s wb:locator ?loc }} }} }}
            UNION {{ {records.meta(f"<{rec.iri}>", f"<{rec.iri}> wb:supersedes ?old")}
                GRAPH ?a {{ ?a a wb:Supersession ; prov:used <{rec.iri}> , ?old ; wb:reason ?why }} }} }}"""
    )
    supported = sorted((r for r in rows if r["id"] is not None), key=lambda r: str(r["id"]))
    why = {r["old"].value: r["why"].value for r in rows if r["old"] is not None and r["why"] is not None}
    return [", ".join(v.value for v in (r["id"], r["loc"]) if v is not None) for r in supported], why


def _event(x: Record | Tombstone) -> Finding:
    if isinstance(x, Tombstone):
        return Finding(value=f"<{x.iri}>", label="(erased)", note=f"erased {x.erased_at}: {x.reason}")
    dates = x.effective_from or x.created_at
    return Finding(value=f"<{x.iri}>", label=x.statement, note=f"{x.id}, {x.status.value}, from {dates}")
