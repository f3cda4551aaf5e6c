"""What a person may see: the store as it looks to them, for every read.

Access follows the source. A source with ``wb:visibleTo`` agents is visible only to those
people and to members (``wb:memberOf``) of those groups; a source with none is visible to
everyone. A requester sees an assertion only if they may see its source. Rather than filter each
of the many reads (lookups, rule bodies, counts, recall, SPARQL with ``GRAPH ?g`` and ``FROM``),
a restricted reader gets a **view**: an in-memory copy of the store without what they may not
see. Everything above then runs unchanged on the view, so a derived conclusion can only use
premises they may see, a count counts only those, recall and guesses rank only those, and an
unknown id is unknown whether it is hidden or absent. The view holds no:

- assertion graph whose source is hidden, nor its metadata, nor links to it from visible
  records (``wb:supersedes``, ``wb:supportedBy``), nor the hidden source itself;
- entity mentioned only by hidden assertions (its names, alias registrations and merges);
- candidate taken from a hidden source, nor a summary of a hidden record;
- import or proposal activity, or agent, that nothing left refers to;
- token hash, for anyone (SPARQL shows the users graph without them).

Admins, and everyone on a store without users, see every source; their SPARQL still runs on a
view (without token hashes). Views are cached per set of agents and rebuilt when the store's
:meth:`~workbench.store.Store.version` moves. Writes never go through a view.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from workbench.access import users
from workbench.access.users import Role
from workbench.errors import Forbidden
from workbench.ids import (
    ENTITIES_GRAPH,
    ENTITY_PREFIX,
    META_GRAPH,
    QUEUE_GRAPH,
    SUMMARIES_GRAPH,
    USERS_GRAPH,
    agent_iri,
    id_from_iri,
)
from workbench.store.base import Batch, Capabilities, Check, Progress, Store
from workbench.store.pyox import PyoxStore
from workbench.vocab import PREFIXES

CACHED_VIEWS = 8  # distinct sets of agents with a view in memory at once


@dataclass(frozen=True)
class Viewer:
    """Who reads: their name and groups (``agents``), or someone who sees every source."""

    name: str | None
    agents: frozenset[str] = frozenset()
    sees_all: bool = False

    @property
    def key(self) -> str:
        """Names the view: readers with the same agents share one."""
        text = "*" if self.sees_all else "\n".join(sorted(self.agents))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


EVERYONE = Viewer(None, sees_all=True)


def viewer(store: Store, name: str | None) -> Viewer:
    """The reader ``name`` is on ``store``: every source on a store with no users, for an admin
    and for None (the store's owner on this machine); else their own and their groups' sources.
    A name that is not a user sees the sources visible to everyone and to that name.

    >>> from workbench.store import MemoryStore
    >>> viewer(MemoryStore(), "bob").sees_all
    True
    """
    if name is None:
        return EVERYONE
    everyone = users.users(store)
    if not everyone:
        return EVERYONE
    found = next((u for u in everyone if u.name == name), None)
    if found is not None and Role.ADMIN in found.roles:
        return Viewer(name, sees_all=True)
    groups = found.groups if found is not None else frozenset()
    return Viewer(name, frozenset({name}) | groups)


def hidden_sources(store: Store, reader: Viewer) -> list[ox.NamedNode]:
    """The sources ``reader`` may not see."""
    if reader.sees_all:
        return []
    agents = " ".join(str(agent_iri(a)) for a in sorted(reader.agents))
    rows = store.select(
        PREFIXES + f"""SELECT DISTINCT ?s WHERE {{ GRAPH {META_GRAPH} {{ ?s wb:visibleTo ?any }}
        FILTER NOT EXISTS {{ GRAPH {META_GRAPH} {{ ?s wb:visibleTo ?a }} VALUES ?a {{ {agents} }} }} }}"""
    )
    return [r["s"] for r in rows if isinstance(r["s"], ox.NamedNode)]


class ViewStore(PyoxStore):
    """A read-only copy of a store as one reader may see it (see the module's note)."""

    capabilities = Capabilities(
        name="view", on_disk=False, crash_safe_imports=False, bulk_load=False, staged_writes=False
    )

    def __init__(self, base: Store, reader: Viewer, db: ox.Store, version: str) -> None:
        self.base = base
        self.reader = reader
        self.location = f"{base.location} as seen by {reader.name or 'everyone'}"
        self._db = db
        self.built_from = version

    @property
    def files_dir(self) -> Path:
        """Its own vector indexes, beside the store's, one folder per set of agents."""
        return self.base.files_dir / "views" / self.reader.key

    def _refuse(self) -> Forbidden:
        return Forbidden(f"{self.location} is a read-only view: writes go to the store itself")

    def update(self, update: str) -> None:
        raise self._refuse()

    def remove(self, quads: Sequence[ox.Quad]) -> None:
        raise self._refuse()

    def write(self, batch: Batch, *, progress: Progress | None = None, check: Check | None = None) -> None:
        raise self._refuse()


def build(base: Store, reader: Viewer, version: str) -> ViewStore:
    """A view of ``base`` for ``reader``: the store's quads, less what they may not see."""
    buf = io.BytesIO()
    base.dump(buf, format=ox.RdfFormat.N_QUADS)
    db = ox.Store()
    db.bulk_load(buf.getvalue(), format=ox.RdfFormat.N_QUADS)
    del buf
    _filter(db, hidden_sources(base, reader), reader)
    return ViewStore(base, reader, db, version)


def _column(db: ox.Store, query: str, var: str = "e") -> list[ox.NamedNode]:
    """One variable's IRIs from a SELECT over ``db``."""
    result = db.query(query)
    assert isinstance(result, ox.QuerySolutions)
    return [s[var] for s in result if isinstance(s[var], ox.NamedNode)]


def _values(terms: Iterable[ox.NamedNode]) -> str:
    return " ".join(str(t) for t in terms)


def _filter(db: ox.Store, sources: list[ox.NamedNode], reader: Viewer) -> None:
    """Take out of ``db`` what ``reader`` may not see; every step runs in the store's engine."""
    db.update(PREFIXES + f"DELETE WHERE {{ GRAPH {USERS_GRAPH} {{ ?u wb:tokenHash ?h }} }}")
    meta, ents = META_GRAPH, ENTITIES_GRAPH
    if sources:
        records = _column(
            db, PREFIXES + f"SELECT DISTINCT ?r WHERE {{ VALUES ?s {{ {_values(sources)} }} "
            f"GRAPH {meta} {{ ?r prov:wasDerivedFrom ?s }} }}", "r"
        )
        gone = _values([*records, *sources])
        mentioned = _column(
            db, f"""SELECT DISTINCT ?e WHERE {{ VALUES ?r {{ {_values(records)} }}
            {{ GRAPH ?r {{ {{ ?e ?p ?o }} UNION {{ ?o ?p ?e }} }} }} UNION {{ GRAPH {meta} {{ ?r ?p ?e }} }}
            FILTER(isIRI(?e) && STRSTARTS(STR(?e), "{ENTITY_PREFIX}")) }}"""
        )
        steps = [f"DROP SILENT GRAPH {r}" for r in records]
        steps += [
            f"DELETE {{ GRAPH {meta} {{ ?x ?p ?o }} }} WHERE {{ VALUES ?x {{ {gone} }} GRAPH {meta} {{ ?x ?p ?o }} }}",
            f"DELETE {{ GRAPH ?g {{ ?s ?p ?x }} }} WHERE {{ VALUES ?x {{ {gone} }} GRAPH ?g {{ ?s ?p ?x }} }}",
            f"""DELETE {{ GRAPH {SUMMARIES_GRAPH} {{ ?m ?p ?o }} }} WHERE {{ VALUES ?x {{ {gone} }}
                GRAPH {SUMMARIES_GRAPH} {{ ?m wb:summarizes ?x ; ?p ?o }} }}""",
        ]
        db.update(PREFIXES + " ;\n".join(steps))
        _drop_entities(db, mentioned)
    _drop_candidates(db, {id_from_iri(s) for s in sources}, reader)
    # What nothing left refers to: import and proposal runs, then agents, graph by graph.
    db.update(
        PREFIXES + f"""DELETE {{ GRAPH ?g {{ ?a ?p ?o }} }} WHERE {{ VALUES ?g {{ {meta} {QUEUE_GRAPH} }}
        GRAPH ?g {{ ?a a ?kind ; ?p ?o }} VALUES ?kind {{ wb:Import wb:Proposal }}
        FILTER NOT EXISTS {{ GRAPH ?g {{ ?x ?q ?a }} }} }} ;
        DELETE {{ GRAPH ?g {{ ?a ?p ?o }} }} WHERE {{ VALUES ?g {{ {meta} {QUEUE_GRAPH} {ents} {SUMMARIES_GRAPH} }}
        GRAPH ?g {{ ?a ?p ?o }} FILTER(STRSTARTS(STR(?a), "urn:wb:agent:"))
        FILTER NOT EXISTS {{ GRAPH ?g {{ ?x ?q ?a }} }} }}"""
    )


def _drop_entities(db: ox.Store, mentioned: list[ox.NamedNode]) -> None:
    """Entities the hidden assertions mentioned that nothing visible mentions any more."""
    if not mentioned:
        return
    ents = ENTITIES_GRAPH
    orphans = _column(
        db, f"""SELECT ?e WHERE {{ VALUES ?e {{ {_values(mentioned)} }}
        FILTER NOT EXISTS {{ GRAPH ?g {{ {{ ?e ?p ?o }} UNION {{ ?o ?p ?e }} }} FILTER(?g != {ents}) }} }}"""
    )
    if orphans:
        db.update(
            f"""DELETE {{ GRAPH {ents} {{ ?a ?q ?b }} }} WHERE {{ VALUES ?e {{ {_values(orphans)} }}
            GRAPH {ents} {{ ?a ?p ?e ; ?q ?b }} }} ;
            DELETE {{ GRAPH {ents} {{ ?e ?p ?o }} }} WHERE {{ VALUES ?e {{ {_values(orphans)} }}
            GRAPH {ents} {{ ?e ?p ?o }} }}"""
        )


def _drop_candidates(db: ox.Store, hidden: set[str], reader: Viewer) -> None:
    """Candidates whose source is hidden, or that say they are visible only to others."""
    if reader.sees_all:
        return
    drop = []
    rows = db.query(PREFIXES + f"SELECT ?c ?payload WHERE {{ GRAPH {QUEUE_GRAPH} {{ ?c wb:payload ?payload }} }}")
    assert isinstance(rows, ox.QuerySolutions)
    for s in rows:
        try:
            record = json.loads(s["payload"].value)
        except ValueError:
            continue  # not a candidate's record: nothing to judge it by
        source = record.get("source") if isinstance(record, dict) else None
        source_id = source.get("id") if isinstance(source, dict) else source
        visible_to = set(record.get("visible_to") or ()) if isinstance(record, dict) else set()
        if source_id in hidden or (visible_to and not visible_to & reader.agents):
            drop.append(s["c"])
    if drop:
        db.update(
            f"""DELETE {{ GRAPH {QUEUE_GRAPH} {{ ?c ?p ?o }} }} WHERE {{ VALUES ?c {{ {_values(drop)} }}
            GRAPH {QUEUE_GRAPH} {{ ?c ?p ?o }} }} ;
            DELETE {{ GRAPH {QUEUE_GRAPH} {{ ?a ?q ?b }} }} WHERE {{ VALUES ?c {{ {_values(drop)} }}
            GRAPH {QUEUE_GRAPH} {{ ?a ?p ?c ; ?q ?b }} }}"""
        )


class Views:
    """The views of one store, built on first use and again after the store changes."""

    def __init__(self, base: Store, size: int = CACHED_VIEWS) -> None:
        self.base = base
        self.size = size
        self._views: OrderedDict[str, ViewStore] = OrderedDict()
        self._hidden: dict[str, tuple[str, bool]] = {}
        self._lock = threading.Lock()

    def restricted(self, reader: Viewer) -> bool:
        """Whether the store holds a source ``reader`` may not see (cached per store version)."""
        if reader.sees_all:
            return False
        version = self.base.version()
        known = self._hidden.get(reader.key)
        if known is None or known[0] != version:
            known = (version, bool(hidden_sources(self.base, reader)))
            self._hidden[reader.key] = known
        return known[1]

    def view(self, reader: Viewer) -> ViewStore:
        """The view for ``reader``, current with the store."""
        with self._lock:  # one build at a time: concurrent readers of a stale view wait for one copy
            version = self.base.version()
            found = self._views.get(reader.key)
            if found is None or found.built_from != version:
                found = build(self.base, reader, version)
                self._views[reader.key] = found
            self._views.move_to_end(reader.key)
            while len(self._views) > self.size:
                self._views.popitem(last=False)
            return found


