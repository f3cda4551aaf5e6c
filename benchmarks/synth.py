"""Seeded synthetic common-sense worlds for benchmarks.

The essay behind the workbench measures memory on "1,800 small worlds, about 1.27
million relations: which things belong to which kinds, and what each kind typically
has, is used for, and depends on". This module makes those worlds.

Each world holds a small forest of kinds (``rdfs:subClassOf``, at most three levels),
things typed into one kind (about 10% into two kinds from different trees, like an
electric car that is both a car and an appliance), kind facts (``wb:has``,
``wb:usedFor``, ``wb:dependsOn`` pointing at the world's features; a leaf kind has
about 24 of its own), a few facts recorded directly on things, and one
``skos:prefLabel`` per entity. Each world also keeps a few true facts that are never
written (``World.held_out``), so an audit can check that a memory says "not known"
rather than "false".

World ``w`` is drawn from its own ``random.Random`` seeded by ``(seed, w)``, so it is
the same whether 5 or 5,000 worlds are generated. Only the standard library is used.

Command line (1,800 worlds is the essay's size)::

    python -m benchmarks.synth --worlds 1800 --seed 0 --format nq synth.nq
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
SUBCLASS_OF = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
HAS = "https://w3id.org/workbench/ns#has"
USED_FOR = "https://w3id.org/workbench/ns#usedFor"
DEPENDS_ON = "https://w3id.org/workbench/ns#dependsOn"
PREF_LABEL = "http://www.w3.org/2004/02/skos/core#prefLabel"

#: Predicates whose triples count as relations; labels are counted separately.
RELATIONS = frozenset({RDF_TYPE, SUBCLASS_OF, HAS, USED_FOR, DEPENDS_ON})

ESSAY_WORLDS = 1_800
ESSAY_RELATIONS = 1_270_000
MAX_WORLDS = 150_000  # about 106M relations: enough for a 100M run
#: Each world's relation budget is drawn uniformly from this range (mean 705.5).
RELATION_BUDGET = (700, 711)
MEAN_RELATIONS_PER_WORLD = sum(RELATION_BUDGET) / 2
HELD_OUT_KINDS = 2  # held-out kind facts per world
HELD_OUT_THINGS = 2  # held-out thing facts per world
HELD_OUT_PER_WORLD = HELD_OUT_KINDS + HELD_OUT_THINGS

Format = Literal["nq", "nt"]
Triple = tuple[str, str, str]
Fact = tuple[str, str]  # (predicate IRI, feature IRI)

_MAX_LEVELS = 3  # root, child, grandchild
_MULTI_KIND_SHARE = 0.1
_LEAF_FACTS = (20, 28)  # mean 24: "does X inherit the 24 facts written for K"
_INNER_FACTS = (8, 14)
_THING_FACTS = (10, 30)
# Feature pools by role; the role fixes the predicate (parts are had, activities are
# what a kind is used for, resources are what it depends on).
_ROLES = ((HAS, (36, 44)), (USED_FOR, (20, 28)), (DEPENDS_ON, (12, 20)))

_ONSETS = (
    "b",
    "br",
    "d",
    "f",
    "g",
    "gr",
    "k",
    "l",
    "m",
    "n",
    "p",
    "pl",
    "r",
    "s",
    "st",
    "t",
    "tr",
    "v",
    "z",
    "ch",
    "sh",
)
_VOWELS = ("a", "e", "i", "o", "u") * 2 + ("ai", "ou")  # plain vowels mostly
_SYLLABLES = tuple(c + v for c in _ONSETS for v in _VOWELS)
_CODAS = ("",) * 9 + ("l", "n", "r", "s", "m", "k")  # 40% of words end closed


@dataclass(frozen=True)
class World:
    """One synthetic world: kinds, things, features, facts and labels (all IRIs).

    ``parents`` and ``kind_facts`` have an entry for every kind; ``thing_facts`` only
    for things with facts of their own. ``held_out`` facts are true in the world but
    neither written by :meth:`triples` nor entailed by what is written.

    >>> w = next(generate(1, seed=7))
    >>> w.graph, w.kinds[0]
    ('urn:wb:synth:w0', 'urn:wb:synth:w0/k0')
    >>> RELATION_BUDGET[0] <= w.relation_count() <= RELATION_BUDGET[1]
    True
    """

    index: int
    kinds: tuple[str, ...]
    parents: Mapping[str, tuple[str, ...]]
    members: Mapping[str, tuple[str, ...]]
    features: tuple[str, ...]
    kind_facts: Mapping[str, tuple[Fact, ...]]
    thing_facts: Mapping[str, tuple[Fact, ...]]
    held_out: tuple[Triple, ...]
    labels: Mapping[str, str]

    @property
    def graph(self) -> str:
        """The IRI of this world's named graph."""
        return f"urn:wb:synth:w{self.index}"

    @property
    def things(self) -> tuple[str, ...]:
        """The world's things, in order."""
        return tuple(self.members)

    def triples(self) -> Iterator[Triple]:
        """Yield the world's written triples in a fixed order.

        The object is a label string exactly when the predicate is ``PREF_LABEL``,
        otherwise an IRI. Order: each kind (superclasses, label, facts), each thing
        (kinds, label, facts), each feature (label).

        >>> w = next(generate(1))
        >>> next(w.triples())[1] == PREF_LABEL
        True
        """
        for kind in self.kinds:
            for parent in self.parents[kind]:
                yield kind, SUBCLASS_OF, parent
            yield kind, PREF_LABEL, self.labels[kind]
            for p, o in self.kind_facts[kind]:
                yield kind, p, o
        for thing, kinds in self.members.items():
            for kind in kinds:
                yield thing, RDF_TYPE, kind
            yield thing, PREF_LABEL, self.labels[thing]
            for p, o in self.thing_facts.get(thing, ()):
                yield thing, p, o
        for feature in self.features:
            yield feature, PREF_LABEL, self.labels[feature]

    def relation_count(self) -> int:
        """Count written relations (every triple but labels), without building them.

        >>> w = next(generate(1))
        >>> w.relation_count() == sum(p in RELATIONS for _, p, _ in w.triples())
        True
        """
        return (
            sum(map(len, self.parents.values()))
            + sum(map(len, self.members.values()))
            + sum(map(len, self.kind_facts.values()))
            + sum(map(len, self.thing_facts.values()))
        )

    def ancestors(self, kind: str) -> tuple[str, ...]:
        """Kinds above *kind* via ``rdfs:subClassOf``, nearest first.

        >>> w = next(generate(1))
        >>> all(w.parents[k][:1] == w.ancestors(k)[:1] for k in w.kinds)
        True
        """
        seen: list[str] = []
        todo = list(self.parents[kind])
        while todo:
            k = todo.pop(0)
            if k not in seen:
                seen.append(k)
                todo.extend(self.parents[k])
        return tuple(seen)

    def entailed_facts(self, entity: str) -> frozenset[Fact]:
        """Facts a reasoner should know for a kind or thing: its own plus inherited.

        A kind inherits from its ancestors; a thing from each of its kinds.

        >>> w = next(generate(1))
        >>> leaf = w.kinds[-1]
        >>> set(w.kind_facts[leaf]) <= w.entailed_facts(leaf)
        True
        """
        if entity in self.kind_facts:
            facts = set(self.kind_facts[entity])
            for k in self.ancestors(entity):
                facts.update(self.kind_facts[k])
            return frozenset(facts)
        facts = set(self.thing_facts.get(entity, ()))
        for k in self.members[entity]:
            facts |= self.entailed_facts(k)
        return frozenset(facts)


@dataclass(frozen=True)
class Counts:
    """What :func:`write` wrote: worlds, relations, labels and all triples."""

    worlds: int
    relations: int
    labels: int
    triples: int


def generate(n_worlds: int, *, seed: int = 0) -> Iterator[World]:
    """Yield worlds ``0 .. n_worlds-1``; world w depends only on ``(seed, w)``.

    >>> [w.index for w in generate(3, seed=1)]
    [0, 1, 2]
    >>> list(generate(3, seed=1))[2] == list(generate(9, seed=1))[2]
    True
    """
    for index in range(n_worlds):
        yield _make_world(seed, index)


def worlds_for_relations(n_relations: int) -> int:
    """How many worlds give about *n_relations* relations (at least one).

    >>> worlds_for_relations(10_000), worlds_for_relations(100_000)
    (14, 142)
    >>> worlds_for_relations(ESSAY_RELATIONS)
    1800
    """
    return max(1, round(n_relations / MEAN_RELATIONS_PER_WORLD))


def write(path: str | os.PathLike[str], *, n_worlds: int, seed: int = 0, fmt: Format = "nq") -> Counts:
    """Write worlds as N-Quads (one named graph per world) or N-Triples (the union).

    Streams one world at a time. Raises ValueError for an unknown format or a world
    count outside ``1 .. MAX_WORLDS``.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "two.nq")
    >>> c = write(path, n_worlds=2)
    >>> c.worlds, c.triples == c.relations + c.labels
    (2, True)
    """
    if fmt not in ("nq", "nt"):
        raise ValueError(f"unknown format {fmt!r}: use 'nq' or 'nt'")
    _check_world_count(n_worlds)
    triples = labels = 0
    label_p, type_p = f"<{PREF_LABEL}>", f"<{RDF_TYPE}>"
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for world in generate(n_worlds, seed=seed):
            end = f" <{world.graph}> .\n" if fmt == "nq" else " .\n"
            lines: list[str] = []
            for s, p, o in world.triples():
                if p == PREF_LABEL:
                    lines.append(f"<{s}> {label_p} {_literal(o)}{end}")
                    labels += 1
                else:
                    pred = type_p if p == RDF_TYPE else f"<{p}>"
                    lines.append(f"<{s}> {pred} <{o}>{end}")
            out.write("".join(lines))
            triples += len(lines)
    return Counts(worlds=n_worlds, relations=triples - labels, labels=labels, triples=triples)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write synthetic worlds and print the counts."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.synth",
        description=(
            "Write seeded synthetic common-sense worlds (kinds, things, and "
            "has / used-for / depends-on facts) as N-Quads or N-Triples. "
            f"The essay's benchmark is {ESSAY_WORLDS:,} worlds, about "
            f"{ESSAY_RELATIONS:,} relations."
        ),
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--worlds",
        type=int,
        default=ESSAY_WORLDS,
        metavar="N",
        help=f"number of worlds, 1 to {MAX_WORLDS:,} "
        f"(default {ESSAY_WORLDS:,}, about "
        f"{MEAN_RELATIONS_PER_WORLD:g} relations each)",
    )
    size.add_argument("--relations", type=int, metavar="R", help="instead of --worlds: about this many relations")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--format",
        choices=("nq", "nt"),
        default="nq",
        help="nq: one named graph per world; nt: their union (default nq)",
    )
    parser.add_argument("out", help="output file")
    args = parser.parse_args(argv)
    n_worlds = worlds_for_relations(args.relations) if args.relations is not None else args.worlds
    try:
        counts = write(args.out, n_worlds=n_worlds, seed=args.seed, fmt=args.format)
    except ValueError as err:
        parser.error(str(err))
    print(
        f"worlds={counts.worlds} relations={counts.relations} "
        f"labels={counts.labels} triples={counts.triples} -> {args.out}"
    )
    return 0


# ---------------------------------------------------------------- internals


def _check_world_count(n_worlds: int) -> None:
    if not 1 <= n_worlds <= MAX_WORLDS:
        raise ValueError(f"worlds must be 1 to {MAX_WORLDS:,}, not {n_worlds}")


# Canonical N-Triples: escape quote, backslash and control characters.
_ESCAPES: dict[int, str] = {c: f"\\u{c:04X}" for c in [*range(0x20), 0x7F]}
_ESCAPES.update(
    {
        ord("\\"): "\\\\",
        ord('"'): '\\"',
        ord("\n"): "\\n",
        ord("\r"): "\\r",
        ord("\t"): "\\t",
        ord("\b"): "\\b",
        ord("\f"): "\\f",
    }
)


def _literal(text: str) -> str:
    """An N-Triples plain literal for *text*."""
    return '"' + text.translate(_ESCAPES) + '"'


def _make_world(seed: int, index: int) -> World:
    # A string seed is hashed with SHA-512, stable across runs and platforms, and
    # gives each world its own stream, independent of how many worlds are made. The text keeps
    # the module's old name (workbench.synth), so a seed still draws the worlds it always drew.
    rng = random.Random(f"workbench.synth/{seed}/{index}")
    base = f"urn:wb:synth:w{index}"
    budget = rng.randint(*RELATION_BUDGET)

    # Kinds: a forest. A parent always precedes its child, so there are no cycles.
    n_kinds, n_roots = rng.randint(12, 16), rng.randint(2, 4)
    parent: list[int | None] = [None] * n_kinds
    level, root = [0] * n_kinds, list(range(n_kinds))
    for i in range(n_roots, n_kinds):
        p = rng.choice([j for j in range(i) if level[j] < _MAX_LEVELS - 1])
        parent[i], level[i], root[i] = p, level[p] + 1, root[p]
    leaves = [i for i in range(n_kinds) if i not in parent]

    # Features, each with the one predicate its role allows.
    pairs: list[tuple[str, int]] = []
    for predicate, size in _ROLES:
        pairs += [(predicate, len(pairs) + j) for j in range(rng.randint(*size))]
    all_pairs = range(len(pairs))

    # Kind facts (indexes into pairs), disjoint from what the kind already inherits,
    # so "the facts written for K" is exactly K's own list.
    own: list[list[int]] = []
    closure: list[set[int]] = []
    for i in range(n_kinds):
        up = parent[i]
        above = closure[up] if up is not None else set()
        lo_hi = _LEAF_FACTS if i in leaves else _INNER_FACTS
        chosen = sorted(rng.sample([j for j in all_pairs if j not in above], rng.randint(*lo_hi)))
        own.append(chosen)
        closure.append(above | set(chosen))

    # Things fill the rest of the budget: types = things + multi-kind things.
    n_thing_facts = rng.randint(*_THING_FACTS)
    n_types = budget - (n_kinds - n_roots) - sum(map(len, own)) - n_thing_facts
    n_things = round(n_types / (1 + _MULTI_KIND_SHARE))
    multi = set(rng.sample(range(n_things), n_types - n_things))
    member: list[tuple[int, ...]] = []
    for t in range(n_things):
        first = _pick_kind(rng, leaves, range(n_kinds))
        if t in multi:
            other = [k for k in range(n_kinds) if root[k] != root[first]]
            member.append((first, _pick_kind(rng, [k for k in leaves if k in other], other)))
        else:
            member.append((first,))

    def inherited(t: int) -> set[int]:
        return set().union(*(closure[k] for k in member[t]))

    # Facts on things: not already inherited, else they would say nothing new.
    thing_own: dict[int, set[int]] = {}
    while sum(map(len, thing_own.values())) < n_thing_facts:
        t, j = rng.randrange(n_things), rng.randrange(len(pairs))
        if j not in inherited(t):
            thing_own.setdefault(t, set()).add(j)

    # Held-out facts: true, but neither written nor entailed by what is written.
    held_kind: list[tuple[int, int]] = []
    while len(held_kind) < HELD_OUT_KINDS:
        k, j = rng.randrange(n_kinds), rng.randrange(len(pairs))
        if j not in closure[k] and (k, j) not in held_kind:
            held_kind.append((k, j))
    held_thing: list[tuple[int, int]] = []
    while len(held_thing) < HELD_OUT_THINGS:
        t, j = rng.randrange(n_things), rng.randrange(len(pairs))
        if j not in inherited(t) | thing_own.get(t, set()) and (t, j) not in held_thing:
            held_thing.append((t, j))

    # Names: pronounceable, unique within the world; the world number makes them
    # unique across worlds, so exact name lookup never finds two entities.
    used: set[str] = set()
    kind_words = [_fresh_word(rng, used) for _ in range(n_kinds)]
    thing_words = [_fresh_word(rng, used) for _ in range(n_things)]
    feature_words = [_fresh_word(rng, used) for _ in pairs]

    kinds = tuple(f"{base}/k{i}" for i in range(n_kinds))
    things = [f"{base}/t{i}" for i in range(n_things)]
    features = tuple(f"{base}/f{i}" for i in range(len(pairs)))

    def fact(j: int) -> Fact:
        return pairs[j][0], features[pairs[j][1]]

    labels = {kinds[i]: f"{kind_words[i]} w{index}" for i in range(n_kinds)}
    labels.update({things[t]: f"{thing_words[t]} {kind_words[member[t][0]]} w{index}" for t in range(n_things)})
    labels.update({features[f]: f"{feature_words[f]} w{index}" for f in range(len(pairs))})
    return World(
        index=index,
        kinds=kinds,
        parents={kinds[i]: () if (up := parent[i]) is None else (kinds[up],) for i in range(n_kinds)},
        members={things[t]: tuple(kinds[k] for k in member[t]) for t in range(n_things)},
        features=features,
        kind_facts={kinds[i]: tuple(map(fact, own[i])) for i in range(n_kinds)},
        thing_facts={things[t]: tuple(map(fact, sorted(thing_own[t]))) for t in sorted(thing_own)},
        held_out=tuple((kinds[k], *fact(j)) for k, j in held_kind)
        + tuple((things[t], *fact(j)) for t, j in held_thing),
        labels=labels,
    )


def _pick_kind(rng: random.Random, leaves: Sequence[int], kinds: Sequence[int]) -> int:
    # Most things belong to a leaf kind ("a kettle"), some to a broader one.
    if leaves and rng.random() < 0.8:
        return rng.choice(leaves)
    return rng.choice(kinds)


def _fresh_word(rng: random.Random, used: set[str]) -> str:
    while True:
        # Two syllables, a third one time in three; choices() is the fast path.
        n = 2 + (rng.random() < 1 / 3)
        word = "".join(rng.choices(_SYLLABLES, k=n)) + rng.choice(_CODAS)
        if word not in used:
            used.add(word)
            return word


if __name__ == "__main__":
    sys.exit(main())
