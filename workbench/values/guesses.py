"""What a guess is: a candidate value with a score, the chance of being right measured for guesses
like it, and the things behind it. A model guess is shown apart from facts, never written to the
store, never a premise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Guess:
    """A ranked candidate for a gap. ``value`` is an N-Triples term, ``label`` its words,
    ``score`` in (0, 1] the model's own (a kind's posterior; a value's likeliness-weighed share of
    the subjects of X's likely kinds that hold it), ``chance`` what that score has meant: the
    share right among held-out guesses that scored the same (None: not measured, too few), and
    ``model`` the model and the store version it learned from."""

    value: str
    score: float
    because: tuple[str, ...]  # things that have this value (IRIs, or their words once labelled)
    label: str = ""
    chance: float | None = None
    model: str = ""

    def chance_text(self) -> str:
        """The stated chance in words.

        >>> Guess("<urn:tea>", 0.5, (), chance=0.42).chance_text()
        'such guesses were right 42% of the time'
        >>> Guess("<urn:tea>", 0.5, ()).chance_text()
        'score 0.50; chance not measured: too few held-out facts'
        """
        if self.chance is None:
            return f"score {self.score:.2f}; chance not measured: too few held-out facts"
        return f"such guesses were right {self.chance:.0%} of the time"

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "label": self.label or self.value,
            "score": round(self.score, 4),
            "chance": None if self.chance is None else round(self.chance, 4),
            "because": list(self.because),
            "kind": "model guess",
            "model": self.model,
        }
