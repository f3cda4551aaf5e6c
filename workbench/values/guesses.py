"""What a guess is: a candidate value with a score and the similar things behind it. A model
guess is shown apart from facts, never written to the store, never a premise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Guess:
    """A ranked candidate for a gap. ``value`` is an N-Triples term, ``label`` its words,
    ``score`` in (0, 1]: the similarity-weighted share of similar things that have it."""

    value: str
    score: float
    because: tuple[str, ...]  # similar things that have this value (IRIs, or their words once labelled)
    label: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "label": self.label or self.value,
            "score": round(self.score, 4),
            "because": list(self.because),
            "kind": "model guess",
        }
