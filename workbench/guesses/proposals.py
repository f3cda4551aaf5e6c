"""Work the guesser proposes for curators (``workbench guesses propose``): for an entity with no
kind, its likely kinds; for two entities that look like one, a possible merge. Each is a candidate
for the review queue (:mod:`workbench.review.guessed`) with the model's version, score, stated
chance and the things it rests on; nothing is typed or merged until a person approves.

A kind is proposed only where its chance was measured and is at least ``min_chance`` (a guess
whose chance is unknown is not a curator's work unless they ask for it with ``min_chance=0``).
A merge is proposed where two entities' names are spelled alike (:func:`spelled_alike`) and
their own facts mostly agree: two things of one kind with nothing else recorded are not one thing. How often such a
merge is right has not been measured (no store here records which entities were duplicates),
so its chance is stated as not measured.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

import pyoxigraph as ox

from workbench.answers.evidence import Labels
from workbench.guesses.things import Guesser
from workbench.ids import ENTITIES_GRAPH, id_from_iri
from workbench.names.entities import resolve_keys
from workbench.names.keys import name_key
from workbench.names.suggestions import NameIndex
from workbench.records import effective
from workbench.store import Store
from workbench.vocab import PREFIXES

MIN_CHANCE = 0.5  # a kind is proposed when such guesses were right at least this often
TOP = 3  # kinds proposed at most for one entity
MERGE_MODEL = "same-entity-v1"  # names spelled alike (trigrams) and facts that agree
MERGE_AGREEMENT = 0.5  # the share of two entities' facts both hold, for a merge to be proposed
MERGE_SPELLING = 0.8  # how alike two names must be spelled (difflib's ratio of their keys), if neither holds the other
EVIDENCE = 3  # things named as a kind's evidence
_ACTIVE = effective("?g")  # in the graph of its metadata, its source's; superseded by nothing the read sees


def _id(prefix: str, *parts: str) -> str:
    return f"g-{prefix}-" + hashlib.blake2b("\n".join(parts).encode(), digest_size=6).hexdigest()


def _entities(store: Store) -> list[tuple[str, str]]:
    """(IRI, preferred name) of every registered entity not merged into another, by IRI."""
    rows = store.select(
        PREFIXES + f"""SELECT ?e (MIN(STR(?n)) AS ?name) WHERE {{ GRAPH ?d {{ ?e a wb:Entity ; skos:prefLabel ?n }}
        FILTER NOT EXISTS {{ GRAPH {ENTITIES_GRAPH} {{ ?e owl:sameAs ?other }} }} }} GROUP BY ?e ORDER BY ?e"""
    )
    return [(r["e"].value, r["name"].value) for r in rows if r["name"] is not None]  # type: ignore[union-attr]


def _terms(feature: str) -> tuple[ox.NamedNode, object]:
    r"""A ``<p> o`` feature (``o`` in N-Triples) as terms, read by the N-Triples parser.

    >>> _terms('<urn:p> "a \\"b\\""@en')[1].value
    'a "b"'
    """
    (quad,) = ox.parse(f"<urn:wb:x> {feature} .", format=ox.RdfFormat.N_TRIPLES)
    return quad.predicate, quad.object


def _labels(store: Store, facts: Iterable[str], more: Iterable[ox.NamedNode] = ()) -> Labels:
    """Words for the relations and values of ``facts`` and for ``more``."""
    terms = [t for f in facts for t in _terms(f) if isinstance(t, ox.NamedNode)]
    return Labels(store, [*terms, *more])


def _words(labels: Labels, feature: str) -> str:
    """A ``<p> o`` feature in words ("used for transport")."""
    return " ".join(labels(t) for t in _terms(feature))


def spelled_alike(a: str, b: str) -> bool:
    """Two names that may name one thing: spelled nearly the same, or one's words all in the other's.

    >>> spelled_alike("Dana Whitfield", "Dana Whitfeld"), spelled_alike("Dana", "Dana Whitfield")
    (True, True)
    >>> spelled_alike("Mei Lin", "Dana Whitfeld"), spelled_alike("Mei Lin", "Professor Lin")
    (False, False)
    """
    ka, kb = name_key(a), name_key(b)
    short, long = sorted((set(ka.split()), set(kb.split())), key=len)
    return SequenceMatcher(None, ka, kb).ratio() >= MERGE_SPELLING or (short < long and max(map(len, short)) >= 3)


def _article(words: str) -> str:
    """
    >>> _article("appliance"), _article("university"), _article("car"), _article("hour")
    ('an appliance', 'a university', 'a car', 'an hour')
    """
    w = words.casefold()
    vowel = (w[:1] in tuple("aeiou") and not w.startswith(("uni", "use", "usu", "eu", "one"))) or w.startswith("hour")
    return f"{'an' if vowel else 'a'} {words}"


def _facts(features: Sequence[str]) -> tuple[str, ...]:
    return tuple(f for f in features if not f.startswith("a <"))


def propose(store: Store, guesser: Guesser, names: NameIndex, *, top: int = TOP,
            min_chance: float = MIN_CHANCE) -> dict[str, list[dict[str, Any]]]:
    """The candidates of both kinds for the registered entities of ``store`` (what each holds read
    once for both)."""
    found = _entities(store)
    features = {iri: guesser.features(iri) for iri, _ in found}
    return {"kinds": kinds(store, guesser, found, features, top=top, min_chance=min_chance),
            "merges": merges(store, guesser, names, found, features)}


def _records(store: Store, iris: Sequence[str]) -> set[str]:
    """The active records that state something of ``iris`` (what a proposal repeats in words)."""
    rows = store.select(
        PREFIXES + f"""SELECT DISTINCT ?g WHERE {{ VALUES ?s {{ {' '.join(f'<{i}>' for i in iris)} }}
        GRAPH ?g {{ ?s ?p ?o }} {_ACTIVE} }}"""
    )
    return {id_from_iri(r["g"]) for r in rows}  # type: ignore[arg-type]


def kinds(store: Store, guesser: Guesser, found: Sequence[tuple[str, str]], features: Mapping[str, Sequence[str]],
          *, top: int, min_chance: float) -> list[dict[str, Any]]:
    """Candidate records "X is a K" for registered entities no active record gives a kind."""
    model, _ = guesser.ready()
    typed = {r["e"].value for r in store.select(  # type: ignore[union-attr]
        PREFIXES + f"SELECT DISTINCT ?e WHERE {{ {_ACTIVE} GRAPH ?g {{ ?e a ?k }} }}")}
    out: list[dict[str, Any]] = []
    for iri, name in found:
        if iri in typed or iri in model.kind_at:
            continue
        ranked = [g for g in guesser.rank_kinds(iri, top=top, features=features[iri])
                  if (g.chance >= min_chance if g.chance is not None else min_chance <= 0)]
        if not ranked:
            continue
        facts = _facts(features[iri])
        labels = _labels(store, facts, [ox.NamedNode(g.value[1:-1]) for g in ranked])
        said = "; ".join(_words(labels, f) for f in facts)
        for rank, g in enumerate(ranked, 1):
            kind = g.value[1:-1]
            cid = _id("kind", iri, kind)
            evidence, rests = _kind_evidence(store, iri, kind, facts, labels)
            out.append({
                "id": cid, "statement": f"{name} is {_article(labels(ox.NamedNode(kind)))}.", "type": "observation",
                "source": {"id": f"guess:{cid}", "said_by": f"model:{g.model}",
                           "text": f"The guesser ranked this kind {rank} of {len(ranked)} for {name} from what is "
                                   f"recorded of it ({said}): {g.chance_text()}."},
                "triples": [[f"<{iri}>", "is a", g.value]],
                "guess": {"model": g.model, "score": round(g.score, 4), "chance": g.chance, "rank": rank,
                          "evidence": evidence, "rests_on": sorted(_records(store, [iri]) | rests)},
            })
    return out


def _kind_evidence(store: Store, iri: str, kind: str, facts: Sequence[str],
                   labels: Labels) -> tuple[list[dict[str, Any]], set[str]]:
    """The things nearest ``iri`` among ``kind`` and the things of that kind: those holding most of
    its facts, each with the facts it shares, in words; and the records those shares come from."""
    if not facts:
        return [], set()
    pairs = " ".join(f"({f})" for f in facts)
    rows = store.select(
        PREFIXES + f"""SELECT DISTINCT ?s ?p ?o ?g WHERE {{
        {{ BIND(<{kind}> AS ?s) }} UNION {{ GRAPH ?k {{ ?s a <{kind}> }} {_ACTIVE.replace("?g", "?k")} }}
        VALUES (?p ?o) {{ {pairs} }} GRAPH ?g {{ ?s ?p ?o }} {_ACTIVE} FILTER(?s != <{iri}>) }} LIMIT 5000"""
    )
    shared: dict[str, set[str]] = defaultdict(set)
    graphs: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        shared[r["s"].value].add(f"{r['p']} {r['o']}")  # type: ignore[union-attr]
        graphs[r["s"].value].add(id_from_iri(r["g"]))  # type: ignore[arg-type, union-attr]
    best = sorted(shared, key=lambda s: (-len(shared[s]), s != kind, s))[:EVIDENCE]
    named = Labels(store, [ox.NamedNode(s) for s in best])
    return ([{"thing": f"<{s}>", "label": named(ox.NamedNode(s)),
              "shares": [_words(labels, f) for f in sorted(shared[s])]} for s in best],
            {g for s in best for g in graphs[s]})


def merges(store: Store, guesser: Guesser, names: NameIndex, found: Sequence[tuple[str, str]],
           features: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """Merge candidates for pairs of registered entities named alike whose own facts mostly agree
    (the one with more facts is kept; the other would be folded into it)."""
    version = f"{MERGE_MODEL}@{guesser.ready()[0].version.split('@', 1)[-1]}"  # the same store version
    name_of = dict(found)
    facts = {iri: set(_facts(features[iri])) for iri, _ in found}
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for iri, name in found:
        alike = names.similar(name)
        bound = resolve_keys(store, {name_key(n) for n in alike})
        for other in sorted({e for es in bound.values() if len(es) == 1 for e in es} - {iri}):
            pair = tuple(sorted((iri, other)))
            if other not in name_of or pair in seen or not spelled_alike(name, name_of[other]):
                continue
            seen.add(pair)  # type: ignore[arg-type]
            mine, theirs = facts[iri], facts[other]
            agreement = len(mine & theirs) / len(mine | theirs) if mine | theirs else 0.0
            if not (mine & theirs) or agreement < MERGE_AGREEMENT:
                continue
            keep, fold = sorted(pair, key=lambda e: (-len(facts[e]), e))
            labels = _labels(store, mine | theirs)
            both = sorted(_words(labels, f) for f in mine & theirs)
            out.append({
                "id": _id("merge", keep, fold),
                "statement": f"{name_of[fold]} and {name_of[keep]} are the same entity.",
                "merge": {"keep": keep, "other": fold},
                "guess": {"model": version, "score": round(agreement, 4), "chance": None, "evidence": [
                    {"thing": f"<{e}>", "label": name_of[e], "shares": both} for e in (keep, fold)],
                    "rests_on": sorted(_records(store, [keep, fold]))},
            })
    return out

