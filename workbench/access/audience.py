"""Who may see a named graph, as a filter an engine evaluates (issue 20, part 1).

In the layout of 2026-12-05 (docs/decisions/20261205-visibility-the-engine-enforces.md) what a
reader may not see of the records is a set of named graphs, each carrying or pointing at its
audience in one of three ways:

- a graph that names its own audience: ``GRAPH ?g { ?g wb:visibleTo ... }`` (a source's graph,
  an erased record's tombstone's; none: everyone);
- a record's graph, seen by whoever sees the source it was taken from (``prov:wasDerivedFrom``,
  in that source's graph);
- a graph about records (an act on them, a supersession or a retraction; a summary of them), seen
  by whoever sees every record it names (``prov:used``, ``wb:summarizes``);
- a candidate's graph (:mod:`workbench.records.candidates`): its own audience as a source's, and
  seen only by whoever sees everything it rests on (``wb:restsOn``: a source, a record, the
  candidate it was merged into, an erased record's tombstone).

:func:`withheld` writes that as SPARQL: a filter to put after a ``GRAPH ?g { ... }`` pattern so
that the engine drops the solutions from graphs the reader may not see, whatever the store's
size (a lookup per graph a solution binds). A restricted reader still reads a view
(:mod:`workbench.access.views`), which the tests use as the oracle for this filter.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyoxigraph as ox

from workbench.errors import Conflict
from workbench.ids import STORE_NODE, agent_iri, id_from_iri
from workbench.store.base import Store
from workbench.vocab import PREFIXES, PROV, WB


def withheld(g: str, agents: Iterable[str] | None, *, fresh: str = "_") -> str:
    """A filter keeping the solutions whose graph ``g`` (a variable, or an IRI) a reader whose
    name and groups are ``agents`` may see (graphs that carry no audience are kept); ``agents``
    None: a reader who sees every source, from whom only what no reader sees (the API tokens'
    hashes, whose audience is the store node) is withheld. Its own variables start with ``fresh``
    (one the query around it does not use)."""
    if agents is None:
        return f"FILTER NOT EXISTS {{ GRAPH {g} {{ {g} {WB.visibleTo} {STORE_NODE} }} }}"
    names = " ".join(str(agent_iri(a)) for a in sorted(set(agents))) or "<urn:wb:agent:nobody>"
    # full IRIs: it goes into queries that may declare no prefixes, or others
    v, derived, visible = fresh, PROV.wasDerivedFrom, WB.visibleTo
    t = f"?{v}t"  # what decides: the graph itself, the source it was taken from, what it names or rests on
    # One union of what decides and one audience check (not a check per kind): an engine plans the
    # filter once for each GRAPH group of a query, and a question's queries hold dozens of groups
    # (the four-check filter before it cost twice as much to plan and 1.4x to run at 10M relations)
    deciders = " UNION ".join([
        # a graph that names its own audience (not BIND: Virtuoso 7 binds nothing from outside there)
        f"{{ GRAPH {g} {{ {t} {visible} ?{v}own }} FILTER({t} = {g}) }}",
        f"{{ GRAPH {t} {{ {g} {derived} {t} }} }}",  # a record's graph: its source's
        f"{{ GRAPH {g} {{ {g} {PROV.used}|{WB.summarizes}|{WB.restsOn} ?{v}rec }} "  # about records
        f"GRAPH {t} {{ ?{v}rec {derived} {t} }} }}",
        f"{{ GRAPH {g} {{ {g} {WB.restsOn} {t} }} }}",  # a candidate: what it rests on, own audience
    ])
    hidden = (f"GRAPH {t} {{ {t} {visible} ?{v}any }} "  # an audience, and the reader not in it
              f"FILTER NOT EXISTS {{ GRAPH {t} {{ {t} {visible} ?{v}who }} VALUES ?{v}who {{ {names} }} }}")
    return f"FILTER NOT EXISTS {{ {deciders} {hidden} }}"


def covers(wider: Iterable[str], narrower: Iterable[str]) -> bool:
    """Whether everyone who may see what has the audience ``narrower`` may see what has the
    audience ``wider`` (an audience is a list of people and groups; none: everyone). Group
    membership changes, so only the lists are compared.

    >>> covers([], ["alice"]), covers(["alice", "bob"], ["bob"]), covers(["alice"], []), covers(["bob"], ["alice"])
    (True, True, False, False)
    """
    wide, narrow = set(wider), set(narrower)
    return not wide or (bool(narrow) and narrow <= wide)


def of_source(store: Store, source: ox.NamedNode) -> tuple[str, ...]:
    """Who may see a recorded source (none: everyone), as the names records use."""
    rows = store.select(PREFIXES + f"SELECT ?a WHERE {{ GRAPH {source} {{ {source} wb:visibleTo ?a }} }} ORDER BY ?a")
    return tuple(id_from_iri(r["a"]) for r in rows if isinstance(r["a"], ox.NamedNode))


def of_record(store: Store, record: ox.NamedNode) -> tuple[str, ...]:
    """Who may see a recorded record: its source's audience."""
    rows = store.select(PREFIXES + f"""SELECT ?a WHERE {{ GRAPH ?m {{ {record} prov:wasDerivedFrom ?s }}
        GRAPH ?s {{ ?s wb:visibleTo ?a }} }} ORDER BY ?a""")
    return tuple(id_from_iri(r["a"]) for r in rows if isinstance(r["a"], ox.NamedNode))


def check_named(what: str, audience: Iterable[str], named: str, named_audience: Iterable[str], *,
                where: str | None = None) -> None:
    """A record's metadata sits in its source's graph, seen by the record's audience; a link in it
    to a record or source that some of them may not see would tell them it exists. Raises
    Conflict, in plain words, when ``named`` is narrower than ``what``."""
    audience, named_audience = tuple(audience), tuple(named_audience)
    if not covers(named_audience, audience):
        def who(a: tuple[str, ...]) -> str:
            return ", ".join(a) if a else "everyone"
        raise Conflict(f"{what} (visible to {who(audience)}) cannot name {named} (visible to {who(named_audience)}): "
                       f"readers of {what} who may not see {named} would learn it exists; give {what} "
                       f"an audience within {named}'s", where=where)
