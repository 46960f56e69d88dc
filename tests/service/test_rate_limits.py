"""Per-client limits (issue 11): request rates with flask-limiter, counters in
the match store's Redis (shared by instances), X-Forwarded-For only behind a
configured proxy, and the per-client cap on concurrent long-polls.  Each
refusal is 429 ``rate_limited`` problem+json with ``Retry-After``."""
from __future__ import annotations

import dataclasses
import threading
import time

import fakeredis
import pytest

from service.app import create_app
from service.ops.config import Settings
from tests.conftest import flask_api
from tests.http_helpers import until

BODY = {"game": "biberbande", "players": 2, "seed": 1}


def _app(store=None, **overrides):
    settings = dataclasses.replace(Settings.from_env({}), **overrides)
    app = create_app(store if store is not None else fakeredis.FakeRedis(), settings=settings)
    app.config["TESTING"] = True
    return app


def _api(store=None, **overrides):
    return flask_api(_app(store, **overrides))


def _is_rate_limited(r):
    assert r.status == 429, r
    assert r.content_type == "application/problem+json"
    assert r.json["code"] == "rate_limited" and r.json["status"] == 429
    assert int(r.header("Retry-After")) >= 1
    assert r.header("X-RateLimit-Limit") and r.header("X-RateLimit-Remaining") == "0"
    assert r.header("X-RateLimit-Reset")


def test_settings_from_the_environment():
    s = Settings.from_env({"RATE_LIMIT_ENABLED": "false", "RATE_LIMIT_CREATE": "5/minute",
                           "RATE_LIMIT_DEFAULT": "50/second", "TRUSTED_PROXIES": "1", "MAX_WAITS_PER_CLIENT": "3"})
    assert (s.rate_limit_enabled, s.rate_limit_create, s.rate_limit_default, s.trusted_proxies,
            s.max_waits_per_client) == (False, "5/minute", "50/second", 1, 3)
    with pytest.raises(ValueError, match="RATE_LIMIT_ENABLED"):
        Settings.from_env({"RATE_LIMIT_ENABLED": "maybe"})


def test_creation_limit_answers_429_with_headers():
    api = _api(rate_limit_create="3/minute")
    for _ in range(3):
        r = api.create_raw(BODY)
        assert r.status == 201, r
        assert r.header("X-RateLimit-Limit")
    _is_rate_limited(api.create_raw(BODY))
    assert api.get("/v1/games").status == 200  # only creation is refused


def test_general_limit_counts_every_request_and_spares_probes():
    api = _api(rate_limit_default="5/minute")
    assert api.create_raw(BODY).status == 201
    for _ in range(4):
        assert api.get("/v1/games").status == 200
    _is_rate_limited(api.get("/v1/games/biberbande"))
    _is_rate_limited(api.create_raw(BODY))
    for path in ("/healthz", "/readyz", "/metrics"):
        assert api.get(path).status == 200, path


def test_disabled_limits_refuse_nothing():
    api = _api(rate_limit_enabled=False, rate_limit_default="2/minute")
    assert all(api.get("/v1/games").status == 200 for _ in range(6))


def test_x_forwarded_for_is_ignored_unless_configured():
    api = _api(rate_limit_default="2/minute")
    for ip in ("10.0.0.1", "10.0.0.2"):
        assert api.get("/v1/games", headers={"X-Forwarded-For": ip}).status == 200
    _is_rate_limited(api.get("/v1/games", headers={"X-Forwarded-For": "10.0.0.3"}))

    proxied = _api(rate_limit_default="2/minute", trusted_proxies=1)
    for ip in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        assert proxied.get("/v1/games", headers={"X-Forwarded-For": ip}).status == 200
        assert proxied.get("/v1/games", headers={"X-Forwarded-For": ip}).status == 200
    _is_rate_limited(proxied.get("/v1/games", headers={"X-Forwarded-For": "10.0.0.1"}))
    # with one trusted proxy only its entry counts: a client cannot prepend its own
    assert proxied.get("/v1/games", headers={"X-Forwarded-For": "1.2.3.4, 10.0.0.9"}).status == 200


def test_two_instances_on_one_redis_share_counters(redis_server):
    import redis

    clients = [redis.Redis.from_url(redis_server) for _ in range(2)]
    clients[0].flushdb()
    try:
        a, b = (_api(c, rate_limit_create="4/minute") for c in clients)
        assert a.create_raw(BODY).status == 201
        assert b.create_raw(BODY).status == 201
        assert a.create_raw(BODY).status == 201
        assert b.create_raw(BODY).status == 201
        _is_rate_limited(a.create_raw(BODY))
        _is_rate_limited(b.create_raw(BODY))
    finally:
        clients[0].flushdb()
        for c in clients:
            c.close()


def test_long_polls_beyond_the_cap_are_429_at_once():
    app = _app(max_waits_per_client=2)
    api = flask_api(app)
    match = api.create(2, seed=3)
    path = f"/v1/matches/{match.id}/events"
    answers: list[int] = []
    waiters = [threading.Thread(target=lambda: answers.append(api.get(path, params={"after": 0, "wait": 5}).status))
               for _ in range(2)]
    for t in waiters:
        t.start()
    until(lambda: app.extensions["lodge"].notifier.watched() == 2, "both waiting")
    started = time.monotonic()
    r = api.get(path, params={"after": 0, "wait": 5})
    assert time.monotonic() - started < 2.5  # refused without waiting
    _is_rate_limited_wait(r)
    assert api.get(path, params={"after": -1}).status == 200  # a plain poll is not capped
    assert match.play(0, {"type": "draw"}).status == 200  # wakes both waiters
    for t in waiters:
        t.join(10)
    assert answers == [200, 200]
    assert api.get(path, params={"after": 0, "wait": 0.1}).status == 200  # slots are given back


def _is_rate_limited_wait(r):
    assert r.status == 429, r
    assert r.json["code"] == "rate_limited" and "waiting" in r.json["detail"]
    assert r.header("Retry-After") == "1"
