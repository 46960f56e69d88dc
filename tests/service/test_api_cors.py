"""Cross-origin use (contract 1.1) through the Flask test client: CORS
headers on every response (errors and 304s included), preflights 204 with
the allowed methods and headers, ``CORS_ORIGINS``, never credentials."""
from __future__ import annotations

from typing import Any

import fakeredis
import pytest

from service.app import create_app
from service.http.cors import parse_origins
from service.ops.config import Settings

ORIGIN = "http://127.0.0.1:5173"
ALLOWED_HEADERS = ["Authorization", "Content-Type", "If-Match", "If-None-Match", "Idempotency-Key", "Last-Event-ID"]
PATHS = ["/v1/games", "/v1/games/biberbande", "/v1/matches", "/v1/matches/{m}", "/v1/matches/{m}/legal-moves",
         "/v1/matches/{m}/moves", "/v1/matches/{m}/events", "/v1/matches/{m}/record", "/healthz", "/openapi.json"]


def _client(**env: str) -> Any:
    app = create_app(fakeredis.FakeRedis(), settings=Settings.from_env(env))
    app.config["TESTING"] = True
    return app.test_client()


@pytest.fixture
def client() -> Any:
    return _client()


@pytest.fixture
def match(client: Any) -> dict[str, Any]:
    r = client.post("/v1/matches", json={"game": "biberbande", "players": ["ana", "bo"], "seed": 42})
    assert r.status_code == 201
    return r.get_json()


def _preflight(client: Any, path: str, method: str, headers: list[str], origin: str = ORIGIN) -> Any:
    return client.open(path, method="OPTIONS", headers={
        "Origin": origin, "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": ", ".join(h.lower() for h in headers)})


def _exposes(r: Any) -> None:
    assert r.headers.get("Access-Control-Allow-Origin") == "*", dict(r.headers)
    assert [h.strip() for h in r.headers["Access-Control-Expose-Headers"].split(",")] == ["ETag", "Location",
                                                                                           "Retry-After"]
    assert "Access-Control-Allow-Credentials" not in r.headers


@pytest.mark.parametrize("path", PATHS)
def test_preflight_is_204_with_methods_and_headers(client: Any, match: dict[str, Any], path: str):
    r = _preflight(client, path.format(m=match["match_id"]), "POST", ALLOWED_HEADERS)
    assert r.status_code == 204 and r.data == b""
    assert r.headers["Access-Control-Allow-Origin"] == "*"
    assert r.headers["Access-Control-Allow-Methods"] == "GET, POST, DELETE"
    allowed = [h.strip().lower() for h in r.headers["Access-Control-Allow-Headers"].split(",")]
    assert sorted(allowed) == sorted(h.lower() for h in ALLOWED_HEADERS)
    assert int(r.headers["Access-Control-Max-Age"]) > 0
    assert "Access-Control-Allow-Credentials" not in r.headers


def test_preflight_leaves_out_headers_not_allowed(client: Any):
    r = _preflight(client, "/v1/matches", "POST", ["Content-Type", "X-Custom"])
    assert r.status_code == 204
    assert r.headers["Access-Control-Allow-Headers"].lower() == "content-type"


def test_preflight_for_a_method_not_allowed_gets_no_cors_headers(client: Any):
    r = _preflight(client, "/v1/matches", "PUT", ["Content-Type"])
    assert "Access-Control-Allow-Methods" not in r.headers


def test_plain_options_without_preflight_is_unchanged(client: Any):
    r = client.open("/v1/matches", method="OPTIONS")
    assert r.status_code == 200 and "POST" in r.headers["Allow"]


def test_success_responses_carry_cors_headers(client: Any, match: dict[str, Any]):
    created = client.post("/v1/matches", json={"game": "biberbande", "players": 2, "seed": 42},
                          headers={"Origin": ORIGIN})
    assert created.status_code == 201 and created.headers["Location"] and created.headers["ETag"] == '"0"'
    _exposes(created)
    seat = match["state"]["to_act"][0]
    auth = {"Origin": ORIGIN, "Authorization": f"Bearer {match['seats'][seat]['token']}"}
    path = f"/v1/matches/{match['match_id']}"
    for r in (client.get(path, headers=auth), client.get(path + "/legal-moves", headers=auth),
              client.get(path + "/events", headers=auth), client.get("/v1/games", headers=auth)):
        assert r.status_code == 200
        _exposes(r)


def test_304_carries_cors_headers(client: Any, match: dict[str, Any]):
    r = client.get(f"/v1/matches/{match['match_id']}", headers={"Origin": ORIGIN, "If-None-Match": '"0"'})
    assert r.status_code == 304 and r.headers["ETag"] == '"0"'
    _exposes(r)


def test_problem_responses_carry_cors_headers(client: Any, match: dict[str, Any]):
    path = f"/v1/matches/{match['match_id']}"
    token = match["seats"][1]["token"]
    cases = [
        (client.get("/v1/matches/nosuchmatch00000", headers={"Origin": ORIGIN}), 404),
        (client.get("/nowhere", headers={"Origin": ORIGIN}), 404),
        (client.post("/v1/matches", data="{", content_type="application/json", headers={"Origin": ORIGIN}), 400),
        (client.delete(path, headers={"Origin": ORIGIN}), 401),
        (client.post(path + "/moves", json={"move": {"type": "draw"}, "version": 5},
                     headers={"Origin": ORIGIN, "Authorization": f"Bearer {token}"}), 409),
        (client.put(path, headers={"Origin": ORIGIN}), 405),
    ]
    for r, status in cases:
        assert r.status_code == status and r.content_type == "application/problem+json", (r.status_code, r.data)
        _exposes(r)


def test_store_outage_503_exposes_retry_after():
    import redis

    app = create_app(redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2,
                                 retry=redis.retry.Retry(redis.backoff.NoBackoff(), 0)))
    r = app.test_client().get("/readyz", headers={"Origin": ORIGIN})
    assert r.status_code == 503 and r.headers["Retry-After"]
    _exposes(r)


def test_cors_origins_list_echoes_allowed_origins_only():
    client = _client(CORS_ORIGINS=f" {ORIGIN} , https://play.example ")
    ok = client.get("/v1/games", headers={"Origin": "https://play.example"})
    assert ok.headers["Access-Control-Allow-Origin"] == "https://play.example"
    assert "Origin" in ok.headers["Vary"]
    other = client.get("/v1/games", headers={"Origin": "https://evil.example"})
    assert other.status_code == 200 and "Access-Control-Allow-Origin" not in other.headers
    pre = _preflight(client, "/v1/matches", "POST", ["Content-Type"], origin="https://evil.example")
    assert "Access-Control-Allow-Origin" not in pre.headers


def test_cors_origins_setting():
    assert parse_origins(None) == ["*"] and parse_origins(" ") == ["*"]
    assert parse_origins("https://a.example, https://b.example,") == ["https://a.example", "https://b.example"]
    assert Settings.from_env({}).cors_origins == ["*"]
    assert Settings.from_env({"CORS_ORIGINS": "https://a.example"}).cors_origins == ["https://a.example"]


@pytest.mark.parametrize("origins", [ORIGIN, f"{ORIGIN},https://play.example"])
def test_cors_origins_list_varies_by_origin_on_every_response(origins: str):
    """With a list, every answer (any Origin or none, errors and preflights
    included) says ``Vary: Origin`` once: a cache must not give an answer
    without CORS headers to an allowed origin, nor one origin's to another."""
    client = _client(CORS_ORIGINS=origins)
    m = client.post("/v1/matches", json={"game": "biberbande", "players": 2, "seed": 42}).get_json()
    for origin in (ORIGIN, "https://evil.example", None):
        sent = {"Origin": origin} if origin else {}
        answers = [client.get(path.format(m=m["match_id"]), headers=sent) for path in PATHS]
        answers += [client.get("/v1/matches/nosuchmatch00000", headers=sent),
                    _preflight(client, "/v1/matches", "POST", ["Content-Type"], origin=origin or ORIGIN)]
        for r in answers:
            varies = [v for v in r.headers.getlist("Vary") if "origin" in v.lower()]
            assert varies == ["Origin"], (origin, r.request.path, r.status_code, r.headers.getlist("Vary"))


def test_any_origin_does_not_vary_by_origin(client: Any, match: dict[str, Any]):
    """With ``*`` the answers are the same for every origin: no ``Vary: Origin``."""
    for origin in (ORIGIN, None):
        r = client.get(f"/v1/matches/{match['match_id']}", headers={"Origin": origin} if origin else {})
        assert r.headers.getlist("Vary") == ["Authorization"]
