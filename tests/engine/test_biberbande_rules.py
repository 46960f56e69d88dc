"""Rule tests of Biberbande (docs/games/biberbande.md) with stacked decks.

Every test names the rule ids it checks.  ``stack(P)`` is the spec's notation:
P followed by the remaining cards in canonical order (section 11).
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Any

import orjson
import pytest

from engine.biberbande import CANONICAL, Biberbande, BiberbandeState
from engine.core import (
    ADMIN_VIEWER,
    SPECTATOR_VIEWER,
    Event,
    IllegalMove,
    InvalidOptions,
    MatchFinished,
    Move,
    NotYourTurn,
    UndeclaredEvent,
    seat_viewer,
)

G = Biberbande()
NUMBER_TAKES = [{"type": "take_discard", "slot": j} for j in range(4)]


def stack(cards: str) -> list[str]:
    """The spec's stack(P): P (space separated) then the rest in canonical order."""
    head = cards.split()
    rest = list(CANONICAL)
    for card in head:
        rest.remove(card)
    return head + rest


def create(n: int = 2, seed: int = 7, **options: Any) -> tuple[BiberbandeState, list[Event]]:
    state, events, _ = G.create([f"p{i}" for i in range(n)], seed, options)
    return state, events


def play(state: BiberbandeState, seat: int, move: Move) -> tuple[BiberbandeState, list[Event]]:
    """Play one move; the input snapshot must come back untouched (purity)."""
    before = orjson.dumps(state)
    new, events = G.play(state, seat, move)
    assert orjson.dumps(state) == before
    return new, events


def admin(state: BiberbandeState) -> dict[str, Any]:
    return G.view(state, ADMIN_VIEWER)


def seat_view(state: BiberbandeState, seat: int) -> dict[str, Any]:
    return G.view(state, seat_viewer(seat))


def displays(state: BiberbandeState) -> list[list[str | None]]:
    return [p["display"] for p in admin(state)["players"]]


def known(state: BiberbandeState, seat: int) -> list[list[str | None]]:
    return [p["known"] for p in seat_view(state, seat)["players"]]


def types(events: list[Event]) -> list[str]:
    return [e["type"] for e in events]


def pass_turn(state: BiberbandeState) -> tuple[BiberbandeState, list[Event]]:
    """The current seat draws and discards (no knock); returns state, events."""
    seat = G.to_act(state)[0]
    state, out = play(state, seat, {"type": "draw"})
    state, more = discard_and_end(state, seat)
    return state, out + more


def discard_and_end(state: BiberbandeState, seat: int) -> tuple[BiberbandeState, list[Event]]:
    """Discard the held card and, in a knock phase, end the turn without knocking."""
    state, out = play(state, seat, {"type": "discard_drawn"})
    if state["status"] == "active" and state["phase"] == "knock" and G.to_act(state) == [seat]:
        state, more = play(state, seat, {"type": "end_turn"})
        out += more
    return state, out


def finish_round(state: BiberbandeState) -> tuple[BiberbandeState, list[Event]]:
    """Pass turns until the round number changes or the match ends."""
    round_no = state["round"]
    events: list[Event] = []
    while state["status"] == "active" and state["round"] == round_no:
        state, more = pass_turn(state)
        events += more
    return state, events


# --- BB-1 -------------------------------------------------------------------------
def test_bb_1_1_bb_1_2_canonical_deck():
    """BB-1.1, BB-1.2: 66 cards in canonical order."""
    deck = G.canonical_deck({})
    assert len(deck) == 66
    assert deck[:8] == ["0"] * 4 + ["1"] * 4
    assert deck[36:45] == ["9"] * 9
    assert deck[45:] == ["swap"] * 9 + ["peek"] * 7 + ["draw2"] * 5
    counts = Counter(deck)
    assert all(counts[str(v)] == 4 for v in range(9)) and counts["9"] == 9


def test_metadata_and_catalogue():
    """BB-2 option table (types, defaults, limits), BB-2.2 ranges; game metadata."""
    cat = G.catalogue()
    assert (cat["id"], cat["title"], cat["min_players"], cat["max_players"]) == ("biberbande", "Biberbande", 2, 6)
    opts = {o["name"]: o for o in cat["options"]}
    assert set(opts) == {"deck", "decks", "first_seat", "rounds", "recall", "turn_limit"}
    assert opts["rounds"]["default"] is None and opts["rounds"]["default_doc"]
    assert (opts["rounds"]["minimum"], opts["rounds"]["maximum"]) == (1, 20)
    assert (opts["turn_limit"]["default"], opts["turn_limit"]["minimum"], opts["turn_limit"]["maximum"]) == (30, 1, 200)
    assert opts["recall"]["choices"] == ["perfect", "none"] and opts["recall"]["default"] == "perfect"


# --- BB-2 -------------------------------------------------------------------------
@pytest.mark.parametrize("n, rounds", [(2, 4), (3, 3), (4, 4), (5, 5), (6, 6)])
def test_bb_2_option_defaults(n, rounds):
    """BB-2 option table defaults: rounds n (4 if n = 2, D19), turn_limit 30, recall perfect, first_seat 0."""
    _, _, resolved = G.create([f"p{i}" for i in range(n)], 1, {})
    assert resolved["rounds"] == rounds
    assert (resolved["turn_limit"], resolved["recall"], resolved["first_seat"]) == (30, "perfect", 0)
    assert resolved["deck"] is None and resolved["decks"] is None


@pytest.mark.parametrize("players, options", [
    (2, {"colour": 1}),
    (2, {"rounds": True}),
    (2, {"rounds": 0}),
    (2, {"rounds": 21}),
    (2, {"rounds": "3"}),
    (2, {"turn_limit": 0}),
    (2, {"turn_limit": 201}),
    (2, {"turn_limit": 1.5}),
    (3, {"first_seat": 3}),
    (3, {"first_seat": -1}),
    (2, {"recall": "some"}),
    (2, {"deck": list(CANONICAL)[:-1]}),
    (2, {"deck": list(CANONICAL)[:-1] + ["9"]}),
    (2, {"deck": "0" * 66}),
    (2, {"deck": list(CANONICAL), "decks": [list(CANONICAL)]}),
    (2, {"rounds": 1, "decks": [list(CANONICAL)] * 2}),
    (2, {"decks": []}),
    (2, {"rounds": "x", "decks": [list(CANONICAL)]}),
    (1, {}),
    (7, {}),
])
def test_bb_2_2_invalid_options(players, options):
    """BB-2.2: unknown option, wrong type (bool is no int), range, deck checks, players 2…6."""
    with pytest.raises(InvalidOptions):
        G.create([f"p{i}" for i in range(players)], 1, options)


@pytest.mark.parametrize("seed", [-1, 2**53, 2**63, True, "1"])
def test_bb_2_1_seed_range(seed):
    """BB-2.1: seed is an integer 0…2^53−1."""
    with pytest.raises(InvalidOptions):
        G.create(["a", "b"], seed, {})


# --- BB-3 -------------------------------------------------------------------------
def test_bb_3_3_bb_3_4_bb_3_5_deal_and_setup_events():
    """BB-3.1, BB-3.3 (D1), BB-3.4 (D2), BB-3.5: deal order from the starter, glimpses, setup events."""
    deck = list(CANONICAL)
    random.Random(3).shuffle(deck)
    state, events = create(3, first_seat=1, deck=deck)
    assert types(events) == ["round_started", "dealt", "turn_started"]
    assert events[0] == {"type": "round_started", "seat": None, "round": 1, "starter": 1}
    expect = [[""] * 4 for _ in range(3)]
    for i in range(12):
        expect[(1 + i) % 3][i // 3] = deck[i]
    assert events[1] == {"type": "dealt", "seat": None, "displays": expect, "discard": [deck[12]]}
    assert events[2] == {"type": "turn_started", "seat": 1, "turn": 1}
    view = admin(state)
    assert displays(state) == expect
    assert view["board"]["discard"] == [deck[12]]
    assert view["board"]["draw_pile"] == deck[13:] and view["board"]["draw_count"] == 53
    assert (view["phase"], view["to_act"], view["board"]["turn"]) == ("action", [1], 1)
    for seat in range(3):
        mine = [expect[seat][0], None, None, expect[seat][3]]
        assert known(state, seat) == [mine if s == seat else [None] * 4 for s in range(3)]


def test_bb_3_2_shuffle_keys_and_stacked_decks():
    """BB-3.2, D4: rounds without a stacked deck are shuffled with key biberbande:{seed}:{r}:0;
    decks[r-1] stacks round r; each round uses all 66 cards."""
    def shuffled(seed, r):
        deck = list(CANONICAL)
        random.Random(f"biberbande:{seed}:{r}:0").shuffle(deck)
        return deck

    def deal_of(state):
        view = admin(state)
        n = len(view["players"])
        starter = view["board"]["starter"]
        cards = [view["players"][(starter + i) % n]["display"][i // n] for i in range(4 * n)]
        return cards + view["board"]["discard"] + view["board"]["draw_pile"]

    seed = 123456789
    state, _ = create(2, seed=seed, rounds=3, turn_limit=1)
    assert deal_of(state) == shuffled(seed, 1)
    state, _ = finish_round(state)
    assert state["round"] == 2 and deal_of(state) == shuffled(seed, 2)

    stacked = [stack("9 9 9 9 9 9 9 9 9"), stack("0 0 0 0 1 1 1 1 2")]
    state, _ = create(2, seed=seed, rounds=3, turn_limit=1, decks=stacked)
    assert deal_of(state) == stacked[0]
    state, _ = finish_round(state)
    assert deal_of(state) == stacked[1]
    state, _ = finish_round(state)
    assert deal_of(state) == shuffled(seed, 3)


def test_bb_3_1_starter_rotates_left():
    """BB-3.1, D3: round r is started by (first_seat + r − 1) mod n."""
    state, _ = create(3, first_seat=2, rounds=3, turn_limit=1)
    starters = []
    while state["status"] == "active":
        starters.append(admin(state)["board"]["starter"])
        assert G.to_act(state) == [starters[-1]]
        state, _ = finish_round(state)
    assert starters == [2, 0, 1]
    assert [h["starter"] for h in admin(state)["board"]["history"]] == [2, 0, 1]


def drain(state):
    """Draw and discard until the draw pile is empty (turn limit must allow it)."""
    while admin(state)["board"]["draw_count"] > 0:
        state, _ = pass_turn(state)
    return state


def test_bb_3_6_reshuffle():
    """BB-3.6, D6, BB-10.3: an empty draw pile is refilled from the discard pile but its top,
    shuffled with key biberbande:{seed}:{r}:{k}; event reshuffled."""
    seed = 99
    state, _ = create(2, seed=seed, rounds=1, turn_limit=200, deck=stack("0 0 0 0 1 1 1 1 2"))
    state = drain(state)
    board = admin(state)["board"]
    pile, top = board["discard"][:-1], board["discard"][-1]
    assert len(pile) + 1 == 66 - 8
    expect = list(pile)
    random.Random(f"biberbande:{seed}:1:1").shuffle(expect)
    seat = G.to_act(state)[0]
    assert G.legal_moves(state, seat)[0] == {"type": "draw"}
    state, events = play(state, seat, {"type": "draw"})
    assert events[0] == {"type": "reshuffled", "seat": None, "count": 1}
    assert events[1]["type"] == "drew" and events[1]["card"] == expect[0]
    board = admin(state)["board"]
    assert board["discard"] == [top]
    assert board["draw_pile"] == expect[1:]
    assert state["reshuffles"] == 1
    # the second reshuffle of the round uses k = 2
    state, _ = discard_and_end(state, seat)
    state = drain(state)
    pile = admin(state)["board"]["discard"][:-1]
    expect = list(pile)
    random.Random(f"biberbande:{seed}:1:2").shuffle(expect)
    state, events = play(state, G.to_act(state)[0], {"type": "draw"})
    assert events[0]["count"] == 2 and events[1]["card"] == expect[0]


# --- BB-4 -------------------------------------------------------------------------
def test_bb_4_1_action_moves_number_on_top():
    """BB-4.1: draw, then take_discard 0…3 when the top discard is a number."""
    state, _ = create(2, deck=stack("3 7 0 9 5 2 8 4 1"))
    assert G.legal_moves(state, 0) == [{"type": "draw"}] + NUMBER_TAKES
    assert G.legal_moves(state, 1) == []


def test_bb_4_1_d5_special_on_top_blocks_take_discard():
    """BB-4.1, D5: a special on top stays; only draw; the error names the rule."""
    state, _ = create(2, deck=stack("3 7 0 9 5 2 8 4 peek"))
    assert G.legal_moves(state, 0) == [{"type": "draw"}]
    with pytest.raises(IllegalMove) as err:
        G.play(state, 0, {"type": "take_discard", "slot": 0})
    assert "number card on top" in err.value.detail and "BB-4.1" in err.value.detail


def test_bb_4_1_take_discard_effects_and_knowledge():
    """BB-4.1 Action B, BB-5.5 (D15): the taken card is known to all seats; the old card goes face up."""
    state, _ = create(3, deck=stack("3 7 0 9 5 2 8 4 1 6 6 6 5"))
    state, events = play(state, 0, {"type": "take_discard", "slot": 1})
    assert events == [{"type": "took_discard", "seat": 0, "slot": 1, "card": "5", "discarded": "9"},
                      {"type": "turn_started", "seat": 1, "turn": 2}]
    assert displays(state)[0] == ["3", "5", "8", "6"]
    assert admin(state)["board"]["discard"] == ["9"]
    for seat in range(3):
        assert known(state, seat)[0][1] == "5"


def test_bb_4_2_held_move_order_number_and_swap_drawn():
    """BB-4.2, BB-4.3 swap_drawn, BB-5.5: number held → swap_drawn 0…3, discard_drawn;
    the placed card is known to the placer only; the old card goes face up."""
    state, _ = create(2, deck=stack("3 7 0 9 5 2 8 4 1 6"))
    state, events = play(state, 0, {"type": "draw"})
    assert events == [{"type": "drew", "seat": 0, "card": "6", "stage": "action"}]
    assert admin(state)["phase"] == "drawn"
    assert G.legal_moves(state, 0) == [{"type": "swap_drawn", "slot": j} for j in range(4)] + [
        {"type": "discard_drawn"}]
    state, events = play(state, 0, {"type": "swap_drawn", "slot": 2})
    assert events[0] == {"type": "swapped_drawn", "seat": 0, "slot": 2, "card": "6", "discarded": "5"}
    assert displays(state)[0] == ["3", "0", "6", "8"]
    assert admin(state)["board"]["discard"] == ["1", "5"]
    assert known(state, 0)[0] == ["3", None, "6", "8"]
    assert known(state, 1)[0] == [None] * 4


def test_bb_4_2_use_swap_order_and_knowers_move():
    """BB-4.2 (D9), BB-4.3 use_swap, BB-5.5: target seats ascending ≠ c; the special is discarded
    first; the two cards and their knowers exchange places."""
    state, _ = create(3, deck=stack("3 7 0 9 5 2 8 4 1 6 6 6 5 swap"))
    state, _ = play(state, 0, {"type": "draw"})
    legal = G.legal_moves(state, 0)
    expect = [{"type": "use_swap", "slot": j, "target_seat": s, "target_slot": u}
              for j in range(4) for s in (1, 2) for u in range(4)] + [{"type": "discard_drawn"}]
    assert legal == expect
    with pytest.raises(IllegalMove) as err:
        G.play(state, 0, {"type": "use_swap", "slot": 0, "target_seat": 0, "target_slot": 1})
    assert "another seat" in err.value.detail
    # seat 0 slot 0 ("3", known by 0) ↔ seat 1 slot 3 ("6", known by 1)
    state, events = play(state, 0, {"type": "use_swap", "slot": 0, "target_seat": 1, "target_slot": 3})
    assert events[0] == {"type": "used_swap", "seat": 0, "slot": 0, "target_seat": 1, "target_slot": 3}
    assert displays(state)[0][0] == "6" and displays(state)[1][3] == "3"
    assert admin(state)["board"]["discard"] == ["5", "swap"]
    assert known(state, 0)[1][3] == "3" and known(state, 0)[0][0] is None
    assert known(state, 1)[0][0] == "6" and known(state, 1)[1][3] is None
    assert known(state, 2)[0][0] is None and known(state, 2)[1][3] is None


def test_bb_4_3_use_peek():
    """BB-4.2, BB-4.3 use_peek (D10), BB-5.5, BB-5.7: the peeker learns its own card; the card
    in the event is for the peeker and admin only."""
    state, _ = create(2, deck=stack("3 7 0 9 5 2 8 4 1 peek"))
    state, _ = play(state, 0, {"type": "draw"})
    assert G.legal_moves(state, 0) == [{"type": "use_peek", "slot": j} for j in range(4)] + [
        {"type": "discard_drawn"}]
    state, events = play(state, 0, {"type": "use_peek", "slot": 1})
    assert events[0] == {"type": "used_peek", "seat": 0, "slot": 1, "card": "0"}
    assert G.redact_event(events[0], seat_viewer(1))["card"] is None
    assert G.redact_event(events[0], SPECTATOR_VIEWER)["card"] is None
    assert G.redact_event(events[0], seat_viewer(0))["card"] == "0"
    assert known(state, 0)[0] == ["3", "0", None, "8"]
    assert admin(state)["board"]["discard"] == ["1", "peek"]


def test_bb_4_3_bb_4_4_draw_twice_second_draw():
    """BB-4.2, BB-4.3 use_draw2/discard_drawn, BB-4.4 (D7, D8): the first draw is automatic;
    discarding it unused opens second_draw; draw → stage draw2_second."""
    state, _ = create(2, deck=stack("3 7 0 9 5 2 8 4 1 draw2 9 0"))
    state, _ = play(state, 0, {"type": "draw"})
    assert G.legal_moves(state, 0) == [{"type": "use_draw2"}, {"type": "discard_drawn"}]
    state, events = play(state, 0, {"type": "use_draw2"})
    assert events == [{"type": "used_draw2", "seat": 0},
                      {"type": "drew", "seat": 0, "card": "9", "stage": "draw2_first"}]
    assert admin(state)["board"]["discard"] == ["1", "draw2"]
    assert admin(state)["board"]["drawn"] == {"seat": 0, "card": "9", "stage": "draw2_first"}
    state, events = play(state, 0, {"type": "discard_drawn"})
    assert events == [{"type": "discarded_drawn", "seat": 0, "card": "9"}]
    assert admin(state)["phase"] == "second_draw" and admin(state)["board"]["drawn"] is None
    assert G.legal_moves(state, 0) == [{"type": "draw"}, {"type": "skip_draw"}]
    state, events = play(state, 0, {"type": "draw"})
    assert events == [{"type": "drew", "seat": 0, "card": "0", "stage": "draw2_second"}]
    # discarding the second card completes the action
    state, events = play(state, 0, {"type": "discard_drawn"})
    assert types(events) == ["discarded_drawn", "turn_started"]


def test_bb_4_4_skip_draw_and_chained_draw_twice():
    """BB-4.4, D7: a used draw2 starts a new Draw Twice; a used special ends it; skip_draw completes."""
    state, _ = create(2, deck=stack("3 7 0 9 5 2 8 4 1 draw2 draw2 swap"))
    state, _ = play(state, 0, {"type": "draw"})
    state, _ = play(state, 0, {"type": "use_draw2"})
    assert admin(state)["board"]["drawn"] == {"seat": 0, "card": "draw2", "stage": "draw2_first"}
    state, events = play(state, 0, {"type": "use_draw2"})
    assert events[-1] == {"type": "drew", "seat": 0, "card": "swap", "stage": "draw2_first"}
    assert admin(state)["board"]["discard"] == ["1", "draw2", "draw2"]
    state, events = play(state, 0, {"type": "use_swap", "slot": 0, "target_seat": 1, "target_slot": 0})
    assert types(events) == ["used_swap", "turn_started"]

    state, _ = create(2, deck=stack("3 7 0 9 5 2 8 4 1 draw2 9"))
    state, _ = play(state, 0, {"type": "draw"})
    state, _ = play(state, 0, {"type": "use_draw2"})
    state, _ = play(state, 0, {"type": "discard_drawn"})
    state, events = play(state, 0, {"type": "skip_draw"})
    assert events == [{"type": "skipped_draw", "seat": 0}, {"type": "turn_started", "seat": 1, "turn": 2}]


def test_bb_4_5_to_4_8_knock_timing():
    """BB-4.5 (D11), BB-4.6, BB-4.7, BB-4.8: no knock before turn n; knock phase after the action;
    knocker gets no further turn; no knock phase after a knock; ends after the knocker's right
    neighbour."""
    state, _ = create(3, first_seat=1, rounds=2, deck=stack("0 0 0 0 1 1 1 1 2 2 2 2 3"))
    state, events = pass_turn(state)  # t1 seat 1
    state, events = pass_turn(state)  # t2 seat 2
    assert events[-1] == {"type": "turn_started", "seat": 0, "turn": 3}
    state, _ = play(state, 0, {"type": "draw"})
    state, events = play(state, 0, {"type": "discard_drawn"})
    assert events[-1]["type"] == "discarded_drawn"
    assert admin(state)["phase"] == "knock" and G.legal_moves(state, 0) == [{"type": "knock"}, {"type": "end_turn"}]
    state, events = play(state, 0, {"type": "end_turn"})
    assert events == [{"type": "ended_turn", "seat": 0}, {"type": "turn_started", "seat": 1, "turn": 4}]
    state, _ = play(state, 1, {"type": "draw"})
    state, _ = play(state, 1, {"type": "discard_drawn"})
    state, events = play(state, 1, {"type": "knock"})
    assert events == [{"type": "knocked", "seat": 1, "turn": 4}, {"type": "turn_started", "seat": 2, "turn": 5}]
    board = admin(state)["board"]
    assert (board["knocker"], board["knock_turn"], board["last_turn"]) == (1, 4, 6)
    state, events = pass_turn(state)  # t5 seat 2: no knock phase
    assert "ended_turn" not in types(events) and events[-1] == {"type": "turn_started", "seat": 0, "turn": 6}
    state, events = pass_turn(state)  # t6 seat 0 = knocker's right neighbour: round end
    assert types(events)[2:4] == ["round_ended", "round_scored"]
    assert events[2]["reason"] == "knock" and events[2]["knocker"] == 1
    assert state["round"] == 2 and G.to_act(state) == [2]


def test_bb_4_7_bb_4_9_turn_limit():
    """BB-4.7, BB-4.9 (D12): with no knock the round ends after T = turn_limit·n via end_turn."""
    state, _ = create(2, rounds=1, turn_limit=2)
    assert admin(state)["board"]["max_turn"] == 4
    for _ in range(3):
        state, _ = pass_turn(state)
    state, _ = play(state, 1, {"type": "draw"})
    state, _ = play(state, 1, {"type": "discard_drawn"})
    state, events = play(state, 1, {"type": "end_turn"})
    assert types(events)[:2] == ["ended_turn", "round_ended"] and events[1]["reason"] == "turn_limit"
    assert state["status"] == "finished"


def test_bb_4_9_knock_on_last_turn_extends_round():
    """BB-4.9: a knock at t ≤ T ends the round after t+n−1 (> T)."""
    state, _ = create(2, rounds=1, turn_limit=1)
    state, _ = pass_turn(state)
    state, _ = play(state, 1, {"type": "draw"})
    state, _ = play(state, 1, {"type": "discard_drawn"})
    state, events = play(state, 1, {"type": "knock"})
    assert events[-1] == {"type": "turn_started", "seat": 0, "turn": 3}
    state, events = pass_turn(state)
    assert "round_ended" in types(events) and state["status"] == "finished"
    assert admin(state)["board"]["turn"] == 3


def test_bb_4_10_stuck_guard():
    """BB-4.10 (D14), crafted snapshot (unreachable by play, BB-10.3): no draw is offered, an action
    phase without legal moves ends the round (reason stuck), an unreplaceable special scores 0."""
    state, _ = create(2, rounds=1, deck=stack("3 swap 0 9 5 2 8 4 1"))
    crafted = orjson.loads(orjson.dumps(state))
    crafted.update({"draw": "", "discard": "p", "phase": "second_draw", "turn": 2})
    assert G.legal_moves(crafted, 1) == [{"type": "skip_draw"}]
    crafted["turn"] = 1  # t < n: the action completes into turn 2, which has no legal move
    state, events = play(crafted, 0, {"type": "skip_draw"})
    assert types(events) == ["skipped_draw", "turn_started", "round_ended", "replaced", "round_scored",
                             "match_ended"]
    assert events[2]["reason"] == "stuck"
    assert events[3] == {"type": "replaced", "seat": 1, "slot": 0, "special": "swap", "discarded": [],
                         "card": None}
    assert events[4]["points"] == [3 + 0 + 5 + 8, 0 + 9 + 2 + 4]


def test_bb_4_11_illegal_not_your_turn_finished():
    """BB-4.11: moves must equal a listed move (keys, values, JSON types); wrong seat; finished."""
    state, _ = create(2, rounds=1, turn_limit=1, deck=stack("3 7 0 9 5 2 8 4 1"))
    for bad in ({"type": "take_discard", "slot": True}, {"type": "take_discard", "slot": 4},
                {"type": "take_discard", "slot": "1"}, {"type": "take_discard"},
                {"type": "draw", "slot": 0}, {"type": "knock"}, {"type": "fly"}):
        with pytest.raises(IllegalMove):
            play(state, 0, bad)
    with pytest.raises(NotYourTurn):
        play(state, 1, {"type": "draw"})
    with pytest.raises(IllegalMove, match="slot must be an integer 0…3"):
        play(state, 0, {"type": "take_discard", "slot": 4})
    with pytest.raises(IllegalMove, match="BB-4.5"):
        play(state, 0, {"type": "knock"})
    state, _ = play(state, 0, {"type": "take_discard", "slot": 1, "label": "ignored"})
    while state["status"] == "active":
        state, _ = pass_turn(state)
    with pytest.raises(MatchFinished):
        play(state, 0, {"type": "draw"})
    assert G.legal_moves(state, 0) == [] and G.to_act(state) == []


def test_why_illegal_never_leaks_hidden_cards():
    """BB-4.11, BB-5: error sentences name rules, never hidden values."""
    state, _ = create(2, deck=stack("3 7 0 9 5 2 8 4 1 peek"))
    state, _ = play(state, 0, {"type": "draw"})
    with pytest.raises(IllegalMove) as err:
        play(state, 0, {"type": "swap_drawn", "slot": 0})
    assert "peek" not in err.value.detail.replace("use_peek", "")


# --- BB-5 -------------------------------------------------------------------------
def test_bb_5_1_to_5_3_view_redaction():
    """BB-5.1, BB-5.2, BB-5.3: displays null but for the admin; held card to holder and admin;
    draw pile order admin only, count public; discard public."""
    deck = stack("3 7 0 9 5 2 8 4 1 6")
    state, _ = create(2, deck=deck)
    state, _ = play(state, 0, {"type": "draw"})
    for viewer, card, pile in ((ADMIN_VIEWER, "6", deck[10:]), (seat_viewer(0), "6", None),
                               (seat_viewer(1), None, None), (SPECTATOR_VIEWER, None, None)):
        view = G.view(state, viewer)
        board = view["board"]
        assert board["drawn"] == {"seat": 0, "card": card, "stage": "action"}
        assert board["draw_pile"] == pile and board["draw_count"] == 56
        assert board["discard"] == ["1"]
        shown = viewer.is_admin
        assert [p["display"] for p in view["players"]] == (
            [deck[0:8:2], deck[1:8:2]] if shown else [[None] * 4] * 2)


def test_bb_5_6_recall_none_and_non_seat_viewers():
    """BB-5.6: known is all null for spectators, admin and recall none."""
    state, _ = create(2, recall="none", deck=stack("3 7 0 9 5 2 8 4 1"))
    state, _ = play(state, 0, {"type": "take_discard", "slot": 0})
    for viewer in (seat_viewer(0), seat_viewer(1), SPECTATOR_VIEWER, ADMIN_VIEWER):
        assert all(p["known"] == [None] * 4 for p in G.view(state, viewer)["players"])
    state, _ = create(2, deck=stack("3 7 0 9 5 2 8 4 1"))
    for viewer in (SPECTATOR_VIEWER, ADMIN_VIEWER):
        assert all(p["known"] == [None] * 4 for p in G.view(state, viewer)["players"])


def test_bb_5_7_event_redaction():
    """BB-5.7: drew/swapped_drawn cards to actor and admin; dealt glimpses per seat (admin all,
    spectator none); discards and took_discard public; recall does not change events;
    redact_event returns a new dict."""
    for recall in ("perfect", "none"):
        deck = stack("3 7 0 9 5 2 8 4 1 6")
        state, setup = create(2, recall=recall, deck=deck)
        dealt = setup[1]
        assert G.redact_event(dealt, seat_viewer(0))["displays"] == [["3", None, None, "8"], [None] * 4]
        assert G.redact_event(dealt, seat_viewer(1))["displays"] == [[None] * 4, ["7", None, None, "4"]]
        assert G.redact_event(dealt, SPECTATOR_VIEWER)["displays"] == [[None] * 4] * 2
        assert G.redact_events([dealt], ADMIN_VIEWER) == [dealt]
        assert G.redact_event(dealt, SPECTATOR_VIEWER)["discard"] == ["1"]
        state, events = play(state, 0, {"type": "draw"})
        frozen = orjson.dumps(events)
        assert G.redact_event(events[0], seat_viewer(1)) == {"type": "drew", "seat": 0, "card": None,
                                                             "stage": "action"}
        assert orjson.dumps(events) == frozen
        state, events = play(state, 0, {"type": "swap_drawn", "slot": 0})
        assert G.redact_event(events[0], SPECTATOR_VIEWER) == {
            "type": "swapped_drawn", "seat": 0, "slot": 0, "card": None, "discarded": "3"}
        assert G.redact_event(events[0], seat_viewer(0))["card"] == "6"
        state, events = play(state, 1, {"type": "take_discard", "slot": 1})
        assert G.redact_event(events[0], SPECTATOR_VIEWER) == events[0]


def test_bb_8_declares_exactly_its_event_types():
    """BB-8, BB-5.7: the game declares the visibility of exactly the event types of BB-8
    (and those every game shares, api.md "Clocks, fallback moves and resigning");
    redacting any other type is refused, never passed through."""
    assert set(G.events) == {"resigned", "timed_out"} | {
        "round_started", "dealt", "turn_started", "reshuffled",                      # BB-8.1
        "drew", "took_discard", "swapped_drawn", "discarded_drawn", "used_swap",      # BB-8.2
        "used_peek", "used_draw2", "skipped_draw", "knocked", "ended_turn",
        "round_ended", "replaced", "round_scored", "match_ended"}                     # BB-8.3
    hand = {"type": "showed_display", "seat": 0, "cards": ["3", "7", "0", "9"]}
    for viewer in (SPECTATOR_VIEWER, seat_viewer(1), ADMIN_VIEWER):
        with pytest.raises(UndeclaredEvent):
            G.redact_event(hand, viewer)


def test_bb_5_5_new_deal_clears_knowledge():
    """BB-5.5: knowledge from a round does not survive the next deal."""
    state, _ = create(2, rounds=2, turn_limit=1, decks=[stack("3 7 0 9 5 2 8 4 1"), stack("5 6 7 8")])
    state, _ = play(state, 0, {"type": "take_discard", "slot": 1})
    assert known(state, 1)[0][1] == "1"
    state, _ = finish_round(state)
    assert state["round"] == 2
    assert admin(state)["board"]["starter"] == 1
    # round 2 deals from seat 1: seat 1 [5, 7, 0, 0], seat 0 [6, 8, 0, 0]
    assert known(state, 0) == [["6", None, None, "0"], [None] * 4]
    assert known(state, 1) == [[None] * 4, ["5", None, None, "0"]]


# --- BB-6 -------------------------------------------------------------------------
def test_bb_6_1_to_6_3_replacement_from_knocker():
    """BB-6.1, BB-6.2 (D13), BB-6.3: reveal, replace knocker-first clockwise, drawn specials
    discarded at once, then the replaced special; scoring."""
    deck = stack("1 peek swap 0 2 0 3 draw2 5 9 9 9 swap 4 7 8")
    state, _ = create(2, rounds=1, deck=deck)
    assert displays(state) == [["1", "swap", "2", "3"], ["peek", "0", "0", "draw2"]]
    state, _ = pass_turn(state)
    state, _ = play(state, 1, {"type": "draw"})
    state, _ = play(state, 1, {"type": "discard_drawn"})
    state, _ = play(state, 1, {"type": "knock"})
    state, events = pass_turn(state)
    tail = events[2:]
    assert tail[0] == {"type": "round_ended", "seat": None, "reason": "knock", "knocker": 1,
                       "displays": [["1", "swap", "2", "3"], ["peek", "0", "0", "draw2"]]}
    assert tail[1:4] == [
        {"type": "replaced", "seat": 1, "slot": 0, "special": "peek", "discarded": ["swap"], "card": "4"},
        {"type": "replaced", "seat": 1, "slot": 3, "special": "draw2", "discarded": [], "card": "7"},
        {"type": "replaced", "seat": 0, "slot": 1, "special": "swap", "discarded": [], "card": "8"}]
    assert tail[4] == {"type": "round_scored", "seat": None, "round": 1, "points": [14, 11], "scores": [14, 11]}
    view = G.view(state, SPECTATOR_VIEWER)
    assert view["board"]["discard"] == ["5", "9", "9", "9", "swap", "peek", "draw2", "swap"]
    assert view["board"]["history"] == [{"round": 1, "starter": 0, "knocker": 1, "reason": "knock",
                                         "displays": [["1", "8", "2", "3"], ["4", "0", "0", "7"]],
                                         "points": [14, 11]}]


def test_bb_6_4_bb_6_5_next_round_and_match_end():
    """BB-6.4, BB-6.5 (D18), BB-5.1/D20, BB-7.2 history: the next round is dealt in the same call;
    the last round finishes the match; ties share a place; final displays shown to all."""
    state, _ = create(2, rounds=2, turn_limit=1, decks=[stack("0 1 1 0 2 2 3 3 5"), stack("1 0 0 1 2 2 3 3 5")])
    state, events = finish_round(state)
    assert types(events)[-6:] == ["ended_turn", "round_ended", "round_scored", "round_started", "dealt",
                                  "turn_started"]
    assert events[-4]["points"] == [6, 6]
    assert events[-3] == {"type": "round_started", "seat": None, "round": 2, "starter": 1}
    state, events = finish_round(state)
    assert events[-1] == {"type": "match_ended", "seat": None,
                          "result": {"scores": [12, 12], "ranking": [[0, 1]], "winners": [0, 1]}}
    view = G.view(state, SPECTATOR_VIEWER)
    assert (view["status"], view["phase"], view["to_act"]) == ("finished", "finished", [])
    assert view["result"] == {"scores": [12, 12], "ranking": [[0, 1]], "winners": [0, 1]}
    assert [p["display"] for p in view["players"]] == [["0", "1", "2", "3"], ["1", "0", "2", "3"]]
    assert len(view["board"]["history"]) == 2 and view["board"]["drawn"] is None


# --- worked examples (section 11) -------------------------------------------------
def test_w1_worked_example():
    """W1 (BB-3.3, BB-3.4, BB-4.1, BB-4.3, BB-4.5–4.7, BB-5.5, BB-6, BB-7.3), step by step."""
    state, _ = create(2, rounds=1, deck=stack("3 7 0 9 5 2 8 4 1 6 swap"))
    assert displays(state) == [["3", "0", "5", "8"], ["7", "9", "2", "4"]]
    assert admin(state)["board"]["discard"] == ["1"] and admin(state)["board"]["draw_count"] == 57
    assert known(state, 0)[0] == ["3", None, None, "8"] and known(state, 1)[1] == ["7", None, None, "4"]

    state, events = play(state, 0, {"type": "take_discard", "slot": 3})              # 1
    assert displays(state)[0] == ["3", "0", "5", "1"] and admin(state)["board"]["discard"] == ["8"]
    assert all(known(state, s)[0][3] == "1" for s in (0, 1))
    assert events[-1] == {"type": "turn_started", "seat": 1, "turn": 2}

    state, events = play(state, 1, {"type": "draw"})                                 # 2
    assert events == [{"type": "drew", "seat": 1, "card": "6", "stage": "action"}]
    assert G.redact_event(events[0], seat_viewer(0))["card"] is None
    view = seat_view(state, 0)
    assert view == {
        "status": "active", "round": 1, "rounds": 1, "scores": [0, 0], "result": None,
        "phase": "drawn", "to_act": [1],
        "players": [{"seat": 0, "name": "p0", "display": [None, None, None, None], "known": ["3", None, None, "1"]},
                    {"seat": 1, "name": "p1", "display": [None, None, None, None], "known": [None, None, None, None]}],
        "board": {"starter": 0, "turn": 2, "current_seat": 1, "turn_limit": 30, "max_turn": 60,
                  "knocker": None, "knock_turn": None, "last_turn": None, "draw_count": 56,
                  "draw_pile": None, "discard": ["8"], "drawn": {"seat": 1, "card": None, "stage": "action"},
                  "history": []}}                                                    # BB-7.3

    state, events = play(state, 1, {"type": "swap_drawn", "slot": 1})                # 3
    assert displays(state)[1] == ["7", "6", "2", "4"] and admin(state)["board"]["discard"] == ["8", "9"]
    assert admin(state)["phase"] == "knock"

    state, events = play(state, 1, {"type": "knock"})                                # 4
    board = admin(state)["board"]
    assert (board["knock_turn"], board["last_turn"], board["turn"], G.to_act(state)) == (2, 3, 3, [0])

    state, events = play(state, 0, {"type": "draw"})                                 # 5
    assert events[0]["card"] == "swap"
    state, events = play(state, 0, {"type": "use_swap", "slot": 0, "target_seat": 1, "target_slot": 1})  # 6
    assert types(events) == ["used_swap", "round_ended", "round_scored", "match_ended"]
    assert displays(state) == [["6", "0", "5", "1"], ["7", "3", "2", "4"]]
    assert admin(state)["board"]["discard"] == ["8", "9", "swap"]
    assert events[1]["reason"] == "knock"
    assert events[2]["points"] == [12, 16]
    assert state["result"] == {"scores": [12, 16], "ranking": [[0], [1]], "winners": [0]}


def test_w2_worked_example():
    """W2 (BB-4.1 D5, BB-4.3, BB-4.4, BB-4.7, BB-4.9, BB-6.2 starter-first, BB-6.5 ties), step by step."""
    deck = stack("2 1 0 4 1 3 6 swap draw2 peek 9 7 8 draw2 9 0 2 6 swap 3")
    state, _ = create(3, rounds=1, turn_limit=1, deck=deck)
    assert admin(state)["board"]["max_turn"] == 3
    assert displays(state) == [["2", "4", "6", "peek"], ["1", "1", "swap", "9"], ["0", "3", "draw2", "7"]]
    assert admin(state)["board"]["discard"] == ["8"]

    state, events = play(state, 0, {"type": "draw"})                                 # 1
    assert events[0]["card"] == "draw2"
    state, events = play(state, 0, {"type": "use_draw2"})
    assert admin(state)["board"]["discard"] == ["8", "draw2"]
    assert admin(state)["board"]["drawn"] == {"seat": 0, "card": "9", "stage": "draw2_first"}
    state, events = play(state, 0, {"type": "discard_drawn"})
    assert admin(state)["phase"] == "second_draw"
    state, events = play(state, 0, {"type": "draw"})
    assert admin(state)["board"]["drawn"] == {"seat": 0, "card": "0", "stage": "draw2_second"}
    state, events = play(state, 0, {"type": "swap_drawn", "slot": 3})
    assert displays(state)[0] == ["2", "4", "6", "0"]
    assert admin(state)["board"]["discard"] == ["8", "draw2", "9", "peek"]
    assert events[-1] == {"type": "turn_started", "seat": 1, "turn": 2}

    assert G.legal_moves(state, 1) == [{"type": "draw"}]                             # 2
    state, events = play(state, 1, {"type": "draw"})
    assert events[0]["card"] == "2"
    state, events = play(state, 1, {"type": "swap_drawn", "slot": 2})
    assert displays(state)[1] == ["1", "1", "2", "9"]
    assert admin(state)["board"]["discard"][-1] == "swap"

    state, events = play(state, 2, {"type": "draw"})                                 # 3
    assert events[0]["card"] == "6"
    state, events = play(state, 2, {"type": "discard_drawn"})
    assert admin(state)["phase"] == "knock"
    state, events = play(state, 2, {"type": "end_turn"})
    assert types(events) == ["ended_turn", "round_ended", "replaced", "round_scored", "match_ended"]
    assert events[1]["reason"] == "turn_limit" and events[1]["knocker"] is None
    assert events[2] == {"type": "replaced", "seat": 2, "slot": 2, "special": "draw2", "discarded": ["swap"],
                         "card": "3"}
    assert events[3]["points"] == [12, 13, 13]
    assert state["result"] == {"scores": [12, 13, 13], "ranking": [[0], [1, 2]], "winners": [0]}
