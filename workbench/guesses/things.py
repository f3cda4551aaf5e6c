"""The guesser, kept beside the store it learned from: kinds and values for genuine gaps, each with
the chance of being right that was measured for guesses like it, and "no basis for a guess"
when the store says nothing the model can use.

The model (:mod:`workbench.guesses.model`) and its calibration
(:mod:`workbench.guesses.calibration`) are trained offline from the store's active assertions
(``workbench guesses train``, or the first guess after the store changed) and saved under the
indexes' folder with the fingerprint of the store they came from; imports, approvals and
erasure move the fingerprint, so the next guess learns again (as the names index is rebuilt).
A guess is never written to the store and never a premise (docs/guesses.md).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from workbench.errors import Invalid
from workbench.guesses import calibration
from workbench.guesses.model import MODEL, Model, Subjects, held_out, read_triples
from workbench.records import effective
from workbench.store import Store
from workbench.values.guesses import Guess
from workbench.vectors.kept import Bar, fingerprint
from workbench.vocab import PREFIXES

EVIDENCE = 3  # subjects named as the evidence for a value


class Guesser:
    """The trained model of one readable store, loaded or learned again when the store moved."""

    def __init__(self, store: Store, directory: Path) -> None:
        self.store = store
        self.directory = directory
        self._model: tuple[Model, dict[str, Any]] | None = None
        self._hierarchy = Subjects({}, {})  # the kinds above each kind, as the model learned them
        self._checked = False

    @property
    def exists(self) -> bool:
        return (self.directory / "model.json").is_file()

    def stale(self) -> None:
        self._checked = False

    def ready(self, progress: Bar | None = None) -> tuple[Model, dict[str, Any]]:
        """The model and its metadata, in step with the store: loaded from disk when it was
        trained at the store's fingerprint, else trained now."""
        if self._checked and self._model is not None:
            return self._model
        now = fingerprint(self.store)
        if self._model is None or self._model[1].get("fingerprint") != now:
            loaded = Model.load(self.directory)
            self._model = loaded if loaded and loaded[1].get("fingerprint") == now else None
        if self._model is None:
            self.train(progress)
        assert self._model is not None
        self._hierarchy = Subjects({}, {}, {k: set(v) for k, v in self._model[1].get("up", {}).items()})
        self._checked = True
        return self._model

    def train(self, progress: Bar | None = None) -> dict[str, Any]:
        """Learn from the store now: read, count with a tenth held out, measure what the scores
        mean on that tenth, count again with everything, save. Returns what was measured."""
        now = fingerprint(self.store)
        clock = time.perf_counter()
        bar = progress("reading the store", 1) if progress else None
        triples = read_triples(self.store)
        subjects = Subjects.of(triples)
        _done(bar)
        seconds = {"read": time.perf_counter() - clock}
        clock = time.perf_counter()
        version = f"{MODEL}@{hashlib.blake2b(now.encode(), digest_size=6).hexdigest()}"
        bar = progress("learning", 2 * len(subjects.features)) if progress else None
        tick = bar.update if bar else None  # type: ignore[attr-defined]
        held = Model.train(subjects, skip=held_out, tick=tick, version=version)
        full = Model.train(subjects, tick=tick, version=version)
        _done(bar)
        seconds["train"] = time.perf_counter() - clock
        clock = time.perf_counter()
        bar = progress("measuring on held-out subjects", 3 * calibration.CASES) if progress else None
        cases, asked = calibration.measure(held, subjects, tick=bar.update if bar else None)  # type: ignore[attr-defined]
        _done(bar)
        report = calibration.calibrate(cases, asked)
        seconds["calibrate"] = time.perf_counter() - clock
        meta = {"fingerprint": now, "trained_at": _utc(), "subjects": len(subjects.features),
                "kinds_known": len(full.kinds), "features": len(full.vocab), "triples": len(triples),
                "held_out_subjects": sum(1 for s in subjects.features if held_out(s)),
                "calibration": report, "seconds": {k: round(v, 2) for k, v in seconds.items()},
                "up": {k: sorted(v) for k, v in subjects.up.items()}}
        shutil.rmtree(self.directory, ignore_errors=True)
        full.save(self.directory, meta)
        self._model = (full, {**meta, "model": MODEL, "version": version})
        self._hierarchy = Subjects({}, {}, subjects.up)
        self._checked = True
        return self._model[1]

    # ---------------------------------------------------------------- guessing

    def features(self, iri: str) -> tuple[str, ...]:
        """What the graph says of ``iri``, as the model's features: from its own triples and the
        kind hierarchy, never copied from a kind's. Raises Invalid for what is not an IRI."""
        try:
            ox.NamedNode(iri)
        except ValueError:
            raise Invalid(f"not an IRI: {iri!r}") from None
        model = self.ready()[0]
        mine = Subjects.of(read_triples(self.store, [iri]))
        kinds = [iri] if iri in model.kind_at else mine.direct.get(iri, ())
        facts = [f for f in mine.features.get(iri, ()) if not f.startswith("a <")]
        return self._hierarchy.features_of(kinds, facts)

    def rank_kinds(self, iri: str, *, top: int = 5, features: Sequence[str] | None = None) -> tuple[Guess, ...]:
        """Kinds for ``iri``, likeliest first, each with its stated chance; () when there is no
        basis for a guess (nothing recorded of it that the model knows). ``features``: its
        :meth:`features`, when the caller has read them already."""
        model, meta = self.ready()
        chance = calibration.chance_map(meta["calibration"], "kind")
        ranked = model.rank_kinds(self.features(iri) if features is None else features, top=top)
        return tuple(Guess(f"<{k}>", s, (), chance=chance(s) if chance else None, model=model.version)
                     for k, s in ranked)

    def guess(self, iri: str, predicate: str, *, top: int = 5) -> tuple[Guess, ...]:
        """Values of ``iri predicate ?`` it does not have yet, with their stated chance and the
        subjects of its likely kinds that hold them; () when there is no basis for a guess."""
        model, meta = self.ready()
        chance = calibration.chance_map(meta["calibration"], "value")
        ranked = model.values(self.features(iri), predicate, top=top)
        evidence = self._evidence(iri, predicate, ranked)
        return tuple(Guess(v, s, evidence.get(v, ()), chance=chance(s) if chance else None, model=model.version)
                     for v, s, _ in ranked)

    def _evidence(self, iri: str, predicate: str,
                  ranked: Sequence[tuple[str, float, tuple[str, ...]]]) -> dict[str, tuple[str, ...]]:
        """For each value, up to three subjects of the kinds it came from that hold it (the kind
        itself among them: the facts written for a kind are its own)."""
        if not ranked:
            return {}
        kinds = {k for _, _, ks in ranked for k in ks}
        values = " ".join(v for v, _, _ in ranked)
        active = effective("?g")
        holders = self.store.select(
            PREFIXES + f"""SELECT DISTINCT ?o ?s WHERE {{ VALUES ?o {{ {values} }}
            GRAPH ?g {{ ?s {ox.NamedNode(predicate)} ?o }} {active} FILTER(?s != <{iri}>) }} ORDER BY ?o ?s"""
        )
        subjects = sorted({r["s"].value for r in holders if r["s"].value not in kinds})  # type: ignore[union-attr]
        typed = self.store.select(
            PREFIXES + f"""SELECT DISTINCT ?s WHERE {{ VALUES ?s {{ {' '.join(f'<{x}>' for x in subjects)} }}
            VALUES ?k {{ {' '.join(f'<{k}>' for k in sorted(kinds))} }} GRAPH ?g {{ ?s a ?k }} {active} }}"""
        ) if subjects else []
        of_kinds = kinds | {r["s"].value for r in typed}  # type: ignore[union-attr]
        rows = [r for r in holders if r["s"].value in of_kinds]  # type: ignore[union-attr]
        out: dict[str, list[str]] = defaultdict(list)
        for r in rows:
            o, s = str(r["o"]), r["s"].value  # type: ignore[union-attr]
            if len(out[o]) < EVIDENCE:
                out[o].append(s)
        return {o: tuple(s) for o, s in out.items()}

    def kinds(self) -> list[str]:
        return self.ready()[0].kinds

    def status(self) -> dict[str, Any] | None:
        """What the saved model was learned from (None when there is none yet)."""
        try:
            meta = json.loads((self.directory / "model.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return {"model": meta.get("version"), "fingerprint": meta.get("fingerprint"),
                "subjects": meta.get("subjects"), "kinds": meta.get("kinds_known")}


def _done(bar: Any) -> None:
    if bar is not None:
        bar.update(max(0, getattr(bar, "total", 0) - getattr(bar, "n", 0)))
        bar.close()


def _utc() -> str:
    import datetime as dt

    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
