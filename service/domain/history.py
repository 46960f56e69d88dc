"""Matches rebuilt from their move log through the deterministic engine.

A compacted (finished) match keeps only its moves and final state
(:class:`service.store.store.Archive`); its events, and the state after any earlier
version (to answer an idempotent retry with the first response's body), are
derived again here by replaying the moves from the match's seed and options;
so is the state at the version a delayed spectator or referee sees (1.2).
Engines are pure, so the replay yields the very events and states the match
produced, byte for byte.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from engine.core import Game
from service.store.cache import LRU
from service.store.store import Meta

#: Events of one version each, stamped: element v holds version v's events.
Timeline = list[list[dict[str, Any]]]


def stamp(events: Iterable[dict[str, Any]], version: int) -> list[dict[str, Any]]:
    """Events as stored: each carries the version its move produced."""
    return [{**e, "version": version} for e in events]


def replay(game: Game, meta: Meta, moves: Sequence[bytes]) -> tuple[dict[str, Any], Timeline]:
    """The state after ``moves`` (raw move log entries) and every version's
    events.  An entry's ``by`` (a move the server played: ``bot``,
    ``resigned``, ``clock``, ``webhook``) goes to the engine too: a clock's
    fallback starts with ``timed_out`` again, with the entry's ``reason``
    for a webhook seat's."""
    state, events = game.new_state(list(meta.players), meta.seed, meta.options)
    timeline = [stamp(events, 0)]
    for version, raw in enumerate(moves, start=1):
        state, events = _play(game, state, raw)
        timeline.append(stamp(events, version))
    return state, timeline


def _play(game: Game, state: dict[str, Any], raw: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One move log entry played on ``state`` (``by`` and ``reason`` included)."""
    entry = orjson.loads(raw)
    return game.play(state, entry["seat"], entry["move"], entry.get("by"), entry.get("reason"))


@dataclass
class History:
    """Per-worker cache of the timelines of compacted matches (they never
    change); a long match's timeline holds a few thousand events."""

    size: int = 64
    _timelines: LRU[str, Timeline] = field(init=False)
    #: Per match, the last state a delayed caller was shown, and its version.
    _delayed: LRU[str, tuple[int, dict[str, Any]]] = field(init=False)

    def __post_init__(self) -> None:
        self._timelines = LRU(self.size)
        self._delayed = LRU(self.size)

    def state_at(self, game: Game, meta: Meta, moves: Sequence[bytes]) -> dict[str, Any]:
        """The state after ``moves`` (the first moves of the log): played on
        from the last such state of this match when it is not beyond them
        (a delayed view moves forward a version at a time), else from the start."""
        version = len(moves)
        cached = self._delayed.get(meta.match_id)
        if cached is not None and cached[0] <= version:
            start, state = cached
        else:
            start, state = 0, game.new_state(list(meta.players), meta.seed, meta.options)[0]
        for raw in moves[start:]:
            state = _play(game, state, raw)[0]
        self._delayed.put(meta.match_id, (version, state))
        return state

    def events_after(self, game: Game, meta: Meta, moves: Sequence[bytes], after: int) -> list[dict[str, Any]]:
        """The events with version > ``after`` of a finished match's log."""
        timeline = self._timelines.get(meta.match_id)
        if timeline is None or len(timeline) != len(moves) + 1:
            timeline = replay(game, meta, moves)[1]
            self._timelines.put(meta.match_id, timeline)
        return [e for events in timeline[max(after + 1, 0):] for e in events]
