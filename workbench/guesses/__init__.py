"""Model guesses for genuine gaps: things ranked by their graph vectors, never promoted, never
premises."""
