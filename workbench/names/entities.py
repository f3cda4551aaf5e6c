"""Entities and their names: exact resolution, aliases, merges and splits, all over SPARQL.

A name binds through its key (:func:`workbench.names.keys.name_key`) and nothing else. Aliases are
registered by a person and may not be taken by another entity. A merge states ``owl:sameAs`` from
the merged entity to the one kept, as an attributed act; a split removes that statement and
records that it undid the merge. Resolution follows merges to the entity kept.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import pyoxigraph as ox

from workbench.errors import Ambiguous, Conflict, Invalid, NotFound
from workbench.ids import ENTITIES_GRAPH, SOURCE_PREFIX, entity_iri, entity_slug
from workbench.names.keys import name_key
from workbench.records.acts import activity
from workbench.store import Store
from workbench.store.base import reach
from workbench.store.caches import Kept
from workbench.values.records import Entity, Resolution
from workbench.vocab import OWL, PREFIXES, PROV, RDF, SKOS, WB


def literal(text: str) -> str:
    """A SPARQL string literal, escaped."""
    return str(ox.Literal(text))


NAMES_A_QUERY = 500


def registered(g: str) -> str:
    """A filter keeping the graphs ``g`` (a variable) where entities are registered and acted on:
    the shared entities graph, and sources' graphs (beside restricted records: :func:`places`).
    Content graphs may hold ``owl:sameAs`` and labels too; those are not a person's merges and aliases."""
    return f'FILTER({g} = {ENTITIES_GRAPH} || STRSTARTS(STR({g}), "{SOURCE_PREFIX}"))'


def names_query(keys: Sequence[str]) -> str:
    """The one query that binds these name keys (at most :data:`NAMES_A_QUERY`, sorted): what
    :func:`resolve_all` sends, so a question can send it ahead (:meth:`Store.prefetch`)."""
    # the keys inside each group: a group a reader's filter closes (access.rewrite) is evaluated
    # on its own by Oxigraph, not per key from outside it (34 s at 1.27M relations, not 10 ms)
    values = "VALUES ?k { " + " ".join(literal(k) for k in keys) + " }"
    return (PREFIXES + f"SELECT DISTINCT ?k ?e ?into WHERE {{ {{ {values} GRAPH ?g {{ ?e wb:nameKey ?k }} }} "
            f"UNION {{ {values} GRAPH ?g {{ ?e skos:prefLabel ?k }} }} "
            f"UNION {{ {values} GRAPH ?g {{ ?e skos:altLabel ?k }} }} "
            f"OPTIONAL {{ GRAPH ?s {{ ?e owl:sameAs ?into }} {registered('?s')} }} }}")


def prefetch_names(store: Store, names: Iterable[str | None], *more: str) -> None:
    """Send the query that will bind ``names`` (None: a role not asked), and ``more`` queries,
    with the question's version check (:meth:`Store.prefetch`): on a shared server, one round
    trip for all."""
    if not store.capabilities.round_trips:
        return  # nothing to save elsewhere (Store.prefetch does nothing): not even the query written
    keys = sorted({name_key(n) for n in names if n})
    store.prefetch(*([names_query(keys)] if len(keys) <= NAMES_A_QUERY else []), *more)


def _matches(store: Store, keys: Iterable[str]) -> list[tuple[str, str, str]]:
    """(key, entity carrying the name, entity it binds to after following merges) for each key.

    A name binds through a ``wb:nameKey`` (in the entities graph, or beside the restricted records
    that named the entity: see :func:`entity_quads`), or through a SKOS label that is
    already its own key (imports add a key only where the label differs from it, which keeps
    bulk common sense with hundreds of thousands of names cheap to load). Merges are followed
    by plain triple patterns, a level a query and only for merged entities (rare): no property
    path, which some engines evaluate wrongly inside OPTIONAL (Virtuoso 7 drops every row).
    """
    keys = sorted(set(keys))
    named = _named(store, keys) if store.cheap_patterns else [
        (r["k"].value, r["e"].value, r["into"].value if r["into"] else None)  # type: ignore[union-attr]
        for start in range(0, len(keys), NAMES_A_QUERY)
        for r in store.select(names_query(keys[start : start + NAMES_A_QUERY]))]
    ends = merged_into(store, {into for _, _, into in named if into})
    return sorted({(k, e, ends[into] if into else e) for k, e, into in named})


def _named(store: Store, keys: list[str]) -> list[tuple[str, str, str | None]]:
    """The rows :func:`names_query` gives, read by quad patterns (a store where they are cheap)."""
    out: set[tuple[str, str, str | None]] = set()
    for k in keys:
        for q in store.matching(None, None, ox.Literal(k)):  # one read for the three ways to name
            if q.predicate in _NAMING and not isinstance(q.subject, ox.Triple):
                merges = store.matching(q.subject, OWL.sameAs, None)
                into = {m.object.value for m in merges if _registered(m.graph_name)}  # type: ignore[union-attr]
                out.update((k, q.subject.value, i) for i in into or {None})
    return sorted(out, key=str)


_NAMING = (WB.nameKey, SKOS.prefLabel, SKOS.altLabel)


def _registered(g: object) -> bool:
    """:func:`registered` for one graph."""
    return g == ENTITIES_GRAPH or (isinstance(g, ox.NamedNode) and g.value.startswith(SOURCE_PREFIX))


def merged_into(store: Store, starts: set[str]) -> dict[str, str]:
    """For each entity, where its merges end (itself if it was not merged): the last node of its
    ``owl:sameAs`` chain (:func:`~workbench.store.base.reach`, one query a level)."""
    chains = reach(store, "?_same", OWL.sameAs, [ox.NamedNode(s) for s in sorted(starts)], within=registered("?_same"))
    return {start.value: chain[-1].value for start, chain in chains.items()}


def resolve_keys(store: Store, keys: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """For each name key, the entities it binds to after following merges (sorted IRIs); on a
    store whose quad patterns are cheap, kept while its version stays (:class:`_Bound`)."""
    keys = sorted(set(keys))
    return _Bound.of(store).many(keys, lambda missing: _resolve(store, missing)) if store.cheap_patterns \
        else _resolve(store, keys)


def _resolve(store: Store, keys: list[str]) -> dict[str, tuple[str, ...]]:
    found: dict[str, set[str]] = {k: set() for k in keys}
    for key, _, bound in _matches(store, keys):
        found[key].add(bound)
    return {k: tuple(sorted(iris)) for k, iris in found.items()}


class _Bound(Kept):
    """What name keys bind to on one store, kept while its version stays: names, aliases and
    merges change only by a write, which moves it. For a store this process reads cheaply
    (:attr:`Store.cheap_patterns`), where the version is known without asking anyone."""


def resolve(store: Store, name: str) -> Resolution:
    """Bind a name exactly: one entity, several (ambiguous) or none (unknown)."""
    return resolve_all(store, [name])[name]


def resolve_all(store: Store, names: Iterable[str]) -> dict[str, Resolution]:
    """:func:`resolve` for several names, in one query."""
    names = list(names)
    found = resolve_keys(store, [name_key(n) for n in names])
    out = {}
    for name in names:
        iris = found[name_key(name)]
        outcome = "bound" if len(iris) == 1 else ("ambiguous" if iris else "unknown")
        out[name] = Resolution(name=name, outcome=outcome, entities=iris)
    return out


def entity_ref(store: Store, ref: str) -> ox.NamedNode:
    """An entity named by ``<IRI>``, a ``urn:``/``http(s):`` IRI, or a name that binds exactly."""
    text = ref.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    if text.startswith(("urn:", "http://", "https://")):
        node = ox.NamedNode(text)
        if not store.ask(PREFIXES + f"ASK {{ GRAPH ?g {{ {node} a wb:Entity }} }}"):
            raise NotFound(f"no entity {node}")
        return node
    res = resolve(store, ref)
    if res.outcome == "ambiguous":
        raise Ambiguous(ref, res.entities)
    if res.outcome == "unknown":
        raise NotFound(f"no entity is named {ref!r} (names bind exactly; see `workbench entities list`)")
    return ox.NamedNode(res.entities[0])


def mint(store: Store, name: str, taken: set[str], *, seed: str | None = None) -> ox.NamedNode:
    """A new entity IRI from a readable stem, unused in the store and in ``taken``. With a
    ``seed`` (an entity only restricted records name) the stem carries a digest of it, so the IRI
    does not occupy the plain stem someone who may not see it would get for the same name."""
    stem = entity_slug(name)
    if seed is not None:
        stem += "-" + hashlib.sha256(seed.encode()).hexdigest()[:8]
    for n in range(1, 10_000):
        iri = entity_iri(stem if n == 1 else f"{stem}-{n}")
        if iri.value in taken:
            continue
        if not store.ask(f"ASK {{ GRAPH ?g {{ {iri} ?p ?o }} }}"):  # in any graph, hidden or not
            taken.add(iri.value)
            return iri
    raise Conflict(f"too many entities share the stem {stem!r}")


Term = ox.NamedNode | ox.Literal | ox.BlankNode
DESCRIPTION = (RDF.type, SKOS.prefLabel, WB.nameKey, PROV.wasGeneratedBy)  # what entity_quads writes


Described = dict[ox.NamedNode, list[tuple[ox.NamedNode, Term]]]  # graph -> (predicate, object)


def descriptions(store: Store, iris: Iterable[str]) -> dict[str, Described]:
    """For each entity, the graphs that describe it (:func:`entity_quads`) and what each says."""
    iris = sorted(set(iris))
    if not iris:
        return {}
    preds = " ".join(str(p) for p in DESCRIPTION)
    rows = store.select(PREFIXES + f"""SELECT ?e ?g ?p ?o WHERE {{ VALUES ?e {{ {' '.join(f'<{i}>' for i in iris)} }}
        GRAPH ?g {{ ?e a wb:Entity ; ?p ?o }} VALUES ?p {{ {preds} }} }} ORDER BY ?g ?p ?o""")
    out: dict[str, Described] = {}
    for r in rows:
        out.setdefault(r["e"].value, {}).setdefault(r["g"], []).append((r["p"], r["o"]))  # type: ignore[union-attr, arg-type]
    return out


def places(store: Store, iris: Sequence[ox.NamedNode]) -> list[ox.NamedNode]:
    """Where a person's act on these entities (an alias, a merge, a split) is written: the shared
    entities graph when everyone may see all their names; else every graph that describes each
    of those only restricted records name (beside those records: whoever sees the act sees the
    entities). Raises Conflict when no graph describes them all (two entities only restricted
    records of different sources name)."""
    rows = store.select(PREFIXES + f"""SELECT DISTINCT ?e ?g WHERE {{ VALUES ?e {{ {' '.join(str(i) for i in iris)} }}
        GRAPH ?g {{ ?e a wb:Entity }} }}""")
    described: dict[str, set[ox.NamedNode]] = {}
    for r in rows:
        described.setdefault(r["e"].value, set()).add(r["g"])  # type: ignore[union-attr, arg-type]
    # an entity described nowhere is known by the labels of content anyone may read (common sense)
    private = [described[i.value] for i in iris if i.value in described and ENTITIES_GRAPH not in described[i.value]]
    if not private:
        return [ENTITIES_GRAPH]
    common = set.intersection(*private)
    if not common:
        raise Conflict(f"{', '.join(str(i) for i in iris)} are named only by restricted records of different "
                       "sources: no reader is sure to see both, so they cannot be merged here; name both in one "
                       "record, or merge them into an entity everyone may see")
    return sorted(common, key=str)


def _label(name: str, lang: str | None) -> ox.Literal:
    """A name as a literal, in ``lang`` if given. Raises Invalid for a tag that is not BCP 47."""
    if not lang:
        return ox.Literal(name)
    try:
        return ox.Literal(name, language=lang)
    except ValueError as exc:
        raise Invalid(f"{lang!r} is not a language tag (en, zh, pt-BR): {exc}", where="lang") from None


def entity_quads(iri: ox.NamedNode, name: str, activity: ox.NamedNode, lang: str | None = None,
                 graph: ox.NamedNode = ENTITIES_GRAPH) -> list[ox.Quad]:
    """The quads that create an entity with its first name, in ``graph``: the entities graph,
    whoever may see it, or, for an entity only restricted records name, the graph of each such
    record's source (so its names are seen by whoever sees one of them)."""
    g = graph
    label = _label(name, lang)
    return [
        ox.Quad(iri, RDF.type, WB.Entity, g),
        ox.Quad(iri, SKOS.prefLabel, label, g),
        ox.Quad(iri, WB.nameKey, ox.Literal(name_key(name)), g),
        ox.Quad(iri, PROV.wasGeneratedBy, activity, g),
    ]


def add(store: Store, name: str, *, actor: str, now: str, lang: str | None = None) -> ox.NamedNode:
    """Register a new entity under a name, even if the name is already taken (then it is ambiguous)."""
    act, quads = activity("entity", PROV.Activity, actor=actor, now=now, graph=ENTITIES_GRAPH)
    iri = mint(store, name, set())
    quads += entity_quads(iri, name, act, lang)
    store.apply(insert=quads)
    return iri


def add_alias(
    store: Store, ref: str, alias: str, *, actor: str, now: str, lang: str | None = None, seen: Store | None = None
) -> ox.NamedNode:
    """Register ``alias`` for an entity. Raises :class:`Conflict` if another entity has that name.
    ``seen`` is the store as the writer may see it (default: all of it): the entity and the
    names that would conflict are looked up there, so nothing they may not see is named."""
    seen = seen or store
    iri = entity_ref(seen, ref)
    key = name_key(alias)
    current = canonical(seen, iri)
    bound = resolve_keys(seen, [key])[key]
    holders = [e for e in bound if e != current.value]
    if holders:
        raise Conflict(
            f"the alias {alias!r} is already a name of {', '.join('<' + h + '>' for h in holders)}; "
            "merge the entities if they are the same, or choose another alias",
            holders=holders,
        )
    if current.value in bound:
        return iri  # already a name of this entity: nothing to register
    label = _label(alias, lang)
    act, quads = None, []
    for g in places(store, [iri]):
        act, made = activity("alias", WB.AliasRegistration, actor=actor, now=now, graph=g, iri=act)
        quads += [
            *made,
            ox.Quad(act, WB.aliasOf, iri, g),
            ox.Quad(act, WB.alias, label, g),
            ox.Quad(iri, SKOS.altLabel, label, g),
            ox.Quad(iri, WB.nameKey, ox.Literal(key), g),
        ]
    store.apply(insert=quads)
    return iri


def canonical(store: Store, iri: ox.NamedNode) -> ox.NamedNode:
    return ox.NamedNode(merged_into(store, {iri.value})[iri.value])


def merge(
    store: Store, keep: str, other: str, *, actor: str, now: str, reason: str, seen: Store | None = None
) -> ox.NamedNode:
    """State that ``other`` is the same entity as ``keep``; returns the merge activity. Both are
    looked up in ``seen`` (see :func:`add_alias`)."""
    act, quads = merge_quads(seen or store, keep, other, actor=actor, now=now, reason=reason, everything=store)
    store.apply(insert=quads)
    return act


def merge_quads(
    seen: Store, keep: str, other: str, *, actor: str, now: str, reason: str, everything: Store | None = None
) -> tuple[ox.NamedNode, list[ox.Quad]]:
    """The merge activity and what it writes, not written: a caller that decides more in the same
    update (approving a proposed merge, :mod:`workbench.review.guessed`) writes them with the rest.
    Raises NotFound, Ambiguous, Conflict (already the same entity)."""
    kept = canonical(seen, entity_ref(seen, keep))
    merged = canonical(seen, entity_ref(seen, other))
    if kept == merged:
        raise Conflict(f"{kept} and {merged} are already the same entity")
    act: ox.NamedNode | None = None
    quads: list[ox.Quad] = []
    for g in places(everything or seen, [kept, merged]):
        act, made = activity("merge", WB.Merge, actor=actor, now=now, graph=g, reason=reason, iri=act)
        quads += [
            *made,
            ox.Quad(act, WB.mergedEntity, merged, g),
            ox.Quad(act, WB.mergedInto, kept, g),
            ox.Quad(merged, OWL.sameAs, kept, g),
        ]
    assert act is not None
    return act, quads


def split(store: Store, ref: str, *, actor: str, now: str, reason: str, seen: Store | None = None) -> ox.NamedNode:
    """Undo the merge that folded this entity into another; returns the split activity. The
    entity and its merge are looked up in ``seen`` (see :func:`add_alias`)."""
    lookup = seen or store
    text = ref.strip().strip("<>")
    if text.startswith(("urn:", "http://", "https://")):
        iri = ox.NamedNode(text)
    else:
        # A merged entity no longer binds by name (its names lead to the one kept): find the
        # entities that carry the name and were merged away.
        carriers = _matches(lookup, [name_key(ref)])
        merged = sorted({e for _, e, bound in carriers if e != bound})
        if not carriers:
            raise NotFound(f"no entity is named {ref!r}")
        if len(merged) != 1:
            raise Invalid(f"name the merged entity by its IRI; {ref!r} names {len(merged)} merged entities")
        iri = ox.NamedNode(merged[0])
    rows = lookup.select(
        PREFIXES + f"SELECT ?m ?into WHERE {{ GRAPH ?g {{ {iri} owl:sameAs ?into . "
        f"?m a wb:Merge ; wb:mergedEntity {iri} ; wb:mergedInto ?into . }} {registered('?g')} "
        "FILTER NOT EXISTS { GRAPH ?u { ?s wb:undoes ?m } } }"
    )
    if not rows:
        raise Conflict(f"{iri} is not merged into another entity; nothing to split")
    merge_act, into = rows[0]["m"], rows[0]["into"]
    # the split goes where the merge is (every graph that holds it: see places())
    where = store.select(PREFIXES + f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ {iri} owl:sameAs {into} }} "
                         f"{registered('?g')} }}")
    act: ox.NamedNode | None = None
    quads: list[ox.Quad] = []
    gone: list[ox.Quad] = []
    for row in where:
        g = row["g"]
        act, made = activity("split", WB.Split, actor=actor, now=now, graph=g, reason=reason, iri=act)  # type: ignore[arg-type]
        quads += [*made, ox.Quad(act, WB.undoes, merge_act, g)]  # type: ignore[arg-type]
        gone.append(ox.Quad(iri, OWL.sameAs, into, g))  # type: ignore[arg-type]
    assert act is not None
    store.apply(insert=quads, delete=gone)
    return act


def describe(store: Store, iris: Iterable[str] | None = None) -> list[Entity]:
    """Entities with their names and aliases; all of them when ``iris`` is None."""
    values = ""
    if iris is not None:
        values = "VALUES ?e { " + " ".join(f"<{i}>" for i in iris) + " }"
    rows = store.select(
        PREFIXES + f"SELECT DISTINCT ?e ?name ?alias ?into WHERE {{ {values} GRAPH ?d {{ ?e a wb:Entity }} "
        f"{{ GRAPH ?d {{ ?e skos:prefLabel ?name }} }} "
        f"UNION {{ GRAPH ?a {{ ?e skos:altLabel ?alias }} {registered('?a')} }} "
        f"UNION {{ GRAPH ?m {{ ?e owl:sameAs ?into }} {registered('?m')} }} }}"
    )
    names: dict[str, list[str]] = {}
    aliases: dict[str, list[tuple[str, str | None]]] = {}
    merged: dict[str, str] = {}
    for row in rows:
        e = row["e"].value  # type: ignore[union-attr]
        names.setdefault(e, [])
        if row["name"] is not None:
            names[e].append(row["name"].value)
        if row["alias"] is not None:
            a = row["alias"]
            aliases.setdefault(e, []).append((a.value, a.language))  # type: ignore[union-attr]
        if row["into"] is not None:
            merged[e] = row["into"].value
    return [
        Entity(
            iri=e,
            names=tuple(sorted(n)),
            aliases=tuple(sorted(aliases.get(e, []), key=lambda x: (x[0], x[1] or ""))),
            merged_into=merged.get(e),
        )
        for e, n in sorted(names.items())
    ]


def check_bindings(bindings: Mapping[str, tuple[str, ...]], where: Mapping[str, str]) -> None:
    """Raise :class:`Ambiguous` for the first name key that binds several entities."""
    for key, iris in sorted(bindings.items()):
        if len(iris) > 1:
            raise Ambiguous(key, iris, where=where.get(key))
