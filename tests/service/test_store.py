"""Store-level tests (service.store.store / service.store.keys) on fakeredis and a real Redis.

The real server comes from the ``redis_server`` fixture of conftest.py, or
from ``REDIS_URL`` when that is set.  Each test uses a fresh random match id
and removes only that match's keys, so a shared Redis is never flushed.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any, TypeVar

import orjson
import pytest
import redis

from service.domain.auth import new_match_id
from service.ops.config import Settings
from service.store.keys import Keys
from service.store.store import DamagedMatch, Meta, Snapshot, Store, compress, decompress, fingerprint

TTL = 3600
IDEM_TTL = 600
SETTINGS = Settings(idempotency_ttl=IDEM_TTL, finished_ttl=900)
MID = ""  # set per test by the ``match_id`` fixture
T = TypeVar("T")  # what a store lookup returns when the match exists


@pytest.fixture(params=["fakeredis", pytest.param("redis", marks=pytest.mark.process)])
def client(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "fakeredis":
        import fakeredis

        c: redis.Redis = fakeredis.FakeRedis()
    else:
        url = os.environ.get("REDIS_URL") or request.getfixturevalue("redis_server")
        c = redis.Redis.from_url(url)
    yield c
    for key in c.scan_iter(match=f"lodge:{{{MID}}}:*"):
        c.delete(key)
    c.close()


@pytest.fixture(autouse=True)
def match_id() -> Iterator[str]:
    """A fresh match id for every test (module-global ``MID``)."""
    global MID
    MID = new_match_id()
    yield MID


def make_store(client: Any) -> Store:
    return Store(client, ttl=TTL, cache_size=16, settings=SETTINGS)


def meta() -> Meta:
    return Meta(MID, "toy", ["ana", "bo"], 7, {"rounds": 1}, "a" * 64, ["b" * 64, "c" * 64], 1.5)


def create(store: Store) -> None:
    assert store.create(meta(), {"n": 0}, [{"type": "setup", "seat": None, "version": 0}])


def apply(store: Store, expected: int, n: int, idem: str | None = None):
    state = {"n": n}
    events = [{"type": "tick", "seat": 0, "version": expected + 1}]
    fp = fingerprint(0, {"type": "tick"}, expected) if idem else ""
    return store.apply(MID, expected, state, {"version": expected + 1, "seat": 0, "move": {"type": "tick"}},
                       events, idem, fp)


def present(value: T | None) -> T:
    """``value``, which the store has: the test's match exists."""
    assert value is not None
    return value


def live_events(store: Store, after: int) -> tuple[int, list[bytes]]:
    """The version and events after ``after`` of the match, which is live (not archived)."""
    version, events = present(store.events_since(MID, after))
    assert isinstance(events, list)
    return version, events


def all_keys(client: Any) -> list[bytes]:
    return sorted(client.scan_iter(match=f"lodge:{{{MID}}}:*"))


# --------------------------------------------------------------------------
def test_keys_share_one_hash_tag():
    k = Keys(MID)
    names = [*k.fixed(), k.idem("seat0:retry-1")]
    assert len(set(names)) == len(names)
    for name in names:
        assert name.startswith(f"lodge:{{{MID}}}:"), name
        assert name.count("{") == 1 and name.count("}") == 1, name


def test_create_writes_every_key_with_ttl(client):
    store = make_store(client)
    create(store)
    keys = all_keys(client)
    assert {k.decode() for k in keys} == {Keys(MID).meta, Keys(MID).snap, Keys(MID).events, Keys(MID).evidx}
    for key in keys:
        assert 0 < client.ttl(key) <= TTL, key
    loaded = make_store(client).load(MID)
    assert loaded is not None
    m, snap = loaded
    assert m == meta()
    assert (snap.version, snap.state) == (0, {"n": 0})


def test_create_refuses_a_taken_id(client):
    store = make_store(client)
    create(store)
    assert not store.create(meta(), {"n": 99}, [])
    assert present(make_store(client).snapshot(MID)).state == {"n": 0}


def test_apply_bumps_version_logs_move_and_events(client):
    store = make_store(client)
    create(store)
    result = apply(store, 0, 1)
    assert result.version == 1
    assert present(store.cached(MID))[1].version == 1
    fresh = make_store(client)
    assert present(fresh.snapshot(MID)).state == {"n": 1}
    assert present(fresh.record(MID))[1] == [orjson.dumps({"version": 1, "seat": 0, "move": {"type": "tick"}})]
    version, events = live_events(fresh, -1)
    assert version == 1 and [orjson.loads(e)["version"] for e in events] == [0, 1]
    assert [orjson.loads(e)["version"] for e in live_events(fresh, 0)[1]] == [1]
    assert fresh.events_since(MID, 1) == (1, [])
    assert fresh.events_since(MID, 5) == (1, [])


def test_every_key_ttl_refreshed_on_write(client):
    store = make_store(client)
    create(store)
    for key in all_keys(client):
        client.expire(key, 10)
    apply(store, 0, 1, idem="seat0:k1")
    keys = all_keys(client)
    assert len(keys) == 7  # meta snap moves events evidx idems + one record
    idem_keys = {Keys(MID).idems.encode(), Keys(MID).idem("seat0:k1").encode()}
    for key in keys:
        limit = IDEM_TTL if key in idem_keys else TTL
        assert limit - 5 < client.ttl(key) <= limit, key


def test_cas_race_exactly_one_wins(client):
    """Two workers (two stores, own caches) apply on the same version."""
    a, b = make_store(client), make_store(client)
    create(a)
    first, second = apply(a, 0, 1), apply(b, 0, 2)
    assert first.version == 1
    assert second.version is None and second.conflict is not None
    assert (second.conflict.version, second.conflict.state) == (1, {"n": 1})
    b.meta(MID)
    assert present(b.cached(MID))[1].version == 1  # the loser's cache caught up
    assert present(make_store(client).record(MID))[0].state == {"n": 1}
    assert len(client.lrange(Keys(MID).moves, 0, -1)) == 1


def test_cas_race_threads(client):
    """Many threads on one version: one winner, everyone else a conflict."""
    create(make_store(client))
    results: list[Any] = []
    barrier = threading.Barrier(8)

    def worker(n: int) -> None:
        store = make_store(client)
        barrier.wait()
        results.append(apply(store, 0, n))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r.version == 1 for r in results) == 1
    assert sum(r.conflict is not None for r in results) == 7
    assert client.llen(Keys(MID).moves) == 1


def test_idempotency_record_replays_first_response(client):
    store = make_store(client)
    create(store)
    assert apply(store, 0, 1, idem="seat0:k1").version == 1
    again = apply(make_store(client), 0, 5, idem="seat0:k1")
    assert again.replay == 1
    # a record wins even over a version that has moved on
    assert apply(store, 0, 6, idem="seat0:k1").replay is not None
    assert store.idempotent_response(MID, "seat0:k1") == (1, fingerprint(0, {"type": "tick"}, 0))
    assert store.idempotent_response(MID, "seat1:k1") is None
    assert present(make_store(client).snapshot(MID)).version == 1
    assert client.llen(Keys(MID).moves) == 1


def test_resent_write_is_not_a_conflict(client):
    """redis-py may resend a script after a lost reply: same write id, same outcome."""
    store = make_store(client)
    create(store)
    k = Keys(MID)
    args: list[bytes | str | int] = [0, b'{"n":1}', TTL, b"", "write-1", IDEM_TTL, b"", "1", b'{"version":1}', 1,
                                     b'{"type":"tick"}']
    assert store._apply(keys=k.fixed(), args=args) == [b"ok", 1]
    assert store._apply(keys=k.fixed(), args=args) == [b"ok", 1]
    assert client.llen(k.moves) == 1 and client.llen(k.events) == 2
    other = [*args[:4], "write-2", *args[5:]]
    assert store._apply(keys=k.fixed(), args=other)[:2] == [b"conflict", b"1"]


def test_archive_encoding_round_trips():
    moves = [orjson.dumps({"version": 1, "seat": 0, "move": {"type": "tick", "x": [1, None]}})]
    archive = decompress(compress(moves, {"x": [1, None]}))
    assert (archive.moves, archive.state) == (moves, {"x": [1, None]})


def test_apply_on_missing_match(client):
    store = make_store(client)
    result = apply(store, 0, 1)
    assert result.missing
    assert all_keys(client) == []  # nothing was created


@pytest.mark.process
def test_a_primary_without_its_replicas_is_not_believed_on_a_missing_match(redis_server: str):
    """Sentinel mode (``primary_replicas``): a match the primary lacks is gone
    only if the primary has the replicas writes wait for; else (an old
    primary restarted empty during a failover, here a lone redis-server)
    the lookup is a ConnectionError, a 503 to retry, never a 404."""
    client = redis.Redis.from_url(redis_server)
    try:
        alone = Store(client, ttl=TTL, cache_size=16, settings=SETTINGS, primary_replicas=1)
        create(alone)
        assert present(alone.load(MID))[1].version == 0  # a match it holds is served
        missing = new_match_id()
        for lookup in (alone.load, alone.meta):
            with pytest.raises(redis.exceptions.ConnectionError, match="0 of the 1 replicas"):
                lookup(missing)
        assert make_store(client).load(missing) is None  # without the setting: gone
    finally:
        for key in client.scan_iter(match=f"lodge:{{{MID}}}:*"):
            client.delete(key)
        client.close()


def test_delete_removes_everything(client):
    store = make_store(client)
    create(store)
    apply(store, 0, 1, idem="seat0:k1")
    assert store.delete(MID)
    assert all_keys(client) == []
    assert store.load(MID) is None and store.meta(MID) is None
    assert not store.delete(MID)
    assert store.events_since(MID, -1) is None


def test_stale_cache_is_replaced_not_regressed(client):
    a, b = make_store(client), make_store(client)
    create(a)
    apply(b, 0, 1)
    assert present(a.cached(MID))[1].version == 0  # stale until it looks
    assert present(a.snapshot(MID)).version == 1
    a._remember(MID, Snapshot(0, {"n": 0}))
    assert present(a.cached(MID))[1].version == 1


def test_load_reads_the_state_only_when_the_cached_one_is_not_current(client):
    """keys.LOAD: a worker holding the current version gets its cached
    snapshot back (the stored state is not sent again); another worker's
    write, a lost meta and a lost snapshot are all seen."""
    a, b = make_store(client), make_store(client)
    create(a)
    first = b.load(MID)
    assert first is not None and first[1].version == 0 and first[1].state == {"n": 0}
    k = Keys(MID)
    assert b._load(keys=[k.meta, k.snap], args=["0", 0]) == [1, b"0"]  # current: no state sent
    assert b._load(keys=[k.meta, k.snap], args=["1", ""]) == [meta().to_json(), b"0", b'{"n":0}', None, None]
    client.hset(k.snap, "s", b"not read")  # the same version: the cached state stands
    assert present(b.load(MID))[1] is first[1]
    apply(a, 0, 1)
    meta_b, moved = present(b.load(MID))
    assert (moved.version, moved.state) == (1, {"n": 1}) and meta_b == meta()
    client.delete(Keys(MID).snap)
    with pytest.raises(DamagedMatch):
        b.load(MID)
    client.delete(Keys(MID).meta)
    assert b.load(MID) is None and b.cached(MID) is None


def test_store_down_raises_connection_error():
    """The service's own client (its few quick retries) to a port nobody
    listens on: the store lets the ConnectionError through (503 upstream)."""
    from service.store.redis_client import build

    client = build(Settings(redis_url="redis://127.0.0.1:1", redis_timeout=0.2))
    store = Store(client, ttl=TTL, settings=SETTINGS)
    with pytest.raises(redis.exceptions.ConnectionError):
        store.load(MID)
    with pytest.raises(redis.exceptions.ConnectionError):
        store.create(meta(), {"n": 0}, [])


class Clock:
    """A monotonic clock that moves only when slept on, installed as ``time``
    in the store modules (:func:`clock`): their deadline arithmetic runs
    exactly, without waiting."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    from service.store import redis_client
    from service.store import store as store_module

    fake = Clock()
    monkeypatch.setattr(store_module, "time", fake)
    monkeypatch.setattr(redis_client, "time", fake)
    return fake


def test_budget_stops_retries_at_the_deadline(clock: Clock):
    """REDIS_BUDGET: redis-py's retries end once the request's deadline has
    passed (10 retries of a 0.2 s failure would take 2.2 s; the budget is
    0.5 s), and no command starts after it."""
    from redis.backoff import NoBackoff

    from service.store.store import BudgetRetry

    store = Store(redis.Redis(host="127.0.0.1", port=1), ttl=TTL,
                  settings=Settings(redis_budget=0.5))
    assert isinstance(store.client.get_retry(), BudgetRetry), "the client's own retries respect the budget"
    retry = BudgetRetry(NoBackoff(), 10)
    tries = []

    def fail() -> None:
        tries.append(clock.monotonic())
        clock.sleep(0.2)
        raise redis.exceptions.TimeoutError("frozen")

    with store.budget(), pytest.raises(redis.exceptions.TimeoutError):
        retry.call_with_retry(fail, lambda error: None)
    assert tries == pytest.approx([0, 0.2, 0.4]), "tries start only before the deadline"
    with pytest.raises(redis.exceptions.TimeoutError, match="budget"):
        with store.budget():
            clock.sleep(0.55)
            retry.call_with_retry(fail, lambda error: None)
    assert len(tries) == 3, "no try starts after the deadline"
    assert retry.call_with_retry(lambda: 7, lambda error: None) == 7  # no budget open: plain retry


def test_time_off_the_budget_is_not_store_time(client, clock: Clock):
    """A bot's thinking inside a request (:meth:`Store.off_budget`) leaves
    the request its whole store budget; the same wait on the budget spends it."""
    store = Store(client, ttl=TTL, settings=Settings(redis_budget=0.3))
    create(store)
    with store.budget():
        with store.off_budget():
            clock.sleep(0.4)
        assert apply(store, 0, 1).version == 1
    with pytest.raises(redis.exceptions.TimeoutError, match="budget"), store.budget():
        clock.sleep(0.4)
        apply(store, 1, 2)


def test_write_ids_are_unique_per_attempt_and_per_forked_process():
    """Each write attempt has its own id (``keys.APPLY`` tells a resent write
    from another by it), also across processes forked from one another."""
    import os

    from service.store.store import next_write_id

    ids = [next_write_id() for _ in range(1000)]
    assert len(set(ids)) == 1000
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its first id
        os.write(write, next_write_id().encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 100).decode()
    os.close(read)
    os.close(write)
    assert child not in ids and child[:16] != ids[0][:16]
