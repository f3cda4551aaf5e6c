"""IRIs of the things Workbench stores, and the graphs that hold them.

Identifiers people give (record ids, source ids) are kept verbatim as ``dcterms:identifier``
and percent-encoded into IRIs, so any id round-trips exactly.

>>> record_iri("r-1 é").value
'urn:wb:record:r-1%20%C3%A9'
>>> id_from_iri(record_iri("r-1 é"))
'r-1 é'
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote, unquote

from pyoxigraph import NamedNode

ONTOLOGY_GRAPH = NamedNode("urn:wb:graph:ontology")
META_GRAPH = NamedNode("urn:wb:graph:meta")
ENTITIES_GRAPH = NamedNode("urn:wb:graph:entities")
AUDIT_GRAPH = NamedNode("urn:wb:graph:audit")
USERS_GRAPH = NamedNode("urn:wb:graph:users")
# API token hashes, apart from the users' names and roles: its audience (wb:visibleTo the store
# node) is no reader, so a rewritten read never returns them (workbench.access.restricted)
TOKENS_GRAPH = NamedNode("urn:wb:graph:tokens")
QUEUE_GRAPH = NamedNode("urn:wb:graph:queue")  # the curators' claim on the queue (candidates: a graph each)
RULES_GRAPH = NamedNode("urn:wb:graph:rules")  # rule versions, their texts, proposals and sign-offs
SUMMARIES_GRAPH = NamedNode("urn:wb:graph:summaries")  # approved summaries: never evidence
DERIVED_GRAPH = NamedNode("urn:wb:graph:derived")  # conclusions for one SPARQL query: never stored
STORE_NODE = NamedNode("urn:wb:store")  # carries the store's revision (wb:revision)
# Graphs Workbench manages itself; an import may not write content into them.
SYSTEM_GRAPHS = frozenset(
    {ONTOLOGY_GRAPH, META_GRAPH, ENTITIES_GRAPH, AUDIT_GRAPH, USERS_GRAPH, TOKENS_GRAPH, QUEUE_GRAPH,
     SUMMARIES_GRAPH, RULES_GRAPH, DERIVED_GRAPH}
)

RECORD_PREFIX = "urn:wb:record:"
SOURCE_PREFIX = "urn:wb:source:"
ENTITY_PREFIX = "urn:wb:entity:"
AGENT_PREFIX = "urn:wb:agent:"
ACTIVITY_PREFIX = "urn:wb:activity:"
CANDIDATE_PREFIX = "urn:wb:candidate:"
SUMMARY_PREFIX = "urn:wb:summary:"  # a summary, and the graph that holds it
TOMBSTONE_PREFIX = "urn:wb:tombstone:"  # the graph that holds an erased record's tombstone

_SAFE = "-._~!$&'()*+,;=@"


def _encode(text: str) -> str:
    return quote(text, safe=_SAFE)


def record_iri(record_id: str) -> NamedNode:
    """The IRI of a record (an assertion, and its named graph)."""
    return NamedNode(RECORD_PREFIX + _encode(record_id))


def source_iri(source_id: str) -> NamedNode:
    """The IRI of a source, and of the named graph that describes it (with who may see it)."""
    return NamedNode(SOURCE_PREFIX + _encode(source_id))


def source_graph(graph: object) -> bool:
    """Whether ``graph`` is a source's graph."""
    return isinstance(graph, NamedNode) and graph.value.startswith(SOURCE_PREFIX)


def bookkeeping_graph(graph: object) -> bool:
    """Whether ``graph`` holds Workbench's own description of things (a system graph, a source's
    graph, an act's, a candidate's, a summary's or a tombstone's) rather than a record's content.

    >>> bookkeeping_graph(source_iri("s1")), bookkeeping_graph(record_iri("r1"))
    (True, False)
    """
    return graph in SYSTEM_GRAPHS or (isinstance(graph, NamedNode) and graph.value.startswith(
        (SOURCE_PREFIX, ACTIVITY_PREFIX, CANDIDATE_PREFIX, SUMMARY_PREFIX, TOMBSTONE_PREFIX)))


def agent_iri(name: str) -> NamedNode:
    """A person, group or model by the name it is given in records (``alice``, ``model:gpt-x``)."""
    return NamedNode(AGENT_PREFIX + _encode(name))


def summary_iri(summary_id: str) -> NamedNode:
    """A summary, and the graph that holds it (seen by whoever sees every record it summarises)."""
    return NamedNode(SUMMARY_PREFIX + _encode(summary_id))


def tombstone_graph(record: NamedNode) -> NamedNode:
    """The graph of an erased record's tombstone, which carries who may see it (``wb:visibleTo``)."""
    return NamedNode(TOMBSTONE_PREFIX + record.value.removeprefix(RECORD_PREFIX))


def candidate_iri(candidate_id: str) -> NamedNode:
    return NamedNode(CANDIDATE_PREFIX + _encode(candidate_id))


def activity_iri(kind: str, stamp: str) -> NamedNode:
    return NamedNode(f"{ACTIVITY_PREFIX}{kind}:{_encode(stamp)}")


def id_from_iri(iri: NamedNode) -> str:
    """The identifier a record, source or agent IRI was made from."""
    value = iri.value
    for prefix in (RECORD_PREFIX, SOURCE_PREFIX, AGENT_PREFIX, ENTITY_PREFIX, CANDIDATE_PREFIX):
        if value.startswith(prefix):
            return unquote(value[len(prefix) :])
    return value


def entity_slug(name: str) -> str:
    """A readable IRI stem for a new entity; the IRI never changes when the entity's names do.

    >>> entity_slug("Paris Hilton"), entity_slug("巴黎")
    ('paris-hilton', '巴黎')
    """
    ascii_ish = unicodedata.normalize("NFKC", name).casefold()
    slug = re.sub(r"[\s\W]+", "-", ascii_ish, flags=re.UNICODE).strip("-")
    return slug or "entity"


def entity_iri(slug: str) -> NamedNode:
    return NamedNode(ENTITY_PREFIX + _encode(slug))
