"""Places from a result's ranking (every game's ``result["ranking"]``)."""
from __future__ import annotations


def places(ranking: list[list[int]], n: int) -> list[int]:
    """1-based place per seat from a result's ``ranking`` groups; equal
    results share a place and the next place skips (1, 1, 3)."""
    place = [0] * n
    better = 0
    for group in ranking:
        for seat in group:
            place[seat] = better + 1
        better += len(group)
    return place
