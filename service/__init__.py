"""Lodge web service: the HTTP contract over the rules engines and Redis."""
