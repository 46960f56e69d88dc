"""Redis key names and Lua scripts: the store's whole on-the-wire layout.

Every key of a match lives under one hash tag, ``lodge:{<match_id>}:<name>``,
so all of them map to the same Redis Cluster slot and one Lua script may touch
them atomically.

========  ======  ==========================================================
name      type    holds
========  ======  ==========================================================
meta      string  JSON: game, players, seed, options, token hashes, created
snap      hash    ``v``: version, ``s``: state JSON, ``w``: id of the last
                  write, ``e``: number of events stored, ``d``: the seats'
                  deadlines JSON (a match with a clock, while someone acts);
                  a finished match compacted holds ``v``, ``w`` and ``z``
                  instead of ``s``/``e``; ``c<k>``: the token hash of open
                  seat k once claimed (:data:`CLAIM`; kept by compaction)
moves     list    JSON ``{"version", "seat", "move"}`` per accepted move (and
                  ``"by"`` for a move the server played: ``bot``, ``clock``,
                  ``resigned``)
events    list    JSON per event, stamped with the version that produced it
evidx     list    element ``v`` = index in ``events`` of version v's first event
idems     set     names of the match's idempotency record keys (for DELETE)
idem:<k>  string  ``<version>:<fingerprint>``: the (last) version the first
                  request with key k produced and a hash of that request (records
                  written before this layout hold JSON ``{"status", "body"}``)
========  ======  ==========================================================

``z`` is the archive of a finished match (:func:`service.store.store.compress`):
zlib of ``{"moves": [...], "state": {...}}``.  Compacting a match
(:data:`COMPACT`) replaces its move log, events and index by it; events are
then derived again by replaying the moves through the engine.

Every write sets the TTL of the match's keys (``MATCH_TTL``; ``FINISHED_TTL``
once compacted), so a match expires after that long without a write.
Idempotency records and their index expire ``IDEMPOTENCY_TTL`` after the
write that stored them.

A match whose keys disagree (a list shorter than the version says, a missing
snapshot under a present meta: eviction, a manual delete) is *damaged*: the
scripts answer ``{'damaged', <key name>}`` and write nothing.

The lobby (:mod:`service.domain.lobby`) keeps one sorted set per game,
``lodge:{lobby:<game>}:open`` (:func:`lobby_key`; its own hash tag, so its own
slot): member the match id, score its creation time in milliseconds, for
every public match created with an open seat.  It is written with single
commands beside a match's scripts, never inside them (a script may only touch
one slot): entries are added before the match is created and removed when it
fills, finishes or is deleted; one whose match expired (or whose create
failed) is dropped when the lobby next lists it.

A move and a delete also ``SPUBLISH`` the new version (-1: deleted) on the
channel ``lodge:{<match_id>}:changed`` (:attr:`Keys.changed`; same hash tag,
so the same shard), from inside their script (see :mod:`service.store.notify`).
On a Redis Cluster a move publishes only when the shard's primary has a
subscriber to the channel (Lodge subscribes on primaries): there every
``SPUBLISH`` is also sent to each replica of the shard as a cluster-bus
message (a header of about 2 KB each), the one cost per move that only a
cluster had (``make bench-cluster``).  On one Redis it
goes down the replication stream, which costs little, and a subscriber
left on a demoted primary after a Sentinel failover still hears it, so
there the script always publishes.
"""
from __future__ import annotations

import zlib

PREFIX = "lodge"


class Keys:
    """Names of the Redis keys of one match (the only place they are built)."""

    __slots__ = ("match_id", "_base")

    def __init__(self, match_id: str):
        self.match_id = match_id
        self._base = f"{PREFIX}:{{{match_id}}}:"

    @property
    def meta(self) -> str:
        return self._base + "meta"

    @property
    def snap(self) -> str:
        return self._base + "snap"

    @property
    def moves(self) -> str:
        return self._base + "moves"

    @property
    def events(self) -> str:
        return self._base + "events"

    @property
    def evidx(self) -> str:
        return self._base + "evidx"

    @property
    def idems(self) -> str:
        return self._base + "idems"

    @property
    def changed(self) -> str:
        """The pub/sub channel announcing the match's changes (not a key)."""
        return self._base + "changed"

    @property
    def hooks(self) -> str:
        """Hash of the webhook seats' last answer times (ms), field the seat."""
        return self._base + "hooks"

    def hook(self, version: int, seat: int) -> str:
        """The claim of the webhook call of ``seat``'s decision at ``version`` (its delivery id)."""
        return f"{self._base}hook:{version}:{seat}"

    def idem(self, key: str) -> str:
        """Idempotency record ``key`` (the service makes it ``<scope>:<client key>``)."""
        return f"{self._base}idem:{key}"

    @staticmethod
    def claim(seat: int) -> str:
        """The field of the snapshot hash holding claimed seat ``seat``'s token hash."""
        return f"c{seat}"

    def fixed(self) -> list[str]:
        """Every key of the match except the idempotency records."""
        return [self.meta, self.snap, self.moves, self.events, self.evidx, self.idems]


def lobby_key(game: str) -> str:
    """The lobby's sorted set of ``game``'s public matches with an open seat."""
    return f"{PREFIX}:{{lobby:{game}}}:open"


#: The world secret made by the first instance that signs a world when
#: ``WORLD_SECRET`` is not set (:mod:`service.domain.world_token`): a string,
#: written once with ``SET NX``, no TTL, shared by every instance on the store.
WORLD_SECRET = f"{PREFIX}:{{worlds}}:secret"


# --------------------------------------------------------------------------
# Lua scripts.  Each is registered once per client (redis-py register_script,
# EVALSHA with a transparent EVAL fallback) by :class:`service.store.store.Store`.
# --------------------------------------------------------------------------

CREATE = """
-- Create a match; every key is written at once or none is.
-- KEYS: 1 meta, 2 snap, 3 moves, 4 events, 5 evidx, 6 idems
-- ARGV: 1 meta JSON, 2 state JSON, 3 ttl seconds, 4.. setup events JSON
-- Returns 1, or 0 when the match id is already taken.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local ttl = tonumber(ARGV[3])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)
redis.call('HSET', KEYS[2], 'v', 0, 's', ARGV[2], 'e', #ARGV - 3)
redis.call('RPUSH', KEYS[5], 0)
if #ARGV > 3 then
  redis.call('RPUSH', KEYS[4], unpack(ARGV, 4))
end
for i = 2, 5 do
  redis.call('EXPIRE', KEYS[i], ttl)
end
return 1
"""

#: Lua: return -1 (the caller reads ``idems`` again and retries) unless every
#: idempotency record ``idems`` (KEYS[6]) lists is among KEYS[7..]: Redis
#: Cluster wants every key a script touches declared.
_ALL_IDEMS_DECLARED = """
local declared = {}
for i = 7, #KEYS do
  declared[KEYS[i]] = true
end
for _, key in ipairs(redis.call('SMEMBERS', KEYS[6])) do
  if not declared[key] then
    return -1
  end
end
"""


#: Lua: the name of the first key of a live (not compacted) match that
#: disagrees with its version ``cur``, or nil.  KEYS as in APPLY.
_DAMAGE = """
local function damage(cur)
  local v = tonumber(cur)
  if redis.call('HEXISTS', KEYS[2], 'z') == 1 then
    return nil
  end
  if redis.call('HEXISTS', KEYS[2], 's') == 0 then
    return 'snap'
  end
  if redis.call('LLEN', KEYS[3]) ~= v then
    return 'moves'
  end
  if redis.call('LLEN', KEYS[5]) ~= v + 1 then
    return 'evidx'
  end
  local e = redis.call('HGET', KEYS[2], 'e')
  if e and tonumber(e) ~= redis.call('LLEN', KEYS[4]) then
    return 'events'
  end
  return nil
end
"""

APPLY = _DAMAGE + """
-- Compare-and-set one request's moves: the whole write path in one round
-- trip.  A request writes its own move and the moves the server plays after
-- it (bot seats, resigned seats, a clock's fallback): several versions at once.
-- KEYS: 1 meta, 2 snap, 3 moves, 4 events, 5 evidx, 6 idems,
--       7 idempotency record (optional)
-- ARGV: 1 expected version, 2 final state JSON, 3 ttl seconds,
--       4 request fingerprint ('' without KEYS[7]), 5 write id (unique per
--       attempt), 6 idempotency ttl seconds, 7 deadlines JSON ('' for none),
--       8 '1': publish the change always, '0': only when this node has a
--       subscriber to the channel (a cluster, see Keys.changed),
--       9.. per new version, in order: move log entry JSON, the number n of
--       its events, then its n events JSON
-- Returns {'missing'} when the match is gone (no meta), {'damaged',
-- key} when its keys disagree, {'idem', version} when KEYS[7] holds a
-- record of this very request, {'reused', version} when it holds one of
-- another request, {'ok', version} (the last
-- version written) when the moves are stored (also when this very write id
-- is already the last write: a client-side resend after a lost reply must
-- not look like a conflict), else {'conflict', version, state or false,
-- archive or false, deadlines or false}.  Only 'ok' writes anything.  The
-- idempotency record holds the last version written: the response to the
-- request carries every version from its own move's to that one.
local cur = redis.call('HGET', KEYS[2], 'v')
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {'missing'}
end
if not cur then
  return {'damaged', 'snap'}
end
if #KEYS > 6 then
  local rec = redis.call('GET', KEYS[7])
  if rec then
    local sep = string.find(rec, ':', 1, true)
    local version = tonumber(string.sub(rec, 1, sep - 1))
    if string.sub(rec, sep + 1) == ARGV[4] then
      return {'idem', version}
    end
    return {'reused', version}
  end
end
local hurt = damage(cur)
if hurt then
  return {'damaged', hurt}
end
if cur ~= ARGV[1] or redis.call('HEXISTS', KEYS[2], 'z') == 1 then
  if redis.call('HGET', KEYS[2], 'w') == ARGV[5] then
    return {'ok', tonumber(cur)}
  end
  return {'conflict', cur, redis.call('HGET', KEYS[2], 's'), redis.call('HGET', KEYS[2], 'z'),
          redis.call('HGET', KEYS[2], 'd')}
end
local ttl = tonumber(ARGV[3])
local v = tonumber(cur)
local i = 9
while i <= #ARGV do
  v = v + 1
  local n = tonumber(ARGV[i + 1])
  redis.call('RPUSH', KEYS[3], ARGV[i])
  redis.call('RPUSH', KEYS[5], redis.call('LLEN', KEYS[4]))
  if n > 0 then
    redis.call('RPUSH', KEYS[4], unpack(ARGV, i + 2, i + 1 + n))
  end
  i = i + 2 + n
end
redis.call('HSET', KEYS[2], 'v', v, 's', ARGV[2], 'w', ARGV[5], 'e', redis.call('LLEN', KEYS[4]))
if ARGV[7] == '' then
  redis.call('HDEL', KEYS[2], 'd')
else
  redis.call('HSET', KEYS[2], 'd', ARGV[7])
end
if #KEYS > 6 then
  local idem_ttl = tonumber(ARGV[6])
  redis.call('SET', KEYS[7], v .. ':' .. ARGV[4], 'EX', idem_ttl)
  redis.call('SADD', KEYS[6], KEYS[7])
  if redis.call('TTL', KEYS[6]) < idem_ttl then
    redis.call('EXPIRE', KEYS[6], idem_ttl)
  end
end
for i = 1, 5 do
  redis.call('EXPIRE', KEYS[i], ttl)
end
local changed = string.sub(KEYS[1], 1, -5) .. 'changed'  -- meta -> changed: service.store.notify
if ARGV[8] == '1' or redis.call('PUBSUB', 'SHARDNUMSUB', changed)[2] > 0 then
  redis.pcall('SPUBLISH', changed, v)
end
return {'ok', v}
"""

COMPACT = """
-- Replace a finished match's move log, events and index by its archive.
-- KEYS: 1 meta, 2 snap, 3 moves, 4 events, 5 evidx, 6 idems,
--       7.. the idempotency records idems listed when the caller read it
-- (declared, as Redis Cluster wants every key a script touches).
-- ARGV: 1 version (the final one), 2 archive, 3 moves in the archive,
--       4 finished ttl seconds (idempotency records expire no later)
-- Returns 1 when compacted, 0 when the match is not at that version, is
-- already compacted or its move log disagrees (then nothing changes), -1
-- (nothing changed) when idems lists a record not among KEYS: read idems
-- again and retry.
if redis.call('HGET', KEYS[2], 'v') ~= ARGV[1] or redis.call('HEXISTS', KEYS[2], 'z') == 1
   or redis.call('LLEN', KEYS[3]) ~= tonumber(ARGV[3]) or redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
""" + _ALL_IDEMS_DECLARED + """redis.call('HSET', KEYS[2], 'z', ARGV[2])
redis.call('HDEL', KEYS[2], 's', 'e')
redis.call('DEL', KEYS[3], KEYS[4], KEYS[5])
local ttl = tonumber(ARGV[4])
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
for i = 7, #KEYS do
  if redis.call('TTL', KEYS[i]) > ttl then
    redis.call('EXPIRE', KEYS[i], ttl)
  end
end
if redis.call('TTL', KEYS[6]) > ttl then
  redis.call('EXPIRE', KEYS[6], ttl)
end
return 1
"""

LOAD = """
-- A match's meta and snapshot for a request, read together.
-- KEYS: 1 meta, 2 snap
-- ARGV: 1 '1' for the meta JSON, '0' for whether it exists only;
--       2 the version the caller has cached ('' for none)
-- Returns false when the meta is gone; {meta, v} when the stored version is
-- ARGV[2]; else {meta, v, s, z, d} (HMGET's fields, false when absent).
-- meta: the JSON, or 1.
local meta
if ARGV[1] == '1' then
  meta = redis.call('GET', KEYS[1])
else
  meta = redis.call('EXISTS', KEYS[1]) == 1 and 1
end
if not meta then
  return false
end
local fields = redis.call('HMGET', KEYS[2], 'v', 's', 'z', 'd')
if fields[1] and fields[1] == ARGV[2] then
  return {meta, fields[1]}
end
table.insert(fields, 1, meta)
return fields
"""

EVENTS_SINCE = _DAMAGE + """
-- Events with version > ARGV[1], read atomically with the current version.
-- KEYS: 1 meta, 2 snap, 3 moves, 4 events, 5 evidx
-- ARGV: 1 after (integer, -1 for all)
-- Returns false when the match is gone, {'damaged', key} when its keys
-- disagree, {'archive', version, archive} when it is compacted, else
-- {'events', version, {event JSON, ...}}.
local cur = redis.call('HGET', KEYS[2], 'v')
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
if not cur then
  return {'damaged', 'snap'}
end
local hurt = damage(cur)
if hurt then
  return {'damaged', hurt}
end
local v = tonumber(cur)
local z = redis.call('HGET', KEYS[2], 'z')
if z then
  return {'archive', v, z}
end
local after = tonumber(ARGV[1])
if after >= v then
  return {'events', v, {}}
end
if after < -1 then
  after = -1
end
local start = redis.call('LINDEX', KEYS[5], after + 1)
return {'events', v, redis.call('LRANGE', KEYS[4], tonumber(start), -1)}
"""

DELETE = """
-- Delete a match and its idempotency records.
-- KEYS: 1 meta, 2 snap, 3 moves, 4 events, 5 evidx, 6 idems,
--       7.. the idempotency records idems listed when the caller read it
-- (declared, as Redis Cluster wants every key a script touches).
-- The snapshot hash holds a compacted match's archive (``z``): deleting it
-- removes the archive too.
-- Returns the number of keys removed, or -1 (nothing removed) when idems now
-- lists a record that is not among KEYS: read idems again and retry.
""" + _ALL_IDEMS_DECLARED + """local n = redis.call('DEL', unpack(KEYS))
redis.pcall('SPUBLISH', string.sub(KEYS[1], 1, -5) .. 'changed', -1)  -- meta -> changed: service.store.notify
return n
"""

RECORD = """
-- Whether the match exists, its snapshot fields and the whole move log, read
-- atomically (a script rather than MULTI: one slot, any cluster client).
-- KEYS: 1 meta, 2 snap, 3 moves
-- Returns {1 or 0, {version, state, archive (each or false)}, {move log
-- entry JSON, ...}} (a compacted match's log is in its archive).
return {redis.call('EXISTS', KEYS[1]), redis.call('HMGET', KEYS[2], 'v', 's', 'z'),
        redis.call('LRANGE', KEYS[3], 0, -1)}
"""

MOVES = """
-- The first ARGV[1] entries of the move log, read atomically with the
-- archive of a compacted match (whose log is in the archive).
-- KEYS: 1 snap, 2 moves
-- ARGV: 1 upto (integer >= 0)
-- Returns {archive or false, {move log entry JSON, ...}}.
local upto = tonumber(ARGV[1])
local moves = {}
if upto > 0 then
  moves = redis.call('LRANGE', KEYS[2], 0, upto - 1)
end
return {redis.call('HGET', KEYS[1], 'z'), moves}
"""

# --------------------------------------------------------------------------
# Clocks (service.domain.clock): the matches to look at, and when.  One sorted set
# per shard, each under its own hash tag (so each command touches one slot),
# member a match id, score the epoch millisecond at which the match must be
# looked at (its earliest deadline, or now for moves the server still owes).
# Every instance sweeps every shard; an entry only says "look": what is due
# is decided from the match's snapshot, and every move settled by APPLY.
# --------------------------------------------------------------------------
DEADLINE_SHARDS = 8


def deadline_key(match_id: str) -> str:
    """The shard holding ``match_id``'s entry (crc32: the same in every process)."""
    return f"{PREFIX}:{{deadlines-{zlib.crc32(match_id.encode()) % DEADLINE_SHARDS}}}"


def deadline_keys() -> list[str]:
    return [f"{PREFIX}:{{deadlines-{i}}}" for i in range(DEADLINE_SHARDS)]


DEADLINE_CLAIM = """
-- Take a due entry for one sweeper: move it to the end of a lease, but only
-- if nobody else did since it was read (then another instance has it).
-- KEYS: 1 the shard; ARGV: 1 match id, 2 the score read, 3 the lease's end
-- Returns 1 when taken, else 0.
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if seen and tonumber(seen) == tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
return 0
"""

DEADLINE_SETTLE = """
-- A sweeper is done with an entry it leased: the next time to look at the
-- match (ARGV[3]), or remove it ('') — unless someone moved it meanwhile.
-- KEYS: 1 the shard; ARGV: 1 match id, 2 the lease's end, 3 next score or ''
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not seen or tonumber(seen) ~= tonumber(ARGV[2]) then
  return 0
end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
"""

CLAIM = """
-- Claim an open seat: set its field in the snapshot hash unless it is set.
-- KEYS: 1 meta, 2 snap
-- ARGV: 1 the seat's field (``c<k>``), 2 the claimant's token hash
-- Returns 'ok' (also when the field already holds this very hash: a
-- client-side resend after a lost reply is not a lost race), 'taken',
-- 'finished' (compacted), 'missing' (no meta) or 'damaged' (no snapshot).
-- The caller has checked that seat k was created open; nothing expires
-- here: claiming is not a move (the keys keep the TTL of the last write).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 'missing'
end
if redis.call('HEXISTS', KEYS[2], 'v') == 0 then
  return 'damaged'
end
if redis.call('HEXISTS', KEYS[2], 'z') == 1 then
  return 'finished'
end
local held = redis.call('HGET', KEYS[2], ARGV[1])
if held then
  if held == ARGV[2] then
    return 'ok'
  end
  return 'taken'
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 'ok'
"""

# --------------------------------------------------------------------------
# Ladders (service.domain.ladders, api.md "Ladders: ratings on the server").
# Every key of a ladder lives under its own hash tag, ``lodge:{ladder-<id>}:…``
# (one slot, never a match's): a ladder match's keys and its ladder's are
# written by separate commands, never one script.
#
# ========  ======  ==========================================================
# name      type    holds
# ========  ======  ==========================================================
# ladder    hash    ``game``, ``name``, ``admin`` (the admin token's hash),
#                   ``created`` (epoch s), ``matches`` (finished matches rated)
# entrants  hash    entrant id -> JSON ``{"name", "token" (hash), "mu",
#                   "sigma", "matches", "wins"}``
# names     hash    entrant name -> entrant id (names are unique per ladder)
# pending   zset    the ladder's matches not rated yet, score their creation
#                   (epoch ms): added before the match is created, removed by
#                   the script that writes its ratings (so at most once), or
#                   once the match is gone unfinished
# ========  ======  ==========================================================
#
# Ladders do not expire.
# --------------------------------------------------------------------------
class LadderKeys:
    """Names of the Redis keys of one ladder."""

    __slots__ = ("ladder", "entrants", "names", "pending")

    def __init__(self, ladder_id: str):
        base = f"{PREFIX}:{{ladder-{ladder_id}}}:"
        self.ladder, self.entrants, self.names, self.pending = (
            base + "ladder", base + "entrants", base + "names", base + "pending")


LADDER_CREATE = """
-- Create a ladder.  KEYS: 1 ladder; ARGV: field, value, ... (``matches`` 0)
-- Returns 1, or 0 when the id is taken.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""

ENTRANT_ADD = """
-- Register an entrant.  KEYS: 1 ladder, 2 entrants, 3 names
-- ARGV: 1 name, 2 entrant id, 3 entrant JSON
-- Returns 'ok', 'missing' (no ladder), 'taken' (the name is) or 'retry'
-- (the id is: draw another).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 'missing'
end
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then
  return 'taken'
end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then
  return 'retry'
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
return 'ok'
"""

LADDER_READ = """
-- A ladder and entrants, read together.  KEYS: 1 ladder, 2 entrants
-- ARGV: entrant ids (none: every entrant)
-- Returns false when there is no ladder, else {HGETALL ladder, entrants}:
-- entrants as HGETALL's flat list without ARGV, else HMGET's values.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
local entrants
if #ARGV == 0 then
  entrants = redis.call('HGETALL', KEYS[2])
else
  entrants = redis.call('HMGET', KEYS[2], unpack(ARGV))
end
return {redis.call('HGETALL', KEYS[1]), entrants}
"""

LADDER_RATE = """
-- Write a finished match's ratings, exactly once: only while the match is
-- pending (the same step removes it), and only if every entrant still holds
-- what the ratings were computed from (compare-and-set).
-- KEYS: 1 ladder, 2 entrants, 3 pending
-- ARGV: 1 match id, then per entrant: id, JSON read, new JSON
-- Returns 'ok', 'done' (not pending: rated already, or dropped) or 'stale'
-- (an entrant changed meanwhile: read again and retry); only 'ok' writes.
if not redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  return 'done'
end
for i = 2, #ARGV, 3 do
  if redis.call('HGET', KEYS[2], ARGV[i]) ~= ARGV[i + 1] then
    return 'stale'
  end
end
for i = 2, #ARGV, 3 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
end
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HINCRBY', KEYS[1], 'matches', 1)
return 'ok'
"""
