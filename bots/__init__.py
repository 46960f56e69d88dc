"""The built-in bots.

- ``random``: a uniformly random legal move, every game;
- ``heuristic``: a per-game strategy that plays like a sensible person
  (one module per game, each with a ``HeuristicBot``, named by the game's
  declaration).

The arena runs them in the harness's process (external programs enter
through :mod:`arena.entrants` instead); the service plays bot seats with them
(:func:`decide`).  Either way a bot gets one seat's view and legal moves only.
"""
from __future__ import annotations

import importlib

from engine import REGISTRY

from .base import Bot, Move, View
from .random_bot import RandomBot

KINDS = ("random", "heuristic")


def bot_class(kind: str, game: str) -> type[Bot]:
    """The class of built-in bot ``kind`` for ``game``; ValueError if none.
    A game's heuristic bot is the ``HeuristicBot`` of the module its
    declaration names (``engine.declaration.Declaration.bot``)."""
    if kind == "random":
        return RandomBot
    if kind == "heuristic":
        engine = REGISTRY.get(game)
        if engine is None:
            raise ValueError(f"no heuristic bot for game {game!r}")
        heuristic: type[Bot] = importlib.import_module(engine.declaration.bot).HeuristicBot
        return heuristic
    raise ValueError(f"unknown bot kind {kind!r}; built-in kinds: {', '.join(KINDS)}")


def make_bot(kind: str, game: str, seat: int, seed: int) -> Bot:
    return bot_class(kind, game)(game, seat, seed)


#: Multiplier of :func:`decision_seed` (a prime: seeds of two matches' decisions
#: do not line up).
SEED_STEP = 1_000_003


def decision_seed(match_seed: int, version: int) -> int:
    """The seed of a server bot's decision at ``version``: from the match
    seed and the version only (integer arithmetic, no ``hash()``), so the
    same match replays identically on every machine."""
    return match_seed * SEED_STEP + version


def decide(kind: str, game: str, seat: int, match_seed: int, version: int,
           view: View, moves: list[Move]) -> Move:
    """A server bot's move: a fresh bot per decision (the server keeps no bot
    between requests), seeded by :func:`decision_seed`, given exactly the
    seat's view (what ``GET`` returns to that seat) and its legal moves.
    It remembers nothing but what the view carries (``known`` with
    ``recall: "perfect"``)."""
    return make_bot(kind, game, seat, decision_seed(match_seed, version)).choose(view, moves)
