"""Property tests of Biberbande: random legal play to the end of the match (2–6 players).

After every move: the invariants of section 10 (BB-10.1–BB-10.5), turn bounds (BB-4.9),
event shapes (BB-8), purity and snapshot round-trip, snapshot size, and a LEAK oracle:
every viewer's view and events are compared with the admin's, field by field, and every
value a viewer sees must be justified by this file's own model of the rules: where the card
a field names lies (BB-7, BB-8) and who has seen that card, rebuilt from the admin's events
(BB-3.4, BB-5).  A field or event type the model does not describe justifies nothing.
"""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.biberbande import CANONICAL, Biberbande, BiberbandeState
from engine.core import ADMIN_VIEWER, SEED_MAX, Viewer
from tests.conftest import examples
from tests.playout import Step, play_out, replay, viewers

G = Biberbande()
CARD_IDS = frozenset(CANONICAL)
SNAPSHOT_LIMIT = 4096
PROPS = settings(max_examples=examples(25), deadline=None)

MOVE_FIELDS = {"type", "slot", "target_seat", "target_slot"}


class Player(random.Random):
    """Random legal play.  ``knock_p``: chance to knock when offered; ``draw_p``: chance to
    draw when drawing is offered in an action phase.  Few knocks and many draws make long
    rounds that reach reshuffles (BB-3.6) and the turn limit (BB-4.9)."""

    knock_p = 0.5
    draw_p = 0.2

    def choice(self, seq):
        if seq and isinstance(seq[0], dict) and seq[0]["type"] == "knock":
            return seq[0] if self.random() < self.knock_p else seq[1]
        if len(seq) > 1 and isinstance(seq[0], dict) and seq[0]["type"] == "draw" \
                and seq[1]["type"] == "take_discard":
            return seq[0] if self.random() < self.draw_p else super().choice(seq[1:])
        return super().choice(seq)


def player(seed: int, long_rounds: bool, knock_p: float = 0.005) -> Player:
    rng = Player(seed)
    if long_rounds:
        rng.knock_p, rng.draw_p = knock_p, 0.95
    return rng


@st.composite
def matches(draw):
    """n, seed, options, rng for one random match (short or long rounds)."""
    n = draw(st.integers(2, 6))
    long_rounds = draw(st.booleans())
    options: dict[str, Any] = {"rounds": draw(st.integers(1, 2 if long_rounds else 3)),
                               "first_seat": draw(st.integers(0, n - 1)),
                               "recall": draw(st.sampled_from(["perfect", "none"]))}
    if long_rounds:
        options["turn_limit"] = draw(st.integers(12, 36))
    elif draw(st.booleans()):
        options["turn_limit"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        options["deck"] = draw(st.permutations(CANONICAL))
    return n, draw(st.integers(0, SEED_MAX)), options, player(draw(st.integers(0, 2**32)), long_rounds)


# --- the test's own knowledge model (BB-3.4, BB-5, BB-6.1, BB-8) ---------------------------
# Where the card named by a field lies, as the rules describe each event (BB-8) and view (BB-7).
# The model then decides from what each viewer has seen whether the viewer may know it.
FACE_UP = ("face_up",)        # a card put face up on the discard pile: public (BB-5.3, D16)
HELD = ("held",)              # the held card: its holder (BB-5.2)
DRAW_ORDER = ("draw_order",)  # the order of the draw pile: nobody but the admin (BB-5.3)
SPECTATORS = -1               # a knower: the card was shown face up to every viewer


#: where the card of an event field lies, from the event and the field's path
Locate = Callable[[dict, tuple], tuple]


def event_slot(event: dict, path: tuple) -> tuple:
    """The actor's display slot named by the event (after the event)."""
    return ("slot", event["seat"], event["slot"])


def listed_slot(event: dict, path: tuple) -> tuple:
    """``displays[s][j]``: seat s, slot j."""
    return ("slot", path[1], path[2])


def replaced_special(event: dict, path: tuple) -> tuple:
    """BB-6.2: a replaced special goes face up on the discard; an unreplaceable one stays (BB-4.10)."""
    return FACE_UP if event["card"] is not None else event_slot(event, path)


def face_up(event: dict, path: tuple) -> tuple:
    return FACE_UP


def held(event: dict, path: tuple) -> tuple:
    return HELD


#: BB-8: each event type's fields besides ``type`` and ``seat``; a field naming cards maps to
#: where that card lies, None marks a field that holds no card value.
EVENT_FIELDS: dict[str, dict[str, Locate | None]] = {
    "round_started": {"round": None, "starter": None},
    "dealt": {"displays": listed_slot, "discard": face_up},
    "turn_started": {"turn": None}, "reshuffled": {"count": None},
    "drew": {"card": held, "stage": None},
    "took_discard": {"slot": None, "card": event_slot, "discarded": face_up},
    "swapped_drawn": {"slot": None, "card": event_slot, "discarded": face_up},
    "discarded_drawn": {"card": face_up},
    "used_swap": {"slot": None, "target_seat": None, "target_slot": None},
    "used_peek": {"slot": None, "card": event_slot},
    "used_draw2": {}, "skipped_draw": {}, "knocked": {"turn": None}, "ended_turn": {},
    "round_ended": {"reason": None, "knocker": None, "displays": listed_slot},
    "replaced": {"slot": None, "special": replaced_special, "discarded": face_up, "card": event_slot},
    "round_scored": {"round": None, "points": None, "scores": None}, "match_ended": {"result": None},
}


def view_location(path: tuple) -> tuple | None:
    """BB-7: where the card at a view path lies; None for a view field that holds no card value;
    ``("unknown",)`` for a path the rules do not describe (nobody but the admin may see it)."""
    match path:
        case ("players", p, "display" | "known", j):
            return ("slot", p, j)
        case ("board", "drawn", "card"):
            return HELD
        case ("board", "discard", _):
            return FACE_UP
        case ("board", "draw_pile", _):
            return DRAW_ORDER
        case ("board", "history", r, "displays", s, j):
            return ("history", r, s, j)
        case (("status" | "round" | "rounds" | "phase",) | ("to_act" | "scores", _) | ("result", *_)
              | ("players", _, "seat" | "name")
              | ("board", "starter" | "turn" | "current_seat" | "turn_limit" | "max_turn" | "knocker"
                 | "knock_turn" | "last_turn" | "draw_count")
              | ("board", "drawn", "seat" | "stage")
              | ("board", "history", _, "round" | "starter" | "knocker" | "reason")
              | ("board", "history", _, "points", _)):
            return None
    return ("unknown",)


@dataclass
class Model:
    """Where every display card and the held card are, and who has seen each, rebuilt from
    the admin's events alone (BB-3.4, BB-5.5, BB-6.1)."""

    n: int
    display: list[list[str]] = field(default_factory=list)
    knowers: list[list[set[int]]] = field(default_factory=list)
    held: tuple[int, str] | None = None
    history: list[list[list[str]]] = field(default_factory=list)

    def apply(self, event: dict[str, Any]) -> None:
        kind, seat = event["type"], event["seat"]
        shown = set(range(self.n)) | {SPECTATORS}
        if kind == "dealt":  # a new deal clears knowledge; own outer cards are glimpsed (BB-3.4)
            self.display = [list(row) for row in event["displays"]]
            self.knowers = [[{p} if j in (0, 3) else set() for j in range(4)] for p in range(self.n)]
        elif kind == "drew":
            self.held = (seat, event["card"])
        elif kind == "took_discard":  # the face-up card is known to all (D15)
            assert self.display[seat][event["slot"]] == event["discarded"]
            self.display[seat][event["slot"]] = event["card"]
            self.knowers[seat][event["slot"]] = shown
        elif kind == "swapped_drawn":  # the placer knows the card it placed
            assert self.held is not None  # drawn before it is placed (BB-4.2)
            assert self.display[seat][event["slot"]] == event["discarded"]
            self.display[seat][event["slot"]] = self.held[1]
            self.knowers[seat][event["slot"]] = {seat}
        elif kind == "used_peek":
            self.knowers[seat][event["slot"]].add(seat)
        elif kind == "used_swap":  # cards and their knowers change places
            (a, j), (b, u) = (seat, event["slot"]), (event["target_seat"], event["target_slot"])
            self.display[a][j], self.display[b][u] = self.display[b][u], self.display[a][j]
            self.knowers[a][j], self.knowers[b][u] = self.knowers[b][u], self.knowers[a][j]
        elif kind == "round_ended":  # every display is revealed (BB-6.1)
            assert event["displays"] == self.display
            self.knowers = [[set(shown) for _ in range(4)] for _ in range(self.n)]
        elif kind == "replaced" and event["card"] is not None:
            assert self.display[seat][event["slot"]] == event["special"]
            self.display[seat][event["slot"]] = event["card"]
        elif kind == "round_scored":
            self.history.append([list(row) for row in self.display])
        if kind in ("swapped_drawn", "discarded_drawn", "used_swap", "used_peek", "used_draw2"):
            self.held = None

    def card_at(self, location: tuple) -> str | None:
        """The model's own value of the card at ``location`` (None: the model has none)."""
        match location:
            case ("slot", s, j):
                return self.display[s][j]
            case ("held",):
                return self.held and self.held[1]
            case ("history", r, s, j):
                return self.history[r][s][j]
        return None

    def may_know(self, viewer: Viewer, location: tuple, value: Any) -> bool:
        """True when ``viewer`` has seen the card at ``location``; a card value the model
        holds must then be exactly ``value``."""
        if viewer.is_admin or location == FACE_UP or location[0] == "history":
            seen = True
        elif location[0] == "slot":
            knowers = self.knowers[location[1]][location[2]]
            seen = (viewer.seat if viewer.role == "seat" else SPECTATORS) in knowers
        elif location == HELD:
            seen = self.held is not None and viewer.is_seat(self.held[0])
        else:  # the draw order, or a place the rules do not describe
            seen = False
        if seen and self.card_at(location) is not None:
            assert value == self.card_at(location), (location, value, self.card_at(location))
        return seen


def walk(seen: Any, truth: Any, path: tuple, may_see) -> None:
    """Same structure as the truth; a differing value must be null; every visible value
    must be justified by ``may_see(path, value)``."""
    if seen is None and truth is not None:
        return
    if isinstance(truth, dict):
        assert isinstance(seen, dict) and seen.keys() == truth.keys(), path
        for key in truth:
            walk(seen[key], truth[key], path + (key,), may_see)
    elif isinstance(truth, list):
        assert isinstance(seen, list) and len(seen) == len(truth), path
        for i, (s, t) in enumerate(zip(seen, truth)):
            walk(s, t, path + (i,), may_see)
    else:
        assert type(seen) is type(truth) and seen == truth, (path, seen, truth)
        if seen is not None:
            assert may_see(path, seen), f"unjustified visible value {seen!r} at {path}"


def no_card(path: tuple, value: Any) -> bool:
    """A field the rules give no card value may not carry one."""
    return value not in CARD_IDS


def check_view(view: dict, truth: dict, viewer: Viewer, model: Model, recall: str) -> None:
    """The viewer's view against the admin's, with ``known`` compared with the true display;
    every visible value at every path must be justified by the model (BB-5.1–BB-5.6)."""
    ref = orjson.loads(orjson.dumps(truth))
    for player_ in ref["players"]:
        player_["known"] = list(player_["display"])

    def may_see(path: tuple, value: Any) -> bool:
        location = view_location(path)
        if location is None:
            return no_card(path, value)
        if path[0] == "players" and path[2] == "known" and not (recall == "perfect" and viewer.role == "seat"):
            return False  # BB-5.6: known is for seats with perfect recall only
        return model.may_know(viewer, location, value)

    walk(view, ref, (), may_see)
    # completeness of perfect recall: everything the seat saw is shown (BB-5.6)
    if recall == "perfect" and viewer.role == "seat":
        for p, player_ in enumerate(view["players"]):
            for j in range(4):
                if viewer.seat in model.knowers[p][j]:
                    assert player_["known"][j] == truth["players"][p]["display"][j], (p, j)


def check_event(seen: dict, truth: dict, viewer: Viewer, model: Model) -> None:
    """BB-5.7: every field of the viewer's event against the admin's; a visible card must be
    one the model says the viewer has seen (the model has applied ``truth``)."""
    fields = EVENT_FIELDS.get(truth["type"], {})

    def may_see(path: tuple, value: Any) -> bool:
        if path in (("type",), ("seat",)):
            return no_card(path, value)
        if path[0] not in fields:
            return False  # a field (or event type) the rules do not describe
        locate = fields[path[0]]
        if locate is None:
            return no_card(path, value)
        return model.may_know(viewer, locate(truth, path), value)

    walk(seen, truth, (), may_see)


def check_legal_moves(state: BiberbandeState, n: int) -> None:
    """Only the seat to act has moves (BB-4); they carry seats and slots, never card values."""
    to_act = G.to_act(state)
    for seat in range(n):
        moves = G.legal_moves(state, seat)
        assert bool(moves) == (seat in to_act)
        for move in moves:
            assert set(move) <= MOVE_FIELDS and move["type"] not in CARD_IDS
            assert all(type(v) is int for k, v in move.items() if k != "type")


# --- the per-step checker ------------------------------------------------------------------
class Checker:
    """Checks one playout step by step."""

    def __init__(self, n: int, recall: str):
        self.n = n
        self.recall = recall
        self.model = Model(n)
        self.prev_bytes: bytes | None = None
        self.prev_scores = [0] * n
        self.turn_counts: Counter = Counter()
        self.reshuffles_in_round = 0
        self.moves = 0

    def __call__(self, step: Step[BiberbandeState]) -> None:
        after = orjson.dumps(step.after)
        assert len(after) <= SNAPSHOT_LIMIT, len(after)
        if step.before is not None:
            self.check_purity_and_round_trip(step, after)
        truth = G.view(step.after, ADMIN_VIEWER)
        self.check_events(step, truth)
        self.check_invariants(step, truth)
        frozen = orjson.dumps(step.events)
        for viewer in viewers(self.n):
            check_view(G.view(step.after, viewer), truth, viewer, self.model, self.recall)
        assert orjson.dumps(step.events) == frozen, "redact_event mutated an event"
        check_legal_moves(step.after, self.n)
        self.prev_bytes = after

    def check_purity_and_round_trip(self, step: Step[BiberbandeState], after: bytes) -> None:
        """apply never mutates its input; a JSON round-tripped snapshot plays on identically."""
        assert orjson.dumps(step.before) == self.prev_bytes
        assert step.seat is not None and step.move is not None  # a step after the first is a move
        again, events = G.play(orjson.loads(self.prev_bytes), step.seat, step.move)
        assert orjson.dumps(again) == after and events == step.events

    def check_events(self, step: Step[BiberbandeState], truth: dict) -> None:
        """BB-8 shapes; the model learns from each event, then every viewer's copy of it is
        checked against the model (BB-5.7); BB-10.2 round points; BB-10.4 per turn."""
        if step.before is not None:
            self.moves += 1
            board = step.before["round"], step.before["turn"]
            self.turn_counts[board + ("moves",)] += 1
        in_turn = step.before is not None
        for event in step.events:
            kind = event["type"]
            self.model.apply(event)
            for viewer in viewers(self.n):
                check_event(G.redact_event(event, viewer), event, viewer, self.model)
            assert set(event) == {"type", "seat"} | set(EVENT_FIELDS[kind]), event
            if kind == "round_ended":
                in_turn = False
            if kind == "round_started":
                self.reshuffles_in_round = 0
            if kind == "reshuffled":
                self.reshuffles_in_round += 1
                assert event["count"] == self.reshuffles_in_round
            if in_turn and kind in ("reshuffled", "drew", "used_draw2"):
                self.turn_counts[board + (kind,)] += 1
            if kind == "round_scored":
                assert all(0 <= p <= 36 for p in event["points"])
        assert self.model.display == [p["display"] for p in truth["players"]]     # the model is right
        assert self.model.held == (truth["board"]["drawn"] and (truth["board"]["drawn"]["seat"],
                                                                truth["board"]["drawn"]["card"]))
        if step.before is not None:
            assert self.turn_counts[board + ("moves",)] <= 33
            assert self.turn_counts[board + ("drew",)] <= 21
            assert self.turn_counts[board + ("used_draw2",)] <= 10
            assert self.turn_counts[board + ("reshuffled",)] <= 1

    def check_invariants(self, step: Step[BiberbandeState], truth: dict) -> None:
        """BB-10.1–BB-10.3, BB-10.5, BB-4.9, BB-6.5 on the admin view."""
        n, board = self.n, truth["board"]
        cards = [c for p in truth["players"] for c in p["display"]]
        cards += board["draw_pile"] + board["discard"]
        if board["drawn"] is not None:
            cards.append(board["drawn"]["card"])
        assert Counter(cards) == Counter(CANONICAL)                              # BB-10.1
        assert len(board["discard"]) >= 1                                        # BB-10.2
        assert (board["drawn"] is not None) == (truth["phase"] == "drawn")
        assert all(a >= b for a, b in zip(truth["scores"], self.prev_scores))
        self.prev_scores = truth["scores"]
        if truth["status"] == "active":
            assert board["draw_count"] + len(board["discard"]) >= 66 - 4 * n - 1  # BB-10.3
            assert truth["to_act"] == [board["current_seat"]]
        assert board["draw_count"] == len(board["draw_pile"])
        assert 1 <= board["turn"] <= board["max_turn"] + n - 1                  # BB-4.9
        if board["knock_turn"] is None:
            assert board["turn"] <= board["max_turn"]
        else:
            assert board["knock_turn"] <= board["max_turn"]
            assert board["turn"] <= board["last_turn"] == board["knock_turn"] + n - 1
        limit = truth["rounds"] * (board["turn_limit"] * n + n - 1) * 33          # BB-10.5
        assert self.moves <= limit
        if truth["status"] == "finished":
            assert truth["phase"] == "finished" and truth["to_act"] == []
            result = truth["result"]
            assert result["scores"] == truth["scores"]
            assert [s for g in result["ranking"] for s in g] == sorted(
                range(n), key=lambda s: (truth["scores"][s], s))                 # BB-6.5
            assert result["winners"] == result["ranking"][0]
            assert len(board["history"]) == truth["rounds"]


@PROPS
@given(matches())
def test_random_play_invariants_and_no_leaks(match):
    """BB-10.1–10.5, BB-4.9, BB-5 (leak oracle for every viewer), BB-8 shapes, purity,
    round-trip, snapshot size ≤ 4 KB — after every move."""
    n, seed, options, rng = match
    resolved = G.create([f"p{i}" for i in range(n)], seed, options)[2]
    checker = Checker(n, resolved["recall"])
    out = play_out(G, n, seed, options, rng=rng, check=checker)
    assert G.status(out.final) == "finished"


@PROPS
@given(matches())
def test_determinism_same_seed_same_match(match):
    """BB-2.1, BB-3.2, BB-3.6: same seed, options and moves → byte-identical snapshots and events."""
    n, seed, options, rng = match
    out = play_out(G, n, seed, options, rng=rng)
    state, events, _ = G.create(out.names, seed, options)
    assert orjson.dumps(state) == orjson.dumps(out.steps[0].after) and events == out.steps[0].events
    for step in out.steps[1:]:
        assert step.seat is not None and step.move is not None  # a step after the first is a move
        state, events = G.play(state, step.seat, step.move)
        assert orjson.dumps(state) == orjson.dumps(step.after) and events == step.events
    assert orjson.dumps(replay(G, out)) == orjson.dumps(out.final)


@PROPS
@given(st.integers(2, 6), st.integers(0, SEED_MAX))
def test_same_seed_same_deal(n, seed):
    """BB-3.2, BB-3.3: the deal is the seeded shuffle, independent of anything else."""
    names = [f"p{i}" for i in range(n)]
    first = G.create(names, seed, {})[0]
    second = G.create(names, seed, {})[0]
    assert orjson.dumps(first) == orjson.dumps(second)
    deck = list(CANONICAL)
    random.Random(f"biberbande:{seed}:1:0").shuffle(deck)
    view = G.view(first, ADMIN_VIEWER)
    dealt = [view["players"][i % n]["display"][i // n] for i in range(4 * n)]
    assert dealt + view["board"]["discard"] + view["board"]["draw_pile"] == deck


def test_snapshot_size_worst_case():
    """Project target: snapshot ≤ 4 KB at every step of 20 rounds with 6 players and 20 stacked decks."""
    decks = []
    for r in range(20):
        deck = list(CANONICAL)
        random.Random(r).shuffle(deck)
        decks.append(deck)
    sizes = []
    play_out(G, 6, 5, {"rounds": 20, "decks": decks}, rng=player(5, False),
             check=lambda step: sizes.append(len(orjson.dumps(step.after))))
    assert max(sizes) <= SNAPSHOT_LIMIT, max(sizes)


def test_long_rounds_reshuffle_under_all_checks():
    """BB-3.6, BB-10.3, BB-10.4, BB-4.9 with the full checker on long rounds (several
    reshuffles and turn-limit ends guaranteed, not left to chance); ``--fast``
    plays the 2-seat match only (:func:`tests.conftest.examples`)."""
    matches = ((2, 11), (6, 12))
    for n, seed in matches[:examples(len(matches))]:
        out = play_out(G, n, seed, {"rounds": 2, "turn_limit": 120 // n}, rng=player(seed, True, 0.0),
                       check=Checker(n, "perfect"))
        kinds = Counter(e["type"] for step in out.steps for e in step.events)
        assert kinds["reshuffled"] >= 2 * (120 // 57), kinds
        assert [e["reason"] for step in out.steps for e in step.events
                if e["type"] == "round_ended"] == ["turn_limit"] * 2
