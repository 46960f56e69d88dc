"""The baseline: a uniformly random legal move, for every game."""
from __future__ import annotations

from .base import Bot, Move, View


class RandomBot(Bot):
    needs_view = False

    def choose(self, view: View | None, moves: list[Move]) -> Move:
        return self.rng.choice(moves)
