"""Independent audit of engine/biberclan.py against docs/games/biberclan.md.

Written from the rules reference only (not from the engine):

* ``Ref``: a small reference model of BiberClan (BC-1 … BC-8) that computes
  legal moves, applies them, emits admin events and builds every viewer's view.
  It shares only the PRNG helpers of engine.core (BC-3.1 / D25 leave the PRNG
  to the implementer).  Random playouts compare engine and model move by move:
  legal lists in BC-4.12 order, admin events, redacted events and views for
  every viewer.
* Targeted stacked-deck tests (``options.deck`` = prefix + the rest of the
  canonical deck in canonical order), each naming the rule ids it checks.
"""
from __future__ import annotations

import copy
import random
from collections import Counter
from typing import Any

import orjson
import pytest

from engine.biberclan import BiberClan
from engine.core import ADMIN_VIEWER, FINISHED, SPECTATOR_VIEWER, IllegalMove, seat_viewer, seeded_shuffle
from tests.conftest import examples
from tests.engine.test_biberclan_rules import W1_VIEW

GAME = BiberClan()
NAMES = ["ana", "bo", "cy", "dee", "eve", "fay"]
SLOTS = ["b0", "b1", "b2", "t0", "t1"]
SUP = {"t0": ("b0", "b1"), "t1": ("b1", "b2")}
COVERS = {"b0": ("t0",), "b1": ("t0", "t1"), "b2": ("t1",)}
NUMS = [str(d) for d in range(10)]
#: a card in the reference model: value, face or kind, the seats that know it
Card = dict[str, Any]


def canon(bb: bool) -> list[str]:
    """BC-1.2 / BC-1.3, written out from the spec text."""
    if not bb:
        counts = [("0", 7)] + [(d, 6) for d in "123"] + [(d, 5) for d in "456"] + [(d, 4) for d in "789"] \
            + [("clear", 5), ("flip", 9)]
    else:
        counts = [("0", 11)] + [(d, 10) for d in "123"] + [(d, 9) for d in "456"] + [(d, 8) for d in "789"] \
            + [("clear", 5), ("flip", 9), ("swap", 7), ("peek", 7)]
    return [c for c, k in counts for _ in range(k)]


def stacked(prefix, bb=False):
    rest = canon(bb)
    for c in prefix:
        rest.remove(c)
    return list(prefix) + rest


# ==========================================================================
# Reference model (from the spec)
# ==========================================================================
class Ref:
    def __init__(self, n, seed, opts):
        self.n, self.seed = n, seed
        self.rounds = opts.get("rounds", 5)
        self.max_turns = opts.get("max_turns", 200)
        self.recall = opts.get("recall", "perfect")
        self.bb = opts.get("with_biberbande", False)
        self.decks = opts.get("decks") or ([opts["deck"]] if opts.get("deck") else [])
        self.totals = [0] * n
        self.round_scores = []
        self.last_round: dict[str, Any] | None = None
        self.status, self.result = "active", None
        self.events = []
        self.round = 0
        self.start_round(1, opts.get("first_seat", 0))

    def ev(self, **e):
        self.events.append(e)

    # ---- setup BC-3
    def start_round(self, r, start):
        self.round, self.start, self.A = r, start, start
        self.draw = list(self.decks[r - 1]) if r <= len(self.decks) else \
            seeded_shuffle(canon(self.bb), f"biberclan:{self.seed}:{r}:0")
        self.k = 0
        self.castles: list[dict[str, Card | None]] = [{s: None for s in SLOTS} for _ in range(self.n)]
        self.discard, self.box = [], []
        self.held: Card | None = None
        self.turns, self.finisher, self.final_turns = 0, None, []
        self.ev(type="round_started", seat=None, round=r, start_seat=start)
        self.auto_draw()

    def holding(self) -> Card:
        """The held card (BC-4.2: one is held from the draw until the move ends)."""
        assert self.held is not None, "a card must be held"
        return self.held

    def card_at(self, o: int, s: str) -> Card:
        """The card in seat ``o``'s slot ``s``, which a legal move names only when occupied."""
        card = self.castles[o][s]
        assert card is not None, f"castle {o} slot {s} must hold a card"
        return card

    # ---- geometry / protection BC-1.4, BC-4.1
    def count(self, o):
        return sum(1 for c in self.castles[o].values() if c)

    def free(self, o):
        c = self.castles[o]
        return [s for s in SLOTS if c[s] is None and all(c[x] is not None for x in SUP.get(s, ()))]

    def prot(self, o, s, actor):
        c = self.castles[o]
        if s in COVERS and any(c[t] is not None for t in COVERS[s]):
            return True
        if self.count(o) == 5:
            return True
        ups = [x for x in SLOTS if c[x] and c[x]["face"] == "up"]
        return actor != o and ups == [s]

    def unprot(self, actor):
        return [(o, s) for o in range(self.n) for s in SLOTS
                if self.castles[o][s] is not None and not self.prot(o, s, actor)]

    # ---- legal BC-4.3 … BC-4.9, BC-4.12
    def special_legal(self, card):
        un = self.unprot(self.A)
        if card in ("clear", "flip"):
            return [{"type": card, "target": o, "slot": s} for o, s in un]
        if card == "peek":
            return [{"type": "peek", "target": o, "slot": s} for o, s in un if self.castles[o][s]["face"] == "down"]
        return [{"type": "swap", "target_a": a, "slot_a": sa, "target_b": b, "slot_b": sb}
                for a, sa in un for b, sb in un if a < b]

    def legal(self, seat):
        if self.status != "active" or seat != self.A:
            return []
        A = self.A
        if self.phase == "place":
            out = []
            for t in range(self.n):
                if t == A or self.count(t) <= 3:
                    out += [{"type": "place", "target": t, "slot": s, "face": f}
                            for s in self.free(t) for f in ("up", "down")]
            for t in range(self.n):
                if t == A or self.free(A):
                    out += [{"type": "replace", "target": t, "slot": s, "face": f}
                            for s in SLOTS if self.castles[t][s] and not self.prot(t, s, A) for f in ("up", "down")]
            return out
        if self.phase == "stash":
            return [{"type": "stash", "slot": s, "face": f} for s in self.free(A) for f in ("up", "down")]
        return self.special_legal(self.holding()["card"])

    # ---- draws BC-4.2, BC-4.10
    def everyone(self):
        return set(range(self.n))

    def auto_draw(self):
        A = self.A
        while True:
            if not self.draw:
                assert self.discard, "BC-10.4"
                self.k += 1
                self.draw = seeded_shuffle(self.discard, f"biberclan:{self.seed}:{self.round}:{self.k}")
                self.discard = []
                self.ev(type="reshuffled", seat=None, count=self.k)
            c = self.draw.pop(0)
            if c in NUMS:
                self.ev(type="drew", seat=A, kind="number", card=c)
                self.held = {"kind": "number", "card": c, "knowers": {A}, "public": False, "from": None}
                self.phase = "place"
                return
            self.ev(type="drew", seat=A, kind="special", card=c)
            if self.special_legal(c):
                self.held = {"kind": "special", "card": c, "knowers": self.everyone(), "public": True, "from": None}
                self.phase = "special"
                return
            self.ev(type="special_void", seat=A, card=c)
            self.box.append(c)

    def lay(self, card, face, knowers):
        return {"card": card, "face": face, "knowers": set(knowers) | (self.everyone() if face == "up" else set())}

    # ---- apply
    def play(self, seat, m):
        assert m in self.legal(seat)
        self.events = []
        A, t = self.A, m["type"]
        if t == "place":
            h, self.held = self.holding(), None
            self.castles[m["target"]][m["slot"]] = self.lay(h["card"], m["face"], h["knowers"])
            self.ev(type="placed", seat=A, target=m["target"], slot=m["slot"], face=m["face"], card=h["card"])
            self.end_turn()
        elif t == "replace":
            h, self.held = self.holding(), None
            old = self.card_at(m["target"], m["slot"])
            self.castles[m["target"]][m["slot"]] = self.lay(h["card"], m["face"], h["knowers"])
            self.ev(type="replaced", seat=A, target=m["target"], slot=m["slot"], face=m["face"], card=h["card"],
                    removed=old["card"], removed_face=old["face"])
            if m["target"] == A:
                self.discard.append(old["card"])
                self.end_turn()
            else:
                self.held = {"kind": "removed", "card": old["card"], "knowers": old["knowers"] | {A},
                             "public": old["face"] == "up", "from": {"target": m["target"], "slot": m["slot"]}}
                self.phase = "stash"
        elif t == "stash":
            h, self.held = self.holding(), None
            self.castles[A][m["slot"]] = self.lay(h["card"], m["face"], h["knowers"])
            self.ev(type="stashed", seat=A, slot=m["slot"], face=m["face"], card=h["card"],
                    _removed_public=h["public"])
            self.end_turn()
        else:
            if t == "clear":
                old = self.card_at(m["target"], m["slot"])
                self.castles[m["target"]][m["slot"]] = None
                self.discard.append(old["card"])
                self.ev(type="cleared", seat=A, target=m["target"], slot=m["slot"], face=old["face"], card=old["card"])
            elif t == "flip":
                c = self.card_at(m["target"], m["slot"])
                c["face"] = "down" if c["face"] == "up" else "up"
                c["knowers"] = self.everyone()
                self.ev(type="flipped", seat=A, target=m["target"], slot=m["slot"], face=c["face"], card=c["card"])
            elif t == "swap":
                ca, cb = self.castles[m["target_a"]], self.castles[m["target_b"]]
                ca[m["slot_a"]], cb[m["slot_b"]] = cb[m["slot_b"]], ca[m["slot_a"]]
                self.ev(type="swapped", seat=A, target_a=m["target_a"], slot_a=m["slot_a"],
                        target_b=m["target_b"], slot_b=m["slot_b"])
            elif t == "peek":
                c = self.card_at(m["target"], m["slot"])
                c["knowers"].add(A)
                self.ev(type="peeked", seat=A, target=m["target"], slot=m["slot"], card=c["card"])
            self.box.append(self.holding()["card"])
            self.held = None
            self.auto_draw()
        return self.events

    # ---- BC-4.11
    def end_turn(self):
        A = self.A
        if self.count(A) == 5 and self.finisher is None:
            self.finisher = A
            self.final_turns = [(A + i) % self.n for i in range(1, self.n)]
            self.ev(type="castle_completed", seat=A, final_turns=list(self.final_turns))
        elif A in self.final_turns:
            self.final_turns.remove(A)
        self.turns += 1
        if self.finisher is not None and not self.final_turns:
            self.end_round("castle")
        elif self.finisher is None and self.turns == self.max_turns:
            self.end_round("turn_limit")
        else:
            self.A = (A + 1) % self.n
            self.auto_draw()

    # ---- BC-6
    def end_round(self, reason):
        n = self.n
        vals, bon, five = [], [], []
        for o in range(n):
            digits = [int(c["card"]) for c in self.castles[o].values() if c]
            m = max(Counter(digits).values(), default=0)
            vals.append(sum(digits))
            bon.append({3: 15, 4: 25}.get(m, 0))
            if m == 5:
                five.append(o)
        pen = [0] * n
        F = self.finisher
        if F is not None and any(vals[o] + bon[o] > vals[F] + bon[F] for o in range(n) if o != F):
            pen[F] = -10
        sc = [vals[o] + bon[o] + pen[o] for o in range(n)]
        self.totals = [self.totals[o] + sc[o] for o in range(n)]
        body = {"round": self.round, "reason": reason, "finisher": F,
                "castles": [[c["card"] if c else None for c in (self.castles[o][s] for s in SLOTS)]
                            for o in range(n)],
                "values": vals, "bonus": bon, "penalty": pen, "scores": sc, "five_of_a_kind": five,
                "totals": list(self.totals)}
        self.ev(type="round_ended", seat=None, **copy.deepcopy(body))
        self.round_scores.append(sc)
        self.last_round = body
        self.held = None
        if five or self.round == self.rounds:
            rest = [o for o in range(n) if o not in five]
            ranking = [sorted(five)] if five else []
            for v in sorted({self.totals[o] for o in rest}, reverse=True):
                ranking.append([o for o in rest if self.totals[o] == v])
            self.result = {"scores": list(self.totals), "ranking": ranking, "winners": ranking[0]}
            self.status, self.phase = "finished", "finished"
            self.ev(type="match_ended", seat=None, reason="five_of_a_kind" if five else "rounds",
                    result=copy.deepcopy(self.result))
        else:
            nxt = F if F is not None else (self.A + 1) % n
            self.start_round(self.round + 1, nxt)

    # ---- BC-5, BC-7
    def view(self, viewer):
        admin = viewer.role == "admin"
        vs = viewer.seat if viewer.role == "seat" else None
        fin = self.status == "finished"
        players = []
        for o in range(self.n):
            castle: dict[str, dict[str, Any] | None] = {}
            for s in SLOTS:
                c = self.castles[o][s]
                if c is None:
                    castle[s] = None
                    continue
                shown = admin or fin or c["face"] == "up"
                e = {"face": c["face"], "card": c["card"] if shown else None,
                     "protected": self.prot(o, s, actor=None)}
                if not shown and self.recall == "perfect" and vs is not None and vs in c["knowers"]:
                    e["known"] = c["card"]
                castle[s] = e
            players.append({"seat": o, "name": NAMES[o], "cards": self.count(o),
                            "face_up": sum(1 for c in self.castles[o].values() if c and c["face"] == "up"),
                            "castle": castle})
        held = None
        if self.held is not None:
            h = self.held
            shown = admin or h["public"] or vs == self.A
            held = {"seat": self.A, "kind": h["kind"], "card": h["card"] if shown else None}
            if not shown and self.recall == "perfect" and vs is not None and vs in h["knowers"]:
                held["known"] = h["card"]
            if h["from"]:
                held["from"] = dict(h["from"])
        board: dict[str, Any] = {"draw_count": len(self.draw)}
        if admin:
            board["draw_pile"] = list(self.draw)
        board.update(discard=list(self.discard), box=list(self.box), start_seat=self.start,
                     turn_seat=None if fin else self.A, turns=self.turns, max_turns=self.max_turns,
                     finisher=self.finisher, final_turns=list(self.final_turns), held=held,
                     round_scores=[list(r) for r in self.round_scores], last_round=self.last_round)
        return {"status": self.status, "round": self.round, "rounds": self.rounds, "phase": self.phase,
                "to_act": [] if fin else [self.A], "scores": list(self.totals), "players": players,
                "board": board, "result": self.result}


def ref_redact(e, viewer):
    """BC-5.6 from the spec, on a model event (private key ``_removed_public``)."""
    e = dict(e)
    removed_public = e.pop("_removed_public", None)
    if viewer.role == "admin":
        return e
    actor = e["seat"]
    mine = viewer.role == "seat" and viewer.seat == actor
    t = e["type"]
    if t == "drew" and e["kind"] == "number" and not mine:
        e["card"] = None
    elif t in ("placed", "replaced") and e["face"] != "up" and not mine:
        e["card"] = None
    elif t == "stashed" and e["face"] != "up" and not removed_public and not mine:
        e["card"] = None
    elif t == "peeked" and not mine:
        e["card"] = None
    if t == "replaced" and not (e["removed_face"] == "up" or e["target"] == actor) and not mine:
        e["removed"] = None
    return e


def strip(e):
    """Engine events minus its one documented extra key (``stashed.removed_face``, see report)."""
    e = dict(e)
    e.pop("version", None)
    if e["type"] == "stashed":
        e.pop("removed_face", None)
    return e


def model_strip(e):
    e = dict(e)
    e.pop("_removed_public", None)
    return e


def viewers(n):
    return [ADMIN_VIEWER, SPECTATOR_VIEWER] + [seat_viewer(k) for k in range(n)]


def compare(state, ref, n, where):
    assert GAME.to_act(state) == ([] if ref.status == "finished" else [ref.A]), where
    for k in range(n):
        assert GAME.legal_moves(state, k) == ref.legal(k), (where, k)
    for v in viewers(n):
        assert GAME.view(state, v) == ref.view(v), (where, v)


def playout(n, seed, opts, pick_seed, churn=0.5, max_moves=4000):
    state, events, _ = GAME.create(NAMES[:n], seed, opts)
    ref = Ref(n, seed, opts)
    assert [strip(e) for e in events] == [model_strip(e) for e in ref.events], "creation events"
    compare(state, ref, n, "creation")
    rng = random.Random(pick_seed)
    moves = 0
    while state["status"] != FINISHED and moves < max_moves:
        seat = GAME.to_act(state)[0]
        legal = GAME.legal_moves(state, seat)
        # bias toward own-castle churn so reshuffles and turn limits happen
        own = [m for m in legal if m["type"] == "replace" and (m["target"] == seat or churn < 0.5)]
        m = rng.choice(own if own and rng.random() < churn else legal)
        before = orjson.dumps(state)
        new, evs = GAME.play(state, seat, m)
        assert orjson.dumps(state) == before, "engine mutated its input"
        revs = ref.play(seat, m)
        where = (seed, moves, m)
        assert [strip(e) for e in evs] == [model_strip(e) for e in revs], where
        for v in viewers(n):
            assert [strip(e) for e in GAME.redact_events(evs, v)] == [ref_redact(e, v) for e in revs], (where, v)
        state = new
        compare(state, ref, n, where)
        moves += 1
    return state


CASES = [
    (2, 1, {"rounds": 2}),
    (3, 2, {"rounds": 2, "with_biberbande": True}),
    (4, 3, {"rounds": 1, "max_turns": 25, "recall": "none"}),
    (5, 4, {"rounds": 2, "with_biberbande": True, "first_seat": 3, "max_turns": 40}),
    (6, 5, {"rounds": 1, "with_biberbande": True}),
    (2, 6, {"rounds": 3, "max_turns": 60, "with_biberbande": True}),
    (3, 7, {"rounds": 3, "max_turns": 3}),
]


@pytest.mark.parametrize("n,seed,opts", CASES)
def test_engine_matches_reference_model(n, seed, opts):
    """BC-3 … BC-8: engine vs the spec-written model over random playouts
    (legal lists in BC-4.12 order, admin + redacted events BC-5.6, views BC-7)."""
    playout(n, seed, opts, pick_seed=seed * 31 + n)


@pytest.mark.parametrize("k", range(examples(60)))
def test_engine_matches_reference_model_random_options(k):
    """Same comparison over random player counts and options, with a churning
    policy (mostly own-castle replaces) so reshuffles (BC-4.10), turn limits
    (D18, BC-6.6) and long knowledge histories (BC-5.5) occur; half the cases
    stack specials early (``decks``) for void chains and compulsory specials
    (BC-4.2, BC-4.6 … BC-4.9)."""
    rng = random.Random(1000 + k)
    n = rng.randint(2, 6)
    bb = rng.random() < 0.6
    opts: dict[str, Any] = {"rounds": rng.randint(1, 3), "with_biberbande": bb,
                            "recall": rng.choice(["perfect", "none"]), "first_seat": rng.randrange(n),
                            "max_turns": rng.choice([1, 2, 5, 30, 120, 200])}
    if k % 2:
        deck = canon(bb)
        specials, numbers = [c for c in deck if c not in NUMS], [c for c in deck if c in NUMS]
        rng.shuffle(specials)
        rng.shuffle(numbers)
        opts["decks"] = [numbers[:6] + specials[:10] + numbers[6:] + specials[10:]] * rng.randint(1, opts["rounds"])
    playout(n, rng.randrange(2**40), opts, pick_seed=k, churn=rng.choice([0.0, 0.3, 0.5, 0.9, 0.97]))


# ==========================================================================
# Targeted stacked-deck tests
# ==========================================================================
def new(prefix, n=2, bb=False, **opts):
    deck = stacked(prefix, bb)
    state, events, _ = GAME.create(NAMES[:n], 11, {"deck": deck, "with_biberbande": bb, **opts})
    return state, events


def go(state, **move):
    seat = GAME.to_act(state)[0]
    return GAME.play(state, seat, move)


def place(state, target, slot, face="up"):
    return go(state, type="place", target=target, slot=slot, face=face)


def own_plan(n, seats_cards=5):
    """Each seat in turn fills its own b0, b1, b2 (up), t0, t1 (down)."""
    return [(seat, slot, "up" if slot[0] == "b" else "down") for slot in SLOTS[:seats_cards] for seat in range(n)]


def legal_now(state):
    return GAME.legal_moves(state, GAME.to_act(state)[0])


def test_w1_view_json_example_bc_7_bc_4_4_bc_5_5():
    """W1 and the BC-7 JSON example: seat 1's view during the stash, exactly."""
    state, _ = new(["5", "9", "3", "7", "2"])
    state, _ = place(state, 0, "b0", "up")
    state, _ = place(state, 1, "b0", "down")
    with pytest.raises(IllegalMove):
        place(state, 0, "t0", "down")
    state, _ = place(state, 0, "b1", "down")
    state, _ = go(state, type="replace", target=0, slot="b1", face="up")
    assert legal_now(state) == [{"type": "stash", "slot": s, "face": f} for s in ("b1", "b2") for f in ("up", "down")]
    view = GAME.view(state, seat_viewer(1))
    expected = W1_VIEW
    assert {k: view[k] for k in expected} == expected
    state, _ = go(state, type="stash", slot="b1", face="down")
    assert GAME.view(state, seat_viewer(0))["players"][1]["castle"]["b1"] == \
        {"face": "down", "card": None, "known": "3", "protected": False}
    state, _ = go(state, type="replace", target=0, slot="b0", face="down")
    assert GAME.view(state, SPECTATOR_VIEWER)["board"]["discard"] == ["5"]
    assert GAME.view(state, SPECTATOR_VIEWER)["players"][0]["castle"]["b1"]["protected"] is True  # BC-4.1c
    assert (0, "b1") not in [(m["target"], m["slot"]) for m in legal_now(state) if m["type"] == "replace"]


def test_swap_own_single_face_up_card_relative_to_actor_bc_4_1c_bc_4_8_d15():
    """BC-4.1(c) is judged relative to the acting seat: the actor may swap its
    own only face-up card away (D15: own castle allowed, two castles); values
    stay hidden (BC-4.8) and faces travel with the cards."""
    state, _ = new(["5", "6", "swap", "4"], bb=True)
    state, _ = place(state, 0, "b0", "up")
    state, _ = place(state, 1, "b0", "down")
    assert legal_now(state) == [{"type": "swap", "target_a": 0, "slot_a": "b0", "target_b": 1, "slot_b": "b0"}]
    # seen from seat 1, seat 0's 5 is protected (only face-up card, BC-7.1 against others)
    assert GAME.view(state, seat_viewer(1))["players"][0]["castle"]["b0"]["protected"] is True
    state, events = go(state, type="swap", target_a=0, slot_a="b0", target_b=1, slot_b="b0")
    assert events[0] == {"type": "swapped", "seat": 0, "target_a": 0, "slot_a": "b0", "target_b": 1, "slot_b": "b0"}
    v0 = GAME.view(state, seat_viewer(0))
    assert v0["players"][0]["castle"]["b0"] == {"face": "down", "card": None, "protected": False}   # never saw the 6
    assert v0["players"][1]["castle"]["b0"] == {"face": "up", "card": "5", "protected": True}
    assert GAME.view(state, seat_viewer(1))["players"][0]["castle"]["b0"]["known"] == "6"
    assert GAME.view(state, SPECTATOR_VIEWER)["board"]["box"] == ["swap"]
    assert GAME.view(state, SPECTATOR_VIEWER)["board"]["held"] == {"seat": 0, "kind": "number", "card": None}


def test_peek_own_face_down_card_compulsory_bc_4_9_d15():
    """BC-4.9, D15: peek targets face-down unprotected cards only (own too);
    with only the owner's card available it is still compulsory."""
    state, _ = new(["3", "8", "peek", "4"], bb=True)
    state, _ = place(state, 0, "b0", "down")
    state, _ = place(state, 1, "b0", "up")
    assert legal_now(state) == [{"type": "peek", "target": 0, "slot": "b0"}]
    state, events = go(state, type="peek", target=0, slot="b0")
    assert GAME.redact_event(events[0], seat_viewer(1))["card"] is None
    assert GAME.redact_event(events[0], seat_viewer(0))["card"] == "3"


def test_full_castle_untouchable_in_final_lap_harmful_clear_bc_4_1b_bc_4_6_d10():
    """BC-4.1(b) protects the finisher's full castle against everything in the
    final lap; a drawn clear is compulsory on the actor's own cards (BC-4.6);
    others may not place into a full castle (BC-4.3); penalty (BC-6.2)."""
    state, _ = new(["8", "9", "8", "9", "8", "9", "1", "9", "2", "clear", "7"], rounds=1)
    for t, s, f in own_plan(2)[:9]:
        state, _ = place(state, t, s, f)
    assert GAME.view(state, SPECTATOR_VIEWER)["board"]["finisher"] == 0
    assert legal_now(state) == [{"type": "clear", "target": 1, "slot": "b2"},
                                {"type": "clear", "target": 1, "slot": "t0"}]
    state, _ = go(state, type="clear", target=1, slot="t0")
    moves = legal_now(state)
    assert all(m["target"] == 1 for m in moves)
    assert [(m["type"], m["slot"]) for m in moves if m["face"] == "up"] == \
        [("place", "t0"), ("place", "t1"), ("replace", "b0"), ("replace", "b1"), ("replace", "b2")]
    state, events = place(state, 1, "t0", "down")
    ended = [e for e in events if e["type"] == "round_ended"][0]
    assert ended["values"] == [27, 34] and ended["bonus"] == [15, 15] and ended["penalty"] == [-10, 0]
    assert ended["castles"][1] == ["9", "9", "9", "7", None]


def test_final_lap_three_players_and_next_start_bc_4_11_bc_6_6():
    """BC-4.11 with n = 3: a seat completing its castle during the final lap is
    only removed from final_turns (one castle_completed); round ends when the
    lap is over; the finisher starts the next round (BC-6.6, D19)."""
    deck = canon(False)                                      # 52 numbers first: no specials
    state, _, _ = GAME.create(NAMES[:3], 5, {"deck": deck, "rounds": 2})
    state, _ = place(state, 0, "b0", "up")
    state, _ = place(state, 1, "b0", "up")
    state, _ = place(state, 2, "b0", "up")
    state, _ = go(state, type="replace", target=0, slot="b0", face="up")   # seat 0 loses a tempo
    plan = [(s, slot, "up") for slot in ("b1", "b2", "t0") for s in (1, 2, 0)] + [(1, "t1", "down")]
    for t, s, f in plan:
        state, events = place(state, t, s, f)
    assert events[1] == {"type": "castle_completed", "seat": 1, "final_turns": [2, 0]}
    state, events = place(state, 2, "t1", "down")              # seat 2 completes too
    assert [e["type"] for e in events] == ["placed", "drew"]
    b = GAME.view(state, SPECTATOR_VIEWER)["board"]
    assert b["finisher"] == 1 and b["final_turns"] == [0] and b["turns"] == 15
    state, events = place(state, 0, "t1", "down")              # seat 0 completes too: no new finisher
    types = [e["type"] for e in events]
    assert types[:3] == ["placed", "round_ended", "round_started"]
    assert events[1]["reason"] == "castle" and events[1]["finisher"] == 1
    assert events[2] == {"type": "round_started", "seat": None, "round": 2, "start_seat": 1}
    assert GAME.to_act(state) == [1]


def test_turn_limit_next_start_seat_bc_6_6_d18_d19():
    """D18: max_turns ends the round, scored without penalty; D19: the next round
    starts with the seat after the one that took the last turn."""
    state, _, _ = GAME.create(NAMES[:3], 5, {"deck": canon(False), "rounds": 2, "max_turns": 2, "first_seat": 1})
    state, _ = place(state, 1, "b0", "up")
    state, events = place(state, 2, "b0", "up")
    ended = [e for e in events if e["type"] == "round_ended"][0]
    assert ended["reason"] == "turn_limit" and ended["finisher"] is None and ended["penalty"] == [0, 0, 0]
    assert [e for e in events if e["type"] == "round_started"][0]["start_seat"] == 0
    assert GAME.to_act(state) == [0]


def test_five_of_a_kind_shared_first_place_bc_6_4_bc_6_7_d22():
    """BC-6.1 (m = 5: bonus 0), BC-6.4, BC-6.7, D22: two seats with five of a
    kind share first place whatever their totals; the match ends before
    `rounds`; the finisher is still penalised (BC-6.2)."""
    state, _ = new(["0", "1"] * 5, rounds=3)
    for t, s, f in own_plan(2):
        state, events = place(state, t, s, f)
    ended = [e for e in events if e["type"] == "round_ended"][0]
    assert ended["values"] == [0, 5] and ended["bonus"] == [0, 0] and ended["penalty"] == [-10, 0]
    assert ended["five_of_a_kind"] == [0, 1]
    assert events[-1] == {"type": "match_ended", "seat": None, "reason": "five_of_a_kind",
                          "result": {"scores": [-10, 5], "ranking": [[0, 1]], "winners": [0, 1]}}
    view = GAME.view(state, SPECTATOR_VIEWER)
    assert view["status"] == "finished" and view["round"] == 1
    assert view["players"][0]["castle"]["t1"]["card"] == "0"                  # BC-5.7


def test_five_of_a_kind_lower_total_still_wins_bc_6_7():
    """BC-6.7: the five-of-a-kind seat ranks first even with the lower total;
    the rest by total (BC-6.1: four equal → 25, not cumulative with 15)."""
    state, _ = new(["0", "9", "0", "9", "0", "9", "0", "9", "0", "8"], rounds=2)
    for t, s, f in own_plan(2):
        state, events = place(state, t, s, f)
    ended = [e for e in events if e["type"] == "round_ended"][0]
    assert ended["values"] == [0, 44] and ended["bonus"] == [0, 25] and ended["scores"] == [-10, 69]
    assert events[-1]["result"] == {"scores": [-10, 69], "ranking": [[0], [1]], "winners": [0]}


def test_penalty_tie_no_penalty_shared_win_bc_6_2_d21_d23():
    """BC-6.2, D21: equal values+bonus at the top is no penalty; D23 equal totals share the win."""
    state, _ = new(["5", "9", "5", "8", "5", "7", "2", "6", "4", "6"], rounds=1)
    for t, s, f in own_plan(2):
        state, events = place(state, t, s, f)
    ended = [e for e in events if e["type"] == "round_ended"][0]
    assert ended["finisher"] == 0 and ended["values"] == [21, 36] and ended["bonus"] == [15, 0]
    assert ended["penalty"] == [0, 0] and ended["scores"] == [36, 36]
    assert events[-1]["result"] == {"scores": [36, 36], "ranking": [[0, 1]], "winners": [0, 1]}   # D23


def test_events_redaction_stash_of_public_card_bc_5_6():
    """BC-5.6: a card stolen face up and stashed face down stays public in the
    `stashed` event; BC-5.3 the held removed card is public meanwhile."""
    state, _ = new(["5", "6", "7", "8"])
    state, _ = place(state, 0, "b0", "up")
    state, _ = place(state, 1, "b0", "up")
    state, _ = place(state, 0, "b1", "up")             # seat 0 now has two face-up cards
    state, ev1 = go(state, type="replace", target=0, slot="b0", face="down")
    assert GAME.redact_event(ev1[0], seat_viewer(0)) | {"version": 0} == {**ev1[0], "card": None, "version": 0}
    assert GAME.view(state, seat_viewer(0))["board"]["held"] == \
        {"seat": 1, "kind": "removed", "card": "5", "from": {"target": 0, "slot": "b0"}}
    state, ev2 = go(state, type="stash", slot="b1", face="down")
    for v in viewers(2):
        assert GAME.redact_event(ev2[0], v)["card"] == "5"
    assert GAME.view(state, seat_viewer(0))["players"][1]["castle"]["b1"]["known"] == "5"


def test_reshuffles_whole_discard_keyed_by_seed_round_k_bc_4_10_bc_3_1_bc_5_5():
    """BC-4.10, BC-3.1, D17, D25: an empty draw pile becomes the whole discard
    (bottom→top) shuffled with key (seed, r, k), k = 1, 2, …; knowledge of a
    reshuffled card is gone once it is drawn again (BC-5.5)."""
    state, _, _ = GAME.create(NAMES[:2], 77, {"rounds": 1, "max_turns": 1000})
    ks: list[int] = []
    while len(ks) < 2:
        seat = GAME.to_act(state)[0]
        admin = GAME.view(state, ADMIN_VIEWER)["board"]
        legal = GAME.legal_moves(state, seat)
        own = [m for m in legal if m["type"] == "replace" and m["target"] == seat]
        move = own[0] if own else legal[0]
        state, events = GAME.play(state, seat, move)
        for i, e in enumerate(events):
            if e["type"] == "reshuffled":
                ks.append(e["count"])
                # the discard just before the draw that emptied the pile (+ the move's own discard)
                discard = admin["discard"] + ([events[0]["removed"]] if events[0]["type"] == "replaced"
                                              and events[0]["target"] == seat else [])
                if events[0]["type"] == "cleared":
                    discard = admin["discard"] + [events[0]["card"]]
                pile = seeded_shuffle(discard, f"biberclan:77:1:{e['count']}")
                drawn = [x["card"] for x in events[i + 1:] if x["type"] == "drew"]
                after = GAME.view(state, ADMIN_VIEWER)["board"]
                assert after["draw_pile"] == pile[len(drawn):] and after["discard"] == []
        assert state["status"] != FINISHED
    assert ks == [1, 2]
