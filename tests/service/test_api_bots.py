"""Bot seats and resigning over HTTP (contract 1.1, "Bot seats" and "Clocks,
fallback moves and resigning"): bots play inside the request that hands
them the turn, from exactly their seat's view; the record says ``by``;
the same match replays identically; resigning in 2- and 4-seat matches."""
from __future__ import annotations

import random
from typing import Any

import pytest

import bots
import service.domain.moves
from engine import REGISTRY
from service.http.context import EXTENSION
from service.ops import sweeper
from tests.conftest import match_options
from tests.http_helpers import Api, Match, assert_problem, comparable, events_of, strip_label

GAMES = [g.id for g in REGISTRY]
H = {"bot": "heuristic"}


def create(api: Api, game: str, players: list[Any], seed: int = 5, **extra: Any) -> Match:
    r = api.create_raw({"game": game, "players": players, "seed": seed, **extra})
    assert r.status == 201, r
    return Match(api, r.json, r)


def sized(game: str) -> dict[str, Any]:
    """The create body's options of a whole match whose length is not the
    point: none (the defaults); under ``--fast`` :func:`match_options`."""
    options = match_options(game)
    return {"options": options} if options else {}


def play_me(app: Any, match: Match, rng: random.Random, seat: int = 0,
            max_moves: int = 3000) -> list[dict[str, Any]]:
    """Play ``seat`` at random while the bots answer inside each response
    (or, past the server's time budget for one request, the sweeper right
    after it); returns the move responses' bodies."""
    bodies: list[Any] = []
    sweep = sweeper.Sweeper(app.extensions[EXTENSION])
    for _ in range(max_moves):
        view = match.seat_view(seat)
        if view["status"] == "finished":
            return bodies
        if view["to_act"] != [seat]:
            assert sweep.sweep() == 1, view   # the server owes the bots' moves: the sweeper has them now
            continue
        move = rng.choice(match.legal(seat))
        r = match.api.move(match.id, match.token(seat), strip_label(move), view["version"])
        assert r.status == 200, r
        bodies.append(r.json)
    raise AssertionError("the match did not end")


def finish_by_sweeping(app: Any, match: Match, rounds: int = 400) -> None:
    """Let the sweeper play the moves the server still owes (a match of bots
    plays at most AUTO_MOVES moves per request)."""
    sweep = sweeper.Sweeper(app.extensions[EXTENSION])
    for _ in range(rounds):
        if match.admin_view()["status"] == "finished":
            return
        sweep.sweep()
    raise AssertionError("the sweeper did not finish the match")


@pytest.mark.parametrize("game", GAMES)
def test_me_against_two_heuristic_bots(app: Any, api: Api, game: str) -> None:
    """The README's example: the bots' moves are inside every response (its
    events reach the final version; the view is at it), the record says
    ``"by": "bot"`` for theirs and nothing for mine."""
    match = create(api, game, ["me", {"name": "Bobo", **H}, {"name": "Cleo", **H}], **sized(game))
    seats = match.created["seats"]
    assert [("token" in s, s.get("bot")) for s in seats] == [(True, None), (False, "heuristic"), (False, "heuristic")]
    state = match.created["state"]
    assert match.created["version"] == state["version"] and state["to_act"] in ([0], [])
    for body in play_me(app, match, random.Random(3)):
        assert body["events"][-1]["version"] == body["version"] == body["state"]["version"]
        versions = [e["version"] for e in body["events"]]
        assert versions == sorted(versions)
    record = api.record(match.id, match.admin).json
    assert record["moves"], record
    for entry in record["moves"]:
        assert entry.get("by") == ("bot" if entry["seat"] else None), entry
    assert all(m["move"]["type"] != "resign" for m in record["moves"])


@pytest.mark.parametrize("game", GAMES)
def test_bot_seats_replay_identically(app: Any, api: Api, game: str) -> None:
    """A match of bots only, created twice with the same seed, plays the same
    record (the bots are seeded from the match seed and the version)."""
    players = [{"name": "a", "bot": "random"}, {"name": "b", **H}, {"name": "c", **H}]
    records = []
    for _ in range(2):
        match = create(api, game, players, seed=123, **sized(game))
        finish_by_sweeping(app, match)
        records.append(api.record(match.id).json)
    assert records[0] == records[1]
    assert all(e["by"] == "bot" for e in records[0]["moves"])


def test_a_bot_gets_exactly_its_seats_view_and_moves(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a bot is called with equals, version for version, what GET
    returns to that seat and what its legal-moves list holds (checked by
    replaying the record into a match of token seats)."""
    calls: list[tuple[int, int, dict[str, Any], list[dict[str, Any]]]] = []
    decide = bots.decide

    def spy(kind: str, game: str, seat: int, seed: int, version: int, view: Any, moves: Any, match: Any) -> Any:
        calls.append((seat, version, view, moves))
        return decide(kind, game, seat, seed, version, view, moves, match)

    monkeypatch.setattr(bots, "decide", spy)  # biberbande's bots decide inline
    match = create(api, "biberbande", [{"name": "Bobo", **H}, "me", {"name": "Cleo", "bot": "random"}], seed=9,
                   options={"rounds": 1})
    rng = random.Random(1)
    for _ in range(8):
        if match.seat_view(1)["status"] == "finished":
            break
        move = rng.choice(match.legal(1))
        assert match.api.move(match.id, match.token(1), strip_label(move)).status == 200
    record = api.record(match.id, match.admin).json
    assert len(calls) >= 4
    fresh = api.create(["Bobo", "me", "Cleo"], seed=9, options={"rounds": 1})
    done = 0
    for seat, version, view, moves in calls:
        for entry in record["moves"][done:version]:
            r = api.move(fresh.id, fresh.admin, entry["move"], entry["version"] - 1, seat=entry["seat"])
            assert r.status == 200, r
        done = version
        assert view["viewer"] == {"role": "seat", "seat": seat}
        assert comparable(view) == comparable(fresh.seat_view(seat))
        assert moves == fresh.legal(seat)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("n", [2, 4])
def test_resign(api: Api, game: str, n: int) -> None:
    """A seat not to act resigns; from then on its fallback is played at once
    (``by: "resigned"``); the admin resigns others for them; the last one
    standing wins at once, resigners ranked later-above-earlier."""
    match = api.create(n, game=game, seed=4)
    to_act = match.admin_view()["to_act"][0]
    idle = next(s for s in range(n) if s != to_act)
    r = api.move(match.id, match.token(idle), {"type": "resign"})
    assert r.status == 200, r
    assert {"type": "resigned", "seat": idle, "version": r.json["version"]} in r.json["events"]
    for seat in range(n):
        assert all(m["type"] != "resign" for m in api.legal(match.id, match.token(seat)).json["moves"])
    if n == 2:
        final = r.json["state"]
        assert final["status"] == "finished" and final["result"]["winners"] == [to_act]
        assert final["result"]["ranking"] == [[to_act], [idle]]
        assert r.json["events"][-1]["type"] == "match_ended"
        return
    assert_problem(api.move(match.id, match.token(idle), {"type": "resign"}), 422, "illegal_move")
    rng = random.Random(2)
    for _ in range(60):                      # play until the resigned seat has had a turn
        view = match.admin_view()
        seat = view["to_act"][0]
        assert seat != idle
        match.play(seat, strip_label(rng.choice(match.legal(seat))))
        record = api.record(match.id, match.admin).json
        if any(e.get("by") == "resigned" for e in record["moves"]):
            break
    entries = [e for e in api.record(match.id, match.admin).json["moves"] if e.get("by") == "resigned"]
    assert entries and all(e["seat"] == idle for e in entries)
    others = [s for s in range(n) if s != idle]
    for seat in others[:-1]:
        r = api.move(match.id, match.admin, {"type": "resign"}, seat=seat)
        assert r.status == 200, r
    final = match.admin_view()
    assert final["status"] == "finished"
    assert final["result"]["winners"] == [others[-1]]
    assert final["result"]["ranking"] == [[others[-1]], *([s] for s in reversed(others[:-1])), [idle]]
    assert_problem(api.move(match.id, match.token(others[-1]), {"type": "resign"}), 409, "match_finished")


def test_resigned_and_bot_moves_replay_in_history(api: Api) -> None:
    """A finished match's events are derived again from its record
    (compaction): equal to the events it emitted while it was played."""
    match = create(api, "mein-lieber-biber", ["me", {"name": "Bobo", **H}, "you"], options={"rounds": 1})
    api.move(match.id, match.token(2), {"type": "resign"})
    live = match.events(match.admin)
    rng = random.Random(7)
    while (view := match.admin_view())["status"] != "finished":
        legal = api.legal(match.id, match.admin, seat=0).json["moves"]
        r = api.move(match.id, match.admin, strip_label(rng.choice(legal)), view["version"], seat=0)
        assert r.status == 200, r
        live += [e for e in events_of(r.json) if e["version"] > live[-1]["version"]]
    assert match.events(match.admin) == live


def test_a_match_of_bots_stops_after_auto_moves_and_the_sweeper_goes_on(app: Any, api: Api) -> None:
    """A request plays at most AUTO_MOVES server moves; the match is then
    due in the schedule at once, and the sweeper plays it to its end."""
    match = create(api, "biberclan", [{"name": "a", "bot": "random"}, {"name": "b", "bot": "random"}])
    assert match.created["version"] == service.domain.moves.AUTO_MOVES
    assert match.created["state"]["status"] == "active"
    due = app.extensions[EXTENSION].moves.schedule.due(2**62, 10)
    assert [m for m, _ in due] == [match.id]
    finish_by_sweeping(app, match)
    assert app.extensions[EXTENSION].moves.schedule.due(2**62, 10) == []


def test_an_idempotent_retry_answers_the_bots_moves_too(api: Api) -> None:
    """The same Idempotency-Key again returns the first response byte for
    byte: the caller's move and every bot move the request played after it."""
    match = create(api, "biberbande", ["me", {"name": "Bobo", **H}], options={"rounds": 1})
    token, saw_bot = match.token(0), False
    for key in ("k1", "k2", "k3", "k4"):
        move = strip_label(match.legal(0)[0])
        first = api.move(match.id, token, move, headers={"Idempotency-Key": key})
        assert first.status == 200, first
        again = api.move(match.id, token, move, headers={"Idempotency-Key": key})
        assert (again.status, again.body) == (200, first.body)
        saw_bot = saw_bot or any(e["seat"] == 1 for e in first.json["events"])
        if match.seat_view(0)["status"] == "finished":
            break
    assert saw_bot
