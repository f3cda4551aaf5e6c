"""Extraction: an OpenAI-compatible model proposes candidate facts and rules from transcripts,
offline, into the review queue."""
