"""The 13 Beavers heuristic bot (``bots/thirteen_beavers.py``).

Crafted views test its key decisions against the rules
(``docs/games/thirteen-beavers.md``, rule ids ``TB-x.y``); seeded engine
playouts test that it only ever returns a listed move and that matches end.
"""
from __future__ import annotations

from collections import Counter

import pytest

from bots.random_bot import RandomBot
from bots.thirteen_beavers import HeuristicBot
from engine import REGISTRY
from engine.core import seat_viewer

GAME = "thirteen-beavers"
G = REGISTRY.games[GAME]
DECK = [str(v) for v in range(1, 14) for _ in range(4)]


def view_of(state: dict, seat: int, version: int = 0) -> dict:
    """The seat's HTTP view of ``state`` (GET /v1/matches/{id})."""
    return {"match_id": "x", "game": GAME, "version": version,
            "viewer": {"role": "seat", "seat": seat}, **G.view(state, seat_viewer(seat))}


def crafted(board: str = "standard", beaver: int = 0, dam: int = 0, face: str = "7", gone: tuple[str, ...] = (),
            fish: tuple[str, ...] = (), answers: int = 1, other_dam: int = 0) -> tuple[dict, list[dict]]:
    """Seat 0 to act in a 2-seat match: its beaver and dam, the face-up card,
    the discard ``gone``, its held fish (taken from the pond) and ``answers``."""
    state, _, _ = G.create(["me", "you"], 1, {"board": board})
    left = Counter(DECK)
    left.subtract([face, *gone])
    state.update(beaver=[beaver, other_dam], dam=[dam, other_dam], face_up=face, discard=list(gone),
                 draw=sorted(left.elements()), answers=answers, turbo=False, active=0)
    state["fish"][0] = list(fish)
    for f in fish:
        state["pond"].remove(f)
    return view_of(state, 0), G.legal_moves(state, 0)


def choice(**kwargs) -> dict:
    view, moves = crafted(**kwargs)
    move = HeuristicBot(GAME, 0, 7).choose(view, moves)
    assert any(move is m for m in moves)
    return move


def test_counts_cards_tb_10_1():
    """TB-10.1: the draw pile is the deck minus face-up and discard, so with
    every card above the face-up 5 gone the bot guesses lower (TB-4.5)."""
    gone = [str(v) for v in range(6, 14) for _ in range(4)]
    assert choice(face="5", gone=gone, answers=0) == {"type": "guess", "dir": "lower"}


def test_dams_on_a_risky_card_and_goes_on_with_a_safe_one_tb_4_6_tb_4_12():
    """Four spaces at stake (dam 8, beaver 12): a 7 face up is close to a coin
    flip, so it dams (TB-4.12); a 1 cannot be beaten lower, so it guesses higher."""
    assert choice(beaver=12, dam=8, face="7") == {"type": "dam"}
    assert choice(beaver=12, dam=8, face="1") == {"type": "guess", "dir": "higher"}


def test_dams_before_lava_tb_1_6():
    """TB-1.6, TB-4.2: lava 18–20 allows no dam, so even on a safe 1 it dams on 17."""
    assert choice(beaver=17, dam=8, face="1") == {"type": "dam"}


def test_sprints_when_an_opponent_is_about_to_win_tb_6_1():
    """TB-6.1: the first beaver in Paradise wins; with the opponent's dam on 29
    a safe dam on 17 is worthless, so it keeps guessing."""
    assert choice(beaver=17, dam=8, face="7") == {"type": "dam"}
    assert choice(beaver=17, dam=8, face="7", other_dam=29)["type"] == "guess"


def test_arms_vision_instead_of_damming_tb_4_6():
    """TB-4.6, D12: an armed vision turns a wrong guess right, so the same
    risky spot it dams without a vision is worth a guess with one."""
    assert choice(beaver=12, dam=8, face="7", fish=("vision",)) in (
        {"type": "guess", "dir": "higher", "vision": True}, {"type": "guess", "dir": "lower", "vision": True})


def test_uses_turbo_at_turn_start_tb_4_4():
    """TB-4.4, D11: a held turbo doubles every right guess of the turn."""
    assert choice(beaver=9, dam=9, face="7", fish=("turbo",), answers=0) == {"type": "use_turbo"}


def test_takes_the_rapids_on_a_safe_card_tb_4_7():
    """TB-4.7: on the rapids a right answer moves 3; with a 1 face up only an
    equal card can stop it."""
    assert choice(beaver=14, dam=14, face="1", answers=0) == {"type": "rapids", "dir": "higher"}


def test_names_the_likeliest_value_on_the_avenue_tb_4_8():
    """TB-4.8: an exact answer jumps to the exit; with only 2s, 7s, 9s and 12s
    left it names a value with all four copies still in the pile."""
    gone = [c for c in DECK if c not in ("2", "7", "9", "12")]
    move = choice(beaver=3, dam=3, face="7", gone=gone, answers=0)
    assert move["type"] == "avenue" and move["value"] in ("2", "9", "12")


def test_never_dams_on_lava_tb_4_2():
    """TB-4.2 (6): no dam on lava; the bot answers with a listed guess."""
    view, moves = crafted(beaver=6, dam=5, face="7")
    assert all(m["type"] == "guess" for m in moves)
    assert HeuristicBot(GAME, 0, 1).choose(view, moves)["type"] == "guess"


@pytest.mark.parametrize("board,players,seed", [("standard", 2, 11), ("standard", 3, 12),
                                                ("short", 2, 13), ("short", 4, 14)])
def test_playouts_return_listed_moves_and_finish(board, players, seed):
    """Seeded engine playouts, heuristic bots on even seats and random ones on
    odd seats: every choice is an element of the legal moves (TB-4.2) and the
    race ends in Paradise (TB-6.1) long before ``max_turns``."""
    bots = [HeuristicBot(GAME, s, seed + s) if s % 2 == 0 else RandomBot(GAME, s, seed + s)
            for s in range(players)]
    state, _, _ = G.create([f"p{s}" for s in range(players)], seed, {"board": board})
    version = 0
    while G.status(state) != "finished":
        seat = G.to_act(state)[0]
        moves = G.legal_moves(state, seat)
        move = bots[seat].choose(view_of(state, seat, version), moves)
        assert any(move is m for m in moves), move
        state, _ = G.play(state, seat, move)
        version += 1
    result = G.result(state)
    assert result is not None and result["reason"] == "paradise"
    assert state["turn"] < 500
