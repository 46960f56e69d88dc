"""The Redis store of matches, with a per-worker cache in front of it.

The store knows nothing about games: it keeps opaque JSON-able states,
versions, move logs, events and token hashes (layout in :mod:`service.store.keys`).

Caching: a match's meta is cached per worker (only its seat table changes,
open seats becoming claimed: see :class:`Meta` and ``fresh``); the last
snapshot seen of a match is cached too, but only the write path
(:meth:`Store.apply`) trusts it, because the compare-and-set in Redis catches
a stale one.  Reads that must be current go to Redis.

Redis ``ConnectionError``/``TimeoutError`` (and a cluster's ``ClusterError``)
propagate unchanged; the web layer maps them to 503 ("nothing was
changed").  A failure once a move, claim or delete script may have been sent
raises :class:`WriteUnsettled` (a ``TimeoutError``) so the caller can say the
move may have been applied; a failure the client saw before any script left
(a refused connection, no primary, the budget spent) is not one
(:func:`service.redis_client.noting_sends`).
Every write is a single Lua script, so nothing is ever half-written; keys of
a match that disagree raise :class:`DamagedMatch`.  Every script declares
every key it touches and every multi-key read is a script too (no MULTI), so
all of it runs unchanged on Redis Cluster (the keys of a match share one
slot).  The write scripts go through ``write`` (e.g.
:class:`service.store.redis_client.ReplicaWait`: ``WAIT`` for replicas after each).

Time budget: :meth:`Store.budget` opens a per-request deadline
(``REDIS_BUDGET`` seconds); redis-py's retries stop once it has passed and no
new command starts after it (:class:`BudgetRetry`; a ``RedisCluster``, which
retries by itself, starts no attempt after it: :func:`_bound_retries`).  A
request so waits at most the budget plus the one try under way when it ends
(``REDIS_TIMEOUT``).

A finished match is compacted (:meth:`Store.compact`): its move log and the
final state go into one compressed archive and its events and index are
dropped; :mod:`service.domain.history` derives them again from the moves.
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import itertools
import json
import os
import secrets
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import orjson
import redis
from redis.commands.core import Script
from redis.retry import Retry

from service.ops.config import Settings
from service.store import keys as lua
from service.store.cache import LRU
from service.store.keys import Keys
from service.store.redis_client import (
    CLUSTER_PAUSE,
    CLUSTER_TRANSIENT,
    FailoverRetry,
    LazyCluster,
    may_retry,
    noting_sends,
)
from service.store.redis_client import DEADLINE as _DEADLINE
from service.store.redis_client import check_deadline as _check_deadline

T = TypeVar("T")
#: Decoded archives of finished matches cached per worker (each up to ~100 KB).
ARCHIVE_CACHE = 256


@dataclass(frozen=True)
class Meta:
    """What a match is: game, players, seed, options, token hashes and its
    seat table.

    Only the seat table changes, and only one way: an ``open`` seat becomes
    ``claimed`` (its token hash set).  The stored meta JSON keeps the table
    as created; each claim is a field ``c<seat>`` of the match's snapshot
    hash (``keys.CLAIM``), laid over it by :meth:`with_claims`.  A meta
    cached by a worker may so still show a seat as open that another
    instance has meanwhile given away (see :meth:`Store.meta` with
    ``fresh``).  ``kinds`` per seat: ``token``, ``open``, ``claimed`` or
    ``bot`` (:mod:`service.domain.seats`); ``bots``: the bot's name per seat (None
    for the others); ``seat_hashes`` is ``""`` for a seat without a token.
    Metas stored before seats had kinds load as all ``token``, no bots, no
    clock, not public, no invite.  A ladder match (:mod:`service.domain.ladders`)
    names its ``ladder``, the entrant per seat and the entrants' token hashes.
    """

    match_id: str
    game: str
    players: list[str]
    seed: int
    options: dict[str, Any]
    admin_hash: str
    seat_hashes: list[str]
    created: float
    kinds: list[str] = field(default_factory=list)
    bots: list[str | None] = field(default_factory=list)
    clock_ms: int | None = None
    public: bool = False
    invite_hash: str | None = None
    #: 1.2: per seat, a webhook seat's ``{"url", "secret"}`` (None for the
    #: others; never shown), and the deadline of its decisions without a clock
    hooks: list[dict[str, str] | None] = field(default_factory=list, repr=False)
    webhook_ms: int | None = None
    bank_ms: int = 0
    delay: int = 0
    referee_hash: str | None = None
    ladder: str | None = None
    entrants: list[str] = field(default_factory=list)
    entrant_hashes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.kinds:
            object.__setattr__(self, "kinds", ["token"] * len(self.players))
        if not self.bots:
            object.__setattr__(self, "bots", [None] * len(self.players))
        if not self.hooks:
            object.__setattr__(self, "hooks", [None] * len(self.players))

    @property
    def open_seats(self) -> list[int]:
        """The seats nobody holds yet (as far as this meta knows)."""
        return [i for i, kind in enumerate(self.kinds) if kind == "open"]

    def with_claims(self, claims: dict[int, str]) -> Meta:
        """This meta with the open seats of ``claims`` (seat -> token hash) claimed."""
        taken = {seat: h for seat, h in claims.items() if 0 <= seat < len(self.kinds) and self.kinds[seat] == "open"}
        if not taken:
            return self
        return replace(self, kinds=["claimed" if i in taken else k for i, k in enumerate(self.kinds)],
                       seat_hashes=[taken.get(i, h) for i, h in enumerate(self.seat_hashes)])

    def to_json(self) -> bytes:
        return orjson.dumps({
            "game": self.game, "players": self.players, "seed": self.seed,
            "options": self.options, "admin": self.admin_hash,
            "seats": self.seat_hashes, "created": self.created,
            "kinds": self.kinds, "bots": self.bots, "clock_ms": self.clock_ms,
            "public": self.public, "invite": self.invite_hash, "hooks": self.hooks,
            "webhook_ms": self.webhook_ms,
            **({"bank_ms": self.bank_ms} if self.bank_ms else {}),
            **({"delay": self.delay} if self.delay else {}),
            **({"referee": self.referee_hash} if self.referee_hash is not None else {}),
            **({"ladder": self.ladder, "entrants": self.entrants, "entrant_hashes": self.entrant_hashes}
               if self.ladder is not None else {})})

    @classmethod
    def from_json(cls, match_id: str, raw: bytes | str) -> Meta:
        d = orjson.loads(raw)
        return cls(match_id, d["game"], d["players"], d["seed"], d["options"],
                   d["admin"], d["seats"], d["created"], d.get("kinds") or [], d.get("bots") or [],
                   d.get("clock_ms"), bool(d.get("public", False)), d.get("invite"), d.get("hooks") or [],
                   d.get("webhook_ms"), d.get("bank_ms", 0), d.get("delay", 0), d.get("referee"),
                   ladder=d.get("ladder"), entrants=d.get("entrants") or [],
                   entrant_hashes=d.get("entrant_hashes") or [])


@dataclass(frozen=True)
class Snapshot:
    """A state and its version, and the deadlines (``{"<seat>": epoch ms}``)
    of the seats to act when the match has a clock, and what is left of each
    seat's time bank (``{"<seat>": ms}``, every seat; ``{}`` without a bank).
    Shared: never mutate."""

    version: int
    state: dict[str, Any]
    deadline: dict[str, int] = field(default_factory=dict)
    bank: dict[str, int] = field(default_factory=dict)

    def clock_json(self) -> bytes | str:
        """The snapshot's hash field ``d``: the deadlines, and the banks
        under ``bank`` when the match has them ('' for neither)."""
        if not self.deadline and not self.bank:
            return ""
        return orjson.dumps({**self.deadline, "bank": self.bank} if self.bank else self.deadline)


def _clock_fields(raw: bytes | str | None) -> tuple[dict[str, int], dict[str, int]]:
    """Deadlines and banks of a hash field ``d`` (:meth:`Snapshot.clock_json`)."""
    if not raw:
        return {}, {}
    deadline = orjson.loads(raw)
    bank = deadline.pop("bank", {})
    return deadline, bank


@dataclass(frozen=True)
class Archive:
    """A compacted (finished) match: its raw move log and final state."""

    moves: list[bytes]
    state: dict[str, Any]


class DamagedMatch(Exception):
    """Keys of a match disagree (a key evicted or deleted by hand)."""

    def __init__(self, match_id: str, key: str):
        super().__init__(f"match {match_id}: key {key!r} is missing or short")
        self.match_id = match_id
        self.key = key


class WriteUnsettled(redis.exceptions.TimeoutError):
    """The store failed after a write may have been sent: it may have run."""


#: Failures after which a write script may or may not have run.
UNSETTLED = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, redis.exceptions.ClusterError)


class BudgetRetry(Retry):
    """redis-py's retry, bounded by the request's deadline (:meth:`Store.budget`).

    No try starts after the deadline; a failed try is not repeated when the
    pause before the next would reach it.  ``until_deadline``: within a
    request, tries are not counted, only the deadline ends them (the sentinel
    client's :class:`service.redis_client.FailoverRetry`)."""

    def __init__(self, *args: Any, until_deadline: bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.until_deadline = until_deadline

    def call_with_retry(self, do: Callable[[], T], fail: Callable[..., Any],
                        is_retryable: Callable[[Exception], bool] | None = None,
                        with_failure_count: bool = False) -> T:
        self._backoff.reset()
        failures = 0
        while True:
            _check_deadline()
            try:
                return do()
            except self._supported_errors as error:
                if is_retryable and not is_retryable(error):
                    raise
                failures += 1
                if with_failure_count:
                    fail(error, failures)
                else:
                    fail(error)
                deadline = _DEADLINE.get()
                counted = deadline is None or not self.until_deadline
                pause = self._backoff.compute(failures)
                if (counted and self._retries >= 0 and failures > self._retries) or (
                        deadline is not None and time.monotonic() + pause >= deadline):
                    raise error
                if pause > 0:
                    time.sleep(pause)


class ClusterBudgetRetry(BudgetRetry):
    """A ``RedisCluster``'s retry: within a request it allows as many
    attempts as the deadline leaves room for (each starts only before it,
    after a pause: :func:`_bound_cluster`)."""

    def get_retries(self) -> int:
        return CLUSTER_RETRIES_IN_BUDGET if _DEADLINE.get() is not None else self._retries


#: A cluster client's retries within a request: the deadline ends them first.
CLUSTER_RETRIES_IN_BUDGET = 10_000


@dataclass(frozen=True)
class ApplyResult:
    """Outcome of :meth:`Store.apply`: exactly one of the fields is set."""

    version: int | None = None            # ok: the version the move produced
    conflict: Snapshot | None = None      # the stored snapshot differed
    replay: int | None = None             # idempotent replay: the version it produced
    reused: bool = False                  # the idempotency key names another request
    missing: bool = False                 # the match is gone


class Store:
    """Matches in Redis: one atomic script per write, one round trip per move.

    ``settings`` gives ``IDEMPOTENCY_TTL``, ``FINISHED_TTL``, ``REDIS_BUDGET``
    and ``RETRY_AFTER`` (by default read from the environment).
    ``write(script, keys, args)`` runs the write scripts (create, move,
    compact, delete) when given, e.g. :class:`service.store.redis_client.ReplicaWait`."""

    def __init__(self, client: redis.Redis, *, ttl: int, cache_size: int = 4096,
                 settings: Settings | None = None,
                 write: Callable[[Script, list[str], list[Any]], Any] | None = None,
                 primary_replicas: int = 0):
        settings = settings or Settings.from_env()
        self.client = client
        #: replicas a primary must have connected before a match it lacks is
        #: believed gone (:meth:`_confirm_gone`; Sentinel mode: REDIS_WAIT_REPLICAS)
        self.primary_replicas = primary_replicas
        self.ttl = ttl
        self._write = write or _run
        #: APPLY's ARGV[8]: on a cluster, publish a move only to a subscribed shard (``keys`` docstring)
        self._publish = "0" if isinstance(client, (LazyCluster, redis.RedisCluster)) else "1"
        self.idem_ttl = settings.idempotency_ttl
        self.finished_ttl = settings.finished_ttl
        self.budget_seconds = settings.redis_budget
        self.retry_after = settings.retry_after
        self.world_secret = settings.world_secret
        self._create = client.register_script(lua.CREATE)
        self._apply = client.register_script(lua.APPLY)
        self._compact = client.register_script(lua.COMPACT)
        self._load = client.register_script(lua.LOAD)
        self._events_since = client.register_script(lua.EVENTS_SINCE)
        self._delete = client.register_script(lua.DELETE)
        self._record = client.register_script(lua.RECORD)
        self._moves = client.register_script(lua.MOVES)
        self._claim = client.register_script(lua.CLAIM)
        self._meta: LRU[str, Meta] = LRU(cache_size)
        self._snaps: LRU[str, Snapshot] = LRU(cache_size)
        self._archives: LRU[str, Archive] = LRU(min(cache_size, ARCHIVE_CACHE))
        self._snap_lock = threading.Lock()
        _bound_retries(client)

    # --- health ---------------------------------------------------------
    def ping(self) -> bool:
        return bool(self.client.ping())

    def eviction_policy(self) -> str | None:
        """Redis' ``maxmemory-policy`` (None when the server does not say)."""
        try:
            reply = self.client.config_get("maxmemory-policy")
        except redis.exceptions.ResponseError:  # CONFIG disabled (managed Redis)
            return None
        value = reply.get("maxmemory-policy") if isinstance(reply, dict) else None
        return value.decode() if isinstance(value, bytes) else value

    def budget(self) -> contextlib.AbstractContextManager[None]:
        """Bound the store's time for one request (``REDIS_BUDGET``); nested
        calls keep the outer deadline."""
        return _Budget(self.budget_seconds)

    def off_budget(self) -> contextlib.AbstractContextManager[None]:
        """Time spent in the block (the server's bots thinking, no store
        call) does not count against the request's store budget."""
        return _OffBudget()

    # --- writes ---------------------------------------------------------
    def create(self, meta: Meta, state: dict[str, Any], events: list[dict[str, Any]]) -> bool:
        """Write a new match (version 0); False when the id is taken."""
        k = Keys(meta.match_id)
        state_json = orjson.dumps(state)
        _check_deadline()
        created = self._write(self._create, k.fixed(), [
            meta.to_json(), state_json, self.ttl, *(orjson.dumps(e) for e in events)])
        if created:
            self._meta.put(meta.match_id, meta)
            self._remember(meta.match_id, Snapshot(0, state))
        return bool(created)

    def apply(self, match_id: str, expected: int, state: dict[str, Any], entry: dict[str, Any],
              events: list[dict[str, Any]], idem_key: str | None = None,
              fingerprint: str = "", *, later: Sequence[tuple[dict[str, Any], list[dict[str, Any]]]] = (),
              deadline: dict[str, int] | None = None, bank: dict[str, int] | None = None) -> ApplyResult:
        """Store ``state`` as version ``expected + 1 + len(later)`` if
        ``expected`` is current.

        ``entry`` goes to the move log, ``events`` (already version-stamped)
        to the event log; ``later`` are the moves (entry, events) the server
        played after it in the same request, one version each, all written by
        the same compare-and-set (``state`` is the state after the last one).
        ``deadline`` and ``bank`` are stored with the snapshot (none: no
        clock or nobody acts; no time bank).  With ``idem_key``, the new version and
        ``fingerprint`` (see :func:`fingerprint`) are stored under it for
        ``IDEMPOTENCY_TTL`` (at most ``MATCH_TTL``: no record outlives its
        match); when the key already holds a record, nothing is written and
        the result says whether it was this request (``replay``)
        or another (``reused``).  On success the cache holds the new
        snapshot; on a conflict it holds the stored one, which is returned.
        A store failure once the script may have been sent raises
        :class:`WriteUnsettled`.
        """
        k = Keys(match_id)
        keys = k.fixed()
        if idem_key is not None:
            keys.append(k.idem(idem_key))
        written = Snapshot(expected + 1 + len(later), state, dict(deadline or {}), dict(bank or {}))
        args: list[bytes | str | int | float] = [
            expected, orjson.dumps(state), self.ttl, fingerprint, next_write_id(),
            min(self.idem_ttl, self.ttl), written.clock_json(), self._publish]
        for step_entry, step_events in ((entry, events), *later):
            args += [orjson.dumps(step_entry), len(step_events), *(orjson.dumps(e) for e in step_events)]
        _check_deadline()
        reply = self._unsettled_write(self._apply, keys, args)
        outcome = reply[0]
        if outcome == b"ok":
            version = int(reply[1])
            self._remember(match_id, written if version == written.version else replace(written, version=version))
            return ApplyResult(version=version)
        if outcome == b"conflict":
            snap = self._decode_snapshot(match_id, int(reply[1]), reply[2], reply[3], reply[4])
            self._remember(match_id, snap)
            return ApplyResult(conflict=snap)
        if outcome == b"idem":
            return ApplyResult(replay=int(reply[1]))
        if outcome == b"reused":
            return ApplyResult(reused=True)
        if outcome == b"damaged":
            raise DamagedMatch(match_id, reply[1].decode())
        self.forget(match_id)
        return ApplyResult(missing=True)

    def start_clock(self, match_id: str, snap: Snapshot) -> None:
        """Store the first deadlines of a match just created (version 0, which
        nobody else can have changed: its id is not handed out yet)."""
        if snap.deadline or snap.bank:
            self.client.hset(Keys(match_id).snap, "d", snap.clock_json())
        self._remember(match_id, snap)

    def claim(self, match_id: str, seat: int, token_hash: str) -> str:
        """Give open seat ``seat`` to ``token_hash`` unless someone has it:
        ``ok``, ``taken``, ``finished`` (compacted) or ``missing``
        (:data:`keys.CLAIM`; :class:`DamagedMatch` without a snapshot).  On
        ``ok`` this worker's cached meta shows the seat claimed.  A failure
        once the script may have been sent raises :class:`WriteUnsettled`."""
        k = Keys(match_id)
        _check_deadline()
        reply = self._unsettled_write(self._claim, [k.meta, k.snap], [Keys.claim(seat), token_hash])
        outcome = reply.decode() if isinstance(reply, bytes) else str(reply)
        if outcome == "damaged":
            raise DamagedMatch(match_id, "snap")
        if outcome == "missing":
            self.forget(match_id)
        meta = self._meta.get(match_id)
        if outcome == "ok" and meta is not None:
            self._meta.put(match_id, meta.with_claims({seat: token_hash}))
        return outcome

    def compact(self, match_id: str, version: int, state: dict[str, Any]) -> bool:
        """Replace the finished match's move log, events and index by one
        compressed archive (moves and ``state``, the final one at
        ``version``) and give it ``FINISHED_TTL``.  False (nothing changed)
        when the match moved on, is compacted already or its log is short."""
        moves: list[bytes] = self.client.lrange(Keys(match_id).moves, 0, -1)  # type: ignore[assignment]
        if len(moves) != version:
            return False
        archive = compress(moves, state)
        k = Keys(match_id)
        args = [version, archive, len(moves), self.finished_ttl]
        done = -1
        while done < 0:  # -1: a move added an idempotency record meanwhile
            done = self._write(self._compact, k.fixed() + self._idem_records(k), args)
        if done:
            self._archives.put(match_id, Archive(list(moves), state))
        return bool(done)

    def delete(self, match_id: str) -> bool:
        """Remove every key of the match; False when there was nothing.
        A failure once the script may have been sent raises :class:`WriteUnsettled`."""
        k = Keys(match_id)
        removed = -1
        try:
            while removed < 0:  # -1: a move added an idempotency record meanwhile
                records = self._idem_records(k)
                _check_deadline()
                removed = self._unsettled_write(self._delete, k.fixed() + records, [])
        finally:
            self.forget(match_id)
        return bool(removed)

    def _unsettled_write(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        """Run a write script; a store failure raises :class:`WriteUnsettled`
        unless the client knows that no script was sent (then the failure
        itself: nothing was applied)."""
        with noting_sends() as sends:
            try:
                return self._write(script, keys, args)
            except UNSETTLED as exc:
                if sends.nothing_sent:
                    raise
                raise WriteUnsettled(str(exc)) from exc

    def _idem_records(self, k: Keys) -> list[str]:
        """The idempotency record keys the match's ``idems`` lists now (a
        script must declare them)."""
        members: set[bytes | str] = self.client.smembers(k.idems)
        return sorted(m.decode() if isinstance(m, bytes) else m for m in members)

    # --- reads ----------------------------------------------------------
    def meta(self, match_id: str, *, fresh: bool = False) -> Meta | None:
        """The match's meta, None when unknown.  Cached: it changes only when
        an open seat is claimed, which a cached meta may not show yet;
        ``fresh`` reads it (and its claims) from Redis."""
        meta = None if fresh else self._meta.get(match_id)
        if meta is None:
            raw = self.client.get(Keys(match_id).meta)
            if raw is None:
                self._confirm_gone(match_id)
                return None
            meta = self._claimed(Meta.from_json(match_id, raw))
            self._meta.put(match_id, meta)
        return meta

    def metas(self, match_ids: Sequence[str]) -> list[tuple[Meta, bool] | None]:
        """Fresh metas (claims laid over) of several matches and whether each
        is compacted (finished), None for a match that is gone; two pipelined
        round trips whatever their slots (the lobby's check)."""
        pipe = self.client.pipeline(transaction=False)
        for match_id in match_ids:
            k = Keys(match_id)
            pipe.get(k.meta)
            pipe.hmget(k.snap, "v", "z")
        replies = pipe.execute()
        found: list[tuple[Meta, bool] | None] = []
        for match_id, raw, (version, archive) in zip(match_ids, replies[::2], replies[1::2]):
            found.append(None if raw is None or version is None
                         else (Meta.from_json(match_id, raw), archive is not None))
        pipe = self.client.pipeline(transaction=False)
        for entry in found:
            if entry is not None and entry[0].open_seats:
                pipe.hmget(Keys(entry[0].match_id).snap, [Keys.claim(i) for i in entry[0].open_seats])
        claims = iter(pipe.execute())
        for i, entry in enumerate(found):
            if entry is not None and entry[0].open_seats:
                found[i] = (entry[0].with_claims(_claims(entry[0], next(claims))), entry[1])
        return found

    def _claimed(self, meta: Meta) -> Meta:
        """``meta`` with the claims stored for its open seats (one round trip if it has any)."""
        if not meta.open_seats:
            return meta
        held = self.client.hmget(Keys(meta.match_id).snap, [Keys.claim(i) for i in meta.open_seats])
        return meta.with_claims(_claims(meta, held))

    def load(self, match_id: str) -> tuple[Meta, Snapshot] | None:
        """Meta and the current snapshot, in one command (:data:`keys.LOAD`:
        the meta only when it is not cached, the state only when the cached
        snapshot is not current); None when gone (no meta),
        :class:`DamagedMatch` when the meta has no snapshot."""
        k = Keys(match_id)
        meta = self._meta.get(match_id)
        cached = self._snaps.get(match_id)
        reply = _run(self._load, [k.meta, k.snap], ["1" if meta is None else "0",
                                                    "" if cached is None else cached.version])
        if not reply:
            self._confirm_gone(match_id)
            return None
        raw_meta, *fields = reply
        snap = cached if len(fields) == 1 and cached is not None else self._read_snapshot(match_id, fields)
        if snap is None:
            raise DamagedMatch(match_id, "snap")
        if meta is None:
            meta = self._claimed(Meta.from_json(match_id, raw_meta))
            self._meta.put(match_id, meta)
        return meta, snap

    def _confirm_gone(self, match_id: str) -> None:
        """Forget a match the primary does not hold, once the primary is
        believed: with :attr:`primary_replicas`, one with fewer replicas
        connected is not (a ConnectionError: 503, retry).  During a Sentinel
        failover the old primary, restarted empty, is a primary with no
        replica until the sentinels turn it into one, and a sentinel that has
        not yet heard of the promotion may still name it: its "no such
        match" would answer a live match 404."""
        if self.primary_replicas > 0:
            replication = self.client.info("replication")
            connected = int(replication.get("connected_slaves", 0))
            if replication.get("role") == "master" and connected < self.primary_replicas:
                raise redis.exceptions.ConnectionError(
                    f"the primary has {connected} of the {self.primary_replicas} replicas writes wait for: "
                    "it may be an old primary restarted empty during a failover")
        self.forget(match_id)

    def cached(self, match_id: str) -> tuple[Meta, Snapshot] | None:
        """Meta and the last snapshot this worker saw, when both are cached."""
        meta, snap = self._meta.get(match_id), self._snaps.get(match_id)
        return None if meta is None or snap is None else (meta, snap)

    def snapshot(self, match_id: str) -> Snapshot | None:
        """The current snapshot from Redis; None when the match is gone."""
        loaded = self.load(match_id)
        return None if loaded is None else loaded[1]

    def idempotent_response(self, match_id: str, idem_key: str) -> tuple[int, str] | None:
        """The version and request fingerprint stored under ``idem_key``;
        None without a record."""
        raw = self.client.get(Keys(match_id).idem(idem_key))
        if not isinstance(raw, bytes):
            return None
        version, _, fp = raw.decode().partition(":")
        return int(version), fp

    def events_since(self, match_id: str, after: int) -> tuple[int, list[bytes] | Archive] | None:
        """Current version and the raw events with version > ``after``, or
        the archive of a compacted match (its events are derived from it)."""
        k = Keys(match_id)
        reply = self._events_since(keys=k.fixed()[:5], args=[after])
        if not reply:
            return None
        kind = reply[0]
        if kind == b"damaged":
            raise DamagedMatch(match_id, reply[1].decode())
        version = int(reply[1])
        if kind == b"archive":
            return version, self._archive(match_id, reply[2])
        return version, list(reply[2])

    def versions(self, match_ids: list[str]) -> list[int | None]:
        """The current version of each match (None: gone), in one round trip."""
        pipe = self.client.pipeline(transaction=False)
        for match_id in match_ids:
            pipe.hget(Keys(match_id).snap, "v")
        return [None if v is None else int(v) for v in pipe.execute()]

    def record(self, match_id: str) -> tuple[Snapshot, list[bytes]] | None:
        """Current snapshot and the raw move log, read atomically (one script);
        :class:`DamagedMatch` when the log is shorter than the version."""
        k = Keys(match_id)
        exists, fields, moves = self._record(keys=[k.meta, k.snap, k.moves])
        if not exists:
            return None
        snap = self._read_snapshot(match_id, fields)
        if snap is None:
            raise DamagedMatch(match_id, "snap")
        if fields[2] is not None:
            moves = self._archive(match_id, fields[2]).moves
        if len(moves) != snap.version:
            raise DamagedMatch(match_id, "moves")
        return snap, moves

    def moves(self, match_id: str, upto: int) -> list[bytes]:
        """The first ``upto`` raw moves of the log (live or archived)."""
        k = Keys(match_id)
        z, moves = self._moves(keys=[k.snap, k.moves], args=[upto])
        if z is not None:
            moves = self._archive(match_id, z).moves[:upto]
        if len(moves) != upto:
            raise DamagedMatch(match_id, "moves")
        return list(moves)

    # --- cache ------------------------------------------------------------
    def forget(self, match_id: str) -> None:
        self._meta.pop(match_id)
        self._snaps.pop(match_id)
        self._archives.pop(match_id)

    def _archive(self, match_id: str, raw: bytes) -> Archive:
        archive = self._archives.get(match_id)
        if archive is None:
            archive = decompress(raw)
            self._archives.put(match_id, archive)
        return archive

    def _read_snapshot(self, match_id: str, fields: Sequence[bytes | str | None]) -> Snapshot | None:
        """A snapshot from its hash fields ``v``, ``s``, ``z`` (and ``d``
        when read: the record needs no deadlines)."""
        raw_version, state, archive = fields[:3]
        if raw_version is None or (state is None and archive is None):
            self.forget(match_id)
            return None
        version = int(raw_version)
        cached = self._snaps.get(match_id)
        if cached is not None and cached.version == version:
            return cached
        snap = self._decode_snapshot(match_id, version, state, archive, fields[3] if len(fields) > 3 else None)
        self._remember(match_id, snap)
        return snap

    def _decode_snapshot(self, match_id: str, version: int, state: bytes | str | None,
                         archive: bytes | str | None, deadline: bytes | str | None = None) -> Snapshot:
        if state is None:
            if not isinstance(archive, bytes):
                raise DamagedMatch(match_id, "snap")
            return Snapshot(version, self._archive(match_id, archive).state, *_clock_fields(deadline))
        return Snapshot(version, orjson.loads(state), *_clock_fields(deadline))

    def _remember(self, match_id: str, snap: Snapshot) -> None:
        """Cache ``snap`` unless a newer one is cached already."""
        with self._snap_lock:
            cached = self._snaps.get(match_id)
            if cached is None or cached.version <= snap.version:
                self._snaps.put(match_id, snap)


class _Budget:
    """:meth:`Store.budget`'s block (a plain class: every request opens two)."""

    __slots__ = ("seconds", "token")

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.token: contextvars.Token[float | None] | None = None

    def __enter__(self) -> None:
        if _DEADLINE.get() is None and self.seconds > 0:
            self.token = _DEADLINE.set(time.monotonic() + self.seconds)

    def __exit__(self, *_exc: object) -> None:
        if self.token is not None:
            _DEADLINE.reset(self.token)


class _OffBudget:
    """:meth:`Store.off_budget`'s block (a plain class: every move opens one)."""

    __slots__ = ("started",)

    def __enter__(self) -> None:
        self.started = time.monotonic()

    def __exit__(self, *_exc: object) -> None:
        deadline = _DEADLINE.get()
        if deadline is not None:
            _DEADLINE.set(deadline + time.monotonic() - self.started)


class _WriteIds:
    """Ids unique to each write attempt (``keys.APPLY``'s write id): a random
    prefix per process, drawn again in a forked child, and a counter, so a
    write costs no system call for its id."""

    def __init__(self) -> None:
        self.renew()
        os.register_at_fork(after_in_child=self.renew)

    def renew(self) -> None:
        self.prefix, self.count = secrets.token_hex(8), itertools.count()

    def __call__(self) -> str:
        return f"{self.prefix}{next(self.count):x}"


next_write_id = _WriteIds()


def _claims(meta: Meta, held: Sequence[bytes | str | None]) -> dict[int, str]:
    """Open seat -> token hash, from the ``c<k>`` fields read for ``meta.open_seats``."""
    return {seat: h.decode() if isinstance(h, bytes) else h
            for seat, h in zip(meta.open_seats, held) if h is not None}


def _run(script: Script, keys: list[str], args: list[Any]) -> Any:
    return script(keys=keys, args=args)


def _bound_retries(client: Any) -> None:
    """Make the client's retries respect the request's deadline.

    ``redis.Redis`` (single, and sentinel's ``master_for``) retries through
    its ``Retry``: replaced by a :class:`BudgetRetry`.  ``RedisCluster`` has
    ``set_retry`` but no ``get_retry`` and never calls ``call_with_retry``:
    it loops over ``retry.get_retries()`` attempts itself (refreshing the
    slot map in between), so each attempt checks the deadline first, and
    within a request (:class:`ClusterBudgetRetry`) CLUSTERDOWN, a lost node
    and the like are tried again every ``CLUSTER_PAUSE`` until the deadline.  A
    :class:`LazyCluster` gets the same once it builds its client (building
    it here would talk to the cluster)."""
    if isinstance(client, LazyCluster):
        client.on_build(_bound_retries)
        return
    if isinstance(client, redis.RedisCluster):
        _bound_cluster(client)
        return
    get_retry = getattr(client, "get_retry", None)
    retry = get_retry() if get_retry is not None else None
    if isinstance(retry, Retry) and not isinstance(retry, BudgetRetry):
        client.set_retry(BudgetRetry(retry._backoff, retry._retries, retry._supported_errors,
                                     until_deadline=isinstance(retry, FailoverRetry)))


def _bound_cluster(cluster: redis.RedisCluster) -> None:
    if getattr(cluster, "_lodge_bounded", False):
        return
    retry = cluster.retry
    cluster.set_retry(ClusterBudgetRetry(retry._backoff, retry._retries, retry._supported_errors))
    attempt = cluster._execute_command

    def bounded(target_node: Any, *args: Any, **kwargs: Any) -> Any:
        _check_deadline()
        try:
            return attempt(target_node, *args, **kwargs)
        except CLUSTER_TRANSIENT:
            if _DEADLINE.get() is not None and may_retry(1):
                time.sleep(CLUSTER_PAUSE)  # the client tries again at once, with a fresh slot map
            raise

    cluster._execute_command = bounded  # type: ignore[method-assign]
    cluster._lodge_bounded = True  # type: ignore[attr-defined]


def fingerprint(seat: int, move: dict[str, Any], version: int | None) -> str:
    """A short hash of a move request: what an idempotency key must repeat."""
    request = {"seat": seat, "move": move, "version": version}
    try:
        canonical = orjson.dumps(request, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer beyond 64 bits (the fallback parser reads any size)
        canonical = json.dumps(request, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(canonical).hexdigest()[:16]


def compress(moves: Sequence[bytes], state: dict[str, Any]) -> bytes:
    """The archive of a finished match: zlib of ``{"moves", "state"}``."""
    return zlib.compress(orjson.dumps({"moves": [orjson.Fragment(m) for m in moves], "state": state}), 9)


def decompress(raw: bytes) -> Archive:
    data = orjson.loads(zlib.decompress(raw))
    return Archive([orjson.dumps(m) for m in data["moves"]], data["state"])
