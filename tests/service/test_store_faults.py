"""Store faults (issue 11): partial loss of a match's keys, an evicting
Redis, a frozen Redis (SIGSTOP) during a write, the per-request time budget.

Each lost key gives a clear answer on every endpoint (404 when the meta is
gone, else 503 ``store_unavailable`` saying the match's data is damaged),
never a 500 and never a silently short record; a move writes nothing.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import redis

from engine import REGISTRY
from service.ops.config import Settings
from service.store.keys import Keys
from tests.conftest import flask_api, make_app, start_redis, stop_process
from tests.http_helpers import Api, Match, assert_problem
from tests.playout import play_out

LIVE_KEYS = ["meta", "snap", "moves", "events", "evidx"]


@pytest.fixture(autouse=True)
def _no_rate_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests send hundreds of requests a second from one client: they
    measure the store, not the rate limits (whose counters share the Redis)."""
    monkeypatch.setenv("RATE_LIMIT_ENABLED", "false")


def started(api: Api, moves: int = 3) -> tuple[Match, list[tuple[int, Mapping[str, Any]]]]:
    """A 2-seat Biberbande match with ``moves`` moves played; the rest of a
    seeded playout's moves."""
    engine = REGISTRY.get("biberbande")
    assert engine is not None
    out = play_out(engine, 2, 21, {"rounds": 1})
    m = api.create(2, seed=21, options={"rounds": 1})
    for i, (seat, move) in enumerate(out.moves[:moves]):
        assert api.move(m.id, m.token(seat), move, i).status == 200
    return m, out.moves[moves:]


def every_endpoint(api: Api, m: Match, nxt: tuple[int, Mapping[str, Any]], version: int) -> dict[str, Any]:
    seat, move = nxt
    return {
        "view": api.view(m.id, m.admin), "view seat": api.view(m.id, m.token(0)),
        "legal": api.legal(m.id, m.token(seat)), "events": api.events(m.id, m.admin, after=-1),
        "events after": api.events(m.id, m.token(1), after=version - 1),
        "long-poll": api.events(m.id, m.admin, after=version, wait=0.3),
        "record": api.record(m.id, m.admin),
        "move": api.move(m.id, m.token(seat), move, version),
        "move idem": api.move(m.id, m.token(seat), move, headers={"Idempotency-Key": "after-loss"}),
    }


#: The keys each endpoint reads: losing another one leaves its answer intact.
NEEDS = {"view": {"meta", "snap"}, "view seat": {"meta", "snap"}, "legal": {"meta", "snap"},
         "record": {"meta", "snap", "moves"}}


def state_of(client: Any, match_id: str) -> dict[str, Any]:
    """Every key of the match with its value (TTL aside)."""
    out: dict[str, Any] = {}
    for key in client.scan_iter(match=f"lodge:{{{match_id}}}:*"):
        kind = client.type(key).decode()
        out[key.decode()] = {"string": client.get, "hash": client.hgetall, "set": client.smembers,
                             "list": lambda k: client.lrange(k, 0, -1)}[kind](key)
    return out


@pytest.mark.parametrize("name", LIVE_KEYS)
def test_lost_key_of_a_live_match(store, name: str):
    for cold in (False, True):
        api = flask_api(make_app(store))
        m, rest = started(api)
        if cold:  # a worker that has never seen the match
            api = flask_api(make_app(store))
        store.delete(getattr(Keys(m.id), name))
        before = state_of(store, m.id)
        for what, r in every_endpoint(api, m, rest[0], 3).items():
            if name == "meta":
                assert_problem(r, 404, "match_not_found")
            elif name in NEEDS.get(what, set(LIVE_KEYS)):
                body = assert_problem(r, 503, "store_unavailable")
                assert "lost part of this match's data" in body["detail"] and f"'{name}'" in body["detail"], (what, r)
                assert r.header("retry-after"), r
            else:
                assert r.status == 200, (what, r)
        assert state_of(store, m.id) == before, "a damaged match must not be written"
        if name != "meta":
            assert api.delete_match(m.id, m.admin).status == 204, "its admin can still delete it"
            assert state_of(store, m.id) == {}


@pytest.mark.parametrize("name", ["meta", "snap"])
def test_lost_key_of_a_compacted_match(store, name: str):
    api = flask_api(make_app(store))
    m, rest = started(api, 0)
    for i, (seat, move) in enumerate(rest):
        assert api.move(m.id, m.token(seat), move, i).status == 200
    assert store.hexists(Keys(m.id).snap, "z")
    store.delete(getattr(Keys(m.id), name))
    for cold in (False, True):
        other = flask_api(make_app(store)) if cold else api
        for what, r in every_endpoint(other, m, rest[-1], len(rest)).items():
            if name == "meta":
                assert_problem(r, 404, "match_not_found")
            else:
                assert_problem(r, 503, "store_unavailable"), what


def test_readyz_warns_of_an_evicting_policy(redis_server: str):
    client = redis.Redis.from_url(redis_server)
    api = flask_api(make_app(client))
    old: Any = client.config_get("maxmemory-policy")["maxmemory-policy"]
    try:
        assert api.get("/readyz").json == {"status": "ok"}
        client.config_set("maxmemory-policy", "allkeys-lru")
        r = api.get("/readyz")
        assert r.status == 200 and "allkeys-lru" in r.json["warning"] and "noeviction" in r.json["warning"], r
    finally:
        client.config_set("maxmemory-policy", old)
        client.close()


# --------------------------------------------------------------------------
# A frozen Redis (SIGSTOP), bounded in time.
# --------------------------------------------------------------------------
TIMEOUT, BUDGET = 0.5, 1.0
#: Worst case of a request: the budget plus the one try under way when it ends.
BOUND = BUDGET + TIMEOUT + 0.7


@pytest.fixture(params=["limits off", "limits on"])
def frozen(tmp_path: Path, request: pytest.FixtureRequest):
    """A private redis-server, an app on it as deployed (REDIS_URL, its
    retries) with a short timeout and budget, and a way to freeze it; with
    rate limiting off and on (its counters live in the same Redis: its
    calls count against the same budget)."""
    proc, url = start_redis(tmp_path)
    settings = Settings.from_env({"REDIS_URL": url, "REDIS_TIMEOUT": str(TIMEOUT), "REDIS_BUDGET": str(BUDGET),
                                  "RATE_LIMIT_ENABLED": str(request.param == "limits on").lower()})
    from service.app import create_app

    app = create_app(settings=settings)
    app.config["TESTING"] = True
    stopped = []

    def freeze() -> None:
        os.kill(proc.pid, signal.SIGSTOP)
        stopped.append(True)

    def thaw() -> None:
        if stopped:
            os.kill(proc.pid, signal.SIGCONT)
            stopped.clear()

    try:
        yield Frozen(flask_api(app), redis.Redis.from_url(url), freeze, thaw, request.param == "limits on")
    finally:
        thaw()
        stop_process(proc)


class Frozen(NamedTuple):
    """What the ``frozen`` fixture gives."""

    api: Api
    client: redis.Redis
    freeze: Callable[[], None]
    thaw: Callable[[], None]
    limits: bool


def timed(call: Any) -> tuple[Any, float]:
    t0 = time.monotonic()
    r = call()
    return r, time.monotonic() - t0


@pytest.mark.process
def test_frozen_redis_during_a_move_says_it_may_be_applied(frozen):
    api, client, freeze, thaw, limits = frozen
    m, rest = started(api)
    (seat, move), hdr = rest[0], {"Idempotency-Key": "frozen-1"}
    freeze()
    r, took = timed(lambda: api.move(m.id, m.token(seat), move, 3, headers=hdr))
    body = assert_problem(r, 503, "store_unavailable")
    assert r.header("retry-after")
    assert took < BOUND, f"the request waited {took:.1f} s"
    thaw()
    if not limits:  # the cached snapshot lets the move reach its write
        assert "may have been applied" in body["detail"] and "Idempotency-Key" in body["detail"], body
    elif "may have been applied" not in body["detail"]:  # the limiter spent the budget: nothing was sent
        time.sleep(0.2)
        assert client.llen(Keys(m.id).moves) == 3, "a 503 that says nothing changed, yet the move was applied"
    retry = api.move(m.id, m.token(seat), move, 3, headers=hdr)
    assert retry.status == 200 and retry.json["version"] == 4, retry
    assert len(api.record(m.id, m.admin).json["moves"]) == 4, "applied exactly once"
    again = api.move(m.id, m.token(seat), move, 3, headers=hdr)
    assert (again.status, again.body) == (200, retry.body)


@pytest.mark.process
def test_frozen_redis_before_any_write_changes_nothing(frozen):
    api, client, freeze, thaw, _ = frozen
    m, rest = started(api)
    seat, move = rest[0]
    freeze()
    for name, call in (("view", lambda: api.view(m.id, m.admin)),
                       ("events", lambda: api.events(m.id, m.admin, after=0)),
                       ("record", lambda: api.record(m.id, m.admin))):
        r, took = timed(call)
        body = assert_problem(r, 503, "store_unavailable")
        assert "may have been applied" not in body["detail"], (name, body)
        assert took < BOUND, f"{name} waited {took:.1f} s"
    thaw()
    assert api.view(m.id, m.admin).json["version"] == 3
    assert client.llen(Keys(m.id).moves) == 3


@pytest.mark.process
def test_budget_bounds_a_request_of_many_round_trips(frozen):
    """A long-poll calls the store only to look (it waits for a change
    notification in between, service/store/notify.py); each look has its own
    budget, so a look against a frozen store ends the request within the
    bound however long ``wait`` is."""
    api, client, freeze, thaw, _ = frozen
    m, _ = started(api)
    api.events(m.id, m.admin, after=3, wait=0)  # meta cached: the look itself meets the frozen store
    result: list[Any] = []
    freeze()
    t = threading.Thread(target=lambda: result.append(timed(lambda: api.events(m.id, m.admin, after=3, wait=30))))
    t.start()
    t.join(BOUND + 2)
    thaw()
    assert result, "the long-poll did not end"
    r, took = result[0]
    assert_problem(r, 503, "store_unavailable")
    assert took < 0.3 + BOUND + 0.5, took
