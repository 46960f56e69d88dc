"""The Redis store of matches, with a per-worker cache in front of it.

The store knows nothing about games: it keeps opaque JSON-able states,
versions, move logs, events and token hashes (layout in :mod:`service.keys`).

Caching: a match's meta never changes, so it is cached per worker; the last
snapshot seen of a match is cached too, but only the write path
(:meth:`Store.apply`) trusts it, because the compare-and-set in Redis catches
a stale one.  Reads that must be current go to Redis.

Redis ``ConnectionError``/``TimeoutError`` propagate unchanged; the web layer
maps them to 503.  Every write is a single Lua script, so nothing is ever
half-written.
"""
from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import redis
from redis.commands.core import Script

from service import keys as lua
from service.cache import LRU
from service.keys import Keys


@dataclass(frozen=True)
class Meta:
    """What never changes about a match."""

    match_id: str
    game: str
    players: list[str]
    seed: int
    options: dict[str, Any]
    admin_hash: str
    seat_hashes: list[str]
    created: float

    def to_json(self) -> bytes:
        return orjson.dumps({
            "game": self.game, "players": self.players, "seed": self.seed,
            "options": self.options, "admin": self.admin_hash,
            "seats": self.seat_hashes, "created": self.created})

    @classmethod
    def from_json(cls, match_id: str, raw: bytes | str) -> Meta:
        d = orjson.loads(raw)
        return cls(match_id, d["game"], d["players"], d["seed"], d["options"],
                   d["admin"], d["seats"], d["created"])


@dataclass(frozen=True)
class Snapshot:
    """A state and its version.  The state dict is shared: never mutate it."""

    version: int
    state: dict[str, Any]


@dataclass(frozen=True)
class ApplyResult:
    """Outcome of :meth:`Store.apply`: exactly one of the fields is set."""

    version: int | None = None            # ok: the version the move produced
    conflict: Snapshot | None = None      # the stored snapshot differed
    replay: tuple[int, bytes] | None = None  # idempotent replay: status, body
    missing: bool = False                 # the match is gone


class Store:
    """Matches in Redis: one atomic script per write, one round trip per move."""

    def __init__(self, client: redis.Redis, *, ttl: int, cache_size: int = 4096,
                 write: Callable[[Script, list[str], list[Any]], Any] | None = None):
        """``write(script, keys, args)`` runs the write scripts (create, move,
        delete) when given, e.g. :class:`service.redis_client.ReplicaWait`."""
        self.client = client
        self.ttl = ttl
        self._write = write or _run
        self._create = client.register_script(lua.CREATE)
        self._apply = client.register_script(lua.APPLY)
        self._events_since = client.register_script(lua.EVENTS_SINCE)
        self._delete = client.register_script(lua.DELETE)
        self._record = client.register_script(lua.RECORD)
        self._meta: LRU[str, Meta] = LRU(cache_size)
        self._snaps: LRU[str, Snapshot] = LRU(cache_size)
        self._snap_lock = threading.Lock()

    # --- health ---------------------------------------------------------
    def ping(self) -> bool:
        return bool(self.client.ping())

    # --- writes ---------------------------------------------------------
    def create(self, meta: Meta, state: dict[str, Any], events: list[dict[str, Any]]) -> bool:
        """Write a new match (version 0); False when the id is taken."""
        k = Keys(meta.match_id)
        state_json = orjson.dumps(state)
        created = self._write(self._create, k.fixed(), [
            meta.to_json(), state_json, self.ttl, *(orjson.dumps(e) for e in events)])
        if created:
            self._meta.put(meta.match_id, meta)
            self._remember(meta.match_id, Snapshot(0, state))
        return bool(created)

    def apply(self, match_id: str, expected: int, state: dict[str, Any], entry: dict[str, Any],
              events: list[dict[str, Any]], idem_key: str | None = None,
              idem_record: bytes = b"") -> ApplyResult:
        """Store ``state`` as version ``expected + 1`` if ``expected`` is current.

        ``entry`` goes to the move log, ``events`` (already version-stamped)
        to the event log.  With ``idem_key``, ``idem_record`` (see
        :func:`encode_record`) is stored under it; when the key already holds
        a record, that response comes back instead and nothing is written.
        On success the cache holds the new snapshot; on a conflict it holds
        the stored one, which is returned.
        """
        k = Keys(match_id)
        keys = k.fixed()
        if idem_key is not None:
            keys.append(k.idem(idem_key))
        reply = self._write(self._apply, keys, [
            expected, orjson.dumps(state), orjson.dumps(entry), self.ttl, idem_record,
            secrets.token_hex(8), *(orjson.dumps(e) for e in events)])
        outcome = reply[0]
        if outcome == b"ok":
            version = int(reply[1])
            self._remember(match_id, Snapshot(version, state))
            return ApplyResult(version=version)
        if outcome == b"conflict":
            snap = Snapshot(int(reply[1]), orjson.loads(reply[2]))
            self._remember(match_id, snap)
            return ApplyResult(conflict=snap)
        if outcome == b"idem":
            return ApplyResult(replay=decode_record(reply[1]))
        self.forget(match_id)
        return ApplyResult(missing=True)

    def delete(self, match_id: str) -> bool:
        """Remove every key of the match; False when there was nothing."""
        k = Keys(match_id)
        removed = -1
        while removed < 0:  # -1: a move added an idempotency record meanwhile
            records = [r.decode() if isinstance(r, bytes) else r for r in self.client.smembers(k.idems)]
            removed = self._write(self._delete, k.fixed() + sorted(records), [])
        self.forget(match_id)
        return bool(removed)

    # --- reads ----------------------------------------------------------
    def meta(self, match_id: str) -> Meta | None:
        """The match's meta (cached: it never changes), None when unknown."""
        meta = self._meta.get(match_id)
        if meta is None:
            raw = self.client.get(Keys(match_id).meta)
            if raw is None:
                return None
            meta = Meta.from_json(match_id, raw)
            self._meta.put(match_id, meta)
        return meta

    def load(self, match_id: str) -> tuple[Meta, Snapshot] | None:
        """Meta and the current snapshot, in one round trip; None when gone."""
        k = Keys(match_id)
        meta = self._meta.get(match_id)
        if meta is not None:
            snap = self._read_snapshot(match_id, self.client.hmget(k.snap, "v", "s"))
            return None if snap is None else (meta, snap)
        pipe = self.client.pipeline(transaction=False)
        pipe.get(k.meta)
        pipe.hmget(k.snap, "v", "s")
        raw_meta, fields = pipe.execute()
        snap = self._read_snapshot(match_id, fields)
        if raw_meta is None or snap is None:
            return None
        meta = Meta.from_json(match_id, raw_meta)
        self._meta.put(match_id, meta)
        return meta, snap

    def cached(self, match_id: str) -> tuple[Meta, Snapshot] | None:
        """Meta and the last snapshot this worker saw, when both are cached."""
        meta, snap = self._meta.get(match_id), self._snaps.get(match_id)
        return None if meta is None or snap is None else (meta, snap)

    def snapshot(self, match_id: str) -> Snapshot | None:
        """The current snapshot from Redis; None when the match is gone."""
        return self._read_snapshot(match_id, self.client.hmget(Keys(match_id).snap, "v", "s"))

    def idempotent_response(self, match_id: str, idem_key: str) -> tuple[int, bytes] | None:
        """The first response stored under ``idem_key``, if any."""
        raw = self.client.get(Keys(match_id).idem(idem_key))
        return None if raw is None else decode_record(raw)

    def events_since(self, match_id: str, after: int) -> tuple[int, list[bytes]] | None:
        """Current version and the raw events with version > ``after``."""
        k = Keys(match_id)
        reply = self._events_since(keys=[k.snap, k.events, k.evidx], args=[after])
        if not reply:
            return None
        return int(reply[0]), list(reply[1])

    def record(self, match_id: str) -> tuple[Snapshot, list[bytes]] | None:
        """Current snapshot and the raw move log, read atomically (one script)."""
        k = Keys(match_id)
        fields, moves = self._record(keys=[k.snap, k.moves])
        snap = self._read_snapshot(match_id, fields)
        return None if snap is None else (snap, moves)

    # --- cache ------------------------------------------------------------
    def forget(self, match_id: str) -> None:
        self._meta.pop(match_id)
        self._snaps.pop(match_id)

    def _read_snapshot(self, match_id: str, fields: Sequence[bytes | str | None]) -> Snapshot | None:
        raw_version, state = fields
        if raw_version is None or state is None:
            self.forget(match_id)
            return None
        version = int(raw_version)
        cached = self._snaps.get(match_id)
        if cached is not None and cached.version == version:
            return cached
        snap = Snapshot(version, orjson.loads(state))
        self._remember(match_id, snap)
        return snap

    def _remember(self, match_id: str, snap: Snapshot) -> None:
        """Cache ``snap`` unless a newer one is cached already."""
        with self._snap_lock:
            cached = self._snaps.get(match_id)
            if cached is None or cached.version <= snap.version:
                self._snaps.put(match_id, snap)


def _run(script: Script, keys: list[str], args: list[Any]) -> Any:
    return script(keys=keys, args=args)


def encode_record(status: int, body: bytes) -> bytes:
    """An idempotency record: the status and body of the first response."""
    return orjson.dumps({"status": status, "body": orjson.Fragment(body)})


def decode_record(raw: bytes | str) -> tuple[int, bytes]:
    record = orjson.loads(raw)
    return int(record["status"]), orjson.dumps(record["body"])
