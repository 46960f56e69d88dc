"""The built-in bots.

- ``random``: a uniformly random legal move, every game;
- ``heuristic``: a per-game strategy that plays like a sensible person
  (one module per game, each with a ``HeuristicBot``, named by the game's
  declaration).

The arena runs them in the harness's process (external programs enter
through :mod:`arena.entrants` instead); the service plays bot seats with them
(:func:`decide`; those that may think for long in worker processes,
:mod:`bots.pool`).  Either way a bot gets one seat's view and legal moves only.

More kinds can be plugged in, like games: the environment variable
:data:`EXTRA_BOTS` names them, comma-separated ``kind=module:Class``, each a
:class:`~bots.base.Bot` subclass (the tests' slow bot enters this way).
"""
from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Callable
from typing import Any

from engine import REGISTRY

from .base import Bot, Move, View
from .random_bot import RandomBot

KINDS = ("random", "heuristic")
#: OpenSpiel's ISMCTS (:mod:`lodge_openspiel.bot`): searches the seat's
#: information state through the engine's worlds, so it is handed the match
#: (state and events) rather than a view; needs the ``openspiel`` extra.
ISMCTS = "ismcts"
#: the setting that lets the server play :data:`ISMCTS` seats (a decision takes
#: up to a CPU-second, in a worker process of :mod:`bots.pool`)
ISMCTS_SETTING = "LODGE_ISMCTS_BOTS"
#: the environment variable naming plugged-in bot kinds: ``kind=module:Class,…``
EXTRA_BOTS = "LODGE_EXTRA_BOTS"


def extra_bots(spec: str) -> dict[str, str]:
    """The kinds named by ``spec`` (``kind=module:Class,…``): kind → ``module:Class``."""
    entries = (part.strip().partition("=") for part in spec.split(",") if part.strip())
    return {kind.strip(): target.strip() for kind, _, target in entries}


def server_kinds() -> tuple[str, ...]:
    """The bot kinds this server plays: :data:`KINDS`, :data:`ISMCTS` when
    :data:`ISMCTS_SETTING` is ``1`` and the extra is installed, and the
    kinds :data:`EXTRA_BOTS` names."""
    from lodge_openspiel import available

    enabled = os.environ.get(ISMCTS_SETTING) == "1" and available()
    return (*KINDS, *((ISMCTS,) if enabled else ()), *extra_bots(os.environ.get(EXTRA_BOTS, "")))


def bot_class(kind: str, game: str) -> type[Bot]:
    """The class of bot ``kind`` for ``game``; ValueError if none.
    A game's heuristic bot is the ``HeuristicBot`` of the module its
    declaration names (``engine.declaration.Declaration.bot``); a plugged-in
    kind is the class :data:`EXTRA_BOTS` names."""
    if kind == "random":
        return RandomBot
    if kind == "heuristic":
        engine = REGISTRY.get(game)
        if engine is None:
            raise ValueError(f"no heuristic bot for game {game!r}")
        heuristic: type[Bot] = importlib.import_module(engine.declaration.bot).HeuristicBot
        return heuristic
    plugged = extra_bots(os.environ.get(EXTRA_BOTS, "")).get(kind)
    if plugged is not None:
        module, _, name = plugged.partition(":")
        extra: type[Bot] = getattr(importlib.import_module(module), name)
        return extra
    raise ValueError(f"unknown bot kind {kind!r}; built-in kinds: {', '.join(KINDS)}")


def reads_match(kind: str) -> bool:
    """Whether bot ``kind`` decides from the match (:data:`ISMCTS`) rather
    than from the seat's view and legal moves."""
    return kind == ISMCTS


def pooled(kind: str, game: str) -> bool:
    """Whether the server lets bot ``kind`` decide in a worker process
    (:mod:`bots.pool`): :data:`ISMCTS` and every bot class that is not
    :attr:`~bots.base.Bot.inline`."""
    return reads_match(kind) or not bot_class(kind, game).inline


def make_bot(kind: str, game: str, seat: int, seed: int) -> Bot:
    return bot_class(kind, game)(game, seat, seed)


#: Bits of a derived seed (:func:`derive_seed`): a valid match seed.
SEED_BITS = 63


def derive_seed(domain: str, *parts: object, bits: int = SEED_BITS) -> int:
    """A ``bits``-bit seed from ``parts`` (secrets among them), separated by
    ``domain``: the first bits of SHA-256 over ``domain:part:…``, the same on
    every machine (no ``hash()``).  One way: the seed tells nothing from
    which the parts follow, so a secret part (a match seed) stays secret."""
    digest = hashlib.sha256(":".join([domain, *map(str, parts)]).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - bits)


def decision_seed(match_seed: int, game: str, seat: int, version: int) -> int:
    """The seed of a server bot's decision at ``version``: keyed by the match
    seed through :func:`derive_seed`, so the same match replays identically
    while the bot cannot work the match seed (and so every shuffle) out of
    its own seed."""
    return derive_seed("lodge-bot", match_seed, game, seat, version)


#: a match as a searching bot reads it: its state and its event log
Match = tuple[dict[str, Any], list[dict[str, Any]]]


def decide(kind: str, game: str, seat: int, match_seed: int, version: int,
           view: View, moves: list[Move], match: Callable[[], Match] | None = None) -> Move:
    """A server bot's move: a fresh bot per decision (the server keeps no bot
    between requests), seeded by :func:`decision_seed`, given exactly the
    seat's view (what ``GET`` returns to that seat) and its legal moves.
    It remembers nothing but what the view carries (``known`` with
    ``recall: "perfect"``).  :data:`ISMCTS` instead gets the match (``match()``:
    state and event log) and reads it only through the seat's information
    state and the engine's worlds for that seat."""
    seed = decision_seed(match_seed, game, seat, version)
    if reads_match(kind) and match is not None:
        from lodge_openspiel import bot

        engine = REGISTRY.get(game)
        assert engine is not None
        state, events = match()
        return bot.decide(engine, state, seat, events, seed)
    return make_bot(kind, game, seat, seed).choose(view, moves)
