"""Current state: the value a relation of a subject has now (or on a day), and how it got there.

A state logged again and again (a weight, an address) is one thing with a history, never several
things: the answer is the latest value among the records the read sees, and every logged value
stays listed, oldest first, with its record and source. Two records of the same (latest) day that
disagree are shown as a conflict with both sides; none is picked.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import pyoxigraph as ox

from workbench.answers.evidence import describe
from workbench.ids import id_from_iri
from workbench.records import applies_from, check_date, effective, meta, shown_status
from workbench.store import Store
from workbench.store.base import truth
from workbench.values.answers import Answer, Finding, Recorded, Tier
from workbench.vocab import PREFIXES, WB

_XSD = "http://www.w3.org/2001/XMLSchema#"
_NUMBERS = {_XSD + t for t in ("integer", "decimal", "double", "float", "int", "long", "nonNegativeInteger")}


@dataclass(frozen=True)
class _Logged:
    """One value one record gives, and when it applied from (:func:`workbench.records.applies_from`)."""

    record: ox.NamedNode
    value: ox.NamedNode | ox.BlankNode | ox.Literal
    time: str
    superseded: bool
    seen: bool  # the read sees this record: it may be the current value

    @property
    def day(self) -> str:
        return self.time[:10]

    def key(self) -> tuple[str, str, str, str]:
        return (self.day, self.time, id_from_iri(self.record), str(self.value))

    @property
    def same(self) -> str:
        """What makes two values one: equal numbers are one whatever their type (71 and 71.0 kg)."""
        v = self.value
        if isinstance(v, ox.Literal) and v.datatype.value in _NUMBERS:
            try:
                return "number:" + format(Decimal(v.value).normalize(), "f")
            except InvalidOperation:
                pass
        return str(v)


def _logged(store: Store, subject: ox.NamedNode, relation: ox.NamedNode, as_of: str | None) -> list[_Logged]:
    """Every value a non-retracted record gives that had started to apply by ``as_of`` (any time
    for a normal read), flagged with whether the read sees its record. One query."""
    started = ""
    if as_of is not None:
        started = f"FILTER(SUBSTR(STR(?from), 1, 10) <= {ox.Literal(check_date(as_of))})"
    # Two whole branches, the values and the records the read sees, rather than BIND(EXISTS {...}):
    # Virtuoso 7 cannot compile an as-of read inside an EXISTS.
    said = f'?r wb:status ?own . FILTER(?own != wb:Retracted) {applies_from("?r", "?from")} {started}'
    rows = store.select(
        PREFIXES
        + f"""SELECT DISTINCT ?r ?v ?st ?from ?seen WHERE {{ GRAPH ?r {{ {subject} {relation} ?v }}
            {{ {meta("?r", said)} {shown_status("?r", "?own", "?st")} }}
            UNION {{ {effective("?r", as_of=as_of)} BIND(true AS ?seen) }} }}"""
    )
    seen = {row["r"] for row in rows if truth(row["seen"])}
    out = []
    for row in rows:
        r, v, st, when = (row[k] for k in ("r", "v", "st", "from"))
        if not isinstance(r, ox.NamedNode) or v is None or truth(row["seen"]):
            continue
        out.append(
            _Logged(
                record=r,
                value=v,
                time=when.value if isinstance(when, ox.Literal) else "",
                superseded=st == WB.Superseded,
                seen=r in seen,
            )
        )
    return sorted(out, key=_Logged.key)


def current_state(
    store: Store,
    *,
    subject: ox.NamedNode,
    relation: ox.NamedNode,
    as_of: str | None,
    question: str,
    params: tuple[tuple[str, str], ...],
) -> Answer:
    """The current value of ``subject relation ?``, its proof, and the history of logged values."""
    history = _logged(store, subject, relation, as_of)
    labels, leaves = describe(
        store,
        [subject, relation, *(h.value for h in history)],
        [((subject, relation, h.value), h.record) for h in history],
    )

    def proof(h: _Logged) -> Recorded | None:
        return leaves.get(((subject, relation, h.value), h.record.value))

    def finding(value: str, logged: list[_Logged], note: str = "") -> Finding:
        proofs = tuple(p for h in logged if (p := proof(h)) is not None)
        note = note or ", ".join(sorted({h.time for h in logged}))  # full text: a time of day is kept
        return Finding(value=value, label=labels(logged[0].value), proofs=proofs, note=note)

    logged_findings = tuple(
        finding(str(h.value), [h], h.time + (" (superseded)" if h.superseded else "")) for h in history
    )
    what = f"{labels(subject)} {labels(relation)}" + (f" as of {as_of}" if as_of else "")
    seen = [h for h in history if h.seen]
    n = len(history)
    logged = f"{n} value{'s' if n != 1 else ''} logged since {history[0].day}" if history else ""

    def answer(tier: Tier, summary: str, findings: tuple[Finding, ...] = ()) -> Answer:
        return Answer(
            kind="current",
            question=question,
            tier=tier,
            summary=summary,
            findings=findings,
            as_of=as_of,
            history=logged_findings,
            params=params,
        )

    if not seen:
        summary = (
            f"No value of {what} is in effect ({logged}, none current); that is not proof there is none."
            if history
            else f"No value of {what} is recorded; that is not proof there is none."
        )
        return answer(Tier.NO_EVIDENCE, summary)
    latest = max(h.day for h in seen)
    top = [h for h in seen if h.day == latest]
    by_value: dict[str, list[_Logged]] = {}
    for h in top:
        by_value.setdefault(h.same, []).append(h)
    if len(by_value) > 1:
        sides = sorted(by_value.items(), key=lambda kv: (labels(kv[1][0].value), kv[0]))
        ids = {v: ", ".join(id_from_iri(h.record) for h in hs) for v, hs in sides}
        findings = tuple(finding(str(hs[0].value), hs, f"{hs[0].time} ({ids[v]})") for v, hs in sides)
        said = " vs ".join(f"{labels(hs[0].value)} ({ids[v]})" for v, hs in sides)
        summary = f"{what}: records of {latest} disagree: {said}; none is picked ({logged})."
        return answer(Tier.CONFLICTING, summary, findings)
    ((same, hs),) = by_value.items()
    since = latest
    for h in reversed([h for h in history if h.day <= latest]):  # an unchanged value re-logged: since its first log
        if h.same != same:
            break
        since = h.day
    current = finding(str(hs[-1].value), hs)
    summary = f"{what}: {current.label} (since {since}; {logged})"
    return answer(Tier.RECORDED, summary, (current,))
