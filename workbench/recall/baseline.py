"""The plain vector-RAG recipe, the peer recall is measured against: embed every record's
statement with the same encoder and return the top k by cosine. It knows no names, scopes,
statuses or budgets and never abstains, which is exactly what the comparison is meant to show.

Every record counts, whatever its status or type (superseded, retracted, admitted common
sense): a plain recipe indexes its corpus as it finds it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.errors import Invalid
from workbench.records import meta, shown_status
from workbench.store import Store
from workbench.values.records import Status
from workbench.vectors.encoders import Encoder
from workbench.vocab import PREFIXES

ALL_RECORDS = ("SELECT DISTINCT ?id ?text ?st WHERE { "
               + meta("?r", "?r a wb:Assertion ; dcterms:identifier ?id ; wb:statement ?text ; wb:status ?own")
               + shown_status("?r", "?own", "?st") + " } ORDER BY ?id")


@dataclass(frozen=True)
class Found:
    """One record a system returned: enough to score it (id, status) and to size the context."""

    id: str
    statement: str
    status: Status
    score: float


class PlainRecipe:
    """Top-k cosine over every record statement, embedded once when built."""

    def __init__(self, store: Store, encoder: Encoder, *, k: int = 10) -> None:
        if k < 1:
            raise Invalid(f"k must be at least 1, not {k}")
        rows = store.select(PREFIXES + ALL_RECORDS)
        self.k = k
        self.encoder = encoder
        self.ids = [r["id"].value for r in rows]  # type: ignore[union-attr]
        self.texts = [r["text"].value for r in rows]  # type: ignore[union-attr]
        self.status = [Status.from_iri(r["st"].value) for r in rows]  # type: ignore[union-attr]
        self.matrix = encoder.encode(self.texts) if rows else np.zeros((0, encoder.dim), dtype=np.float32)

    @property
    def name(self) -> str:
        return f"plain top-{self.k}"

    def search(self, question: str) -> list[Found]:
        """The k records whose statements are nearest the question, best first (ties by id)."""
        if not self.ids:
            return []
        cos = self.matrix @ self.encoder.encode([question])[0]
        # The k best by cosine, ties by id (the rows are in id order): a partition, then a sort of
        # what ties with the k-th or beats it (a sort of every row cost 60 ms at 100k records).
        picked = np.arange(len(cos))
        if len(cos) > self.k:
            kth = np.partition(-cos, self.k - 1)[self.k - 1]
            picked = np.flatnonzero(-cos <= kth)
        order = picked[np.lexsort((picked, -cos[picked]))][: self.k]
        return [Found(self.ids[i], self.texts[i], self.status[i], float(cos[i])) for i in order]
