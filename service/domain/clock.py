"""Clocks (contract 1.1 "Clocks, fallback moves and resigning"): the seats'
deadlines, and the schedule the sweeper (:mod:`service.ops.sweeper`) reads.

A match created with ``clock.per_move_ms`` gives every seat in ``to_act`` a
deadline, ``now + per_move_ms`` (epoch ms) at the write that handed it the
decision; every write sets them anew for the seats then to act.  1.2: with
``clock.bank_ms`` every seat also has a time bank: a deadline is
``now + per_move_ms + bank``, and each write first charges the seats whose
decision it ends with the time they took beyond ``per_move_ms``
(:func:`charged`); the banks are stored beside the deadlines.  They are
stored with the snapshot (hash field ``d``, written by the same
compare-and-set as the state, :data:`service.store.keys.APPLY`) and shown in every
view as ``deadline``.

The schedule is a set of sorted sets (:func:`service.store.keys.deadline_key`,
one per shard, each its own hash slot): member a match id, score the epoch ms
at which to look at it, its earliest deadline, or *now* when the server still
owes moves (a request stops after :data:`service.domain.moves.AUTO_MOVES` server
moves).  It is written before the compare-and-set (``ZADD … LT``: an entry
only ever moves earlier), so a crash between the two leaves an entry too
early, never none: an entry only says "look"; what is due is read from the
snapshot, and every move is settled by the compare-and-set like any other.
"""
from __future__ import annotations

import time
from typing import Any

from engine.core import FINISHED, Game, State
from service.store import keys


def now_ms() -> int:
    return int(time.time() * 1000)


def deadlines(game: Game, clock_ms: int | None, state: State, now: int,
              bank: dict[str, int] | None = None) -> dict[str, int]:
    """The deadline of each seat to act (``{}`` without a clock, or when
    nobody acts): ``per_move_ms`` plus what is left of the seat's bank."""
    if clock_ms is None or game.status(state) == FINISHED:
        return {}
    left = bank or {}
    return {str(seat): now + clock_ms + left.get(str(seat), 0) for seat in game.to_act(state)}


def first_bank(bank_ms: int, players: int) -> dict[str, int]:
    """Every seat's bank when the match starts (``{}`` without a bank)."""
    return {str(seat): bank_ms for seat in range(players)} if bank_ms else {}


def charged(deadline: dict[str, int], bank: dict[str, int], now: int) -> dict[str, int]:
    """The banks once the decisions of the seats with a ``deadline`` end at
    ``now`` (contract 1.2 "time banks"): a decision that started at ``s``
    had until ``s + per_move_ms + bank``, so the time it took beyond
    ``per_move_ms`` is ``now - (deadline - bank)`` and what is left is
    ``deadline - now``, between 0 and the bank it had."""
    if not bank:
        return bank
    return {seat: max(0, min(left, deadline[seat] - now)) if seat in deadline else left
            for seat, left in bank.items()}


def due_seat(game: Game, state: State, deadline: dict[str, int], now: int) -> int | None:
    """The seat to act whose deadline has passed first, or None."""
    passed = sorted((at, int(seat)) for seat, at in deadline.items() if at <= now)
    acting = game.to_act(state)
    return next((seat for _, seat in passed if seat in acting), None)


def next_look(deadline: dict[str, int], owed: bool, now: int) -> int | None:
    """When to look at a match written with ``deadline``: now when the
    server still owes moves, else its earliest deadline (None: no clock or
    nobody to act)."""
    if owed:
        return now
    return min(deadline.values()) if deadline else None


class Schedule:
    """When to look at which match: the sweeper's sorted sets."""

    def __init__(self, client: Any):
        self.client = client
        self._claim = client.register_script(keys.DEADLINE_CLAIM)
        self._settle = client.register_script(keys.DEADLINE_SETTLE)

    def look_at(self, match_id: str, when: int) -> None:
        """Look at ``match_id`` at ``when`` (epoch ms) or earlier."""
        self.client.zadd(keys.deadline_key(match_id), {match_id: when}, lt=True)

    def due(self, now: int, limit: int) -> list[tuple[str, int]]:
        """Up to ``limit`` entries per shard due at ``now``: (match id, score).
        One pipeline of single-key reads (a round trip per node, not per
        shard: every worker looks every :data:`service.ops.sweeper.INTERVAL`)."""
        pipe = self.client.pipeline(transaction=False)
        for key in keys.deadline_keys():
            pipe.zrangebyscore(key, "-inf", now, start=0, num=limit, withscores=True)
        return [(member.decode() if isinstance(member, bytes) else member, int(score))
                for entries in pipe.execute() for member, score in entries]

    def claim(self, match_id: str, seen: int, lease_until: int) -> bool:
        """Take a due entry (read with score ``seen``) until ``lease_until``;
        False when another sweeper took or moved it first."""
        return bool(self._claim(keys=[keys.deadline_key(match_id)], args=[match_id, seen, lease_until]))

    def settle(self, match_id: str, lease_until: int, when: int | None) -> None:
        """Done with a leased entry: look again at ``when`` (None: never),
        unless someone moved the entry meanwhile."""
        self._settle(keys=[keys.deadline_key(match_id)], args=[match_id, lease_until, "" if when is None else when])
