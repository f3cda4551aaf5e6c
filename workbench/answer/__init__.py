"""Questions to tiered answers: facts (recorded, derived), counts, current states, decisions."""

from workbench.answer.model import Absence, Answer, Derived, Finding, Recorded, Statement, Tier

__all__ = ["Absence", "Answer", "Derived", "Finding", "Recorded", "Statement", "Tier"]
