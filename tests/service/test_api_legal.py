"""``?legal=true`` (api.md "Legal moves", 1.1): ``legal_moves`` beside the
view on GET match, on POST moves and on the stream's messages that carry
``state``.

For every game and every viewer: a seat gets its own moves while it is in
``to_act`` (exactly what ``/legal-moves`` lists), the admin every seat in
``to_act``, a spectator ``{}``; the rest of the body is the body without
``legal``.  On POST moves the moves are those at the response's version (for
the admin: of the seats to act next), so a whole match can be played with one
request per move.  304/ETag and the idempotent replays stay as they were: a
replay answers the first response with the legal moves at its version.
"""
from __future__ import annotations

import json
import random
from typing import Any

import pytest

from engine import REGISTRY
from service.app import create_app
from service.ops.config import Settings
from tests import conftest
from tests.conftest import flask_api
from tests.http_helpers import W1_MOVES, W1_OPTIONS, Api, Match, Resp, assert_problem, strip_label
from tests.service.test_api_all_games import _short_options
from tests.stream_helpers import messages, sse_frames

GAMES = [g.id for g in REGISTRY]
#: Moves after which every viewer is checked on every version (then only at the end; ``--fast``: fewer).
CHECKED_MOVES = 10 if conftest.FAST else 25


def _catalogue_options(api: Api, game: str) -> dict[str, Any]:
    entry = api.get(f"/v1/games/{game}").json
    return _short_options(entry)


def _viewers(m: Match) -> list[tuple[str, str | None]]:
    return [("spectator", None), *((f"seat{s}", m.token(s)) for s in range(m.n)), ("admin", m.admin)]


def _with_legal(api: Api, m: Match, token: str | None) -> dict[str, Any]:
    r = api.get(f"/v1/matches/{m.id}", token=token, params={"legal": "true"})
    assert r.status == 200, r
    return r.json


def _expected(m: Match, name: str, to_act: list[int], finished: bool) -> dict[str, list[dict[str, Any]]]:
    """What ``legal_moves`` must be for viewer ``name``: from ``/legal-moves``."""
    if name == "spectator" or finished:
        return {}
    seats = to_act if name == "admin" else [s for s in to_act if f"seat{s}" == name]
    return {str(s): m.legal(s) for s in seats}


def _check_every_viewer(api: Api, m: Match) -> dict[str, Any]:
    """GET ?legal=true for every viewer equals the plain view plus the
    viewer's own legal moves; returns the admin's body."""
    admin: dict[str, Any] = {}
    for name, token in _viewers(m):
        body = _with_legal(api, m, token)
        legal = body.pop("legal_moves")
        plain = api.view(m.id, token).json
        assert body == plain, name
        assert legal == _expected(m, name, plain["to_act"], plain["status"] == "finished"), name
        if name.startswith("seat"):
            assert set(legal) <= {name[4:]}, f"{name} sees another seat's moves: {sorted(legal)}"
        if name == "admin":
            admin = {**body, "legal_moves": legal}
    return admin


@pytest.mark.parametrize("game", GAMES)
def test_one_request_per_move_every_game_every_viewer(embedded_api: Api, game: str):
    """A whole random match played by the admin from the POST bodies' own
    ``legal_moves`` only; every viewer checked on the first versions and at the end."""
    api = embedded_api
    m = api.create(3, game=game, seed=2026, options=_catalogue_options(api, game))
    rng = random.Random(game)
    body = _check_every_viewer(api, m)
    legal = body["legal_moves"]
    version = 0
    while legal:
        seat = rng.choice(sorted(legal, key=int))
        move = rng.choice(legal[seat])
        r = api.post(f"/v1/matches/{m.id}/moves", {"move": move, "version": version}, token=m.admin,
                     params={"seat": seat, "legal": "true"})
        assert r.status == 200, (move, r)
        version += 1
        assert r.json["version"] == version and r.header("etag") == f'"{version}"'
        legal = r.json["legal_moves"]
        state = r.json["state"]
        assert sorted(legal, key=int) == [str(s) for s in state["to_act"]] or state["status"] == "finished"
        if version <= CHECKED_MOVES:
            admin = _check_every_viewer(api, m)
            assert admin["legal_moves"] == legal and admin == {**state, "legal_moves": legal}
        assert version < 5000, "match not finished"
    assert r.json["state"]["status"] == "finished"
    assert _check_every_viewer(api, m)["legal_moves"] == {}


@pytest.mark.parametrize("game", GAMES)
def test_a_seat_gets_its_own_moves_after_its_move(embedded_api: Api, game: str):
    """Seat bots: each POST (seat token) answers the mover's own moves at the
    new version (``{}`` when another seat is to act), which equal its
    ``/legal-moves`` then; the body is the body without ``legal`` plus them."""
    api = embedded_api
    m = api.create(2, game=game, seed=7, options=_catalogue_options(api, game))
    rng = random.Random(7)
    for _ in range(CHECKED_MOVES):
        view = m.admin_view()
        if view["status"] == "finished":
            break
        seat = view["to_act"][0]
        move = rng.choice(m.legal(seat))
        key = f"k{view['version']}"
        r = api.post(f"/v1/matches/{m.id}/moves", {"move": move, "version": view["version"]}, token=m.token(seat),
                     params={"legal": "true"}, headers={"Idempotency-Key": key})
        assert r.status == 200, r
        body = r.json
        legal = body.pop("legal_moves")
        assert legal == _expected(m, f"seat{seat}", body["state"]["to_act"], body["state"]["status"] == "finished")
        # the same request replayed without legal: the same first response, minus legal_moves
        again = api.post(f"/v1/matches/{m.id}/moves", {"move": move, "version": view["version"]},
                         token=m.token(seat), headers={"Idempotency-Key": key})
        assert again.status == 200 and again.json == body
        m.log.append((seat, strip_label(move)))


def _move(api: Api, m: Match, seat: int, move: dict[str, Any], *, key: str | None = None,
          legal: bool = True, version: int | None = None, admin: bool = False) -> Resp:
    params: dict[str, Any] = {"legal": "true"} if legal else {}
    body: dict[str, Any] = {"move": move}
    if version is not None:
        body["version"] = version
    if admin:
        params["seat"] = seat
    return api.post(f"/v1/matches/{m.id}/moves", body, token=m.admin if admin else m.token(seat), params=params,
                    headers={"Idempotency-Key": key} if key else None)


@pytest.mark.parametrize("with_version", [True, False])
def test_idempotent_replay_is_the_first_response_with_its_legal_moves(api: Api, with_version: bool):
    """A replay (stored record, whether the move would still be legal or not)
    answers byte for byte the first response, legal moves at its version
    included, although the match has moved on; ``legal`` is not part of what
    the key must repeat: a retry without it gets the same body without them."""
    m = api.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    seat, mv = W1_MOVES[0]
    first = _move(api, m, seat, mv, key="k1", version=0 if with_version else None)
    assert first.status == 200 and first.json["legal_moves"] == {}  # seat 1 acts next
    first_admin = _move(api, m, 1, W1_MOVES[1][1], key="k2", admin=True, version=1 if with_version else None)
    assert first_admin.status == 200 and list(first_admin.json["legal_moves"]) == ["1"]
    m.play(*W1_MOVES[2])  # the match moves on
    replay = _move(api, m, seat, mv, key="k1", version=0 if with_version else None)
    assert replay.status == 200 and replay.body == first.body
    replay_admin = _move(api, m, 1, W1_MOVES[1][1], key="k2", admin=True, version=1 if with_version else None)
    assert replay_admin.status == 200 and replay_admin.body == first_admin.body
    plain = _move(api, m, 1, W1_MOVES[1][1], key="k2", admin=True, legal=False,
                  version=1 if with_version else None)
    assert plain.status == 200 and plain.json == {k: v for k, v in first_admin.json.items() if k != "legal_moves"}
    # a request first sent without legal, retried with it: the first body plus the moves at its version
    bare = _move(api, m, 1, W1_MOVES[3][1], key="k4", legal=False, admin=True, version=3 if with_version else None)
    assert bare.status == 200 and "legal_moves" not in bare.json
    at_its_version = m.legal(0)
    m.play(*W1_MOVES[4])  # the match moves on again
    retried = _move(api, m, 1, W1_MOVES[3][1], key="k4", admin=True, version=3 if with_version else None)
    assert retried.status == 200
    assert retried.json == {**bare.json, "legal_moves": {"0": at_its_version}}
    assert m.legal(0) != at_its_version
    # and the key still refuses another request, legal or not
    assert_problem(_move(api, m, 1, {"type": "draw"}, key="k4", admin=True), 422, "idempotency_key_reused")


def test_etag_and_304_unaffected(api: Api):
    m = api.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    plain = api.view(m.id, m.token(0))
    with_legal = api.get(f"/v1/matches/{m.id}", token=m.token(0), params={"legal": "true"})
    assert plain.header("etag") == with_legal.header("etag") == '"0"'
    assert plain.header("vary") == with_legal.header("vary")
    assert plain.header("cache-control") == with_legal.header("cache-control")
    not_modified = api.get(f"/v1/matches/{m.id}", token=m.token(0), params={"legal": "true"},
                           headers={"If-None-Match": '"0"'})
    assert not_modified.status == 304 and not_modified.body == b"" and not_modified.header("etag") == '"0"'
    m.play(*W1_MOVES[0])
    changed = api.get(f"/v1/matches/{m.id}", token=m.token(1), params={"legal": "true"},
                      headers={"If-None-Match": '"0"'})
    assert changed.status == 200 and changed.header("etag") == '"1"'
    assert changed.json["legal_moves"] == {"1": m.legal(1)}


@pytest.mark.parametrize("value", ["false", "0", None])
def test_without_legal_no_legal_moves(api: Api, value: str | None):
    m = api.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    params = {"legal": value}
    view = api.get(f"/v1/matches/{m.id}", token=m.admin, params=params)
    assert view.status == 200 and "legal_moves" not in view.json
    seat, mv = W1_MOVES[0]
    moved = api.post(f"/v1/matches/{m.id}/moves", {"move": mv}, token=m.token(seat), params=params)
    assert moved.status == 200 and set(moved.json) == {"version", "events", "state"}


def test_bad_legal_value_is_400(api: Api):
    m = api.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    for r in (api.get(f"/v1/matches/{m.id}", params={"legal": "maybe"}),
              api.post(f"/v1/matches/{m.id}/moves", {"move": W1_MOVES[0][1]}, token=m.token(0),
                       params={"legal": "maybe"})):
        body = assert_problem(r, 400, "invalid_request")
        assert body["errors"] == {"legal": ["Not a valid boolean."]}
    assert m.admin_view()["version"] == 0  # nothing applied


def test_errors_unchanged_by_legal(api: Api):
    """The move checks come first: a refused move with ``legal`` is the same problem."""
    m = api.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    for legal in (False, True):
        assert_problem(_move(api, m, 1, {"type": "draw"}, legal=legal), 409, "not_your_turn")
        assert_problem(_move(api, m, 0, {"type": "fly"}, legal=legal), 422, "illegal_move")
        assert_problem(_move(api, m, 0, W1_MOVES[0][1], legal=legal, version=5), 409, "version_conflict")


# --------------------------------------------------------------------------
# The stream.
# --------------------------------------------------------------------------
@pytest.fixture
def sapp(store: Any):
    settings = Settings.from_env({"STREAM_KEEPALIVE": "0.05", "NOTIFY_SAFETY": "30", "STREAM_MAX": "30",
                                  "RATE_LIMIT_ENABLED": "false", "MAX_WAITS_PER_CLIENT": "0"})
    app = create_app(redis_client=store, settings=settings)
    app.config["TESTING"] = True
    return app


def _stream(app: Any, mid: str, token: str | None, params: dict[str, str], count: int) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = app.test_client().get(f"/v1/matches/{mid}/stream", headers=headers, query_string=params,
                                     buffered=False)
    try:
        assert response.status_code == 200
        return [f.data for f in messages(sse_frames(iter(response.response)), count)]
    finally:
        response.close()


def test_stream_legal_moves_beside_state(sapp: Any):
    api = flask_api(sapp)
    m = api.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    for seat, mv in W1_MOVES[:2]:
        m.play(seat, mv)
    for name, token in _viewers(m):
        got = _stream(sapp, m.id, token, {"state": "true", "legal": "true"}, 3)
        assert ["legal_moves" in d for d in got] == ["state" in d for d in got] == [False, False, True], name
        assert got[-1]["legal_moves"] == _with_legal(api, m, token)["legal_moves"], name
        assert got[-1]["state"] == api.view(m.id, token).json, name
        plain = _stream(sapp, m.id, token, {"state": "true"}, 3)
        assert [{k: v for k, v in d.items() if k != "legal_moves"} for d in got] == plain
        no_state = _stream(sapp, m.id, token, {"legal": "true"}, 3)  # legal_moves go with state only
        assert all(set(d) == {"version", "events"} for d in no_state)


def test_stream_bad_legal_value_is_400(sapp: Any):
    api = flask_api(sapp)
    m = api.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    r = api.get(f"/v1/matches/{m.id}/stream", params={"legal": "maybe"})
    assert assert_problem(r, 400, "invalid_request")["errors"] == {"legal": ["Not a valid boolean."]}


# --------------------------------------------------------------------------
# The document.
# --------------------------------------------------------------------------
def test_document_names_legal_and_legal_moves():
    from pathlib import Path

    doc = json.loads((Path(__file__).parents[2] / "openapi" / "openapi.json").read_text())
    for path, method in (("/v1/matches/{match_id}", "get"), ("/v1/matches/{match_id}/moves", "post"),
                         ("/v1/matches/{match_id}/stream", "get")):
        params = {p["name"]: p for p in doc["paths"][path][method]["parameters"] if p["in"] == "query"}
        assert params["legal"]["schema"] == {"type": "boolean", "default": False}, path
    ref = {"$ref": "#/components/schemas/LegalMovesBySeat"}
    assert doc["components"]["schemas"]["MoveResult"]["properties"]["legal_moves"] == ref
    for variant in doc["components"]["schemas"]["View"]["oneOf"]:
        view = doc["components"]["schemas"][variant["$ref"].rsplit("/", 1)[1]]
        assert view["properties"]["legal_moves"]["allOf"] == [ref] and "legal_moves" not in view["required"]
    assert doc["components"]["schemas"]["LegalMovesBySeat"]["additionalProperties"]["items"] == \
        doc["components"]["schemas"]["LegalMoves"]["properties"]["moves"]["items"]
