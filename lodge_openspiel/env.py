"""A Lodge game as a PettingZoo AEC environment, through Shimmy's OpenSpiel
compatibility wrapper: agents ``player_0`` …, observations are the
observation tensors of :mod:`lodge_openspiel.games`, and every agent's
``infos[agent]["action_mask"]`` marks its legal action ids.  The deal's
chance node is sampled by the wrapper (``reset(seed=…)``)."""
from __future__ import annotations

from shimmy import OpenSpielCompatibilityV0

from . import games


def env(game_id: str, players: int | None = None, seed: int = 0,
        render_mode: str | None = None) -> OpenSpielCompatibilityV0:
    """The AEC environment of Lodge game ``game_id`` with ``players`` seats."""
    return OpenSpielCompatibilityV0(env=games.load(game_id, players, seed), render_mode=render_mode)
