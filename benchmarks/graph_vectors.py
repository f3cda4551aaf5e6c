"""The guesser Workbench had until issue 18, kept for the audit's side-by-side column: graph
vectors, a thing embedded by what the graph says of it (its kinds, their super-kinds, and its
facts) hashed into 256 signed dimensions, ranked with FAISS. Workbench's guesser now is
:mod:`workbench.guesses.things`.

Given only "X is a K", X's vector holds K and K's super-kinds; its nearest things are K itself
and K's other members, and their facts, weighted by similarity, rank X's likely properties.
X's vector is *computed from X's own facts*, never copied from K's: an electric car that is
both a car and an appliance sits between the two. The ranking is a guess: it is labelled so,
never written to the store, never a premise.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pyoxigraph as ox

from workbench.guesses.model import closure, read_triples
from workbench.store import Store
from workbench.values.guesses import Guess
from workbench.vectors.encoders import normalise
from workbench.vectors.kept import Rebuilt
from workbench.vocab import PREFIXES, RDF, RDFS

NEIGHBOURS = 50
MIN_SIMILARITY = 0.2


class FeatureEncoder:
    """Each line of a text is one feature ("a <K>", "<p> <o>"), hashed to a signed dimension."""

    def __init__(self, dim: int = 256) -> None:
        self._dim = dim

    @property
    def name(self) -> str:
        return f"graph-features-v1/{self._dim}"

    @property
    def spec(self) -> str:
        return f"graph-features:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for f in set(text.split("\n")):
                if f:
                    h = int.from_bytes(hashlib.blake2b(f.encode(), digest_size=8).digest(), "little")
                    out[row, h % self._dim] += 1.0 if (h >> 63) & 1 else -1.0
        return normalise(out)


def _supers(store: Store) -> dict[str, set[str]]:
    rows = store.select(
        PREFIXES + """SELECT DISTINCT ?k ?s WHERE { GRAPH ?m { ?g wb:status wb:Active }
        GRAPH ?g { ?k rdfs:subClassOf ?s } }"""
    )
    up: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        up[r["k"].value].add(r["s"].value)  # type: ignore[union-attr]
    return up


def features(triples: Iterable[tuple[str, str, str]], up: dict[str, set[str]]) -> dict[str, str]:
    """Each subject's features, one per line, in a fixed order."""
    kinds: dict[str, set[str]] = defaultdict(set)
    facts: dict[str, set[str]] = defaultdict(set)
    for s, p, o in triples:
        if p == RDF.type.value:
            kinds[s].add(o.strip("<>"))
        elif p == RDFS.subClassOf.value:
            kinds[s].update({s, o.strip("<>")})
        else:
            facts[s].add(f"<{p}> {o}")
    out = {}
    for s in set(kinds) | set(facts):
        lines = sorted(f"a <{k}>" for k in closure(kinds[s], up)) + sorted(facts[s])
        out[s] = "\n".join(lines)
    return out


class GraphVectors(Rebuilt):
    """The graph-vector index of things and kinds, rebuilt when the store's fingerprint moves."""

    def __init__(self, store: Store, directory: Path) -> None:
        super().__init__(store, directory, FeatureEncoder())
        self._up: tuple[str, dict[str, set[str]]] | None = None

    def _supers(self) -> dict[str, set[str]]:
        """The kind hierarchy, read once per store version (every vector needs all of it)."""
        version = self.store.version()
        if self._up is None or self._up[0] != version:
            self._up = (version, _supers(self.store))
        return self._up[1]

    def items(self) -> dict[str, str]:
        return features(read_triples(self.store, None), self._supers())

    def text(self, iri: str) -> str | None:
        """What the graph says of ``iri``, one feature a line: what its vector encodes."""
        return features(read_triples(self.store, [iri]), self._supers()).get(iri)

    def vector(self, iri: str) -> np.ndarray | None:
        feats = self.text(iri)
        return self.index.encoder.encode([feats])[0] if feats else None

    def guess(self, iri: str, predicate: str, *, top: int = 5) -> tuple[Guess, ...]:
        """Values of ``predicate`` for ``iri``, ranked by how similar things that have one are."""
        v = self.vector(iri)
        return () if v is None else self.guess_near(v, predicate, exclude=iri, top=top)

    def guess_near(self, v: np.ndarray, predicate: str, *, exclude: str | None = None,
                   top: int = 5) -> tuple[Guess, ...]:
        """Values of ``predicate`` ranked by the things nearest the vector ``v`` that have one
        (``exclude``: the thing asked about, never its own neighbour)."""
        index = self.ready()
        near = [(n, s) for n, s in index.search(v, NEIGHBOURS + 1) if n != exclude and s >= MIN_SIMILARITY]
        if not near:
            return ()
        sims = dict(near)
        values = " ".join(f"<{n}>" for n in sims)
        rows = self.store.select(
            PREFIXES + f"""SELECT DISTINCT ?n ?o WHERE {{ VALUES ?n {{ {values} }}
            GRAPH ?m {{ ?g wb:status wb:Active }} GRAPH ?g {{ ?n {ox.NamedNode(predicate)} ?o }} }}"""
        )
        votes: dict[str, float] = defaultdict(float)
        who: dict[str, list[tuple[float, str]]] = defaultdict(list)
        for r in rows:
            n, o = r["n"].value, str(r["o"])  # type: ignore[union-attr]
            votes[o] += sims[n]
            who[o].append((sims[n], n))
        total = sum(sims.values())
        ranked = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return tuple(
            Guess(o, score / total, tuple(n for _, n in sorted(who[o], key=lambda t: (-t[0], t[1]))[:3]))
            for o, score in ranked
        )

    def kinds(self) -> list[str]:
        """Every kind the active records know: what things are, and what kinds are kinds of."""
        rows = self.store.select(
            PREFIXES + """SELECT DISTINCT ?k WHERE { GRAPH ?m { ?g wb:status wb:Active }
            GRAPH ?g { { ?x a ?k } UNION { ?k rdfs:subClassOf ?y } UNION { ?y rdfs:subClassOf ?k } }
            FILTER(isIRI(?k)) } ORDER BY ?k"""
        )
        return [r["k"].value for r in rows]  # type: ignore[union-attr]

    def rank_kinds(self, iri: str, kinds: Sequence[str] | None = None, *, top: int = 5) -> list[tuple[str, float]]:
        """Kinds ordered by the cosine of their graph vectors to ``iri``'s (best first). X's
        vector comes from X's own facts: never set equal to a kind's."""
        v = self.vector(iri)
        if v is None:
            return []
        kinds = list(kinds) if kinds is not None else self.kinds()
        return self.rank_kinds_near(v, kinds, self.kind_vectors(kinds), top=top)

    def kind_vectors(self, kinds: Sequence[str]) -> np.ndarray:
        """One graph vector per kind, in order: what the kind is (itself and the kinds above
        it) and its own facts."""
        return self.index.encoder.encode(self.kind_texts(kinds))

    def kind_texts(self, kinds: Sequence[str]) -> list[str]:
        up = self._supers()
        feats: dict[str, str] = {}
        for start in range(0, len(kinds), 500):
            feats.update(features(read_triples(self.store, kinds[start : start + 500]), up))
        # A kind is one of its own kinds ("a K" is a feature of K), facts or not.
        return [f"a <{k}>\n" + feats.get(k, "") for k in kinds]

    @staticmethod
    def rank_kinds_near(v: np.ndarray, kinds: Sequence[str], vectors: np.ndarray, *,
                        top: int | None = 5) -> list[tuple[str, float]]:
        """``kinds`` ordered by the cosine of their ``vectors`` to ``v`` (best first)."""
        scores = vectors @ v
        ranked = sorted(zip(kinds, (float(s) for s in scores), strict=True), key=lambda t: (-t[1], t[0]))
        return ranked if top is None else ranked[:top]
