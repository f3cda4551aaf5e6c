"""Workbench: a knowledge-curation workbench for memory that can say how it knows."""
