"""Lodge's games inside OpenSpiel and PettingZoo, and an ISMCTS bot.

An optional extra (``pip install -e '.[openspiel]'``): importing
:mod:`lodge_openspiel.games` registers every game of :data:`engine.REGISTRY`
with OpenSpiel as ``lodge_<id>`` (dashes become underscores, e.g.
``lodge_mein_lieber_biber``); :mod:`lodge_openspiel.env` wraps one in a
PettingZoo AEC environment through Shimmy; :mod:`lodge_openspiel.bot` is
OpenSpiel's ISMCTS bot over them.  See docs/ai.md.
"""
from __future__ import annotations

import importlib.util


def available() -> bool:
    """True when the extra (OpenSpiel, PettingZoo, Shimmy) is installed."""
    return all(importlib.util.find_spec(name) is not None for name in ("pyspiel", "pettingzoo", "shimmy"))
