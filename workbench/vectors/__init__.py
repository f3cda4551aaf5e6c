"""Vectors: sentence encoders and FAISS indexes kept on disk beside the store. They rank; they never
decide."""
