"""Questions to tiered answers: facts (recorded, derived), counts, current states, decisions."""
