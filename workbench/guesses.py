"""Recall and guesses, the part of the :class:`workbench.service.Workbench` API that uses
vectors: recall bundles for questions in words, ranked model guesses for genuine gaps, and
the indexes behind them (:mod:`workbench.guess`), kept beside the store.

Which encoder ranks records is chosen when the index is built (``encoder=`` on open, the CLI's
``--encoder``, or ``$WORKBENCH_ENCODER``; default ``hashing``) and recorded with it; asking for
another one later is an error until the index is rebuilt with it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from workbench.guess.encoders import Encoder, encoder
from workbench.guess.index import IndexCorrupt, VectorIndex
from workbench.guess.memory import Bar, RecordVectors, bump, forget
from workbench.guess.model import Guess
from workbench.guess.names import NameIndex
from workbench.guess.recall import Bundle
from workbench.guess.things import Things
from workbench.store import Store


class Guesses:
    """Mixed into Workbench: what it needs is the store and the encoder asked for, if any."""

    store: Store
    encoder_spec: str | None
    _vectors: RecordVectors | None
    _names: NameIndex | None
    _things: Things | None

    @property
    def vectors_dir(self) -> Path:
        return self.store.files_dir / "vectors"

    def _encoder(self) -> Encoder:
        spec = self.encoder_spec or os.environ.get("WORKBENCH_ENCODER")
        if not spec:
            index = VectorIndex(self.vectors_dir / "records", encoder("hashing"))
            try:
                spec = str(index.meta().get("spec") or "hashing") if index.exists else "hashing"
            except IndexCorrupt:
                spec = "hashing"  # an unreadable index is rebuilt (RecordVectors.ready), with the default
        return encoder(spec)

    def record_vectors(self) -> RecordVectors:
        if self._vectors is None:
            self._vectors = RecordVectors(self.store, self.vectors_dir / "records", self._encoder())
        return self._vectors

    def name_index(self) -> NameIndex:
        if self._names is None:
            self._names = NameIndex(self.store, self.vectors_dir / "names")
        return self._names

    def things(self) -> Things:
        if self._things is None:
            self._things = Things(self.store, self.vectors_dir / "things")
        return self._things

    def recall(
        self,
        question: str,
        *,
        purpose: str = "default",
        limit: int | None = None,
        budget_chars: int | None = None,
        progress: Bar | None = None,
    ) -> Bundle:
        """The records that bear on a question in words, as a bundle within a budget (records
        and characters; ``purpose`` ``default``, ``writing`` or ``decision`` sets both), or
        "no memory". Names bind exactly to a scope first; with no name bound, what similarity
        finds is labelled a guess.

        Raises Invalid for an empty or oversized question, a budget below one or an unknown
        purpose; EncoderMismatch when the index was built with another encoder. A missing or
        corrupt index is rebuilt (with ``progress``), the store untouched.
        """
        from workbench.guess import recall

        text = recall.check_question(question, limit=limit, chars=budget_chars)
        index = self.record_vectors().ready(progress)
        return recall.recall(self.store, index, self.name_index(), text, purpose=purpose, limit=limit,
                             chars=budget_chars)

    def guess(self, subject_iri: str, predicate_iri: str, *, top: int = 5) -> tuple[Guess, ...]:
        """Ranked model guesses for ``subject predicate ?`` from similar things. Never facts."""
        return self.things().guess(subject_iri, predicate_iri, top=top)

    def guess_kinds(self, name: str, *, top: int = 5) -> tuple[Guess, ...]:
        """Kinds ranked for a thing by its graph vector (cosine to each kind's own vector): a
        model guess, never a fact. Given only "X is a K", K and its super-kinds should lead.
        Raises NotFound/Ambiguous when the name does not bind exactly."""
        import pyoxigraph as ox

        from workbench import entities
        from workbench.answer.evidence import Labels

        iri = entities.entity_ref(self.store, name)
        ranked = self.things().rank_kinds(iri.value, top=top)
        labels = Labels(self.store, [ox.NamedNode(k) for k, _ in ranked])
        return tuple(Guess(f"<{k}>", s, (), labels(ox.NamedNode(k))) for k, s in ranked)

    def index_status(self) -> dict[str, Any]:
        """What each vector index holds and what built it."""
        out: dict[str, Any] = {"directory": str(self.vectors_dir)}
        for name in ("records", "names", "things"):
            meta_file = self.vectors_dir / name / "meta.json"
            if meta_file.is_file():
                meta = VectorIndex(self.vectors_dir / name, encoder("hashing")).meta()
                out[name] = {k: meta.get(k) for k in ("encoder", "kind", "count", "fingerprint")}
            else:
                out[name] = None
        return out

    def rebuild_index(self, *, encoder_spec: str | None = None, progress: Bar | None = None) -> dict[str, Any]:
        """Drop the vector indexes and build the records index again (with another encoder if
        given). The store is not touched."""
        enc = encoder(encoder_spec) if encoder_spec else self._encoder()
        shutil.rmtree(self.vectors_dir, ignore_errors=True)
        self.encoder_spec = enc.spec
        self._vectors = RecordVectors(self.store, self.vectors_dir / "records", enc)
        self._names = self._things = None
        self._vectors.ready(progress)
        return self.index_status()

    def _names_changed(self) -> None:
        if self._names is not None:
            self._names.stale()

    def _records_changed(self) -> None:
        """After an import, supersession or retraction: a new revision, so every index (here or
        in another process) knows it is behind; one already in use here is brought in step now,
        the others when next used."""
        bump(self.store)
        for part in (self._names, self._things):
            if part is not None:
                part.stale()
        if self._vectors is not None and self._vectors.in_use:
            self._vectors.stale()
            self._vectors.ready()

    def _record_erased(self, record_id: str) -> None:
        """Erasure is complete: the record's vector goes now, from memory and disk, and the
        indexes built from names and facts are rebuilt without what it held. So do the readers'
        own indexes beside their views (built from views made before the erasure): the record's
        vector leaves each records index, and their names and things indexes (whose ids are
        names and entities) are deleted, to be rebuilt from a new view when next used."""
        from workbench.access.views import reader_folders

        bump(self.store)
        if self._vectors is not None:
            self._vectors.forget(record_id)
        else:
            forget(self.store, self.vectors_dir / "records", record_id)
        for part in (self.name_index(), self.things()):
            part.stale()
            if part.index.exists:
                part.ready()
        for folder in reader_folders(self.store):
            forget(self.store, folder / "vectors" / "records", record_id)
            for name in ("names", "things"):
                shutil.rmtree(folder / "vectors" / name, ignore_errors=True)
