"""Mein Lieber Biber rules with stacked decks (docs/games/mein-lieber-biber.md).

Every test names the rule ids (``MLB-x.y``) and decisions (``Dn``) it checks.
Some tests set up a position directly in the state (``patch``) where reaching
it by play would take dozens of moves; the rest of the state stays consistent.
"""
from __future__ import annotations

import math

import pytest

from engine import core
from engine.core import (
    ADMIN_VIEWER,
    FINISHED,
    SPECTATOR_VIEWER,
    IllegalMove,
    InvalidOptions,
    MatchFinished,
    NotYourTurn,
    seat_viewer,
)
from engine.mein_lieber_biber import CARD_INDEX, CARDS, COLOURS, RAFT, RING_COLOURS, MeinLieberBiber, can_play

GAME = MeinLieberBiber()
NAMES2 = ["ana", "bo"]


# --------------------------------------------------------------------------
# Helpers.
# --------------------------------------------------------------------------
def fill(*prefix: str) -> list[str]:
    """The spec's ``fill(P)``: P, then the other cards in canonical order."""
    return list(prefix) + [c for c in CARDS if c not in prefix]


def new(deck: list[str] | None = None, names: list[str] = NAMES2, seed: int = 7, **options):
    if deck is not None:
        options["deck"] = deck
    state, events, _ = GAME.create(names, seed, options)
    return state, events


def act(state, seat, move):
    return GAME.play(state, seat, move)


def ids(cards: list[int]) -> list[str]:
    return [CARDS[c] for c in cards]


def idx(*cards: str) -> list[int]:
    return [CARD_INDEX[c] for c in cards]


def patch(state, **changes):
    """A copy of ``state`` with some fields replaced (cards given as ids)."""
    s = core.clone(state)
    for key in ("hands", "discards", "piles"):
        if key in changes:
            changes[key] = [sorted(idx(*cards)) if key == "hands" else idx(*cards)
                            for cards in changes[key]]
    s.update(changes)
    if "phase" not in changes and s["phase"] in ("play", "exchange"):
        s["phase"] = "play" if can_play(s["pos"], s["hands"][s["turn"]]) else "exchange"
    return s


def plays(state, seat):
    return [m for m in GAME.legal_moves(state, seat) if m["type"] == "play"]


def types(events):
    return [e["type"] for e in events]


def play(card, beaver=None):
    return {"type": "play", "card": card, "beaver": beaver or card.split("-")[0]}


STICK = {"type": "reward", "take": "stick"}
PASS = {"type": "pass"}


def draw(pile):
    return {"type": "draw", "pile": pile}


# --------------------------------------------------------------------------
# MLB-1: components.
# --------------------------------------------------------------------------
def test_ring_table_is_the_archimedean_spiral():
    """MLB-1.4, MLB-1.5: the normative table equals the rounded spiral formula."""
    for k in range(1, 31):
        theta, r = math.radians(36 * k), 0.1 + 0.03 * k
        assert RAFT[k][1:] == (round(1000 * r * math.cos(theta)), round(1000 * r * math.sin(theta)))


def test_ring_colours():
    """MLB-1.4, D2: 5 rings per colour, ring 1 red, ring 30 green, no equal neighbours."""
    assert len(RING_COLOURS) == 30
    assert all(RING_COLOURS.count(c) == 5 for c in COLOURS)
    assert RING_COLOURS[0] == "red" and RING_COLOURS[29] == "green"
    assert all(a != b for a, b in zip(RING_COLOURS, RING_COLOURS[1:]))
    assert RING_COLOURS[:5] == ["red", "blue", "yellow", "purple", "orange"]


def test_cards_canonical_order():
    """MLB-1.1, MLB-1.2: 48 cards, colour order then value."""
    assert GAME.canonical_deck({}) == list(CARDS) and len(CARDS) == 48
    assert CARDS[:9] == ("red-1", "red-2", "red-3", "red-4", "red-5", "red-6", "red-7", "red-8",
                         "orange-1")
    assert CARDS[-1] == "purple-8"


# --------------------------------------------------------------------------
# MLB-2: options.
# --------------------------------------------------------------------------
def test_option_defaults():
    """MLB-2.2..2.5: first_seat 0, rounds 3, tip_threshold 2700, recall perfect."""
    state, events, resolved = GAME.create(NAMES2, 1, {})
    assert resolved["rounds"] == 3 and resolved["tip_threshold"] == 2700
    assert resolved["first_seat"] == 0 and resolved["recall"] == "perfect"
    assert resolved["deck"] is None and resolved["decks"] is None
    assert GAME.to_act(state) == [0]
    cat = {o["name"]: o for o in GAME.catalogue()["options"]}
    assert set(cat) == {"deck", "decks", "first_seat", "rounds", "tip_threshold", "recall"}
    assert GAME.catalogue()["min_players"] == 2 and GAME.catalogue()["max_players"] == 5


@pytest.mark.parametrize("names, options", [
    (["a"], {}),                                              # MLB-2.0 players 2..5
    (["a", "b", "c", "d", "e", "f"], {}),
    (NAMES2, {"colour": "red"}),                              # unknown option
    (NAMES2, {"rounds": 0}), (NAMES2, {"rounds": 11}),        # MLB-2.3
    (NAMES2, {"rounds": "3"}), (NAMES2, {"rounds": True}), (NAMES2, {"rounds": 2.0}),
    (NAMES2, {"tip_threshold": 0}), (NAMES2, {"tip_threshold": 6001}),  # MLB-2.4
    (NAMES2, {"tip_threshold": 2700.5}),
    (NAMES2, {"first_seat": 2}), (NAMES2, {"first_seat": -1}),  # MLB-2.2
    (NAMES2, {"recall": "some"}), (NAMES2, {"recall": 1}),    # MLB-2.5
    (NAMES2, {"deck": CARDS[:47]}),                           # MLB-2.1
    (NAMES2, {"deck": list(CARDS[:47]) + ["red-1"]}),
    (NAMES2, {"deck": list(CARDS[:47]) + ["pink-1"]}),
    (NAMES2, {"deck": "red-1"}),
    (NAMES2, {"deck": list(CARDS), "decks": [list(CARDS)]}),  # MLB-2.1a
    (NAMES2, {"decks": []}),
    (NAMES2, {"decks": [list(CARDS)] * 4}),
    (NAMES2, {"rounds": 1, "decks": [list(CARDS)] * 2}),
    (NAMES2, {"decks": [list(CARDS), list(CARDS[1:])]}),
    (NAMES2, "rounds=3"),
])
def test_invalid_options(names, options):
    """MLB-2.0: unknown option, wrong type or out-of-limit value → invalid_options."""
    with pytest.raises(InvalidOptions):
        GAME.create(names, 1, options)


def test_option_limits_accepted():
    """MLB-2.2..2.4: the limits themselves are valid."""
    for options in ({"rounds": 1}, {"rounds": 10}, {"tip_threshold": 1}, {"tip_threshold": 6000},
                    {"first_seat": 4}, {"recall": "none"}, {"decks": [list(CARDS)] * 3}):
        GAME.create(["a", "b", "c", "d", "e"], 1, options)


# --------------------------------------------------------------------------
# MLB-3: setup.
# --------------------------------------------------------------------------
def test_deal_and_piles_two_players():
    """MLB-3.2, MLB-3.3, MLB-3.4, MLB-3.6 with the WE1 deck."""
    state, events = new(fill("red-1", "blue-3", "orange-5", "red-2", "green-4", "yellow-6"))
    assert ids(state["hands"][0]) == ["red-1", "orange-5", "green-4"]
    assert ids(state["hands"][1]) == ["red-2", "yellow-6", "blue-3"]
    assert ids(state["piles"][0])[:4] == ["red-3", "red-5", "red-7", "orange-1"]
    assert ids(state["piles"][1])[:4] == ["red-4", "red-6", "red-8", "orange-2"]
    assert [len(p) for p in state["piles"]] == [21, 21]
    assert state["pos"] == [0] * 6 and state["supply"] == 60 and state["sticks"] == [0, 0]
    assert events == [
        {"type": "round_started", "seat": None, "round": 1, "start_seat": 0},
        {"type": "dealt", "seat": 0, "cards": ["red-1", "orange-5", "green-4"]},
        {"type": "dealt", "seat": 1, "cards": ["red-2", "yellow-6", "blue-3"]},
    ]


def test_odd_player_count_pile_zero_larger():
    """MLB-3.3: with n odd pile 0 has one card more; MLB-3.2 round-robin deal."""
    state, _ = new(list(CARDS), names=["a", "b", "c"])
    assert [len(p) for p in state["piles"]] == [20, 19]
    assert ids(state["hands"][1]) == ["red-2", "red-5", "red-8"]
    assert ids(state["piles"][0])[:2] == ["orange-2", "orange-4"]


def test_seeded_deal_and_first_seat():
    """MLB-3.1 (round 1 shuffled from the seed only), MLB-2.2 first_seat, MLB-3.5."""
    state, _ = new(names=["a", "b", "c"], seed=99, first_seat=2)
    order = idx(*core.round_deck(GAME.id, 99, 1, CARDS, {}))
    assert state["hands"][0] == sorted(order[0:9:3])
    assert GAME.to_act(state) == [2] and state["start_seat"] == 2
    again, _ = new(names=["a", "b", "c"], seed=99, first_seat=2)
    assert again == state


# --------------------------------------------------------------------------
# MLB-11: worked examples.
# --------------------------------------------------------------------------
def test_we1():
    """WE1: MLB-4.1 (occupied rings counted), MLB-4.4, MLB-4.7, MLB-4.8, MLB-5.4,
    MLB-7.1, MLB-7.2, MLB-4.10."""
    state, _ = new(fill("red-1", "blue-3", "orange-5", "red-2", "green-4", "yellow-6"))
    # 1. s0 play red-1/red: red 0→1 (red ring), load [105, 76], phase reward.
    state, ev = act(state, 0, play("red-1"))
    assert ev == [{"type": "played", "seat": 0, "card": "red-1", "beaver": "red", "from": 0, "to": 1,
                   "joker": False}]
    assert state["phase"] == "reward" and GAME.view(state, ADMIN_VIEWER)["board"]["load"] == [105, 76]
    assert GAME.legal_moves(state, 0) == [STICK, {"type": "reward", "take": "card", "pile": 0},
                                          {"type": "reward", "take": "card", "pile": 1}]
    # 2. s0 reward stick: sticks [1, 0], supply 59, phase draw.
    state, ev = act(state, 0, STICK)
    assert ev == [{"type": "rewarded", "seat": 0, "take": "stick", "pile": None, "card": None}]
    assert state["sticks"] == [1, 0] and state["supply"] == 59 and state["phase"] == "draw"
    assert GAME.legal_moves(state, 0) == [draw(0), draw(1), PASS]
    # 3. s0 draw pile 0: gets red-3; s1 to act, phase play.
    state, ev = act(state, 0, draw(0))
    assert ev == [{"type": "drew", "seat": 0, "pile": 0, "card": "red-3", "reason": "draw"}]
    assert GAME.redact_event(ev[0], seat_viewer(1))["card"] is None
    assert GAME.to_act(state) == [1] and state["phase"] == "play"
    view = GAME.view(state, seat_viewer(1))
    assert view == {
        "status": "active", "round": 1, "rounds": 3, "phase": "play", "to_act": [1], "scores": [1, 0],
        "players": [
            {"seat": 0, "name": "ana", "hand": [None] * 3, "hand_count": 3, "discards": ["red-1"],
             "sticks": 1},
            {"seat": 1, "name": "bo", "hand": ["red-2", "yellow-6", "blue-3"], "hand_count": 3,
             "discards": [], "sticks": 0}],
        "board": {"rings": RING_COLOURS,
                  "beavers": {"red": 1, "orange": 0, "yellow": 0, "green": 0, "blue": 0, "purple": 0},
                  "piles": [[None] * 20, [None] * 21], "supply": 59, "load": [105, 76],
                  "tip_threshold": 2700, "start_seat": 0,
                  "last_play": {"seat": 0, "card": "red-1", "beaver": "red", "from": 0, "to": 1},
                  "last_round_end": None},
        "result": None}
    # 4. s1 play red-2/red: red 1→3 (yellow ring), no reward, phase draw; draw pile 1 (red-4).
    state, ev = act(state, 1, play("red-2"))
    assert ev[0]["from"] == 1 and ev[0]["to"] == 3 and state["phase"] == "draw"
    state, ev = act(state, 1, draw(1))
    assert ev[0]["card"] == "red-4"
    # 5. s0 play orange-5 → ring 5 orange → reward card pile 1: red-6 (s1 sees null); draw pile 0.
    state, _ = act(state, 0, play("orange-5"))
    assert state["phase"] == "reward"
    state, ev = act(state, 0, {"type": "reward", "take": "card", "pile": 1})
    assert ev == [{"type": "rewarded", "seat": 0, "take": "card", "pile": 1, "card": "red-6"}]
    assert GAME.redact_event(ev[0], seat_viewer(1)) == {**ev[0], "card": None}
    assert GAME.redact_event(ev[0], SPECTATOR_VIEWER)["card"] is None
    assert GAME.redact_event(ev[0], seat_viewer(0)) == ev[0]
    state, _ = act(state, 0, draw(0))
    assert ids(state["hands"][0]) == ["red-3", "red-5", "red-6", "green-4"]
    # 6. s1 legal moves: play red-4/red, play yellow-6/yellow; blue-3/blue is refused.
    assert GAME.legal_moves(state, 1) == [play("red-4"), play("yellow-6")]
    with pytest.raises(IllegalMove, match="ring 3 is occupied"):
        act(state, 1, play("blue-3"))


def test_we2_forced_exchange():
    """WE2: MLB-4.0 (phase exchange), MLB-4.5, D9, MLB-4.9 order of exchanges."""
    state, _ = new(fill("red-1", "yellow-1", "orange-8", "green-1", "purple-8", "blue-1",
                        "purple-1", "orange-2", "yellow-4"))
    assert ids(state["hands"][0]) == ["red-1", "orange-8", "purple-8"]
    assert ids(state["hands"][1]) == ["yellow-1", "green-1", "blue-1"]
    # 1. s0 play red-1/red (ring 1), reward stick, draw pile 1 (orange-2).
    state, _ = act(state, 0, play("red-1"))
    state, _ = act(state, 0, STICK)
    state, ev = act(state, 0, draw(1))
    assert ev[0]["card"] == "orange-2"
    # 2. s1 phase exchange; 6 exchanges by hand order then pile.
    assert state["phase"] == "exchange"
    assert GAME.legal_moves(state, 1) == [
        {"type": "exchange", "card": c, "pile": p} for c in ("yellow-1", "green-1", "blue-1")
        for p in (0, 1)]
    with pytest.raises(IllegalMove):
        act(state, 1, play("yellow-1"))
    state, ev = act(state, 1, {"type": "exchange", "card": "green-1", "pile": 0})
    assert ev == [{"type": "exchanged", "seat": 1, "card": "green-1", "pile": 0, "drawn": "purple-1"}]
    assert GAME.redact_event(ev[0], seat_viewer(0)) == {**ev[0], "drawn": None}
    assert state["phase"] == "exchange"
    # 3. s1 exchange blue-1 pile 0: gets yellow-4 → phase play, only play yellow-4/yellow.
    state, ev = act(state, 1, {"type": "exchange", "card": "blue-1", "pile": 0})
    assert ev[0]["drawn"] == "yellow-4" and state["phase"] == "play"
    assert GAME.legal_moves(state, 1) == [play("yellow-4")]
    assert GAME.view(state, seat_viewer(0))["players"][1]["discards"] == ["green-1", "blue-1"]
    with pytest.raises(IllegalMove, match="exchange is allowed only"):
        act(state, 1, {"type": "exchange", "card": "yellow-1", "pile": 0})
    # 4. s1 play yellow-4/yellow (ring 4 purple), pass. Load [−73, 205].
    state, _ = act(state, 1, play("yellow-4"))
    assert state["phase"] == "draw"
    state, ev = act(state, 1, PASS)
    assert ev == [{"type": "passed", "seat": 1}]
    assert GAME.view(state, SPECTATOR_VIEWER)["board"]["load"] == [-73, 205]
    assert GAME.to_act(state) == [0]


def test_we3_tipping():
    """WE3: MLB-4.2, MLB-4.4b (return min(2, sticks), no reward), D11, MLB-6.1, MLB-3.5, D18."""
    state, _ = new(fill("green-6", "purple-4", "orange-5", "red-7", "yellow-2", "blue-8"),
                   tip_threshold=500, seed=11)
    for seat, card, pile in ((0, "green-6", 0), (1, "purple-4", 1)):
        state, _ = act(state, seat, play(card))
        state, _ = act(state, seat, STICK)
        state, _ = act(state, seat, draw(pile))
    assert GAME.view(state, ADMIN_VIEWER)["board"]["load"] == [-405, -36]
    assert state["sticks"] == [1, 1]
    state, ev = act(state, 0, play("orange-5"))
    assert types(ev) == ["played", "tipped", "round_ended", "round_started", "dealt", "dealt"]
    assert ev[1] == {"type": "tipped", "seat": 0, "load": [-655, -36], "returned": 1}
    assert ev[2] == {"type": "round_ended", "seat": None, "round": 1, "reason": "tipped", "by": 0,
                     "sticks": [0, 1], "supply": 59}
    assert ev[3] == {"type": "round_started", "seat": None, "round": 2, "start_seat": 0}
    # Round 2 at once from a fresh seeded shuffle; starts s0 (fewest sticks).
    order = core.round_deck(GAME.id, 11, 2, CARDS, {})
    assert ev[4]["cards"] == sorted(order[0:6:2], key=CARD_INDEX.__getitem__)
    assert state["round"] == 2 and GAME.to_act(state) == [0] and state["sticks"] == [0, 1]
    assert state["pos"] == [0] * 6 and state["discards"] == [[], []] and state["supply"] == 59
    assert state["last_play"] is None
    assert state["last_round_end"] == {"round": 1, "reason": "tipped", "seat": 0}


# --------------------------------------------------------------------------
# MLB-4.2: the exact tipping test.
# --------------------------------------------------------------------------
@pytest.mark.parametrize("threshold, tipped", [(250, False), (249, True)])
def test_tipping_at_and_just_over_threshold(threshold, tipped):
    """MLB-4.2: equality does not tip (|L| = 250 at ring 5, T = 250); one over tips."""
    state, _ = new(fill("orange-5"), tip_threshold=threshold)
    state, ev = act(state, 0, play("orange-5"))
    assert ("tipped" in types(ev)) is tipped
    assert state["round"] == (2 if tipped else 1)
    assert state["phase"] == ("play" if tipped else "reward")


def test_tipping_exact_integer_with_two_beavers():
    """MLB-4.2: Lx²+Ly² compared with T² in integers (ring 1 + ring 2: [154, 228], 154²+228² = 75700)."""
    # 275² = 75625 < 75700 ≤ 276² = 76176
    for threshold, tipped in ((276, False), (275, True)):
        state, _ = new(fill("red-1", "blue-2"), tip_threshold=threshold)
        state, _ = act(state, 0, play("red-1"))
        state, _ = act(state, 0, STICK)
        state, _ = act(state, 0, PASS)
        state, ev = act(state, 1, play("blue-2"))
        assert ("tipped" in types(ev)) is tipped
        assert state["phase"] == ("play" if tipped else "reward")


def test_tip_returns_at_most_two_sticks():
    """MLB-4.4b: the mover returns min(2, own sticks) to the supply."""
    state, _ = new(fill("orange-5"), tip_threshold=249)
    state = patch(state, sticks=[5, 3], supply=52)
    state, ev = act(state, 0, play("orange-5"))
    assert ev[1]["returned"] == 2 and state["sticks"] == [3, 3] and state["supply"] == 54
    # MLB-3.5: fewest sticks tie [3, 3] → first clockwise from the seat after the mover (s1).
    assert GAME.to_act(state) == [1]


# --------------------------------------------------------------------------
# MLB-4.1, MLB-4.4, MLB-4.7: movement, dam, jokers, rewards.
# --------------------------------------------------------------------------
def test_exactly_thirty_stays_and_beyond_reaches_dam():
    """D16, MLB-4.4a: 30 stays on ring 30; past 30 → dam (31), unused points lost; MLB-4.4c
    the dam always rewards; ring 30 is green so green there rewards."""
    state, _ = new(fill("green-8", "blue-8", "purple-8", "red-8", "orange-8", "yellow-8"))
    base = patch(state, pos=[0, 0, 0, 22, 25, 0])
    after, ev = act(base, 0, play("green-8"))
    assert ev[0]["to"] == 30 and after["pos"][3] == 30 and after["phase"] == "reward"
    after, ev = act(base, 0, play("purple-8"))
    assert ev[0]["to"] == 8 and after["phase"] == "draw"          # ring 8 red: no reward
    base = patch(base, turn=1)
    after, ev = act(base, 1, play("blue-8"))
    assert ev[0]["to"] == 31 and after["pos"][4] == 31 and after["phase"] == "reward"


def test_occupied_target_refused_and_counted_on_the_way():
    """MLB-4.1, D4: rings on the way count; a landing ring must be free."""
    state, _ = new(fill("red-1", "blue-3", "red-3", "orange-2", "red-4"))
    state = patch(state, pos=[1, 2, 0, 0, 0, 0])
    assert plays(state, 0) == [play("red-3"), play("red-4")]  # red-1 → ring 2 taken by orange
    after, ev = act(state, 0, play("red-3"))
    assert ev[0]["from"] == 1 and ev[0]["to"] == 4   # rings 2 and 3 counted
    with pytest.raises(IllegalMove, match="occupied"):
        act(state, 0, play("red-1"))


def test_jokers():
    """MLB-4.1, D15: a departed beaver's card moves any beaver on the raft, middle included;
    never its own; while on the raft a card moves only its beaver. D13 reward by beaver colour."""
    state, _ = new(fill("red-5", "blue-1", "orange-2", "green-1", "yellow-3", "purple-1"))
    state = patch(state, pos=[31, 0, 0, 0, 3, 0])
    moves = plays(state, 0)
    # red-5 moves every beaver on the raft (blue from ring 3 too); yellow-3 → ring 3 is taken.
    assert moves == [play("red-5", b) for b in ("orange", "yellow", "green", "blue", "purple")] + [
        play("orange-2")]
    after, ev = act(state, 0, play("red-5", "orange"))
    assert ev[0] == {"type": "played", "seat": 0, "card": "red-5", "beaver": "orange", "from": 0,
                     "to": 5, "joker": True}
    assert after["phase"] == "reward"                 # ring 5 is orange: the beaver's colour counts
    after, _ = act(state, 0, play("red-5", "purple"))
    assert after["phase"] == "draw"                   # ring 5 orange ≠ purple
    with pytest.raises(IllegalMove, match="left the raft"):
        act(state, 0, play("red-5", "red"))
    with pytest.raises(IllegalMove, match="moves only the orange beaver"):
        act(state, 0, play("orange-2", "green"))


def test_reward_card_and_stick_choices():
    """MLB-4.7, D13, MLB-4.9: stick, card 0, card 1; only non-empty piles."""
    state, _ = new(fill("red-1"))
    state = patch(state, piles=[[], ids(state["piles"][1])],
                  discards=[ids(state["piles"][0]), []])
    state, _ = act(state, 0, play("red-1"))
    assert GAME.legal_moves(state, 0) == [STICK, {"type": "reward", "take": "card", "pile": 1}]
    with pytest.raises(IllegalMove, match="pile 0 is empty"):
        act(state, 0, {"type": "reward", "take": "card", "pile": 0})


def test_no_draw_phase_when_both_piles_empty():
    """MLB-4.4e: with both piles empty the turn ends after the move; MLB-4.6 the next seat,
    stuck behind the red beaver on ring 2, may only discard."""
    state, _ = new(fill("red-2", "blue-2", "orange-2", "yellow-2", "green-2", "purple-2"))
    rest = ids(state["piles"][0]) + ids(state["piles"][1])
    state = patch(state, piles=[[], []], discards=[rest, []])
    state, ev = act(state, 0, play("red-2"))
    assert types(ev) == ["played"] and GAME.to_act(state) == [1] and state["phase"] == "exchange"
    assert GAME.legal_moves(state, 1) == [{"type": "discard", "card": c}
                                          for c in ("yellow-2", "blue-2", "purple-2")]


# --------------------------------------------------------------------------
# MLB-4.3, MLB-4.8: top-ups and optional draws.
# --------------------------------------------------------------------------
def test_top_up_and_optional_draw():
    """MLB-4.3, D8 (top-up with < 3 cards, same seat continues), MLB-4.8, D7 (pass),
    MLB-4.9 (top-ups first), MLB-4.10 (no top-up with 3 cards)."""
    state, _ = new(fill("red-1", "blue-1", "orange-2", "green-2", "yellow-3", "purple-3"))
    with pytest.raises(IllegalMove, match="fewer than 3"):
        act(state, 0, draw(0))
    state, _ = act(state, 0, play("orange-2"))       # ring 2 blue: no reward
    state, _ = act(state, 0, PASS)
    state, _ = act(state, 1, play("blue-1"))
    state, _ = act(state, 1, PASS)
    moves = GAME.legal_moves(state, 0)
    assert moves[:2] == [draw(0), draw(1)] and moves[2]["type"] == "play"
    top = ids(state["piles"][1])[0]
    state, ev = act(state, 0, draw(1))
    assert ev == [{"type": "drew", "seat": 0, "pile": 1, "card": top, "reason": "top_up"}]
    assert GAME.to_act(state) == [0] and len(state["hands"][0]) == 3
    assert GAME.legal_moves(state, 0)[0]["type"] == "play"


def test_legal_move_order_plays_by_hand_then_beaver():
    """MLB-4.9: top-ups (0, 1), plays by hand order then beaver colour order."""
    state, _ = new(fill("yellow-2", "red-1", "red-6", "blue-1"))
    state = patch(state, hands=[["yellow-2", "red-6"], ["red-1", "blue-1", "green-1"]],
                  pos=[31, 0, 0, 0, 0, 0])
    assert GAME.legal_moves(state, 0) == [
        draw(0), draw(1),
        *[play("red-6", b) for b in ("orange", "yellow", "green", "blue", "purple")],
        play("yellow-2")]


# --------------------------------------------------------------------------
# MLB-4.6: stuck with both piles empty.
# --------------------------------------------------------------------------
def test_stuck_discard():
    """MLB-4.6, D10: both piles empty and no play → discard a chosen card, turn ends;
    discarding the last card ends the round (hand_empty)."""
    state, _ = new(fill("red-1", "red-2"), rounds=1)
    rest = [c for c in CARDS if c not in ("red-2", "orange-1", "blue-1", "yellow-3")]
    state = patch(state, pos=[1, 0, 0, 0, 0, 0], piles=[[], []], discards=[rest, []],
                  hands=[["orange-1", "blue-1"], ["red-2", "yellow-3"]])
    assert state["phase"] == "exchange"
    assert GAME.legal_moves(state, 0) == [{"type": "discard", "card": "orange-1"},
                                          {"type": "discard", "card": "blue-1"}]
    state, ev = act(state, 0, {"type": "discard", "card": "blue-1"})
    assert ev == [{"type": "discarded", "seat": 0, "card": "blue-1"}]
    assert GAME.to_act(state) == [1] and state["phase"] == "play"
    state, _ = act(state, 1, play("yellow-3"))        # ring 3 yellow → reward
    state, _ = act(state, 1, STICK)                   # no piles: turn ends
    assert GAME.to_act(state) == [0] and state["phase"] == "exchange"
    state, ev = act(state, 0, {"type": "discard", "card": "orange-1"})
    assert types(ev) == ["discarded", "round_ended", "match_ended"]
    assert ev[1]["reason"] == "hand_empty" and ev[1]["by"] == 0


# --------------------------------------------------------------------------
# MLB-6: end of round and match.
# --------------------------------------------------------------------------
def test_hand_empty_after_play():
    """MLB-6.1: the mover's hand is empty after the move (no reward) → round ends, no draw."""
    state, _ = new(fill("red-2"), rounds=2)
    state = patch(state, hands=[["red-2"], ids(state["hands"][1])], discards=[["red-3", "red-5"], []])
    state, ev = act(state, 0, play("red-2"))
    assert types(ev) == ["played", "round_ended", "round_started", "dealt", "dealt"]
    assert ev[1]["reason"] == "hand_empty" and state["round"] == 2
    # MLB-3.5: sticks [0, 0] tie → first clockwise after the mover s0 → s1.
    assert GAME.to_act(state) == [1]


def test_hand_empty_after_stick_reward_but_card_reward_keeps_playing():
    """MLB-6.1, D12: the hand is checked after the reward step."""
    state, _ = new(fill("red-1"), rounds=1)
    state = patch(state, hands=[["red-1"], ids(state["hands"][1])], discards=[["red-3", "red-5"], []])
    state, _ = act(state, 0, play("red-1"))
    ended, ev = act(state, 0, STICK)
    assert types(ev) == ["rewarded", "round_ended", "match_ended"]
    assert ev[1]["reason"] == "hand_empty" and ended["status"] == FINISHED
    kept, ev = act(state, 0, {"type": "reward", "take": "card", "pile": 0})
    assert types(ev) == ["rewarded"] and kept["phase"] == "draw"


def test_raft_empty():
    """MLB-6.1 raft_empty: the last beaver leaves the raft (after its dam reward)."""
    state, _ = new(fill("purple-2", "red-1", "orange-1"), rounds=1)
    state = patch(state, pos=[31, 31, 31, 31, 31, 29])
    state, _ = act(state, 0, play("purple-2"))
    assert state["phase"] == "reward"
    state, ev = act(state, 0, STICK)
    assert types(ev) == ["rewarded", "round_ended", "match_ended"]
    assert ev[1]["reason"] == "raft_empty"


def test_supply_exhausted_ends_match_early():
    """MLB-6.1 supply_exhausted, MLB-6.3, D14: the last stick ends round and match."""
    state, _ = new(fill("red-1"), rounds=3)
    state = patch(state, sticks=[30, 29], supply=1)
    state, _ = act(state, 0, play("red-1"))
    state, ev = act(state, 0, STICK)
    result = {"scores": [31, 29], "ranking": [[0], [1]], "winners": [0]}
    assert ev[1:] == [{"type": "round_ended", "seat": None, "round": 1, "reason": "supply_exhausted",
                       "by": 0, "sticks": [31, 29], "supply": 0},
                      {"type": "match_ended", "seat": None, "result": result}]
    assert state["status"] == FINISHED and state["result"] == result
    view = GAME.view(state, SPECTATOR_VIEWER)
    assert view["phase"] == "finished" and view["to_act"] == [] and view["board"]["beavers"]["red"] == 1
    assert view["board"]["last_round_end"] == {"round": 1, "reason": "supply_exhausted", "seat": 0}
    assert GAME.legal_moves(state, 0) == []
    with pytest.raises(MatchFinished):
        act(state, 0, PASS)


def test_rounds_limit_and_shared_places():
    """MLB-6.3, MLB-6.4, D20: after round `rounds` the match ends; equal sticks share places."""
    state, _ = new(fill("orange-5"), names=["a", "b", "c"], rounds=1, tip_threshold=249)
    state = patch(state, sticks=[3, 4, 4], supply=49)
    state, ev = act(state, 0, play("orange-5"))
    assert types(ev) == ["played", "tipped", "round_ended", "match_ended"]
    assert state["result"] == {"scores": [1, 4, 4], "ranking": [[1, 2], [0]], "winners": [1, 2]}
    assert GAME.view(state, ADMIN_VIEWER)["scores"] == [1, 4, 4]


def test_start_seat_rule_over_rounds():
    """MLB-3.5, D17: fewest sticks; ties from the seat after the last mover."""
    state, _ = new(names=["a", "b", "c"], tip_threshold=1, seed=5)
    state, _ = act(state, 0, plays(state, 0)[0])      # tips at once: sticks all 0
    assert state["round"] == 2 and GAME.to_act(state) == [1]
    state, _ = act(state, 1, plays(state, 1)[0])
    assert state["round"] == 3 and GAME.to_act(state) == [2]
    state, ev = act(state, 2, plays(state, 2)[0])
    assert state["status"] == FINISHED and state["result"]["winners"] == [0, 1, 2]


def test_decks_option_stacks_later_rounds():
    """MLB-2.1a, MLB-3.1: decks[r-1] is round r's order; unstacked rounds use the seed."""
    d1, d2 = fill("orange-5"), fill("blue-8", "green-7", "purple-6", "yellow-5")
    state, _ = new(None, tip_threshold=249, decks=[d1, d2])
    state, ev = act(state, 0, play("orange-5"))
    assert ev[4] == {"type": "dealt", "seat": 0, "cards": ["red-1", "blue-8", "purple-6"]}
    assert ev[5] == {"type": "dealt", "seat": 1, "cards": ["red-2", "yellow-5", "green-7"]}
    assert ev[3]["start_seat"] == 1
    state, ev = act(state, 1, play("red-2"))
    state, ev = act(state, 1, PASS)


# --------------------------------------------------------------------------
# MLB-5: hidden information, MLB-4.10 turn errors.
# --------------------------------------------------------------------------
def test_hidden_information():
    """MLB-5.1..5.5: hands to their seat and admin, piles to admin only, discards public,
    private event fields nulled, no `known`, recall changes nothing."""
    state, events = new(fill("red-1", "blue-3", "orange-5", "red-2"), recall="none")
    perfect, _ = new(fill("red-1", "blue-3", "orange-5", "red-2"))
    spec = GAME.view(state, SPECTATOR_VIEWER)
    assert all(h is None for p in spec["players"] for h in p["hand"])
    assert all(c is None for pile in spec["board"]["piles"] for c in pile)
    admin = GAME.view(state, ADMIN_VIEWER)
    assert admin["board"]["piles"][0][0] == "red-5" and admin["players"][1]["hand"][0] == "red-2"
    for viewer in (SPECTATOR_VIEWER, ADMIN_VIEWER, seat_viewer(0), seat_viewer(1)):
        assert GAME.view(state, viewer) == GAME.view(perfect, viewer)
        assert "known" not in str(GAME.view(state, viewer))
    dealt = events[1]
    assert GAME.redact_event(dealt, seat_viewer(1)) == {**dealt, "cards": [None] * 3}
    assert GAME.redact_event(dealt, seat_viewer(0)) == dealt
    assert GAME.redact_events(events, ADMIN_VIEWER) == events
    assert GAME.legal_moves(state, 1) == []
    with pytest.raises(NotYourTurn):
        act(state, 1, play("red-2"))
