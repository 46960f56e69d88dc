"""Operational endpoints (/healthz, /readyz, /metrics, /openapi.json, /docs),
the store-down behaviour (503 store_unavailable + Retry-After, never 500) and
the error format of every error."""
from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import closed_port, flask_api, make_app, start_redis, stop_process
from tests.http_helpers import Api, assert_problem


def test_healthz(api: Api):
    r = api.get("/healthz")
    assert r.status == 200, r


def test_readyz(api: Api):
    r = api.get("/readyz")
    assert r.status == 200, r


def test_metrics_prometheus_text(api: Api):
    api.get("/v1/games")
    api.create_raw({"game": "biberbande", "players": 2})
    r = api.get("/metrics")
    assert r.status == 200, r
    assert r.content_type in ("text/plain", "application/openmetrics-text"), r.headers
    text = r.body.decode()
    assert "# TYPE " in text and "# HELP " in text, text[:500]
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert lines, text[:500]
    for ln in lines:  # every sample line is "<name>{labels} <number>"
        value = ln.rsplit(" ", 1)[-1]
        float(value)


def test_openapi_json(api: Api):
    r = api.get("/openapi.json")
    assert r.status == 200, r
    spec = r.json
    assert spec["openapi"].startswith("3."), spec.get("openapi")
    paths = spec["paths"]
    for path in ("/v1/games", "/v1/games/{game}", "/v1/matches", "/v1/matches/{match_id}",
                 "/v1/matches/{match_id}/legal-moves", "/v1/matches/{match_id}/moves",
                 "/v1/matches/{match_id}/events", "/v1/matches/{match_id}/record"):
        # path parameter names are the implementer's call: compare templates
        normal = {p.split("{")[0] + ("{}" if "{" in p else "") + (p.split("}", 1)[1] if "}" in p else "")
                  for p in paths}
        want = path.split("{")[0] + ("{}" if "{" in path else "") + (path.split("}", 1)[1] if "}" in path else "")
        assert want in normal, (path, sorted(paths))


def test_openapi_matches_committed_file(api: Api):
    """The served contract is the committed openapi/openapi.json."""
    import json
    from pathlib import Path

    committed = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"
    assert committed.exists(), "openapi/openapi.json must be committed"
    assert api.get("/openapi.json").json == json.loads(committed.read_text())


def test_each_tuple_of_games_is_documented_on_its_own():
    """Apps for the same games share one OpenAPI document (service.app
    builds it once per process): an app with other games still serves its own
    games' schemas, and apps before and after it, with other settings too,
    serve the committed document."""
    import json
    from pathlib import Path

    import fakeredis

    from engine import REGISTRY
    from engine.core import Registry
    from service.app import create_app
    from service.ops.config import Settings

    committed = json.loads((Path(__file__).resolve().parents[2] / "openapi" / "openapi.json").read_text())

    def served(**options: Any) -> Any:
        return flask_api(create_app(fakeredis.FakeRedis(), **options)).get("/openapi.json").json

    one_game = Registry()
    one_game.register(REGISTRY.games["biberbande"])
    assert served() == committed
    schemas = served(registry=one_game)["components"]["schemas"]
    assert "BiberbandeView" in schemas and "BiberclanView" not in schemas
    assert "BiberclanView" in committed["components"]["schemas"]
    assert served(settings=Settings.from_env({"CORS_ORIGINS": "https://a.example",
                                              "RATE_LIMIT_ENABLED": "false"})) == committed


def test_docs(api: Api):
    r = api.get("/docs")
    if r.status in (301, 302, 308):
        location = r.header("location")
        assert location, r
        r = api.get(location)
    assert r.status == 200, r
    assert r.content_type == "text/html"
    assert b"openapi.json" in r.body or b"swagger" in r.body.lower() or b"redoc" in r.body.lower()


def test_unknown_route_is_problem_json(api: Api):
    r = api.get("/v1/nothing-here")
    assert r.status == 404
    assert r.content_type == "application/problem+json", r


def test_wrong_method_is_problem_json(api: Api):
    r = api.request("PUT", "/v1/games")
    assert r.status == 405, r
    assert r.content_type == "application/problem+json", r


# --------------------------------------------------------------------------
# Store down.
# --------------------------------------------------------------------------
# Well-formed ids and tokens (16 base32 letters; tokens "<match_id>.<secret>") so
# the service has to ask the store; a malformed id may be refused without it.
SOME_ID = "abcdefghijklmnop"
SOME_TOKEN = SOME_ID + ".c2VjcmV0LXRva2VuLXRoYXQtaXMtbG9uZy1lbm91Z2g"


def _unavailable(r) -> None:
    assert r.status != 500, r
    assert_problem(r, 503, "store_unavailable")
    ra = r.header("retry-after")
    assert ra is not None and ra.strip().isdigit(), r.headers


def test_store_down_create(down_api: Api):
    _unavailable(down_api.create_raw({"game": "biberbande", "players": 2, "seed": 1}))


def test_store_down_get_match(down_api: Api):
    _unavailable(down_api.view(SOME_ID))
    _unavailable(down_api.view(SOME_ID, SOME_TOKEN))


def test_store_down_post_move(down_api: Api):
    _unavailable(down_api.move(SOME_ID, SOME_TOKEN, {"type": "draw"}, 0))


def test_store_down_other_match_routes(down_api: Api):
    for r in (down_api.legal(SOME_ID, SOME_TOKEN), down_api.events(SOME_ID), down_api.record(SOME_ID, SOME_TOKEN),
              down_api.delete_match(SOME_ID, SOME_TOKEN)):
        _unavailable(r)


def test_store_down_readyz_and_healthz(down_api: Api):
    assert down_api.get("/readyz").status == 503
    assert down_api.get("/healthz").status == 200  # liveness does not depend on the store
    assert down_api.get("/v1/games").status == 200  # the catalogue needs no store


@pytest.mark.process
def test_store_goes_down_mid_match(tmp_path):
    """A real redis-server dies mid-match: 503 store_unavailable (never 500);
    after it comes back on the same port, requests work again.  (The server
    runs without persistence, so the match itself is gone: 404, not 500.)"""
    import redis

    proc, url = start_redis(tmp_path)
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
        api = flask_api(make_app(client))
        m = api.create(2, seed=1)
        stop_process(proc)
        _unavailable(api.move(m.id, m.token(0), {"type": "draw"}, 0))
        _unavailable(api.view(m.id, m.token(0)))
        _unavailable(api.create_raw({"game": "biberbande", "players": 2}))
        assert api.get("/readyz").status == 503
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        proc, url = start_redis(tmp_path, port=port)
        assert api.get("/readyz").status == 200
        assert_problem(api.view(m.id), 404, "match_not_found")
        m2 = api.create(2, seed=1)
        assert api.move(m2.id, m2.token(0), {"type": "draw"}, 0).status == 200
    finally:
        stop_process(proc)


@pytest.mark.process
@pytest.mark.parametrize("failure", ["oom", "readonly"])
def test_store_refusing_writes_is_503_not_500(tmp_path, failure):
    """A reachable Redis that refuses writes — maxmemory reached (OOM) or a
    read-only replica after a failover — is a store outage for the client:
    503 store_unavailable with Retry-After, never a 500 ("a 500 is always a
    bug"), and nothing half-written: once writes work again the match is
    unchanged and playable."""
    import redis

    proc, url = start_redis(tmp_path)
    try:
        client = redis.Redis.from_url(url)
        api = flask_api(make_app(client))
        m = api.create(2, seed=1)
        before = m.admin_view()
        if failure == "oom":
            client.config_set("maxmemory-policy", "noeviction")
            client.config_set("maxmemory", "1")
        else:
            client.execute_command("REPLICAOF", "127.0.0.1", str(closed_port()))
        try:
            _unavailable(api.create_raw({"game": "biberbande", "players": 2, "seed": 2}))
            _unavailable(api.move(m.id, m.token(0), {"type": "draw"}, 0))
            _unavailable(api.move(m.id, m.token(0), {"type": "draw"}, 0, headers={"Idempotency-Key": "k"}))
        finally:
            if failure == "oom":
                client.config_set("maxmemory", "0")
            else:
                client.execute_command("REPLICAOF", "NO", "ONE")
        assert m.admin_view() == before
        assert api.record(m.id, m.admin).json["moves"] == []
        assert api.move(m.id, m.token(0), {"type": "draw"}, 0, headers={"Idempotency-Key": "k"}).status == 200
        assert m.admin_view()["version"] == 1
    finally:
        stop_process(proc)


# --------------------------------------------------------------------------
# Settings from the environment, and messages that use them.
# --------------------------------------------------------------------------
def test_settings_from_env():
    from service.ops.config import Settings

    s = Settings.from_env({"REDIS_URL": "redis://h:1/0", "MATCH_TTL": "60", "MATCH_CACHE_SIZE": "8",
                           "MAX_BODY": "2048", "REDIS_TIMEOUT": "0.5", "RETRY_AFTER": "7"})
    assert s == Settings(redis_url="redis://h:1/0", match_ttl=60, cache_size=8, max_body=2048,
                         redis_timeout=0.5, retry_after=7)
    assert Settings.from_env({}) == Settings()
    for name in ("MAX_BODY", "RETRY_AFTER", "REDIS_TIMEOUT"):
        with pytest.raises(ValueError, match=name):
            Settings.from_env({name: "lots"})


def _app_with(env: dict[str, str], redis_client) -> Api:
    from service.app import create_app
    from service.ops.config import Settings

    app = create_app(redis_client=redis_client, settings=Settings.from_env(env))
    app.config["TESTING"] = True
    return flask_api(app)


@pytest.mark.parametrize(("limit", "words"), [("1000", "1000 bytes"), ("2048", "2 KiB"), ("1048576", "1 MiB")])
def test_body_limit_is_configured_and_named(limit, words):
    """MAX_BODY sets the 413 limit, and the problem detail names it."""
    import fakeredis

    api = _app_with({"MAX_BODY": limit}, fakeredis.FakeRedis())
    body = {"game": "biberbande", "players": ["x" * (int(limit) // 2), "y" * (int(limit) // 2)]}
    problem = assert_problem(api.create_raw(body), 413, "payload_too_large")
    assert problem["detail"] == f"the request body is over the {words} limit", problem
    assert api.create_raw({"game": "biberbande", "players": 2}).status == 201


def test_retry_after_is_configured(down_api: Api):
    """RETRY_AFTER sets the Retry-After of a 503 (default 1 s)."""
    assert down_api.get("/readyz").header("Retry-After") == "1"
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    client = redis.Redis(host="127.0.0.1", port=closed_port(), socket_connect_timeout=0.3, socket_timeout=0.3,
                         retry=Retry(NoBackoff(), 0))
    r = _app_with({"RETRY_AFTER": "9"}, client).get("/readyz")
    assert_problem(r, 503, "store_unavailable")
    assert r.header("Retry-After") == "9", r


def test_acting_seat_needs_a_seat():
    """auth.acting_seat answers a seat number: a viewer that is neither the
    admin nor a seat (no seat number) is refused, never handed back None."""
    from engine.core import SEAT, Viewer
    from service.domain.auth import acting_seat
    from service.http.errors import ApiError

    assert acting_seat(Viewer(SEAT, 1), None, 2, "moving") == 1
    with pytest.raises(ApiError) as refused:
        acting_seat(Viewer(SEAT, None), None, 2, "moving")
    assert refused.value.code == "forbidden"
