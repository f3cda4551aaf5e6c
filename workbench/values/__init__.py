"""Frozen values Workbench hands out, each name once: records and sources, entities, answers and
tiers, guesses and recall bundles, rules."""
