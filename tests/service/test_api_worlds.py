"""Worlds and simulation over HTTP (api.md "Worlds and simulation: planning
over HTTP", 1.2), on the embedded store and a real Redis.

* ``GET …/worlds``: worlds for a seat at the current version; the seat's
  view of each equals its real view; no world carries the match seed or a
  secret option; the same seed and knowledge give the same worlds; 401, 403,
  400 and 409 as the contract says.
* ``POST /v1/games/{game}/worlds``: the version-0 world of the match that
  creating would make; no open/bot seats, clock or ladder (422).
* ``POST …/simulate``: moves as the admin for their seat, server moves in
  between, a random playout seeded by ``seed`` alone, redaction as the admin
  or as a seat, 422 ``illegal_move`` with ``at``, 400 for bad bodies; it
  stores nothing and writes nothing to Redis.
* Signed worlds: altered, truncated, random, another game's, expired or
  another secret's worlds are 422 ``invalid_world``, never a 500 (hypothesis).
* A client from the contract alone: sample worlds for its seat, simulate
  them, post the move that did best.
"""
from __future__ import annotations

import base64
import json
import random
import time
import zlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import REGISTRY
from engine.core import ADMIN_VIEWER, FINISHED, resigned_seats
from service.app import create_app
from service.domain import world_token
from service.ops.config import Settings
from tests.conftest import examples, flask_api
from tests.http_helpers import Api, assert_problem

GAMES = [g.id for g in REGISTRY]


def _secret_options(game_id: str) -> dict[str, Any]:
    """Every secret option of the game set (reversed canonical orders; ``deck`` rather than ``decks``)."""
    game = next(g for g in REGISTRY if g.id == game_id)
    chosen = {}
    for option in game.options:
        if option.name == "deck":
            chosen["deck"] = game.canonical_deck({})[::-1]
        elif option.secret and option.items:
            chosen[option.name] = list(option.items)[::-1]
    return chosen


def _play_some(api: Api, game: str, moves: int, seed: int = 3, options: dict[str, Any] | None = None) -> Any:
    """A match of ``game`` (3 players where it can) with ``moves`` moves played (a middle legal move)."""
    players = 3 if next(g for g in REGISTRY if g.id == game).max_players >= 3 else 2
    m = api.create(players, game=game, seed=seed, options=options)
    for _ in range(moves):
        view = m.admin_view()
        if view["status"] == "finished":
            break
        seat = view["to_act"][0]
        legal = m.legal(seat)
        m.play(seat, legal[len(legal) // 2])
    return m


def _worlds(api: Api, m: Any, seat: int, **params: Any) -> Any:
    return api.get(f"/v1/matches/{m.id}/worlds", token=m.token(seat), params=params)


def _simulate(api: Api, game: str, body: dict[str, Any]) -> Any:
    return api.post(f"/v1/games/{game}/simulate", body)


@pytest.mark.parametrize("game", GAMES)
def test_worlds_agree_with_the_seat_and_hide_the_match(api: Api, game: str) -> None:
    secret = _secret_options(game)
    m = _play_some(api, game, 12, options=secret)
    seat = m.admin_view()["to_act"][0]
    r = _worlds(api, m, seat, n=5, seed=11)
    assert r.status == 200, r
    body = r.json
    assert body["version"] == m.admin_view()["version"] and body["seat"] == seat
    assert len(body["worlds"]) == 5
    real = m.seat_view(seat)
    shown = []
    for w in body["worlds"]:
        payload = json.loads(zlib.decompress(base64.urlsafe_b64decode(w["world"].split(".")[1] + "==")))
        assert payload["s"]["seed"] != m.created["seed"], "a world carries the match seed"
        assert not payload["s"].get("decks") and "deck" not in payload["s"], "a world carries the decks"
        shown.append(json.dumps(payload, separators=(",", ":")))
        assert w["state"]["viewer"]["role"] == "admin" and w["state"]["match_id"] == m.id
        sim = _simulate(api, game, {"world": w["world"], "as": seat})
        assert sim.status == 200, sim
        assert {k: v for k, v in sim.json["state"].items() if k != "deadline"} == \
            {k: v for k, v in real.items() if k != "deadline"}
    for name, value in secret.items():
        order = json.dumps(value, separators=(",", ":"))
        assert not all(order in text for text in shown), f"every world carries the secret option {name}"
    again = _worlds(api, m, seat, n=5, seed=11).json
    assert [w["state"] for w in again["worlds"]] == [w["state"] for w in body["worlds"]]
    other = _worlds(api, m, seat, n=5, seed=12).json
    assert [w["state"] for w in other["worlds"]] != [w["state"] for w in body["worlds"]]


def test_worlds_access_and_ranges(api: Api) -> None:
    m = _play_some(api, "biberbande", 2)
    path = f"/v1/matches/{m.id}/worlds"
    assert_problem(api.get(path), 401, "unauthenticated")
    assert_problem(api.get(path, token=m.token(0), params={"seat": 1}), 403, "forbidden")
    assert_problem(api.get(path, token=m.admin), 400, "invalid_request")
    assert api.get(path, token=m.admin, params={"seat": 1}).json["seat"] == 1
    for bad in ({"n": 0}, {"n": 65}, {"seed": -1}, {"seed": 2**53}, {"n": "x"}):
        assert_problem(api.get(path, token=m.token(0), params=bad), 400, "invalid_request")
    assert len(api.get(path, token=m.token(0), params={"n": 64}).json["worlds"]) == 64
    assert_problem(api.get("/v1/matches/nosuchmatch/worlds", token=m.token(0)), 404, "match_not_found")
    for seat in range(m.n - 1):
        assert api.move(m.id, m.token(seat), {"type": "resign"}).status == 200
    assert_problem(api.get(path, token=m.token(m.n - 1)), 409, "match_finished")


@pytest.mark.parametrize("game", GAMES)
def test_new_world_is_the_created_match(api: Api, game: str) -> None:
    r = api.post(f"/v1/games/{game}/worlds", {"players": ["a", "b"], "seed": 5})
    assert r.status == 200, r
    created = api.create(["a", "b"], game=game, seed=5)
    admin = created.admin_view()
    assert r.json["state"]["match_id"] is None
    assert {k: v for k, v in r.json["state"].items() if k != "match_id"} == \
        {k: v for k, v in admin.items() if k != "match_id"}
    sim = _simulate(api, game, {"world": r.json["world"], "playout": "random", "seed": 1})
    assert sim.status == 200 and sim.json["status"] == "finished" and sim.json["result"] is not None, sim


def test_new_world_refusals(api: Api) -> None:
    path = "/v1/games/biberbande/worlds"
    for body in ({"players": ["a", {"name": "b", "open": True}]}, {"players": ["a", {"name": "b", "bot": "random"}]},
                 {"players": 2, "clock": {"per_move_ms": 5000}}, {"players": 2, "ladder": {"id": "x"}},
                 {"players": 9}, {"players": 2, "options": {"nope": 1}}, {"players": 2, "seed": -4}):
        assert_problem(api.post(path, body), 422, "invalid_options")
    assert_problem(api.post(path, {"seed": 1}), 400, "invalid_request")
    assert_problem(api.post("/v1/games/nogame/worlds", {"players": 2}), 404, "game_not_found")


def test_simulate_plays_moves_like_a_match(api: Api) -> None:
    """The same moves through simulate and through a match give the same
    versions, events and states (as the admin)."""
    game = "mein-lieber-biber"
    world = api.post(f"/v1/games/{game}/worlds", {"players": ["a", "b", "c"], "seed": 9}).json["world"]
    m = api.create(["a", "b", "c"], game=game, seed=9)
    posted, current = [], world
    for _ in range(15):
        view = m.admin_view()
        seat = view["to_act"][0]
        move = m.legal(seat)[-1]
        answer = m.play(seat, move, as_admin=True).json
        posted.append({"seat": seat, "move": move})
        sim = _simulate(api, game, {"world": current, "moves": [posted[-1]]})
        assert sim.status == 200, sim
        assert sim.json["version"] == answer["version"] and sim.json["events"] == answer["events"]
        assert {k: v for k, v in sim.json["state"].items() if k != "match_id"} == \
            {k: v for k, v in answer["state"].items() if k != "match_id"}
        assert sim.json["legal_moves"] == {str(s): m.legal(s) for s in sim.json["to_act"]}
        current = sim.json["world"]
    whole = _simulate(api, game, {"world": world, "moves": posted})
    assert whole.json["state"] == _simulate(api, game, {"world": current}).json["state"]


def test_simulate_resign_and_resigned_seat_fallbacks(api: Api) -> None:
    world = api.post("/v1/games/biberbande/worlds", {"players": 3, "seed": 2}).json["world"]
    first = _simulate(api, "biberbande", {"world": world}).json["to_act"][0]
    sim = _simulate(api, "biberbande", {"world": world, "moves": [{"seat": first, "move": {"type": "resign"}}]})
    assert sim.status == 200, sim
    kinds = [e["type"] for e in sim.json["events"]]
    assert kinds[0] == "resigned" and len(kinds) > 1, "the resigned seat's fallback is played at once"
    assert first not in sim.json["to_act"]
    out = _simulate(api, "biberbande", {"world": sim.json["world"], "playout": "random", "seed": 3})
    assert out.status == 200 and out.json["status"] == "finished", out
    assert out.json["result"]["ranking"][-1] == [first], "a resigned seat ranks last"
    assert any(e["seat"] == first for e in out.json["events"] if e["type"] != "match_ended"), \
        "the resigned seat's fallbacks are played during the playout"


def test_simulate_playout_is_seeded_and_redacted(api: Api) -> None:
    world = api.post("/v1/games/thirteen-beavers/worlds", {"players": 3, "seed": 4}).json["world"]
    one = _simulate(api, "thirteen-beavers", {"world": world, "playout": "random", "seed": 8})
    two = _simulate(api, "thirteen-beavers", {"world": world, "playout": "random", "seed": 8})
    three = _simulate(api, "thirteen-beavers", {"world": world, "playout": "random", "seed": 9})
    assert one.json["state"] == two.json["state"] and one.json["events"] == two.json["events"]
    assert one.json["events"] != three.json["events"]
    assert one.json["status"] == "finished" and one.json["legal_moves"] == {}
    seat = _simulate(api, "thirteen-beavers", {"world": world, "as": 1})
    admin = _simulate(api, "thirteen-beavers", {"world": world})
    assert seat.json["state"]["viewer"] == {"role": "seat", "seat": 1}
    assert set(seat.json["legal_moves"]) <= {"1"} and set(admin.json["legal_moves"]) == \
        {str(s) for s in admin.json["to_act"]}
    assert seat.json["state"] != admin.json["state"]


def test_simulate_refusals(api: Api) -> None:
    world = api.post("/v1/games/biberbande/worlds", {"players": 2, "seed": 2}).json["world"]
    first = _simulate(api, "biberbande", {"world": world}).json
    seat, legal = first["to_act"][0], first["legal_moves"][str(first["to_act"][0])]
    good = {"seat": seat, "move": legal[0]}
    for moves, at in (([{"seat": 1 - seat, "move": legal[0]}], 0), ([good, good, good, good, good], None),
                      ([good, {"seat": 7, "move": legal[0]}], 1), ([{"seat": seat, "move": {"type": "nope"}}], 0)):
        r = _simulate(api, "biberbande", {"world": world, "moves": moves})
        if at is None:
            assert r.status in (200, 422), r
            continue
        body = assert_problem(r, 422, "illegal_move")
        assert body["at"] == at and "world" not in body
    finished = _simulate(api, "biberbande", {"world": world, "playout": "random", "seed": 1}).json["world"]
    body = assert_problem(_simulate(api, "biberbande", {"world": finished, "moves": [good]}), 422, "illegal_move")
    assert body["at"] == 0
    bad: dict[str, Any]
    for bad in ({"world": 5}, {"world": world, "moves": [{"seat": "0", "move": {}}]}, {"world": world, "moves": 3},
                {"world": world, "playout": "greedy"}, {"world": world, "seed": -1}, {"world": world, "seed": 2**53},
                {"world": world, "as": "0"}, {"world": world, "moves": [{"seat": 0}]}, {"moves": []},
                {"world": world, "moves": [good] * 257}, {"world": world, "what": 1}, {"world": world, "as": 2}):
        assert_problem(_simulate(api, "biberbande", bad), 400, "invalid_request")
    assert_problem(_simulate(api, "thirteen-beavers", {"world": world}), 422, "invalid_world")
    assert_problem(_simulate(api, "nogame", {"world": world}), 404, "game_not_found")


def test_simulate_stores_nothing(store: Any, api: Api) -> None:
    """No key and no write command from simulate (Redis' own counters on a
    real server; the key space on both)."""
    world = api.post("/v1/games/biberclan/worlds", {"players": 3, "seed": 2}).json["world"]
    keys = sorted(store.keys("*"))
    real = not type(store).__module__.startswith("fakeredis")
    before = store.info("commandstats") if real else {}
    for seed in range(3):
        assert _simulate(api, "biberclan", {"world": world, "playout": "random", "seed": seed}).status == 200
    after = store.info("commandstats") if real else {}
    assert sorted(store.keys("*")) == keys
    if real:
        calls = {name: after[name]["calls"] - before.get(name, {"calls": 0})["calls"] for name in after}
        assert {name for name, n in calls.items() if n} <= {"cmdstat_info"}, calls


def test_a_shared_secret_and_a_configured_one(store: Any) -> None:
    """Two apps on one store without ``WORLD_SECRET`` share the secret the
    first one made; an app with another configured secret refuses their worlds."""
    one, two = flask_api(create_app(redis_client=store)), flask_api(create_app(redis_client=store))
    world = one.post("/v1/games/biberbande/worlds", {"players": 2}).json["world"]
    assert _simulate(two, "biberbande", {"world": world}).status == 200
    configured = flask_api(create_app(redis_client=store, settings=Settings(world_secret="s" * 32)))
    assert_problem(_simulate(configured, "biberbande", {"world": world}), 422, "invalid_world")
    mine = configured.post("/v1/games/biberbande/worlds", {"players": 2}).json["world"]
    assert _simulate(configured, "biberbande", {"world": mine}).status == 200
    assert_problem(_simulate(one, "biberbande", {"world": mine}), 422, "invalid_world")


def test_a_fresh_store_has_issued_no_world(store: Any) -> None:
    """Reading a world never makes the store's secret: one signed elsewhere
    is refused and the store stays empty."""
    app = create_app(redis_client=store)
    foreign = world_token.WorldSigner(app.extensions["lodge"].store, "elsewhere").issue(
        world_token.World("biberbande", None, ["a", "b"], 0, {"status": "active"}))
    assert_problem(_simulate(flask_api(app), "biberbande", {"world": foreign}), 422, "invalid_world")
    assert store.keys("*") == []


def test_expired_worlds(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    world = api.post("/v1/games/biberbande/worlds", {"players": 2}).json["world"]
    later = time.time() + world_token.WORLD_TTL - 60
    monkeypatch.setattr(world_token.time, "time", lambda: later)
    assert _simulate(api, "biberbande", {"world": world}).status == 200
    monkeypatch.setattr(world_token.time, "time", lambda: later + 120)
    assert_problem(_simulate(api, "biberbande", {"world": world}), 422, "invalid_world")


# --------------------------------------------------------------------------
# Fuzz: nothing but a world this server issued is accepted, never a 500.
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fuzz_api() -> tuple[Api, dict[str, str]]:
    import fakeredis

    api = flask_api(create_app(redis_client=fakeredis.FakeRedis()))
    worlds = {g: api.post(f"/v1/games/{g}/worlds", {"players": 2, "seed": 1}).json["world"] for g in GAMES}
    return api, worlds


def _refused(api: Api, game: str, world: str) -> None:
    r = _simulate(api, game, {"world": world})
    assert r.status in (400, 422), r
    if r.status == 422:
        assert r.json["code"] == "invalid_world", r


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzz_altered_worlds(fuzz_api: tuple[Api, dict[str, str]], data: st.DataObject) -> None:
    api, worlds = fuzz_api
    game = data.draw(st.sampled_from(GAMES))
    world = worlds[game]
    how = data.draw(st.sampled_from(["flip", "truncate", "random", "other", "resign", "append"]))
    if how == "flip":
        raw = bytearray(world.encode())
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] ^= 1 << data.draw(st.integers(0, 6))
        altered = raw.decode("latin-1")
        if altered == world:
            return
    elif how == "truncate":
        altered = world[:data.draw(st.integers(0, len(world) - 1))]
    elif how == "random":
        altered = data.draw(st.text(max_size=300) | st.from_regex(r"w1\.[A-Za-z0-9_-]{1,200}\.[A-Za-z0-9_-]{43}",
                                                                  fullmatch=True))
    elif how == "other":
        altered = worlds[data.draw(st.sampled_from([g for g in GAMES if g != game]))]
    elif how == "resign":  # a payload re-packed with the same signature
        head, payload, sig = world.split(".")
        packed = zlib.decompress(base64.urlsafe_b64decode(payload + "=="))
        forged = base64.urlsafe_b64encode(zlib.compress(packed.replace(b'"v":0', b'"v":1'))).rstrip(b"=").decode()
        altered = f"{head}.{forged}.{sig}"
    else:
        altered = world + data.draw(st.text(min_size=1, max_size=20))
    _refused(api, game, altered)


def test_oversized_and_bomb_worlds(fuzz_api: tuple[Api, dict[str, str]]) -> None:
    api, _worlds_by_game = fuzz_api
    bomb = base64.urlsafe_b64encode(zlib.compress(b"[" * 10 + b"0" * (world_token.MAX_STATE * 2))).decode()
    _refused(api, "biberbande", f"w1.{bomb.rstrip('=')}.{'A' * 43}")
    _refused(api, "biberbande", "w1." + "A" * (world_token.MAX_WORLD + 10) + "." + "A" * 43)


# --------------------------------------------------------------------------
# A client written from the contract alone.
# --------------------------------------------------------------------------
def _contract_client_move(api: Api, match_id: str, token: str, seat: int) -> dict[str, Any]:
    """Sample worlds for my seat, try each of my legal moves in each world
    with a random playout, and pick the move that scored best."""
    legal = api.get(f"/v1/matches/{match_id}/legal-moves", token=token).json["moves"]
    worlds = api.get(f"/v1/matches/{match_id}/worlds", token=token, params={"n": 3, "seed": 1}).json["worlds"]
    best, best_score = legal[0], None
    for move in legal[:6]:
        score = 0.0
        for i, w in enumerate(worlds):
            r = api.post("/v1/games/biberbande/simulate", {
                "world": w["world"], "moves": [{"seat": seat, "move": move}], "playout": "random", "seed": i,
                "as": seat})
            assert r.status == 200, r
            ranking = r.json["result"]["ranking"]
            score -= next(rank for rank, group in enumerate(ranking) if seat in group)
        if best_score is None or score > best_score:
            best, best_score = move, score
    return best


def test_a_client_from_the_contract(api: Api) -> None:
    created = api.post("/v1/matches", {"game": "biberbande", "players": ["me", "you"], "seed": 21}).json
    token = created["seats"][0]["token"]
    played = 0
    while played < 2:
        view = api.get(f"/v1/matches/{created['match_id']}", token=token).json
        if 0 not in view["to_act"]:
            other = created["seats"][view["to_act"][0]]["token"]
            move = api.get(f"/v1/matches/{created['match_id']}/legal-moves", token=other).json["moves"][0]
            assert api.post(f"/v1/matches/{created['match_id']}/moves", {"move": move}, token=other).status == 200
            continue
        move = _contract_client_move(api, created["match_id"], token, 0)
        r = api.post(f"/v1/matches/{created['match_id']}/moves", {"move": move}, token=token)
        assert r.status == 200, r
        played += 1


def test_worlds_of_a_damaged_match_are_503(store: Any, api: Api) -> None:
    """A match whose events were lost in the store is a 503 that says so, never a 500."""
    m = _play_some(api, "biberbande", 3)
    store.delete(f"lodge:{{{m.id}}}:events")
    body = assert_problem(_worlds(api, m, 0), 503, "store_unavailable")
    assert "lost" in body["detail"]


def test_worlds_across_workers(live_api: Api) -> None:
    """Under gunicorn (2 workers, real Redis, no WORLD_SECRET): a world one
    worker issued is accepted by whichever worker answers the next calls."""
    world = live_api.post("/v1/games/mein-lieber-biber/worlds", {"players": 3, "seed": 6}).json["world"]
    for seed in range(12):
        r = _simulate(live_api, "mein-lieber-biber", {"world": world, "playout": "random", "seed": seed})
        assert r.status == 200 and r.json["status"] == "finished", r
        world_after = r.json["world"]
        assert _simulate(live_api, "mein-lieber-biber", {"world": world_after}).status == 200


def test_playout_plays_a_resigned_seats_fallback(api: Api) -> None:
    """In a playout, a resigned seat to act plays its fallback (as the server
    does in a match), every other seat a random legal move: the final state
    equals that replayed in-process with the same generator."""
    game = next(g for g in REGISTRY if g.id == "biberbande")
    world = api.post("/v1/games/biberbande/worlds", {"players": 3, "seed": 2}).json["world"]
    resigned = _simulate(api, "biberbande", {"world": world, "moves": [{"seat": 1, "move": {"type": "resign"}}]})
    out = _simulate(api, "biberbande", {"world": resigned.json["world"], "playout": "random", "seed": 5}).json
    payload = json.loads(zlib.decompress(base64.urlsafe_b64decode(resigned.json["world"].split(".")[1] + "==")))
    state, rng = payload["s"], random.Random("simulate:5")
    while game.status(state) != FINISHED:
        seat = game.to_act(state)[0]
        gone = seat in resigned_seats(state)
        move = game.fallback(state, seat) if gone else rng.choice(game.legal_moves(state, seat))
        state, _ = game.play(state, seat, move)
    assert out["state"]["players"] == game.view(state, ADMIN_VIEWER)["players"]
