"""Random legal play, shared by every game's property tests.

``play_out`` drives a match from creation to its end with moves chosen by a
seeded RNG among the engine's own legal moves, calling ``check`` after every
move so invariants are checked at every step.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic

import orjson

from engine.core import ADMIN_VIEWER, FINISHED, SPECTATOR_VIEWER, Game, StateT, Viewer, seat_viewer


@dataclass
class Step(Generic[StateT]):
    """One applied move: who, what, the state before and after, its events."""

    seat: int | None
    move: Mapping[str, Any] | None
    before: StateT | None
    after: StateT
    events: list[dict[str, Any]]


@dataclass
class Playout(Generic[StateT]):
    game: Game[StateT, Any]
    names: list[str]
    seed: int
    options: dict[str, Any]
    steps: list[Step[StateT]] = field(default_factory=list)

    @property
    def final(self) -> StateT:
        return self.steps[-1].after

    @property
    def moves(self) -> list[tuple[int, Mapping[str, Any]]]:
        return [(s.seat, s.move) for s in self.steps[1:] if s.seat is not None and s.move is not None]


def viewers(n: int) -> list[Viewer]:
    """Every kind of viewer of an n-seat match."""
    return [SPECTATOR_VIEWER, ADMIN_VIEWER, *(seat_viewer(s) for s in range(n))]


def play_out(game: Game[StateT, Any], n: int, seed: int, options: dict[str, Any] | None = None, *,
             rng: random.Random | None = None,
             check: Callable[[Step[StateT]], None] | None = None,
             max_moves: int = 200_000) -> Playout[StateT]:
    """Play a match to its end with random legal moves; ``check`` sees every step."""
    rng = rng or random.Random(seed)
    names = [f"p{i}" for i in range(n)]
    state, events, resolved = game.create(names, seed, options or {})
    out = Playout(game, names, seed, resolved)
    step = Step(None, None, None, state, events)
    out.steps.append(step)
    if check:
        check(step)
    while game.status(state) != FINISHED:
        assert len(out.steps) <= max_moves, "match did not end within the move bound"
        to_act = game.to_act(state)
        assert to_act, "an active match must have a seat to act"
        seat = rng.choice(to_act)
        legal = game.legal_moves(state, seat)
        assert legal, f"seat {seat} is to act but has no legal move"
        move = rng.choice(legal)
        new_state, events = game.play(state, seat, move)
        step = Step(seat, move, state, new_state, events)
        out.steps.append(step)
        if check:
            check(step)
        state = new_state
    return out


def replay(game: Game[StateT, Any], playout: Playout[StateT]) -> StateT:
    """Apply a playout's moves to a fresh match; return the final state."""
    state, _, _ = game.create(playout.names, playout.seed, playout.options)
    for seat, move in playout.moves:
        state, _ = game.play(state, seat, move)
    return state


def snapshot_bytes(state: Mapping[str, Any]) -> bytes:
    return orjson.dumps(state)
