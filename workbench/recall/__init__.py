"""Recall in words: scoped bundles of records, or "no memory", and its evaluation against plain
vector RAG."""
