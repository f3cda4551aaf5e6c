"""What a write may touch (invariant 11): one policy for every path that brings data in.

**Data from outside** (RDF files, JSON Lines records, uploads over HTTP, SPARQL Update, candidates
approved as records) lands only in **record graphs**, and of Workbench's own terms it may name
only entities (``urn:wb:entity:...``) and the relation vocabulary. **Workbench's own graphs**
(the ontology, record metadata, entities, the audit, users, the queue, summaries, rules) and its
own terms (records, sources, agents, activities, candidates, summaries, rules, the store, and the
bookkeeping vocabulary: ``wb:role``, ``wb:status``, ``wb:visibleTo``...) are written only by
Workbench's own acts: the metadata an import writes about the data it lands, a review decision,
a rule sign-off, an admin adding a user. A Workbench export holds all of those, so it is
*restored* into an empty store by the store's owner (:meth:`Workbench.restore`), never imported.
:func:`check_quad` is the one check every path calls on the data it brings.

**Writes as if the hidden did not exist.** What a write names (a record it supersedes, a source
it cites, a name it binds, a candidate it decides, an entity it aliases) is looked up in the
writer's view of the store (:class:`Writer`, from :mod:`workbench.access.views`), so the answer
is the one a store that never held what they may not see would give, and no error names it. A
write that would *create* something under an identifier a hidden thing already holds (a record,
source or graph id) is refused with one message whatever the content (:func:`taken`), so it
confirms nothing about what is hidden: identifiers are not secret (give private sources opaque
ids), content is.

>>> check_quad(ox.Quad(ox.NamedNode("urn:wb:entity:paris"), WB.locatedIn, ox.NamedNode("urn:x:fr"),
...                    ox.NamedNode("urn:wb:record:r1")), "data.nq:1")
>>> users = ox.NamedNode("urn:wb:graph:users")
>>> check_quad(ox.Quad(ox.NamedNode("urn:wb:agent:cora"), WB.role, WB.Admin, users), "data.nq:1")
Traceback (most recent call last):
...
workbench.errors.Forbidden: data.nq:1: writes Workbench's own graph <urn:wb:graph:users>; ...
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

import pyoxigraph as ox

from workbench.errors import Conflict, Forbidden
from workbench.ids import RECORD_PREFIX, SYSTEM_GRAPHS, source_iri
from workbench.resources import ontology_triples
from workbench.store.base import Store
from workbench.vocab import PREFIXES, RDF, WB, WB_NS

# IRIs Workbench mints for its own things; data may use other urn:wb: IRIs (entities, worlds).
OWN_PREFIXES = (
    "urn:wb:graph:",
    RECORD_PREFIX,
    "urn:wb:source:",
    "urn:wb:agent:",
    "urn:wb:activity:",
    "urn:wb:candidate:",
    "urn:wb:summary:",
    "urn:wb:tombstone:",
    "urn:wb:rule:",
    "urn:wb:rules:",
)
OWN_NODES = frozenset({"urn:wb:store"})
RESTORE = "an export is restored with `workbench restore FILE` into an empty store, by its owner"


@functools.cache
def bookkeeping() -> frozenset[ox.NamedNode]:
    """The terms of Workbench's vocabulary that describe its own records, users, queue and rules
    (everything the ontology declares but the relations and how relations are declared)."""
    triples = ontology_triples()
    relations = {t.subject for t in triples if t.predicate == RDF.type and t.object == WB.Relation}
    relations |= {t.subject for t in triples if t.predicate == WB.relationLabel}
    declared = {t.subject for t in triples if isinstance(t.subject, ox.NamedNode) and t.subject.value.startswith(WB_NS)}
    return frozenset(declared - relations - {WB.Relation, WB.relationLabel})


def own_graph(graph: ox.NamedNode) -> bool:
    """Whether ``graph`` is Workbench's own: a system graph, or any ``urn:wb:`` graph Workbench
    mints but a record's."""
    value = graph.value
    return graph in SYSTEM_GRAPHS or (value.startswith(OWN_PREFIXES) and not value.startswith(RECORD_PREFIX))


def check_graph(graph: ox.NamedNode, where: str | None) -> None:
    """Data goes into record graphs only. Raises Forbidden for one of Workbench's own graphs."""
    if own_graph(graph):
        raise Forbidden(
            f"writes Workbench's own graph <{graph.value}>; Workbench writes its own graphs (record metadata, "
            f"entities, the audit, users, the queue, summaries, rules) itself, from imports and commands. "
            f"Put data in a record's graph (<urn:wb:record:ID>) and the import adds its metadata; {RESTORE}",
            where=where,
            graph=graph.value,
        )


def check_term(term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple, where: str | None) -> None:
    """A term in data may be anything but one of Workbench's own IRIs or bookkeeping terms
    (entities and relations are fine). Raises Forbidden."""
    if isinstance(term, ox.Triple):
        for part in (term.subject, term.predicate, term.object):
            check_term(part, where)
        return
    if not isinstance(term, ox.NamedNode):
        return
    value = term.value
    if value.startswith(OWN_PREFIXES) or value in OWN_NODES:
        raise Forbidden(
            f"names <{value}>, one of Workbench's own records, sources, agents or activities; data may name "
            f"entities (urn:wb:entity:...) and relations; Workbench records the rest itself ({RESTORE})",
            where=where,
            term=value,
        )
    if term in bookkeeping():
        raise Forbidden(
            f"uses <{value}>, a term Workbench keeps its own records with (users, roles, status, visibility, "
            f"metadata); data may use the relations (see `workbench relations`) and other vocabularies",
            where=where,
            term=value,
        )


# A cheap first test for a pass over every term of a large file: an IRI that starts with none of
# these is none of Workbench's own terms (an own node or a bookkeeping term starts with one too).
OWN_STARTS = (*OWN_PREFIXES, *OWN_NODES, WB_NS)


def own_iri(term: ox.NamedNode) -> bool:
    """Whether an IRI is one of Workbench's own terms (not a graph: see :func:`own_graph`)."""
    value = term.value
    return value.startswith(OWN_PREFIXES) or value in OWN_NODES or (value.startswith(WB_NS) and term in bookkeeping())


def touches_own(quad: ox.Quad) -> bool:
    """Whether a quad's subject, predicate or object is one of Workbench's own terms (its graph is
    checked apart)."""
    for term in (quad.subject, quad.predicate, quad.object):
        if isinstance(term, ox.NamedNode):
            if own_iri(term):
                return True
        elif isinstance(term, ox.Triple) and touches_own(ox.Quad(term.subject, term.predicate, term.object)):
            return True
    return False


def check_quad(quad: ox.Quad, where: str | None) -> None:
    """The one check on a quad of data from outside: its graph, then each of its terms."""
    if isinstance(quad.graph_name, ox.NamedNode):
        check_graph(quad.graph_name, where)
    check_term(quad.subject, where)
    check_term(quad.predicate, where)
    check_term(quad.object, where)


def taken(kind: str, ident: str, where: str | None) -> Conflict:
    """The one answer to creating a ``kind`` under an id something the writer may not see holds:
    the same whatever the write's content, so that it confirms nothing about what is hidden."""
    return Conflict(f"the {kind} id {ident!r} is taken; choose another id", where=where)


@dataclass(frozen=True)
class Writer:
    """Who writes, and the store as they may see it (``seen``: the store itself for someone who
    may see everything). Lookups of what a write names go to ``seen``; the write goes to
    ``store``."""

    store: Store
    seen: Store

    @property
    def restricted(self) -> bool:
        return self.seen is not self.store

    def hidden_graphs(self, graphs: Iterable[ox.NamedNode]) -> frozenset[ox.NamedNode]:
        """Of ``graphs``, those the store holds that the writer may not see: asked about these
        graphs alone (:meth:`Store.held_graphs`), at a cost that grows with the write, not the store."""
        if not self.restricted:
            return frozenset()
        asked = list(graphs)
        return self.store.held_graphs(asked) - self.seen.held_graphs(asked)

    def snapshot(self) -> HiddenSnapshot:
        """Every graph and source id the writer may not see (grows with the store)."""
        if not self.restricted:
            return HiddenSnapshot(frozenset(), frozenset())
        query = PREFIXES + "SELECT ?id WHERE { GRAPH ?s { ?s a wb:Source ; dcterms:identifier ?id } }"

        def ids(store: Store) -> frozenset[str]:
            return frozenset(r["id"].value for r in store.select(query) if r["id"] is not None)

        return HiddenSnapshot(self.store.graph_names() - self.seen.graph_names(), ids(self.store) - ids(self.seen))

    def source_hidden(self, source_id: str) -> bool:
        """Whether the store holds a source with this id that the writer may not see."""
        if not self.restricted:
            return False
        source = source_iri(source_id)
        query = PREFIXES + f"ASK {{ GRAPH {source} {{ {source} a wb:Source }} }}"
        return bool(self.store.ask(query)) and not self.seen.ask(query)


@dataclass(frozen=True)
class HiddenSnapshot:
    """What a restricted writer may not see, listed whole: for a process that cannot ask the
    store (a large import's planner, which gets every graph name anyway)."""

    graphs: frozenset[ox.NamedNode]
    sources: frozenset[str]

    def hidden_graphs(self, graphs: Iterable[ox.NamedNode]) -> frozenset[ox.NamedNode]:
        return self.graphs.intersection(graphs)

    def source_hidden(self, source_id: str) -> bool:
        return source_id in self.sources


def everything(store: Store) -> Writer:
    """The writer who sees the whole store: its owner, an admin, anyone on a store with no users."""
    return Writer(store, store)
