"""Names first: every name in a question binds exactly before any reasoning.

An unknown or ambiguous name is answered as such (tier ``unknown_entity`` or ``ambiguous``), with
the candidates listed and none picked; no reasoning runs on a guess. An unknown relation label is
a mistake in the question, so it raises :class:`workbench.errors.Invalid`.
"""

from __future__ import annotations

import pyoxigraph as ox

from workbench.errors import Invalid
from workbench.names import entities
from workbench.names.relations import Relations
from workbench.store import Store
from workbench.values.answers import Answer, Finding, Tier


def bind(
    store: Store,
    names: dict[str, str],
    *,
    kind: str,
    question: str,
    params: tuple[tuple[str, str], ...],
    as_of: str | None = None,
) -> dict[str, ox.NamedNode] | Answer:
    """Each role's name (``{"subject": "my car"}``) bound to its entity, or the honest answer
    for the first name that does not bind."""
    bound: dict[str, ox.NamedNode] = {}
    found = entities.resolve_all(store, names.values())  # one query for all
    for role, name in names.items():
        res = found[name]
        if res.outcome == "bound":
            bound[role] = ox.NamedNode(res.entities[0])
            continue
        if res.outcome == "ambiguous":
            from workbench.answers.evidence import Labels

            labels = Labels(store, [ox.NamedNode(e) for e in res.entities])
            return Answer(
                kind=kind,
                question=question,
                tier=Tier.AMBIGUOUS,
                summary=f"{name!r} names {len(res.entities)} different things; say which one (none was picked).",
                findings=tuple(Finding(value=f"<{e}>", label=labels(ox.NamedNode(e))) for e in res.entities),
                candidates=res.entities,
                as_of=as_of,
                params=params,
            )
        return Answer(
            kind=kind,
            question=question,
            tier=Tier.UNKNOWN_ENTITY,
            summary=f"Nothing is named {name!r}; names bind only to an exact name or a registered alias.",
            as_of=as_of,
            params=params,
        )
    return bound


def relation(rels: Relations, label: str) -> ox.NamedNode:
    """The relation a label names; raises Invalid listing the known labels."""
    found = rels.get(label)
    if found is None:
        raise Invalid(f"unknown relation {label!r}; known relations: {rels.labels()}", where="relation")
    return found
