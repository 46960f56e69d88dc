"""Mein Lieber Biber properties under random legal play (MLB-10, MLB-5).

Every match is played to its end with :func:`tests.playout.play_out`; after
every move the invariants of spec section 10 are checked on the admin view,
and the leak property is checked for every viewer and every field of every
event and view against an independent model of what each viewer knows
(:class:`Knowledge`), rebuilt from the admin events and the rules alone.
"""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core import ACTIVE, ADMIN_VIEWER, FINISHED, SEAT, SEED_MAX, Viewer
from engine.mein_lieber_biber import CARDS, COLOURS, RAFT, MeinLieberBiber, MeinLieberBiberState
from tests.conftest import examples
from tests.playout import Step, play_out, replay, snapshot_bytes, viewers

GAME = MeinLieberBiber()
CANON = {card: i for i, card in enumerate(CARDS)}
STICKS = 60
ROUND_BOUND, LAID_BOUND, TOP_UP_BOUND = 186, 48, 42  # MLB-10.5

SETTINGS = settings(max_examples=examples(20), deadline=None)


@st.composite
def matches(draw) -> tuple[int, int, dict[str, Any]]:
    """Player count, seed and options: default or low thresholds (to see tipping), 1..4 rounds,
    sometimes stacked decks and a first seat."""
    n = draw(st.integers(2, 5))
    seed = draw(st.integers(0, SEED_MAX))
    options: dict[str, Any] = {"rounds": draw(st.integers(1, 4))}
    options["tip_threshold"] = draw(st.sampled_from([2700, 2700, 1500, 800, 6000]))
    options["first_seat"] = draw(st.integers(0, n - 1))
    if draw(st.booleans()):
        rng = random.Random(seed)
        options["decks"] = [rng.sample(CARDS, len(CARDS))
                            for _ in range(draw(st.integers(1, options["rounds"])))]
    return n, seed, options


# --------------------------------------------------------------------------
# Independent model of what each viewer knows, fed with the admin events only.
# --------------------------------------------------------------------------
class Knowledge:
    """Where the cards are and who knows them, from the (unredacted) events and the rules.

    The cards move as MLB-8.1 says: dealt and drawn cards (top-ups, draws, card
    rewards, the new card of an exchange) go into a hand; played, exchanged and
    discarded cards go face up onto a discard pile; a new round gathers and
    redeals them all.  What a viewer knows follows from where a card lies, not
    from any field name: a seat knows the cards in its own hand (MLB-5.1),
    everyone knows the face-up cards (MLB-5.3), nobody but the admin knows the
    face-down piles (MLB-5.2), and a card a seat has seen stays in its hand or
    face up until the cards are gathered (MLB-5.5), so nothing else is known.
    An event type the model does not know moves no card.
    """

    def __init__(self, n: int):
        self.hands: list[Counter] = [Counter() for _ in range(n)]
        self.face_up: set[str] = set()

    def apply(self, event: dict[str, Any]) -> None:
        kind, seat = event["type"], event["seat"]  # every event has a seat (None for the table)
        if kind == "round_started":
            self.hands = [Counter() for _ in self.hands]
            self.face_up = set()
        elif kind == "dealt":
            self.hands[seat] = Counter(event["cards"])
        elif kind == "drew" or (kind == "rewarded" and event["take"] == "card"):
            self.hands[seat][event["card"]] += 1
        elif kind in ("played", "discarded"):
            self._lay_down(seat, event["card"])
        elif kind == "exchanged":
            self._lay_down(seat, event["card"])
            self.hands[seat][event["drawn"]] += 1

    def _lay_down(self, seat: int, card: str) -> None:
        assert self.hands[seat][card] == 1, f"seat {seat} laid down {card} it does not hold"
        del self.hands[seat][card]
        self.face_up.add(card)

    def holds(self, seat: int | None, card: str) -> bool:
        return seat is not None and self.hands[seat][card] == 1

    def knows(self, viewer: Viewer, card: str) -> bool:
        """May ``viewer`` know which card this is (MLB-5.1..5.5)?"""
        return viewer.is_admin or card in self.face_up or (viewer.role == SEAT and self.holds(viewer.seat, card))


# --------------------------------------------------------------------------
# Invariants (MLB-10).
# --------------------------------------------------------------------------
def check_invariants(view: dict[str, Any], state: MeinLieberBiberState, threshold: int) -> None:
    players, board = view["players"], view["board"]
    hands = [p["hand"] for p in players]
    # MLB-10.1: hands, discards and piles hold the 48 cards, each once; hands sorted (MLB-1.2).
    every = [c for h in hands for c in h] + [c for p in players for c in p["discards"]] \
        + [c for pile in board["piles"] for c in pile]
    assert sorted(every, key=CANON.__getitem__) == list(CARDS)
    assert all(h == sorted(h, key=CANON.__getitem__) for h in hands)
    assert [p["hand_count"] for p in players] == [len(h) for h in hands]
    # MLB-10.2: stick conservation.
    sticks = [p["sticks"] for p in players]
    assert board["supply"] + sum(sticks) == STICKS and min(sticks + [board["supply"]]) >= 0
    assert view["scores"] == sticks
    # MLB-10.3: positions, one beaver per ring, load recomputed from the ring table.
    pos = [board["beavers"][c] for c in COLOURS]
    assert list(board["beavers"]) == list(COLOURS) and all(0 <= p <= 31 for p in pos)
    rings = [p for p in pos if 1 <= p <= 30]
    assert len(rings) == len(set(rings))
    assert board["load"] == [sum(RAFT[p][1] for p in rings), sum(RAFT[p][2] for p in rings)]
    assert board["tip_threshold"] == threshold
    active = view["status"] == ACTIVE
    assert active == (state["status"] == ACTIVE)
    if active:
        assert board["supply"] >= 1
        # The last beaver reaching the dam earns its reward before raft_empty ends the round
        # (MLB-4.4c/d, D13): MLB-10.3 holds except in that pending reward.
        assert any(p <= 30 for p in pos) or view["phase"] == "reward"
        lx, ly = board["load"]
        assert lx * lx + ly * ly <= threshold * threshold
        # MLB-10.4: every hand non-empty, except the mover's in phase reward.
        (mover,) = view["to_act"]
        assert all(h or (s == mover and view["phase"] == "reward") for s, h in enumerate(hands))
        assert view["phase"] in ("play", "exchange", "reward", "draw")
        assert view["result"] is None
    else:
        assert view["phase"] == "finished" and view["to_act"] == []
        result = view["result"]
        assert result["scores"] == sticks and result["winners"] == result["ranking"][0]
        assert [s for g in result["ranking"] for s in g] == sorted(
            range(len(players)), key=lambda s: -sticks[s])


class RoundCounter:
    """MLB-10.5: move bounds per round."""

    def __init__(self):
        self.moves = self.laid = self.top_ups = 0

    def count(self, step: Step[MeinLieberBiberState]) -> None:
        kinds = [e["type"] for e in step.events]
        self.moves += 1
        self.laid += sum(k in ("played", "exchanged", "discarded") for k in kinds)
        self.top_ups += sum(e["type"] == "drew" and e["reason"] == "top_up" for e in step.events)
        assert self.moves <= ROUND_BOUND and self.laid <= LAID_BOUND and self.top_ups <= TOP_UP_BOUND
        if "round_ended" in kinds:
            self.moves = self.laid = self.top_ups = 0


# --------------------------------------------------------------------------
# Leak property (MLB-5): every field of every event and view, for every viewer.
# --------------------------------------------------------------------------
def check_seen(seen: Any, full: Any, viewer: Viewer, knowledge: Knowledge, path: tuple = ()) -> None:
    """``seen`` (what ``viewer`` got) against ``full`` (the admin's): the same layout
    (keys in order, list lengths: counts are public); a card id exactly where the
    model says the viewer may know that card, ``null`` elsewhere; every other value
    unchanged (MLB-5.3: positions, sticks, supply, piles' sizes are public)."""
    if isinstance(full, dict):
        assert isinstance(seen, dict) and list(seen) == list(full), (viewer, path, seen)
        for key in full:
            check_seen(seen[key], full[key], viewer, knowledge, path + (key,))
    elif isinstance(full, list):
        assert isinstance(seen, list) and len(seen) == len(full), (viewer, path, seen)
        for i, (a, b) in enumerate(zip(seen, full)):
            check_seen(a, b, viewer, knowledge, path + (i,))
    elif isinstance(full, str) and full in CANON:
        allowed = full if knowledge.knows(viewer, full) else None
        assert seen == allowed, f"{viewer} sees {seen!r} at {path}; the model allows {allowed!r}"
    else:
        assert seen == full and type(seen) is type(full), f"{viewer}: public {path} is {seen!r}, not {full!r}"


def check_legal_moves_leak(state: MeinLieberBiberState, viewer: Viewer, knowledge: Knowledge) -> None:
    """MLB-5.4: legal moves only to their seat; the cards named are the seat's own."""
    if viewer.role != SEAT:
        return
    seat = viewer.seat
    assert seat is not None  # a seat viewer names its seat
    moves = GAME.legal_moves(state, seat)
    if seat not in GAME.to_act(state):
        assert moves == []
    listed: list[Mapping[str, Any]] = list(moves)
    for move in listed:
        if "card" in move:
            assert knowledge.holds(seat, move["card"]), move


def checker(n: int, options: dict[str, Any]) -> tuple[Callable[[Step[MeinLieberBiberState]], None], list[int]]:
    """The per-step check: invariants, bounds, leaks, snapshot size and round trip."""
    knowledge = Knowledge(n)
    rounds = RoundCounter()
    threshold = options.get("tip_threshold", 2700)
    others = [v for v in viewers(n) if not v.is_admin]  # the admin view is the reference
    biggest = [0]

    def check(step: Step[MeinLieberBiberState]) -> None:
        state = step.after
        admin = GAME.view(state, ADMIN_VIEWER)
        check_invariants(admin, state, threshold)
        if step.move is not None:
            rounds.count(step)
        redacted = {v: GAME.redact_events(step.events, v) for v in others}
        for i, event in enumerate(step.events):
            knowledge.apply(event)
            for v in others:
                check_seen(redacted[v][i], event, v, knowledge, (i, event["type"]))
        # The model follows every card: it agrees with the admin view.
        assert [Counter(p["hand"]) for p in admin["players"]] == knowledge.hands
        assert {c for p in admin["players"] for c in p["discards"]} == knowledge.face_up
        for v in others:
            check_seen(GAME.view(state, v), admin, v, knowledge)
            check_legal_moves_leak(state, v, knowledge)
        raw = snapshot_bytes(state)
        biggest[0] = max(biggest[0], len(raw))
        assert len(raw) <= 4096
        assert orjson.loads(raw) == state

    return check, biggest


# --------------------------------------------------------------------------
# Properties.
# --------------------------------------------------------------------------
@SETTINGS
@given(matches())
def test_random_play_keeps_invariants_and_hides_information(match):
    """MLB-10.1..10.5, MLB-5.1..5.5, MLB-6.3: random legal play ends; all checks every move."""
    n, seed, options = match
    check, _ = checker(n, options)
    out = play_out(GAME, n, seed, options, rng=random.Random(seed ^ 0x5EED), check=check)
    final = out.final
    assert final["status"] == FINISHED
    ended = [e for s in out.steps for e in s.events if e["type"] == "round_ended"]
    assert ended[-1]["reason"] == "supply_exhausted" or len(ended) == options["rounds"]
    assert len(out.steps) - 1 <= ROUND_BOUND * options["rounds"]


@SETTINGS
@given(matches())
def test_determinism_and_snapshot_round_trip(match):
    """Same seed, options and moves give byte-identical states (MLB-3.1, D18); a state
    loaded from its snapshot plays on identically."""
    n, seed, options = match
    out = play_out(GAME, n, seed, options, rng=random.Random(seed))
    again = play_out(GAME, n, seed, options, rng=random.Random(seed))
    assert [snapshot_bytes(s.after) for s in out.steps] == [snapshot_bytes(s.after) for s in again.steps]
    assert snapshot_bytes(replay(GAME, out)) == snapshot_bytes(out.final)
    state, _, _ = GAME.create(out.names, seed, options)
    for seat, move in out.moves:
        loaded = orjson.loads(snapshot_bytes(state))
        assert GAME.legal_moves(loaded, seat) == GAME.legal_moves(state, seat)
        state, events = GAME.play(loaded, seat, move)
    assert snapshot_bytes(state) == snapshot_bytes(out.final)


def test_snapshot_size_worst_case():
    """Snapshot ≤ 4096 bytes at every step with 5 players, 10 rounds and 10 stacked decks
    (three seeds; one under ``--fast``, :func:`tests.conftest.examples`)."""
    for seed in range(examples(3)):
        rng = random.Random(seed)
        options = {"rounds": 10, "decks": [rng.sample(CARDS, 48) for _ in range(10)]}
        check, biggest = checker(5, options)
        play_out(GAME, 5, seed, options, check=check)
        assert biggest[0] <= 4096
