"""The Biberbande heuristic bot (``bots/biberbande.py``).

Crafted seat views test the key decisions (rule ids from ``docs/games/biberbande.md``);
seeded engine playouts check that the bot always returns a listed move and that
matches finish.
"""
from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from bots import biberbande
from bots.biberbande import HeuristicBot
from engine import REGISTRY
from engine.core import seat_viewer

G = REGISTRY.games["biberbande"]
UNKNOWN: list[str | None] = [None] * 4


def view(phase: str, known: list[list[str | None]], discard: list[str], *,
         held: str | None = None, scores: list[int] | None = None) -> dict:
    """A seat-0 view shaped like BB-7 (other fields as in BB-7.3)."""
    n = len(known)
    return {
        "match_id": "x", "game": "biberbande", "version": 7, "status": "active",
        "viewer": {"role": "seat", "seat": 0}, "round": 1, "rounds": 4, "phase": phase,
        "to_act": [0],
        "players": [{"seat": s, "name": f"p{s}", "display": list(UNKNOWN), "known": row}
                    for s, row in enumerate(known)],
        "board": {"starter": 1, "turn": n + 1, "current_seat": 0, "turn_limit": 30,
                  "max_turn": 30 * n, "knocker": None, "knock_turn": None, "last_turn": None,
                  "draw_count": 40, "draw_pile": None, "discard": discard,
                  "drawn": None if held is None else {"seat": 0, "card": held, "stage": "action"},
                  "history": []},
        "scores": scores or [0] * n, "result": None,
    }


def held_moves(card: str, n: int = 2) -> list[dict]:
    """BB-4.2: the moves offered to seat 0 holding ``card``."""
    if card.isdigit():
        moves = [{"type": "swap_drawn", "slot": j} for j in range(4)]
    elif card == "swap":
        moves = [{"type": "use_swap", "slot": j, "target_seat": s, "target_slot": u}
                 for j in range(4) for s in range(1, n) for u in range(4)]
    elif card == "peek":
        moves = [{"type": "use_peek", "slot": j} for j in range(4)]
    else:
        moves = [{"type": "use_draw2"}]
    return moves + [{"type": "discard_drawn"}]


ACTION_MOVES = [{"type": "draw"}] + [{"type": "take_discard", "slot": j} for j in range(4)]
KNOCK_MOVES = [{"type": "knock"}, {"type": "end_turn"}]


def choose(v: dict, moves: list[dict]) -> dict:
    move = HeuristicBot("biberbande", 0, 1).choose(v, moves)
    assert any(move is m for m in moves), "must return an element of moves unchanged"
    return move


def test_bb_4_1_takes_a_low_discard_for_the_worst_known_card():
    v = view("action", [["2", None, None, "9"], UNKNOWN], ["5", "0"])
    assert choose(v, ACTION_MOVES) == {"type": "take_discard", "slot": 3}


def test_bb_4_1_draws_when_the_discard_does_not_beat_a_draw():
    v = view("action", [["2", None, None, "3"], UNKNOWN], ["0", "6"])
    assert choose(v, ACTION_MOVES) == {"type": "draw"}


def test_bb_4_1_worked_example_w1_opening_through_the_engine():
    """W1: seat 0 holds [3,0,5,8] knowing 3 and 8; the face-up 1 replaces the known 8."""
    deck = ["3", "7", "0", "9", "5", "2", "8", "4", "1", "6", "swap"]
    rest = list(biberbande.DECK.elements())
    for card in deck:
        rest.remove(card)
    state, _, _ = G.create(["a", "b"], 1, {"rounds": 1, "deck": deck + rest})
    v = {"match_id": "x", "game": "biberbande", "version": 0,
         "viewer": {"role": "seat", "seat": 0}, **G.view(state, seat_viewer(0))}
    assert choose(v, G.legal_moves(state, 0)) == {"type": "take_discard", "slot": 3}


@pytest.mark.parametrize("card, expected", [
    ("1", {"type": "swap_drawn", "slot": 1}),
    ("4", {"type": "swap_drawn", "slot": 1}),
    ("8", {"type": "discard_drawn"}),
])
def test_bb_4_2_places_a_drawn_number_only_below_the_worst_slot(card, expected):
    v = view("drawn", [["0", "7", "1", "2"], UNKNOWN], ["5"], held=card)
    assert choose(v, held_moves(card)) == expected


def test_bb_6_2_a_known_special_counts_as_an_unseen_number():
    """A special in the display is replaced by a number at round end, so a known 4
    is kept while a drawn 3 replaces the special (worth the unseen mean ≈ 5)."""
    v = view("drawn", [["4", "0", "1", "peek"], UNKNOWN], ["5"], held="3")
    assert choose(v, held_moves("3")) == {"type": "swap_drawn", "slot": 3}


def test_bb_4_3_peeks_at_an_unknown_own_card():
    v = view("drawn", [["1", "2", None, "0"], UNKNOWN], ["5"], held="peek")
    assert choose(v, held_moves("peek")) == {"type": "use_peek", "slot": 2}


def test_bb_4_3_discards_peek_when_every_own_card_is_known():
    v = view("drawn", [["1", "2", "3", "0"], UNKNOWN], ["5"], held="peek")
    assert choose(v, held_moves("peek")) == {"type": "discard_drawn"}


def test_bb_4_3_swap_gives_the_worst_card_for_the_lowest_known_opposing_card():
    """D9: own slot with any slot of another seat; the known 0 of seat 2 is the best target."""
    v = view("drawn", [["1", "9", "2", "0"], ["3", None, None, None], [None, None, "0", None]],
             ["5"], held="swap")
    assert choose(v, held_moves("swap", 3)) == {
        "type": "use_swap", "slot": 1, "target_seat": 2, "target_slot": 2}


def test_bb_4_3_swap_prefers_the_leader_on_equal_gain():
    v = view("drawn", [["1", "9", "2", "0"], UNKNOWN, UNKNOWN], ["5"], held="swap",
             scores=[10, 30, 12])
    move = choose(v, held_moves("swap", 3))
    assert (move["type"], move["slot"], move["target_seat"]) == ("use_swap", 1, 2)


def test_bb_4_3_swap_is_discarded_without_a_gain():
    v = view("drawn", [["1", "0", "2", "0"], ["5", "6", None, None]], ["5"], held="swap")
    assert choose(v, held_moves("swap")) == {"type": "discard_drawn"}


def test_bb_4_3_and_bb_4_4_draw_twice_is_used_and_the_second_draw_taken():
    v = view("drawn", [["1", None, None, "2"], UNKNOWN], ["5"], held="draw2")
    assert choose(v, held_moves("draw2")) == {"type": "use_draw2"}
    second = view("second_draw", [["1", None, None, "2"], UNKNOWN], ["5", "8"])
    assert choose(second, [{"type": "draw"}, {"type": "skip_draw"}]) == {"type": "draw"}


@pytest.mark.parametrize("known, expected", [
    (["0", "1", "2", "3"], "knock"),        # expected total 6: low
    (["2", None, None, "1"], "end_turn"),   # 3 + two unseen ≈ 5 each: not low enough
    (["9", "8", None, "7"], "end_turn"),
])
def test_bb_4_7_knocks_when_the_expected_total_is_low(known, expected):
    v = view("knock", [known, UNKNOWN], ["5"])
    assert choose(v, KNOCK_MOVES)["type"] == expected


def test_bb_4_7_knocks_on_a_clear_lead():
    v = view("knock", [["4", "3", "2", "3"], ["9", "9", "8", None]], ["5"])
    assert choose(v, KNOCK_MOVES) == {"type": "knock"}


def test_the_bot_uses_only_the_standard_library_and_the_bot_interface():
    tree = ast.parse(Path(biberbande.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    assert imported == {"__future__", "collections", "base"}


@pytest.mark.parametrize("players, seed", [(2, 11), (3, 12), (4, 13), (6, 14)])
def test_playouts_return_listed_moves_and_finish(players, seed):
    """Heuristic seats 0 and 2, random seats otherwise; every choice is an element of the
    legal moves and the match finishes within the BB-10.5 bound."""
    rng = random.Random(seed)
    bots = {s: HeuristicBot("biberbande", s, seed + s) for s in range(0, players, 2)}
    state, _, _ = G.create([f"p{i}" for i in range(players)], seed, {"rounds": 2})
    for version in range(2 * (30 * players + players - 1) * 33):
        if G.status(state) == "finished":
            break
        seat = G.to_act(state)[0]
        moves = G.legal_moves(state, seat)
        if seat in bots:
            v = {"match_id": "x", "game": "biberbande", "version": version,
                 "viewer": {"role": "seat", "seat": seat}, **G.view(state, seat_viewer(seat))}
            move = bots[seat].choose(v, moves)
            assert any(move is m for m in moves)
        else:
            move = rng.choice(moves)
        state, _ = G.play(state, seat, move)
    assert G.status(state) == "finished"
    result = G.result(state)
    assert result is not None and len(result["scores"]) == players
