"""Resigning, fallback moves and ``timed_out`` in the engine (contract 1.1,
"Clocks, fallback moves and resigning"): written once in ``engine/core.py``
for every game, checked here in 2- and 4-seat matches of each game."""
from __future__ import annotations

import random
from typing import Any

import pytest

from engine import REGISTRY
from engine.core import (
    ADMIN_VIEWER,
    BY_CLOCK,
    FINISHED,
    SPECTATOR_VIEWER,
    Game,
    IllegalMove,
    MatchFinished,
    NotYourTurn,
    seat_viewer,
)
from engine.declaration import PUBLIC

GAMES = [g.id for g in REGISTRY]
RESIGN = {"type": "resign"}


def _sizes(game: Game) -> list[int]:
    return sorted({game.min_players, min(4, game.max_players)} | ({2} if game.min_players <= 2 else set()))


CASES = [(g.id, n) for g in REGISTRY for n in _sizes(g)]


def _new(game_id: str, n: int, seed: int = 7) -> tuple[Game, dict[str, Any]]:
    game = REGISTRY.get(game_id)
    assert game is not None
    state, _, _ = game.create([f"p{i}" for i in range(n)], seed, {})
    return game, state


def _all_views(game: Game, state: dict[str, Any], n: int) -> None:
    for viewer in (ADMIN_VIEWER, SPECTATOR_VIEWER, *(seat_viewer(s) for s in range(n))):
        game.view(state, viewer)


def _finish(game: Game, state: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Play to the end: resigned seats by their fallback, the others at random."""
    resigned = state.get("resigned", [])
    for _ in range(20000):
        if game.status(state) == FINISHED:
            return state
        seat = game.to_act(state)[0]
        move = game.fallback(state, seat) if seat in resigned else rng.choice(game.legal_moves(state, seat))
        state, _ = game.play(state, seat, move)
    raise AssertionError("the match did not end")


@pytest.mark.parametrize("game_id,n", CASES)
def test_resign_is_open_to_any_seat_and_never_listed(game_id: str, n: int) -> None:
    """Any seat may resign, to act or not; ``resign`` is in no legal-moves list."""
    game, state = _new(game_id, n)
    idle = next(s for s in range(n) if s not in game.to_act(state))
    assert all(m["type"] != "resign" for s in range(n) for m in game.legal_moves(state, s))
    with pytest.raises(NotYourTurn):
        game.play(state, idle, game.legal_moves(state, game.to_act(state)[0])[0])
    after, events = game.play(state, idle, RESIGN)
    assert events[0] == {"type": "resigned", "seat": idle}
    assert after["resigned"] == [idle]
    assert "resigned" not in state, "play mutated the state it was given"
    for viewer in (ADMIN_VIEWER, SPECTATOR_VIEWER, seat_viewer(0)):
        assert game.redact_event(events[0], viewer) == events[0]
    with pytest.raises(IllegalMove if n > 2 else MatchFinished, match="resigned already" if n > 2 else None):
        game.play(after, idle, RESIGN)
    with pytest.raises(IllegalMove, match="no parameters"):
        game.play(state, idle, {"type": "resign", "seat": 1})


@pytest.mark.parametrize("game_id,n", CASES)
def test_last_seat_standing_wins_at_once(game_id: str, n: int) -> None:
    """All but one resign: the match ends at once; the later resigner ranks
    above the earlier; every viewer can still see the finished match."""
    game, state = _new(game_id, n)
    order = list(range(1, n))[::-1]          # n-1 first, …, 1 last
    for i, seat in enumerate(order):
        state, events = game.play(state, seat, RESIGN)
        if i < len(order) - 1:
            assert game.status(state) != FINISHED
    assert game.status(state) == FINISHED and game.to_act(state) == []
    assert state["phase"] == game.finished_phase
    result = game.result(state)
    assert result is not None
    assert result["winners"] == [0]
    assert result["ranking"] == [[0]] + [[s] for s in reversed(order)]
    assert [e["type"] for e in events] == ["resigned", "match_ended"]
    assert events[-1]["reason"] == "resigned" and events[-1]["result"] == result
    _all_views(game, state, n)
    with pytest.raises(MatchFinished):
        game.play(state, 0, RESIGN)


@pytest.mark.parametrize("game_id,n", [c for c in CASES if c[1] >= 3])
def test_resigned_seats_rank_last_when_the_match_ends_normally(game_id: str, n: int) -> None:
    """A match that ends by its own rules ranks the resigned seats below all
    others, the later resigner above the earlier, in the result and in
    ``match_ended``."""
    game, state = _new(game_id, n, seed=11)
    state, _ = game.play(state, 2, RESIGN)
    state, _ = game.play(state, 0, RESIGN)
    final = _finish(game, state, random.Random(5))
    result = game.result(final)
    assert result is not None
    assert result["ranking"][-2:] == [[0], [2]]
    assert not {0, 2} & {s for group in result["ranking"][:-2] for s in group}
    assert result["winners"] == result["ranking"][0]


@pytest.mark.parametrize("game_id", GAMES)
def test_fallback_is_a_legal_move_of_the_preferred_type(game_id: str) -> None:
    """The fallback is always listed; where the game names a safe move type
    (``fallback_types``) and it is legal, that type is chosen."""
    game, state = _new(game_id, 2, seed=3)
    rng = random.Random(1)
    for _ in range(400):
        if game.status(state) == FINISHED:
            break
        seat = game.to_act(state)[0]
        legal = game.legal_moves(state, seat)
        fallback = game.fallback(state, seat)
        assert fallback in legal
        offered = [k for k in game.fallback_types if any(m["type"] == k for m in legal)]
        assert fallback["type"] == (offered[0] if offered else legal[0]["type"])
        state, _ = game.play(state, seat, rng.choice(legal))


@pytest.mark.parametrize("game_id", GAMES)
def test_a_clock_fallback_starts_with_timed_out(game_id: str) -> None:
    """``by="clock"``: ``timed_out {seat}`` comes before the move's own events,
    and the move is otherwise the same as the seat playing it."""
    game, state = _new(game_id, 2)
    seat = game.to_act(state)[0]
    move = game.fallback(state, seat)
    own_state, own = game.play(state, seat, move)
    clock_state, timed = game.play(state, seat, move, by=BY_CLOCK)
    assert timed[0] == {"type": "timed_out", "seat": seat}
    assert timed[1:] == own and clock_state == own_state


def test_every_game_declares_the_core_events_public() -> None:
    for game in REGISTRY:
        for kind in ("resigned", "timed_out", "match_ended"):
            fields = {"reason": "resigned", "result": {}} if kind == "match_ended" else {}
            event = {"type": kind, "seat": None, **fields}
            assert game.redact_event(event, SPECTATOR_VIEWER) == event, (game.id, kind)
            assert all(f.visibility is PUBLIC for f in game.events[kind].fields.values()), (game.id, kind)


@pytest.mark.parametrize("game_id", GAMES)
def test_resign_moves_and_events_match_the_game_schemas(game_id: str) -> None:
    """The OpenAPI document's per-game unions hold ``resign``, ``resigned``,
    ``timed_out`` and the ``match_ended`` of a resignation."""
    from service.http.openapi_games import schema_names
    from tests.service.test_game_schemas import _check, _document, _json_schema, _validator

    components = _json_schema(_document()["components"]["schemas"])
    names = schema_names(game_id)
    move_v, event_v = _validator(components, names["move"]), _validator(components, names["event"])
    _check(move_v, RESIGN, "resign")
    game, state = _new(game_id, 2)
    seat = game.to_act(state)[0]
    _, timed = game.play(state, seat, game.fallback(state, seat), by=BY_CLOCK)
    _, ended = game.play(state, 1, RESIGN)
    for event in [timed[0], *ended]:
        for viewer in (ADMIN_VIEWER, SPECTATOR_VIEWER, seat_viewer(0)):
            _check(event_v, {**game.redact_event(event, viewer), "version": 1}, f"{game_id} {event['type']}")
