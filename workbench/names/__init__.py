"""Names: the name key, exact resolution, aliases, merges and splits, relation labels, and did-you-
mean suggestions that never bind."""
