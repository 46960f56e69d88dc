"""Lodge rules engines: pure, deterministic, free of Flask and Redis.

``REGISTRY`` maps game ids to engines; it is the service's only entry point.
A game is registered here, in one line (or, as a plugin, named in the
environment variable ``LODGE_EXTRA_GAMES``: comma-separated ``module:Class``,
e.g. ``mygames.nim:Nim``); registration refuses a game whose declaration lacks
a piece (``engine.core.check_declaration``), so the import fails.
"""
import importlib
import os
from typing import Any

from engine.biberbande import Biberbande
from engine.biberclan import BiberClan
from engine.core import Game, Registry
from engine.mein_lieber_biber import MeinLieberBiber
from engine.thirteen_beavers import ThirteenBeavers

#: the environment variable naming extra games to register (plugins)
EXTRA_GAMES = "LODGE_EXTRA_GAMES"


def extra_games(spec: str) -> list[Game[Any, Any]]:
    """The games named by ``spec`` (``module:Class,module:Class``)."""
    games = []
    for entry in filter(None, (part.strip() for part in spec.split(","))):
        module, _, name = entry.partition(":")
        games.append(getattr(importlib.import_module(module), name)())
    return games


REGISTRY = Registry()
_GAMES: list[Game[Any, Any]] = [Biberbande(), BiberClan(), MeinLieberBiber(), ThirteenBeavers(),
                           *extra_games(os.environ.get(EXTRA_GAMES, ""))]
for _game in _GAMES:
    REGISTRY.register(_game)

__all__ = ["Game", "REGISTRY"]
