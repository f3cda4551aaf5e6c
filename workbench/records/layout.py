"""Bringing a store written in an earlier layout to the current one.

Since 2026-12-05 a source's description (its id, who said it, when, its text, its locator and
who may see it, with the agents it names) lives in the source's own graph, ``GRAPH
<urn:wb:source:ID>``, not in the shared metadata graph: what a reader may not see of a source is
then one named graph, which an engine can withhold
(docs/decisions/20261205-visibility-the-engine-enforces.md). A store or an export from before
keeps them in ``urn:wb:graph:meta``; :func:`migrate` moves them, and is run when a Workbench
opens a store and after a restore.
"""

from __future__ import annotations

from workbench.ids import META_GRAPH
from workbench.records.acts import AGENT_KINDS
from workbench.store.base import Store
from workbench.vocab import PREFIXES


def _kinds() -> str:
    return " ".join(str(k) for k in AGENT_KINDS)


def outdated(store: Store) -> bool:
    """Whether the store keeps a source's description in the metadata graph (one ASK)."""
    return store.ask(PREFIXES + f"ASK {{ GRAPH {META_GRAPH} {{ ?s a wb:Source }} }}")


def migrate(store: Store) -> bool:
    """Move every source's description, with the agents it names, from the metadata graph into
    the source's own graph; True when there was something to move. Each step is its own update
    and the last one deletes, so a move cut short is finished by the next (engines that apply a
    request of several operations in part cannot leave a source half moved and forgotten)."""
    if not outdated(store):
        return False
    meta = META_GRAPH
    store.update(PREFIXES + f"""INSERT {{ GRAPH ?s {{ ?s ?p ?o }} }}
        WHERE {{ GRAPH {meta} {{ ?s a wb:Source ; ?p ?o }} }}""")
    store.update(PREFIXES + f"""INSERT {{ GRAPH ?s {{ ?a ?q ?b }} }}
        WHERE {{ GRAPH {meta} {{ ?s a wb:Source ; ?p ?a . ?a a ?kind ; ?q ?b }} VALUES ?kind {{ {_kinds()} }} }}""")
    store.update(PREFIXES + f"""DELETE {{ GRAPH {meta} {{ ?s ?p ?o }} }}
        WHERE {{ GRAPH {meta} {{ ?s a wb:Source ; ?p ?o }} }}""")
    return True
