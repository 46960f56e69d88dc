"""Property tests of 13 Beavers: random legal play to the end, 2–6 players, both boards.

After every move: the invariants of section 10 (TB-10.1 – TB-10.4), event shapes
(TB-8.1), purity, snapshot size, and a LEAK oracle.  The oracle is this file's
own model of what each viewer knows, built from the admin events and the rules
(TB-5, TB-8.1), never from the engine's redaction: every field of every event a
viewer receives must be the admin's value where the model says the viewer
learns it, and null (one null per list item) everywhere else, and every field
of its view must be what the model predicts.  A field the rules give no
meaning to is justified for nobody but the admin.  Hidden parts are also
checked side by side with the admin view, and legal moves with this file's own
TB-4.2.  An armed Vision that was not needed must leave no trace for anyone
but its seat (TB-5.4).
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Any, TypedDict

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core import ADMIN_VIEWER, FINISHED, SEED_MAX, Viewer
from engine.thirteen_beavers import ThirteenBeavers, ThirteenBeaversState
from tests.conftest import examples
from tests.playout import Step, play_out, replay, viewers

G = ThirteenBeavers()
PROPS = settings(max_examples=examples(25), deadline=None)
SNAPSHOT_LIMIT = 4096

DECK = Counter(str(v) for v in range(1, 14) for _ in range(4))
STINKY = "stinky"
FISH = ["turbo"] * 3 + ["vision"] * 3 + ["stinky"] * 2
WOLVES = ["awake"] * 4 + ["asleep"]


class Board(TypedDict):
    """A board's spaces (TB-1.4 / TB-1.5 / TB-1.7): paradise, the special spaces, lava."""

    paradise: int
    avenue: int
    fish: int
    rapids: int
    wolf: int
    lava: set[int]


#: TB-1.4 / TB-1.5 / TB-1.7 transcribed from the spec.
BOARDS: dict[str, Board] = {
    "standard": {"paradise": 30, "avenue": 3, "fish": 10, "rapids": 14, "wolf": 22,
                 "lava": {6, 7, 18, 19, 20, 26, 27}},
    "short": {"paradise": 12, "avenue": 1, "fish": 3, "rapids": 7, "wolf": 8, "lava": {5, 11}},
    "balanced": {"paradise": 30, "avenue": 4, "fish": 10, "rapids": 14, "wolf": 24,
                 "lava": {6, 7, 18, 19, 20, 26, 27}},
}

#: What each event field tells (TB-8.1) and so who may learn it (TB-5): a public
#: fact (TB-5.1: positions, answers, turned cards, revealed tokens, turn state),
#: the fish a seat catches (TB-5.3) or the order of a pile (TB-5.2).
PUBLIC_FACT, CAUGHT_FISH, PILE_ORDER = "public", "caught fish", "pile order"
FACTS: dict[str, dict[str, str]] = {
    "match_started": {"first_seat": PUBLIC_FACT, "face_up": PUBLIC_FACT},
    "turn_started": {"turn": PUBLIC_FACT},
    "turbo_used": {},
    "answered": {f: PUBLIC_FACT for f in ("move", "dir", "value", "previous", "card", "outcome")},
    "vision_used": {},
    "moved": {"from": PUBLIC_FACT, "to": PUBLIC_FACT, "cause": PUBLIC_FACT},
    "dam_placed": {"space": PUBLIC_FACT, "cause": PUBLIC_FACT},
    "wolf_revealed": {"token": PUBLIC_FACT},
    "cave_opened": {"removed": PUBLIC_FACT},
    "fish_caught": {"fish": CAUGHT_FISH},
    "turn_ended": {"reason": PUBLIC_FACT},
    "reshuffled": {"face_up": PUBLIC_FACT, "draw": PILE_ORDER},
    "match_ended": {"reason": PUBLIC_FACT, "winners": PUBLIC_FACT},
}
#: TB-8.1: the fields of each event type besides ``type`` and ``seat``
EVENT_FIELDS = {kind: set(fields) for kind, fields in FACTS.items()}
ENGINE_EVENTS = {"match_started", "reshuffled", "match_ended"}


# --------------------------------------------------------------------------
# Players.
# --------------------------------------------------------------------------
class Bot(random.Random):
    """Random legal play; with ``smart`` it mostly guesses the likely direction,
    takes turbo, rapids, vision and sometimes the avenue or a dam, so matches
    reach the far spaces (wolf, rapids, Paradise)."""

    smart = False
    face = 7                                              # the face-up card, set by the checker
    on_pond = False                                       # the active beaver is on the fish space

    def choice(self, seq):
        if not self.smart or not seq or not isinstance(seq[0], dict) or self.random() < 0.2:
            return super().choice(seq)
        kinds = {m["type"] for m in seq}
        if "use_turbo" in kinds and self.random() < 0.7:
            return seq[0]
        if "dam" in kinds and self.random() < (0.9 if self.on_pond else 0.25):
            return seq[-1]
        if "avenue" in kinds and self.random() < 0.1:
            return super().choice([m for m in seq if m["type"] == "avenue"])
        kind = "rapids" if "rapids" in kinds and self.random() < 0.6 else "guess"
        way = "higher" if self.face < 7 or (self.face == 7 and self.random() < 0.5) else "lower"
        armed = self.random() < 0.7
        fits = [m for m in seq if m["type"] == kind and m["dir"] == way]
        return next((m for m in fits if m.get("vision", False) == armed), fits[0])


@st.composite
def matches(draw):
    """n, seed, options and (bot seed, smart) for one random match."""
    n = draw(st.integers(2, 6))
    board = draw(st.sampled_from(list(BOARDS)))
    options: dict[str, Any] = {"board": board, "first_seat": draw(st.integers(0, n - 1)),
                               "recall": draw(st.sampled_from(["perfect", "none"])),
                               "max_turns": draw(st.integers(1, 150 if board == "short" else 400))}
    if draw(st.booleans()):
        options["fish"] = draw(st.permutations(FISH))
    if draw(st.booleans()):
        options["wolves"] = draw(st.permutations(WOLVES))
    bot = (draw(st.integers(0, 2**32)), draw(st.booleans()))
    return n, draw(st.integers(0, SEED_MAX)), options, bot


def make_bot(seed: int, smart: bool) -> Bot:
    bot = Bot(seed)
    bot.smart = smart
    return bot


# --------------------------------------------------------------------------
# A viewer's own model of the match: the truth from the admin events, and
# what of it this viewer knows (TB-5).
# --------------------------------------------------------------------------
def hide(value: Any) -> Any:
    """How an unknown value must reach a viewer: null, one null per list item."""
    return [None] * len(value) if isinstance(value, list) else None


class Model:
    """What ``viewer`` can know: public facts, the fish it catches itself and
    the stinky fish everyone sees spent; the admin knows everything."""

    def __init__(self, viewer: Viewer, names: list[str], options: dict[str, Any], admin_board: dict):
        n = len(names)
        self.viewer, self.names, self.options = viewer, names, options
        self.spaces = admin_board["spaces"]               # TB-1 layout, checked by the rules tests
        self.face_up: str | None = None
        self.discard: list[str] = []
        #: held fish per seat in catch order: (fish id, does this viewer know it)
        self.held: list[list[tuple[str, bool]]] = [[] for _ in range(n)]
        self.beaver, self.dam = [0] * n, [0] * n
        self.used_fish: list[str] = []
        self.wolf_out: list[str] = []
        self.pond, self.cave = 8, 5
        self.turn, self.active, self.answers, self.turbo = 0, None, 0, False
        self.status, self.phase = "active", "play"
        self.result: dict[str, Any] | None = None

    @property
    def fish(self) -> list[list[str | None]]:
        """The ``fish`` of each seat as this viewer must see it (TB-5.3)."""
        return [[fish if known else None for fish, known in held] for held in self.held]

    def learns_catch(self, seat: int, fish: str) -> bool:
        """TB-5.3: the catcher learns its fish; a stinky fish is spent at once,
        in public (TB-4.12(a)), so everyone learns it."""
        return self.viewer.is_admin or self.viewer.seat == seat or fish == STINKY

    def justified(self, event: dict[str, Any], name: str) -> bool:
        """May this viewer learn field ``name`` of ``event``?  A field the rules
        give no meaning to tells the admin only."""
        fact = FACTS.get(event["type"], {}).get(name)
        if self.viewer.is_admin or fact == PUBLIC_FACT:
            return True
        if fact == CAUGHT_FISH:
            return self.learns_catch(event["seat"], event["fish"])
        return False                                      # PILE_ORDER (TB-5.2) or unknown

    def expected_event(self, event: dict[str, Any]) -> dict[str, Any]:
        """``event`` (an admin event) as this viewer must receive it."""
        return {name: value if name in ("type", "seat") or self.justified(event, name) else hide(value)
                for name, value in event.items()}

    def spend(self, seat: int, fish: str) -> None:
        """TB-4.4, TB-4.6: the first held ``fish`` goes to the public ``used_fish``."""
        held = self.held[seat]
        del held[next(i for i, (f, _) in enumerate(held) if f == fish)]
        self.used_fish.append(fish)

    def feed(self, e: dict[str, Any]) -> None:
        """Follow the truth through one admin event."""
        kind, seat = e["type"], e["seat"]
        if kind == "match_started":
            self.face_up = e["face_up"]
        elif kind == "turn_started":
            self.turn, self.active, self.answers, self.turbo = e["turn"], seat, 0, False
        elif kind == "turbo_used":
            self.turbo = True
            self.spend(seat, "turbo")
        elif kind == "vision_used":
            self.spend(seat, "vision")
        elif kind == "answered":
            assert e["previous"] == self.face_up
            self.discard.append(e["previous"])
            self.face_up = e["card"]
            self.answers += 1
        elif kind == "reshuffled":
            assert e["face_up"] == self.face_up and len(e["draw"]) == 51
            assert Counter([*e["draw"], e["face_up"]]) == DECK
            self.discard = []
        elif kind == "moved":
            assert self.beaver[seat] == e["from"] != e["to"]
            self.beaver[seat] = e["to"]
        elif kind == "dam_placed":
            self.dam[seat] = e["space"]
        elif kind == "wolf_revealed":
            self.wolf_out.append(e["token"])
            self.cave -= 1
        elif kind == "cave_opened":
            self.wolf_out += e["removed"]
            self.cave -= len(e["removed"])
        elif kind == "fish_caught":
            self.pond -= 1
            if e["fish"] == STINKY:
                self.used_fish.append(e["fish"])
            else:
                self.held[seat].append((e["fish"], self.learns_catch(seat, e["fish"])))
        elif kind == "match_ended":
            self.status, self.phase, self.active = FINISHED, "over", None
            groups = [[s for s, d in enumerate(self.dam) if d == score]
                      for score in sorted(set(self.dam), reverse=True)]
            assert e["winners"] == groups[0]
            self.result = {"scores": list(self.dam), "ranking": groups, "winners": groups[0],
                           "reason": e["reason"]}

    def expected_view(self, admin_board: dict) -> dict[str, Any]:
        """TB-7 as this viewer must see it; only the admin gets real piles."""
        hidden = {k: admin_board[k] if self.viewer.is_admin else [None] * len(admin_board[k])
                  for k in ("draw", "pond", "cave")}
        assert len(hidden["draw"]) == 51 - len(self.discard)
        assert (len(hidden["pond"]), len(hidden["cave"])) == (self.pond, self.cave)
        active = None if self.active is None else {"seat": self.active, "answers": self.answers,
                                                   "turbo": self.turbo}
        return {
            "status": self.status, "round": 1, "rounds": 1, "phase": self.phase,
            "to_act": [] if self.active is None else [self.active],
            "players": [{"seat": s, "name": name, "beaver": self.beaver[s], "dam": self.dam[s],
                         "fish": self.fish[s]} for s, name in enumerate(self.names)],
            "board": {"layout": self.options["board"], "paradise": BOARDS[self.options["board"]]["paradise"],
                      "spaces": self.spaces, "face_up": self.face_up, "discard": self.discard,
                      **hidden, "used_fish": self.used_fish, "wolf_out": self.wolf_out,
                      "cave_open": self.cave == 0, "turn": self.turn, "max_turns": self.options["max_turns"],
                      "active": active},
            "scores": self.dam, "result": self.result,
        }

    def expected_moves(self) -> list[dict[str, Any]]:
        """TB-4.2 written out again from the viewer's knowledge (own seat only)."""
        seat = self.viewer.seat
        if seat is None or seat != self.active:
            return []
        layout, space, held = BOARDS[self.options["board"]], self.beaver[seat], self.fish[seat]
        moves = [{"type": "use_turbo"}] if "turbo" in held and self.answers == 0 and not self.turbo else []
        kinds = ["guess"] + (["rapids"] if space == layout["rapids"] else [])
        for kind in kinds:
            ways = [{"type": kind, "dir": d} for d in ("higher", "lower")]
            moves += ways + ([{**m, "vision": True} for m in ways] if "vision" in held else [])
        if space == layout["avenue"]:
            moves += [{"type": "avenue", "value": str(v)} for v in range(1, 14)]
        if self.answers and space not in layout["lava"]:
            moves.append({"type": "dam"})
        return moves


# --------------------------------------------------------------------------
# The checker run after every step.
# --------------------------------------------------------------------------
class Checker:
    def __init__(self, n: int, options: dict[str, Any], bot: Bot):
        self.n, self.options, self.bot = n, options, bot
        self.models: dict[Viewer, Model] = {}
        self.snapshots: list[bytes] = []
        self.moves_this_turn = 0
        self.turn = 1
        self.max_snapshot = 0

    def __call__(self, step: Step[ThirteenBeaversState]) -> None:
        state, admin = step.after, G.view(step.after, ADMIN_VIEWER)
        snapshot = orjson.dumps(state)
        if step.before is not None:
            assert orjson.dumps(step.before) == self.snapshots[-1], "apply mutated its input"
        self.snapshots.append(snapshot)
        self.max_snapshot = max(self.max_snapshot, len(snapshot))
        assert len(snapshot) <= SNAPSHOT_LIMIT and orjson.loads(snapshot) == state
        active = admin["board"]["active"]
        self.bot.face = int(admin["board"]["face_up"])
        self.bot.on_pond = bool(active) and \
            admin["players"][active["seat"]]["beaver"] == BOARDS[self.options["board"]]["fish"]
        names = [p["name"] for p in admin["players"]]
        for viewer in viewers(self.n):
            model = self.models.setdefault(viewer, Model(viewer, names, self.options, admin["board"]))
            check_viewer(step, viewer, model, admin)
        check_events(step)
        self.check_invariants(step, admin)
        check_armed_vision(step)

    def check_invariants(self, step: Step[ThirteenBeaversState], admin: dict[str, Any]) -> None:
        """TB-10.1 – TB-10.4, TB-6.3."""
        board, players, layout = admin["board"], admin["players"], BOARDS[self.options["board"]]
        paradise = layout["paradise"]
        assert Counter([board["face_up"], *board["discard"], *board["draw"]]) == DECK
        assert len(board["draw"]) >= 1
        held = [f for p in players for f in p["fish"]]
        assert Counter(board["pond"] + held + board["used_fish"]) == Counter(FISH)
        assert "stinky" not in held
        assert Counter(board["cave"] + board["wolf_out"]) == Counter(WOLVES)
        assert board["cave_open"] == ("asleep" in board["wolf_out"]) == (board["cave"] == [])
        finished = admin["status"] == FINISHED
        active = None if finished else board["active"]["seat"]
        for p in players:
            assert 0 <= p["dam"] <= p["beaver"] <= paradise and p["dam"] not in layout["lava"]
            if p["seat"] != active:
                assert p["beaver"] == p["dam"]
        if active is not None:
            assert admin["to_act"] == [active] and G.legal_moves(step.after, active)
            assert board["cave_open"] or players[active]["beaver"] != layout["wolf"], \
                "TB-10.3: a decision on the closed wolf space"
        assert admin["scores"] == [p["dam"] for p in players]
        assert 1 <= board["turn"] <= self.options["max_turns"]
        if step.seat is not None:
            self.moves_this_turn = 1 if board["turn"] != self.turn else self.moves_this_turn + 1
            self.turn = board["turn"]
            assert self.moves_this_turn <= paradise + 2, "TB-10.4: turn too long"
        if finished:
            result = admin["result"]
            assert admin["to_act"] == [] and admin["phase"] == "over" and result["scores"] == admin["scores"]
            if result["reason"] == "paradise":
                assert result["winners"] == [s for s, d in enumerate(admin["scores"]) if d == paradise]
                assert len(result["winners"]) == 1
            else:
                assert result["reason"] == "max_turns" and board["turn"] == self.options["max_turns"]


def check_events(step: Step[ThirteenBeaversState]) -> None:
    """TB-8.1 shapes; TB-5.4: no event ever carries ``vision``."""
    for e in step.events:
        assert e["type"] in EVENT_FIELDS, f"TB-8.1 has no event {e['type']!r}"
        assert set(e) == {"type", "seat"} | EVENT_FIELDS[e["type"]], e
        assert (e["seat"] is None) == (e["type"] in ENGINE_EVENTS), e
        for i, later in enumerate(step.events):
            if later["type"] == "reshuffled":
                assert step.events[i - 1]["type"] == "answered", "TB-8.2: reshuffled follows answered"


def check_viewer(step: Step[ThirteenBeaversState], viewer: Viewer, model: Model, admin: dict[str, Any]) -> None:
    """The leak oracle for one viewer at one step: every field of every event
    and of the view is what the model says this viewer may know."""
    redacted = G.redact_events(step.events, viewer)
    assert len(redacted) == len(step.events)
    for mine, full in zip(redacted, step.events):
        expected = model.expected_event(full)
        assert mine == expected, f"{viewer} received {mine}; the rules let it see only {expected}"
        model.feed(full)
    view = G.view(step.after, viewer)
    assert view == model.expected_view(admin["board"]), f"{viewer}: view is not what the model says it may know"
    # Side by side with the admin view: only hidden parts may differ.
    for key in ("draw", "pond", "cave"):
        assert viewer.is_admin or view["board"][key] == [None] * len(admin["board"][key])
    for mine, full in zip(view["players"], admin["players"]):
        own = viewer.is_admin or viewer.seat == mine["seat"]
        assert mine["fish"] == (full["fish"] if own else [None] * len(full["fish"]))
    assert "options" not in view                          # TB-5.5
    if viewer.seat is not None:
        assert G.legal_moves(step.after, viewer.seat) == model.expected_moves()


def check_armed_vision(step: Step[ThirteenBeaversState]) -> None:
    """TB-5.4, D12: an armed Vision that was not spent leaves no trace: the plain
    move gives the same events and the same view to everyone but its seat."""
    if not (step.move and step.move.get("vision")) or any(e["type"] == "vision_used" for e in step.events):
        return
    assert step.before is not None and step.seat is not None  # a step with a move
    plain = {k: v for k, v in step.move.items() if k != "vision"}
    after, events = G.play(step.before, step.seat, plain)
    assert events == step.events
    for viewer in viewers(len(after["names"])):
        if viewer.seat != step.seat and not viewer.is_admin:
            assert G.view(after, viewer) == G.view(step.after, viewer)


# --------------------------------------------------------------------------
# Properties.
# --------------------------------------------------------------------------
@PROPS
@given(matches())
def test_random_play_keeps_invariants_and_hides_information(match):
    """TB-10, TB-5, TB-7, TB-8 at every step of random matches."""
    n, seed, options, bot_args = match
    bot = make_bot(*bot_args)
    out = play_out(G, n, seed, options, rng=bot, check=Checker(n, options, bot))
    final = out.final
    assert final["status"] == FINISHED
    assert len(out.steps) - 1 <= options["max_turns"] * (BOARDS[options["board"]]["paradise"] + 2)


@PROPS
@given(st.integers(2, 6), st.integers(0, SEED_MAX), st.integers(0, 2**32), st.permutations(FISH[:3] + FISH[6:]))
def test_held_and_armed_vision_never_reach_other_seats(n, seed, bot_seed, rest):
    """TB-5.3, TB-5.4 with many Vision catches: the short board, a pond that
    starts with the three Visions, a bot that fishes and arms its guesses."""
    options = {"board": "short", "max_turns": 150, "fish": ["vision"] * 3 + rest}
    bot = make_bot(bot_seed, True)
    checker = Checker(n, options, bot)
    out = play_out(G, n, seed, options, rng=bot, check=checker)
    assert out.final["status"] == FINISHED


@PROPS
@given(matches())
def test_determinism_and_snapshot_round_trip(match):
    """TB-3.1, TB-4.11 (every shuffle from the seed): same seed, options and
    moves → byte-identical states and events; a snapshot loaded back plays on
    identically."""
    n, seed, options, bot = match
    first = play_out(G, n, seed, options, rng=make_bot(*bot))
    twin = play_out(G, n, seed, options, rng=make_bot(*bot))
    assert [orjson.dumps(s.after) for s in first.steps] == [orjson.dumps(s.after) for s in twin.steps]
    assert [s.events for s in first.steps] == [s.events for s in twin.steps]
    assert orjson.dumps(replay(G, first)) == orjson.dumps(first.final)
    for step in first.steps[1:]:
        assert step.seat is not None and step.move is not None  # a step after the first is a move
        loaded = orjson.loads(orjson.dumps(step.before))
        after, events = G.play(loaded, step.seat, step.move)
        assert orjson.dumps(after) == orjson.dumps(step.after) and events == step.events


def test_snapshot_size_worst_case():
    """Snapshot ≤ 4 KB (TB-10 sizes: 52 cards, 8 fish, 5 tokens) with six long
    names over long matches on the standard board."""
    biggest = 0
    for seed in range(6):
        checker = _SizeOnly()
        play_out(G, 6, seed, {"board": "standard", "max_turns": 400}, rng=make_bot(seed, True), check=checker)
        biggest = max(biggest, checker.biggest)
    assert biggest <= SNAPSHOT_LIMIT


class _SizeOnly:
    biggest = 0

    def __call__(self, step: Step[ThirteenBeaversState]) -> None:
        state = {**step.after, "names": [f"a-long-player-name-{i:02d}" for i in range(6)]}
        self.biggest = max(self.biggest, len(orjson.dumps(state)))


def test_smart_play_reaches_paradise_on_both_boards():
    """TB-6.1 under all checks: unbounded matches end in Paradise."""
    for board in ("short", "standard"):
        for seed in range(3):
            bot = make_bot(seed, True)
            out = play_out(G, 2 + seed, seed, {"board": board}, rng=bot,
                           check=Checker(2 + seed, {"board": board, "max_turns": 2000}, bot))
            result = out.final["result"]
            assert result is not None and result["reason"] == "paradise"
