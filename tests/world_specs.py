"""Per game, what the worlds tests (``tests/engine/test_worlds.py``) need to
judge its ``deal_world``: a :class:`WorldSpec`, written from the game's
hidden-information rules, registered with :func:`register` (the four games'
in that test file, a plugin game's beside it, as ``tests/toy_game`` does)."""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.core import Event, Game, Move, State

#: a hidden slot: does a world hold the true card there; its uniform chance
#: (called with the world alone; ``...`` as the predicates are lambdas that
#: bind their loop variables as defaults, which mypy cannot infer against
#: a one-argument signature)
Slot = tuple[Callable[..., Any], float]
Policy = Callable[[State, list[Move], random.Random], Move]


@dataclass(frozen=True)
class Position:
    """A match position: its state, players and the events so far."""

    state: State
    n: int
    events: list[Event]
    #: the current round's last reshuffled draw pile, as the admin saw it
    pile: list[str] | None = None

    def world(self, game: Game, seat: int, seed: int) -> State:
        return game.sample_world(self.state, seat, seed, self.events)


def random_move(state: State, legal: list[Move], rng: random.Random) -> Move:
    return rng.choice(legal)


def share(counts: Counter[Any], item: Any) -> float:
    return counts[item] / sum(counts.values())


def swap_last(items: list[str]) -> list[str]:
    """``items`` with its last two exchanged."""
    return items[:-2] + [items[-1], items[-2]]


@dataclass(frozen=True)
class WorldSpec:
    """What the worlds tests need to know of one game (module docstring)."""

    game_id: str
    #: asserts the world's card multisets and public partial facts
    check: Callable[[State, Position, int], None]
    #: the hidden slots of ``state`` for ``seat``: per slot, whether a world
    #: put the true card there, and how likely a uniform deal does
    slots: Callable[[State, int], list[Slot]]
    #: whether ``slots`` gives exact uniform probabilities here (no public
    #: fact skews them)
    plain: Callable[[Position, int], bool]
    #: two creation options that differ only in cards nobody sees early
    variants: Callable[[int], tuple[dict[str, Any], dict[str, Any]]]
    #: the options of the playouts positions are taken from
    playouts: tuple[dict[str, Any], ...] = ({},)
    #: how those playouts choose among the legal moves
    policy: Policy = random_move
    #: the pile a reshuffle just made (admin state right after it), if the
    #: game reshuffles into a pile of known cards
    pile: Callable[[State], list[str]] | None = None
    #: whether the game reshuffles a pile within a round (then some sampled
    #: positions must lie past a reshuffle)
    reshuffles: bool = True


#: game id -> its spec
SPECS: dict[str, WorldSpec] = {}


def register(spec: WorldSpec) -> WorldSpec:
    """Make ``spec`` the worlds tests' spec of the game ``spec.game_id``."""
    SPECS[spec.game_id] = spec
    return spec
