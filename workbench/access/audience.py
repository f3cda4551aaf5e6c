"""Who may see a named graph, as a filter an engine evaluates (issue 20, part 1).

In the layout of 2026-12-05 (docs/decisions/20261205-visibility-the-engine-enforces.md) what a
reader may not see of the records is a set of named graphs, each carrying or pointing at its
audience in one of three ways:

- a graph that names its own audience: ``GRAPH ?g { ?g wb:visibleTo ... }`` (a source's graph,
  an erased record's tombstone's; none: everyone);
- a record's graph, seen by whoever sees the source it was taken from (``prov:wasDerivedFrom``,
  in that source's graph);
- a graph about records (an act on them, a supersession or a retraction; a summary of them), seen
  by whoever sees every record it names (``prov:used``, ``wb:summarizes``).

:func:`withheld` writes that as SPARQL: a filter to put after a ``GRAPH ?g { ... }`` pattern so
that the engine drops the solutions from graphs the reader may not see, whatever the store's
size (a lookup per graph a solution binds). The shared graphs (metadata, entities, queue) still
hold things a reader may not see and are not judged here: until they are split too, a restricted
reader reads a view (:mod:`workbench.access.views`), which the tests use as the oracle for this
filter.
"""

from __future__ import annotations

from collections.abc import Iterable

from workbench.ids import agent_iri


def _hidden_source(s: str, agents: str) -> str:
    """SPARQL true of a graph ``s`` (a source's, a tombstone's: a variable bound before) that
    names its own audience, without the reader."""
    return (f"GRAPH {s} {{ {s} wb:visibleTo ?_any }} "
            f"FILTER NOT EXISTS {{ GRAPH {s} {{ {s} wb:visibleTo ?_who }} VALUES ?_who {{ {agents} }} }}")


def withheld(g: str, agents: Iterable[str]) -> str:
    """A filter keeping the solutions whose graph ``g`` (a variable) a reader whose name and
    groups are ``agents`` may see (graphs that carry no audience are kept)."""
    names = " ".join(str(agent_iri(a)) for a in sorted(set(agents))) or "<urn:wb:agent:nobody>"
    own = _hidden_source(g, names)
    record = f"GRAPH ?_src {{ {g} prov:wasDerivedFrom ?_src }} {_hidden_source('?_src', names)}"
    about = (f"GRAPH {g} {{ {g} prov:used|wb:summarizes ?_rec }} GRAPH ?_rsrc {{ ?_rec prov:wasDerivedFrom ?_rsrc }} "
             f"{_hidden_source('?_rsrc', names)}")
    return f"FILTER NOT EXISTS {{ {{ {own} }} UNION {{ {record} }} UNION {{ {about} }} }}"
