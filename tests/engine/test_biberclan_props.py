"""BiberClan properties over random legal play (docs/games/biberclan.md, BC-5, BC-10).

Every example plays a whole match with ``tests.playout.play_out`` and checks
after every move: the invariants BC-10, determinism and the snapshot round
trip (the move replayed on a reloaded snapshot gives identical bytes), the
4 KB snapshot bound, and the leak property: for every viewer, every field of
its view and of its redacted events is public by the rules (BC-5.1, BC-5.7,
BC-7, BC-8) or a card value that an independent knowledge model, built here
from the admin events (BC-5.5), says the viewer has seen; anything else must
be null; the legal moves do not depend on hidden values.  The model never
looks at the engine's redaction.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.biberclan import BiberClan, BiberClanState
from engine.core import ADMIN_VIEWER, FINISHED, SEED_MAX, Viewer, clone
from tests.conftest import examples
from tests.playout import Playout, Step, play_out, viewers

GAME = BiberClan()
SLOTS = ("b0", "b1", "b2", "t0", "t1")
SUPPORTS = {"t0": ("b0", "b1"), "t1": ("b1", "b2")}
SPECIALS = {"clear", "flip", "swap", "peek"}
SNAPSHOT_LIMIT = 4096
MOVE_KEYS = {"type", "target", "slot", "face", "target_a", "slot_a", "target_b", "slot_b"}
PUBLIC_MOVE_VALUES = {"place", "replace", "stash", "clear", "flip", "swap", "peek", "up", "down", *SLOTS}


# --------------------------------------------------------------------------
# Independent knowledge model (BC-5.5, BC-5.6), driven by the unredacted
# events: which physical card each event field names, and who knows it.
# --------------------------------------------------------------------------
class Card:
    """One physical card in a castle or held: value, face, the seats knowing
    it, and ``public``: every viewer (spectators too) has seen its value."""

    def __init__(self, value: str, face: str | None, knowers: set[int], public: bool = False):
        self.value, self.face, self.knowers, self.public = value, face, set(knowers), public

    def known_by(self, viewer: Viewer) -> bool:
        """May ``viewer`` be shown this value?  Admin always; else only what it has seen."""
        return viewer.is_admin or self.public or (viewer.role == "seat" and viewer.seat in self.knowers)


class Model:
    """What each viewer knows, rebuilt from events alone (BC-4, BC-5.5, BC-5.7)."""

    def __init__(self, n: int):
        self.n = n
        self.all = set(range(n))
        self.castles: list[dict[str, Card | None]] = []
        self.held: Card | None = None
        self.holder: int | None = None
        self.finished = False
        self.moves_this_round = 0

    def reveal(self, card: Card) -> Card:
        """The value was shown to everybody (face up in a castle, on the discard, flipped)."""
        card.public, card.knowers = True, set(self.all)
        return card

    def lay(self, card: Card, face: str) -> Card:
        """A card put into a castle; lying face up shows it to all."""
        laid = Card(card.value, face, card.knowers, card.public)
        return self.reveal(laid) if face == "up" else laid

    def at(self, target: int, slot: str) -> Card:
        """The card in a castle slot an event names, which is never empty."""
        card = self.castles[target][slot]
        assert card is not None, f"castle {target} slot {slot} must hold a card"
        return card

    def take_held(self) -> Card:
        card, self.held = self.held, None
        assert card is not None, "a card must be held"
        return card

    def apply(self, event: dict[str, Any]) -> dict[str, Card]:
        """Update the model by one event; return the physical card behind each
        of its card-valued fields (after the event)."""
        kind, seat = event["type"], event["seat"]
        if kind == "round_started":
            self.castles = [{s: None for s in SLOTS} for _ in range(self.n)]
            self.held, self.moves_this_round = None, 0
        elif kind == "drew":                                   # BC-4.2, D4, D5
            special = event["kind"] == "special"
            self.held = Card(event["card"], None, self.all if special else {seat}, public=special)
            self.holder = seat
            return {"card": self.held}
        elif kind == "special_void":                           # the drawn (public) special to the box
            return {"card": self.take_held()}
        elif kind == "placed":                                 # BC-4.3
            card = self.castles[event["target"]][event["slot"]] = self.lay(self.take_held(), event["face"])
            return {"card": card}
        elif kind == "replaced":                               # BC-4.4
            old = self.at(event["target"], event["slot"])
            new = self.castles[event["target"]][event["slot"]] = self.lay(self.take_held(), event["face"])
            if event["target"] == seat:
                self.reveal(old)                               # face up onto the discard
            else:
                old.knowers.add(seat)                          # D12: the stealer sees it
                self.held, self.holder = old, seat
            return {"card": new, "removed": old}
        elif kind == "stashed":                                # BC-4.5
            card = self.castles[seat][event["slot"]] = self.lay(self.take_held(), event["face"])
            return {"card": card}
        elif kind == "cleared":                                # BC-4.6: face up onto the discard
            old = self.at(event["target"], event["slot"])
            self.castles[event["target"]][event["slot"]] = None
            self.take_held()
            return {"card": self.reveal(old)}
        elif kind == "flipped":                                # BC-4.7: turned over in sight of all
            card = self.at(event["target"], event["slot"])
            card.face = event["face"]
            self.take_held()
            return {"card": self.reveal(card)}
        elif kind == "swapped":                                # BC-4.8: nobody sees values
            a, b = self.castles[event["target_a"]], self.castles[event["target_b"]]
            a[event["slot_a"]], b[event["slot_b"]] = b[event["slot_b"]], a[event["slot_a"]]
            self.take_held()
        elif kind == "peeked":                                 # BC-4.9: the actor sees it
            card = self.at(event["target"], event["slot"])
            card.knowers.add(seat)
            self.take_held()
            return {"card": card}
        elif kind == "round_ended":                            # BC-5.7: all castles revealed
            for castle in self.castles:
                for shown in castle.values():
                    if shown is not None:
                        self.reveal(shown)
            self.held = None
        elif kind == "match_ended":
            self.finished = True
        return {}

    def castle_values(self) -> list[list[str | None]]:
        return [[c.value if c is not None else None for c in castle.values()] for castle in self.castles]


# --------------------------------------------------------------------------
# Section 10 invariants
# --------------------------------------------------------------------------
def check_invariants(view: dict, options: dict, n: int, model: Model) -> None:
    """BC-10.1 … BC-10.5 on the admin view."""
    board, players = view["board"], view["players"]
    castles = [[p["castle"][s] for s in SLOTS] for p in players]
    held = board["held"]
    in_castles = [c["card"] for castle in castles for c in castle if c]
    everything = board["draw_pile"] + board["discard"] + board["box"] + in_castles + ([held["card"]] if held else [])
    assert Counter(everything) == Counter(GAME.canonical_deck(options)), "BC-10.1 card multiset"
    assert not SPECIALS & set(in_castles + board["discard"]), "BC-10.1 specials only in pile, box, held"
    assert all(c in SPECIALS for c in board["box"]), "BC-10.1 box holds specials"
    assert len(board["draw_pile"]) == board["draw_count"]
    for owner, p in enumerate(players):
        c = p["castle"]
        for top, (left, right) in SUPPORTS.items():
            assert c[top] is None or (c[left] and c[right]), "BC-10.2 top slot on two supports"
        assert p["cards"] == sum(1 for s in SLOTS if c[s]) <= 5
        assert p["face_up"] == sum(1 for s in SLOTS if c[s] and c[s]["face"] == "up")
        if p["cards"] == 5 and view["status"] != FINISHED:
            assert board["finisher"] is not None and owner not in board["final_turns"], "BC-10.2 owner completed"
            assert owner != board["turn_seat"], "BC-10.2 never full on its own turn"
    columns = [sum(r[s] for r in board["round_scores"]) for s in range(n)]
    assert view["scores"] == columns, "BC-10.3 scores are the column sums of round_scores"
    assert view["round"] <= view["rounds"] == options["rounds"]
    assert board["turns"] <= options["max_turns"] + n - 1, "BC-10.3 turns bound"
    assert len(in_castles) <= 5 * n and len(in_castles) <= 30, "BC-10.4"
    numbers_free = sum(1 for c in board["draw_pile"] + board["discard"] if c not in SPECIALS)
    if held and held["kind"] == "number":
        numbers_free += 1
    assert numbers_free >= 22, "BC-10.4 a draw always succeeds"
    specials = 28 if options["with_biberbande"] else 14
    assert model.moves_this_round <= 2 * (options["max_turns"] + n - 1) + specials, "BC-10.5"
    phase = view["phase"]
    if view["status"] == FINISHED:
        assert phase == "finished" and view["to_act"] == [] and held is None and view["result"]
        assert view["result"]["scores"] == view["scores"]
    else:
        assert view["to_act"] == [board["turn_seat"]], "BC-10.3 exactly one seat acts"
        expected_kind = {"place": "number", "stash": "removed", "special": "special"}[phase]
        assert held and held["kind"] == expected_kind and held["seat"] == board["turn_seat"]
        assert view["result"] is None


# --------------------------------------------------------------------------
# Leak property: every field of every view and event, for every viewer, is
# either public by the rules (BC-5.1, BC-5.7, BC-7, BC-8) or a card value the
# model says the viewer has seen; anything else must be null.
# --------------------------------------------------------------------------
VIEW_KEYS = {"status", "round", "rounds", "phase", "to_act", "players", "board", "scores", "result"}
PLAYER_KEYS = {"seat", "name", "cards", "face_up", "castle"}
SLOT_KEYS = {"face", "card", "protected", "known"}          # card, known: judged by the model
BOARD_KEYS = {"draw_count", "discard", "box", "start_seat", "turn_seat", "turns", "max_turns", "finisher",
              "final_turns", "held", "round_scores", "last_round"}          # draw_pile: admin only (BC-5.2)
HELD_KEYS = {"seat", "kind", "card", "known", "from"}      # card, known: judged by the model

#: BC-8 fields that carry no hidden value (layout, faces, flow; BC-5.1), and
#: the round-end reveal (BC-5.7).  Card values are judged by the model; any
#: other field (or any field of a type not listed here) must be null.
PUBLIC_EVENT_FIELDS = {
    "round_started": {"round", "start_seat"},
    "drew": {"kind"},
    "special_void": set(),
    "reshuffled": {"count"},
    "placed": {"target", "slot", "face"},
    "replaced": {"target", "slot", "face", "removed_face"},
    "stashed": {"slot", "face", "removed_face"},
    "cleared": {"target", "slot", "face"},
    "flipped": {"target", "slot", "face"},
    "swapped": {"target_a", "slot_a", "target_b", "slot_b"},
    "peeked": {"target", "slot"},
    "castle_completed": {"final_turns"},
    "round_ended": {"round", "reason", "finisher", "castles", "values", "bonus", "penalty", "scores",
                    "five_of_a_kind", "totals"},
    "match_ended": {"reason", "result"},
}


def diff_paths(mine: Any, admin: Any, path: tuple = ()) -> list[tuple[tuple, Any, Any]]:
    """Leaves where two views differ; the structures must be equal."""
    if isinstance(admin, dict):
        assert isinstance(mine, dict) and mine.keys() == admin.keys(), f"structure differs at {path}"
        return [d for k in admin for d in diff_paths(mine[k], admin[k], path + (k,))]
    if isinstance(admin, list):
        assert isinstance(mine, list) and len(mine) == len(admin), f"structure differs at {path}"
        return [d for i, (m, a) in enumerate(zip(mine, admin)) for d in diff_paths(m, a, path + (i,))]
    return [] if type(mine) is type(admin) and mine == admin else [(path, mine, admin)]


def strip_known(view: dict) -> tuple[dict, dict[tuple, str]]:
    """The view without ``known`` entries, and those entries by path."""
    view = clone(view)
    known: dict[tuple, str] = {}
    for p in view["players"]:
        for slot, entry in p["castle"].items():
            if entry and "known" in entry:
                known[("castle", p["seat"], slot)] = entry.pop("known")
    held = view["board"]["held"]
    if held and "known" in held:
        known[("held",)] = held.pop("known")
    return view, known


def check_view_keys(view: dict, viewer: Viewer) -> None:
    """Only fields the rules make public, or card fields judged below, are in the view."""
    assert view.keys() == VIEW_KEYS, f"{viewer}: view keys {sorted(view)}"
    for p in view["players"]:
        assert p.keys() == PLAYER_KEYS and list(p["castle"]) == list(SLOTS), f"{viewer}: player {sorted(p)}"
        assert all(e is None or e.keys() <= SLOT_KEYS for e in p["castle"].values()), f"{viewer}: castle"
    board = view["board"]
    want = BOARD_KEYS | ({"draw_pile"} if viewer.is_admin else set())
    assert board.keys() == want, f"{viewer}: board keys {sorted(board)}"
    assert board["held"] is None or board["held"].keys() <= HELD_KEYS, f"{viewer}: held keys"


def check_view_leaks(state: BiberClanState, admin: dict, viewer: Viewer, model: Model, recall: str) -> None:
    """BC-5, BC-7: the viewer's view equals ``admin``'s (the admin view) except
    hidden values (null for the viewer); every card value shown is one the
    viewer has seen (model), face-down castle cards only once finished
    (BC-5.4, BC-5.7)."""
    view = GAME.view(state, viewer)
    check_view_keys(view, viewer)
    if viewer.is_admin:
        assert view == admin and strip_known(admin)[1] == {}, "admin sees values, never known"
        return
    admin = {**admin, "board": {k: v for k, v in admin["board"].items() if k != "draw_pile"}}
    mine, known = strip_known(view)
    for path, value, _ in diff_paths(mine, admin):
        assert value is None, f"{viewer}: differs from admin at {path} with a non-null value"
        assert path[-1] == "card" and (path[:1] == ("players",) or path[:2] == ("board", "held")), path
    for p in mine["players"]:
        for slot, entry in p["castle"].items():
            card = model.castles[p["seat"]][slot]
            assert (entry is None) == (card is None)
            if entry is None:
                continue
            assert entry["face"] == card.face, f"{viewer}: face at {p['seat']}/{slot}"
            if entry["card"] is not None:
                assert entry["card"] == card.value and card.known_by(viewer), \
                    f"{viewer} sees {p['seat']}/{slot} it has not seen (BC-5.4, BC-5.5)"
                assert entry["face"] == "up" or model.finished, f"{viewer} sees a face-down card while active (BC-5.4)"
            hidden = entry["card"] is None
            want = hidden and recall == "perfect" and viewer.role == "seat" and viewer.seat in card.knowers
            assert known.get(("castle", p["seat"], slot)) == (card.value if want else None), \
                f"{viewer}: known at {p['seat']}/{slot} (BC-5.5)"
    held = mine["board"]["held"]
    assert (held is None) == (model.held is None), f"{viewer}: held"
    if held is not None:
        card = model.held
        assert held["seat"] == model.holder and card is not None
        if held["card"] is not None:
            assert held["card"] == card.value and card.known_by(viewer), f"{viewer} sees a held card unseen"
            assert card.public or viewer.is_seat(model.holder), f"{viewer} sees a private held card (BC-5.3)"
        want = held["card"] is None and recall == "perfect" and viewer.role == "seat" and viewer.seat in card.knowers
        assert known.get(("held",)) == (card.value if want else None), f"{viewer}: held known (BC-5.5)"


def is_null(value: Any) -> bool:
    """A hidden value: null, or a list of nulls."""
    return value is None or (isinstance(value, list) and all(v is None for v in value))


def check_event_leaks(event: dict, cards: dict[str, Card], model: Model, viewer: Viewer) -> None:
    """BC-5.6, BC-8: every field of the redacted event is public by the rules,
    or a card value the viewer has seen (model, after the event), or null."""
    red = GAME.redact_event(event, viewer)
    if viewer.is_admin:
        assert red == event, "admin sees all events"
        return
    assert red.keys() == event.keys() and red["type"] == event["type"] and red["seat"] == event["seat"]
    public = PUBLIC_EVENT_FIELDS.get(event["type"], set())
    for name, value in red.items():
        if name in ("type", "seat"):
            continue
        if name in public:
            assert value == event[name], f"{viewer}: public {event['type']}.{name} altered"
        elif name in cards:
            card = cards[name]
            assert event[name] == card.value, f"{event['type']}.{name} is not the card the model holds there"
            assert value is None or (value == card.value and card.known_by(viewer)), \
                f"{viewer} sees {event['type']}.{name} it has not seen (BC-5.6)"
        else:
            assert is_null(value), f"{viewer} sees {event['type']}.{name}, which no rule makes visible"
    if event["type"] == "round_ended":
        assert event["castles"] == model.castle_values(), "round_ended reveals the castles as they are"


def scrambled(state: BiberClanState) -> BiberClanState:
    """The state with every hidden number replaced (BC-5.8: legal moves must not change)."""
    out = clone(state)
    for castle in out["castles"]:
        for card in castle:
            if card and card["face"] == "down":
                card["card"] = "0" if card["card"] != "0" else "1"
    if out["held"] and out["held"]["kind"] != "special":
        out["held"]["card"] = "0" if out["held"]["card"] != "0" else "1"
    return out


def check_move_leaks(state: BiberClanState, n: int) -> None:
    """BC-5.8, BC-4.13: legal moves use public information only; others get []."""
    hidden_free = scrambled(state)
    for seat in range(n):
        moves = GAME.legal_moves(state, seat)
        if seat not in GAME.to_act(state):
            assert moves == []
            continue
        assert moves and moves == GAME.legal_moves(hidden_free, seat), "legal moves depend on hidden values"
        for move in moves:
            assert set(move) <= MOVE_KEYS
            assert all(isinstance(v, int) or v in PUBLIC_MOVE_VALUES for v in move.values())


# --------------------------------------------------------------------------
# The per-step checker
# --------------------------------------------------------------------------
class Checker:
    """Called by play_out after every step."""

    def __init__(self, n: int, options: dict[str, Any]):
        self.n = n
        self.model = Model(n)
        self.options = options
        self.biggest = 0

    def __call__(self, step: Step[BiberClanState]) -> None:
        state = step.after
        snapshot = orjson.dumps(state)
        self.biggest = max(self.biggest, len(snapshot))
        assert len(snapshot) <= SNAPSHOT_LIMIT, f"snapshot {len(snapshot)} bytes"
        if step.move is not None:
            assert step.seat is not None  # a step with a move names its mover
            again, again_events = GAME.play(orjson.loads(orjson.dumps(step.before)), step.seat, step.move)
            assert orjson.dumps(again) == snapshot and again_events == step.events, "determinism / round trip"
            self.model.moves_this_round += 1
        everyone = viewers(self.n)
        for event in step.events:
            cards = self.model.apply(event)
            for viewer in everyone:
                check_event_leaks(event, cards, self.model, viewer)
        assert orjson.loads(snapshot) == state
        admin = GAME.view(state, ADMIN_VIEWER)
        check_invariants(admin, self.options, self.n, self.model)
        for viewer in everyone:
            check_view_leaks(state, admin, viewer, self.model, state["recall"])
        check_move_leaks(state, self.n)


class ChurnRng(random.Random):
    """A random policy that mostly replaces a card of the actor's own castle
    (the old card goes to the discard), so rounds run long enough for
    reshuffles (BC-4.10) and the ``max_turns`` end (D18)."""

    seat: int | None = None

    def choice(self, seq):
        if seq and isinstance(seq[0], int):                # play_out picks the seat first
            self.seat = super().choice(seq)
            return self.seat
        own = [m for m in seq if m["type"] == "replace" and m["target"] == self.seat]
        return super().choice(own if own and self.random() < 0.9 else seq)


def run(n: int, seed: int, options: dict, churn: bool = False) -> tuple[Playout[BiberClanState], Checker]:
    _, _, resolved = GAME.create([f"p{i}" for i in range(n)], seed, options)
    checker = Checker(n, resolved)
    rng = (ChurnRng if churn else random.Random)(seed ^ 0x5EED)
    out = play_out(GAME, n, seed, options, rng=rng, check=checker)
    return out, checker


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------
OPTIONS = st.fixed_dictionaries({}, optional={
    "rounds": st.integers(1, 3),
    "max_turns": st.sampled_from([1, 2, 7, 40]),
    "recall": st.sampled_from(["perfect", "none"]),
    "first_seat": st.integers(0, 1),
})


@settings(max_examples=examples(20), deadline=None)
@given(n=st.integers(2, 6), with_biberbande=st.booleans(), seed=st.integers(0, SEED_MAX), options=OPTIONS,
       churn=st.booleans())
def test_random_play_invariants_and_leaks(n, with_biberbande, seed, options, churn):
    """BC-4, BC-5, BC-6, BC-10: random legal play to the end; every step is
    checked (invariants, determinism, round trip, snapshot size, leaks)."""
    out, checker = run(n, seed, {**options, "with_biberbande": with_biberbande}, churn)
    final = out.final
    assert final["status"] == FINISHED
    result, last_round = final["result"], final["last_round"]
    assert result is not None and last_round is not None  # set when the last round ended
    five = last_round["five_of_a_kind"]
    assert result["winners"] == result["ranking"][0]
    if five:
        assert result["ranking"][0] == five                                   # BC-6.7, D22
    assert sorted(s for group in result["ranking"] for s in group) == list(range(n))
    assert len(out.steps) - 1 <= final["rounds"] * (2 * (final["max_turns"] + n - 1) + (28 if with_biberbande else 14))


@settings(max_examples=examples(6), deadline=None)
@given(n=st.integers(2, 6), seed=st.integers(0, SEED_MAX))
def test_default_options_match_is_replayable(n, seed):
    """Determinism with default options (5 rounds, 200 turns): replaying the
    recorded moves gives byte-identical state."""
    from tests.playout import replay
    out = play_out(GAME, n, seed, {}, rng=random.Random(seed))
    assert orjson.dumps(replay(GAME, out)) == orjson.dumps(out.final)
    assert all(len(orjson.dumps(s.after)) <= SNAPSHOT_LIMIT for s in out.steps)


def test_snapshot_limit_with_stacked_decks():
    """Snapshot ≤ 4 KB even with ten stacked 120-card decks and six players."""
    deck = GAME.canonical_deck({"with_biberbande": True})
    options = {"with_biberbande": True, "rounds": 10, "decks": [deck] * 10, "max_turns": 30}
    out = play_out(GAME, 6, 3, options, rng=random.Random(3))
    assert max(len(orjson.dumps(s.after)) for s in out.steps) <= SNAPSHOT_LIMIT
