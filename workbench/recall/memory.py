"""One recalled record, as a recall bundle holds it (:mod:`workbench.recall.bundles`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.values.records import Record


@dataclass(frozen=True)
class Memory:
    """One recalled record: its id and statement as imported, its tier, score and source."""

    record: Record
    score: float
    tier: str  # "recorded" | "guessed"
    why: str
    coverage: float = 0.0  # the share of the question's salience it holds
    cosine: float = 0.0  # its cosine to the question

    def to_json(self) -> dict[str, Any]:
        r = self.record
        return {
            "id": r.id,
            "statement": r.statement,
            "tier": self.tier,
            "score": round(self.score, 4),
            "status": r.status.value,
            "type": r.type.value,
            "effective_from": r.effective_from,
            "supersedes": list(r.supersedes),
            "superseded_by": list(r.superseded_by),
            "why": self.why,
            "source": {
                "id": r.source.id,
                "said_by": r.source.said_by,
                "captured_at": r.source.captured_at,
                "locator": r.source.locator,
            },
        }
