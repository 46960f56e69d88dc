"""Redis key names and Lua scripts: the store's whole on-the-wire layout.

Every key of a match lives under one hash tag, ``lodge:{<match_id>}:<name>``,
so all of them map to the same Redis Cluster slot and one Lua script may touch
them atomically.

========  ======  ==========================================================
name      type    holds
========  ======  ==========================================================
meta      string  JSON: game, players, seed, options, token hashes, created
snap      hash    ``v``: version, ``s``: state JSON, ``w``: id of the last write
moves     list    JSON ``{"version", "seat", "move"}`` per accepted move
events    list    JSON per event, stamped with the version that produced it
evidx     list    element ``v`` = index in ``events`` of version v's first event
idems     set     names of the match's idempotency record keys (for DELETE)
idem:<k>  string  JSON ``{"status", "body"}`` of the first response to key k
========  ======  ==========================================================

Every write sets the TTL of every key of the match (``MATCH_TTL``), so a match
expires after that long without a write.
"""
from __future__ import annotations

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

    def idem(self, key: str) -> str:
        """Idempotency record ``key`` (the service makes it ``<scope>:<client key>``)."""
        return f"{self._base}idem:{key}"

    def fixed(self) -> list[str]:
        """Every key of the match except the idempotency records."""
        return [self.meta, self.snap, self.moves, self.events, self.evidx, self.idems]


# --------------------------------------------------------------------------
# Lua scripts.  Each is registered once per client (redis-py register_script,
# EVALSHA with a transparent EVAL fallback) by :class:`service.store.Store`.
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
redis.call('HSET', KEYS[2], 'v', 0, 's', ARGV[2])
redis.call('RPUSH', KEYS[5], 0)
if #ARGV > 3 then
  redis.call('RPUSH', KEYS[4], unpack(ARGV, 4))
end
for i = 2, 6 do
  redis.call('EXPIRE', KEYS[i], ttl)
end
return 1
"""

APPLY = """
-- Compare-and-set one move: the whole write path in one round trip.
-- KEYS: 1 meta, 2 snap, 3 moves, 4 events, 5 evidx, 6 idems,
--       7 idempotency record (optional)
-- ARGV: 1 expected version, 2 new state JSON, 3 move log entry JSON,
--       4 ttl seconds, 5 idempotency record JSON ('' without KEYS[7]),
--       6 write id (unique per attempt), 7.. events JSON
-- Returns {'missing'} when the match is gone, {'idem', record} when KEYS[7]
-- already holds a response, {'ok', version} when the move is stored (also
-- when this very write id is already the last write: a client-side resend
-- after a lost reply must not look like a conflict), else {'conflict',
-- version, state}.
local cur = redis.call('HGET', KEYS[2], 'v')
if not cur then
  return {'missing'}
end
if #KEYS > 6 then
  local rec = redis.call('GET', KEYS[7])
  if rec then
    return {'idem', rec}
  end
end
if cur ~= ARGV[1] then
  if redis.call('HGET', KEYS[2], 'w') == ARGV[6] then
    return {'ok', tonumber(cur)}
  end
  return {'conflict', cur, redis.call('HGET', KEYS[2], 's')}
end
local ttl = tonumber(ARGV[4])
local v = tonumber(cur) + 1
redis.call('HSET', KEYS[2], 'v', v, 's', ARGV[2], 'w', ARGV[6])
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('RPUSH', KEYS[5], redis.call('LLEN', KEYS[4]))
if #ARGV > 6 then
  redis.call('RPUSH', KEYS[4], unpack(ARGV, 7))
end
if #KEYS > 6 then
  redis.call('SET', KEYS[7], ARGV[5], 'EX', ttl)
  redis.call('SADD', KEYS[6], KEYS[7])
end
for i = 1, 6 do
  redis.call('EXPIRE', KEYS[i], ttl)
end
return {'ok', v}
"""

EVENTS_SINCE = """
-- Events with version > ARGV[1], read atomically with the current version.
-- KEYS: 1 snap, 2 events, 3 evidx
-- ARGV: 1 after (integer, -1 for all)
-- Returns false when the match is gone, else {version, {event JSON, ...}}.
local cur = redis.call('HGET', KEYS[1], 'v')
if not cur then
  return false
end
local v = tonumber(cur)
local after = tonumber(ARGV[1])
if after >= v then
  return {v, {}}
end
if after < -1 then
  after = -1
end
local start = redis.call('LINDEX', KEYS[3], after + 1)
return {v, redis.call('LRANGE', KEYS[2], tonumber(start), -1)}
"""

DELETE = """
-- Delete a match and its idempotency records.
-- KEYS: 1 meta, 2 snap, 3 moves, 4 events, 5 evidx, 6 idems,
--       7.. the idempotency records idems listed when the caller read it
-- (declared, as Redis Cluster wants every key a script touches).
-- Returns the number of keys removed, or -1 (nothing removed) when idems now
-- lists a record that is not among KEYS: read idems again and retry.
local declared = {}
for i = 7, #KEYS do
  declared[KEYS[i]] = true
end
for _, key in ipairs(redis.call('SMEMBERS', KEYS[6])) do
  if not declared[key] then
    return -1
  end
end
return redis.call('DEL', unpack(KEYS))
"""

RECORD = """
-- The current snapshot fields and the whole move log, read atomically.
-- KEYS: 1 snap, 2 moves
-- Returns {{version or false, state or false}, {move log entry JSON, ...}}.
return {redis.call('HMGET', KEYS[1], 'v', 's'), redis.call('LRANGE', KEYS[2], 0, -1)}
"""
