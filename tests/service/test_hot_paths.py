"""The hot paths (service/http/routes/hot.py) answer exactly as the Flask routes.

Each request is sent twice, to two matches created alike (same seed): once
through the app (the dispatcher in front) and once to the Flask app behind it
directly; status, headers and body must be equal, for the plain requests the
dispatcher answers and for the odd ones it hands to Flask.  The same again
with rate limits on, with listed CORS origins and behind a trusted proxy;
and the two paths count against the same rate-limit counters.
"""
from __future__ import annotations

import functools
import io
import itertools
import json
from typing import Any

import fakeredis
import pytest

from engine import REGISTRY
from service.app import create_app
from service.http.routes.hot import HotPaths
from service.ops.config import Settings
from tests.http_helpers import W1_MOVES, W1_OPTIONS

SETTINGS = {"RATE_LIMIT_ENABLED": "false", "MAX_WAITS_PER_CLIENT": "0"}
#: The configurations both paths are compared under (the defaults, then each
#: piece that changes headers or counting).
LIMITS_ON = {"RATE_LIMIT_ENABLED": "true", "RATE_LIMIT_DEFAULT": "1000/hour;5000/day"}
CONFIGS = {"defaults": {}, "limits": LIMITS_ON,
           "origins": {"CORS_ORIGINS": "https://a.example,https://b.example"},
           "proxy": {**LIMITS_ON, "TRUSTED_PROXIES": "1"}}


def _app(env: dict[str, str] | None = None) -> Any:
    app = create_app(fakeredis.FakeRedis(), settings=Settings.from_env({**SETTINGS, **(env or {})}))
    app.config["TESTING"] = True
    return app


def _call(wsgi: Any, method: str, path: str, query: str = "", body: bytes | None = None,
          headers: dict[str, str] | None = None, peer: str = "127.0.0.1") -> tuple[str, list[tuple[str, str]], bytes]:
    """One WSGI call: status line, the header lines (sorted, repeats kept) and the body."""
    env: dict[str, Any] = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query,
                           "SERVER_NAME": "localhost", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
                           "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body or b""),
                           "wsgi.errors": io.StringIO(), "REMOTE_ADDR": peer}
    if body is not None:
        env["CONTENT_LENGTH"] = str(len(body))
        env["CONTENT_TYPE"] = "application/json"
    for name, value in (headers or {}).items():
        key = name.upper().replace("-", "_")
        env[key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else "HTTP_" + key] = value
    out: dict[str, Any] = {}

    def start_response(status: str, response_headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        out["status"], out["headers"] = status, sorted(response_headers)

    data = b"".join(wsgi(env, start_response))
    return out["status"], out["headers"], data


@functools.cache
def _shared_app(config: str) -> Any:
    """One app per configuration for the tests that compare the two paths
    on matches of their own: the two clients compared send the same
    requests in every test, so their rate-limit counters stay alike."""
    return _app(CONFIGS[config])


#: a client address per pair of matches created (the creations' own rate limit counts per client)
_CREATORS = (f"10.9.{n // 250}.{n % 250 + 1}" for n in itertools.count())


def _matches(app: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two matches created alike (tokens differ, ids differ)."""
    body = json.dumps({"game": "biberbande", "players": ["ana", "bo"], "seed": 11, "options": W1_OPTIONS}).encode()
    peer = next(_CREATORS)
    a, b = (_call(app.wsgi_app, "POST", "/v1/matches", body=body, peer=peer) for _ in range(2))
    assert a[0].startswith("201") and b[0].startswith("201"), (a, b)
    return json.loads(a[2]), json.loads(b[2])


def _pair(env: dict[str, str] | None = None) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """A new app and two matches created alike."""
    app = _app(env)
    return (app, *_matches(app))


def _hot(app: Any) -> HotPaths:
    """The dispatcher (behind ProxyFix when proxies are trusted)."""
    outer = app.wsgi_app
    hot = getattr(outer, "app", outer)
    assert isinstance(hot, HotPaths)
    return hot


def _same(app: Any, a: dict[str, Any], b: dict[str, Any], method: str, tail: str, query: str = "",
          body: bytes | None = None, headers: dict[str, str] | None = None, who: str | int | None = 0) -> None:
    """The request on match a through the app (the dispatcher in front)
    equals it on match b through Flask alone, each from a client of its own,
    directly and as forwarded (their rate-limit counters start alike)."""
    hot = _hot(app)
    behind = hot.flask_app if app.wsgi_app is hot else _Wrapped(app.wsgi_app, hot.flask_app)

    def token(m: dict[str, Any]) -> dict[str, str]:
        if who is None:
            return {}
        t = m["admin_token"] if who == "admin" else m["seats"][int(who)]["token"]
        return {"Authorization": f"Bearer {t}"}

    through = _call(app.wsgi_app, method, f"/v1/matches/{a['match_id']}{tail}", query, body,
                    {"X-Forwarded-For": "192.0.2.1", **token(a), **(headers or {})}, peer="10.0.0.1")
    flask = _call(behind, method, f"/v1/matches/{b['match_id']}{tail}", query, body,
                  {"X-Forwarded-For": "192.0.2.2", **token(b), **(headers or {})}, peer="10.0.0.2")
    swap = (b["match_id"].encode(), a["match_id"].encode())
    assert through[0] == flask[0], (through, flask)
    assert _steady(through[1]) == _steady(flask[1]), (through[1], flask[1])
    assert through[2] == flask[2].replace(*swap), (through[2][:300], flask[2][:300])


class _Wrapped:
    """ProxyFix (``outer``) in front of the Flask app instead of the dispatcher."""

    def __init__(self, outer: Any, flask_app: Any):
        self.outer, self.flask_app = outer, flask_app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        saved = self.outer.app
        self.outer.app = self.flask_app
        try:
            return self.outer(environ, start_response)
        finally:
            self.outer.app = saved


def _steady(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers, with the rate-limit reset time (epoch seconds; two calls
    may fall on both sides of a second) left out: checked by the caller."""
    return [(n, v) for n, v in headers if n != "X-RateLimit-Reset"]


MOVE = json.dumps({"move": W1_MOVES[0][1], "version": 0}).encode()
#: W1's first move by its id (api.md "Moves as numbers"), alone and beside its fields
FIRST_ID = REGISTRY.games["biberbande"].action_id(W1_MOVES[0][1])
BY_ID = json.dumps({"move": {"id": FIRST_ID}, "version": 0}).encode()


@pytest.mark.parametrize(("method", "tail", "query", "body", "headers", "who"), [
    ("GET", "", "", None, None, 0),
    ("GET", "", "", None, None, None),
    ("GET", "", "legal=true", None, None, "admin"),
    ("GET", "", "legal=1", None, None, 0),
    ("GET", "", "", None, {"If-None-Match": '"0"'}, 0),
    ("GET", "", "legal=maybe", None, None, 0),              # Flask: 400
    ("GET", "", "legal=true&legal=false", None, None, 0),   # Flask
    ("GET", "", "token=x", None, None, None),               # Flask (query token hidden)
    ("GET", "", "", None, {"Authorization": "Basic x"}, None),
    ("GET", "/legal-moves", "", None, None, 0),
    ("GET", "/legal-moves", "seat=0", None, None, "admin"),
    ("GET", "/legal-moves", "", None, None, "admin"),       # 400: the admin names a seat
    ("GET", "/legal-moves", "seat=-1", None, None, "admin"),  # Flask: 400
    ("POST", "/moves", "", MOVE, None, 0),
    ("POST", "/moves", "legal=true", MOVE, {"Idempotency-Key": "k1"}, 0),
    ("POST", "/moves", "seat=0&legal=true", MOVE, None, "admin"),
    ("POST", "/moves", "", MOVE, None, 1),                  # 409 not_your_turn
    ("POST", "/moves", "", json.dumps({"move": {"type": "fly"}}).encode(), None, 0),  # 422
    ("POST", "/moves", "", json.dumps({"move": {"type": "draw"}, "version": 3}).encode(), None, 0),  # 409
    ("POST", "/moves", "", json.dumps({"move": {"type": "draw"}, "version": 1.0}).encode(), None, 0),  # Flask 400
    ("POST", "/moves", "", json.dumps({"move": {"type": "draw"}, "extra": 1}).encode(), None, 0),  # Flask 400
    ("POST", "/moves", "", json.dumps({"move": {"type": 1}}).encode(), None, 0),  # Flask 400
    ("POST", "/moves", "", json.dumps({"type": "draw"}).encode(), None, 0),          # Flask 400: wrap it
    ("POST", "/moves", "", json.dumps({"move": "draw", "version": 0}).encode(), None, 0),  # Flask 400
    ("POST", "/moves", "", b"{}", None, 0),                                          # Flask 400
    ("POST", "/moves", "", b"[1, 2]", None, 0),                                  # Flask 400
    ("POST", "/moves", "", b"{not json", None, 0),                               # Flask 400
    ("POST", "/moves", "", MOVE, {"If-Match": '"0"'}, 0),                        # Flask
    ("POST", "/moves", "", MOVE, {"Idempotency-Key": "bad key"}, 0),             # Flask 400
    ("POST", "/moves", "", MOVE, {"Content-Type": "text/plain"}, 0),             # Flask (bodies.py)
    ("POST", "/moves", "", MOVE, None, None),                                    # 401
    ("POST", "/moves", "legal=true", BY_ID, None, 0),
    ("POST", "/moves", "", json.dumps({"move": {**W1_MOVES[0][1], "id": FIRST_ID}}).encode(), None, 0),
    ("POST", "/moves", "", json.dumps({"move": {"type": "draw", "id": FIRST_ID}}).encode(), None, 0),  # 422
    ("POST", "/moves", "", json.dumps({"move": {"id": FIRST_ID + 1}}).encode(), None, 0),  # 422
    ("POST", "/moves", "", BY_ID, None, 1),                                      # 409 not_your_turn
    ("POST", "/moves", "", json.dumps({"move": {"id": "4"}}).encode(), None, 0),  # Flask 400
    ("POST", "/moves", "seat=5", MOVE, None, "admin"),                           # 400 seat range
])
@pytest.mark.parametrize("config", CONFIGS)
def test_dispatcher_answers_as_flask(config: str, method: str, tail: str, query: str, body: bytes | None,
                                     headers: dict[str, str] | None, who: str | int | None):
    app = _shared_app(config)
    a, b = _matches(app)
    sent = {"Origin": "https://b.example", **(headers or {})}
    _same(app, a, b, method, tail, query, body, sent, who)


def test_unknown_match_and_other_paths_as_flask():
    app = _shared_app("defaults")
    for path in ("/v1/matches/aaaaaaaaaaaaaaaa", "/v1/matches/aaaaaaaaaaaaaaaa/moves", "/v1/matches/x",
                 "/v1/matches/aaaaaaaaaaaaaaaa/", "/v1/matches/aaaaaaaaaaaaaaaa/legal-moves"):
        for method in ("GET", "POST", "DELETE"):
            body = MOVE if method == "POST" else None
            flask = _call(_hot(app).flask_app, method, path, body=body)
            assert _call(app.wsgi_app, method, path, body=body) == flask, (method, path)


@pytest.mark.parametrize("origin", ["https://a.example", "https://elsewhere.example", None])
def test_listed_origins_as_flask(origin: str | None):
    app = _shared_app("origins")
    a, b = _matches(app)
    _same(app, a, b, "GET", "", headers={"Origin": origin} if origin else None)
    _same(app, a, b, "POST", "/moves", body=MOVE, headers={"Origin": origin} if origin else None)


def _rate(headers: list[tuple[str, str]]) -> dict[str, str]:
    return {n: v for n, v in headers if n.startswith("X-RateLimit-")}


def test_both_paths_count_against_one_counter_and_refuse_alike():
    """Two requests through Flask, the third (the last allowed) and the
    fourth through the dispatcher: one counter, the same 429 as Flask's."""
    app, a, b = _pair({"RATE_LIMIT_ENABLED": "true", "RATE_LIMIT_DEFAULT": "3/hour"})
    hot = _hot(app)
    view = f"/v1/matches/{a['match_id']}"
    for remaining in ("2", "1"):
        assert _rate(_call(app.wsgi_app, "GET", "/v1/games", peer="10.1.1.1")[1])["X-RateLimit-Remaining"] == remaining
    third = _call(app.wsgi_app, "GET", view, peer="10.1.1.1")
    assert third[0].startswith("200") and _rate(third[1])["X-RateLimit-Remaining"] == "0"
    refused = _call(app.wsgi_app, "GET", view, peer="10.1.1.1")
    for _ in range(3):
        _call(hot.flask_app, "GET", "/v1/games", peer="10.1.1.2")
    flask = _call(hot.flask_app, "GET", f"/v1/matches/{b['match_id']}", peer="10.1.1.2")
    assert refused[0] == flask[0] == "429 TOO MANY REQUESTS"
    assert _steady(refused[1]) == _steady(flask[1])
    assert abs(int(_rate(refused[1])["X-RateLimit-Reset"]) - int(_rate(flask[1])["X-RateLimit-Reset"])) <= 1
    assert json.loads(refused[2]) == json.loads(flask[2])
    assert json.loads(refused[2])["code"] == "rate_limited"
    assert _call(app.wsgi_app, "GET", view, peer="10.1.1.3")[0].startswith("200")  # another client


def test_trusted_proxy_counts_the_forwarded_client():
    """Behind TRUSTED_PROXIES=1 the dispatcher counts the address ProxyFix
    takes from X-Forwarded-For, not the proxy's."""
    app, a, _ = _pair({"RATE_LIMIT_ENABLED": "true", "RATE_LIMIT_DEFAULT": "2/hour", "TRUSTED_PROXIES": "1"})
    view = f"/v1/matches/{a['match_id']}"
    for client in ("198.51.100.1", "198.51.100.2"):
        for _ in range(2):
            assert _call(app.wsgi_app, "GET", view, headers={"X-Forwarded-For": client})[0].startswith("200")
    assert _call(app.wsgi_app, "GET", view, headers={"X-Forwarded-For": "198.51.100.1"})[0].startswith("429")


def _world(app: Any, seed: int = 3) -> str:
    body = json.dumps({"players": ["ana", "bo", "cy"], "seed": seed}).encode()
    world: str = json.loads(_call(app.wsgi_app, "POST", "/v1/games/biberbande/worlds", body=body)[2])["world"]
    return world


def _unsized(answer: tuple[str, list[tuple[str, str]], bytes]) -> list[tuple[str, str]]:
    """The steady headers but Content-Length, which is checked against the body."""
    sizes = [v for n, v in answer[1] if n == "Content-Length"]
    assert sizes == [str(len(answer[2]))], (sizes, len(answer[2]))
    return [(n, v) for n, v in _steady(answer[1]) if n != "Content-Length"]


def _unsigned(body: bytes) -> Any:
    """A simulate answer with its world string's issue time and signature
    left out (two calls may fall on both sides of a second); the rest as sent."""
    found = json.loads(body) if body else None
    if isinstance(found, dict) and isinstance(found.get("world"), str):
        found["world"] = found["world"].count(".")
    return found


def _simulate_bodies(world: str) -> list[Any]:
    """Plain bodies the dispatcher answers, then odd ones it hands to Flask."""
    first = {"seat": 0, "move": W1_MOVES[0][1]}
    return [
        {"world": world, "playout": "random", "seed": 5},
        {"world": world, "playout": "random", "seed": 5, "as": 1},
        {"world": world, "moves": [{"seat": 0, "move": {"id": 0}}], "playout": None},
        {"world": world, "moves": [first], "seed": 1},
        {"world": world, "moves": [{"seat": 1, "move": {"type": "draw"}}]},          # 422 illegal_move, at 0
        {"world": world, "moves": [{"seat": 9, "move": {"type": "draw"}}]},          # 422 no such seat
        {"world": world, "as": 7},                                                   # 400 as out of range
        {"world": world[:-2] + "AA"},                                                # 422 invalid_world
        {"world": "nonsense"},                                                       # 422 invalid_world
        {"world": world, "playout": "greedy"},                                       # Flask 400
        {"world": world, "seed": -1},                                                # Flask 400
        {"world": world, "moves": [{"seat": 0}]},                                    # Flask 400
        {"world": world, "moves": [{"seat": True, "move": {}}]},                     # Flask
        {"world": world, "extra": 1},                                                # Flask 400
        {"world": 3},                                                                # Flask 400
        [world],                                                                     # Flask 400
    ]


@pytest.mark.parametrize("case", range(16))
@pytest.mark.parametrize("config", CONFIGS)
def test_simulate_answers_as_flask(config: str, case: int):
    """``POST /v1/games/{game}/simulate`` through the dispatcher equals it
    through Flask alone: status, headers and body (the new world string's
    signature aside: its issue time may differ by a second)."""
    app = _shared_app(config)
    hot = _hot(app)
    behind = hot.flask_app if app.wsgi_app is hot else _Wrapped(app.wsgi_app, hot.flask_app)
    body = json.dumps(_simulate_bodies(_world(app))[case]).encode()
    for game in ("biberbande", "no-such-game"):
        path, origin = f"/v1/games/{game}/simulate", {"Origin": "https://b.example"}
        through = _call(app.wsgi_app, "POST", path, body=body, headers={"X-Forwarded-For": "192.0.2.1", **origin},
                        peer="10.0.0.1")
        flask = _call(behind, "POST", path, body=body, headers={"X-Forwarded-For": "192.0.2.2", **origin},
                      peer="10.0.0.2")
        assert through[0] == flask[0], (through, flask)
        # the world string is compressed: another issue time can change its length by a byte
        assert _unsized(through) == _unsized(flask), (through[1], flask[1])
        assert _unsigned(through[2]) == _unsigned(flask[2]), (through[2][:300], flask[2][:300])


@pytest.mark.parametrize("config", CONFIGS)
def test_plain_requests_do_not_reach_flask(config: str):
    app, a, _ = _pair(CONFIGS[config])
    world = _world(app)
    hot = _hot(app)

    def flask_refuses(environ: dict[str, Any], start_response: Any) -> Any:
        raise AssertionError(f"handed to Flask: {environ['REQUEST_METHOD']} {environ['PATH_INFO']}")
    hot.flask_app = flask_refuses
    token = {"Authorization": f"Bearer {a['seats'][0]['token']}", "Origin": "https://a.example"}
    path = f"/v1/matches/{a['match_id']}"
    assert _call(app.wsgi_app, "GET", path, "legal=true", headers=token)[0].startswith("200")
    assert _call(app.wsgi_app, "GET", path + "/legal-moves", headers=token)[0].startswith("200")
    assert _call(app.wsgi_app, "POST", path + "/moves", body=MOVE, headers=token)[0].startswith("200")
    simulate = json.dumps({"world": world, "moves": [{"seat": 0, "move": {"id": 0}}], "playout": "random",
                           "seed": 1}).encode()
    assert _call(app.wsgi_app, "POST", "/v1/games/biberbande/simulate", body=simulate)[0].startswith("200")


#: What a cache may do with each answer that depends on the caller's token
#: (docs/api.md "Caching"): keep it for the caller only and revalidate it
#: (views with their ETag, a move's answer, the record), or never store it.
PRIVATE = [("Cache-Control", "private, no-cache"), ("Vary", "Authorization")]
NO_STORE = [("Cache-Control", "no-store"), ("Vary", "Authorization")]


@pytest.mark.parametrize("config", ["defaults", "origins"])
def test_token_dependent_answers_tell_caches_on_both_paths(config: str):
    """Every route whose answer depends on the token sends its cache headers,
    alike through the dispatcher and through Flask alone (``Vary: Origin``
    besides with listed origins)."""
    app = _shared_app(config)
    a, b = _matches(app)
    origin = [("Vary", "Origin")] if config == "origins" else []
    for wsgi, m in ((app.wsgi_app, a), (_hot(app).flask_app, b)):
        seat, admin = {"Authorization": f"Bearer {m['seats'][0]['token']}"}, {
            "Authorization": f"Bearer {m['admin_token']}"}
        path = f"/v1/matches/{m['match_id']}"
        for method, tail, query, headers, body, status, expected in [
                ("GET", "", "", seat, None, 200, PRIVATE),
                ("GET", "", "legal=true", None, None, 200, PRIVATE),
                ("GET", "", "", {**seat, "If-None-Match": '"0"'}, None, 304, PRIVATE),
                ("GET", "/legal-moves", "", seat, None, 200, NO_STORE),
                ("GET", "/legal-moves", "seat=0", admin, None, 200, NO_STORE),
                ("GET", "/events", "after=-1", seat, None, 200, NO_STORE),
                ("GET", "/events", "after=0&wait=0.01", None, None, 200, NO_STORE),
                ("GET", "/record", "", admin, None, 200, PRIVATE),
                ("POST", "/moves", "", seat, MOVE, 200, PRIVATE)]:
            got = _call(wsgi, method, path + tail, query, body, {"Origin": "https://a.example", **(headers or {})})
            assert got[0].startswith(str(status)), (tail, query, got)
            assert [h for h in got[1] if h[0] in ("Cache-Control", "Vary")] == sorted(expected + origin), (tail, got)
            assert any(name == "ETag" for name, _ in got[1]) == (expected is PRIVATE and tail != "/record"), tail
