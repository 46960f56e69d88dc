"""Ladders (api.md "Ladders: ratings on the server", 1.2): ladders, entrants
and their tokens, ladder matches whose seats name entrants, the leaderboard,
and ratings updated exactly once per finished ladder match, also when rated
twice at once, when the process that made the finishing move is killed
before rating it, and when the match is deleted.

Runs on the embedded store, a real Redis and the Redis Cluster (ladder keys
have their own hash tag: nothing here may be cross-slot); one test races the
two workers of the live gunicorn.  Expected ratings
are computed here with openskill itself, from the places the result gives.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from openskill.models import PlackettLuce

from service.domain import ladders as ladders_module
from service.http.context import EXTENSION
from service.store.keys import LadderKeys
from tests.http_helpers import W1_MOVES, W1_OPTIONS, Api, assert_problem

ROOT = Path(__file__).resolve().parents[2]
MU, SIGMA = 25.0, 25.0 / 3


def new_ladder(api: Api, game: str = "biberbande", name: str = "weekly") -> dict[str, Any]:
    r = api.post("/v1/ladders", {"game": game, "name": name})
    assert r.status == 201, r
    return r.json


def add(api: Api, ladder: dict[str, Any], name: str) -> dict[str, Any]:
    r = api.post(f"/v1/ladders/{ladder['ladder_id']}/entrants", {"name": name}, token=ladder["admin_token"])
    assert r.status == 201, r
    return r.json


def ladder_ref(ladder: dict[str, Any]) -> dict[str, str]:
    return {"id": ladder["ladder_id"], "token": ladder["admin_token"]}


def create_w1(api: Api, ladder: dict[str, Any], entrants: list[dict[str, Any]]) -> dict[str, Any]:
    """A ladder match on worked example W1 (seat 0 wins, 12 to 16)."""
    r = api.create_raw({"game": "biberbande", "players": [{"entrant": e["entrant_id"]} for e in entrants],
                        "seed": 7, "options": W1_OPTIONS, "ladder": ladder_ref(ladder)})
    assert r.status == 201, r
    return r.json


def play_w1(api: Api, match: dict[str, Any], entrants: list[dict[str, Any]], upto: int = len(W1_MOVES)) -> None:
    """W1's moves, each posted with the entrant's token."""
    for seat, move in W1_MOVES[:upto]:
        r = api.move(match["match_id"], entrants[seat]["token"], move)
        assert r.status == 200, r


def board(api: Api, ladder: dict[str, Any]) -> dict[str, Any]:
    r = api.get(f"/v1/ladders/{ladder['ladder_id']}")
    assert r.status == 200, r
    return r.json


def by_name(leaderboard: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in leaderboard["entrants"]}


def expected_after_w1() -> tuple[tuple[float, float], tuple[float, float]]:
    """(mu, sigma) of W1's winner and loser, both fresh: openskill directly."""
    model = PlackettLuce()
    (win,), (lose,) = model.rate([[model.rating(mu=MU, sigma=SIGMA)], [model.rating(mu=MU, sigma=SIGMA)]],
                                 ranks=[1, 2])
    return (win.mu, win.sigma), (lose.mu, lose.sigma)


def assert_rated_once_after_w1(leaderboard: dict[str, Any], winner: str = "ana", loser: str = "bo") -> None:
    (win_mu, win_sigma), (lose_mu, lose_sigma) = expected_after_w1()
    rows = by_name(leaderboard)
    assert leaderboard["matches"] == 1
    assert rows[winner]["mu"] == pytest.approx(win_mu) and rows[winner]["sigma"] == pytest.approx(win_sigma)
    assert rows[loser]["mu"] == pytest.approx(lose_mu) and rows[loser]["sigma"] == pytest.approx(lose_sigma)
    assert (rows[winner]["matches"], rows[winner]["wins"]) == (1, 1)
    assert (rows[loser]["matches"], rows[loser]["wins"]) == (1, 0)


@pytest.fixture
def lodge(app: Any) -> Any:
    """The service object behind ``api`` (the test's Flask app)."""
    return app.extensions[EXTENSION]


# --------------------------------------------------------------------------
# Ladders and entrants.
# --------------------------------------------------------------------------
def test_create_a_ladder_and_register_entrants(api):
    r = api.post("/v1/ladders", {"game": "biberbande", "name": "weekly"})
    assert r.status == 201, r
    ladder = r.json
    assert set(ladder) == {"ladder_id", "game", "name", "admin_token"}
    assert (ladder["game"], ladder["name"]) == ("biberbande", "weekly")
    assert r.header("location") == f"/v1/ladders/{ladder['ladder_id']}"
    snake = add(api, ladder, "snake-v2")
    assert set(snake) == {"entrant_id", "name", "token"} and snake["name"] == "snake-v2"
    leaderboard = board(api, ladder)
    assert leaderboard == {"ladder_id": ladder["ladder_id"], "game": "biberbande", "name": "weekly", "matches": 0,
                           "entrants": [{"entrant_id": snake["entrant_id"], "name": "snake-v2", "mu": MU,
                                         "sigma": pytest.approx(SIGMA), "rating": pytest.approx(0.0),
                                         "matches": 0, "wins": 0, "rank": 1}]}


def test_tokens_are_stored_hashed(api, store):
    ladder = new_ladder(api)
    entrant = add(api, ladder, "snake")
    k = LadderKeys(ladder["ladder_id"])
    stored = b"".join([*store.hgetall(k.ladder).values(), *store.hgetall(k.entrants).values()])
    for secret in (ladder["admin_token"], entrant["token"]):
        assert secret.encode() not in stored and secret.split(".")[1].encode() not in stored


def test_ladder_errors(api):
    ladder = new_ladder(api)
    other = new_ladder(api, name="other")
    path = f"/v1/ladders/{ladder['ladder_id']}/entrants"
    add(api, ladder, "snake")
    assert_problem(api.post(path, {"name": "snake"}, token=ladder["admin_token"]), 422, "invalid_options")
    assert_problem(api.post(path, {"name": "x"}), 401, "unauthenticated")
    assert_problem(api.post(path, {"name": "x"}, token=other["admin_token"]), 403, "forbidden")
    assert_problem(api.post(path, {"name": "x"}, token="not-a-token"), 403, "forbidden")
    assert_problem(api.post(path, {"name": "   "}, token=ladder["admin_token"]), 400, "invalid_request")
    assert_problem(api.post(path, {"name": "a\tb"}, token=ladder["admin_token"]), 400, "invalid_request")
    assert_problem(api.post(path, {}, token=ladder["admin_token"]), 400, "invalid_request")
    for missing in ("abcdefghijklmnop", "nope"):
        assert_problem(api.get(f"/v1/ladders/{missing}"), 404, "ladder_not_found")
        assert_problem(api.post(f"/v1/ladders/{missing}/entrants", {"name": "x"}, token=ladder["admin_token"]),
                       404, "ladder_not_found")
    assert_problem(api.post("/v1/ladders", {"game": "chess", "name": "x"}), 404, "game_not_found")
    assert_problem(api.post("/v1/ladders", {"game": "biberbande"}), 400, "invalid_request")
    # the same name in another ladder is fine
    add(api, other, "snake")


def test_ladder_match_errors(api):
    ladder = new_ladder(api)
    other = new_ladder(api, name="other")
    clan = new_ladder(api, game="biberclan", name="clan")
    ana, bo = add(api, ladder, "ana"), add(api, ladder, "bo")
    stranger = add(api, other, "stranger")
    seats = [{"entrant": ana["entrant_id"]}, {"entrant": bo["entrant_id"]}]

    def create(players: Any = seats, ref: Any = None, game: str = "biberbande") -> Any:
        return api.create_raw({"game": game, "players": players,
                               "ladder": ladder_ref(ladder) if ref is None else ref})

    assert_problem(create(ref={"id": ladder["ladder_id"], "token": other["admin_token"]}), 403, "forbidden")
    assert_problem(create(ref={"id": ladder["ladder_id"], "token": ana["token"]}), 403, "forbidden")
    assert_problem(create(ref={"id": "abcdefghijklmnop", "token": ladder["admin_token"]}), 404, "ladder_not_found")
    assert_problem(create(ref={"id": ladder["ladder_id"]}), 422, "invalid_options")
    assert_problem(create(ref="weekly"), 422, "invalid_options")
    assert_problem(create([{"entrant": ana["entrant_id"]}, {"entrant": stranger["entrant_id"]}]),
                   422, "invalid_options")
    assert_problem(create([{"entrant": ana["entrant_id"]}, {"entrant": ana["entrant_id"]}]), 422, "invalid_options")
    assert_problem(create([{"entrant": ana["entrant_id"]}, "bo"]), 422, "invalid_options")
    assert_problem(create(2), 422, "invalid_options")
    assert_problem(create([{"entrant": ana["entrant_id"]}, {"entrant": bo["entrant_id"], "open": True}]),
                   422, "invalid_options")
    assert_problem(create([{"entrant": ana["entrant_id"]}, {"entrant": bo["entrant_id"], "name": "Bobo"}]),
                   422, "invalid_options")
    assert_problem(create([{"entrant": ana["entrant_id"]}]), 422, "invalid_options")  # too few players
    assert_problem(create(game="biberclan"), 422, "invalid_options")  # a biberbande ladder
    assert_problem(create(ref=ladder_ref(clan)), 422, "invalid_options")
    assert_problem(api.create_raw({"game": "biberbande", "players": seats}), 422, "invalid_options")  # no ladder
    assert board(api, ladder)["matches"] == 0


def test_seats_take_the_entrants_names_and_may_be_bots(api):
    ladder = new_ladder(api)
    ana, bo = add(api, ladder, "ana"), add(api, ladder, "bo")
    r = api.create_raw({"game": "biberbande", "players": [{"entrant": bo["entrant_id"], "name": "bo"},
                                                           {"entrant": ana["entrant_id"], "bot": "heuristic"}],
                        "ladder": ladder_ref(ladder)})
    assert r.status == 201, r
    assert [(s["name"], s.get("bot")) for s in r.json["seats"]] == [("bo", None), ("ana", "heuristic")]
    assert "token" in r.json["seats"][0]


def test_an_entrant_token_acts_for_its_seat_only(api):
    ladder = new_ladder(api)
    ana, bo, cy = add(api, ladder, "ana"), add(api, ladder, "bo"), add(api, ladder, "cy")
    match = create_w1(api, ladder, [ana, bo])
    mid = match["match_id"]
    view = api.view(mid, bo["token"])
    assert view.status == 200 and view.json["viewer"] == {"role": "seat", "seat": 1}, view
    assert_problem(api.move(mid, bo["token"], W1_MOVES[0][1]), 409, "not_your_turn")
    assert_problem(api.legal(mid, ana["token"], seat=1), 403, "forbidden")
    for outsider in (cy["token"], ladder["admin_token"]):  # not seated, not the match's admin
        assert_problem(api.view(mid, outsider), 401, "unauthenticated")
    r = api.move(mid, ana["token"], W1_MOVES[0][1])
    assert r.status == 200, r
    r = api.move(mid, match["seats"][1]["token"], W1_MOVES[1][1])  # the seat's own token still works
    assert r.status == 200, r


# --------------------------------------------------------------------------
# Ratings.
# --------------------------------------------------------------------------
def test_a_finished_match_is_rated_once_and_ranks_share_ties(api, lodge):
    ladder = new_ladder(api)
    ana, bo, cy, dee = (add(api, ladder, n) for n in ("ana", "bo", "cy", "dee"))
    match = create_w1(api, ladder, [ana, bo])
    play_w1(api, match, [ana, bo], upto=len(W1_MOVES) - 1)
    assert board(api, ladder)["matches"] == 0  # unfinished: nothing yet
    seat, move = W1_MOVES[-1]
    r = api.move(match["match_id"], [ana, bo][seat]["token"], move)
    assert r.status == 200 and r.json["state"]["status"] == "finished", r
    leaderboard = board(api, ladder)
    assert_rated_once_after_w1(leaderboard)
    assert [e["name"] for e in leaderboard["entrants"]] == ["ana", "cy", "dee", "bo"]
    assert [e["rank"] for e in leaderboard["entrants"]] == [1, 2, 2, 4]
    for e in leaderboard["entrants"]:
        assert e["rating"] == pytest.approx(e["mu"] - 3 * e["sigma"])
    assert board(api, ladder) == leaderboard  # reading again changes nothing
    meta, snap = lodge.store.load(match["match_id"])
    game = lodge.game("biberbande")
    lodge.ladders.rate(meta, game, snap.state)  # a retry of the rating
    lodge.ladders.settle(ladder["ladder_id"])
    assert board(api, ladder) == leaderboard


def test_tied_places_tie_in_the_ratings():
    """Seats sharing a place are rated as a tie (openskill's ranks)."""
    fresh = {"name": "x", "mu": MU, "sigma": SIGMA, "matches": 0, "wins": 0}
    after = ladders_module.rated([fresh, fresh, fresh], [1, 1, 3])
    assert after[0]["mu"] == after[1]["mu"] > MU > after[2]["mu"]
    assert [(a["matches"], a["wins"]) for a in after] == [(1, 1), (1, 1), (1, 0)]


def test_leaderboard_order_and_ranks():
    records: dict[str, dict[str, Any]] = {str(i): {"name": n, "mu": mu, "sigma": 1.0, "matches": 1, "wins": 0}
               for i, (n, mu) in enumerate([("b", 10.0), ("a", 10.0), ("c", 12.0), ("d", 9.0), ("e", 10.0)])}
    rows = ladders_module.leaderboard(records)
    assert [(r["name"], r["rank"]) for r in rows] == [("c", 1), ("a", 2), ("b", 2), ("e", 2), ("d", 5)]


def test_concurrent_ratings_of_one_match_change_it_once(api, lodge, monkeypatch):
    ladder = new_ladder(api)
    ana, bo = add(api, ladder, "ana"), add(api, ladder, "bo")
    match = create_w1(api, ladder, [ana, bo])
    monkeypatch.setattr(type(lodge.moves.ladders), "finished", lambda *a: None)  # the finishing move rates nothing
    play_w1(api, match, [ana, bo])
    monkeypatch.undo()
    meta, snap = lodge.store.load(match["match_id"])
    game = lodge.game("biberbande")
    start = threading.Barrier(8)
    failures: list[BaseException] = []

    def rate(i: int) -> None:
        try:
            start.wait()
            if i % 2:
                lodge.ladders.rate(meta, game, snap.state)
            else:
                lodge.ladders.settle(ladder["ladder_id"])
        except BaseException as exc:  # noqa: BLE001  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=rate, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not failures
    assert_rated_once_after_w1(board(api, ladder))


def test_two_matches_finishing_together_are_both_rated(api, lodge, monkeypatch):
    """Two matches sharing an entrant, the second rated between the first's
    read and write: the compare-and-set makes the first read again, so
    neither update is lost."""
    ladder = new_ladder(api)
    ana, bo, cy = add(api, ladder, "ana"), add(api, ladder, "bo"), add(api, ladder, "cy")
    first, second = create_w1(api, ladder, [ana, bo]), create_w1(api, ladder, [ana, cy])
    monkeypatch.setattr(type(lodge.moves.ladders), "finished", lambda *a: None)  # the finishing moves rate nothing
    play_w1(api, first, [ana, bo])
    play_w1(api, second, [ana, cy])
    monkeypatch.undo()
    game = lodge.game("biberbande")
    (meta1, snap1), (meta2, snap2) = (lodge.store.load(m["match_id"]) for m in (first, second))
    saved = lodge.ladders.saved
    write = type(saved).rate
    outcomes: list[str] = []

    def interleaved(self: Any, ladder_id: str, match_id: str, changes: Any) -> str:
        if not outcomes:
            outcomes.append("second first")
            lodge.ladders.rate(meta2, game, snap2.state)
        outcome = write(self, ladder_id, match_id, changes)
        outcomes.append(outcome)
        return outcome

    monkeypatch.setattr(type(saved), "rate", interleaved)
    lodge.ladders.rate(meta1, game, snap1.state)
    assert outcomes == ["second first", "ok", "stale", "ok"]
    rows = by_name(board(api, ladder))
    assert (rows["ana"]["matches"], rows["ana"]["wins"]) == (2, 2)
    model = PlackettLuce()
    (once,), (first_loser,) = model.rate([[model.rating(mu=MU, sigma=SIGMA)], [model.rating(mu=MU, sigma=SIGMA)]],
                                         ranks=[1, 2])
    (twice,), (second_loser,) = model.rate([[once], [model.rating(mu=MU, sigma=SIGMA)]], ranks=[1, 2])
    assert rows["ana"]["mu"] == pytest.approx(twice.mu) and rows["ana"]["sigma"] == pytest.approx(twice.sigma)
    assert rows["cy"]["mu"] == pytest.approx(first_loser.mu)  # met a fresh ana
    assert rows["bo"]["mu"] == pytest.approx(second_loser.mu)  # met the ana the other match left


def test_a_deleted_unfinished_match_changes_nothing(api, store):
    ladder = new_ladder(api)
    ana, bo = add(api, ladder, "ana"), add(api, ladder, "bo")
    before = board(api, ladder)
    match = create_w1(api, ladder, [ana, bo])
    play_w1(api, match, [ana, bo], upto=len(W1_MOVES) - 1)
    assert api.delete_match(match["match_id"], match["admin_token"]).status == 204
    assert board(api, ladder) == before
    assert store.zcard(LadderKeys(ladder["ladder_id"]).pending) == 0


def test_a_pending_match_gone_unfinished_is_dropped_by_a_read(api, lodge, store, monkeypatch):
    """A match that expired (or whose keys were removed) before its end."""
    ladder = new_ladder(api)
    ana, bo = add(api, ladder, "ana"), add(api, ladder, "bo")
    match = create_w1(api, ladder, [ana, bo])
    lodge.store.delete(match["match_id"])  # gone without the service's delete (as by expiry)
    pending = LadderKeys(ladder["ladder_id"]).pending
    assert board(api, ladder)["matches"] == 0
    assert store.zcard(pending) == 1  # its create might still be under way: kept for a while
    monkeypatch.setattr(ladders_module, "GONE_AFTER_MS", -1)
    assert board(api, ladder)["matches"] == 0
    assert store.zcard(pending) == 0


def test_a_match_deleted_after_its_end_is_rated(api, lodge, monkeypatch):
    ladder = new_ladder(api)
    ana, bo = add(api, ladder, "ana"), add(api, ladder, "bo")
    match = create_w1(api, ladder, [ana, bo])
    monkeypatch.setattr(type(lodge.moves.ladders), "finished", lambda *a: None)  # as if killed before rating
    play_w1(api, match, [ana, bo])
    monkeypatch.undo()
    assert api.delete_match(match["match_id"], match["admin_token"]).status == 204
    assert_rated_once_after_w1(board(api, ladder))


def test_bot_seats_play_a_ladder_match_to_its_rating(api, lodge):
    """Every seat a server bot: the server's moves (in the create request,
    then the sweeper's) finish the match, and the finishing write rates it."""
    ladder = new_ladder(api)
    ana, bo = add(api, ladder, "ana"), add(api, ladder, "bo")
    r = api.create_raw({"game": "biberbande", "seed": 11, "options": {"rounds": 1}, "ladder": ladder_ref(ladder),
                        "players": [{"entrant": ana["entrant_id"], "bot": "heuristic"},
                                    {"entrant": bo["entrant_id"], "bot": "random"}]})
    assert r.status == 201, r
    mid = r.json["match_id"]
    for _ in range(100):
        if lodge.moves.advance(mid) is None:
            break
    assert api.view(mid).json["status"] == "finished"
    store_matches = int(lodge.store.client.hget(LadderKeys(ladder["ladder_id"]).ladder, "matches"))
    assert store_matches == 1  # rated by the finishing write, before any read
    rows = by_name(board(api, ladder))
    assert rows["ana"]["matches"] == rows["bo"]["matches"] == 1
    assert rows["ana"]["wins"] + rows["bo"]["wins"] >= 1


# --------------------------------------------------------------------------
# A process killed between the finishing move and the rating.
# --------------------------------------------------------------------------
KILLED = textwrap.dedent("""
    import os, sys
    import redis
    from service.domain.ladders import Ladders
    from tests.conftest import make_app, flask_api

    mode, url, match_id, token, move = sys.argv[1:6]
    client = redis.RedisCluster.from_url(url) if mode == "cluster" else redis.Redis.from_url(url)
    Ladders.finished = lambda *a: os._exit(9)  # die right after the finishing compare-and-set
    api = flask_api(make_app(client))
    api.post(f"/v1/matches/{match_id}/moves", {"move": __import__("json").loads(move)}, token=token)
    sys.exit(0)
""")


def test_a_worker_killed_at_the_finishing_move_still_gets_the_match_rated(api, store, request):
    mode = request.node.callspec.params["store"]
    if mode == "embedded":
        pytest.skip("another process cannot share the embedded store")
    url = request.getfixturevalue("redis_cluster").url if mode == "cluster" else request.getfixturevalue(
        "redis_server")
    ladder = new_ladder(api)
    ana, bo = add(api, ladder, "ana"), add(api, ladder, "bo")
    match = create_w1(api, ladder, [ana, bo])
    play_w1(api, match, [ana, bo], upto=len(W1_MOVES) - 1)
    seat, move = W1_MOVES[-1]
    done = subprocess.run([sys.executable, "-c", KILLED, mode, url, match["match_id"], [ana, bo][seat]["token"],
                           json.dumps(move)], cwd=ROOT, capture_output=True, timeout=60)
    assert done.returncode == 9, done.stderr.decode()[-2000:]
    assert api.view(match["match_id"]).json["status"] == "finished"
    k = LadderKeys(ladder["ladder_id"])
    assert store.hget(k.ladder, "matches") == b"0" and store.zcard(k.pending) == 1  # not rated yet
    assert_rated_once_after_w1(board(api, ladder))  # the next read rates it
    assert store.zcard(k.pending) == 0
    assert_rated_once_after_w1(board(api, ladder))


def test_instances_racing_to_rate_a_killed_workers_match_rate_it_once(live_server: str, redis_server: str):
    """The finishing move's process dies before rating; then gunicorn's two
    workers get eight leaderboard reads at once, each settling the pending
    match: every answer shows it rated exactly once."""
    from tests.conftest import requests_api

    live = requests_api(live_server)
    ladder = new_ladder(live)
    ana, bo = add(live, ladder, "ana"), add(live, ladder, "bo")
    match = create_w1(live, ladder, [ana, bo])
    play_w1(live, match, [ana, bo], upto=len(W1_MOVES) - 1)
    seat, move = W1_MOVES[-1]
    live_db = redis_server.rsplit("/", 1)[0] + "/1"  # the live server's database (tests/conftest.py)
    done = subprocess.run([sys.executable, "-c", KILLED, "redis", live_db, match["match_id"],
                           [ana, bo][seat]["token"], json.dumps(move)], cwd=ROOT, capture_output=True, timeout=60)
    assert done.returncode == 9, done.stderr.decode()[-2000:]
    start = threading.Barrier(8)
    boards: list[dict[str, Any]] = []

    def read() -> None:
        reader = requests_api(live_server)
        start.wait()
        boards.append(board(reader, ladder))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(boards) == 8
    for seen in boards:
        assert_rated_once_after_w1(seen)
    assert_rated_once_after_w1(board(live, ladder))
