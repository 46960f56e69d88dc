"""Independent audit of Mein Lieber Biber against docs/games/mein-lieber-biber.md.

Written from the spec, not from the engine: the ring table below is copied from
MLB-1.4, and :class:`SpecModel` is a second implementation of MLB-3..MLB-6 that
is compared with the engine move by move (legal moves in MLB-4.9 order, full
admin events, admin view) over random playouts with stacked decks.  The
targeted tests use stacked decks (``fill``) and, where a position would take
dozens of moves to reach, a patched beaver position; each names its rule id.

Reading of MLB-10.3 ("while active at least one beaver is on 0..30"): when the
last beaver reaches the dam, MLB-4.4c and D13 ("the dam always rewards") put
the mover in phase ``reward`` before the round-end checks of MLB-4.4d run
(MLB-4.7 "continue at MLB-4.4 d").  The reward is part of the move, like the
empty hand MLB-10.4 explicitly allows in that phase, so MLB-10.3's raft clause
is checked everywhere except in phase ``reward``; the tipping clause holds
always (a tip ends the round before any reward).
"""
from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from typing import Any

import pytest

from engine import core
from engine.core import ADMIN_VIEWER, FINISHED, SPECTATOR_VIEWER, IllegalMove, Move, seat_viewer
from engine.mein_lieber_biber import MeinLieberBiber

GAME = MeinLieberBiber()

# --------------------------------------------------------------------------
# Spec data, typed in from MLB-1.1, MLB-1.2, MLB-1.4.
# --------------------------------------------------------------------------
COLS = ["red", "orange", "yellow", "green", "blue", "purple"]
ORDER = [f"{c}-{v}" for c in COLS for v in range(1, 9)]
RANK = {c: i for i, c in enumerate(ORDER)}
_TABLE = """
 1 red      105    76 | 11 green    348   253 | 21 yellow   591   429
 2 blue      49   152 | 12 orange   142   437 | 22 orange   235   723
 3 yellow   -59   181 | 13 red     -151   466 | 23 purple  -244   751
 4 purple  -178   129 | 14 yellow  -421   306 | 24 green   -663   482
 5 orange  -250     0 | 15 blue    -550     0 | 25 yellow  -850     0
 6 green   -227  -165 | 16 purple  -469  -341 | 26 red     -712  -517
 7 yellow   -96  -295 | 17 orange  -189  -580 | 27 orange  -281  -865
 8 red      105  -323 | 18 green    198  -609 | 28 blue     290  -894
 9 purple   299  -217 | 19 red      542  -394 | 29 purple   785  -570
10 blue     400     0 | 20 blue     700     0 | 30 green   1000     0
"""
RING: dict[int, tuple[str, int, int]] = {}
for _line in _TABLE.strip().splitlines():
    for _cell in _line.split("|"):
        _k, _c, _x, _y = _cell.split()
        RING[int(_k)] = (_c, int(_x), int(_y))

STICK = {"type": "reward", "take": "stick"}
PASS = {"type": "pass"}


def fill(*prefix: str) -> list[str]:
    """Spec section 11: P, then the other cards in canonical order."""
    return list(prefix) + [c for c in ORDER if c not in prefix]


def play(card: str, beaver: str | None = None) -> dict[str, Any]:
    return {"type": "play", "card": card, "beaver": beaver or card.split("-")[0]}


def draw(pile: int) -> dict[str, Any]:
    return {"type": "draw", "pile": pile}


def card_reward(pile: int) -> dict[str, Any]:
    return {"type": "reward", "take": "card", "pile": pile}


def new(deck=None, names=("ana", "bo"), seed=7, **options):
    if deck is not None:
        options["deck"] = deck
    state, events, _ = GAME.create(list(names), seed, options)
    return state, events


def with_positions(state, **where: int):
    """A copy of ``state`` with some beavers moved (phase of the turn seat re-derived
    by the spec rule MLB-4.0, so the state stays one the engine could reach)."""
    s = core.clone(state)
    for colour, p in where.items():
        s["pos"][COLS.index(colour)] = p
    pos = {c: s["pos"][i] for i, c in enumerate(COLS)}
    hand = [ORDER[i] for i in s["hands"][s["turn"]]]
    s["phase"] = "play" if any(spec_movable(pos, c) for c in hand) else "exchange"
    return s


def types(events):
    return [e["type"] for e in events]


def admin(state):
    return GAME.view(state, ADMIN_VIEWER)


# --------------------------------------------------------------------------
# Spec rules as plain functions.
# --------------------------------------------------------------------------
def spec_targets(pos: dict[str, int], card: str) -> list[str]:
    """MLB-4.1: beavers (colour order) that ``card`` may move."""
    colour, value = card.split("-")[0], int(card.split("-")[1])
    out = []
    for b in COLS:
        if pos[b] > 30:
            continue
        if b != colour and pos[colour] != 31:
            continue
        to = pos[b] + value
        if to > 30 or all(pos[o] != to for o in COLS):
            out.append(b)
    return out


def spec_movable(pos, card) -> bool:
    return bool(spec_targets(pos, card))


def spec_load(pos: dict[str, int]) -> list[int]:
    """MLB-4.2: sum over beavers on rings 1..30."""
    x = sum(RING[p][1] for p in pos.values() if 1 <= p <= 30)
    y = sum(RING[p][2] for p in pos.values() if 1 <= p <= 30)
    return [x, y]


def spec_ranking(sticks: list[int]) -> list[list[int]]:
    """MLB-6.4: seats grouped by sticks descending."""
    return [[s for s in range(len(sticks)) if sticks[s] == v] for v in sorted(set(sticks), reverse=True)]


class SpecModel:
    """A second, from-the-spec implementation of one match (decks stacked for every round)."""

    def __init__(self, names, decks, first_seat=0, rounds=3, tip=2700):
        self.names, self.n, self.decks = list(names), len(names), decks
        self.rounds, self.tip = rounds, tip
        self.sticks = [0] * self.n
        self.status, self.result, self.last_round_end = "active", None, None
        self.events: list[dict[str, Any]] = []
        self.setup(1, first_seat)

    # MLB-3
    def setup(self, r, start):
        n, D = self.n, self.decks[r - 1]
        self.round, self.start, self.turn = r, start, start
        self.hands = [sorted((D[i] for i in range(3 * n) if i % n == s), key=RANK.__getitem__) for s in range(n)]
        rest = D[3 * n:]
        self.piles = [[rest[i] for i in range(0, len(rest), 2)], [rest[i] for i in range(1, len(rest), 2)]]
        self.discards: list[list[str]] = [[] for _ in range(n)]
        self.pos = {c: 0 for c in COLS}
        self.supply = 60 - sum(self.sticks)
        self.last_play = None
        self.emit("round_started", None, round=r, start_seat=start)
        for s in range(n):
            self.emit("dealt", s, cards=list(self.hands[s]))
        self.phase = self.turn_phase()

    def emit(self, kind, seat, **fields):
        self.events.append({"type": kind, "seat": seat, **fields})

    def turn_phase(self):  # MLB-4.0
        return "play" if any(spec_movable(self.pos, c) for c in self.hands[self.turn]) else "exchange"

    def take(self, seat, p):
        card = self.piles[p].pop(0)
        self.hands[seat].append(card)
        self.hands[seat].sort(key=RANK.__getitem__)
        return card

    def lay(self, seat, card):
        self.hands[seat].remove(card)
        self.discards[seat].append(card)

    # MLB-4.9
    def legal(self, seat):
        if self.status != "active" or seat != self.turn:
            return []
        open_ = [p for p in (0, 1) if self.piles[p]]
        hand = self.hands[seat]
        if self.phase == "reward":
            return [dict(STICK)] + [card_reward(p) for p in open_]
        if self.phase == "draw":
            return [draw(p) for p in open_] + [dict(PASS)]
        moves = [draw(p) for p in open_] if len(hand) < 3 else []
        if self.phase == "play":
            moves += [play(c, b) for c in hand for b in spec_targets(self.pos, c)]
        elif open_:
            moves += [{"type": "exchange", "card": c, "pile": p} for c in hand for p in open_]
        else:
            moves += [{"type": "discard", "card": c} for c in hand]
        return moves

    def apply(self, seat, m):
        kind = m["type"]
        if kind == "draw" and self.phase in ("play", "exchange"):  # MLB-4.3
            card = self.take(seat, m["pile"])
            self.emit("drew", seat, pile=m["pile"], card=card, reason="top_up")
            self.phase = self.turn_phase()
        elif kind == "draw":  # MLB-4.8
            card = self.take(seat, m["pile"])
            self.emit("drew", seat, pile=m["pile"], card=card, reason="draw")
            self.end_turn()
        elif kind == "pass":
            self.emit("passed", seat)
            self.end_turn()
        elif kind == "play":  # MLB-4.4
            card, b = m["card"], m["beaver"]
            self.lay(seat, card)
            frm = self.pos[b]
            to = min(frm + int(card.split("-")[1]), 31)
            self.pos[b] = to
            self.last_play = {"seat": seat, "card": card, "beaver": b, "from": frm, "to": to}
            self.emit("played", seat, card=card, beaver=b, **{"from": frm}, to=to,
                      joker=card.split("-")[0] != b)
            lx, ly = spec_load(self.pos)
            if lx * lx + ly * ly > self.tip * self.tip:  # b
                back = min(2, self.sticks[seat])
                self.sticks[seat] -= back
                self.supply += back
                self.emit("tipped", seat, load=[lx, ly], returned=back)
                self.end_round("tipped", seat)
            elif to == 31 or RING[to][0] == b:  # c
                self.phase = "reward"
            else:
                self.after_reward(seat, took_last=False)
        elif kind == "reward":  # MLB-4.7
            if m["take"] == "stick":
                self.supply -= 1
                self.sticks[seat] += 1
                self.emit("rewarded", seat, take="stick", pile=None, card=None)
                self.after_reward(seat, took_last=self.supply == 0)
            else:
                card = self.take(seat, m["pile"])
                self.emit("rewarded", seat, take="card", pile=m["pile"], card=card)
                self.after_reward(seat, took_last=False)
        elif kind == "exchange":  # MLB-4.5
            self.lay(seat, m["card"])
            got = self.take(seat, m["pile"])
            self.emit("exchanged", seat, card=m["card"], pile=m["pile"], drawn=got)
            self.phase = self.turn_phase()
        elif kind == "discard":  # MLB-4.6
            self.lay(seat, m["card"])
            self.emit("discarded", seat, card=m["card"])
            if self.hands[seat]:
                self.end_turn()
            else:
                self.end_round("hand_empty", seat)
        else:
            raise AssertionError(m)

    def after_reward(self, seat, took_last):
        """MLB-4.4 d (MLB-6.1 in its order), then e."""
        if took_last:
            self.end_round("supply_exhausted", seat)
        elif not self.hands[seat]:
            self.end_round("hand_empty", seat)
        elif all(p == 31 for p in self.pos.values()):
            self.end_round("raft_empty", seat)
        elif self.piles[0] or self.piles[1]:
            self.phase = "draw"
        else:
            self.end_turn()

    def end_turn(self):
        self.turn = (self.turn + 1) % self.n
        self.phase = self.turn_phase()

    def end_round(self, reason, by):  # MLB-6
        self.last_round_end = {"round": self.round, "reason": reason, "seat": by}
        self.emit("round_ended", None, round=self.round, reason=reason, by=by,
                  sticks=list(self.sticks), supply=self.supply)
        if self.round == self.rounds or reason == "supply_exhausted":
            rk = spec_ranking(self.sticks)
            self.result = {"scores": list(self.sticks), "ranking": rk, "winners": rk[0]}
            self.status, self.phase = "finished", "finished"
            self.emit("match_ended", None, result=self.result)
            return
        fewest = min(self.sticks)  # MLB-3.5
        start = next(s for s in ((by + 1 + i) % self.n for i in range(self.n)) if self.sticks[s] == fewest)
        self.setup(self.round + 1, start)

    def admin_view(self):
        return {
            "status": self.status, "round": self.round, "rounds": self.rounds, "phase": self.phase,
            "to_act": [self.turn] if self.status == "active" else [],
            "players": [{"seat": s, "name": self.names[s], "hand": list(self.hands[s]),
                         "hand_count": len(self.hands[s]), "discards": list(self.discards[s]),
                         "sticks": self.sticks[s]} for s in range(self.n)],
            "board": {"rings": [RING[k][0] for k in range(1, 31)], "beavers": dict(self.pos),
                      "piles": [list(p) for p in self.piles], "supply": self.supply,
                      "load": spec_load(self.pos), "tip_threshold": self.tip, "start_seat": self.start,
                      "last_play": self.last_play, "last_round_end": self.last_round_end},
            "scores": list(self.sticks), "result": self.result,
        }


# --------------------------------------------------------------------------
# MLB-1: components.
# --------------------------------------------------------------------------
def test_mlb_1_4_ring_table_matches_spec_and_spiral():
    """MLB-1.4, MLB-1.5, D2: the view's rings and the load use the normative table."""
    state, _ = new()
    assert admin(state)["board"]["rings"] == [RING[k][0] for k in range(1, 31)]
    for k in range(1, 31):
        r, t = 0.1 + 0.03 * k, math.radians(36 * k)
        assert (round(1000 * r * math.cos(t)), round(1000 * r * math.sin(t))) == RING[k][1:]
        # each ring alone: the public load (MLB-7.2) is exactly the table entry
        s = with_positions(state, red=k)
        assert admin(s)["board"]["load"] == list(RING[k][1:])
    assert all(RING[k][0] != RING[k + 1][0] for k in range(1, 30))
    assert RING[1][0] == "red" and RING[30][0] == "green"


# --------------------------------------------------------------------------
# MLB-3: setup.
# --------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_mlb_3_2_3_3_deal_and_piles(n):
    """MLB-3.2, MLB-3.3, D6: D[i] (i < 3n) to seat i mod n; piles alternate, pile 0 first."""
    deck = random.Random(n).sample(ORDER, 48)
    state, events = new(deck, names=[f"p{i}" for i in range(n)])
    v = admin(state)
    for s in range(n):
        assert v["players"][s]["hand"] == sorted((deck[i] for i in range(3 * n) if i % n == s), key=RANK.__getitem__)
    rest = deck[3 * n:]
    assert v["board"]["piles"] == [rest[0::2], rest[1::2]]
    assert len(v["board"]["piles"][0]) - len(v["board"]["piles"][1]) == n % 2
    assert types(events) == ["round_started"] + ["dealt"] * n  # MLB-3.6
    assert v["board"]["supply"] == 60 and v["board"]["load"] == [0, 0]


def test_mlb_3_1_d18_later_rounds_depend_on_seed_and_round_only():
    """MLB-3.1, D18: an unstacked round r's order comes from (seed, round) only, not from play."""
    def round2_hands(deck, first_card):
        state, _ = new(deck, seed=99, tip_threshold=200)
        state, ev = GAME.play(state, 0, play(first_card))
        assert types(ev)[1] == "tipped" and state["round"] == 2
        return [e["cards"] for e in ev if e["type"] == "dealt"]

    a = round2_hands(fill("orange-5"), "orange-5")   # ring 5: |(-250, 0)| > 200
    b = round2_hands(fill("green-6"), "green-6")     # ring 6: |(-227, -165)| > 200
    assert a == b
    other, _ = new(fill("orange-5"), seed=100, tip_threshold=200)
    other, ev = GAME.play(other, 0, play("orange-5"))
    assert [e["cards"] for e in ev if e["type"] == "dealt"] != a


@pytest.mark.parametrize("first, before, after, start", [
    (0, [2, 1, 1], [0, 1, 1], 0),        # fewest after the tip's return: the mover itself
    (0, [1, 0, 0], [0, 0, 0], 1),        # all tied: first clockwise after the mover
    (2, [0, 3, 2, 0], [0, 3, 0, 0], 3),  # ties s0, s2, s3: from s3 (after mover s2)
    (3, [0, 3, 0, 2], [0, 3, 0, 0], 0),  # wraps: after s3 comes s0
    (1, [5, 1, 0, 4, 0], [5, 0, 0, 4, 0], 2),
])
def test_mlb_3_5_start_seat(first, before, after, start):
    """MLB-3.5, D17: fewest sticks (after the tip return); ties clockwise from the seat after
    the seat that made the last move.  T = 1: every play onto a ring tips at once."""
    n = len(before)
    state, _ = new(None, names=[f"p{i}" for i in range(n)], first_seat=first, tip_threshold=1, seed=11)
    state = core.clone(state)
    state["sticks"], state["supply"] = list(before), 60 - sum(before)
    move = next(m for m in GAME.legal_moves(state, first) if m["type"] == "play")
    state, ev = GAME.play(state, first, move)
    assert types(ev)[:3] == ["played", "tipped", "round_ended"]
    assert state["sticks"] == after and GAME.to_act(state) == [start]
    assert ev[3] == {"type": "round_started", "seat": None, "round": 2, "start_seat": start}
    assert admin(state)["board"]["start_seat"] == start and admin(state)["board"]["supply"] == 60 - sum(after)


# --------------------------------------------------------------------------
# MLB-4.1: movability.
# --------------------------------------------------------------------------
def test_mlb_4_1_counted_rings_and_occupied_landing():
    """MLB-4.1, D4: occupied rings on the way count; landing on an occupied ring is refused;
    an occupied ring 30 does not block a move past 30 to the dam."""
    state, _ = new(fill("red-3", "blue-1", "orange-2", "red-8", "yellow-7", "green-1"))
    # s0 holds red-3, orange-2, yellow-7
    s = with_positions(state, blue=2, orange=0, red=0)
    moves = GAME.legal_moves(s, 0)
    assert play("red-3") in moves            # 0+3 = ring 3, ring 2 occupied on the way: counted
    assert play("orange-2") not in moves     # ring 2 is occupied
    with pytest.raises(IllegalMove):
        GAME.play(s, 0, play("orange-2"))
    s = with_positions(state, yellow=24, green=30, red=31, orange=31, blue=31, purple=31)
    assert play("yellow-7") in GAME.legal_moves(s, 0)   # 24+7 = 31 → dam though 30 is occupied
    s = with_positions(state, yellow=23, green=30, red=31, orange=31, blue=31, purple=31)
    assert play("yellow-7") not in GAME.legal_moves(s, 0)  # exactly 30, occupied (D16)


def test_mlb_4_1_d15_jokers():
    """MLB-4.1, D15: a departed beaver's card moves any beaver on the raft (middle included),
    never another beaver while its own is on the raft, never its own departed beaver."""
    state, _ = new(fill("red-3", "blue-1", "orange-2", "red-8", "yellow-7", "green-1"))
    s = with_positions(state, red=31, orange=5, yellow=29, purple=31)
    got = [m["beaver"] for m in GAME.legal_moves(s, 0) if m["type"] == "play" and m["card"] == "red-3"]
    assert got == ["orange", "yellow", "green", "blue"]  # purple gone, red gone; colour order
    assert [m["beaver"] for m in GAME.legal_moves(s, 0) if m["type"] == "play" and m["card"] == "orange-2"] == [
        "orange"]
    for bad in (play("red-3", "red"), play("red-3", "purple"), play("orange-2", "green")):
        with pytest.raises(IllegalMove):
            GAME.play(s, 0, bad)
    s2, ev = GAME.play(s, 0, play("red-3", "green"))
    assert ev[0] == {"type": "played", "seat": 0, "card": "red-3", "beaver": "green",
                     "from": 0, "to": 3, "joker": True}


# --------------------------------------------------------------------------
# MLB-4.2: exact tipping.
# --------------------------------------------------------------------------
def _pythagorean_triple_of_rings():
    """Three rings whose summed load has an integer length, both components non-zero."""
    for rings in itertools.combinations(range(1, 31), 3):
        x, y = sum(RING[k][1] for k in rings), sum(RING[k][2] for k in rings)
        r = math.isqrt(x * x + y * y)
        if x and y and r * r == x * x + y * y:
            return rings, [x, y], r
    raise AssertionError("no triple")


@pytest.mark.parametrize("delta, tipped", [(0, False), (-1, True), (1, False)])
def test_mlb_4_2_exact_integer_equality_does_not_tip(delta, tipped):
    """MLB-4.2: Lx²+Ly² > T² with exact integers; a load exactly T long does not tip.
    (Rings 1, 11, 16 give (-16, -12), length exactly 20.)"""
    (a, b, c), total, r = _pythagorean_triple_of_rings()
    state, _ = new(fill("orange-1"), tip_threshold=r + delta)
    s = with_positions(state, red=a, blue=b, orange=c - 1)
    s2, ev = GAME.play(s, 0, play("orange-1"))
    assert ev[0]["to"] == c
    assert ("tipped" in types(ev)) is tipped
    if tipped:
        assert ev[1]["load"] == total
    else:
        assert admin(s2)["board"]["load"] == total


def test_mlb_4_2_moving_to_the_dam_can_tip():
    """MLB-4.2, MLB-4.4b, D11, D16: leaving for the dam removes a counterweight; the tip check
    still runs and wins over the dam reward."""
    # yellow on 25 (-850, 0) balanced by green on 30 (1000, 0): load (150, 0).
    state, _ = new(fill("green-3"), tip_threshold=700)
    s = with_positions(state, yellow=25, green=28)  # green 28 → 31 with green-3
    s2, ev = GAME.play(s, 0, play("green-3"))
    assert ev[0]["to"] == 31
    assert types(ev)[:3] == ["played", "tipped", "round_ended"]
    assert ev[1]["load"] == [-850, 0] and ev[1]["returned"] == 0


# --------------------------------------------------------------------------
# MLB-4.4: the order of steps.
# --------------------------------------------------------------------------
def test_mlb_4_4_we1_sequence_and_view():
    """MLB-4.4, MLB-4.7, MLB-4.8, MLB-7: WE1 through step 3, including seat 1's view."""
    state, _ = new(fill("red-1", "blue-3", "orange-5", "red-2", "green-4", "yellow-6"))
    state, ev = GAME.play(state, 0, play("red-1"))
    assert state["phase"] == "reward" and types(ev) == ["played"]
    state, ev = GAME.play(state, 0, STICK)
    assert ev == [{"type": "rewarded", "seat": 0, "take": "stick", "pile": None, "card": None}]
    state, ev = GAME.play(state, 0, draw(0))
    assert ev == [{"type": "drew", "seat": 0, "pile": 0, "card": "red-3", "reason": "draw"}]
    v = GAME.view(state, seat_viewer(1))
    assert v["round"] == 1 and v["rounds"] == 3 and v["phase"] == "play" and v["to_act"] == [1]
    assert v["scores"] == [1, 0]
    assert v["players"][0] == {"seat": 0, "name": "ana", "hand": [None] * 3, "hand_count": 3,
                               "discards": ["red-1"], "sticks": 1}
    assert v["players"][1] == {"seat": 1, "name": "bo", "hand": ["red-2", "yellow-6", "blue-3"],
                               "hand_count": 3, "discards": [], "sticks": 0}
    b = v["board"]
    assert b["beavers"] == {"red": 1, "orange": 0, "yellow": 0, "green": 0, "blue": 0, "purple": 0}
    assert b["supply"] == 59 and b["load"] == [105, 76] and b["tip_threshold"] == 2700
    assert b["start_seat"] == 0 and b["last_round_end"] is None
    assert b["last_play"] == {"seat": 0, "card": "red-1", "beaver": "red", "from": 0, "to": 1}
    assert all(c is None for pile in b["piles"] for c in pile) and [len(p) for p in b["piles"]] == [20, 21]
    assert set(b) == {"rings", "beavers", "piles", "supply", "load", "tip_threshold", "start_seat",
                      "last_play", "last_round_end"}


def test_mlb_4_4b_tip_wins_over_matching_ring_and_returns_two():
    """MLB-4.4b, D11: a tipping move onto its own colour gets no reward; mover returns min(2, sticks)."""
    state, _ = new(fill("orange-5"), tip_threshold=249)
    state = core.clone(state)
    state["sticks"] = [5, 0]
    state["supply"] = 55
    state, ev = GAME.play(state, 0, play("orange-5"))
    assert types(ev)[:3] == ["played", "tipped", "round_ended"]
    assert ev[1] == {"type": "tipped", "seat": 0, "load": [-250, 0], "returned": 2}
    assert ev[2]["reason"] == "tipped" and ev[2]["by"] == 0 and ev[2]["sticks"] == [3, 0]
    assert ev[2]["supply"] == 57
    assert "rewarded" not in types(ev)
    # MLB-3.4, MLB-3.5: round 2 supply = 60 − Σ sticks; seat 1 has fewest
    assert state["round"] == 2 and admin(state)["board"]["supply"] == 57 and GAME.to_act(state) == [1]


def test_mlb_4_4c_d13_reward_by_beaver_colour_not_card_colour():
    """MLB-4.4c, D13: joker onto the beaver's colour rewards; onto the card's colour does not."""
    state, _ = new(fill("red-2", "yellow-1", "red-7", "green-1", "orange-8"))
    # s0: red-2, red-7, orange-8; the red beaver on the dam makes red cards jokers
    s = with_positions(state, red=31)
    s2, ev = GAME.play(s, 0, play("red-2", "blue"))     # blue 0→2, ring 2 blue: reward
    assert ev[0]["joker"] and s2["phase"] == "reward"
    s3, ev = GAME.play(s, 0, play("red-7", "yellow"))   # yellow 0→7, ring 7 yellow: reward
    assert s3["phase"] == "reward"
    s4, ev = GAME.play(s, 0, play("red-7", "orange"))   # orange 0→7 (yellow ring): none
    assert s4["phase"] == "draw"
    s5, _ = GAME.play(with_positions(state, red=31, blue=6), 0, play("red-2", "blue"))
    assert s5["phase"] == "draw"                        # blue 6→8: red ring = card colour only
    s6, _ = GAME.play(with_positions(state, red=6), 0, play("red-2"))  # red 6→8 red ring
    assert s6["phase"] == "reward"


def test_mlb_4_4_last_beaver_to_dam_reward_then_raft_empty():
    """MLB-4.4c/d, D13, MLB-6.1 raft_empty: the last beaver reaching the dam is rewarded first;
    a stick then ends the round raft_empty (hand not empty), a card too."""
    state, _ = new(fill("purple-2", "red-1", "orange-1"), rounds=2)
    s = with_positions(state, red=31, orange=31, yellow=31, green=31, blue=31, purple=29)
    s, ev = GAME.play(s, 0, play("purple-2"))
    assert ev[0]["to"] == 31 and s["phase"] == "reward" and s["status"] == "active"
    assert GAME.legal_moves(s, 0) == [STICK, card_reward(0), card_reward(1)]
    a, ev = GAME.play(s, 0, STICK)
    assert types(ev)[:2] == ["rewarded", "round_ended"] and ev[1]["reason"] == "raft_empty"
    assert a["sticks"] == [1, 0] and a["round"] == 2 and GAME.to_act(a) == [1]
    b, ev = GAME.play(s, 0, card_reward(1))
    assert types(ev)[:2] == ["rewarded", "round_ended"] and ev[1]["reason"] == "raft_empty"


def test_mlb_6_1_order_hand_empty_before_raft_empty_and_supply_first():
    """MLB-6.1: the first that applies — supply_exhausted, then hand_empty, then raft_empty."""
    state, _ = new(fill("purple-2", "red-1", "orange-1"), rounds=2)
    s = with_positions(state, red=31, orange=31, yellow=31, green=31, blue=31, purple=29)
    s = core.clone(s)
    # seat 0 keeps only purple-2; its other cards go to its discard pile (MLB-10.1 holds)
    s["discards"][0] = [c for c in s["hands"][0] if c != RANK["purple-2"]]
    s["hands"][0] = [RANK["purple-2"]]
    s, _ = GAME.play(s, 0, play("purple-2"))
    a, ev = GAME.play(s, 0, STICK)
    assert ev[1]["reason"] == "hand_empty"          # hand and raft empty: hand_empty first
    b, ev = GAME.play(s, 0, card_reward(0))
    assert ev[1]["reason"] == "raft_empty"          # D12: the card keeps the hand non-empty
    c = core.clone(s)
    c["supply"], c["sticks"] = 1, [59, 0]
    c, ev = GAME.play(c, 0, STICK)
    assert ev[1]["reason"] == "supply_exhausted" and c["status"] == FINISHED  # MLB-6.3
    assert ev[2]["result"] == {"scores": [60, 0], "ranking": [[0], [1]], "winners": [0]}


def test_mlb_4_4d_hand_empty_without_reward_skips_draw():
    """MLB-4.4d/e, MLB-6.1: last card played, no reward → round ends before the draw phase."""
    state, _ = new(fill("red-2"), rounds=1)
    s = core.clone(state)
    others = [c for c in s["hands"][0] if c != RANK["red-2"]]
    s["hands"][0], s["discards"][0] = [RANK["red-2"]], others
    s, ev = GAME.play(s, 0, play("red-2"))
    assert types(ev) == ["played", "round_ended", "match_ended"] and ev[1]["reason"] == "hand_empty"


def test_mlb_4_4e_no_draw_phase_with_both_piles_empty():
    """MLB-4.4e, MLB-4.7: both piles empty → reward offers only a stick, then the turn ends."""
    state, _ = new(fill("red-1"))
    s = core.clone(state)
    s["discards"][1] = s["piles"][0] + s["piles"][1]
    s["piles"] = [[], []]
    s, _ = GAME.play(s, 0, play("red-1"))
    assert GAME.legal_moves(s, 0) == [STICK]
    s, ev = GAME.play(s, 0, STICK)
    assert types(ev) == ["rewarded"] and GAME.to_act(s) == [1] and s["phase"] in ("play", "exchange")


# --------------------------------------------------------------------------
# MLB-4.3, 4.5, 4.6: top-ups, exchange, discard.
# --------------------------------------------------------------------------
def test_mlb_4_5_we2_forced_exchange_and_top_up_order():
    """MLB-4.5, MLB-4.0, MLB-4.9, D9: WE2 — forced exchange re-evaluates the phase."""
    state, _ = new(fill("red-1", "yellow-1", "orange-8", "green-1", "purple-8", "blue-1",
                        "purple-1", "orange-2", "yellow-4"))
    state, _ = GAME.play(state, 0, play("red-1"))
    state, _ = GAME.play(state, 0, STICK)
    state, _ = GAME.play(state, 0, draw(1))
    assert state["phase"] == "exchange"
    assert GAME.legal_moves(state, 1) == [{"type": "exchange", "card": c, "pile": p}
                                          for c in ("yellow-1", "green-1", "blue-1") for p in (0, 1)]
    with pytest.raises(IllegalMove):
        GAME.play(state, 1, play("yellow-1"))
    state, ev = GAME.play(state, 1, {"type": "exchange", "card": "green-1", "pile": 0})
    assert ev == [{"type": "exchanged", "seat": 1, "card": "green-1", "pile": 0, "drawn": "purple-1"}]
    assert GAME.redact_event(ev[0], seat_viewer(0))["drawn"] is None
    assert GAME.redact_event(ev[0], seat_viewer(0))["card"] == "green-1"   # MLB-5.3
    state, _ = GAME.play(state, 1, {"type": "exchange", "card": "blue-1", "pile": 0})
    assert state["phase"] == "play"
    assert GAME.legal_moves(state, 1) == [play("yellow-4")]
    state, _ = GAME.play(state, 1, play("yellow-4"))
    state, _ = GAME.play(state, 1, PASS)
    assert admin(state)["board"]["load"] == [-73, 205]
    assert admin(state)["players"][1]["discards"] == ["green-1", "blue-1", "yellow-4"]


def test_mlb_4_3_top_up_in_exchange_phase_listed_first_and_can_unstick():
    """MLB-4.3, MLB-4.9, D8: with < 3 cards, top-ups come first, also in phase exchange."""
    state, _ = new(fill("red-1", "yellow-1", "orange-8", "green-1"))
    s = with_positions(state, red=1)
    s = core.clone(s)
    s["turn"] = 1
    one = [RANK["yellow-1"], RANK["green-1"]]
    s["discards"][1] = [c for c in s["hands"][1] if c not in one]
    s["hands"][1] = one
    s = with_positions(s)
    assert s["phase"] == "exchange"
    moves = GAME.legal_moves(s, 1)
    assert moves[:2] == [draw(0), draw(1)] and moves[2]["type"] == "exchange"
    s2, ev = GAME.play(s, 1, draw(0))   # pile 0's top is red-4 (fill order): red 1→5 is free
    assert ev[0]["card"] == "red-4" and s2["phase"] == "play"   # MLB-4.0: re-evaluated
    assert ev[0]["reason"] == "top_up" and GAME.to_act(s2) == [1]
    # a third card: no more top-ups (MLB-4.3, MLB-4.10)
    assert all(m["type"] != "draw" for m in GAME.legal_moves(s2, 1))
    with pytest.raises(IllegalMove):
        GAME.play(s2, 1, draw(1))


def test_mlb_4_6_stuck_discard_and_hand_empty():
    """MLB-4.6, D10: piles empty and nothing playable → discard; turn ends; last card ends the round."""
    state, _ = new(fill("red-1", "yellow-1", "orange-8", "green-1", "purple-8", "blue-1"), rounds=2)
    s = with_positions(state, red=1)
    s = core.clone(s)
    s["turn"] = 1
    s["discards"][0] = s["piles"][0] + s["piles"][1]
    s["piles"] = [[], []]
    s = with_positions(s)
    assert s["phase"] == "exchange"
    moves = GAME.legal_moves(s, 1)
    assert [m["type"] for m in moves] == ["discard"] * 3
    s, ev = GAME.play(s, 1, moves[0])
    assert types(ev) == ["discarded"] and GAME.to_act(s) == [0]
    s = core.clone(s)
    s["turn"] = 1
    keep = s["hands"][1][:1]
    s["discards"][1] += s["hands"][1][1:]
    s["hands"][1] = keep
    s = with_positions(s)
    s, ev = GAME.play(s, 1, GAME.legal_moves(s, 1)[0])
    assert types(ev)[:2] == ["discarded", "round_ended"] and ev[1]["reason"] == "hand_empty"
    assert ev[1]["by"] == 1 and GAME.to_act(s) == [0]   # MLB-3.5 tie → seat after seat 1


# --------------------------------------------------------------------------
# MLB-5: hidden information; MLB-2.5 recall.
# --------------------------------------------------------------------------
def test_mlb_5_reward_card_and_draw_private():
    """MLB-5.4: rewarded.card and drew.card only to the acting seat and admin."""
    state, _ = new(fill("red-1", "blue-3", "orange-5", "red-2", "green-4", "yellow-6"))
    state, _ = GAME.play(state, 0, play("red-1"))
    state, ev = GAME.play(state, 0, card_reward(1))
    assert ev[0]["card"] == "red-4"
    for viewer in (seat_viewer(1), SPECTATOR_VIEWER):
        assert GAME.redact_event(ev[0], viewer) == {**ev[0], "card": None}
    assert GAME.redact_event(ev[0], seat_viewer(0)) == ev[0]
    assert GAME.legal_moves(state, 1) == []


# --------------------------------------------------------------------------
# Model comparison over random playouts.
# --------------------------------------------------------------------------
PRIVATE = {"dealt": "cards", "drew": "card", "exchanged": "drawn", "rewarded": "card"}


def _check_invariants(v):
    """MLB-10.1..10.4 on an admin view (10.3 read with the reward exemption, see module notes)."""
    b = v["board"]
    cards = [c for p in v["players"] for c in p["hand"] + p["discards"]] + b["piles"][0] + b["piles"][1]
    assert sorted(cards, key=RANK.__getitem__) == ORDER                                    # 10.1
    assert b["supply"] + sum(p["sticks"] for p in v["players"]) == 60              # 10.2
    assert all(0 <= p <= 31 for p in b["beavers"].values())                        # 10.3
    rings = [p for p in b["beavers"].values() if 1 <= p <= 30]
    assert len(rings) == len(set(rings))
    if v["status"] == "active":
        assert b["supply"] >= 1
        lx, ly = b["load"]
        assert lx * lx + ly * ly <= b["tip_threshold"] ** 2
        if v["phase"] != "reward":
            assert any(p <= 30 for p in b["beavers"].values())
        for p in v["players"]:                                                      # 10.4
            assert p["hand_count"] > 0 or (v["phase"] == "reward" and p["seat"] == v["to_act"][0])


def _check_hidden(game_state, events, n):
    for viewer in [SPECTATOR_VIEWER] + [seat_viewer(s) for s in range(n)]:
        view = GAME.view(game_state, viewer)
        for p in view["players"]:
            if not viewer.is_seat(p["seat"]):
                assert p["hand"] == [None] * p["hand_count"]
        assert all(c is None for pile in view["board"]["piles"] for c in pile)
        assert "known" not in str(view)
        for e in events:
            r = GAME.redact_event(e, viewer)
            f = PRIVATE.get(e["type"])
            if f and e[f] is not None and not viewer.is_seat(e["seat"]):
                assert r[f] in (None, [None] * len(e[f]))
                assert {k: x for k, x in r.items() if k != f} == {k: x for k, x in e.items() if k != f}
            else:
                assert r == e


def _playout(rng, n, rounds, tip, policy, sticks=None):
    names = [f"p{i}" for i in range(n)]
    decks = [rng.sample(ORDER, 48) for _ in range(rounds)]
    first = rng.randrange(n)
    state, events, _ = GAME.create(names, rng.randrange(2**32),
                                   {"decks": decks, "rounds": rounds, "tip_threshold": tip,
                                    "first_seat": first, "recall": rng.choice(["perfect", "none"])})
    model = SpecModel(names, decks, first, rounds, tip)
    assert events == model.events
    if sticks:  # start with sticks already held (both sides), to reach supply exhaustion
        state = core.clone(state)
        state["sticks"], state["supply"] = list(sticks), 60 - sum(sticks)
        model.sticks, model.supply = list(sticks), 60 - sum(sticks)
    reasons, moves, per_round = [], [], 0
    while model.status == "active":
        seat = model.turn
        legal = model.legal(seat)
        assert GAME.legal_moves(state, seat) == legal, (model.phase, seat)
        assert GAME.to_act(state) == [seat]
        for other in range(n):
            if other != seat:
                assert GAME.legal_moves(state, other) == []
        move = policy(rng, legal)
        model.events = []
        state, events = GAME.play(state, seat, move)
        model.apply(seat, move)
        assert events == model.events, (move, events, model.events)
        v = admin(state)
        assert v == model.admin_view()
        _check_invariants(v)
        if rng.random() < 0.15:
            _check_hidden(state, events, n)
        moves.append(move["type"])
        per_round += 1
        for e in events:
            if e["type"] == "round_ended":
                reasons.append(e["reason"])
                assert per_round <= 186                                          # 10.5
                per_round = 0
    assert state["status"] == FINISHED and GAME.legal_moves(state, 0) == []
    return reasons, moves


def _uniform(rng, legal):
    return rng.choice(legal)


def _greedy(rng, legal):
    """Prefer sticks and plays, pass often: reaches supply exhaustion and empty piles."""
    if STICK in legal and rng.random() < 0.9:
        return STICK
    if PASS in legal and rng.random() < 0.5:
        return PASS
    return rng.choice(legal)


def test_model_matches_engine_over_random_playouts():
    """Every rule of MLB-3..MLB-8: legal moves, events, views equal the spec model move by move."""
    rng = random.Random(20261129)
    seen: set[str] = set()
    kinds: set[str] = set()
    fresh = ([(n, 3, 2700, _uniform) for n in (2, 3, 4, 5)] * 6
             + [(n, 2, 6000, _uniform) for n in (2, 3, 4, 5)] * 2
             + [(n, 10, 6000, _greedy) for n in (2, 5)] * 2
             + [(n, 4, t, _uniform) for n in (2, 5) for t in (300, 800, 1500)])
    cases: list[tuple[int, int, int, Callable[[random.Random, list[Move]], Move], list[int] | None]] = [
        (*c, None) for c in fresh] + [(3, 3, 6000, _greedy, [20, 18, 19]), (2, 2, 2700, _greedy, [30, 27])]
    for n, rounds, tip, policy, sticks in cases:
        reasons, moves = _playout(rng, n, rounds, tip, policy, sticks)
        seen.update(reasons)
        kinds.update(moves)
    assert seen >= {"tipped", "hand_empty", "raft_empty", "supply_exhausted"}, seen
    assert kinds == {"draw", "play", "reward", "pass", "exchange", "discard"}, kinds


def test_d3_tip_rate_is_plausible_under_random_play():
    """D3: T = 2700 tips about 25 % of rounds under uniform random play (sanity of table and load)."""
    rng = random.Random(3)
    tipped = rounds = 0
    for i in range(120):
        n = 2 + i % 4
        state, _, _ = GAME.create([f"p{k}" for k in range(n)], rng.randrange(2**32), {"rounds": 1})
        while state["status"] == "active":
            seat = GAME.to_act(state)[0]
            state, ev = GAME.play(state, seat, rng.choice(GAME.legal_moves(state, seat)))
        end = state["last_round_end"]
        assert end is not None  # the one round has ended
        tipped += end["reason"] == "tipped"
        rounds += 1
    assert 0.10 <= tipped / rounds <= 0.45, tipped / rounds


@pytest.mark.parametrize("options", [
    {"colour": 1}, {"rounds": 0}, {"rounds": 11}, {"rounds": "3"}, {"rounds": True},
    {"tip_threshold": 0}, {"tip_threshold": 6001}, {"first_seat": 2}, {"first_seat": -1},
    {"recall": "some"}, {"deck": ORDER[:47]}, {"deck": ORDER[:47] + ["red-1"]},
    {"deck": ORDER, "decks": [ORDER]}, {"decks": [ORDER] * 4}, {"decks": []},
    {"rounds": 2, "decks": [ORDER] * 3},
])
def test_mlb_2_0_invalid_options(options):
    """MLB-2.0..2.5: unknown option, wrong type or out-of-limit value → invalid_options."""
    with pytest.raises(core.InvalidOptions):
        GAME.create(["a", "b"], 1, options)


def test_mlb_2_5_recall_changes_nothing_and_view_shape():
    """MLB-2.5, MLB-5.5, MLB-7: recall none/perfect give identical views and events; view keys."""
    rng_moves = random.Random(8)
    a, ea, _ = GAME.create(["a", "b", "c"], 42, {"recall": "perfect"})
    b, eb, _ = GAME.create(["a", "b", "c"], 42, {"recall": "none"})
    assert ea == eb
    viewers = [ADMIN_VIEWER, SPECTATOR_VIEWER] + [seat_viewer(s) for s in range(3)]
    while a["status"] == "active":
        seat = GAME.to_act(a)[0]
        move = rng_moves.choice(GAME.legal_moves(a, seat))
        a, ea = GAME.play(a, seat, move)
        b, eb = GAME.play(b, seat, move)
        assert ea == eb
        for viewer in viewers:
            va = GAME.view(a, viewer)
            assert va == GAME.view(b, viewer) and "known" not in str(va)
    v = GAME.view(a, SPECTATOR_VIEWER)
    assert set(v) == {"status", "round", "rounds", "phase", "to_act", "players", "board", "scores", "result"}
    assert all(set(p) == {"seat", "name", "hand", "hand_count", "discards", "sticks"} for p in v["players"])
    assert v["phase"] == "finished" and v["to_act"] == [] and v["result"]["scores"] == v["scores"]
