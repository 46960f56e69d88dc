"""BiberClan rules, case by case, on stacked decks (docs/games/biberclan.md).

A stacked deck is ``options.deck`` = a prefix followed by the rest of the
canonical deck in canonical order.  Every test names the rule ids it checks.
"""
from __future__ import annotations

from collections import Counter

import orjson
import pytest

from engine.biberclan import BiberClan, BiberClanMove, canonical
from engine.core import (
    ADMIN_VIEWER,
    FINISHED,
    SPECTATOR_VIEWER,
    IllegalMove,
    InvalidOptions,
    MatchFinished,
    NotYourTurn,
    seat_viewer,
    seeded_shuffle,
)

GAME = BiberClan()
NAMES = ["ana", "bo", "cy", "dee", "eve", "fay"]


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------
def stacked(prefix: list[str], with_biberbande: bool = False) -> list[str]:
    """``prefix`` then the rest of the canonical deck in canonical order."""
    rest = canonical(with_biberbande)
    for card in prefix:
        rest.remove(card)
    return list(prefix) + rest


def new_match(prefix: list[str], n: int = 2, **options):
    """A match on a stacked round-1 deck; returns (state, setup events)."""
    deck = stacked(prefix, options.get("with_biberbande", False))
    state, events, _ = GAME.create(NAMES[:n], 7, {"deck": deck, **options})
    return state, events


def act(state, move_type: str, **fields):
    """The seat to act plays one move; returns (state, events)."""
    seat = GAME.to_act(state)[0]
    return GAME.play(state, seat, {"type": move_type, **fields})


def place(state, target: int, slot: str, face: str = "up"):
    return act(state, "place", target=target, slot=slot, face=face)


def fill(state, plan):
    """Place a sequence of (target, slot, face) moves; returns the state."""
    for target, slot, face in plan:
        state, _ = place(state, target, slot, face)
    return state


def castle(state, seat: int, viewer=ADMIN_VIEWER) -> dict:
    return GAME.view(state, viewer)["players"][seat]["castle"]


def board(state, viewer=ADMIN_VIEWER) -> dict:
    return GAME.view(state, viewer)["board"]


def legal(state, types=None) -> list[BiberClanMove]:
    moves = GAME.legal_moves(state, GAME.to_act(state)[0])
    return [m for m in moves if types is None or m["type"] in types]


def targets(moves) -> list[tuple]:
    return [(m["target"], m["slot"]) for m in moves if m.get("face", "up") == "up"]


def types_of(events) -> list[str]:
    return [e["type"] for e in events]


# --------------------------------------------------------------------------
# BC-1 decks, BC-2 options
# --------------------------------------------------------------------------
def test_canonical_decks_bc_1_2_bc_1_3():
    """BC-1.2, BC-1.3, D16: 66 and 120 cards in canonical order."""
    base = GAME.canonical_deck({})
    assert len(base) == 66 and base[:7] == ["0"] * 7 and base[-14:] == ["clear"] * 5 + ["flip"] * 9
    assert Counter(base) == Counter({"0": 7, "1": 6, "2": 6, "3": 6, "4": 5, "5": 5, "6": 5,
                                     "7": 4, "8": 4, "9": 4, "clear": 5, "flip": 9})
    big = GAME.canonical_deck({"with_biberbande": True})
    assert len(big) == 120 and big[:11] == ["0"] * 11 and big[-14:] == ["swap"] * 7 + ["peek"] * 7
    assert Counter(big) == Counter({"0": 11, "1": 10, "2": 10, "3": 10, "4": 9, "5": 9, "6": 9,
                                    "7": 8, "8": 8, "9": 8, "clear": 5, "flip": 9, "swap": 7, "peek": 7})


def test_option_defaults_bc_2_1():
    """BC-2.1: defaults rounds 5, first_seat 0, recall perfect, max_turns 200."""
    state, events, resolved = GAME.create(NAMES[:3], 1, {})
    assert resolved == {"rounds": 5, "with_biberbande": False, "deck": None, "decks": None,
                        "first_seat": 0, "recall": "perfect", "max_turns": 200}
    view = GAME.view(state, SPECTATOR_VIEWER)
    assert view["round"] == 1 and view["rounds"] == 5 and view["board"]["max_turns"] == 200
    assert events[0] == {"type": "round_started", "seat": None, "round": 1, "start_seat": 0}


@pytest.mark.parametrize("players, options", [
    (1, {}), (7, {}),                                                  # players ∉ 2..6
    (2, {"colour": "red"}),                                            # unknown key
    (2, {"rounds": 0}), (2, {"rounds": 11}), (2, {"rounds": True}), (2, {"rounds": "3"}),
    (2, {"max_turns": 0}), (2, {"max_turns": 1001}), (2, {"max_turns": 2.5}),
    (2, {"first_seat": 2}), (2, {"first_seat": -1}), (2, {"first_seat": False}),
    (2, {"recall": "some"}), (2, {"with_biberbande": 1}), (2, {"with_biberbande": "yes"}),
    (2, {"deck": ["0"] * 66}), (2, {"deck": canonical(False)[:-1]}), (2, {"deck": "0123"}),
    (2, {"deck": canonical(False), "with_biberbande": True}),            # base deck with Biberbande
    (2, {"deck": canonical(True)}),                                    # Biberbande deck without it
    (2, {"decks": [canonical(False)] * 3, "rounds": 2}),               # more decks than rounds
    (2, {"decks": []}), (2, {"decks": [canonical(False)], "deck": canonical(False)}),
])
def test_invalid_options_bc_2_2(players, options):
    """BC-2.2: unknown key, wrong type, out of range, bad deck, bad player count → invalid_options."""
    with pytest.raises(InvalidOptions):
        GAME.create(NAMES[:1] * players, 1, options)


def test_valid_deck_options_bc_2_1():
    """BC-2.1, BC-3.1: deck (round 1) and decks (per round) are accepted."""
    GAME.create(NAMES[:2], 1, {"deck": canonical(True), "with_biberbande": True})
    GAME.create(NAMES[:2], 1, {"decks": [canonical(False)] * 2, "rounds": 2})


# --------------------------------------------------------------------------
# BC-3 setup, BC-4.2 automatic draw
# --------------------------------------------------------------------------
def test_setup_and_first_draw_bc_3_bc_4_2():
    """BC-3.1, BC-3.2, BC-4.2, BC-5.2: round 1 follows options.deck, the start
    seat draws automatically at creation; admin sees the pile top first."""
    state, events = new_match(["4", "6"], n=3, first_seat=2)
    assert types_of(events) == ["round_started", "drew"]
    assert events[1] == {"type": "drew", "seat": 2, "kind": "number", "card": "4"}
    view = GAME.view(state, ADMIN_VIEWER)
    assert view["phase"] == "place" and view["to_act"] == [2] and view["board"]["turn_seat"] == 2
    assert view["board"]["draw_pile"][:1] == ["6"] and view["board"]["draw_count"] == 65
    assert "draw_pile" not in board(state, seat_viewer(2))
    assert GAME.legal_moves(state, 0) == [] and GAME.legal_moves(state, 1) == []


def test_unstacked_round_is_seeded_bc_3_1():
    """BC-3.1, D25: without deck options the order is a function of (seed, r)."""
    state, _, _ = GAME.create(NAMES[:2], 99, {})
    expected = seeded_shuffle(canonical(False), "biberclan:99:1:0")
    pile = board(state)["draw_pile"]
    assert pile == expected[len(expected) - len(pile):]
    again, _, _ = GAME.create(NAMES[:2], 99, {})
    assert orjson.dumps(again) == orjson.dumps(state)


# --------------------------------------------------------------------------
# Worked examples
# --------------------------------------------------------------------------
W1_VIEW = orjson.loads("""
{"phase":"stash","to_act":[1],"scores":[0,0],
 "players":[{"seat":0,"name":"ana","cards":2,"face_up":2,"castle":{"b0":{"face":"up","card":"5","protected":false},
   "b1":{"face":"up","card":"7","protected":false},"b2":null,"t0":null,"t1":null}},
  {"seat":1,"name":"bo","cards":1,"face_up":0,"castle":{"b0":{"face":"down","card":null,"known":"9","protected":false},
   "b1":null,"b2":null,"t0":null,"t1":null}}],
 "board":{"draw_count":62,"discard":[],"box":[],"start_seat":0,"turn_seat":1,"turns":3,"max_turns":200,"finisher":null,
  "final_turns":[],"held":{"seat":1,"kind":"removed","card":"3","from":{"target":0,"slot":"b1"}},"round_scores":[],"last_round":null}}
""")


def test_w1_bc_4_3_bc_4_4_bc_4_5_bc_4_1_bc_7():
    """W1: place, top-slot geometry (BC-1.4), steal → stash (BC-4.4, BC-4.5),
    known after stash (BC-5.5), own replace to the discard, single face-up
    protection (BC-4.1c), the section-7 view (BC-7)."""
    state, _ = new_match(["5", "9", "3", "7", "2"])
    state, _ = place(state, 0, "b0", "up")
    state, _ = place(state, 1, "b0", "down")
    with pytest.raises(IllegalMove, match="top slot"):
        place(state, 0, "t0", "down")
    state, _ = place(state, 0, "b1", "down")
    state, events = act(state, "replace", target=0, slot="b1", face="up")
    assert events == [{"type": "replaced", "seat": 1, "target": 0, "slot": "b1", "face": "up", "card": "7",
                       "removed": "3", "removed_face": "down"}]
    view = GAME.view(state, seat_viewer(1))
    assert {k: view[k] for k in W1_VIEW} == W1_VIEW
    assert orjson.dumps({k: view[k] for k in W1_VIEW}) == orjson.dumps(W1_VIEW)   # key order too
    assert legal(state) == [{"type": "stash", "slot": s, "face": f} for s in ("b1", "b2") for f in ("up", "down")]
    state, events = act(state, "stash", slot="b1", face="down")
    assert events[0]["type"] == "stashed" and events[1]["kind"] == "number"
    assert castle(state, 1, seat_viewer(0))["b1"] == {"face": "down", "card": None, "known": "3", "protected": False}
    assert "known" not in castle(state, 1, SPECTATOR_VIEWER)["b1"]
    state, _ = act(state, "replace", target=0, slot="b0", face="down")
    assert board(state)["discard"] == ["5"]
    mine, theirs = castle(state, 0, seat_viewer(0)), castle(state, 0, seat_viewer(1))
    assert mine["b1"] == {"face": "up", "card": "7", "protected": True}
    assert (0, "b1") not in targets(legal(state, {"replace"}))               # seat 1 to act
    assert theirs["b0"]["card"] is None and mine["b0"]["known"] == "2"


def test_w2_void_and_compulsory_specials_bc_4_2_bc_4_6_bc_4_10():
    """W2: a void special is drawn again automatically (BC-4.2, D5); clear is
    compulsory even on one's own card (BC-4.6); used specials go to the box."""
    state, events = new_match(["flip", "4", "4", "clear", "flip", "6"])
    assert types_of(events) == ["round_started", "drew", "special_void", "drew"]
    assert events[1] == {"type": "drew", "seat": 0, "kind": "special", "card": "flip"}
    assert events[2] == {"type": "special_void", "seat": 0, "card": "flip"}
    state, _ = place(state, 0, "b0", "down")
    state, events = place(state, 1, "b0", "up")
    assert events[-1] == {"type": "drew", "seat": 0, "kind": "special", "card": "clear"}
    assert castle(state, 1)["b0"]["protected"] is True
    assert GAME.view(state, SPECTATOR_VIEWER)["phase"] == "special"
    assert board(state, SPECTATOR_VIEWER)["held"] == {"seat": 0, "kind": "special", "card": "clear"}
    assert legal(state) == [{"type": "clear", "target": 0, "slot": "b0"}]
    with pytest.raises(IllegalMove, match="protected"):
        act(state, "clear", target=1, slot="b0")
    state, events = act(state, "clear", target=0, slot="b0")
    assert events[0] == {"type": "cleared", "seat": 0, "target": 0, "slot": "b0", "face": "down", "card": "4"}
    assert types_of(events[1:]) == ["drew", "special_void", "drew"]
    b = board(state, seat_viewer(0))
    assert b["discard"] == ["4"] and b["box"] == ["flip", "clear", "flip"]
    assert b["held"] == {"seat": 0, "kind": "number", "card": "6"}
    assert board(state, seat_viewer(1))["held"] == {"seat": 0, "kind": "number", "card": None}


W3_PREFIX = ["8", "9", "8", "9", "8", "9", "1", "9", "2", "7"]
OWN_CASTLE = [("b0", "up"), ("b1", "up"), ("b2", "up"), ("t0", "down"), ("t1", "down")]


def own_castle_plan(n: int, turns: int) -> list[tuple[int, str, str]]:
    """Each seat in turn fills its own castle b0, b1, b2 (up), t0, t1 (down)."""
    return [(k % n, *OWN_CASTLE[k // n]) for k in range(turns)]


def test_w3_final_lap_scoring_penalty_bc_4_11_bc_6():
    """W3: completion starts the final lap (BC-4.11), bonus 15/25 (BC-6.1),
    finisher penalty (BC-6.2), round score and result (BC-6.3, BC-6.7)."""
    state, _ = new_match(W3_PREFIX, rounds=1)
    state = fill(state, own_castle_plan(2, 8))
    state, events = place(state, 0, "t1", "down")
    assert events[1] == {"type": "castle_completed", "seat": 0, "final_turns": [1]}
    assert all(c["protected"] for c in castle(state, 0).values())              # BC-4.1b
    assert (0, "t0") not in targets(legal(state))
    state, events = place(state, 1, "t1", "down")
    ended = events[1]
    assert types_of(events) == ["placed", "round_ended", "match_ended"]
    assert ended == {"type": "round_ended", "seat": None, "round": 1, "reason": "castle", "finisher": 0,
                     "castles": [["8", "8", "8", "1", "2"], ["9", "9", "9", "9", "7"]],
                     "values": [27, 43], "bonus": [15, 25], "penalty": [-10, 0], "scores": [32, 68],
                     "five_of_a_kind": [], "totals": [32, 68]}
    assert events[2] == {"type": "match_ended", "seat": None, "reason": "rounds",
                         "result": {"scores": [32, 68], "ranking": [[1], [0]], "winners": [1]}}
    view = GAME.view(state, SPECTATOR_VIEWER)
    assert view["status"] == FINISHED and view["phase"] == "finished" and view["to_act"] == []
    assert view["board"]["turn_seat"] is None and view["board"]["round_scores"] == [[32, 68]]
    assert view["board"]["last_round"] == {k: v for k, v in ended.items() if k not in ("type", "seat")}
    assert view["players"][1]["castle"]["t1"]["card"] == "7"                      # BC-5.7
    with pytest.raises(MatchFinished):
        GAME.play(state, 0, {"type": "place", "target": 0, "slot": "b0", "face": "up"})


# --------------------------------------------------------------------------
# BC-4.1 protection
# --------------------------------------------------------------------------
def test_covered_bottom_card_protected_even_for_owner_bc_4_1a():
    """BC-4.1(a), D8: b0 under t0, b1 under t0 are protected against the owner too; b2 is not."""
    state, _ = new_match(["1", "2", "3", "4", "5", "6", "7", "8"])
    state = fill(state, [(0, "b0", "down"), (1, "b0", "down"), (0, "b1", "down"), (1, "b1", "down"),
                         (0, "b2", "down"), (1, "b2", "down"), (0, "t0", "down")])
    seen = castle(state, 0)
    assert [seen[s]["protected"] for s in ("b0", "b1", "b2", "t0")] == [True, True, False, False]
    assert targets(legal(state, {"replace"})) == [(0, "b2"), (0, "t0"), (1, "b0"), (1, "b1"), (1, "b2")]
    state, _ = place(state, 1, "t1", "down")                   # seat 1's b1, b2 now covered
    assert targets(legal(state, {"replace"})) == [(0, "b2"), (0, "t0"), (1, "b0"), (1, "t1")]  # seat 0, D8


def test_single_face_up_card_owner_vs_others_bc_4_1c():
    """BC-4.1(c), D7: the only face-up card is protected against others, not
    the owner; face-down cards do not count; a second face-up card ends it."""
    state, _ = new_match(["1", "2", "3", "4", "5", "6"])
    state = fill(state, [(0, "b0", "up"), (1, "b0", "down"), (0, "b1", "down")])
    assert targets(legal(state, {"replace"})) == [(0, "b1"), (1, "b0")]       # seat 1: 0/b0 protected
    state, _ = place(state, 1, "b1", "down")
    assert targets(legal(state, {"replace"})) == [(0, "b0"), (0, "b1"), (1, "b0"), (1, "b1")]  # owner
    state, _ = place(state, 0, "b2", "up")                      # second face-up card
    assert targets(legal(state, {"replace"})) == [(0, "b0"), (0, "b1"), (0, "b2"), (1, "b0"), (1, "b1")]
    assert [castle(state, 0)[s]["protected"] for s in ("b0", "b1", "b2")] == [False] * 3


def test_full_castle_and_fifth_card_rule_bc_4_1b_bc_4_3_d10():
    """BC-4.1(b), BC-4.3, D10: others may not fill a 4-card castle's last
    slot but may replace its unprotected cards; a full castle is protected."""
    state, _ = new_match(["1", "2", "3", "4", "5", "6", "7", "8", "9", "0"])
    state = fill(state, own_castle_plan(2, 7))                 # seat 0 has 4 cards, seat 1 has 3
    moves = legal(state)                                         # seat 1 to act
    assert (0, "t1") not in targets([m for m in moves if m["type"] == "place"])
    assert targets([m for m in moves if m["type"] == "place"]) == [(1, "t0"), (1, "t1")]
    assert (0, "t0") in targets([m for m in moves if m["type"] == "replace"])
    with pytest.raises(IllegalMove, match="fifth card"):
        place(state, 0, "t1", "up")
    state, _ = place(state, 1, "t0", "down")
    state, events = place(state, 0, "t1", "down")                # the owner completes
    assert "castle_completed" in types_of(events)
    assert not any(m.get("target") == 0 for m in legal(state))


def test_protection_judged_before_action_d9():
    """D9, BC-4.4: replacing the single face-up card of one's own castle with a
    face-up card is allowed; judging uses the state before the move."""
    state, _ = new_match(["1", "2", "3"])
    state = fill(state, [(0, "b0", "up"), (1, "b0", "up")])
    state, events = act(state, "replace", target=0, slot="b0", face="up")
    assert events[0]["removed"] == "1" and board(state)["discard"] == ["1"]


# --------------------------------------------------------------------------
# BC-4.4 / BC-4.5 steal → stash, BC-5.3 held card
# --------------------------------------------------------------------------
def test_steal_face_down_card_then_stash_completes_castle_bc_4_5_d11():
    """BC-4.4, BC-4.5, BC-5.3, BC-5.5, BC-5.6, D11, D12: a stolen face-down card
    is seen by the stealer, `known` to its placer; stashing it face up makes it
    public; completing the castle by stash starts the final lap."""
    state, _ = new_match(["1", "2", "3", "4", "5", "6", "7", "8", "9"], n=2)
    state = fill(state, [(0, "b0", "up"), (1, "b0", "up"), (0, "b1", "up"), (1, "b1", "down"),
                         (0, "b2", "down"), (1, "b2", "down"), (0, "t0", "down"), (1, "t0", "down")])
    # seat 0 holds "9"; seat 1's b0 is covered and its only face-up card: steal t0 instead
    assert (1, "b0") not in targets(legal(state, {"replace"}))
    state, events = act(state, "replace", target=1, slot="t0", face="down")
    assert events[0]["removed"] == "8" and events[0]["removed_face"] == "down"
    assert GAME.redact_event(events[0], seat_viewer(1))["removed"] is None
    assert GAME.redact_event(events[0], seat_viewer(0))["removed"] == "8"
    assert board(state, seat_viewer(1))["held"] == {"seat": 0, "kind": "removed", "card": None, "known": "8",
                                                    "from": {"target": 1, "slot": "t0"}}
    assert board(state, SPECTATOR_VIEWER)["held"]["card"] is None
    state, events = act(state, "stash", slot="t1", face="up")
    assert types_of(events)[:2] == ["stashed", "castle_completed"]
    assert GAME.redact_event(events[0], SPECTATOR_VIEWER)["card"] == "8"


def test_steal_face_up_card_held_visible_to_all_bc_5_3():
    """BC-5.3, BC-5.6: a card removed face up is visible to everyone while held
    and its ``stashed`` value is public even when stashed face down."""
    state, _ = new_match(["1", "2", "3", "4", "5"])
    state = fill(state, [(0, "b0", "up"), (1, "b0", "up"), (0, "b1", "down"), (1, "b1", "up")])
    state, events = act(state, "replace", target=1, slot="b1", face="down")
    assert GAME.redact_event(events[0], SPECTATOR_VIEWER)["removed"] == "4"
    assert GAME.redact_event(events[0], SPECTATOR_VIEWER)["card"] is None
    assert board(state, SPECTATOR_VIEWER)["held"]["card"] == "4"
    state, events = act(state, "stash", slot="b2", face="down")
    assert GAME.redact_event(events[0], SPECTATOR_VIEWER)["card"] == "4"


# --------------------------------------------------------------------------
# BC-4.6 … BC-4.9 specials
# --------------------------------------------------------------------------
def test_flip_is_compulsory_and_public_bc_4_7():
    """BC-4.7, BC-5.6: flip toggles a face; its value is public."""
    state, _ = new_match(["1", "2", "flip", "3"])
    state = fill(state, [(0, "b0", "down"), (1, "b0", "down")])
    assert legal(state) == [{"type": "flip", "target": 0, "slot": "b0"}, {"type": "flip", "target": 1, "slot": "b0"}]
    state, events = act(state, "flip", target=1, slot="b0")
    assert events[0] == {"type": "flipped", "seat": 0, "target": 1, "slot": "b0", "face": "up", "card": "2"}
    assert GAME.redact_event(events[0], SPECTATOR_VIEWER) == events[0]
    assert castle(state, 1, SPECTATOR_VIEWER)["b0"] == {"face": "up", "card": "2", "protected": True}
    assert board(state)["box"] == ["flip"]


def test_flip_face_up_card_down_stays_known_bc_4_7_bc_5_5():
    """BC-4.7, BC-5.5: a card that lay face up is known to every seat after
    being flipped face down (`known` for seats, null for spectators)."""
    state, _ = new_match(["1", "2", "3", "flip", "4"])
    state = fill(state, [(0, "b0", "up"), (1, "b0", "up"), (0, "b1", "up")])
    state, events = act(state, "flip", target=0, slot="b0")        # seat 1 flips seat 0's 1↑ down
    assert events[0]["face"] == "down" and GAME.redact_event(events[0], SPECTATOR_VIEWER)["card"] == "1"
    for seat in (0, 1):
        assert castle(state, 0, seat_viewer(seat))["b0"] == {"face": "down", "card": None, "known": "1",
                                                               "protected": False}
    assert castle(state, 0, SPECTATOR_VIEWER)["b0"] == {"face": "down", "card": None, "protected": False}
    assert castle(state, 0)["b1"]["protected"] is True              # now the only face-up card


def test_swap_with_biberbande_bc_4_8():
    """BC-4.8, D15, D26, BC-5.5: swap pairs with target_a < target_b, own
    castle allowed, faces kept, values hidden, knowledge moves with the card."""
    state, _ = new_match(["1", "2", "3", "swap", "4"], n=3, with_biberbande=True)
    state = fill(state, [(0, "b0", "down"), (1, "b0", "down"), (2, "b0", "up")])
    assert legal(state) == [{"type": "swap", "target_a": 0, "slot_a": "b0", "target_b": 1, "slot_b": "b0"}]
    state, events = act(state, "swap", target_a=0, slot_a="b0", target_b=1, slot_b="b0")
    assert events[0] == {"type": "swapped", "seat": 0, "target_a": 0, "slot_a": "b0", "target_b": 1, "slot_b": "b0"}
    assert castle(state, 0)["b0"]["card"] == "2" and castle(state, 1)["b0"]["card"] == "1"
    assert castle(state, 1, seat_viewer(0))["b0"]["known"] == "1"
    assert "known" not in castle(state, 0, seat_viewer(0))["b0"]
    assert board(state)["box"] == ["swap"] and GAME.view(state, SPECTATOR_VIEWER)["phase"] == "place"


def test_peek_compulsory_private_bc_4_9_d15():
    """BC-4.9, D15, BC-5.6: peek is compulsory on an unprotected face-down card;
    the value goes to the peeker only; face-up cards are not targets."""
    state, _ = new_match(["1", "2", "3", "peek", "4"], n=3, with_biberbande=True)
    state = fill(state, [(0, "b0", "up"), (1, "b0", "down"), (2, "b0", "up")])
    assert legal(state) == [{"type": "peek", "target": 1, "slot": "b0"}]
    state, events = act(state, "peek", target=1, slot="b0")
    assert GAME.redact_event(events[0], seat_viewer(0))["card"] == "2"
    assert GAME.redact_event(events[0], seat_viewer(1))["card"] is None
    assert GAME.redact_event(events[0], ADMIN_VIEWER)["card"] == "2"
    assert castle(state, 1, seat_viewer(0))["b0"]["known"] == "2"
    assert "known" not in castle(state, 1, seat_viewer(2))["b0"]


def test_void_peek_and_swap_bc_4_2():
    """BC-4.2, D15: peek without face-down targets and swap without two
    castles' unprotected cards are void and drawn again."""
    state, _ = new_match(["1", "peek", "swap", "2"], with_biberbande=True)
    state, events = place(state, 0, "b0", "up")
    assert types_of(events) == ["placed", "drew", "special_void", "drew", "special_void", "drew"]
    assert board(state)["box"] == ["peek", "swap"]


# --------------------------------------------------------------------------
# BC-4.10 reshuffle, BC-4.11 / D18 max_turns, BC-6 scoring and rounds
# --------------------------------------------------------------------------
def test_reshuffle_bc_4_10_d17():
    """BC-4.10, BC-3.1, D17: a draw from the empty pile first makes the
    shuffled discard (key biberclan:seed:r:k) the draw pile."""
    state, _ = new_match([], n=2)
    reshuffle = None
    while reshuffle is None:
        before = state
        moves = legal(state)
        own = [m for m in moves if m["type"] == "replace" and m["target"] == GAME.to_act(state)[0]]
        state, events = GAME.play(state, GAME.to_act(state)[0], (own or moves)[0])
        reshuffle = next((e for e in events if e["type"] == "reshuffled"), None)
    first = events[0]                       # the move's own effect, before the draws
    own_replace = first["type"] == "replaced" and first["target"] == first["seat"]
    added = [first["removed"]] if own_replace else [first["card"]] if first["type"] == "cleared" else []
    discard = board(before)["discard"] + added
    expected = seeded_shuffle(discard, "biberclan:7:1:1")
    assert reshuffle == {"type": "reshuffled", "seat": None, "count": 1}          # the k-th reshuffle
    drawn = [e["card"] for e in events[events.index(reshuffle) + 1:] if e["type"] == "drew"]
    assert drawn == expected[:len(drawn)]
    assert board(state)["draw_pile"] == expected[len(drawn):]


def test_max_turns_ends_round_and_next_start_seat_bc_4_11_bc_6_6_d18_d19():
    """BC-4.11, D18: max_turns ends the round (turn_limit, no penalty);
    BC-6.6, D19: the next round starts after the seat that took the last turn."""
    state, _ = new_match(["5", "6", "7"], n=3, rounds=2, max_turns=2)
    state, _ = place(state, 0, "b0", "up")
    state, events = place(state, 1, "b0", "down")
    ended = next(e for e in events if e["type"] == "round_ended")
    assert ended["reason"] == "turn_limit" and ended["finisher"] is None and ended["penalty"] == [0, 0, 0]
    assert ended["scores"] == [5, 6, 0]
    started = next(e for e in events if e["type"] == "round_started")
    assert started == {"type": "round_started", "seat": None, "round": 2, "start_seat": 2}
    assert GAME.to_act(state) == [2] and board(state)["turns"] == 0
    assert castle(state, 0)["b0"] is None and board(state)["discard"] == []
    expected = seeded_shuffle(canonical(False), "biberclan:7:2:0")              # BC-3.1
    assert board(state)["draw_pile"] == expected[len(expected) - board(state)["draw_count"]:]


def test_finisher_starts_next_round_and_totals_bc_6_3_bc_6_6():
    """BC-6.3, BC-6.5, BC-6.6, BC-10.3: the finisher starts round 2 (decks[1]);
    totals are the column sums of round_scores."""
    round1 = stacked(W3_PREFIX)
    round2 = stacked(["0", "1"])
    state, _, _ = GAME.create(NAMES[:2], 7, {"decks": [round1, round2], "rounds": 2, "first_seat": 1})
    state = fill(state, [(1 - k % 2, *OWN_CASTLE[k // 2]) for k in range(9)])  # seat 1 completes first
    state, events = place(state, 0, "t1", "down")
    assert next(e for e in events if e["type"] == "round_started")["start_seat"] == 1
    assert GAME.to_act(state) == [1] and board(state, seat_viewer(1))["held"]["card"] == "0"
    b = board(state)
    assert GAME.view(state, SPECTATOR_VIEWER)["scores"] == [sum(col) for col in zip(*b["round_scores"])]
    assert GAME.view(state, SPECTATOR_VIEWER)["round"] == 2


def test_penalty_tie_at_top_bc_6_2_d21_d23():
    """BC-6.2, D21: a finisher tied at the top gets no penalty; D23 shared win."""
    state, _ = new_match(["8", "9", "8", "9", "8", "9", "1", "0", "2", "0"], rounds=1)
    state = fill(state, own_castle_plan(2, 10))
    result = GAME.result(state)
    assert state["last_round"]["penalty"] == [0, 0] and state["last_round"]["scores"] == [42, 42]
    assert result == {"scores": [42, 42], "ranking": [[0, 1]], "winners": [0, 1]}


def test_penalty_against_any_higher_seat_bc_6_2():
    """BC-6.2: one other seat strictly higher is enough for the penalty."""
    state, _ = new_match(["5", "9", "0", "5", "9", "0", "5", "9", "0", "1", "1", "1", "1", "1", "1"],
                         n=3, rounds=1)
    state = fill(state, own_castle_plan(3, 15))
    body = state["last_round"]
    assert body["finisher"] == 0 and body["values"] == [17, 29, 2] and body["bonus"] == [15, 15, 15]
    assert body["penalty"] == [-10, 0, 0] and body["scores"] == [22, 44, 17]


def test_five_of_a_kind_ends_match_bc_6_4_d22():
    """BC-6.1, BC-6.4, BC-6.7, D22: five of a kind scores no bonus, the round
    is still scored, the match ends and those seats rank first."""
    prefix = ["0", "9", "0", "9", "0", "9", "0", "9", "0", "8"]
    state, _ = new_match(prefix, rounds=5)
    state = fill(state, own_castle_plan(2, 9))
    state, events = place(state, 1, "t1", "down")
    ended = next(e for e in events if e["type"] == "round_ended")
    assert ended["five_of_a_kind"] == [0] and ended["bonus"] == [0, 25] and ended["penalty"] == [-10, 0]
    assert events[-1] == {"type": "match_ended", "seat": None, "reason": "five_of_a_kind",
                          "result": {"scores": [-10, 69], "ranking": [[0], [1]], "winners": [0]}}
    assert GAME.view(state, SPECTATOR_VIEWER)["round"] == 1


def test_final_lap_bc_4_11():
    """BC-4.11: final_turns are the other seats clockwise from A+1; a seat in
    the final lap that completes its castle is no new finisher."""
    prefix = ["1", "2", "3"] * 5
    state, _ = new_match(prefix, n=3, rounds=1, first_seat=1)
    plan = [((1 + k) % 3, *OWN_CASTLE[k // 3]) for k in range(12)]
    state = fill(state, plan)
    state, events = place(state, 1, "t1", "down")
    assert events[1] == {"type": "castle_completed", "seat": 1, "final_turns": [2, 0]}
    state, events = place(state, 2, "t1", "down")
    assert "castle_completed" not in types_of(events) and board(state)["final_turns"] == [0]
    assert board(state)["finisher"] == 1 and board(state)["turns"] == 14
    state, events = place(state, 0, "t1", "down")
    assert next(e for e in events if e["type"] == "round_ended")["reason"] == "castle"


# --------------------------------------------------------------------------
# BC-4.12 order, BC-4.13 legality, BC-5 hidden information
# --------------------------------------------------------------------------
def test_legal_move_order_bc_4_12():
    """BC-4.12: place then replace, by target, slot, up before down."""
    state, _ = new_match(["1", "2", "3"])
    state = fill(state, [(0, "b0", "down"), (1, "b0", "down")])
    expected = [{"type": "place", "target": t, "slot": s, "face": f}
                for t in (0, 1) for s in ("b1", "b2") for f in ("up", "down")]
    expected += [{"type": "replace", "target": t, "slot": "b0", "face": f} for t in (0, 1) for f in ("up", "down")]
    assert legal(state) == expected


def test_legality_checks_bc_4_13():
    """BC-4.13: exact equality with a listed move; not-your-turn before legality."""
    state, _ = new_match(["1", "2"])
    with pytest.raises(NotYourTurn):
        GAME.play(state, 1, {"type": "place", "target": 1, "slot": "b0", "face": "up"})
    for bad in ({"type": "place", "target": 0, "slot": "b0", "face": "UP"},
                {"type": "place", "target": True, "slot": "b0", "face": "up"},
                {"type": "place", "target": 0, "slot": "b0", "face": "up", "extra": 1},
                {"type": "place", "target": [0], "slot": ["b0"], "face": "up"},
                {"type": "place", "target": 0, "slot": {"b": 0}, "face": "up"},
                {"type": "stash", "slot": "b0", "face": "up"}):
        with pytest.raises(IllegalMove):
            GAME.play(state, 0, bad)
    GAME.play(state, 0, {"type": "place", "target": 0, "slot": "b0", "face": "up", "label": "x"})


def test_event_redaction_bc_5_6():
    """BC-5.6: drew number → drawer; placed face down → actor; face up → all;
    own replace: removed card public (it goes to the discard)."""
    state, events = new_match(["1", "2", "3"])
    assert GAME.redact_event(events[1], seat_viewer(1))["card"] is None
    assert GAME.redact_event(events[1], seat_viewer(0))["card"] == "1"
    state, events = place(state, 0, "b0", "down")
    assert GAME.redact_event(events[0], SPECTATOR_VIEWER)["card"] is None
    assert GAME.redact_event(events[0], seat_viewer(0))["card"] == "1"
    assert events[0]["card"] == "1"                                            # never mutated
    state, events = place(state, 1, "b0", "up")
    assert GAME.redact_event(events[0], SPECTATOR_VIEWER)["card"] == "2"
    state, events = act(state, "replace", target=0, slot="b0", face="down")
    red = GAME.redact_event(events[0], SPECTATOR_VIEWER)
    assert red["card"] is None and red["removed"] == "1"


def test_recall_none_and_face_down_cards_bc_5_4_bc_5_5():
    """BC-5.4, BC-5.5: face-down cards are null except for admin; recall
    "none" adds no known; "perfect" gives the placer known."""
    for recall, known in (("perfect", "1"), ("none", None)):
        state, _ = new_match(["1", "2"], recall=recall)
        state, _ = place(state, 0, "b0", "down")
        assert castle(state, 0)["b0"]["card"] == "1"
        entry = castle(state, 0, seat_viewer(0))["b0"]
        assert entry["card"] is None and entry.get("known") == known
        assert "known" not in castle(state, 0, seat_viewer(1))["b0"]
        assert board(state, seat_viewer(1))["held"]["card"] == "2"


def test_snapshot_is_json_and_not_mutated():
    """Purity: apply never mutates its input; the snapshot is plain JSON."""
    state, _ = new_match(["1", "2"])
    frozen = orjson.dumps(state)
    place(state, 0, "b0", "up")
    assert orjson.dumps(state) == frozen and orjson.loads(frozen) == state
