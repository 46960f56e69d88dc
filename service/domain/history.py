"""Matches rebuilt from their move log through the deterministic engine.

A compacted (finished) match keeps only its moves and final state
(:class:`service.store.store.Archive`); its events, and the state after any earlier
version (to answer an idempotent retry with the first response's body), are
derived again here by replaying the moves from the match's seed and options.
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
        entry = orjson.loads(raw)
        state, events = game.play(state, entry["seat"], entry["move"], entry.get("by"), entry.get("reason"))
        timeline.append(stamp(events, version))
    return state, timeline


@dataclass
class History:
    """Per-worker cache of the timelines of compacted matches (they never
    change); a long match's timeline holds a few thousand events."""

    size: int = 64
    _timelines: LRU[str, Timeline] = field(init=False)

    def __post_init__(self) -> None:
        self._timelines = LRU(self.size)

    def events_after(self, game: Game, meta: Meta, moves: Sequence[bytes], after: int) -> list[dict[str, Any]]:
        """The events with version > ``after`` of a finished match's log."""
        timeline = self._timelines.get(meta.match_id)
        if timeline is None or len(timeline) != len(moves) + 1:
            timeline = replay(game, meta, moves)[1]
            self._timelines.put(meta.match_id, timeline)
        return [e for events in timeline[max(after + 1, 0):] for e in events]
