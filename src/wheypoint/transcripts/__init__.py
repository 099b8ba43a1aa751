"""Reading coding agents' own session transcripts into one normalised, verbatim turn stream."""
