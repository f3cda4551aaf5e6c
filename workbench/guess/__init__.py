"""Vectors that rank and never decide: encoders, FAISS indexes, recall bundles, model guesses."""
