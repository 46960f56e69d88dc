"""The hot paths (service/routes/hot.py) answer exactly as the Flask routes.

Each request is sent twice, to two matches created alike (same seed): once
through the app (the dispatcher in front) and once to the Flask app behind it
directly; status, headers and body must be equal, for the plain requests the
dispatcher answers and for the odd ones it hands to Flask.
"""
from __future__ import annotations

import io
import json
from typing import Any

import fakeredis
import pytest

from service.app import create_app
from service.config import Settings
from service.routes.hot import HotPaths
from tests.http_helpers import W1_MOVES, W1_OPTIONS

SETTINGS = {"RATE_LIMIT_ENABLED": "false", "MAX_WAITS_PER_CLIENT": "0"}


def _app(env: dict[str, str] | None = None) -> Any:
    app = create_app(fakeredis.FakeRedis(), settings=Settings.from_env({**SETTINGS, **(env or {})}))
    app.config["TESTING"] = True
    return app


def _call(wsgi: Any, method: str, path: str, query: str = "", body: bytes | None = None,
          headers: dict[str, str] | None = None) -> tuple[str, dict[str, str], bytes]:
    env: dict[str, Any] = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query,
                           "SERVER_NAME": "localhost", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
                           "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body or b""),
                           "wsgi.errors": io.StringIO()}
    if body is not None:
        env["CONTENT_LENGTH"] = str(len(body))
        env["CONTENT_TYPE"] = "application/json"
    for name, value in (headers or {}).items():
        key = name.upper().replace("-", "_")
        env[key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else "HTTP_" + key] = value
    out: dict[str, Any] = {}

    def start_response(status: str, response_headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        out["status"], out["headers"] = status, dict(response_headers)

    data = b"".join(wsgi(env, start_response))
    return out["status"], out["headers"], data


def _pair() -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The app and two matches created alike (tokens differ, ids differ)."""
    app = _app()
    body = json.dumps({"game": "biberbande", "players": ["ana", "bo"], "seed": 11, "options": W1_OPTIONS}).encode()
    a = json.loads(_call(app.wsgi_app, "POST", "/v1/matches", body=body)[2])
    b = json.loads(_call(app.wsgi_app, "POST", "/v1/matches", body=body)[2])
    return app, a, b


def _same(app: Any, a: dict[str, Any], b: dict[str, Any], method: str, tail: str, query: str = "",
          body: bytes | None = None, headers: dict[str, str] | None = None, who: str | int | None = 0) -> None:
    """The request on match a through the dispatcher equals it on match b through Flask alone."""
    assert isinstance(app.wsgi_app, HotPaths)

    def token(m: dict[str, Any]) -> dict[str, str]:
        if who is None:
            return {}
        t = m["admin_token"] if who == "admin" else m["seats"][int(who)]["token"]
        return {"Authorization": f"Bearer {t}"}

    hot = _call(app.wsgi_app, method, f"/v1/matches/{a['match_id']}{tail}", query, body,
                {**token(a), **(headers or {})})
    flask = _call(app.wsgi_app.flask_app, method, f"/v1/matches/{b['match_id']}{tail}", query, body,
                  {**token(b), **(headers or {})})
    swap = (b["match_id"].encode(), a["match_id"].encode())
    assert hot[0] == flask[0], (hot, flask)
    assert hot[1] == flask[1], (hot[1], flask[1])
    assert hot[2] == flask[2].replace(*swap), (hot[2][:300], flask[2][:300])


MOVE = json.dumps({"move": W1_MOVES[0][1], "version": 0}).encode()


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
    ("POST", "/moves", "", b"[1, 2]", None, 0),                                  # Flask 400
    ("POST", "/moves", "", b"{not json", None, 0),                               # Flask 400
    ("POST", "/moves", "", MOVE, {"If-Match": '"0"'}, 0),                        # Flask
    ("POST", "/moves", "", MOVE, {"Idempotency-Key": "bad key"}, 0),             # Flask 400
    ("POST", "/moves", "", MOVE, {"Content-Type": "text/plain"}, 0),             # Flask (bodies.py)
    ("POST", "/moves", "", MOVE, None, None),                                    # 401
    ("POST", "/moves", "seat=5", MOVE, None, "admin"),                           # 400 seat range
])
def test_dispatcher_answers_as_flask(method: str, tail: str, query: str, body: bytes | None,
                                     headers: dict[str, str] | None, who: str | int | None):
    app, a, b = _pair()
    _same(app, a, b, method, tail, query, body, headers, who)


def test_unknown_match_and_other_paths_as_flask():
    app = _app()
    for path in ("/v1/matches/aaaaaaaaaaaaaaaa", "/v1/matches/aaaaaaaaaaaaaaaa/moves", "/v1/matches/x",
                 "/v1/matches/aaaaaaaaaaaaaaaa/", "/v1/matches/aaaaaaaaaaaaaaaa/legal-moves"):
        for method in ("GET", "POST", "DELETE"):
            body = MOVE if method == "POST" else None
            flask = _call(app.wsgi_app.flask_app, method, path, body=body)
            assert _call(app.wsgi_app, method, path, body=body) == flask, (method, path)


@pytest.mark.parametrize("env", [{"RATE_LIMIT_ENABLED": "true"}, {"CORS_ORIGINS": "https://a.example"}])
def test_stands_aside_with_rate_limits_or_listed_origins(env: dict[str, str]):
    assert not isinstance(_app(env).wsgi_app, HotPaths)
