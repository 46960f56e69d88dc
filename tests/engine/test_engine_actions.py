"""Moves as numbers (contract "Moves as numbers", ``engine.actions``): every
registered game's listed moves have ids 0 … actions − 1, unique in a list,
mapped back to the same move, the same at every player count; a posted
``{"id": k}`` is the listed move with that id; a declaration whose parameter
values are not known fails registration."""
from __future__ import annotations

import dataclasses
import random
from typing import Any

import orjson
import pytest

from engine import REGISTRY
from engine.actions import ABSENT, ActionSpace
from engine.core import ACTIVE, FINISHED, Game, IllegalMove, MatchFinished, NotYourTurn, Registry, same_move
from engine.declaration import BOOL, SEAT, STR, DeclarationError, MoveType, array, enum
from tests.playout import Step, play_out

GAMES = list(REGISTRY)


def _player_counts(game: Game) -> list[int]:
    return sorted({game.min_players, (game.min_players + game.max_players) // 2, game.max_players})


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_listed_moves_have_unique_stable_ids_that_map_back(game: Game) -> None:
    """Random playouts at several player counts: every listed move's id is in
    0 … actions − 1, unique within its list, ``move_of_action`` gives the
    listed move back, and one move has one id (and one id one move) over all
    player counts."""
    ids_of: dict[bytes, int] = {}
    moves_of: dict[int, bytes] = {}
    seen_counts: dict[int, set[int]] = {}

    def check(step: Step) -> None:
        state = step.after
        if state["status"] != ACTIVE:
            return
        for seat in game.to_act(state):
            legal = game.legal_moves(state, seat)
            ids = [game.action_id(m) for m in legal]
            assert all(0 <= i < game.actions for i in ids), (legal, ids)
            assert len(set(ids)) == len(ids), f"two listed moves share an id: {legal}"
            for move, action in zip(legal, ids):
                assert game.move_of_action(state, seat, action) == move
                key = orjson.dumps({k: v for k, v in move.items() if k != "label"}, option=orjson.OPT_SORT_KEYS)
                assert ids_of.setdefault(key, action) == action, f"{key!r} has two ids"
                assert moves_of.setdefault(action, key) == key, f"id {action} names two moves"
                seen_counts.setdefault(action, set()).add(len(game.scores_of(state)))

    for n in _player_counts(game):
        for seed in (1, 2):
            play_out(game, n, seed, dict(game.declaration.presets["short"]), check=check)
    assert len(ids_of) > 10
    assert any(len(counts) > 1 for counts in seen_counts.values()), "no move was seen at two player counts"


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_the_space_is_a_bijection_without_resign(game: Game) -> None:
    """Every id decodes to a move of a declared type whose id it is; the core
    ``resign`` has none."""
    space = game.action_space
    for action in range(game.actions):
        move = space.move_of(action)
        assert move is not None and game.declaration.move(move["type"]) is not None
        assert game.action_id(move) == action
    assert space.move_of(game.actions) is None and space.move_of(-1) is None
    with pytest.raises(ValueError, match="resign"):
        game.action_id({"type": "resign"})


def test_ids_follow_declaration_order_with_mixed_radix() -> None:
    """The documented numbering: blocks in declared order, the first
    parameter most significant, an optional parameter's absence first."""
    space = ActionSpace((MoveType("a"), MoveType("b", {"x": enum("p", "q"), "who": SEAT, "on": BOOL}),
                         MoveType("c", {"k": enum(1, 2)}, optional=("k",))), max_players=3)
    assert space.size == 1 + 2 * 3 * 2 + 3
    assert space.id_of({"type": "a"}) == 0
    assert space.id_of({"type": "b", "x": "q", "who": 2, "on": False, "label": "ignored"}) == 1 + 6 + 4
    assert space.id_of({"type": "c"}) == 13 and space.id_of({"type": "c", "k": 2}) == 15
    assert space.blocks[2].params[0].values == (ABSENT, 1, 2)
    with pytest.raises(ValueError, match="outside"):
        space.id_of({"type": "b", "x": "p", "who": 1, "on": 1})  # 1 is not true
    with pytest.raises(ValueError, match="undeclared"):
        space.id_of({"type": "a", "extra": 1})


# --------------------------------------------------------------------------
# Declarations: a parameter's values must be known at registration.
# --------------------------------------------------------------------------
BASE = REGISTRY.get("biberbande")


def _with_move(move: MoveType) -> Game:
    """Biberbande with its ``knock`` move type replaced by ``move``."""
    assert BASE is not None
    moves = tuple(move if m.type == "knock" else m for m in BASE.declaration.moves)
    cls = type("Changed", (type(BASE),), {"id": "changed", "declaration": dataclasses.replace(
        BASE.declaration, moves=moves)})
    game: Game = cls()
    return game


def test_a_parameter_without_known_values_fails_registration() -> None:
    with pytest.raises(DeclarationError, match="'changed'.*'knock'.*'words'.*domains"):
        Registry().register(_with_move(MoveType("knock", {"words": STR})))
    with pytest.raises(DeclarationError, match="'words' must not be listed"):
        Registry().register(_with_move(MoveType("knock", {"words": enum("a")}, domains={"words": ("a",)})))
    game = Registry().register(_with_move(MoveType("knock", {"cards": array(STR)},
                                                   domains={"cards": (["1"], ["1", "2"])})))
    knock = game.action_space.blocks[-2]
    assert knock.move.type == "knock" and knock.size == 2
    assert game.action_id({"type": "knock", "cards": ["1", "2"]}) == knock.first + 1


# --------------------------------------------------------------------------
# Posting a move by its id.
# --------------------------------------------------------------------------
def _position(game: Game, seed: int) -> tuple[dict[str, Any], int, list[dict[str, Any]]]:
    """A state some random moves in, with a seat to act and several legal moves."""
    rng = random.Random(seed)
    state, _, _ = game.create(["a", "b", "c"][:max(game.min_players, 3)], seed, {})
    for _ in range(rng.randrange(3, 12)):
        seat = game.to_act(state)[0]
        state, _ = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
        if game.status(state) == FINISHED:
            break
    seat = game.to_act(state)[0]
    return state, seat, game.legal_moves(state, seat)


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_a_move_posted_by_id_is_the_listed_move(game: Game) -> None:
    state, seat, legal = _position(game, 7)
    move = legal[-1]
    action = game.action_id(move)
    assert game.play(state, seat, {"id": action}) == game.play(state, seat, move)
    assert game.posted_move(state, seat, {"id": action, "label": "x"}) == move
    assert game.posted_move(state, seat, {**move, "id": action}) == move
    other = next(m for m in legal if not same_move(m, move)) if len(legal) > 1 else {"type": "nonsense"}
    with pytest.raises(IllegalMove, match="other fields"):
        game.play(state, seat, {**other, "id": action})
    unlisted = next(i for i in range(game.actions) if i not in {game.action_id(m) for m in legal})
    with pytest.raises(IllegalMove, match=f"no legal move has id {unlisted} now.*legal ids now: "):
        game.play(state, seat, {"id": unlisted})
    for wrong in (game.actions, -1, True, "1", 1.0):
        with pytest.raises(IllegalMove):
            game.play(state, seat, {"id": wrong})
    waiting = next((s for s in range(len(game.scores_of(state))) if s not in game.to_act(state)), None)
    if waiting is not None:
        with pytest.raises(NotYourTurn):
            game.play(state, waiting, {"id": action})


def test_an_id_with_another_spelling_of_its_move_is_accepted() -> None:
    """13 Beavers' ``"vision": false`` is the plain guess (``normalize_move``):
    with the plain guess's id it names the same move."""
    game = REGISTRY.get("thirteen-beavers")
    assert game is not None
    state, seat, legal = _position(game, 3)
    guess = next(m for m in legal if m["type"] == "guess" and "vision" not in m)
    assert game.posted_move(state, seat, {**guess, "vision": False, "id": game.action_id(guess)}) == guess


def test_a_finished_match_refuses_an_id_as_finished() -> None:
    game = GAMES[0]
    playout = play_out(game, game.min_players, 5, dict(game.declaration.presets["short"]))
    with pytest.raises(MatchFinished):
        game.play(playout.final, 0, {"id": 0})
    assert game.move_of_action(playout.final, 0, 0) is None
