"""Hidden information over HTTP for every game of ``engine.REGISTRY``
(issue 11; tests/service/test_api_leaks.py judges Biberbande in depth).

Random matches are played through the API (embedded store) while the same
moves are applied to the engine here.  After every move, each viewer's view,
the move's events and legal moves over HTTP equal the engine's redaction for
that viewer (spectator, each seat), and at the end its whole event log does;
another seat's legal moves are 403; and no event field the engine hides from
a viewer carries the admin's value for it."""
from __future__ import annotations

import random
from typing import Any

import pytest

from engine import REGISTRY
from engine.core import SPECTATOR_VIEWER, seat_viewer
from tests import conftest
from tests.conftest import examples
from tests.http_helpers import Api, strip_label

GAMES = REGISTRY.ids()
#: moves of each random match (``--fast``: fewer)
MOVES = 15 if conftest.FAST else 30
#: the random matches' seeds (``--fast``: the first)
SEEDS = [1, 2][:examples(2)]


def _game(game_id: str) -> Any:
    game = REGISTRY.get(game_id)
    assert game is not None
    return game


def _strip(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "version"} for e in events]


def _hidden_fields(admin: dict[str, Any], shown: dict[str, Any]) -> list[str]:
    """Fields of an admin event that its redaction for a viewer changed."""
    return [k for k, v in admin.items() if k not in shown or shown[k] != v]


def _same_events(game: Any, got: list[dict[str, Any]], log: list[dict[str, Any]], viewer: Any, where: Any) -> None:
    """Events read over HTTP are the engine's ``log`` as redacted for ``viewer``."""
    assert _strip(got) == _strip(game.redact_events(log, viewer)), where
    for e, admin_e in zip(got, log):  # a field the redaction changed never carries the admin's value
        for key in _hidden_fields(admin_e, game.redact_event(admin_e, viewer)):
            assert e.get(key) != admin_e[key] or admin_e[key] is None, (*where, key)


@pytest.mark.parametrize("game_id", GAMES)
@pytest.mark.parametrize("seed", SEEDS)
def test_every_viewer_sees_exactly_the_engines_redaction(embedded_api: Api, game_id: str, seed: int):
    game = _game(game_id)
    n = min(3, game.max_players)
    match = embedded_api.create(n, game=game_id, seed=seed)
    created = match.created
    state, events, _options = game.create([s["name"] for s in created["seats"]], created["seed"], {})
    log = [{**e, "version": 0} for e in events]
    rng = random.Random(f"{game_id}:{seed}")
    viewers = [(None, SPECTATOR_VIEWER)] + [(match.token(k), seat_viewer(k)) for k in range(n)]
    for version in range(MOVES + 1):
        for token, viewer in viewers:
            body = embedded_api.view(match.id, token).json
            expected = game.view(state, viewer)
            assert {k: body[k] for k in expected} == expected, (game_id, version, viewer)
            got = embedded_api.events(match.id, token, after=version - 1).json["events"]
            _same_events(game, got, [e for e in log if e["version"] == version], viewer, (game_id, version, viewer))
            if viewer.seat is not None:
                legal = embedded_api.legal(match.id, token).json["moves"]
                assert [strip_label(m) for m in legal] == [strip_label(m) for m in game.legal_moves(state, viewer.seat)]
                other = (viewer.seat + 1) % n
                assert embedded_api.legal(match.id, token, seat=other).status == 403
        to_act = game.to_act(state)
        if state["status"] != "active" or not to_act or version == MOVES:
            break
        seat = to_act[0]
        move = strip_label(rng.choice(game.legal_moves(state, seat)))
        r = embedded_api.move(match.id, match.token(seat), move, version)
        assert r.status == 200, r
        state, new_events = game.apply(state, seat, move)
        log += [{**e, "version": version + 1} for e in new_events]
    for token, viewer in viewers:
        got = embedded_api.events(match.id, token, after=-1).json["events"]
        _same_events(game, got, log, viewer, (game_id, "whole log", viewer))
