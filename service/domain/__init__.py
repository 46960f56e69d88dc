"""Domain layer: matches, seats, tokens, clocks, the lobby, streams and records."""
