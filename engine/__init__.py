"""Lodge rules engines: pure, deterministic, free of Flask and Redis.

``REGISTRY`` maps game ids to engines; it is the service's only entry point.
"""
from engine.biberbande import Biberbande
from engine.biberclan import BiberClan
from engine.core import Game, Registry
from engine.mein_lieber_biber import MeinLieberBiber
from engine.thirteen_beavers import ThirteenBeavers

REGISTRY = Registry()
for _game in (Biberbande(), BiberClan(), MeinLieberBiber(), ThirteenBeavers()):
    REGISTRY.register(_game)

__all__ = ["Game", "REGISTRY"]
