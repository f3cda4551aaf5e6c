"""Attributed acts: every change a person makes is a PROV activity with who, when and why.

>>> act, quads = activity("merge", WB.Merge, actor="alice", now="2026-11-30T12:00:00Z",
...                       graph=ENTITIES_GRAPH, reason="same city")
>>> act.value.startswith("urn:wb:activity:merge:2026-11-30T12")
True
>>> sorted(q.predicate.value.rsplit("#", 1)[1] for q in quads if q.subject == act)
['reason', 'startedAtTime', 'type', 'wasAssociatedWith']
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

import pyoxigraph as ox

from workbench.errors import Invalid
from workbench.ids import ENTITIES_GRAPH, META_GRAPH, activity_iri, agent_iri, source_iri
from workbench.vocab import PROV, RDF, RDFS, WB, XSD

__all__ = ["AGENT_KINDS", "ENTITIES_GRAPH", "activity", "agent_quads", "import_activity", "run_per_source"]


# Every agent Workbench writes is typed one of these (readers find agents by type, not by IRI).
AGENT_KINDS = (PROV.Agent, PROV.SoftwareAgent)


def agent_quads(name: str, graph: ox.NamedNode = META_GRAPH) -> list[ox.Quad]:
    """A person, group or model (``model:NAME``) as a PROV agent."""
    who = agent_iri(name)
    kind = PROV.SoftwareAgent if name.startswith("model:") else PROV.Agent
    return [ox.Quad(who, RDF.type, kind, graph), ox.Quad(who, RDFS.label, ox.Literal(name), graph)]


def activity(
    kind: str, cls: ox.NamedNode, *, actor: str, now: str, graph: ox.NamedNode | None, reason: str | None = None,
    iri: ox.NamedNode | None = None,
) -> tuple[ox.NamedNode, list[ox.Quad]]:
    """An act of ``cls`` by ``actor`` at ``now`` (a new IRI unless given), with its reason if it
    needs one, in ``graph`` (None: a graph of its own, named by the act). Raises
    :class:`Invalid` for a blank reason."""
    if reason is not None and not reason.strip():
        raise Invalid(f"a {kind} needs a reason")
    act = iri or activity_iri(kind, f"{now}/{uuid.uuid4().hex[:8]}")
    graph = graph or act
    quads = [
        ox.Quad(act, RDF.type, cls, graph),
        ox.Quad(act, PROV.wasAssociatedWith, agent_iri(actor), graph),
        ox.Quad(act, PROV.startedAtTime, ox.Literal(now, datatype=XSD.dateTime), graph),
        *agent_quads(actor, graph),
    ]
    if reason is not None:
        quads.append(ox.Quad(act, WB.reason, ox.Literal(reason), graph))
    return act, quads


def import_activity(
    actor: str, now: str, files: Iterable[str], act: ox.NamedNode | None = None, graph: ox.NamedNode = META_GRAPH
) -> tuple[ox.NamedNode, list[ox.Quad]]:
    """An import run, with the files it used, described in ``graph``. An import describes its
    run in the graph of each source it took records from, naming the files those records came
    from (:func:`run_per_source`): whoever may not see a source does not learn of its run."""
    act, quads = activity("import", WB.Import, actor=actor, now=now, graph=graph, iri=act)
    quads += [ox.Quad(act, PROV.used, ox.Literal(name), graph) for name in files]
    return act, quads


def run_per_source(actor: str, now: str, act: ox.NamedNode, files: Mapping[str, Iterable[str]]) -> list[ox.Quad]:
    """The run ``act`` described in the graph of each source (by id) that it took records from,
    with the files those records came from."""
    out: list[ox.Quad] = []
    for source_id, used in sorted(files.items()):
        out += import_activity(actor, now, sorted(set(used)), act, source_iri(source_id))[1]
    return out
