"""The BiberClan heuristic bot (``bots/biberclan.py``): crafted views of
key decisions (rule ids from ``docs/games/biberclan.md``) and seeded engine
playouts in which every answer must be a listed move."""
from __future__ import annotations

from typing import Any

import pytest

from bots.biberclan import HeuristicBot
from bots.random_bot import RandomBot
from engine import REGISTRY
from engine.core import seat_viewer

SLOTS = ("b0", "b1", "b2", "t0", "t1")


def slot(code: str | None) -> dict | None:
    """``"9^"`` face up, ``"9v"`` face down known to the viewer, ``"?v"``
    face down unknown (BC-7.1); protection is left false, the bot derives it."""
    if code is None:
        return None
    card, face = code[:-1], "up" if code[-1] == "^" else "down"
    if face == "up":
        return {"face": face, "card": card, "protected": False}
    return {"face": face, "card": None, "protected": False, **({"known": card} if card != "?" else {})}


def make_view(castles: list[list[str | None]], held: dict, *, phase: str = "place", seat: int = 0,
              scores: list[int] | None = None, finisher: int | None = None,
              final_turns: list[int] | None = None) -> dict:
    """A seat's view (BC-7) with the castles given slot by slot."""
    players: list[dict[str, Any]] = [
        {"seat": k, "name": f"p{k}", "cards": sum(c is not None for c in castle),
         "face_up": sum(c is not None and c.endswith("^") for c in castle),
         "castle": {s: slot(c) for s, c in zip(SLOTS, castle)}} for k, castle in enumerate(castles)]
    in_castles = sum(p["cards"] for p in players)
    board = {"draw_count": 66 - in_castles - 1, "discard": [], "box": [], "start_seat": 0, "turn_seat": seat,
             "turns": 10, "max_turns": 200, "finisher": finisher, "final_turns": final_turns or [],
             "held": {"seat": seat, **held}, "round_scores": [], "last_round": None}
    return {"match_id": "x", "game": "biberclan", "version": 1, "status": "active",
            "viewer": {"role": "seat", "seat": seat}, "round": 1, "rounds": 5, "phase": phase,
            "to_act": [seat], "players": players, "board": board,
            "scores": scores or [0] * len(castles), "result": None}


def number(card: str) -> dict:
    return {"kind": "number", "card": card}


def special(card: str) -> dict:
    return {"kind": "special", "card": card}


def place(target: int, slot_: str, face: str) -> dict:
    return {"type": "place", "target": target, "slot": slot_, "face": face}


def replace(target: int, slot_: str, face: str) -> dict:
    return {"type": "replace", "target": target, "slot": slot_, "face": face}


def both_faces(make, target: int, slots: str) -> list[dict]:
    return [make(target, s, f) for s in slots.split() for f in ("up", "down")]


def choose(view: dict, moves: list[dict], seed: int = 0) -> dict:
    move = HeuristicBot("biberclan", view["viewer"]["seat"], seed).choose(view, moves)
    assert any(move is m for m in moves)
    return move


def test_five_of_a_kind_beats_everything_bc_6_4():
    """BC-6.4: a fifth equal card ends the match with a win, even a low one."""
    view = make_view([["3v", "3v", "3v", "3^", None], ["9^", "9^", "8^", None, None]], number("3"))
    moves = [place(0, "t1", "up"), place(0, "t1", "down"), *both_faces(replace, 1, "b0 b1 b2")]
    assert choose(view, moves) in (place(0, "t1", "up"), place(0, "t1", "down"))


def test_low_card_steals_a_high_unprotected_card_bc_4_4():
    """BC-4.4: a held 0 replaces the opponent's unprotected 9 (two face-up
    cards: no BC-4.1 (c) protection) rather than going into the own castle."""
    view = make_view([["7v", None, None, None, None], ["9^", "2^", None, None, None]], number("0"))
    moves = [*both_faces(place, 0, "b1 b2"), *both_faces(place, 1, "b2"),
             *both_faces(replace, 0, "b0"), *both_faces(replace, 1, "b0 b1")]
    move = choose(view, moves)
    assert (move["type"], move["target"], move["slot"]) == ("replace", 1, "b0")


def test_stolen_card_is_stashed_bc_4_5():
    """BC-4.5: the stolen 9 goes onto the free bottom slot rather than on a
    top slot covering the own 1, and face up: as the castle's only face-up
    card it is protected (BC-4.1 (c))."""
    view = make_view([["1v", "8v", None, None, None], ["0^", "2^", None, None, None]],
                     {"kind": "removed", "card": "9", "from": {"target": 1, "slot": "b0"}}, phase="stash")
    moves = [{"type": "stash", "slot": s, "face": f} for s in ("b2", "t0") for f in ("up", "down")]
    assert choose(view, moves) == {"type": "stash", "slot": "b2", "face": "up"}


def test_low_card_is_given_away_not_kept_bc_4_3():
    """BC-4.3: with nothing worth stealing, a held 0 goes into the opponent's
    castle (it fills one of their slots) instead of the own."""
    view = make_view([["8v", "7v", None, None, None], ["6^", "?v", None, None, None]], number("0"))
    moves = [*both_faces(place, 0, "b2"), *both_faces(place, 1, "b2")]
    assert choose(view, moves)["target"] == 1


def test_high_card_is_kept_bc_4_3():
    """BC-4.3: a held 9 goes into the own castle."""
    view = make_view([["8v", "7v", None, None, None], ["6^", "?v", None, None, None]], number("9"))
    moves = [*both_faces(place, 0, "b2"), *both_faces(place, 1, "b2")]
    assert choose(view, moves)["target"] == 0


def test_first_card_face_up_is_protected_bc_4_1_c():
    """BC-4.1 (c): the only face-up card of a castle is protected against
    others, so a lone high card goes face up."""
    view = make_view([[None] * 5, [None] * 5], number("9"))
    moves = both_faces(place, 0, "b0 b1 b2")
    assert choose(view, moves)["face"] == "up"


def test_no_completion_into_the_finisher_penalty_bc_6_2():
    """BC-6.2: completing a weak castle against a far stronger one costs the
    penalty; the bot upgrades its 0 instead."""
    view = make_view([["0v", "1v", "1^", "2v", None], ["9^", "9^", "8^", "9v", None]], number("3"))
    moves = [*both_faces(place, 0, "t1"), *both_faces(replace, 0, "b0 t0")]
    assert choose(view, moves) in (replace(0, "b0", "up"), replace(0, "b0", "down"))


def test_completion_when_ahead_bc_4_11():
    """BC-4.11: a strong fourth-card castle is completed while the opponent's
    castle is still half empty (its free slots score nothing, BC-6.1)."""
    view = make_view([["9v", "8v", "9^", "7v", None], ["5^", "?v", None, None, None]], number("6"))
    moves = [*both_faces(place, 0, "t1"), *both_faces(replace, 0, "t0")]
    assert choose(view, moves)["type"] == "place"


def test_final_lap_beats_the_finisher_bc_6_2():
    """BC-6.2: in the final lap the last card goes where it lifts the bot
    above the finisher (who then loses 10)."""
    view = make_view([["9v", "8v", "2^", "?v", "?v"], ["9^", "9v", "4^", "7v", None]], number("8"), seat=1,
                     finisher=0, final_turns=[1])
    moves = [*both_faces(place, 1, "t1"), *both_faces(replace, 1, "b2 t0")]
    assert choose(view, moves)["type"] == "place"


def test_clear_hits_the_leaders_best_card_bc_4_6():
    """BC-4.6: a compulsory clear removes the opponent's unprotected 9, not
    one of the own cards."""
    view = make_view([["5v", "6v", None, None, None], ["9^", "1^", "4v", None, None]], special("clear"))
    moves = [{"type": "clear", "target": t, "slot": s}
             for t, s in ((0, "b0"), (0, "b1"), (1, "b0"), (1, "b1"), (1, "b2"))]
    assert choose(view, moves) == {"type": "clear", "target": 1, "slot": "b0"}


def test_clear_of_own_card_takes_the_lowest_bc_4_6():
    """BC-4.6: when only own cards can be cleared, the least valuable goes."""
    view = make_view([["5v", "0v", "7v", None, None], ["9^", None, None, None, None]], special("clear"))
    moves = [{"type": "clear", "target": 0, "slot": s} for s in ("b0", "b1", "b2")]
    assert choose(view, moves)["slot"] == "b1"


def test_peek_looks_at_an_unknown_opponent_card_bc_4_9():
    """BC-4.9: peeking is worth something only at a card the bot does not know."""
    view = make_view([["5v", "?v", None, None, None], ["9v", "?v", None, None, None]], special("peek"))
    moves = [{"type": "peek", "target": t, "slot": s} for t in (0, 1) for s in ("b0", "b1")]
    assert choose(view, moves) == {"type": "peek", "target": 1, "slot": "b1"}


def test_swap_trades_a_low_own_card_for_a_high_one_bc_4_8():
    """BC-4.8: the swap gives the opponent the own 0 for their 9."""
    view = make_view([["0^", "6v", None, None, None], ["9^", "3^", None, None, None]], special("swap"))
    moves = [{"type": "swap", "target_a": 0, "slot_a": a, "target_b": 1, "slot_b": b}
             for a in ("b0", "b1") for b in ("b0", "b1")]
    assert choose(view, moves) == {"type": "swap", "target_a": 0, "slot_a": "b0", "target_b": 1, "slot_b": "b0"}


def play(n: int, seed: int, options: dict, kinds: str) -> tuple[dict, list[dict]]:
    """A whole match through the engine; returns its result and the moves."""
    game = REGISTRY.games["biberclan"]
    bots = [HeuristicBot("biberclan", s, seed + s) if kinds[s] == "h" else RandomBot("biberclan", s, seed + s)
            for s in range(n)]
    state, _, _ = game.create([f"p{i}" for i in range(n)], seed, options)
    played, version = [], 0
    while game.status(state) != "finished":
        seat = game.to_act(state)[0]
        view = {"match_id": "x", "game": "biberclan", "version": version, "viewer": {"role": "seat", "seat": seat},
                **game.view(state, seat_viewer(seat))}
        moves = game.legal_moves(state, seat)
        move = bots[seat].choose(view, moves)
        assert any(move is m for m in moves), (move, moves)
        state, _ = game.play(state, seat, move)
        played.append(move)
        version += 1
        assert version < 5000, "match does not finish"
    result = game.result(state)
    assert result is not None
    return result, played


@pytest.mark.parametrize("n, seed, options, kinds", [
    (2, 1, {}, "hh"),
    (2, 2, {"recall": "none"}, "hr"),
    (3, 3, {"with_biberbande": True}, "hrh"),
    (6, 4, {"with_biberbande": True, "rounds": 2}, "hhhhhh"),
])
def test_playouts_answer_listed_moves_and_finish(n, seed, options, kinds):
    """BC-4.13: every answer is one of the listed moves (the very dict), and
    the match reaches its end (BC-6.7)."""
    result, played = play(n, seed, options, kinds)
    assert result["winners"] and played


def test_same_seed_same_play():
    """Randomness only through ``self.rng``: a replay with the same seeds is identical."""
    assert play(2, 5, {}, "hh")[1] == play(2, 5, {}, "hh")[1]


def test_beats_random_more_often_than_not():
    """Duplicate seats over a few seeds: the bot wins most matches against random."""
    wins = sum(kinds.index("h") in play(2, seed, {"rounds": 2}, kinds)[0]["winners"]
               for seed in range(4) for kinds in ("hr", "rh"))
    assert wins >= 6
