"""Seats (api.md "Create" 1.1, "Seats, invites and the lobby"): player
objects, open and bot seats, `public`, `clock`, invites, claiming, the seat
table; both stores (and the cluster: see conftest's CLUSTER_MODULES)."""
from __future__ import annotations

import json

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

    from service.store.store import Meta

    old = orjson.dumps({"game": "biberbande", "players": ["a", "b"], "seed": 1, "options": {},
                        "admin": "x" * 64, "seats": ["y" * 64, "z" * 64], "created": 1.5})
    meta = Meta.from_json("abcdefghijklmnop", old)
    assert meta.kinds == ["token", "token"] and meta.bots == [None, None]
    assert meta.clock_ms is None and meta.public is False and meta.invite_hash is None
    assert Meta.from_json("abcdefghijklmnop", meta.to_json()) == meta


# --------------------------------------------------------------------------
# Claiming.
# --------------------------------------------------------------------------
def _open_match(api: Api, *, public: bool = False, options=None, players=None):
    body = {"game": "biberbande", "seed": 42, "public": public,
            "players": players or ["ana", {"name": "bo", "open": True}, {"name": "Bobo", "bot": "heuristic"}]}
    if options is not None:
        body["options"] = options
    r = api.create_raw(body)
    assert r.status == 201, r
    return r.json


def _claim(api: Api, match_id: str, seat: int, invite=None, **kw):
    body = {} if invite is None else {"invite": invite}
    return api.post(f"/v1/matches/{match_id}/seats/{seat}", body, **kw)


def test_claim_with_the_invite_201(api: Api):
    """The claim's 201 carries the seat's token and that seat's view; the
    token acts for the seat at once; the version does not change."""
    c = _open_match(api)
    r = _claim(api, c["match_id"], 1, c["invite"])
    assert r.status == 201, r
    b = r.json
    assert set(b) == {"match_id", "seat", "name", "token", "state"}
    assert (b["match_id"], b["seat"], b["name"]) == (c["match_id"], 1, "bo")
    assert b["token"].startswith(c["match_id"] + ".")
    assert b["state"]["viewer"] == {"role": "seat", "seat": 1}
    assert b["state"]["version"] == 0 and r.header("etag") == '"0"'
    assert r.header("location").endswith(f"/v1/matches/{c['match_id']}")
    mine = api.view(c["match_id"], b["token"])
    assert mine.status == 200 and mine.json["viewer"] == {"role": "seat", "seat": 1}
    assert mine.json == b["state"], "the 201's state is the seat's view"
    assert api.legal(c["match_id"], b["token"]).status == 200
    assert api.view(c["match_id"], c["admin_token"]).json["version"] == 0


def test_claimed_seat_plays(api: Api):
    c = _open_match(api, players=[{"name": "ana", "open": True}, "bo"])
    token = _claim(api, c["match_id"], 0, c["invite"]).json["token"]
    move = api.legal(c["match_id"], token).json["moves"][0]
    r = api.move(c["match_id"], token, move, 0)
    assert r.status == 200, r
    assert r.json["version"] == 1


@pytest.mark.parametrize("invite", [None, "", "x" * 43, "wrong"])
def test_claim_without_the_right_invite_403(api: Api, invite):
    c = _open_match(api)
    body = assert_problem(_claim(api, c["match_id"], 1, invite), 403, "forbidden")
    assert c["invite"] not in body["detail"]
    assert api.get(f"/v1/matches/{c['match_id']}/seats").json["seats"][1]["kind"] == "open"


def test_claim_another_matchs_invite_403(api: Api):
    a, b = _open_match(api), _open_match(api)
    assert_problem(_claim(api, a["match_id"], 1, b["invite"]), 403, "forbidden")


def test_claim_of_a_match_without_invite_403(api: Api):
    m = api.create(2)
    body = assert_problem(_claim(api, m.id, 1, "anything"), 403, "forbidden")
    assert "no invite" in body["detail"]


def test_public_match_claims_without_invite(api: Api):
    c = _open_match(api, public=True)
    r = api.request("POST", f"/v1/matches/{c['match_id']}/seats/1")  # no body at all
    assert r.status == 201, r
    assert r.json["seat"] == 1


def test_claim_body_as_text_plain_is_read_as_json(api: Api):
    c = _open_match(api)
    r = api.request("POST", f"/v1/matches/{c['match_id']}/seats/1",
                    data=json.dumps({"invite": c["invite"]}), content_type="text/plain")
    assert r.status == 201, r


@pytest.mark.parametrize("body", ['{"invite": 5}', '{"invite": "a", "x": 1}', "[1]", "not json"])
def test_claim_bad_body_400(api: Api, body):
    c = _open_match(api)
    assert_problem(api.request("POST", f"/v1/matches/{c['match_id']}/seats/1", data=body), 400, "invalid_request")


@pytest.mark.parametrize("seat, words", [(0, "token seat"), (2, "bot seat"), (3, "no seat 3"),
                                         (99, "no seat 99")])
def test_claim_a_seat_that_is_not_open_409(api: Api, seat, words):
    c = _open_match(api)
    body = assert_problem(_claim(api, c["match_id"], seat, c["invite"]), 409, "seat_taken")
    assert words in body["detail"], body


def test_claim_twice_409(api: Api):
    c = _open_match(api)
    assert _claim(api, c["match_id"], 1, c["invite"]).status == 201
    body = assert_problem(_claim(api, c["match_id"], 1, c["invite"]), 409, "seat_taken")
    assert "claimed seat" in body["detail"]


def test_claim_unknown_match_404(api: Api):
    assert_problem(_claim(api, "aaaaaaaaaaaaaaaa", 0, "x"), 404, "match_not_found")
    assert_problem(_claim(api, "NOT-AN-ID", 0, "x"), 404, "match_not_found")


def test_claim_of_a_finished_match_409(api: Api):
    from tests.http_helpers import W1_MOVES, W1_OPTIONS

    c = _open_match(api, options=W1_OPTIONS, players=["ana", {"name": "bo", "open": True}])
    for seat, move in W1_MOVES:
        assert api.move(c["match_id"], c["admin_token"], move, seat=seat).status == 200
    assert api.view(c["match_id"]).json["status"] == "finished"
    assert_problem(_claim(api, c["match_id"], 1, c["invite"]), 409, "match_finished")


def test_open_seat_waits_for_its_claimant(api: Api):
    """The game starts at creation: the open seat is to act, nobody can act
    for it but the admin, and claiming changes no version."""
    c = _open_match(api, players=[{"name": "ana", "open": True}, "bo"])
    view = api.view(c["match_id"], c["seats"][1]["token"]).json
    assert view["to_act"] == [0]
    assert_problem(api.legal(c["match_id"], c["seats"][1]["token"], seat=0), 403, "forbidden")
    before = api.events(c["match_id"], c["admin_token"]).json
    token = _claim(api, c["match_id"], 0, c["invite"]).json["token"]
    assert api.events(c["match_id"], c["admin_token"]).json == before
    assert api.legal(c["match_id"], token).json["moves"]


# --------------------------------------------------------------------------
# The seat table.
# --------------------------------------------------------------------------
def test_seats_table(api: Api):
    c = _open_match(api, players=["ana", {"name": "bo", "open": True}, {"name": "rb", "bot": "random"},
                                  {"name": "cy", "open": True}])
    r = api.get(f"/v1/matches/{c['match_id']}/seats")
    assert r.status == 200, r
    assert r.json == {"seats": [{"seat": 0, "name": "ana", "kind": "token"},
                                {"seat": 1, "name": "bo", "kind": "open"},
                                {"seat": 2, "name": "rb", "kind": "bot", "bot": "random"},
                                {"seat": 3, "name": "cy", "kind": "open"}]}
    _claim(api, c["match_id"], 3, c["invite"])
    kinds = [s["kind"] for s in api.get(f"/v1/matches/{c['match_id']}/seats").json["seats"]]
    assert kinds == ["token", "open", "bot", "claimed"]


def test_seats_of_an_old_style_match_are_token_seats(api: Api):
    m = api.create(3)
    assert [s["kind"] for s in api.get(f"/v1/matches/{m.id}/seats").json["seats"]] == ["token"] * 3


def test_seats_unknown_match_404(api: Api):
    assert_problem(api.get("/v1/matches/aaaaaaaaaaaaaaaa/seats"), 404, "match_not_found")


# --------------------------------------------------------------------------
# Several instances on one store: races and caches.
# --------------------------------------------------------------------------
def _instances(url: str, n: int, cluster: bool = False) -> list[Api]:
    """``n`` app instances, each with its own client (and so its own caches) on one store."""
    import redis

    from tests.conftest import flask_api, make_app

    def client():
        return redis.RedisCluster.from_url(url) if cluster else redis.Redis.from_url(url)

    return [flask_api(make_app(client())) for _ in range(n)]


@pytest.fixture
def redis_instances(redis_server) -> list[Api]:
    import redis

    redis.Redis.from_url(redis_server).flushdb()
    return _instances(redis_server, 8)


@pytest.fixture
def cluster_instances(redis_cluster) -> list[Api]:
    import redis

    c = redis.RedisCluster.from_url(redis_cluster.url)
    c.flushall()
    c.close()
    return _instances(redis_cluster.url, 6, cluster=True)


def _race_claims(apis: list[Api], match_id: str, seat: int, invite: str):
    import threading

    barrier = threading.Barrier(len(apis))
    results: list = [None] * len(apis)

    def go(i: int) -> None:
        barrier.wait()
        results[i] = _claim(apis[i], match_id, seat, invite)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(apis))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


@pytest.mark.process
@pytest.mark.parametrize("where", ["redis_instances", "cluster_instances"])
def test_racing_claims_one_201_the_rest_409(where, request):
    """Clients racing for one seat through different instances: exactly one
    201, every other one 409 seat_taken; the winner's token is the seat's."""
    apis = request.getfixturevalue(where)
    for round_ in range(3):
        c = _open_match(apis[0])
        for a in apis:  # every instance has the meta cached with the seat open
            assert a.get(f"/v1/matches/{c['match_id']}/seats").status == 200
            assert a.view(c["match_id"], c["admin_token"]).status == 200
        results = _race_claims(apis, c["match_id"], 1, c["invite"])
        assert sorted(r.status for r in results) == [201] + [409] * (len(apis) - 1), (round_, results)
        assert all(r.json["code"] == "seat_taken" for r in results if r.status == 409)
        token = next(r.json["token"] for r in results if r.status == 201)
        for a in apis:
            assert a.view(c["match_id"], token).json["viewer"] == {"role": "seat", "seat": 1}
        losers = [r for r in results if r.status == 409]
        assert all("token" not in r.json for r in losers)


@pytest.mark.process
@pytest.mark.parametrize("where", ["redis_instances", "cluster_instances"])
def test_a_claim_is_seen_by_every_instance_at_once(where, request):
    """Instance B has the match cached with the seat open; A claims it: on
    B the token works at once (view, legal moves, a move, events), B's seat
    table shows it claimed and B refuses a second claim."""
    a, b = request.getfixturevalue(where)[:2]
    c = _open_match(a, players=[{"name": "ana", "open": True}, "bo"])
    mid = c["match_id"]
    assert b.view(mid, c["seats"][1]["token"]).status == 200  # B caches the meta
    assert b.get(f"/v1/matches/{mid}/seats").json["seats"][0]["kind"] == "open"
    token = _claim(a, mid, 0, c["invite"]).json["token"]
    assert b.view(mid, token).json["viewer"] == {"role": "seat", "seat": 0}
    assert b.events(mid, token).status == 200
    move = b.legal(mid, token).json["moves"][0]
    assert b.move(mid, token, move, 0).status == 200
    assert b.get(f"/v1/matches/{mid}/seats").json["seats"][0]["kind"] == "claimed"
    assert_problem(_claim(b, mid, 0, c["invite"]), 409, "seat_taken")
    # a claimed token of this match, shown to another match on B: 403 (not 401)
    other = b.create(2)
    assert_problem(b.view(other.id, token), 403, "forbidden")


def test_unknown_tokens_stay_401_on_a_match_with_open_seats(api: Api):
    c = _open_match(api)
    mid = c["match_id"]
    assert_problem(api.view(mid, mid + "." + "A" * 43), 401, "unauthenticated")
    assert_problem(api.view(mid, "junk"), 401, "unauthenticated")


# --------------------------------------------------------------------------
# Leaks: an open seat is nobody's until claimed; the invite is shown once.
# --------------------------------------------------------------------------
def test_an_open_seats_view_is_nobodys_before_it_is_claimed(api: Api):
    """Before the claim hands out its token, nobody but the admin sees what
    open seat 1 may see (its `known` cards, BB-5.6), and nobody can act for
    it; the claim's 201 is the first to show it."""
    c = _open_match(api, players=["ana", {"name": "bo", "open": True}])
    mid = c["match_id"]
    for token in (None, c["seats"][0]["token"]):
        seen = api.view(mid, token).json["players"][1]
        assert seen["display"] == [None] * 4 and not any(seen.get("known") or []), seen
        assert_problem(api.legal(mid, token, seat=1), 401 if token is None else 403)
        assert_problem(api.move(mid, token, {"type": "draw"}, seat=1), 401 if token is None else 403)
    assert c["state"]["players"][1]["display"] == [None] * 4 and not any(c["state"]["players"][1].get("known") or [])
    claimed = _claim(api, mid, 1, c["invite"]).json
    assert any(claimed["state"]["players"][1]["known"]), "seat 1 has seen two of its cards (BB-5.6)"


def test_the_invite_appears_only_in_the_create_response(store, api: Api, caplog):
    """Not in the claim's 201, the seat table, the lobby, views, events,
    legal moves, the record or errors; not in the logs; stored hashed."""
    import logging

    caplog.set_level(logging.DEBUG)
    c = _open_match(api, public=True, players=["ana", {"name": "bo", "open": True}, {"name": "cy", "open": True}])
    mid, invite = c["match_id"], c["invite"]
    answers = [_claim(api, mid, 1, invite), _claim(api, mid, 1, invite), _claim(api, mid, 0, invite),
               api.get(f"/v1/matches/{mid}/seats"), api.get("/v1/matches"),
               api.get("/v1/matches", params={"game": "biberbande"}),
               api.view(mid), api.view(mid, c["admin_token"]), api.events(mid, c["admin_token"]),
               api.legal(mid, c["admin_token"], seat=0), api.record(mid, c["admin_token"]),
               _claim(api, mid, 7, "wrong")]
    assert [r.status for r in answers[:3]] == [201, 409, 409]
    for r in answers:
        assert invite not in r.body.decode(), r
        assert all(invite not in v for v in r.headers.values()), r
    assert invite not in caplog.text
    assert not any(invite in str(rec.args) for rec in caplog.records)
    read = {"string": lambda k: [store.get(k)], "hash": lambda k: list(store.hgetall(k).values()),
            "list": lambda k: store.lrange(k, 0, -1), "set": lambda k: list(store.smembers(k)),
            "zset": lambda k: store.zrange(k, 0, -1)}
    for key in store.keys("*"):
        values = read[store.type(key).decode()](key)
        assert invite.encode() not in b"".join(v for v in values if v), key


def test_claimed_tokens_are_stored_hashed(store, api: Api):
    c = _open_match(api)
    token = _claim(api, c["match_id"], 1, c["invite"]).json["token"]
    for k in store.keys("*"):
        if store.type(k) == b"hash":
            assert token.encode() not in b"".join(store.hgetall(k).values()), k
        elif store.type(k) == b"string":
            assert token.encode() not in store.get(k), k


def test_seat_table_and_lobby_hold_no_secret(api: Api):
    c = _open_match(api, public=True)
    text = api.get(f"/v1/matches/{c['match_id']}/seats").body.decode() + api.get("/v1/matches").body.decode()
    for secret in [c["invite"], c["admin_token"], c["seats"][0]["token"]]:
        assert secret not in text
    import hashlib

    for secret in [c["invite"], c["admin_token"], c["seats"][0]["token"]]:
        assert hashlib.sha256(secret.encode()).hexdigest() not in text


# --------------------------------------------------------------------------
# The lobby.
# --------------------------------------------------------------------------
RFC3339_UTC = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"


def _public(api: Api, game: str = "biberbande", players=None, **extra) -> dict:
    import time

    time.sleep(0.002)  # distinct creation times: newest first is then the creation order reversed
    r = api.create_raw({"game": game, "seed": 1, "public": True,
                        "players": players or ["ana", {"name": "bo", "open": True}], **extra})
    assert r.status == 201, r
    return r.json


def _lobby(api: Api, **params) -> dict:
    r = api.get("/v1/matches", params=params)
    assert r.status == 200, r
    assert set(r.json) == {"matches", "next"}
    return r.json


def _all_pages(api: Api, **params) -> list[str]:
    seen, cursor = [], None
    for _ in range(100):
        page = _lobby(api, cursor=cursor, **params)
        assert len(page["matches"]) <= params.get("limit", 20)
        seen += [m["match_id"] for m in page["matches"]]
        cursor = page["next"]
        if cursor is None:
            return seen
    raise AssertionError("the lobby never ended")


def test_lobby_lists_public_matches_with_an_open_seat_newest_first(api: Api):
    import datetime
    import re

    a = _public(api, clock={"per_move_ms": 30000})
    b = _public(api, options={"rounds": 2})
    api.create_raw({"game": "biberbande", "players": ["x", {"name": "y", "open": True}]})  # not public
    api.create_raw({"game": "biberbande", "players": ["x", "y"], "public": True})  # public, nothing open
    page = _lobby(api, game="biberbande", open="true")
    assert [m["match_id"] for m in page["matches"]] == [b["match_id"], a["match_id"]]
    assert page["next"] is None
    first, second = page["matches"]
    assert set(first) == {"match_id", "game", "options", "seats", "created", "clock"}
    assert first["game"] == "biberbande" and first["options"]["rounds"] == 2 and first["clock"] is None
    assert second["clock"] == {"per_move_ms": 30000}
    assert first["seats"] == [{"seat": 0, "name": "ana", "kind": "token"}, {"seat": 1, "name": "bo", "kind": "open"}]
    for m in page["matches"]:
        assert re.match(RFC3339_UTC, m["created"]), m["created"]
    when = [datetime.datetime.fromisoformat(m["created"].replace("Z", "+00:00")) for m in page["matches"]]
    assert when[0] >= when[1]
    now = datetime.datetime.now(datetime.UTC)
    assert abs((now - when[0]).total_seconds()) < 60


def test_lobby_without_game_merges_every_game(api: Api):
    made = [_public(api, game=g, players=["a", {"name": "b", "open": True}])
            for g in ["biberbande", "thirteen-beavers", "biberclan", "thirteen-beavers", "mein-lieber-biber"]]
    newest_first = [m["match_id"] for m in reversed(made)]
    assert [m["match_id"] for m in _lobby(api)["matches"]] == newest_first
    assert _all_pages(api, limit=2) == newest_first
    assert [m["match_id"] for m in _lobby(api, game="thirteen-beavers")["matches"]] == [
        made[3]["match_id"], made[1]["match_id"]]
    assert _lobby(api, game="mein-lieber-biber")["matches"][0]["game"] == "mein-lieber-biber"


@pytest.mark.parametrize("limit", [1, 3, 7, 100])
def test_lobby_pages(api: Api, limit):
    made = [_public(api)["match_id"] for _ in range(7)]
    assert _all_pages(api, game="biberbande", limit=limit) == made[::-1]


def test_lobby_default_limit_is_20(api: Api):
    made = [_public(api)["match_id"] for _ in range(21)]
    page = _lobby(api)
    assert [m["match_id"] for m in page["matches"]] == made[::-1][:20]
    assert page["next"] is not None
    rest = _lobby(api, cursor=page["next"])
    assert [m["match_id"] for m in rest["matches"]] == [made[0]] and rest["next"] is None


def test_lobby_pages_through_equal_creation_times(store, api: Api):
    """Ties (same millisecond) are ordered by match id, descending, and a
    page boundary inside a tie loses and repeats nothing."""
    from service.store.keys import lobby_key

    made = [_public(api)["match_id"] for _ in range(6)]
    for mid in made:
        store.zadd(lobby_key("biberbande"), {mid: 1_000})
    assert _all_pages(api, game="biberbande", limit=2) == sorted(made, reverse=True)
    assert _all_pages(api, limit=1) == sorted(made, reverse=True)


def test_lobby_forgets_filled_finished_and_deleted_matches_at_once(store, api: Api):
    from service.store.keys import lobby_key
    from tests.http_helpers import W1_MOVES, W1_OPTIONS

    key = lobby_key("biberbande")
    two = _public(api, players=["a", {"name": "b", "open": True}, {"name": "c", "open": True}])
    gone = _public(api)
    done = _public(api, options=W1_OPTIONS)
    filled = _public(api)
    assert store.zcard(key) == 4
    assert _claim(api, filled["match_id"], 1).status == 201  # public: no invite needed
    assert store.zscore(key, filled["match_id"]) is None
    assert _claim(api, two["match_id"], 1).status == 201  # one open seat left: still listed
    assert store.zscore(key, two["match_id"]) is not None
    assert api.delete_match(gone["match_id"], gone["admin_token"]).status == 204
    assert store.zscore(key, gone["match_id"]) is None
    for seat, move in W1_MOVES:
        assert api.move(done["match_id"], done["admin_token"], move, seat=seat).status == 200
    assert store.zscore(key, done["match_id"]) is None
    page = _lobby(api)
    assert [m["match_id"] for m in page["matches"]] == [two["match_id"]]
    assert [s["kind"] for s in page["matches"][0]["seats"]] == ["token", "claimed", "open"]


def test_lobby_drops_expired_matches_when_it_lists_them(store, api: Api):
    """A match that expired (its keys gone, the index entry left) is not
    listed, and listing it removes the entry."""
    from service.store.keys import Keys, lobby_key

    old, live = _public(api), _public(api)
    for key in Keys(old["match_id"]).fixed():
        store.delete(key)
    assert store.zscore(lobby_key("biberbande"), old["match_id"]) is not None
    assert [m["match_id"] for m in _lobby(api)["matches"]] == [live["match_id"]]
    assert store.zscore(lobby_key("biberbande"), old["match_id"]) is None


def test_lobby_page_looks_at_a_bounded_number_of_matches(store, api: Api, monkeypatch):
    """Many dead entries: a page stops after MAX_SCAN of them with a
    `next`, and the pages after it reach the live matches."""
    from service.domain import lobby
    from service.store.keys import lobby_key

    monkeypatch.setattr(lobby, "MAX_SCAN", 3)
    live = _public(api)
    for i in range(7):  # newer than the live match, without a match behind them
        store.zadd(lobby_key("biberbande"), {f"{'a' * 15}{'abcdefg'[i]}": 2**50 + i})
    first = _lobby(api, limit=5)
    assert first["matches"] == [] and first["next"] is not None
    assert _all_pages(api, limit=5) == [live["match_id"]]
    assert store.zcard(lobby_key("biberbande")) == 1


@pytest.mark.parametrize("params", [{"limit": 0}, {"limit": 101}, {"limit": "x"}, {"open": "false"},
                                    {"cursor": "nonsense"}, {"cursor": "MTox"}, {"cursor": "x" * 300}])
def test_lobby_bad_query_400(api: Api, params):
    assert_problem(api.get("/v1/matches", params=params), 400, "invalid_request")


def test_lobby_unknown_game_404(api: Api):
    assert_problem(api.get("/v1/matches", params={"game": "chess"}), 404, "game_not_found")


def test_lobby_on_the_cluster(cluster_instances, redis_cluster):
    """Paging, merging games, eager and lazy removal on a Redis Cluster
    (every game's index and every match in slots of their own)."""
    import redis

    from service.store.keys import Keys

    api = cluster_instances[0]
    made = [_public(api, game=g, players=["a", {"name": "b", "open": True}])["match_id"]
            for g in ["biberbande", "biberclan", "biberbande", "thirteen-beavers", "biberbande"]]
    assert _all_pages(api, limit=2) == made[::-1]
    assert _all_pages(cluster_instances[1], game="biberbande", limit=1) == [made[4], made[2], made[0]]
    assert _claim(api, made[4], 1).status == 201
    client = redis.RedisCluster.from_url(redis_cluster.url)
    for key in Keys(made[2]).fixed():  # expired
        client.delete(key)
    client.close()
    assert _all_pages(cluster_instances[1], limit=2) == [made[3], made[1], made[0]]


def test_claims_and_the_lobby_count_against_the_general_rate_limit():
    """service/ops/limits.py: every request but the probes counts against
    RATE_LIMIT_DEFAULT, claims and lobby pages included (only creation
    counts against RATE_LIMIT_CREATE too)."""
    import dataclasses

    import fakeredis

    from service.app import create_app
    from service.ops.config import Settings
    from tests.conftest import flask_api

    settings = dataclasses.replace(Settings.from_env({}), rate_limit_enabled=True,
                                   rate_limit_default="4/minute", rate_limit_create="100/minute")
    app = create_app(fakeredis.FakeRedis(), settings=settings)
    app.config["TESTING"] = True
    api = flask_api(app)
    c = _open_match(api, public=True)
    assert _lobby(api)["matches"]
    assert api.get(f"/v1/matches/{c['match_id']}/seats").status == 200
    assert _claim(api, c["match_id"], 1).status == 201
    for r in (api.get("/v1/matches"), _claim(api, c["match_id"], 1), api.get(f"/v1/matches/{c['match_id']}/seats")):
        assert_problem(r, 429, "rate_limited")


def test_a_store_failure_while_claiming_is_503_saying_the_seat_may_be_claimed(app, api: Api):
    import redis

    from service.http.context import EXTENSION

    c = _open_match(api)
    store = app.extensions[EXTENSION].store

    def down(script, keys, args):
        raise redis.exceptions.ConnectionError("store down")

    store._write = down
    r = _claim(api, c["match_id"], 1, c["invite"])
    body = assert_problem(r, 503, "store_unavailable")
    assert "may be claimed" in body["detail"] and r.header("retry-after")
    assert c["invite"] not in body["detail"]
