"""The Mein Lieber Biber heuristic bot (``bots/mein_lieber_biber.py``).

Crafted views check the key decisions against the rules (``MLB-x.y`` of
``docs/games/mein-lieber-biber.md``); seeded engine playouts check that the bot
always answers with a listed move, never tips the raft needlessly, and that
matches finish.
"""
from __future__ import annotations

from typing import Any

import pytest

from bots.base import Move
from bots.mein_lieber_biber import XY, HeuristicBot
from bots.random_bot import RandomBot
from engine import REGISTRY
from engine.core import seat_viewer
from engine.mein_lieber_biber import COLOURS, RAFT, RING_COLOURS, load, tips

GAME_ID = "mein-lieber-biber"
GAME = REGISTRY.games[GAME_ID]


def make_view(hand: list[str], beavers: dict[str, int] | None = None, *, phase: str = "play",
              sticks: tuple[int, int] = (0, 0), round_: int = 1, rounds: int = 3,
              piles: tuple[int, int] = (10, 10), threshold: int = 2700) -> dict[str, Any]:
    """Seat 0's view of a 2-seat match (MLB-7); the opponent holds 3 hidden cards."""
    pos = {c: 0 for c in COLOURS} | (beavers or {})
    return {
        "match_id": "x", "game": GAME_ID, "version": 1, "status": "active",
        "viewer": {"role": "seat", "seat": 0}, "round": round_, "rounds": rounds,
        "phase": phase, "to_act": [0], "scores": list(sticks), "result": None,
        "players": [
            {"seat": 0, "name": "a", "hand": hand, "hand_count": len(hand), "discards": [],
             "sticks": sticks[0]},
            {"seat": 1, "name": "b", "hand": [None] * 3, "hand_count": 3, "discards": [],
             "sticks": sticks[1]},
        ],
        "board": {
            "rings": list(RING_COLOURS), "beavers": pos,
            "piles": [[None] * piles[0], [None] * piles[1]],
            "supply": 60 - sum(sticks), "load": load([pos[c] for c in COLOURS]),
            "tip_threshold": threshold, "start_seat": 0, "last_play": None, "last_round_end": None,
        },
    }


def plays(view: dict[str, Any]) -> list[dict[str, Any]]:
    """Seat 0's legal plays on a crafted view (MLB-4.1, order MLB-4.9)."""
    pos = view["board"]["beavers"]
    out = []
    for card in view["players"][0]["hand"]:
        colour, value = card.rsplit("-", 1)
        beavers = [colour] if pos[colour] <= 30 else [b for b in COLOURS if pos[b] <= 30]
        for b in beavers:
            to = min(pos[b] + int(value), 31)
            if to == 31 or to not in pos.values():
                out.append({"type": "play", "card": card, "beaver": b})
    return out


def choose(view: dict[str, Any], moves: list[dict[str, Any]], seed: int = 0) -> dict[str, Any]:
    move = HeuristicBot(GAME_ID, 0, seed).choose(view, moves)
    assert any(move is m for m in moves)
    return move


def test_ring_table_matches_spec_mlb_1_5():
    """MLB-1.4/1.5: the bot's ring centres are the normative table."""
    assert XY[1:31] == [(x, y) for _, x, y in RAFT[1:]]
    assert XY[0] == XY[31] == (0, 0)


def test_avoids_tipping_mlb_4_2():
    """MLB-4.2: with the load near the threshold, the play that tips is refused
    even though it would land on its own colour (ring 20 blue)."""
    view = make_view(["blue-2", "red-1"], {"green": 30, "blue": 18}, threshold=1500)
    moves = plays(view)
    assert {m["card"] for m in moves} == {"blue-2", "red-1"}
    assert choose(view, moves)["card"] == "red-1"


@pytest.mark.parametrize("seed", range(5))
def test_prefers_colour_match_mlb_4_4c(seed):
    """MLB-4.4c: red-8 lands red on ring 8 (red) and earns a reward; the others do not."""
    view = make_view(["blue-1", "red-8", "yellow-4"])
    assert choose(view, plays(view), seed)["card"] == "red-8"


def test_prefers_the_dam_mlb_4_4c():
    """MLB-4.4c, D13: the dam always rewards."""
    view = make_view(["green-2", "purple-6"], {"green": 1, "purple": 26})
    assert choose(view, plays(view))["card"] == "purple-6"


@pytest.mark.parametrize("seed", range(5))
def test_leaves_next_seat_fewest_rewards(seed):
    """MLB-4.1, D15: with four beavers on the dam every hidden card of theirs is
    a joker.  After red-2 only values 5 and 6 score (10 hidden cards); after
    orange-2 values 1, 3 and 8 (red to rings 1/8, orange to ring 5; 15 cards)."""
    view = make_view(["orange-2", "red-2"], {c: 31 for c in ("yellow", "green", "blue", "purple")})
    assert choose(view, plays(view), seed)["card"] == "red-2"


def test_takes_the_stick_mlb_4_7():
    """MLB-4.7: a stick is a point; cards come with top-ups anyway."""
    view = make_view(["red-3"], phase="reward")
    moves: list[Move] = [{"type": "reward", "take": "stick"}, {"type": "reward", "take": "card", "pile": 0},
                         {"type": "reward", "take": "card", "pile": 1}]
    assert choose(view, moves) == {"type": "reward", "take": "stick"}


def test_card_reward_keeps_a_trailing_seat_in_the_last_round_mlb_6_1():
    """MLB-6.1/6.3: with an empty hand the stick would end the last round (hand_empty)
    and the match while behind; a card reward keeps the round going."""
    moves: list[Move] = [{"type": "reward", "take": "stick"}, {"type": "reward", "take": "card", "pile": 0}]
    behind = make_view([], phase="reward", sticks=(3, 5), round_=3)
    assert choose(behind, moves)["take"] == "card"
    ahead = make_view([], phase="reward", sticks=(5, 3), round_=3)
    assert choose(ahead, moves)["take"] == "stick"


def test_tops_up_before_playing_mlb_4_3():
    """MLB-4.3: a hand under 3 is topped up first, from the larger pile."""
    view = make_view(["red-8"], piles=(4, 9))
    moves: list[Move] = [{"type": "draw", "pile": 0}, {"type": "draw", "pile": 1}, *plays(view)]
    assert choose(view, moves) == {"type": "draw", "pile": 1}


def test_leader_runs_down_its_hand_in_the_last_round_d7():
    """D7, MLB-6.1: ahead in the last round, the bot skips top-ups and passes the
    draw so its hand empties and the match ends sooner; otherwise it draws."""
    ahead = make_view(["red-3", "blue-5"], sticks=(6, 4), round_=3)
    moves: list[Move] = [{"type": "draw", "pile": 0}, {"type": "draw", "pile": 1}, *plays(ahead)]
    assert choose(ahead, moves)["type"] == "play"
    draw_moves: list[Move] = [{"type": "draw", "pile": 0}, {"type": "draw", "pile": 1}, {"type": "pass"}]
    assert choose(make_view(["red-3"], phase="draw", sticks=(6, 4), round_=3), draw_moves)["type"] == "pass"
    assert choose(make_view(["red-3"], phase="draw", sticks=(4, 6), round_=3), draw_moves)["type"] == "draw"


def test_tips_to_win_in_the_last_round_mlb_4_4b():
    """MLB-4.4b, MLB-6.3: in the last round tipping ends the match; 3 sticks
    ahead, handing back 2 still wins.  Only 2 ahead it would tie, so no tip."""
    beavers = {"green": 30, "blue": 18}
    win = make_view(["blue-2", "red-1"], beavers, sticks=(7, 4), round_=3, threshold=1500)
    assert choose(win, plays(win))["card"] == "blue-2"
    tie = make_view(["blue-2", "red-1"], beavers, sticks=(6, 4), round_=3, threshold=1500)
    assert choose(tie, plays(tie))["card"] == "red-1"


def test_exchange_gives_up_the_least_useful_card_mlb_4_5():
    """MLB-4.5, D9: both cards are blocked (rings 2 and 10 taken); red-1 would take
    red from ring 1 to 2 (blue), blue-8 blue from 2 to 10 (blue) once it frees:
    red-1 goes."""
    view = make_view(["blue-8", "red-1"], {"red": 1, "blue": 2, "orange": 10}, phase="exchange")
    moves = [{"type": "exchange", "card": c, "pile": p} for c in ("blue-8", "red-1") for p in (0, 1)]
    assert choose(view, moves)["card"] == "red-1"


# --------------------------------------------------------------------------
# Seeded engine playouts.
# --------------------------------------------------------------------------
def seat_view(state: dict[str, Any], seat: int, version: int) -> dict[str, Any]:
    return {"match_id": "x", "game": GAME_ID, "version": version,
            "viewer": {"role": "seat", "seat": seat}, **GAME.view(state, seat_viewer(seat))}


def tips_after(state: dict[str, Any], move: dict[str, Any]) -> bool:
    """Would this play tip the raft (MLB-4.2)?"""
    pos = list(state["pos"])
    b = COLOURS.index(move["beaver"])
    pos[b] = min(pos[b] + int(move["card"].rsplit("-", 1)[1]), 31)
    return tips(pos, state["tip"])


@pytest.mark.parametrize("players,seed", [(2, 1), (2, 2), (3, 3), (4, 4), (5, 5)])
def test_playouts_listed_moves_and_no_needless_tips(players, seed):
    """Heuristic seats (and one random seat) play whole matches: every answer is
    a listed move object, the match finishes, and the bot tips (MLB-4.2) only
    when every play tips or, in the last round, to end the match ahead."""
    bots = [RandomBot(GAME_ID, s, seed) if s == players - 1 else HeuristicBot(GAME_ID, s, seed + s)
            for s in range(players)]
    state, _, _ = GAME.create([f"p{i}" for i in range(players)], seed, {})
    version = 0
    while GAME.status(state) != "finished":
        (seat,) = GAME.to_act(state)
        moves = GAME.legal_moves(state, seat)
        move = bots[seat].choose(seat_view(state, seat, version), moves)
        assert any(move is m for m in moves)
        if isinstance(bots[seat], HeuristicBot) and move["type"] == "play" and tips_after(state, move):
            sticks = state["sticks"]
            wins = sticks[seat] - min(2, sticks[seat]) > max(s for i, s in enumerate(sticks) if i != seat)
            safe = [m for m in moves if m["type"] == "play" and not tips_after(state, m)]
            assert not safe or (state["round"] == state["rounds"] and wins), (seat, move, safe)
        state, _ = GAME.play(state, seat, move)
        version += 1
        assert version < 1860  # MLB-10.5
    result = GAME.result(state)
    assert result is not None and result["winners"]
