"""Moves as numbers over HTTP (api.md "Moves as numbers", 1.2): the
catalogue's ``actions``, an ``id`` on every listed move (``/legal-moves``,
``legal_moves`` of a view and of a move's answer), a move posted by its id
alone or beside its fields, and the refusals.  The plain requests run through
the fast path (``tests/test_hot_paths.py`` compares it with Flask's)."""
from __future__ import annotations

import random
from typing import Any

import pytest

from engine import REGISTRY
from tests.http_helpers import Api, Match, assert_problem, strip_label
from tests.service.test_api_all_games import _short_options

GAMES = [g.id for g in REGISTRY]


def _match(api: Api, game: str, seed: int = 11) -> Match:
    return api.create(3, game=game, seed=seed, options=_short_options(api.get(f"/v1/games/{game}").json))


def _to_act(m: Match) -> int:
    return int(m.admin_view()["to_act"][0])


def test_the_catalogue_carries_actions(api: Api) -> None:
    games = {g["id"]: g for g in api.get("/v1/games").json["games"]}
    for game in REGISTRY:
        assert games[game.id]["actions"] == game.actions > 0
        assert api.get(f"/v1/games/{game.id}").json["actions"] == game.actions


@pytest.mark.parametrize("game", GAMES)
def test_listed_moves_carry_their_ids_and_play_by_id(embedded_api: Api, game: str) -> None:
    """A match played to its end (or 40 moves) by ids alone: every list
    (legal-moves, ``?legal=true``, the move's answer) carries the engine's
    ids; the record logs the listed move each id named."""
    engine = REGISTRY.get(game)
    assert engine is not None
    api, rng = embedded_api, random.Random(game)
    m = _match(api, game)
    for _ in range(40):
        seat = _to_act(m)
        listed = m.legal(seat)
        assert [mv["id"] for mv in listed] == [engine.action_id(strip_label(mv)) for mv in listed]
        view = api.view(m.id, m.token(seat), params={"legal": "true"}).json
        assert view["legal_moves"] == {str(seat): listed}
        chosen = rng.choice(listed)
        answer = api.post(f"/v1/matches/{m.id}/moves", {"move": {"id": chosen["id"]}}, token=m.token(seat),
                          params={"legal": "true"})
        assert answer.status == 200, answer
        m.log.append((seat, strip_label(chosen)))
        for moves in answer.json["legal_moves"].values():
            assert all(mv["id"] == engine.action_id(strip_label(mv)) for mv in moves)
        if answer.json["state"]["status"] == "finished":
            break
    logged = [(e["seat"], e["move"]) for e in api.record(m.id, m.admin).json["moves"] if "by" not in e]
    assert logged == m.log


def test_a_move_with_id_and_fields_must_name_one_move(api: Api) -> None:
    m = _match(api, "mein-lieber-biber")
    seat = _to_act(m)
    first, second, *_ = m.legal(seat)
    token = m.token(seat)
    body = assert_problem(api.move(m.id, token, {**strip_label(second), "id": first["id"]}), 422, "illegal_move")
    assert f"id {first['id']} names" in body["detail"] and "other fields" in body["detail"]
    assert api.move(m.id, token, {**second}).status == 200  # the listed move, id and all


def test_an_id_that_names_no_listed_move_is_refused(api: Api) -> None:
    m = _match(api, "thirteen-beavers")
    seat = _to_act(m)
    listed = {mv["id"] for mv in m.legal(seat)}
    unlisted = next(i for i in range(REGISTRY.games["thirteen-beavers"].actions) if i not in listed)
    for wrong in (unlisted, -1, 10**6):
        body = assert_problem(api.move(m.id, m.token(seat), {"id": wrong}), 422, "illegal_move")
        assert f"no legal move has id {wrong} now" in body["detail"], body
        assert "legal ids now: " in body["detail"]
    other = next(s for s in range(m.n) if s != seat)
    assert_problem(api.move(m.id, m.token(other), {"id": min(listed)}), 409, "not_your_turn")


@pytest.mark.parametrize("move", [{"id": "3"}, {"id": True}, {"id": 1.5}, {"id": None}, {"type": "draw", "id": "x"}])
def test_an_id_that_is_not_an_integer_is_a_bad_request(api: Api, move: dict[str, Any]) -> None:
    m = _match(api, "biberbande")
    body = assert_problem(api.move(m.id, m.token(_to_act(m)), move), 400, "invalid_request")
    assert "'id' must be an integer" in str(body)
