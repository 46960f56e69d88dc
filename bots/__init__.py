"""The built-in bots.

- ``random``: a uniformly random legal move, every game;
- ``heuristic``: a per-game strategy that plays like a sensible person
  (one module per game, each with a ``HeuristicBot``).

External programs enter through :mod:`arena.external` instead.
"""
from __future__ import annotations

import importlib

from .base import Bot
from .random_bot import RandomBot

#: game id -> module holding that game's ``HeuristicBot``.
HEURISTIC_MODULES = {
    "biberbande": "bots.biberbande",
    "biberclan": "bots.biberclan",
    "mein-lieber-biber": "bots.mein_lieber_biber",
    "thirteen-beavers": "bots.thirteen_beavers",
}
KINDS = ("random", "heuristic")


def bot_class(kind: str, game: str) -> type[Bot]:
    """The class of built-in bot ``kind`` for ``game``; ValueError if none."""
    if kind == "random":
        return RandomBot
    if kind == "heuristic" and game in HEURISTIC_MODULES:
        return importlib.import_module(HEURISTIC_MODULES[game]).HeuristicBot
    if kind == "heuristic":
        raise ValueError(f"no heuristic bot for game {game!r}")
    raise ValueError(f"unknown bot kind {kind!r}; built-in kinds: {', '.join(KINDS)}")


def make_bot(kind: str, game: str, seat: int, seed: int) -> Bot:
    return bot_class(kind, game)(game, seat, seed)
