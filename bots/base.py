"""What every bot is: one seat's player for one match.

The harness (or an external program) fetches the seat's view
(``GET /v1/matches/{id}`` with the seat's token) and its legal moves
(``GET /v1/matches/{id}/legal-moves``) and asks :meth:`Bot.choose` for one of
the listed moves, which it posts back unchanged.  A bot sees exactly what the
seat may see over HTTP and nothing else.
"""
from __future__ import annotations

import random
from typing import Any

View = dict[str, Any]
Move = dict[str, Any]


class Bot:
    """Base class: one instance per seat per match, so a bot may remember
    what it saw earlier in the match.  ``rng`` is seeded by the harness, so a
    tournament with a seed is reproducible."""

    #: False for bots that decide from the legal moves alone: the harness then
    #: skips fetching the view (one request less per move).
    needs_view = True
    #: True for bots whose every decision is cheap (a few milliseconds at
    #: most, ``make bench-bots``): the server makes them inside the request;
    #: the others decide in a worker process (:mod:`bots.pool`).
    inline = True

    def __init__(self, game: str, seat: int, seed: int):
        self.game = game
        self.seat = seat
        self.rng = random.Random(seed)

    def choose(self, view: View | None, moves: list[Move]) -> Move:
        """Return one element of ``moves`` (never empty when called).
        ``view`` is None only for a bot without :attr:`needs_view`."""
        raise NotImplementedError

    def seen(self, view: View | None) -> View:
        """``view``, which a bot with :attr:`needs_view` always gets."""
        if view is None:
            raise ValueError(f"{type(self).__name__} decides from the seat's view; it needs one")
        return view
