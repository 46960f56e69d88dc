"""Ladders in Redis (layout in :mod:`service.store.keys`, "Ladders").

Every write is one script on the ladder's own slot; a ladder match's keys
are never touched here, so nothing here is cross-slot.  Entrant records are
kept as the raw JSON read, so that a rating write can compare-and-set on
exactly what its ratings were computed from (:data:`keys.LADDER_RATE`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from service.store import keys as lua
from service.store.keys import LadderKeys
from service.store.store import Store


@dataclass(frozen=True)
class LadderRead:
    """A ladder's header fields and entrants (id -> raw JSON), read together."""

    header: dict[str, str]
    entrants: dict[str, bytes]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class LadderStore:
    """The ladders of one :class:`Store` (its client and its write path)."""

    def __init__(self, store: Store):
        self.store = store
        client = store.client
        self._create = client.register_script(lua.LADDER_CREATE)
        self._add = client.register_script(lua.ENTRANT_ADD)
        self._read = client.register_script(lua.LADDER_READ)
        self._rate = client.register_script(lua.LADDER_RATE)

    def _write(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        return self.store._write(script, keys, args)

    def create(self, ladder_id: str, header: dict[str, Any]) -> bool:
        """A new ladder with ``header``'s fields; False when the id is taken."""
        args = [x for field, value in header.items() for x in (field, value)]
        return bool(self._write(self._create, [LadderKeys(ladder_id).ladder], args))

    def add_entrant(self, ladder_id: str, entrant_id: str, record: dict[str, Any]) -> str:
        """Register an entrant: ``ok``, ``missing``, ``taken`` (its name) or ``retry`` (its id)."""
        k = LadderKeys(ladder_id)
        reply = self._write(self._add, [k.ladder, k.entrants, k.names],
                            [record["name"], entrant_id, orjson.dumps(record)])
        return _text(reply)

    def header(self, ladder_id: str) -> dict[str, str] | None:
        """The ladder's header fields; None when there is no such ladder."""
        flat = self.store.client.hgetall(LadderKeys(ladder_id).ladder)
        return {_text(f): _text(v) for f, v in flat.items()} or None

    def read(self, ladder_id: str, entrant_ids: list[str] | None = None) -> LadderRead | None:
        """The ladder and the entrants ``entrant_ids`` (None: every one;
        an unknown id is left out); None when there is no such ladder."""
        k = LadderKeys(ladder_id)
        reply = self._read(keys=[k.ladder, k.entrants], args=entrant_ids or [])
        if not reply:
            return None
        flat_header, found = reply
        header = {_text(f): _text(v) for f, v in zip(flat_header[::2], flat_header[1::2])}
        if entrant_ids:
            entrants = {i: raw for i, raw in zip(entrant_ids, found) if raw is not None}
        else:
            entrants = {_text(i): raw for i, raw in zip(found[::2], found[1::2])}
        return LadderRead(header, entrants)

    def pend(self, ladder_id: str, match_id: str, created_ms: int) -> None:
        """Note a ladder match as not rated yet (before it is created)."""
        self.store.client.zadd(LadderKeys(ladder_id).pending, {match_id: created_ms})

    def pending(self, ladder_id: str) -> list[tuple[str, int]]:
        """The ladder's matches not rated yet: (match id, creation epoch ms)."""
        entries: list[tuple[bytes, float]] = self.store.client.zrange(  # type: ignore[assignment]
            LadderKeys(ladder_id).pending, 0, -1, withscores=True)
        return [(_text(member), int(score)) for member, score in entries]

    def drop(self, ladder_id: str, match_id: str) -> None:
        """Forget a pending match that is gone before its end."""
        self.store.client.zrem(LadderKeys(ladder_id).pending, match_id)

    def rate(self, ladder_id: str, match_id: str, changes: list[tuple[str, bytes, dict[str, Any]]]) -> str:
        """Write a match's ratings: per entrant (id, the raw record they were
        computed from, the new record).  ``ok``, ``done`` (rated already, or
        dropped) or ``stale`` (read again)."""
        k = LadderKeys(ladder_id)
        args: list[Any] = [match_id]
        for entrant_id, old, new in changes:
            args += [entrant_id, old, orjson.dumps(new)]
        return _text(self._write(self._rate, [k.ladder, k.entrants, k.pending], args))
