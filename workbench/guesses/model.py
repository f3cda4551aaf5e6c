"""The guesser's model: how a thing's kinds and facts go together, learned from what the store
holds (admitted common sense and approved records), with no model call and nothing written.

Every subject is a set of exact **features**: ``a <K>`` for each of its kinds and the kinds
above them, ``<p> <o>`` for each of its facts. A kind is a subject too, of its own kind (the
facts written for K are what "a K" goes with). The model counts, for every kind K, how many of
the subjects that are directly a K hold each feature, and from those counts:

* **kinds** for X: a Bernoulli naive-Bayes posterior over every kind. X's features each count
  by how much likelier they are among K's subjects than elsewhere; a feature that (nearly)
  every one of K's subjects holds and X lacks ("a C" for a kind C below X's kind) counts
  against K. Absent facts do not count against anything: the store is an open world.
* **values** of ``X p ?``: the share of the subjects of X's likely kinds that hold ``p o``,
  weighed by how likely each kind is, for every ``o`` X does not already have.

A subject's features are read from its own triples (and the kind hierarchy), never copied
from a kind's: the shortcut the essay warns about (X's vector := K's) cannot be taken here.
What each score means to a reader comes from :mod:`workbench.guesses.calibration`, measured on
subjects the counts never saw.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from workbench.records import effective
from workbench.store import Store
from workbench.vocab import PREFIXES, RDF, RDFS

MODEL = "kinds-naive-bayes-v1"
ALPHA = 1.0  # smoothing, in pseudo-subjects holding a feature at its background rate
DEFINING = 0.5  # a feature held by at least this share of K's subjects counts against K when absent
TOP_KINDS = 20  # values are weighed over X's likeliest kinds only
MIXTURE = 0.1  # ... and only those within a factor of ten of the likeliest
_SKIP = "FILTER(?p NOT IN (skos:prefLabel, skos:altLabel, rdfs:label, wb:nameKey, owl:sameAs))"

Triple = tuple[str, str, str]
Tick = Callable[[int], object]


def read_triples(store: Store, subjects: Iterable[str] | None = None) -> list[Triple]:
    """(s, p, o) of every active assertion about an IRI subject, labels and names left out; ``o``
    as N-Triples (an IRI in angle brackets, a literal with its quotes)."""
    values = f"VALUES ?s {{ {' '.join(f'<{s}>' for s in subjects)} }}" if subjects is not None else ""
    rows = store.select(
        PREFIXES + f"""SELECT DISTINCT ?s ?p ?o WHERE {{ {values} {effective("?g")}
        GRAPH ?g {{ ?s ?p ?o }} FILTER(isIRI(?s)) {_SKIP} }}"""
    )
    return [(r["s"].value, r["p"].value, str(r["o"])) for r in rows]  # type: ignore[union-attr]


@dataclass
class Subjects:
    """What the graph says of each subject: its direct kinds and its features (kind closure and
    facts), in a fixed order. Built from triples alone."""

    direct: dict[str, tuple[str, ...]]
    features: dict[str, tuple[str, ...]]
    up: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, triples: Iterable[Triple]) -> Subjects:
        """
        >>> t = [("urn:c", RDFS.subClassOf.value, "<urn:v>"), ("urn:x", RDF.type.value, "<urn:c>"),
        ...      ("urn:c", "urn:has", "<urn:wheel>")]
        >>> s = Subjects.of(t)
        >>> s.direct["urn:x"], s.features["urn:x"]
        (('urn:c',), ('a <urn:c>', 'a <urn:v>'))
        >>> s.direct["urn:v"], s.features["urn:c"]
        (('urn:v',), ('a <urn:c>', 'a <urn:v>', '<urn:has> <urn:wheel>'))
        """
        up: dict[str, set[str]] = defaultdict(set)
        kinds: dict[str, set[str]] = defaultdict(set)
        facts: dict[str, set[str]] = defaultdict(set)
        for s, p, o in triples:
            if p == RDF.type.value and o.startswith("<"):
                kinds[s].add(o[1:-1])
                kinds.setdefault(o[1:-1], set())
            elif p == RDFS.subClassOf.value and o.startswith("<"):
                up[s].add(o[1:-1])
                kinds.setdefault(s, set())
                kinds.setdefault(o[1:-1], set())
            else:
                facts[s].add(f"<{p}> {o}")
        known = {k for ks in kinds.values() for k in ks} | set(up) | {k for ks in up.values() for k in ks}
        direct: dict[str, tuple[str, ...]] = {}
        feats: dict[str, tuple[str, ...]] = {}
        for s in sorted(set(kinds) | set(facts)):
            own = {s} if s in known else kinds.get(s, set())  # a kind is of its own kind
            direct[s] = tuple(sorted(own))
            feats[s] = tuple(sorted(f"a <{k}>" for k in closure(own, up)) + sorted(facts.get(s, ())))
        return cls(direct, feats, dict(up))

    def kinds(self) -> list[str]:
        return sorted({k for ks in self.direct.values() for k in ks})

    def features_of(self, kinds: Iterable[str], facts: Iterable[str] = ()) -> tuple[str, ...]:
        """The features a subject of ``kinds`` with ``facts`` (``<p> <o>`` strings) would have."""
        return tuple(sorted(f"a <{k}>" for k in closure(kinds, self.up)) + sorted(set(facts)))


def closure(kinds: Iterable[str], up: Mapping[str, set[str]]) -> set[str]:
    """``kinds`` and every kind above them."""
    seen: set[str] = set()
    todo = list(kinds)
    while todo:
        k = todo.pop()
        if k not in seen:
            seen.add(k)
            todo.extend(up.get(k, ()))
    return seen


def held_out(subject: str, folds: int = 10) -> bool:
    """The calibration split: a tenth of subjects, chosen by a hash of the IRI (the same on
    every machine), that the counts of a calibration run never see."""
    return hashlib.blake2b(subject.encode(), digest_size=4).digest()[0] % folds == 0


class Model:
    """Counts of features by kind, and the posterior and value scores they give."""

    def __init__(self, kinds: Sequence[str], vocab: Sequence[str], counts: sparse.csr_matrix,
                 sizes: np.ndarray, df: np.ndarray, n: int, *, version: str = "") -> None:
        self.kinds = list(kinds)
        self.vocab = list(vocab)
        self.at = {f: i for i, f in enumerate(self.vocab)}
        self.kind_at = {k: i for i, k in enumerate(self.kinds)}
        self.counts = counts.tocsr().astype(np.float32)  # features x kinds
        self.sizes = sizes.astype(np.float32)  # subjects directly of each kind
        self.df = df.astype(np.float32)  # subjects holding each feature
        self.n = int(n)
        self.version = version
        self._by_kind = self.counts.tocsc()
        p = (self.df + 1.0) / (self.n + 2.0)
        self._background = p.astype(np.float32)
        self._log_prior = np.log((self.sizes + 1.0) / (self.n + len(self.kinds))).astype(np.float32)
        # Defining features: held by at least DEFINING of K's subjects; absent from X, they count
        # against K by log(1 - P(f | K)). pen0 is that sum over all of them; X's own add back.
        coo = self.counts.tocoo()
        share = coo.data / np.maximum(self.sizes[coo.col], 1.0)
        keep = share >= DEFINING
        prob = self._smoothed(coo.data[keep], coo.row[keep], coo.col[keep])
        miss = np.log1p(-prob).astype(np.float32)
        self._defining = sparse.csr_matrix((miss, (coo.row[keep], coo.col[keep])), shape=self.counts.shape)
        self._pen0 = np.asarray(self._defining.sum(axis=0)).ravel().astype(np.float32)
        groups: dict[str, list[int]] = defaultdict(list)  # each predicate's value features
        for i, f in enumerate(self.vocab):
            if f.startswith("<"):
                groups[f[1:f.index(">")]].append(i)
        self._by_predicate = {p: np.array(ix, dtype=np.int64) for p, ix in groups.items()}

    def _smoothed(self, count: np.ndarray, feature: np.ndarray, kind: np.ndarray) -> np.ndarray:
        out: np.ndarray = (count + ALPHA * self._background[feature]) / (self.sizes[kind] + ALPHA)
        return out

    # ---------------------------------------------------------------- training

    @classmethod
    def train(cls, subjects: Subjects, *, skip: Callable[[str], bool] | None = None,
              tick: Tick | None = None, version: str = "") -> Model:
        """Count features by kind over every subject (but those ``skip`` says to leave out)."""
        kinds = subjects.kinds()
        kind_at = {k: i for i, k in enumerate(kinds)}
        vocab_at: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        krows: list[int] = []
        kcols: list[int] = []
        n = 0
        for s, feats in subjects.features.items():
            if tick:
                tick(1)
            if skip is not None and skip(s):
                continue
            for f in feats:
                rows.append(n)
                cols.append(vocab_at.setdefault(f, len(vocab_at)))
            for k in subjects.direct[s]:
                krows.append(n)
                kcols.append(kind_at[k])
            n += 1
        a = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(n, len(vocab_at)))
        d = sparse.csr_matrix((np.ones(len(krows), dtype=np.float32), (krows, kcols)), shape=(n, len(kinds)))
        counts = (a.T @ d).tocsr()
        vocab = sorted(vocab_at, key=vocab_at.__getitem__)
        sizes = np.asarray(d.sum(axis=0)).ravel()
        df = np.asarray(a.sum(axis=0)).ravel()
        return cls(kinds, vocab, counts, sizes, df, n, version=version)

    # ---------------------------------------------------------------- scoring

    def known(self, features: Iterable[str]) -> np.ndarray:
        return np.array(sorted({self.at[f] for f in features if f in self.at}), dtype=np.int64)

    def posterior(self, features: Iterable[str]) -> np.ndarray | None:
        """P(K | X's features) over every kind, or None when the model knows none of them."""
        ix = self.known(features)
        if not len(ix):
            return None
        # sum_f log((c + a p_f) / (n_K + a)): every kind as if it held none of X's features, then
        # the kinds that hold some, from the sparse counts alone (a query is O(kinds + nonzeros)).
        bg = ALPHA * self._background[ix]
        score = self._log_prior + float(np.log(bg).sum()) - len(ix) * np.log(self.sizes + ALPHA) + self._pen0
        held = self.counts[ix].tocoo()
        np.add.at(score, held.col, np.log1p(held.data / bg[held.row]))
        score -= np.asarray(self._defining[ix].sum(axis=0)).ravel()
        score -= score.max()
        post: np.ndarray = np.exp(score.astype(np.float64))
        post /= post.sum()
        return post

    def rank_kinds(self, features: Iterable[str], *, top: int | None = 5) -> list[tuple[str, float]]:
        """Kinds, likeliest first, with their posterior; [] when there is no basis."""
        post = self.posterior(features)
        if post is None:
            return []
        k = len(post) if top is None else min(top, len(post))
        order = np.lexsort((np.arange(len(post)), -post))[:k]
        return [(self.kinds[i], float(post[i])) for i in order]

    def values(self, features: Sequence[str], predicate: str, *,
               top: int = 5) -> list[tuple[str, float, tuple[str, ...]]]:
        """(value, score, kinds it comes from) for ``X predicate ?``: the likeliness-weighed share
        of the subjects of X's likeliest kinds that hold it, for values X does not have yet."""
        post = self.posterior(features)
        cands = self._by_predicate.get(predicate)
        if post is None or cands is None or not len(cands):
            return []
        best = np.argsort(-post, kind="stable")[:TOP_KINDS]
        best = best[post[best] >= MIXTURE * post[best[0]]]  # kinds far less likely than the first only add noise
        w = (post[best] / np.maximum(self.sizes[best], 1.0)).astype(np.float32)
        sub = self._by_kind[:, best].tocsr()[cands]  # candidate values x likely kinds
        score = np.asarray(sub @ w).ravel()
        own = {self.at[f] for f in features if f in self.at}
        score[[i for i, c in enumerate(cands) if c in own]] = 0.0
        order = [i for i in np.lexsort((cands, -score)) if score[i] > 0][:top]
        out = []
        for i in order:
            row = sub[i].toarray().ravel() * w
            why = tuple(self.kinds[best[j]] for j in np.argsort(-row, kind="stable")[:3] if row[j] > 0)
            f = self.vocab[cands[i]]
            out.append((f[f.index(">") + 2:], float(score[i]), why))
        return out

    # ---------------------------------------------------------------- on disk

    def save(self, directory: Path, meta: Mapping[str, Any]) -> None:
        """Write the counts and what they were built from; replaced whole, never half written."""
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / "model.tmp.npz"
        c = self.counts.tocoo()
        np.savez_compressed(tmp, row=c.row, col=c.col, data=c.data, sizes=self.sizes, df=self.df,
                            shape=np.array(c.shape), n=np.array([self.n]))
        (directory / "model.tmp.json").write_text(
            json.dumps({**meta, "model": MODEL, "version": self.version, "kinds": self.kinds,
                        "vocab": self.vocab}, ensure_ascii=False), encoding="utf-8")
        tmp.replace(directory / "model.npz")
        (directory / "model.tmp.json").replace(directory / "model.json")

    @classmethod
    def load(cls, directory: Path) -> tuple[Model, dict[str, Any]] | None:
        """The model saved under ``directory`` and its metadata, or None if there is none or it is
        unreadable (it is rebuilt from the store)."""
        try:
            meta = json.loads((directory / "model.json").read_text(encoding="utf-8"))
            with np.load(directory / "model.npz") as z:
                shape = tuple(int(x) for x in z["shape"])
                counts = sparse.csr_matrix((z["data"], (z["row"], z["col"])), shape=shape)
                model = cls(meta["kinds"], meta["vocab"], counts, z["sizes"], z["df"], int(z["n"][0]),
                            version=meta.get("version", ""))
        except (OSError, ValueError, KeyError, json.JSONDecodeError):
            return None
        if meta.get("model") != MODEL:
            return None
        return model, meta
