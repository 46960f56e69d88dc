"""13 Beavers rules, one rule at a time, with stacked decks, fish and wolves.

Every test names the TB rule ids (docs/games/thirteen-beavers.md) it checks.
Board facts below are copied from the spec (TB-1.4, TB-1.5, TB-1.7), not read from the
engine, so the engine's board data is checked against them.

Some tests place beavers directly in the state (``put``/``give``): that is the
test's way to reach a position without a long stacked game, and it keeps the
TB-10 invariants (fish taken from the pond, dams off lava).
"""
from __future__ import annotations

from collections import Counter
from typing import Any, TypedDict, Unpack

import orjson
import pytest

from engine.core import (
    ADMIN_VIEWER,
    FINISHED,
    SPECTATOR_VIEWER,
    Event,
    IllegalMove,
    InvalidOptions,
    MatchFinished,
    Move,
    NotYourTurn,
    clone,
    reshuffle_key,
    seat_viewer,
    seeded_shuffle,
)
from engine.thirteen_beavers import ThirteenBeavers, ThirteenBeaversState

G = ThirteenBeavers()
ADMIN, SPECTATOR = ADMIN_VIEWER, SPECTATOR_VIEWER

DECK = [str(v) for v in range(1, 14) for _ in range(4)]
FISH = ["turbo"] * 3 + ["vision"] * 3 + ["stinky"] * 2
WOLVES = ["awake"] * 4 + ["asleep"]


class Spaces(TypedDict):
    """A board's special spaces (TB-1.4 / TB-1.5 / TB-1.7); ``exit``: where the avenue leads."""

    paradise: int
    avenue: int
    exit: int
    fish: int
    rapids: int
    wolf: int
    lava: list[int]


# TB-1.4 / TB-1.5 / TB-1.7, transcribed from the spec.
SPACES: dict[str, Spaces] = {
    "standard": {"paradise": 30, "avenue": 3, "exit": 24, "fish": 10, "rapids": 14, "wolf": 22,
                 "lava": [6, 7, 18, 19, 20, 26, 27]},
    "short": {"paradise": 12, "avenue": 1, "exit": 10, "fish": 3, "rapids": 7, "wolf": 8,
              "lava": [5, 11]},
    "balanced": {"paradise": 30, "avenue": 4, "exit": 21, "fish": 10, "rapids": 14, "wolf": 24,
                 "lava": [6, 7, 18, 19, 20, 26, 27]},
}
# "Nearest water behind" each lava space (TB-1.6), worked out by hand.
WATER_BEHIND_LAVA = {"standard": {6: 5, 7: 5, 18: 17, 19: 17, 20: 17, 26: 25, 27: 25},
                     "short": {5: 4, 11: 10},
                     "balanced": {6: 5, 7: 5, 18: 17, 19: 17, 20: 17, 26: 25, 27: 25}}
EVERY_BOARD = pytest.mark.parametrize("board", list(SPACES))

CODES: dict[str, Move] = {
    "h": {"type": "guess", "dir": "higher"}, "l": {"type": "guess", "dir": "lower"},
    "hv": {"type": "guess", "dir": "higher", "vision": True},
    "lv": {"type": "guess", "dir": "lower", "vision": True},
    "rh": {"type": "rapids", "dir": "higher"}, "rl": {"type": "rapids", "dir": "lower"},
    "rhv": {"type": "rapids", "dir": "higher", "vision": True},
    "rlv": {"type": "rapids", "dir": "lower", "vision": True},
    "dam": {"type": "dam"}, "turbo": {"type": "use_turbo"},
}


# --------------------------------------------------------------------------
# Helpers.
# --------------------------------------------------------------------------
def stacked(*prefix: str | int) -> list[str]:
    """``prefix`` first, then the remaining copies in ascending order (TB-11)."""
    cards = [str(c) for c in prefix]
    rest = Counter(DECK) - Counter(cards)
    return cards + sorted(rest.elements(), key=int)


def new(*prefix: str | int, n: int = 2, board: str = "standard",
        **options: Any) -> tuple[ThirteenBeaversState, list[Event]]:
    state, events, _ = G.create([f"p{i}" for i in range(n)], 7,
                                {"deck": stacked(*prefix), "board": board, **options})
    return state, events


def mv(code: str) -> Move:
    """Move shorthand: h/l (guess), hv/lv (armed vision), rh/rl/rhv/rlv,
    a<value> (avenue), dam, turbo."""
    if code.startswith("a"):
        return {"type": "avenue", "value": code[1:]}
    return dict(CODES[code])


def run(state: ThirteenBeaversState, *codes: str) -> tuple[ThirteenBeaversState, list[Event]]:
    """Play moves for whoever is to act; returns the state and all events."""
    events: list[Event] = []
    for code in codes:
        state, ev = G.play(state, G.to_act(state)[0], mv(code))
        events += ev
    return state, events


class TurnFields(TypedDict, total=False):
    """The turn state :func:`put` may set as well (TB-4.1)."""

    answers: int


def put(state: ThirteenBeaversState, seat: int, beaver: int, dam: int | None = None,
        **turn: Unpack[TurnFields]) -> ThirteenBeaversState:
    """Test-only: place a seat's beaver (and dam, default the same space).
    For the active seat the turn-start dam follows (TB-4.1)."""
    s = clone(state)
    s["beaver"][seat] = beaver
    s["dam"][seat] = beaver if dam is None else dam
    if seat == s["active"]:
        s["turn_dam"] = s["dam"][seat]
    s.update(turn)
    return s


def give(state: ThirteenBeaversState, seat: int, *fish: str) -> ThirteenBeaversState:
    """Test-only: hand fish from the pond to a seat (keeps TB-10.2)."""
    s = clone(state)
    for f in fish:
        s["pond"].remove(f)
        s["fish"][seat].append(f)
    return s


def types(events: list[Event]) -> list[str]:
    return [e["type"] for e in events]


def only(events: list[Event], kind: str) -> Event:
    found = [e for e in events if e["type"] == kind]
    assert len(found) == 1, (kind, events)
    return found[0]


def admin(state: ThirteenBeaversState) -> dict[str, Any]:
    return G.view(state, ADMIN)


def pos(state: ThirteenBeaversState, seat: int = 0) -> tuple[int, int]:
    return state["beaver"][seat], state["dam"][seat]


# --------------------------------------------------------------------------
# Components, boards, setup (TB-1, TB-3).
# --------------------------------------------------------------------------
@EVERY_BOARD
def test_boards_are_the_spec_layouts(board):
    """TB-1.4, TB-1.5, TB-1.7, TB-1.6: kinds and next of every space."""
    sp = SPACES[board]
    view = admin(new(board=board)[0])["board"]
    assert view["layout"] == board and view["paradise"] == sp["paradise"]
    assert [s["id"] for s in view["spaces"]] == list(range(sp["paradise"] + 1))
    for s in view["spaces"]:
        i = s["id"]
        want = ("start" if i == 0 else "paradise" if i == sp["paradise"] else "avenue" if i == sp["avenue"]
                else "fish" if i == sp["fish"] else "rapids" if i == sp["rapids"] else "wolf" if i == sp["wolf"]
                else "lava" if i in sp["lava"] else "water")
        assert s["kind"] == want, s
        nxt = [] if i == sp["paradise"] else [i + 1, sp["exit"]] if i == sp["avenue"] else [i + 1]
        assert s["next"] == nxt, s


def test_setup():
    """TB-3.1 – TB-3.3, TB-8.1 (version-0 events), TB-6.3 (round = rounds = 1)."""
    deck = stacked(6, 10, 2)
    state, events, _ = G.create(["ana", "bo", "cy"], 5, {"deck": deck, "first_seat": 2,
                                                          "fish": FISH, "wolves": WOLVES})
    view = admin(state)
    assert events == [{"type": "match_started", "seat": None, "first_seat": 2, "face_up": "6"},
                      {"type": "turn_started", "seat": 2, "turn": 1}]
    assert view["board"]["face_up"] == "6" and view["board"]["draw"] == deck[1:]
    assert view["board"]["discard"] == [] and view["board"]["pond"] == FISH
    assert view["board"]["cave"] == WOLVES and not view["board"]["cave_open"]
    assert view["board"]["active"] == {"seat": 2, "answers": 0, "turbo": False}
    assert view["to_act"] == [2] and view["phase"] == "play" and view["status"] == "active"
    assert (view["round"], view["rounds"]) == (1, 1)
    assert [(p["beaver"], p["dam"], p["fish"]) for p in view["players"]] == [(0, 0, [])] * 3
    assert view["scores"] == [0, 0, 0] and view["result"] is None


def test_default_shuffles_follow_the_documented_keys():
    """TB-3.1, D14: deck, pond and cave are seeded shuffles with fixed keys."""
    state, _, _ = G.create(["a", "b"], 99, {})
    view = admin(state)
    deck = seeded_shuffle(DECK, "thirteen-beavers:99:1:0")
    assert [view["board"]["face_up"]] + view["board"]["draw"] == deck
    assert view["board"]["pond"] == seeded_shuffle(FISH, "thirteen-beavers:99:fish")
    assert view["board"]["cave"] == seeded_shuffle(WOLVES, "thirteen-beavers:99:wolves")
    again, _, _ = G.create(["a", "b"], 99, {})
    assert orjson.dumps(again) == orjson.dumps(state)


# --------------------------------------------------------------------------
# Options (TB-2).
# --------------------------------------------------------------------------
@pytest.mark.parametrize("options", [
    {"rounds": 2}, {"colour": "red"},
    {"deck": DECK[:-1]}, {"deck": DECK[:-1] + ["14"]}, {"deck": "1,2,3"}, {"deck": [int(c) for c in DECK]},
    {"fish": FISH[:-1]}, {"fish": ["turbo"] * 4 + ["vision"] * 2 + ["stinky"] * 2}, {"fish": "turbo"},
    {"fish": FISH[:-1] + ["trout"]}, {"wolves": ["awake"] * 5}, {"wolves": WOLVES + ["awake"]},
    {"wolves": {"awake": 4}}, {"board": "long"}, {"board": 1}, {"max_turns": 0}, {"max_turns": 10001},
    {"max_turns": True}, {"max_turns": "20"}, {"first_seat": 2}, {"first_seat": -1},
    {"recall": "some"},
])
def test_bad_options_are_rejected(options):
    """TB-2.1, TB-1.1, TB-1.2: unknown options, wrong types, out of limits."""
    with pytest.raises(InvalidOptions):
        G.create(["a", "b"], 1, options)


@pytest.mark.parametrize("names", [["a"], [f"p{i}" for i in range(7)]])
def test_player_count(names):
    """2–6 players (TB header, TB-2.1)."""
    with pytest.raises(InvalidOptions):
        G.create(names, 1, {})


def test_good_options_and_catalogue():
    """TB-2: declared options, defaults and limits."""
    _, _, resolved = G.create(["a", "b", "c", "d", "e", "f"], 3,
                              {"fish": list(reversed(FISH)), "wolves": ["asleep"] + WOLVES[:4],
                               "board": "short", "max_turns": 10000, "first_seat": 5, "recall": "none"})
    assert resolved["fish"][0] == "stinky" and resolved["wolves"][0] == "asleep"
    _, _, balanced = G.create(["a", "b"], 3, {"board": "balanced"})
    assert balanced["board"] == "balanced"
    _, _, defaults = G.create(["a", "b"], 3, {})
    assert defaults == {"deck": None, "fish": None, "wolves": None, "first_seat": 0,
                        "board": "standard", "max_turns": 2000, "recall": "perfect"}
    entry = G.catalogue()
    assert (entry["id"], entry["title"], entry["min_players"], entry["max_players"]) == \
        ("thirteen-beavers", "13 Beavers", 2, 6)
    assert [o["name"] for o in entry["options"]] == \
        ["deck", "fish", "wolves", "first_seat", "board", "max_turns", "recall"]
    board = next(o for o in entry["options"] if o["name"] == "board")
    assert board["choices"] == ["standard", "short", "balanced"]


# --------------------------------------------------------------------------
# Legal moves and move checks (TB-4.2, TB-4.3).
# --------------------------------------------------------------------------
def test_legal_moves_order_with_every_option():
    """TB-4.2 (1)–(6) in order: turbo, guesses, vision guesses, rapids, dam."""
    state, _ = new(6, 9, 3)
    state = give(put(state, 0, 14), 0, "turbo", "vision")
    assert G.legal_moves(state, 0) == [
        mv("turbo"), mv("h"), mv("l"), mv("hv"), mv("lv"), mv("rh"), mv("rl"), mv("rhv"), mv("rlv")]
    assert G.legal_moves(state, 1) == []
    state, _ = run(state, "turbo")
    assert G.legal_moves(state, 0) == [mv("h"), mv("l"), mv("hv"), mv("lv"),
                                       mv("rh"), mv("rl"), mv("rhv"), mv("rlv")]


def test_legal_moves_on_the_avenue_and_dam_rules():
    """TB-4.2 (5), (6), D5: avenue values 1…13; dam only after an answer, not on lava."""
    state, _ = new(6, 9, 3, 12)
    state = put(state, 0, 2)
    assert G.legal_moves(state, 0) == [mv("h"), mv("l")]
    state, _ = run(state, "h")                        # 9 > 6 → 3 (avenue)
    assert G.legal_moves(state, 0) == [mv("h"), mv("l")] + [mv(f"a{v}") for v in range(1, 14)] + [mv("dam")]
    state = put(state, 0, 6, dam=5, answers=1)        # lava
    assert G.legal_moves(state, 0) == [mv("h"), mv("l")]


def test_vision_false_is_the_plain_move_and_bad_moves_are_refused():
    """TB-4.3: "vision": false = plain; other moves illegal; wrong seat; finished."""
    state, _ = new(6, 9)
    after, events = G.play(state, 0, {"type": "guess", "dir": "higher", "vision": False, "label": "x"})
    plain, plain_events = G.play(state, 0, mv("h"))
    assert orjson.dumps(after) == orjson.dumps(plain) and events == plain_events
    for bad, words in [(mv("hv"), "vision"), ({"type": "guess", "dir": "up"}, "dir"),
                       ({"type": "guess", "dir": "higher", "vision": 1}, "true or false"),
                       (mv("dam"), "at least one answer"), (mv("turbo"), "turbo"),
                       (mv("rh"), "rapids space"), (mv("a6"), "avenue space"), ({"type": "pass"}, "legal move types")]:
        with pytest.raises(IllegalMove, match=words):
            G.play(state, 0, bad)
    with pytest.raises(NotYourTurn):
        G.play(state, 1, mv("h"))
    lava = put(state, 0, 6, dam=5, answers=1)
    with pytest.raises(IllegalMove, match="lava"):
        G.play(lava, 0, mv("dam"))
    avenue = put(state, 0, 3)
    with pytest.raises(IllegalMove, match="value"):
        G.play(avenue, 0, {"type": "avenue", "value": 6})
    over = put(state, 0, 29)
    over, _ = run(over, "h")
    with pytest.raises(MatchFinished):
        G.play(over, 1, mv("h"))
    assert G.legal_moves(over, 0) == G.legal_moves(over, 1) == []


# --------------------------------------------------------------------------
# Worked examples (TB-11).
# --------------------------------------------------------------------------
def test_worked_example_11_1():
    """TB-11.1 with TB-4.5, TB-4.6 (right, wrong, equal), TB-4.12 (dam), TB-4.2."""
    state, _ = new(6, 10, 2, 2, 9, 4, 11)
    version = 0
    assert admin(state)["board"]["face_up"] == "6" and G.legal_moves(state, 0) == [mv("h"), mv("l")]

    def step(code, seat):
        nonlocal state, version
        assert G.to_act(state) == [seat]
        state, events = G.play(state, seat, mv(code))
        version += 1
        return events

    ev = step("h", 0)
    assert only(ev, "answered") == {"type": "answered", "seat": 0, "move": "guess", "dir": "higher",
                                    "value": None, "previous": "6", "card": "10", "outcome": "right"}
    assert pos(state) == (1, 0)
    step("l", 0)
    assert pos(state) == (2, 0)
    ev = step("dam", 0)
    assert types(ev) == ["dam_placed", "turn_ended", "turn_started"]
    assert pos(state) == (2, 2) and state["turn"] == 2
    ev = step("h", 1)
    assert only(ev, "answered")["outcome"] == "equal"
    assert only(ev, "dam_placed") == {"type": "dam_placed", "seat": 1, "space": 0, "cause": "equal"}
    assert pos(state, 1) == (0, 0) and state["turn"] == 3
    step("h", 0)
    assert pos(state) == (3, 2)
    assert G.legal_moves(state, 0) == [mv("h"), mv("l")] + [mv(f"a{v}") for v in range(1, 14)] + [mv("dam")]
    ev = step("h", 0)
    assert only(ev, "answered")["outcome"] == "wrong"
    assert only(ev, "moved") == {"type": "moved", "seat": 0, "from": 3, "to": 2, "cause": "back_to_dam"}
    assert "dam_placed" not in types(ev)
    assert pos(state) == (2, 2) and state["turn"] == 4 and G.to_act(state) == [1]
    step("h", 1)
    view = admin(state)
    assert pos(state, 1) == (1, 0)
    assert view["board"]["face_up"] == "11"
    assert view["board"]["discard"] == ["6", "10", "2", "2", "9", "4"]
    assert len(view["board"]["draw"]) == 45 and version == 7


def test_worked_example_11_2():
    """TB-11.2: avenue exact (TB-4.8), lava without dam and equal on lava (TB-4.6, D7)."""
    state, _ = new(5, 9, 4, 2, 2, board="short")
    state, _ = run(state, "h")
    assert pos(state) == (1, 0)
    state, ev = run(state, "a4")
    assert only(ev, "answered")["outcome"] == "exact" and only(ev, "answered")["value"] == "4"
    assert only(ev, "moved")["cause"] == "avenue"
    assert pos(state) == (10, 0) and G.to_act(state) == [0]
    state, _ = run(state, "l")
    assert pos(state) == (11, 0)
    assert G.legal_moves(state, 0) == [mv("h"), mv("l")]
    state, ev = run(state, "l")
    assert types(ev) == ["answered", "moved", "dam_placed", "turn_ended", "turn_started"]
    assert only(ev, "moved")["cause"] == "lava" and only(ev, "turn_ended")["reason"] == "lava"
    assert pos(state) == (10, 10) and state["turn"] == 2 and G.to_act(state) == [1]


def test_worked_example_11_3():
    """TB-11.3: fishing a turbo (TB-4.12a, TB-5.3), use_turbo (TB-4.4), 2 per right answer."""
    state, _ = new(1, 13, 1, 12, 2, 11, 3, 10, 4, 9, 5, 6, 13, 1, 7, fish=["turbo"] + FISH[1:])
    state, _ = run(state, *"hlhlhlhlhl")
    assert pos(state) == (10, 0)
    state, ev = run(state, "dam")
    assert types(ev) == ["dam_placed", "fish_caught", "turn_ended", "turn_started"]
    assert G.view(state, seat_viewer(1))["players"][0]["fish"] == [None]
    assert G.view(state, seat_viewer(0))["players"][0]["fish"] == ["turbo"]
    assert G.redact_event(only(ev, "fish_caught"), seat_viewer(1))["fish"] is None
    state, ev = run(state, "l")
    assert only(ev, "answered")["outcome"] == "wrong" and state["turn"] == 3
    assert G.legal_moves(state, 0)[0] == mv("turbo")
    state, ev = run(state, "turbo")
    assert ev == [{"type": "turbo_used", "seat": 0}]
    state, _ = run(state, "h")
    assert pos(state) == (12, 10)
    state, _ = run(state, "l")
    assert pos(state) == (14, 10)
    state, _ = run(state, "h")
    assert pos(state) == (16, 10)
    state, _ = run(state, "dam")
    assert pos(state) == (16, 16)
    assert admin(state)["board"]["used_fish"] == ["turbo"] and admin(state)["players"][0]["fish"] == []


def test_worked_example_11_4():
    """TB-11.4, TB-1.7, D17: on the balanced board the avenue leads to 21,
    before the cave, so the beaver still meets the wolf (TB-4.8, TB-4.9, TB-4.10)."""
    state, _ = new(5, 9, 2, 12, 3, 7, 8, 10, 11, board="balanced", wolves=WOLVES)
    state, _ = run(state, *"hlhl")
    assert pos(state) == (4, 0)
    assert G.legal_moves(state, 0)[2:15] == [mv(f"a{v}") for v in range(1, 14)]
    state, ev = run(state, "a7")
    assert only(ev, "answered")["outcome"] == "exact"
    assert only(ev, "moved") == {"type": "moved", "seat": 0, "from": 4, "to": 21, "cause": "avenue"}
    assert pos(state) == (21, 0) and G.to_act(state) == [0]
    state, _ = run(state, "h", "h")
    assert pos(state) == (23, 0)
    state, ev = run(state, "h")
    assert types(ev) == ["answered", "moved", "dam_placed", "wolf_revealed", "turn_ended", "turn_started"]
    assert only(ev, "dam_placed") == {"type": "dam_placed", "seat": 0, "space": 24, "cause": "wolf"}
    assert only(ev, "wolf_revealed")["token"] == "awake"
    assert pos(state) == (24, 24) and state["turn"] == 2 and G.to_act(state) == [1]


# --------------------------------------------------------------------------
# Guess outcomes (TB-4.5, TB-4.6).
# --------------------------------------------------------------------------
def test_equal_on_water_secures_the_dam():
    """TB-4.6: equal elsewhere → dam to the beaver's space, turn ends."""
    state, _ = new(5, 8, 8)
    state, ev = run(state, "h", "h")
    assert only(ev, "turn_ended")["reason"] == "equal" and pos(state) == (1, 1)


def test_equality_plays_no_part_for_the_avenue():
    """TB-4.5, D6: an avenue answer is exact or miss, never equal."""
    state, _ = new(5, 5, board="short")
    state = put(state, 0, 1)
    _, ev = run(state, "a5")
    assert only(ev, "answered")["outcome"] == "exact"
    state2, _ = new(5, 7, board="short")
    state2 = put(state2, 0, 1)
    _, ev = run(state2, "a5")
    assert only(ev, "answered")["outcome"] == "miss"


# --------------------------------------------------------------------------
# Enticing Avenue (TB-4.8).
# --------------------------------------------------------------------------
@EVERY_BOARD
def test_avenue_exact_jumps_to_the_exit(board):
    """TB-4.8, TB-1.6, D9: exact → exit, dam unchanged, the turn goes on."""
    sp = SPACES[board]
    state, _ = new(5, 7, n=3, board=board)
    state = put(state, 0, sp["avenue"], dam=0, answers=1)
    state, ev = run(state, "a7")
    assert types(ev) == ["answered", "moved"]
    assert only(ev, "moved") == {"type": "moved", "seat": 0, "from": sp["avenue"], "to": sp["exit"],
                                 "cause": "avenue"}
    assert pos(state) == (sp["exit"], 0) and G.to_act(state) == [0] and state["answers"] == 2


@EVERY_BOARD
def test_avenue_miss_sends_beaver_and_dam_to_start(board):
    """TB-4.8: miss → beaver and dam to 0, turn ends (avenue_miss)."""
    sp = SPACES[board]
    state, _ = new(5, 7, board=board)
    state = put(state, 0, sp["avenue"])
    state, ev = run(state, "a8")
    assert types(ev) == ["answered", "moved", "dam_placed", "turn_ended", "turn_started"]
    assert only(ev, "moved")["cause"] == only(ev, "dam_placed")["cause"] == "to_start"
    assert only(ev, "turn_ended")["reason"] == "avenue_miss"
    assert pos(state) == (0, 0) and G.to_act(state) == [1]


@EVERY_BOARD
def test_plain_guess_on_the_avenue_steps_forward(board):
    """TB-1.6: the avenue's first next is id+1, taken by a right guess."""
    sp = SPACES[board]
    state, _ = new(5, 7, board=board)
    state, _ = run(put(state, 0, sp["avenue"]), "h")
    assert pos(state) == (sp["avenue"] + 1, sp["avenue"])


# --------------------------------------------------------------------------
# Lava (TB-1.6, TB-4.2, TB-4.6, D7).
# --------------------------------------------------------------------------
@pytest.mark.parametrize("board,lava", [(b, s) for b in SPACES for s in SPACES[b]["lava"]])
def test_equal_on_lava_goes_to_the_nearest_water_behind(board, lava):
    """TB-4.6, TB-1.6, D7: equal on lava → beaver and dam to the nearest water
    behind, even ahead of the old dam; no dam on lava."""
    state, _ = new(5, 5, board=board)
    water = WATER_BEHIND_LAVA[board][lava]
    state = put(state, 0, lava, dam=0, answers=1)
    assert mv("dam") not in G.legal_moves(state, 0)
    state, ev = run(state, "h")
    assert only(ev, "moved") == {"type": "moved", "seat": 0, "from": lava, "to": water, "cause": "lava"}
    assert only(ev, "dam_placed") == {"type": "dam_placed", "seat": 0, "space": water, "cause": "lava"}
    assert pos(state) == (water, water) and G.to_act(state) == [1]


@EVERY_BOARD
def test_wrong_on_lava_goes_back_to_the_dam_and_right_moves_on(board):
    """TB-4.6, D7: wrong on lava → dam; right on lava → forward."""
    lava = SPACES[board]["lava"][0]
    state, _ = new(5, 9, 2, board=board)
    state = put(state, 0, lava, dam=2, answers=1)
    moved, _ = run(state, "h")
    assert pos(moved) == (lava + 1, 2)
    back, ev = run(moved, "h")
    assert pos(back) == (2, 2) and only(ev, "turn_ended")["reason"] == "wrong"


# --------------------------------------------------------------------------
# Rapids (TB-4.7, D8).
# --------------------------------------------------------------------------
@EVERY_BOARD
def test_rapids_right_moves_three_ignoring_turbo(board):
    """TB-4.7: right → 3 forward (turbo ignored; on short the closed cave stops it, TB-4.9)."""
    sp = SPACES[board]
    state, _ = new(5, 9, board=board, wolves=["asleep"] + WOLVES[:4])
    state = give(put(state, 0, sp["rapids"]), 0, "turbo")
    state, ev = run(state, "turbo", "rh")
    expect = sp["wolf"] if board == "short" else sp["rapids"] + 3
    assert only(ev, "moved") == {"type": "moved", "seat": 0, "from": sp["rapids"], "to": expect, "cause": "rapids"}
    if board == "short":                              # stopped at the closed entrance, asleep
        assert types(ev)[-3:] == ["dam_placed", "wolf_revealed", "cave_opened"]
    assert G.to_act(state) == [0] and state["beaver"][0] == expect


def test_rapids_passes_the_open_cave_on_the_short_board():
    """TB-4.7, TB-4.10: with the cave open the wolf space is water."""
    state, _ = new(5, 9, board="short")
    state = put(state, 0, 7)
    state["wolf_out"], state["cave"] = state["cave"], []
    state, _ = run(state, "rh")
    assert pos(state) == (10, 7)


@EVERY_BOARD
@pytest.mark.parametrize("dam_back", [0, 3])
def test_rapids_wrong_goes_to_min_of_dam_and_r_minus_3(board, dam_back):
    """TB-4.7, D8: wrong → beaver and dam to min(dam, R−3), turn ends."""
    r = SPACES[board]["rapids"]
    dam = r - dam_back
    state, _ = new(5, 2, board=board)
    state = put(state, 0, r, dam=dam, answers=1 if dam != r else 0)
    state, ev = run(state, "rh")
    target = min(dam, r - 3)
    assert pos(state) == (target, target)
    assert only(ev, "dam_placed") == {"type": "dam_placed", "seat": 0, "space": target, "cause": "rapids_back"}
    assert only(ev, "moved")["cause"] == "rapids_back"
    assert only(ev, "turn_ended")["reason"] == "rapids_wrong"


@EVERY_BOARD
def test_rapids_equal_places_the_dam_on_the_rapids(board):
    """TB-4.7: equal → dam to R, turn ends."""
    r = SPACES[board]["rapids"]
    state, _ = new(5, 5, board=board)
    state = put(state, 0, r, dam=2, answers=1)
    state, ev = run(state, "rl")
    assert pos(state) == (r, r) and only(ev, "turn_ended")["reason"] == "equal"
    assert only(ev, "dam_placed")["cause"] == "equal"


def test_vision_saves_a_wrong_rapids_answer():
    """TB-4.7, TB-4.6: the converted answer moves 3."""
    state, _ = new(5, 2)
    state = give(put(state, 0, 14), 0, "vision")
    state, ev = run(state, "rhv")
    assert types(ev) == ["answered", "vision_used", "moved"]
    assert only(ev, "moved")["cause"] == "vision" and pos(state) == (17, 14)
    assert state["used_fish"] == ["vision"] and state["fish"][0] == []


# --------------------------------------------------------------------------
# Wolf cave (TB-4.1, TB-4.9, TB-4.10, D10).
# --------------------------------------------------------------------------
@EVERY_BOARD
def test_landing_on_the_closed_cave_awake(board):
    """TB-4.9, TB-4.10: landing places the dam and reveals; awake ends the turn."""
    w = SPACES[board]["wolf"]
    state, _ = new(5, 9, board=board, wolves=WOLVES)
    state = put(state, 0, w - 1)
    state, ev = run(state, "h")
    assert types(ev) == ["answered", "moved", "dam_placed", "wolf_revealed", "turn_ended", "turn_started"]
    assert only(ev, "dam_placed") == {"type": "dam_placed", "seat": 0, "space": w, "cause": "wolf"}
    assert only(ev, "wolf_revealed") == {"type": "wolf_revealed", "seat": 0, "token": "awake"}
    assert only(ev, "turn_ended")["reason"] == "wolf_awake"
    view = admin(state)["board"]
    assert view["wolf_out"] == ["awake"] and len(view["cave"]) == 4 and not view["cave_open"]
    assert pos(state) == (w, w) and G.to_act(state) == [1]


@EVERY_BOARD
def test_landing_on_the_closed_cave_asleep_opens_it(board):
    """TB-4.10: asleep → all tokens out in cave order, cave open for good, turn goes on."""
    w = SPACES[board]["wolf"]
    wolves = ["awake", "asleep", "awake", "awake", "awake"]
    state, _ = new(5, 9, 2, 12, board=board, wolves=wolves)
    state = put(state, 0, w - 1)
    state["cave"], state["wolf_out"] = wolves[1:], ["awake"]
    state, ev = run(state, "h")
    assert only(ev, "wolf_revealed")["token"] == "asleep"
    assert only(ev, "cave_opened") == {"type": "cave_opened", "seat": 0, "removed": ["awake"] * 3}
    view = admin(state)["board"]
    assert view["wolf_out"] == wolves and view["cave"] == [] and view["cave_open"]
    assert G.to_act(state) == [0] and state["answers"] == 1
    state, _ = run(state, "l", "h")                    # the wolf space is plain water now
    assert pos(state) == (w + 2, w)


@EVERY_BOARD
def test_moves_stop_at_the_closed_entrance(board):
    """TB-4.9, D10, D11: turbo steps past the closed cave are lost."""
    w = SPACES[board]["wolf"]
    state, _ = new(5, 9, board=board, wolves=WOLVES)
    state = give(put(state, 0, w - 1), 0, "turbo")
    state, ev = run(state, "turbo", "h")
    assert only(ev, "moved")["to"] == w and pos(state) == (w, w)
    assert only(ev, "wolf_revealed")["token"] == "awake"


def test_turbo_passes_the_open_cave():
    """TB-4.9, TB-4.10: once open, a turbo move crosses the wolf space."""
    state, _ = new(5, 9)
    state = give(put(state, 0, 21), 0, "turbo")
    state["wolf_out"], state["cave"] = state["cave"], []
    state, _ = run(state, "turbo", "h")
    assert pos(state) == (23, 21)


@EVERY_BOARD
def test_turn_starting_on_the_closed_cave_reveals_at_once(board):
    """TB-4.1, D10: a seat starting on the closed entrance reveals automatically;
    awake ends its turn with no move, asleep lets it play."""
    w = SPACES[board]["wolf"]
    state, _ = new(5, 9, 10, board=board, wolves=["awake", "asleep", "awake", "awake", "awake"])
    state = put(state, 1, w)
    state, ev = run(state, "h", "dam")                 # seat 0 ends its turn
    assert types(ev)[-5:] == ["turn_ended", "turn_started", "wolf_revealed", "turn_ended", "turn_started"]
    assert ev[-4] == {"type": "turn_started", "seat": 1, "turn": 2}
    assert ev[-3] == {"type": "wolf_revealed", "seat": 1, "token": "awake"}
    assert ev[-2] == {"type": "turn_ended", "seat": 1, "reason": "wolf_awake"}
    assert ev[-1] == {"type": "turn_started", "seat": 0, "turn": 3}
    state, ev = run(state, "h", "dam")
    assert types(ev)[-3:] == ["turn_started", "wolf_revealed", "cave_opened"]
    assert G.to_act(state) == [1] and G.legal_moves(state, 1) == [mv("h"), mv("l")]
    assert admin(state)["board"]["cave_open"] and state["turn"] == 4


def test_closed_cave_cascade_is_bounded_and_counts_turns():
    """TB-4.1, TB-4.10, TB-4.12(c): seats stuck on the closed entrance reveal
    one token each turn until the sleeper opens the cave."""
    state, _ = new(5, 9, wolves=WOLVES)
    state = put(put(state, 0, 21), 1, 22)
    state, ev = run(state, "h")                        # seat 0 lands: awake #1
    tokens = [e["token"] for e in ev if e["type"] == "wolf_revealed"]
    assert tokens == ["awake"] * 4 + ["asleep"]
    assert [e["seat"] for e in ev if e["type"] == "wolf_revealed"] == [0, 1, 0, 1, 0]
    assert state["turn"] == 5 and G.to_act(state) == [0] and admin(state)["board"]["cave_open"]


def test_closed_cave_cascade_stops_at_max_turns():
    """TB-4.1 with TB-6.2: an automatic turn end may be the last turn."""
    state, _ = new(5, 9, wolves=WOLVES, max_turns=2)
    state = put(put(state, 0, 21), 1, 22)
    state, ev = run(state, "h")
    assert types(ev)[-2:] == ["turn_ended", "match_ended"]
    assert state["status"] == FINISHED and state["result"] is not None and state["result"]["reason"] == "max_turns"


# --------------------------------------------------------------------------
# Fish pond: turbo, vision, stinky (TB-4.4, TB-4.6, TB-4.12a, D11–D13).
# --------------------------------------------------------------------------
@EVERY_BOARD
def test_damming_on_the_fish_space_catches_a_hidden_fish(board):
    """TB-4.12(a), TB-5.3: first pond fish, id shown to holder and admin only."""
    f = SPACES[board]["fish"]
    state, _ = new(5, 9, n=3, board=board, fish=["vision"] + FISH[:3] + FISH[4:])
    state = put(state, 0, f - 1)
    state, ev = run(state, "h", "dam")
    caught = only(ev, "fish_caught")
    assert caught == {"type": "fish_caught", "seat": 0, "fish": "vision"}
    assert types(ev) == ["answered", "moved", "dam_placed", "fish_caught", "turn_ended", "turn_started"]
    for viewer, sees in [(seat_viewer(0), "vision"), (ADMIN, "vision"), (seat_viewer(1), None),
                         (SPECTATOR, None)]:
        assert G.view(state, viewer)["players"][0]["fish"] == [sees]
        assert G.redact_event(caught, viewer)["fish"] == sees
    assert caught["fish"] == "vision"                  # redaction never mutates


@EVERY_BOARD
def test_no_refishing_while_the_dam_stays(board):
    """TB-4.12(a), D13: the dam must stand elsewhere at turn start."""
    f = SPACES[board]["fish"]
    state, _ = new(5, 9, 1, board=board)
    state = put(state, 0, f)
    state, ev = run(state, "h", "dam")                 # dam moves on: nothing
    assert "fish_caught" not in types(ev)
    state, _ = new(5, 2, board=board)
    state = put(state, 0, f)
    state, ev = run(state, "h")                        # wrong: back to the dam on the pond
    assert "fish_caught" not in types(ev) and pos(state) == (f, f)


def test_empty_pond_gives_nothing():
    """TB-4.12(a), D13: an empty pond gives nothing."""
    state, _ = new(5, 9)
    state = put(state, 0, 9)
    state["used_fish"], state["pond"] = state["pond"], []
    state, ev = run(state, "h", "dam")
    assert "fish_caught" not in types(ev) and state["fish"][0] == []


def test_an_equal_answer_on_the_pond_also_fishes():
    """TB-4.12(a): any rule that ends the turn with the dam newly on the pond."""
    state, _ = new(5, 9, 9, fish=FISH)
    state = put(state, 0, 9)
    state, _ = run(state, "h")
    state, ev = run(state, "h")
    assert types(ev) == ["answered", "dam_placed", "fish_caught", "turn_ended", "turn_started"]
    assert only(ev, "dam_placed")["cause"] == "equal"
    assert only(ev, "fish_caught")["fish"] == "turbo" and state["fish"][0] == ["turbo"]


@EVERY_BOARD
def test_stinky_fish_is_public_and_sends_back_two(board):
    """TB-4.12(a), TB-5.3, TB-8.2, D13: stinky → used_fish, beaver and dam 2 back."""
    f = SPACES[board]["fish"]
    state, _ = new(5, 9, board=board, fish=["stinky"] + FISH[:6] + ["stinky"])
    state = put(state, 0, f - 1)
    state, ev = run(state, "h", "dam")
    assert types(ev) == ["answered", "moved", "dam_placed", "fish_caught", "moved", "dam_placed",
                         "turn_ended", "turn_started"]
    assert ev[4] == {"type": "moved", "seat": 0, "from": f, "to": f - 2, "cause": "stinky"}
    assert ev[5] == {"type": "dam_placed", "seat": 0, "space": f - 2, "cause": "stinky"}
    assert G.redact_event(ev[3], SPECTATOR)["fish"] == "stinky"
    assert pos(state) == (f - 2, f - 2) and state["used_fish"] == ["stinky"] and state["fish"][0] == []


def test_vision_turns_a_wrong_guess_right():
    """TB-4.6, D12: wrong with vision → vision spent, counts as right."""
    state, _ = new(5, 2)
    state = give(state, 0, "vision", "vision")
    state, ev = run(state, "hv")
    assert types(ev) == ["answered", "vision_used", "moved"]
    assert only(ev, "answered")["outcome"] == "wrong"
    assert only(ev, "moved")["cause"] == "vision"
    assert pos(state) == (1, 0) and state["fish"][0] == ["vision"] and state["used_fish"] == ["vision"]
    assert all("vision" not in e for e in ev)


@pytest.mark.parametrize("second", ["9", "5"])
def test_armed_vision_is_kept_and_invisible_when_not_needed(second):
    """TB-4.6, TB-5.4, D12: right or equal answers keep the fish; events and
    other viewers' views are the same as for the plain guess."""
    state, _ = new(5, second, n=3)
    state = give(state, 0, "vision")
    armed, armed_ev = run(state, "hv")
    plain, plain_ev = run(state, "h")
    assert armed_ev == plain_ev and armed["fish"][0] == ["vision"]
    for viewer in (SPECTATOR, seat_viewer(1), seat_viewer(2), seat_viewer(0), ADMIN):
        assert G.view(armed, viewer) == G.view(plain, viewer)


def test_turbo_doubles_right_guesses_and_is_offered_once():
    """TB-4.4, TB-4.2 (1), D11: turbo before the first answer; 2 per right guess."""
    state, _ = new(5, 9, 2, 12)
    state = give(state, 0, "turbo", "turbo")
    state, ev = run(state, "turbo")
    assert ev == [{"type": "turbo_used", "seat": 0}] and state["used_fish"] == ["turbo"]
    assert mv("turbo") not in G.legal_moves(state, 0)
    state, ev = run(state, "h")
    assert only(ev, "moved") == {"type": "moved", "seat": 0, "from": 0, "to": 2, "cause": "right"}
    assert mv("turbo") not in G.legal_moves(state, 0)
    state, _ = run(state, "l", "dam")
    assert pos(state) == (4, 4) and admin(state)["board"]["active"]["turbo"] is False


def test_turbo_is_not_offered_after_an_answer():
    """TB-4.2 (1): answers = 0 is required."""
    state, _ = new(5, 9)
    state = give(state, 0, "turbo")
    state, _ = run(state, "h")
    assert G.legal_moves(state, 0) == [mv("h"), mv("l"), mv("dam")]


# --------------------------------------------------------------------------
# Paradise, max_turns, result (TB-6).
# --------------------------------------------------------------------------
@EVERY_BOARD
@pytest.mark.parametrize("turbo", [False, True])
def test_reaching_paradise_wins_at_once(board, turbo):
    """TB-6.1, TB-4.9, TB-8.2, D16: overshoot allowed; moved, dam_placed, match_ended."""
    p = SPACES[board]["paradise"]
    state, _ = new(5, 9, n=3, board=board)
    start = p - 2 if board == "short" else p - 1       # short: 10 (11 is lava)
    state = put(put(state, 0, start), 2, 3)
    if turbo:
        state = give(state, 0, "turbo")
        state, _ = run(state, "turbo")
    state, ev = run(state, "h")
    if not turbo and board == "short":
        state, ev = run(state, "l")                    # 11 (lava) → 12 with the next card
        assert only(ev, "answered")["card"] == "1"
    assert types(ev)[-3:] == ["moved", "dam_placed", "match_ended"] and "turn_ended" not in types(ev)
    assert only(ev, "dam_placed")["cause"] == "paradise"
    assert only(ev, "match_ended") == {"type": "match_ended", "seat": None, "reason": "paradise", "winners": [0]}
    view = admin(state)
    assert (view["status"], view["phase"], view["to_act"], view["board"]["active"]) == ("finished", "over", [], None)
    assert view["scores"] == [p, 0, 3]
    assert view["result"] == {"scores": [p, 0, 3], "ranking": [[0], [2], [1]], "winners": [0], "reason": "paradise"}


def test_max_turns_ends_the_match_with_tied_leaders():
    """TB-6.2, TB-6.3, TB-4.12(b): the max_turns-th turn end finishes; ties share."""
    state, _ = new(5, 9, 2, 9, 12, n=3, max_turns=3)
    state, _ = run(state, "h", "dam")                  # seat 0: dam 1
    state, _ = run(state, "h")                         # seat 1: 2 < 9 wrong
    assert state["turn"] == 3
    state, ev = run(state, "h", "dam")                 # seat 2: 9 > 2 → 1, dam
    assert types(ev)[-3:] == ["dam_placed", "turn_ended", "match_ended"]
    assert only(ev, "match_ended")["reason"] == "max_turns"
    assert state["result"] == {"scores": [1, 0, 1], "ranking": [[0, 2], [1]], "winners": [0, 2],
                               "reason": "max_turns"}
    assert state["turn"] == 3 and G.to_act(state) == []


def test_max_turns_one():
    """TB-6.2: max_turns = 1 ends after the first turn; all on 0 share first place."""
    state, _ = new(5, 2, max_turns=1)
    state, ev = run(state, "h")
    assert state["status"] == FINISHED and state["result"] is not None and state["result"]["winners"] == [0, 1]


# --------------------------------------------------------------------------
# Reshuffle (TB-4.11, TB-10.1, D14).
# --------------------------------------------------------------------------
def test_reshuffle_keeps_the_face_up_card():
    """TB-4.11, TB-8.2, TB-5.2: the answer that empties the pile is followed by
    ``reshuffled``; face-up stays; the new pile is the seeded discard shuffle."""
    state, _ = new(n=2)                                # ascending deck: mostly equal answers
    for _ in range(50):
        state, _ = run(state, "l" if state["face_up"] == "13" else "h")
    assert len(state["draw"]) == 1 and len(state["discard"]) == 50
    discard = state["discard"] + [state["face_up"]]
    state, ev = run(state, "h")
    answered = ev.index(only(ev, "answered"))
    assert ev[answered + 1]["type"] == "reshuffled"
    face = only(ev, "answered")["card"]
    expected = seeded_shuffle(discard, reshuffle_key("thirteen-beavers", 7, 1, 1))
    assert only(ev, "reshuffled") == {"type": "reshuffled", "seat": None, "face_up": face, "draw": expected}
    board = admin(state)["board"]
    assert board["face_up"] == face and board["draw"] == expected and board["discard"] == []
    assert G.redact_event(only(ev, "reshuffled"), seat_viewer(0))["draw"] == [None] * 51
    assert G.view(state, seat_viewer(1))["board"]["draw"] == [None] * 51
    assert sorted([face] + expected, key=int) == DECK


# --------------------------------------------------------------------------
# View and redaction (TB-5, TB-7).
# --------------------------------------------------------------------------
def test_view_shape_and_hidden_parts():
    """TB-7.1, TB-7.2, TB-5.1 – TB-5.3, TB-5.5, TB-5.6."""
    state, _ = new(5, 9, n=3, fish=FISH, wolves=WOLVES, board="short")
    state = give(state, 1, "turbo", "vision")
    full = admin(state)
    assert set(full) == {"status", "round", "rounds", "phase", "to_act", "players", "board", "scores", "result"}
    assert set(full["board"]) == {"layout", "paradise", "spaces", "face_up", "discard", "draw", "pond",
                                  "used_fish", "cave", "wolf_out", "cave_open", "turn", "max_turns", "active"}
    assert set(full["players"][0]) == {"seat", "name", "beaver", "dam", "fish"}
    for viewer in (SPECTATOR, seat_viewer(0), seat_viewer(1), seat_viewer(2)):
        view = G.view(state, viewer)
        board = view["board"]
        assert board["draw"] == [None] * 51 and board["pond"] == [None] * 6 and board["cave"] == [None] * 5
        assert view["players"][1]["fish"] == (["turbo", "vision"] if viewer.seat == 1 else [None, None])
        assert "options" not in view and "seed" not in orjson.dumps(view).decode()
        redacted = {**full, "board": {**full["board"], "draw": board["draw"], "pond": board["pond"],
                                      "cave": board["cave"]},
                    "players": [{**p, "fish": view["players"][i]["fish"]} for i, p in enumerate(full["players"])]}
        assert view == redacted
    none, _ = new(5, 9, n=3, fish=FISH, wolves=WOLVES, board="short", recall="none")
    none = give(none, 1, "turbo", "vision")
    for viewer in (SPECTATOR, seat_viewer(1)):
        assert G.view(none, viewer) == G.view(state, viewer)
