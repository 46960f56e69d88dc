"""Seats (api.md "Create" 1.1, "Seats, invites and the lobby"): player
objects, open and bot seats, `public`, `clock`, invites, claiming, the seat
table; both stores (and the cluster: see conftest's CLUSTER_MODULES)."""
from __future__ import annotations

import pytest

from tests.http_helpers import Api, assert_problem


def _create(api: Api, players, **extra):
    return api.create_raw({"game": "biberbande", "players": players, "seed": 42, **extra})


# --------------------------------------------------------------------------
# Create with player objects.
# --------------------------------------------------------------------------
def test_create_with_player_objects_201(api: Api):
    """An open seat and a bot seat get no token; the 201 adds the invite."""
    r = _create(api, ["ana", {"name": "bo", "open": True}, {"name": "Bobo", "bot": "heuristic"},
                      {"name": "cy"}])
    assert r.status == 201, r
    b = r.json
    assert b["seats"][0]["name"] == "ana" and isinstance(b["seats"][0]["token"], str)
    assert b["seats"][1] == {"seat": 1, "name": "bo", "open": True}
    assert b["seats"][2] == {"seat": 2, "name": "Bobo", "bot": "heuristic"}
    assert set(b["seats"][3]) == {"seat", "name", "token"} and b["seats"][3]["name"] == "cy"
    assert isinstance(b["invite"], str) and len(b["invite"]) >= 40
    assert [p["name"] for p in b["state"]["players"]] == ["ana", "bo", "Bobo", "cy"]


def test_create_without_open_seat_has_no_invite(api: Api):
    r = _create(api, ["ana", {"name": "bo"}, {"name": "rb", "bot": "random"}])
    assert r.status == 201, r
    assert "invite" not in r.json
    assert r.json["seats"][1] == {"seat": 1, "name": "bo", "token": r.json["seats"][1]["token"]}


def test_create_only_bots_is_allowed(api: Api):
    r = _create(api, [{"name": "a", "bot": "random"}, {"name": "b", "bot": "heuristic"}])
    assert r.status == 201, r
    assert all("token" not in s for s in r.json["seats"])


def test_create_count_and_strings_unchanged(api: Api):
    r = _create(api, 3)
    assert r.status == 201, r
    assert [set(s) for s in r.json["seats"]] == [{"seat", "name", "token"}] * 3
    assert "invite" not in r.json


@pytest.mark.parametrize("players, words", [
    (["ana", {"name": "bo", "bot": "clever"}], "known bots: random, heuristic"),
    (["ana", {"name": "bo", "bot": 3}], "known bots: random, heuristic"),
    (["ana", {"name": "bo", "open": True, "bot": "random"}], "not both"),
    (["ana", {"name": "bo", "open": "yes"}], "'open' must be true or false"),
    (["ana", {"open": True}], "needs a 'name'"),
    (["ana", {"name": 7}], "needs a 'name'"),
    (["ana", {"name": "bo", "colour": "red"}], "'colour' is not one of them"),
    (["ana", {"name": "ana", "open": True}], "'ana' is given twice"),
    (["ana", {"name": " ", "open": True}], "not blank"),
    (["ana", {"name": "b\no", "bot": "random"}], "control character"),
    (["ana", 5], "player count"),
    ([{"name": "solo", "open": True}], "2…6 players"),
])
def test_create_bad_player_objects_422(api: Api, players, words):
    body = assert_problem(_create(api, players), 422, "invalid_options")
    assert words in body["detail"], body


@pytest.mark.parametrize("clock", [{"per_move_ms": 999}, {"per_move_ms": 86_400_001}, {"per_move_ms": "30000"},
                                   {"per_move_ms": True}, {"per_move_ms": 1.5}, {}, {"per_move_ms": 5000, "x": 1},
                                   30000, "fast"])
def test_create_bad_clock_422(api: Api, clock):
    body = assert_problem(_create(api, 2, clock=clock), 422, "invalid_options")
    assert "clock" in body["detail"], body


@pytest.mark.parametrize("public", ["true", 1, [], {}])
def test_create_bad_public_422(api: Api, public):
    body = assert_problem(_create(api, 2, public=public), 422, "invalid_options")
    assert "public must be true or false" in body["detail"], body


@pytest.mark.parametrize("ms", [1_000, 30_000, 86_400_000])
def test_create_clock_goes_into_the_record(api: Api, ms):
    r = _create(api, 2, clock={"per_move_ms": ms}, public=False)
    assert r.status == 201, r
    rec = api.record(r.json["match_id"], r.json["admin_token"])
    assert rec.status == 200, rec
    assert rec.json["clock"] == {"per_move_ms": ms}


def test_record_without_clock_has_no_clock(api: Api):
    r = _create(api, 2, clock=None, public=None)
    assert r.status == 201, r
    rec = api.record(r.json["match_id"], r.json["admin_token"])
    assert "clock" not in rec.json, rec


def test_create_public_with_open_seat_201(api: Api):
    r = _create(api, ["ana", {"name": "bo", "open": True}], public=True)
    assert r.status == 201, r
    assert "invite" in r.json


def test_old_stored_meta_loads_with_defaults():
    """A meta written before seats had kinds: all token seats, no bots,
    no clock, not public, no invite."""
    import orjson

    from service.store import Meta

    old = orjson.dumps({"game": "biberbande", "players": ["a", "b"], "seed": 1, "options": {},
                        "admin": "x" * 64, "seats": ["y" * 64, "z" * 64], "created": 1.5})
    meta = Meta.from_json("abcdefghijklmnop", old)
    assert meta.kinds == ["token", "token"] and meta.bots == [None, None]
    assert meta.clock_ms is None and meta.public is False and meta.invite_hash is None
    assert Meta.from_json("abcdefghijklmnop", meta.to_json()) == meta
