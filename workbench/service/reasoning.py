"""SPARQL with reasoning on (:meth:`Workbench.sparql` with ``reasoning``) and the proof of one
conclusion (:meth:`Workbench.proof`): what the signed-off rules conclude for a query's
patterns, computed for that query from what the reader may see and never stored
(:mod:`workbench.rules.conclusions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyoxigraph as ox

from workbench import sparqlcheck
from workbench.access.restricted import RestrictedStore
from workbench.access.views import EVERYONE, ViewStore, with_quads
from workbench.errors import Invalid, Unsupported
from workbench.rules import conclusions
from workbench.service.questions import one_read
from workbench.store import Store
from workbench.values.answers import Answer

if TYPE_CHECKING:
    from workbench.service import Workbench


def sparql(wb: Workbench, query: str, *, format: str, default_graph: Sequence[str] | None,
           named_graphs: Sequence[str] | None, evaluate: sparqlcheck.Evaluator | None, reasoning: bool,
           proof_base: str | None, deadline: float | None = None) -> bytes:
    """See :meth:`Workbench.sparql`. With ``reasoning``: what the reader reads, with the rules'
    conclusions for the query's relations in :data:`~workbench.ids.DERIVED_GRAPH` written into
    the query (:func:`~workbench.rules.conclusions.joined`), the query checked before anything
    is computed."""
    if not reasoning:
        return sparqlcheck.answer(wb._readable(wb.reader), query, format=format, default_graph=default_graph,
                                  named_graphs=named_graphs, runner=evaluate)
    return _reasoned(wb, query, format=format, default_graph=default_graph, named_graphs=named_graphs,
                     evaluate=evaluate, proof_base=proof_base, deadline=deadline)


@one_read
def _reasoned(wb: Workbench, query: str, *, format: str, default_graph: Sequence[str] | None,
              named_graphs: Sequence[str] | None, evaluate: sparqlcheck.Evaluator | None,
              proof_base: str | None, deadline: float | None) -> bytes:
    sparqlcheck.read_only(query)  # before anything is computed
    sparqlcheck.parses(query)
    readable = wb._readable(wb.reader)
    rules = wb.rules
    goals = conclusions.goals_in(query, conclusions.concluded(rules))
    found = conclusions.conclusions(readable, rules, goals, deadline=deadline)
    # written into the query: nothing is copied, and the store (a server's too) is not written
    quads = list(conclusions.quads(found, proof_base=proof_base))
    store: Store = readable
    joined = conclusions.joined(query, quads, default_graph=default_graph, named_graphs=named_graphs)
    if joined is None:  # too many: added to a checkpoint of the reader's view, which a server's store has not
        if wb._shared.store.capabilities.round_trips:
            raise Unsupported(f"this query reads {len(found):,} conclusions, too many to send to the SPARQL "
                              "server with it: name the subjects or the relation it asks about")
        view = readable if isinstance(readable, ViewStore) else wb._shared.views().view(
            readable.reader if isinstance(readable, RestrictedStore) else EVERYONE)
        store, joined = with_quads(view, quads), query
    return sparqlcheck.answer(store, joined, format=format, default_graph=default_graph,
                              named_graphs=named_graphs, runner=evaluate, checked=True)


@one_read
def proof(wb: Workbench, subject: str, relation: str, obj: str | None = None) -> Answer:
    """See :meth:`Workbench.proof`."""
    from workbench.answers import ask

    s, p = _iri(subject, "subject"), _iri(relation, "relation")
    o = _iri(obj, "object") if obj is not None else None
    question = f"{s} {p}" + (f" {o}" if o is not None else "") + "?"
    params = tuple((k, v) for k, v in (("subject", subject), ("relation", relation), ("object", obj)) if v is not None)
    return ask.ask(wb.store, wb.rules, subject=s, relation=p, obj=o, as_of=None, question=question, params=params)


def _iri(text: str, where: str) -> ox.NamedNode:
    try:
        return ox.NamedNode(text.strip().removeprefix("<").removesuffix(">"))
    except ValueError as exc:
        raise Invalid(f"{text!r} is not an IRI: {exc}", where=where) from None
