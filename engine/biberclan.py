"""BiberClan (``biberclan``): build a five-card beaver castle, steal and protect cards.

Each seat builds a castle of five slots (three bottom, two top) from drawn
number cards, placed face up or down in its own or another seat's castle;
unprotected cards may be replaced (stolen); drawn specials are compulsory.
A completed castle starts the final lap; the highest total after the rounds
wins, five of a kind wins at once.

Rules: ``docs/games/biberclan.md`` (rule ids ``BC-n.m``, decisions ``Dn``).

BiberClanState layout (the snapshot: a plain JSON-able dict, never mutated in place):

* match: ``status``, ``result``, ``names``, ``seed``, ``rounds``,
  ``max_turns``, ``recall``, ``with_biberbande``, ``decks`` (the stacked draw
  orders of the rounds still to come, one character per card, ``CODEC``),
  ``phase``, ``scores``, ``round_scores``, ``last_round`` (the body of the
  last ``round_ended``);
* round: ``round``, ``start_seat``, ``seat`` (the seat to act), ``turns``,
  ``finisher``, ``final_turns``, ``castles``, ``discard`` (bottom→top),
  ``box``, ``held``, ``reshuffles``, ``draw`` (top first);
* ``castles[o][i]``: seat o's slot ``SLOTS[i]``, ``None`` or a castle card
  ``{"card", "face", "knowers"}``; ``knowers`` is a bit mask of the seats
  that know the card (BC-5.5);
* ``held``: ``None`` or ``{"kind", "card", "knowers", "public", "from"}``;
  ``public`` says every viewer may see the card (BC-5.3), ``from`` is the
  castle slot a stolen card came from.
"""
from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypedDict, cast

from engine import core, worlds
from engine import declaration as d
from engine.core import ACTIVE, FINISHED, CoreState, Draft, Event, Game, Option, PostedMove, Viewer

GAME_ID = "biberclan"

# --- cards (BC-1.1 … BC-1.3) ---------------------------------------------
NUMBERS = tuple(str(d) for d in range(10))
CLEAR, FLIP, SWAP, PEEK = "clear", "flip", "swap", "peek"
BASE_COUNTS = {"0": 7, "1": 6, "2": 6, "3": 6, "4": 5, "5": 5, "6": 5, "7": 4, "8": 4, "9": 4,
               CLEAR: 5, FLIP: 9}
BIBERBANDE_EXTRA = {**{d: 4 for d in NUMBERS}, SWAP: 7, PEEK: 7}
CODEC = core.CardCodec({**{d: d for d in NUMBERS}, CLEAR: "c", FLIP: "f", SWAP: "s", PEEK: "p"})
_NUMBER_SET = frozenset(NUMBERS)

# --- castle geometry (BC-1.4) --------------------------------------------
SLOTS = ("b0", "b1", "b2", "t0", "t1")
SLOT_INDEX = {name: i for i, name in enumerate(SLOTS)}
BOTTOM = (0, 1, 2)
SUPPORTS = {3: (0, 1), 4: (1, 2)}          # top slot -> the bottom slots it rests on
CASTLE_SIZE = len(SLOTS)
ALL_SLOTS = range(CASTLE_SIZE)
MAX_SEATS = 6                              # players 2–6 (BC-2.2)
UP, DOWN = "up", "down"
FACES = (UP, DOWN)

# --- held card kinds (BC-4.2, BC-7.2) --------------------------------------
KIND_NUMBER, KIND_SPECIAL, KIND_REMOVED = "number", "special", "removed"

# --- phases, moves, reasons -----------------------------------------------
PHASE_PLACE, PHASE_STASH, PHASE_SPECIAL, PHASE_FINISHED = "place", "stash", "special", "finished"
MOVE_PLACE: Final = "place"
MOVE_REPLACE: Final = "replace"
MOVE_STASH: Final = "stash"
MOVE_CLEAR: Final = "clear"
MOVE_FLIP: Final = "flip"
MOVE_SWAP: Final = "swap"
MOVE_PEEK: Final = "peek"
#: the move of a held clear or flip (BC-4.6, BC-4.7)
ONE_CARD_MOVE: dict[str, Literal["clear", "flip"]] = {CLEAR: MOVE_CLEAR, FLIP: MOVE_FLIP}
REASON_CASTLE, REASON_TURN_LIMIT = "castle", "turn_limit"
REASON_FIVE_OF_A_KIND, REASON_ROUNDS = "five_of_a_kind", "rounds"


# --- the moves as listed, one TypedDict per move shape (BC-4; DECLARATION) ----
class Place(TypedDict):
    """``place`` (BC-4.3) and ``replace`` (BC-4.4): the same parameters (one
    template lists both, :func:`_move_templates`)."""

    type: Literal["place", "replace"]
    target: int
    slot: str
    face: str


class Stash(TypedDict):
    type: Literal["stash"]
    slot: str
    face: str


class OneCard(TypedDict):
    """``clear``, ``flip`` and ``peek`` (BC-4.6, BC-4.7, BC-4.9): one card of a castle."""

    type: Literal["clear", "flip", "peek"]
    target: int
    slot: str


class Swap(TypedDict):
    type: Literal["swap"]
    target_a: int
    slot_a: str
    target_b: int
    slot_b: str


BiberClanMove = Place | Stash | OneCard | Swap


# --- the events' fields besides type and seat, one TypedDict per event type (BC-8; DECLARATION) ---
class RoundStarted(TypedDict):
    round: int
    start_seat: int


class Drew(TypedDict):
    kind: str
    card: str


class SpecialVoid(TypedDict):
    card: str


class Reshuffled(TypedDict):
    count: int


class Placed(TypedDict):
    target: int
    slot: str
    face: str
    card: str


class Replaced(TypedDict):
    target: int
    slot: str
    face: str
    card: str
    removed: str
    removed_face: str


class Stashed(TypedDict):
    slot: str
    face: str
    card: str
    removed_face: str


class Swapped(TypedDict):
    target_a: int
    slot_a: str
    target_b: int
    slot_b: str


class Peeked(TypedDict):
    target: int
    slot: str
    card: str


class CastleCompleted(TypedDict):
    final_turns: list[int]


class RoundEnded(TypedDict):
    """BC-6.1 … BC-6.3: the round's scoring, also the state's ``last_round``."""

    round: int
    reason: str
    finisher: int | None
    castles: list[list[str | None]]
    values: list[int]
    bonus: list[int]
    penalty: list[int]
    scores: list[int]
    five_of_a_kind: list[int]
    totals: list[int]


class MatchEnded(TypedDict):
    reason: str
    result: dict[str, Any]


EVENT_ROUND_STARTED = d.EventKind("round_started", RoundStarted)
EVENT_DREW = d.EventKind("drew", Drew)
EVENT_SPECIAL_VOID = d.EventKind("special_void", SpecialVoid)
EVENT_RESHUFFLED = d.EventKind("reshuffled", Reshuffled)
EVENT_PLACED = d.EventKind("placed", Placed)
EVENT_REPLACED = d.EventKind("replaced", Replaced)
EVENT_STASHED = d.EventKind("stashed", Stashed)
#: ``cleared`` and ``flipped``: the card, with its face after the move
EVENT_CLEARED = d.EventKind("cleared", Placed)
EVENT_FLIPPED = d.EventKind("flipped", Placed)
EVENT_SWAPPED = d.EventKind("swapped", Swapped)
EVENT_PEEKED = d.EventKind("peeked", Peeked)
EVENT_CASTLE_COMPLETED = d.EventKind("castle_completed", CastleCompleted)
EVENT_ROUND_ENDED = d.EventKind("round_ended", RoundEnded)
EVENT_MATCH_ENDED = d.EventKind("match_ended", MatchEnded)


# --- scoring (BC-6) --------------------------------------------------------
GROUP_BONUS = {3: 15, 4: 25}
FIVE_OF_A_KIND = 5
FINISHER_PENALTY = -10

class _CastleCard(TypedDict):
    """A card in a castle slot; ``knowers``: the seats that know it (BC-5.5)."""

    card: str
    face: str
    knowers: int


#: a castle (``None`` = empty slot)
_Castle = list[_CastleCard | None]
#: a castle's shape: per slot the face of its card or ``None`` when empty
#: (BC-1.4 and BC-4.1 depend on nothing else)
_Shape = tuple[str | None, ...]
#: the held card; ``public``: every viewer may see it (BC-5.3); ``from``: the
#: castle slot a stolen card came from (a Python keyword, hence the functional form)
_Held = TypedDict("_Held", {"kind": str, "card": str, "knowers": int, "public": bool,
                            "from": dict[str, Any] | None})


class BiberClanState(CoreState):
    """The snapshot (module docstring)."""

    names: list[str]
    seed: int
    rounds: int
    max_turns: int
    recall: str
    with_biberbande: bool
    decks: list[str]
    scores: list[int]
    round_scores: list[list[int]]
    #: the body of the last ``round_ended`` (:func:`_score_round`)
    last_round: RoundEnded | None
    round: int
    start_seat: int
    seat: int
    turns: int
    finisher: int | None
    final_turns: list[int]
    castles: list[_Castle]
    discard: list[str]
    box: list[str]
    held: _Held | None
    reshuffles: int
    draw: list[str]


# ==========================================================================
# Cards and castle geometry (BC-1, BC-4.1)
# ==========================================================================
def canonical(with_biberbande: bool) -> list[str]:
    """BC-1.2 / BC-1.3: the deck in canonical order."""
    counts = Counter(BASE_COUNTS)
    if with_biberbande:
        counts.update(BIBERBANDE_EXTRA)
    order = [*NUMBERS, CLEAR, FLIP, SWAP, PEEK]
    return [card for card in order for _ in range(counts[card])]


def _is_number(card: str) -> bool:
    """BC-1.1: a number card (else a special)."""
    return card in _NUMBER_SET


def _card_count(castle: _Castle) -> int:
    """BC-7.1 ``cards``: the filled slots of a castle."""
    return CASTLE_SIZE - castle.count(None)


def _free_in(shape: _Shape) -> tuple[int, ...]:
    """BC-1.4: empty slots; a top slot only when both slots under it are filled."""
    free = [i for i in BOTTOM if shape[i] is None]
    for top, (left, right) in SUPPORTS.items():
        if shape[top] is None and shape[left] is not None and shape[right] is not None:
            free.append(top)
    return tuple(free)


def _open_in(shape: _Shape, by_owner: bool) -> tuple[int, ...]:
    """BC-4.1: filled slots whose card is not protected against the actor.

    Protected: (a) a top card rests on it, (b) the castle is full — both bind
    the owner too (D8); (c) it is the only face-up card, against others only
    (face-down cards do not count, D7).  Judged before the action (D9).
    """
    filled = [i for i in ALL_SLOTS if shape[i] is not None]
    if not filled or len(filled) == CASTLE_SIZE:                          # (b)
        return ()
    protected = [s for top, pair in SUPPORTS.items() if shape[top] is not None for s in pair]  # (a)
    if not by_owner:                                                      # (c)
        face_up = [i for i, face in enumerate(shape) if face == UP]
        if len(face_up) == 1:
            protected.append(face_up[0])
    return tuple(i for i in filled if i not in protected)


def _with_faces(slots: tuple[int, ...]) -> tuple[tuple[str, str], ...]:
    """(slot name, face) for every slot, each face up then down (BC-4.12)."""
    return tuple((SLOTS[i], face) for i in slots for face in FACES)


#: per target seat, the moves of one type on a castle (BC-4.12 order):
#: templates never handed out, the legal moves are new copies of them
_MoveTemplates = tuple[tuple[Place, ...], ...]


def _move_templates(kind: Literal["place", "replace"], slots: tuple[int, ...]) -> _MoveTemplates:
    """Per target seat, the moves of ``kind`` on ``slots`` (:func:`_with_faces`)."""
    return tuple(tuple({"type": kind, "target": target, "slot": slot, "face": face}
                       for slot, face in _with_faces(slots)) for target in range(MAX_SEATS))


@dataclass(frozen=True, slots=True)
class _Geometry:
    """BC-1.4 and BC-4.1 for one castle shape, computed once at import
    (:data:`GEOMETRY`): the number of cards and of face-up cards (BC-7.1),
    the free and the open slots (against the owner / another seat), and the
    moves on them: per target seat the placements (BC-4.3) and replacements
    (BC-4.4, by the owner / another seat), and the stashes (BC-4.5)."""

    cards: int
    face_up: int
    free: tuple[int, ...]
    open_own: tuple[int, ...]
    open_other: tuple[int, ...]
    places: _MoveTemplates
    replaces_own: _MoveTemplates
    replaces_other: _MoveTemplates
    stashes: tuple[Stash, ...]


def _geometry(shape: _Shape) -> _Geometry:
    """BC-1.4, BC-4.1 of ``shape``."""
    free, open_own, open_other = _free_in(shape), _open_in(shape, True), _open_in(shape, False)
    return _Geometry(CASTLE_SIZE - shape.count(None), shape.count(UP), free, open_own, open_other,
                    _move_templates(MOVE_PLACE, free), _move_templates(MOVE_REPLACE, open_own),
                    _move_templates(MOVE_REPLACE, open_other),
                    tuple({"type": MOVE_STASH, "slot": slot, "face": face} for slot, face in _with_faces(free)))


#: every castle shape → its geometry
GEOMETRY: dict[_Shape, _Geometry] = {shape: _geometry(shape)
                                   for shape in itertools.product((None, *FACES), repeat=CASTLE_SIZE)}


def _geometry_of(castle: _Castle) -> _Geometry:
    """BC-1.4, BC-4.1 of a castle: the geometry of its shape (spelled out
    slot by slot: this is the hottest lookup of the legal moves)."""
    b0, b1, b2, t0, t1 = castle
    return GEOMETRY[(None if b0 is None else b0["face"], None if b1 is None else b1["face"],
                     None if b2 is None else b2["face"], None if t0 is None else t0["face"],
                     None if t1 is None else t1["face"])]


def _open_slots(castle: _Castle, by_owner: bool) -> tuple[int, ...]:
    """BC-4.1: the open slots of a castle (:func:`_open_in`)."""
    found = _geometry_of(castle)
    return found.open_own if by_owner else found.open_other


def _is_protected(castle: _Castle, i: int, by_owner: bool) -> bool:
    """BC-4.1 for one filled slot (see :func:`_open_slots`)."""
    return i not in _open_slots(castle, by_owner)


def _open_cards(state: BiberClanState, actor: int) -> list[tuple[int, int]]:
    """(target, slot) of every castle card not protected against ``actor``,
    by target then slot (BC-4.6, BC-4.12)."""
    return [(owner, i) for owner, castle in enumerate(state["castles"])
            for i in _open_slots(castle, owner == actor)]


def _castle_card(held: _Held, face: str, n: int) -> _CastleCard:
    """The held card laid into a castle with ``face``; lying face up makes it
    known to every seat (BC-5.5)."""
    return {"card": held["card"], "face": face, "knowers": core.everyone(n) if face == UP else held["knowers"]}


# ==========================================================================
# Legal moves (BC-4.3 … BC-4.9, order BC-4.12)
# ==========================================================================
#: (target seat, geometry of its castle) of the castles a move may name, by seat
_Targets = list[tuple[int, _Geometry]]


def _place_moves(state: BiberClanState, actor: int) -> list[BiberClanMove]:
    """BC-4.3 then BC-4.4: place on a free legal slot, then replace."""
    castles = [_geometry_of(castle) for castle in state["castles"]]
    targets = list(enumerate(castles))
    return _placements(targets, actor) + _replacements(targets, actor, castles[actor])


def _placements(targets: _Targets, actor: int) -> list[BiberClanMove]:
    """BC-4.3: the held number on a free slot of the actor's castle or of a
    castle with at most three cards (D10), on each of ``targets``."""
    return [move.copy() for target, castle in targets if target == actor or castle.cards <= 3
            for move in castle.places[target]]


def _replacements(targets: _Targets, actor: int, own: _Geometry) -> list[BiberClanMove]:
    """BC-4.4: the held number replaces an open card of the actor's castle
    (geometry ``own``), or of another only while the actor's castle has room
    (D13), on each of ``targets``."""
    own_has_room = bool(own.free)
    return [move.copy() for target, castle in targets if target == actor or own_has_room
            for move in (castle.replaces_own if target == actor else castle.replaces_other)[target]]


def _stash_moves(state: BiberClanState, actor: int) -> list[BiberClanMove]:
    """BC-4.5: the stolen card onto a free legal slot of the actor's castle."""
    return [move.copy() for move in _geometry_of(state["castles"][actor]).stashes]


def _special_moves(state: BiberClanState, actor: int, special: str) -> list[BiberClanMove]:
    """BC-4.6 … BC-4.9: the moves of the held special (none: it is void)."""
    targets = _open_cards(state, actor)
    if special in (CLEAR, FLIP):
        return [{"type": ONE_CARD_MOVE[special], "target": t, "slot": SLOTS[i]} for t, i in targets]
    if special == PEEK:
        castles = state["castles"]
        return [{"type": MOVE_PEEK, "target": t, "slot": SLOTS[i]} for t, i in targets
                if _card_at(castles[t], i)["face"] == DOWN]
    return [{"type": MOVE_SWAP, "target_a": ta, "slot_a": SLOTS[ia], "target_b": tb, "slot_b": SLOTS[ib]}
            for ta, ia in targets for tb, ib in targets if ta < tb]          # D15, D26


def _card_at(castle: _Castle, i: int) -> _CastleCard:
    """The card in slot ``i``, which the caller knows is filled (a legal move names one)."""
    card = castle[i]
    assert card is not None
    return card


def _held_of(state: BiberClanState) -> _Held:
    """The held card, in a phase that has one (stash, special)."""
    held = state["held"]
    assert held is not None
    return held


def _seat_moves(state: BiberClanState, seat: int) -> list[BiberClanMove]:
    """BC-4.3 … BC-4.9 for the phase, in BC-4.12 order."""
    phase = state["phase"]
    if phase == PHASE_PLACE:
        return _place_moves(state, seat)
    if phase == PHASE_STASH:
        return _stash_moves(state, seat)
    return _special_moves(state, seat, _held_of(state)["card"])


def _seat_moves_like(state: BiberClanState, seat: int, move: PostedMove) -> list[BiberClanMove]:
    """For :meth:`~engine.core.Game.play`: in phase place only the
    placements or the replacements on the castle ``move`` names (BC-4.3,
    BC-4.4; none if it names no seat), else every move."""
    kind = move.get("type")
    if state["phase"] != PHASE_PLACE or kind not in (MOVE_PLACE, MOVE_REPLACE):
        return _seat_moves(state, seat)
    castles, target = state["castles"], move.get("target")
    named = [(target, _geometry_of(castles[target]))] \
        if type(target) is int and 0 <= target < len(castles) else []
    return _placements(named, seat) if kind == MOVE_PLACE else _replacements(named, seat, _geometry_of(castles[seat]))


def _why_illegal(state: BiberClanState, seat: int, move: PostedMove, legal: list[BiberClanMove]) -> str | None:
    """The slot rule a move of a possible type breaks, or None (BC-5.8)."""
    return _why_illegal_slot(state, seat, move) if move.get("type") in {m["type"] for m in legal} else None


def _why_illegal_slot(state: BiberClanState, actor: int, move: PostedMove) -> str | None:
    """Why a move of a possible type names a slot it may not use, from
    public information only (BC-5.8)."""
    target = move.get("target", actor)
    slot = move.get("slot")
    if not isinstance(target, int) or isinstance(target, bool) or not 0 <= target < len(state["names"]) \
            or not isinstance(slot, str) or slot not in SLOT_INDEX:
        return None
    castle, i = state["castles"][target], SLOT_INDEX[slot]
    if move["type"] in (MOVE_PLACE, MOVE_STASH):
        if castle[i] is not None:
            return f"slot {slot} of seat {target} is taken; use 'replace' to exchange its card"
        if any(castle[s] is None for s in SUPPORTS.get(i, ())):
            return f"top slot {slot} needs both slots under it filled first (BC-1.4)"
        if target != actor and _card_count(castle) > 3:
            return "only the owner may place the fifth card of a castle (BC-4.3, D10)"
        return None
    if castle[i] is None:
        return f"slot {slot} of seat {target} is empty"
    if _is_protected(castle, i, target == actor):
        return f"the card in seat {target}'s slot {slot} is protected against you (BC-4.1)"
    return None


# ==========================================================================
# Scoring and round orders (BC-3.1, BC-6)
# ==========================================================================
def _castle_score(castle: _Castle) -> tuple[int, int, bool]:
    """BC-6.1: (values, bonus, five of a kind) of one castle."""
    digits = [int(c["card"]) for c in castle if c is not None]
    largest = max(Counter(digits).values(), default=0)
    return sum(digits), GROUP_BONUS.get(largest, 0), largest == FIVE_OF_A_KIND


def _score_round(state: BiberClanState, reason: str) -> RoundEnded:
    """BC-6.1 … BC-6.3: the body of ``round_ended`` (without type and seat)."""
    n, finisher = len(state["names"]), state["finisher"]
    scored = [_castle_score(c) for c in state["castles"]]
    values = [v for v, _, _ in scored]
    bonus = [b for _, b, _ in scored]
    penalty = [0] * n
    if finisher is not None:                                            # BC-6.2, D21
        best_other = max(values[s] + bonus[s] for s in range(n) if s != finisher)
        if best_other > values[finisher] + bonus[finisher]:
            penalty[finisher] = FINISHER_PENALTY
    scores = [values[s] + bonus[s] + penalty[s] for s in range(n)]
    totals = [state["scores"][s] + scores[s] for s in range(n)]
    return {"round": state["round"], "reason": reason, "finisher": finisher,
            "castles": [[c and c["card"] for c in castle] for castle in state["castles"]],
            "values": values, "bonus": bonus, "penalty": penalty, "scores": scores,
            "five_of_a_kind": [s for s in range(n) if scored[s][2]], "totals": totals}


def _round_order(state: BiberClanState, round_no: int) -> list[str]:
    """BC-3.1: the next stacked order (``deck`` or ``decks[r-1]``, consumed
    round by round), else the seeded shuffle of (seed, r)."""
    if state["decks"]:
        return CODEC.decode(state["decks"].pop(0))
    return core.round_deck(GAME_ID, state["seed"], round_no, canonical(state["with_biberbande"]), {})


# ==========================================================================
# Turn, round and match flow on the working state (BC-3.2, BC-4.2, BC-4.10,
# BC-4.11, BC-6.3 … BC-6.7)
# ==========================================================================
def _take_held(draft: Draft[BiberClanState]) -> _Held:
    """The held card leaves the hand (the caller says where it goes)."""
    held = _held_of(draft.state)
    draft.state["held"] = None
    return held


def _draw_card(draft: Draft[BiberClanState]) -> str | None:
    """Take the top card, reshuffling the discard first when the pile is empty
    (BC-4.10, D17).  ``None`` only if both are empty (unreachable, BC-10.4)."""
    state = draft.state
    if not state["draw"]:
        if not state["discard"]:
            return None
        state["reshuffles"] += 1
        key = core.reshuffle_key(GAME_ID, state["seed"], state["round"], state["reshuffles"])
        state["draw"] = core.seeded_shuffle(state["discard"], key)            # BC-3.1, D25
        state["discard"] = []
        draft.emit(EVENT_RESHUFFLED, None, count=state["reshuffles"])      # k, as reshuffle_key
    card: str = state["draw"].pop(0)
    return card


def _start_turn(draft: Draft[BiberClanState]) -> None:
    """BC-4.2: automatic draws for the seat to act until it holds a card with
    a decision; void specials go to the box (D5, D6)."""
    state = draft.state
    actor = state["seat"]
    while True:
        card = _draw_card(draft)
        if card is None:
            _end_round(draft, REASON_TURN_LIMIT)
            return
        if _is_number(card):
            draft.emit(EVENT_DREW, actor, kind=KIND_NUMBER, card=card)
            state["held"] = {"kind": KIND_NUMBER, "card": card, "knowers": core.only(actor), "public": False,
                             "from": None}
            state["phase"] = PHASE_PLACE
            return
        draft.emit(EVENT_DREW, actor, kind=KIND_SPECIAL, card=card)
        if _special_moves(state, actor, card):
            state["held"] = {"kind": KIND_SPECIAL, "card": card, "knowers": core.everyone(len(state["names"])),
                             "public": True, "from": None}
            state["phase"] = PHASE_SPECIAL
            return
        draft.emit(EVENT_SPECIAL_VOID, actor, card=card)
        state["box"].append(card)


def _finish_special(draft: Draft[BiberClanState]) -> None:
    """BC-4.10: the used special goes to the box; the actor draws again."""
    draft.state["box"].append(_take_held(draft)["card"])
    _start_turn(draft)


def _end_turn(draft: Draft[BiberClanState]) -> None:
    """BC-4.11: fifth-card rule, final lap, turn count, round end or next turn."""
    state = draft.state
    actor, n = state["seat"], len(state["names"])
    if _card_count(state["castles"][actor]) == CASTLE_SIZE and state["finisher"] is None:
        state["finisher"] = actor
        state["final_turns"] = [core.seat_after(actor, n, k) for k in range(1, n)]
        draft.emit(EVENT_CASTLE_COMPLETED, actor, final_turns=list(state["final_turns"]))
    elif actor in state["final_turns"]:
        state["final_turns"].remove(actor)
    state["turns"] += 1
    if state["finisher"] is not None and not state["final_turns"]:
        _end_round(draft, REASON_CASTLE)
    elif state["finisher"] is None and state["turns"] == state["max_turns"]:
        _end_round(draft, REASON_TURN_LIMIT)
    else:
        state["seat"] = core.seat_after(actor, n)
        _start_turn(draft)


def _end_round(draft: Draft[BiberClanState], reason: str) -> None:
    """BC-6.3 … BC-6.6: score, reveal (BC-5.7), then end the match or start
    the next round."""
    state = draft.state
    body = _score_round(state, reason)
    draft.emit(EVENT_ROUND_ENDED, None, **core.clone(body))
    state["round_scores"].append(body["scores"])
    state["scores"] = body["totals"]
    state["last_round"] = body
    state["held"] = None
    if body["five_of_a_kind"]:
        _finish_match(draft, REASON_FIVE_OF_A_KIND, body["five_of_a_kind"])
    elif state["round"] == state["rounds"]:
        _finish_match(draft, REASON_ROUNDS, [])
    else:
        start = body["finisher"] if body["finisher"] is not None \
            else core.seat_after(state["seat"], len(state["names"]))      # BC-6.6, D19
        _start_round(draft, state["round"] + 1, start)


def _finish_match(draft: Draft[BiberClanState], reason: str, five: list[int]) -> None:
    """BC-6.7: result, status and phase finished, nobody to act."""
    state = draft.state
    result = core.make_result(state["scores"], lowest_wins=False, first_group=five)
    state.update({"status": FINISHED, "phase": PHASE_FINISHED, "result": result})
    draft.emit(EVENT_MATCH_ENDED, None, reason=reason, result=core.clone(result))


def _start_round(draft: Draft[BiberClanState], round_no: int, start_seat: int) -> None:
    """BC-3.1, BC-3.2: gather all cards, take the round's draw order, empty
    castles, first automatic draw."""
    state = draft.state
    n = len(state["names"])
    state.update({
        "round": round_no, "start_seat": start_seat, "seat": start_seat, "turns": 0, "finisher": None,
        "final_turns": [], "castles": [[None] * CASTLE_SIZE for _ in range(n)], "discard": [], "box": [],
        "held": None, "reshuffles": 0, "draw": _round_order(state, round_no),
    })
    draft.emit(EVENT_ROUND_STARTED, None, round=round_no, start_seat=start_seat)
    _start_turn(draft)


# ==========================================================================
# Setup (BC-3) and move handlers (BC-4.3 … BC-4.9)
# ==========================================================================
def _setup(draft: Draft[BiberClanState], names: list[str], seed: int, options: dict[str, Any]) -> None:
    """BC-3: round 1 from ``deck``/``decks[0]`` or the seed."""
    decks = options.get("decks") or ([options["deck"]] if options.get("deck") else [])
    draft.state.update({
        "status": ACTIVE, "result": None, "names": list(names), "seed": seed,
        "rounds": options["rounds"], "max_turns": options["max_turns"], "recall": options["recall"],
        "with_biberbande": options["with_biberbande"], "decks": [CODEC.encode(d) for d in decks],
        "phase": PHASE_PLACE, "scores": [0] * len(names), "round_scores": [], "last_round": None,
    })
    _start_round(draft, 1, options["first_seat"])


def _do_place(draft: Draft[BiberClanState], seat: int, move: Place) -> None:
    """BC-4.3: the held number goes to a free legal slot; the turn ends."""
    state = draft.state
    held = _take_held(draft)
    state["castles"][move["target"]][SLOT_INDEX[move["slot"]]] = \
        _castle_card(held, move["face"], len(state["names"]))
    draft.emit(EVENT_PLACED, seat, target=move["target"], slot=move["slot"], face=move["face"], card=held["card"])
    _end_turn(draft)


def _do_replace(draft: Draft[BiberClanState], seat: int, move: Place) -> None:
    """BC-4.4: own castle → the old card to the discard, turn ends; another
    castle → the actor holds and sees the stolen card (D12), phase stash."""
    state = draft.state
    held = _take_held(draft)
    target, i = move["target"], SLOT_INDEX[move["slot"]]
    old = _card_at(state["castles"][target], i)
    state["castles"][target][i] = _castle_card(held, move["face"], len(state["names"]))
    draft.emit(EVENT_REPLACED, seat, target=target, slot=move["slot"], face=move["face"], card=held["card"],
              removed=old["card"], removed_face=old["face"])
    if target == seat:
        state["discard"].append(old["card"])
        _end_turn(draft)
        return
    state["held"] = {"kind": KIND_REMOVED, "card": old["card"], "knowers": old["knowers"] | core.only(seat),
                     "public": old["face"] == UP, "from": {"target": target, "slot": move["slot"]}}
    state["phase"] = PHASE_STASH


def _do_stash(draft: Draft[BiberClanState], seat: int, move: Stash) -> None:
    """BC-4.5: the stolen card to a free legal slot of the actor's castle.

    The event also carries ``removed_face`` (the face the card had where it
    was stolen) so that redaction can tell a public card (BC-5.6)."""
    state = draft.state
    held = _take_held(draft)
    state["castles"][seat][SLOT_INDEX[move["slot"]]] = _castle_card(held, move["face"], len(state["names"]))
    draft.emit(EVENT_STASHED, seat, slot=move["slot"], face=move["face"], card=held["card"],
              removed_face=UP if held["public"] else DOWN)
    _end_turn(draft)


def _do_clear(draft: Draft[BiberClanState], seat: int, move: OneCard) -> None:
    """BC-4.6: an unprotected card goes face up on the discard."""
    state = draft.state
    i = SLOT_INDEX[move["slot"]]
    old = _card_at(state["castles"][move["target"]], i)
    state["castles"][move["target"]][i] = None
    state["discard"].append(old["card"])
    draft.emit(EVENT_CLEARED, seat, target=move["target"], slot=move["slot"], face=old["face"], card=old["card"])
    _finish_special(draft)


def _do_flip(draft: Draft[BiberClanState], seat: int, move: OneCard) -> None:
    """BC-4.7: an unprotected card is turned over (its value becomes public)."""
    state = draft.state
    card = _card_at(state["castles"][move["target"]], SLOT_INDEX[move["slot"]])
    card["face"] = DOWN if card["face"] == UP else UP
    card["knowers"] = core.everyone(len(state["names"]))
    draft.emit(EVENT_FLIPPED, seat, target=move["target"], slot=move["slot"], face=card["face"], card=card["card"])
    _finish_special(draft)


def _do_swap(draft: Draft[BiberClanState], seat: int, move: Swap) -> None:
    """BC-4.8: two unprotected cards of different castles change places with
    their faces (and their knowers: the movement is public)."""
    castles = draft.state["castles"]
    ta, ia, tb, ib = move["target_a"], SLOT_INDEX[move["slot_a"]], move["target_b"], SLOT_INDEX[move["slot_b"]]
    castles[ta][ia], castles[tb][ib] = castles[tb][ib], castles[ta][ia]
    draft.emit(EVENT_SWAPPED, seat, target_a=ta, slot_a=move["slot_a"], target_b=tb, slot_b=move["slot_b"])
    _finish_special(draft)


def _do_peek(draft: Draft[BiberClanState], seat: int, move: OneCard) -> None:
    """BC-4.9: the actor looks at an unprotected face-down card."""
    card = _card_at(draft.state["castles"][move["target"]], SLOT_INDEX[move["slot"]])
    card["knowers"] |= core.only(seat)
    draft.emit(EVENT_PEEKED, seat, target=move["target"], slot=move["slot"], card=card["card"])
    _finish_special(draft)


HANDLERS: dict[str, core.Handler] = {
    MOVE_PLACE: _do_place, MOVE_REPLACE: _do_replace, MOVE_STASH: _do_stash,
    MOVE_CLEAR: _do_clear, MOVE_FLIP: _do_flip, MOVE_SWAP: _do_swap, MOVE_PEEK: _do_peek,
}


# ==========================================================================
# Views and event redaction: what a viewer sees (BC-5, BC-7)
# ==========================================================================
def _shown(viewer: Viewer, card: str | None, public: bool, owner: int | None = None) -> str | None:
    """BC-5: ``card`` if it is public, the viewer is admin or the viewer is
    the seat the card is private to; else ``None``."""
    return card if public or viewer.sees_private(owner) else None


def _card_entry(entry: dict[str, Any], card: str, visible: bool, knowers: int, seer: int) -> dict[str, Any]:
    """``entry`` with ``card`` if ``visible`` to the viewer (BC-5.3, BC-5.4), else
    with ``known`` beside the hidden card when ``seer`` (:func:`core.recall_mask`)
    knows it (BC-5.5)."""
    if visible:
        entry["card"] = card
        return entry
    entry["card"] = None
    known = core.known_value(card, knowers, seer)
    if known is not None:
        entry["known"] = known
    return entry


def _player_view(state: BiberClanState, owner: int, viewer: Viewer, seer: int) -> dict[str, Any]:
    """BC-7.1: counts and the castle; face-down cards hidden unless finished
    (BC-5.7) or for the admin; ``protected`` against the other seats (BC-4.1,
    judged once per castle from its geometry)."""
    castle = state["castles"][owner]
    everything_shown = state["status"] == FINISHED or viewer.is_admin
    castle_geometry = _geometry_of(castle)
    unprotected = castle_geometry.open_other
    slots: dict[str, Any] = {}
    for i, card in enumerate(castle):
        if card is None:
            slots[SLOTS[i]] = None
            continue
        face = card["face"]
        entry = _card_entry({"face": face}, card["card"], everything_shown or face == UP, card["knowers"], seer)
        entry["protected"] = i not in unprotected
        slots[SLOTS[i]] = entry
    return {"seat": owner, "name": state["names"][owner], "cards": castle_geometry.cards,
            "face_up": castle_geometry.face_up, "castle": slots}


def _players_view(state: BiberClanState, viewer: Viewer) -> list[dict[str, Any]]:
    """BC-7.1 for every seat."""
    seer = core.recall_mask(viewer, state["recall"])
    return [_player_view(state, owner, viewer, seer) for owner in range(len(state["names"]))]


def _held_view(state: BiberClanState, viewer: Viewer) -> dict[str, Any] | None:
    """BC-5.3, BC-7.2: the held card, its kind and holder."""
    held = state["held"]
    if held is None:
        return None
    holder = state["seat"]
    out = _card_entry({"seat": holder, "kind": held["kind"]}, held["card"],
                     held["public"] or viewer.sees_private(holder), held["knowers"],
                     core.recall_mask(viewer, state["recall"]))
    if held["from"] is not None:
        out["from"] = dict(held["from"])
    return out


def _board_view(state: BiberClanState, viewer: Viewer) -> dict[str, Any]:
    """BC-7.2; ``draw_pile`` (top first) for admin only (BC-5.2)."""
    active = state["status"] == ACTIVE
    board: dict[str, Any] = {"draw_count": len(state["draw"])}
    if viewer.is_admin:
        board["draw_pile"] = list(state["draw"])
    board.update(
        discard=list(state["discard"]), box=list(state["box"]), start_seat=state["start_seat"],
        turn_seat=state["seat"] if active else None, turns=state["turns"], max_turns=state["max_turns"],
        finisher=state["finisher"], final_turns=list(state["final_turns"]), held=_held_view(state, viewer),
        round_scores=[list(r) for r in state["round_scores"]], last_round=_copy_round_body(state["last_round"]),
    )
    return board


def _redact_drew(event: Mapping[str, Any], viewer: Viewer) -> str | None:
    """BC-5.6: a drawn special is public (D5), a drawn number the drawer's (D4)."""
    return _shown(viewer, event["card"], event["kind"] == KIND_SPECIAL, event["seat"])


def _redact_placed(event: Mapping[str, Any], viewer: Viewer) -> str | None:
    """BC-5.6: the placed card is public if face up, else the actor's."""
    return _shown(viewer, event["card"], event["face"] == UP, event["seat"])


def _redact_removed(event: Mapping[str, Any], viewer: Viewer) -> str | None:
    """BC-5.6: the removed card is public if it lay face up or the actor took
    it from its own castle (to the discard), else the actor's."""
    actor = event["seat"]
    return _shown(viewer, event["removed"], event["removed_face"] == UP or event["target"] == actor, actor)


def _redact_stashed(event: Mapping[str, Any], viewer: Viewer) -> str | None:
    """BC-5.6: the stashed card is public if it goes face up or was public when
    stolen (``removed_face`` up), else the actor's."""
    public = event["face"] == UP or event["removed_face"] == UP
    return _shown(viewer, event["card"], public, event["seat"])


# --- the declaration: moves BC-4/BC-5, view and events BC-7 ------------------------------
NUMBER = d.enum(*NUMBERS)
SPECIAL = d.enum(CLEAR, FLIP, SWAP, PEEK)
CARD = d.enum(*NUMBERS, CLEAR, FLIP, SWAP, PEEK)
SLOT = {**d.enum(*SLOTS), "description": "castle slot: bottom b0…b2, top t0 (on b0+b1), t1"}
FACE = d.enum(*FACES)
TARGET = {**d.SEAT, "description": "the seat whose castle"}
HIDDEN_NUMBER = d.nullable(NUMBER, d.HIDDEN)
ROUND_BODY = {
    "round": d.INT, "reason": d.enum(REASON_CASTLE, REASON_TURN_LIMIT, REASON_FIVE_OF_A_KIND),
    "finisher": d.nullable(d.SEAT),
    "castles": d.array(d.array(d.nullable(CARD)), description="per seat, slots b0, b1, b2, t0, t1 (null: empty)"),
    "values": d.array(d.INT), "bonus": d.array(d.INT), "penalty": d.array(d.INT), "scores": d.array(d.INT),
    "five_of_a_kind": d.array(d.SEAT), "totals": d.array(d.INT),
}
RESULT = d.obj({"scores": d.array(d.INT), "ranking": d.array(d.array(d.SEAT)), "winners": d.array(d.SEAT)})
CASTLE_CARD = d.nullable(d.obj({"face": FACE, "card": HIDDEN_NUMBER, "protected": d.BOOL,
                                "known": d.nullable(NUMBER)}, optional=("known",)), "null: empty slot")
pub, own = d.public, d.private

DECLARATION = d.Declaration(
    moves=(
        d.MoveType(MOVE_PLACE, {"target": TARGET, "slot": SLOT, "face": FACE},
                   typed=Place, doc="the held number into a free legal slot (BC-4.3)"),
        d.MoveType(MOVE_REPLACE, {"target": TARGET, "slot": SLOT, "face": FACE},
                   typed=Place, doc="replace an unprotected card (BC-4.4); stealing from another seat leads to stash"),
        d.MoveType(MOVE_STASH, {"slot": SLOT, "face": FACE},
                   typed=Stash, doc="the stolen card into a free legal own slot (BC-4.5)"),
        d.MoveType(MOVE_CLEAR, {"target": TARGET, "slot": SLOT}, typed=OneCard,
                   doc="discard an unprotected card (BC-4.6)"),
        d.MoveType(MOVE_FLIP, {"target": TARGET, "slot": SLOT}, typed=OneCard,
                   doc="turn an unprotected card over (BC-4.7)"),
        d.MoveType(MOVE_SWAP, {"target_a": TARGET, "slot_a": SLOT, "target_b": TARGET, "slot_b": SLOT},
                   typed=Swap, doc="exchange two unprotected cards of two different castles (BC-4.8, D26)"),
        d.MoveType(MOVE_PEEK, {"target": TARGET, "slot": SLOT},
                   typed=OneCard, doc="look at an unprotected face-down card (BC-4.9, D15)"),
    ),
    events=(
        d.EventType(EVENT_ROUND_STARTED, {"round": pub(d.INT), "start_seat": pub(d.SEAT)}),
        d.EventType(EVENT_DREW, {"kind": pub(d.enum(KIND_NUMBER, KIND_SPECIAL)),
                                 "card": d.redacted(d.nullable(CARD, d.HIDDEN), _redact_drew)},
                    doc="a drawn number only to its seat; a special to everyone"),
        d.EventType(EVENT_SPECIAL_VOID, {"card": pub(SPECIAL)}),
        d.EventType(EVENT_RESHUFFLED, {"count": pub(d.INT)}),
        d.EventType(EVENT_PLACED, {"target": pub(TARGET), "slot": pub(SLOT), "face": pub(FACE),
                                   "card": d.redacted(HIDDEN_NUMBER, _redact_placed)}),
        d.EventType(EVENT_REPLACED, {"target": pub(TARGET), "slot": pub(SLOT), "face": pub(FACE),
                                     "card": d.redacted(HIDDEN_NUMBER, _redact_placed),
                                     "removed": d.redacted(HIDDEN_NUMBER, _redact_removed),
                                     "removed_face": pub(FACE)}),
        d.EventType(EVENT_STASHED, {"slot": pub(SLOT), "face": pub(FACE),
                                    "card": d.redacted(HIDDEN_NUMBER, _redact_stashed), "removed_face": pub(FACE)}),
        d.EventType(EVENT_CLEARED, {"target": pub(TARGET), "slot": pub(SLOT), "face": pub(FACE),
                                    "card": pub(HIDDEN_NUMBER)}),
        d.EventType(EVENT_FLIPPED, {"target": pub(TARGET), "slot": pub(SLOT), "face": pub(FACE),
                                    "card": pub(HIDDEN_NUMBER)}),
        d.EventType(EVENT_SWAPPED, {"target_a": pub(TARGET), "slot_a": pub(SLOT), "target_b": pub(TARGET),
                                    "slot_b": pub(SLOT)}),
        d.EventType(EVENT_PEEKED, {"target": pub(TARGET), "slot": pub(SLOT), "card": own(HIDDEN_NUMBER)},
                    doc="the card only to the peeking seat"),
        d.EventType(EVENT_CASTLE_COMPLETED, {"final_turns": pub(d.array(d.SEAT))}),
        d.EventType(EVENT_ROUND_ENDED, {name: pub(schema) for name, schema in ROUND_BODY.items()}),
        d.EventType(EVENT_MATCH_ENDED, {"reason": pub(d.enum(REASON_ROUNDS, REASON_FIVE_OF_A_KIND)),
                                        "result": pub(RESULT)}),
    ),
    player={
        "cards": d.INT, "face_up": d.INT,
        "castle": d.obj({slot: CASTLE_CARD for slot in SLOTS}),
    },
    board_view={
        "draw_count": d.INT,
        "draw_pile": d.array(CARD, description="the draw order: admin only"),
        "discard": d.array(CARD), "box": d.array(CARD, description="specials out of the game this round"),
        "start_seat": d.SEAT, "turn_seat": d.nullable(d.SEAT), "turns": d.INT, "max_turns": d.INT,
        "finisher": d.nullable(d.SEAT), "final_turns": d.array(d.SEAT),
        "held": d.nullable(d.obj({"seat": d.SEAT, "kind": d.enum(KIND_NUMBER, KIND_SPECIAL, KIND_REMOVED),
                                  "card": d.nullable(CARD, d.HIDDEN), "known": d.nullable(CARD),
                                  "from": d.nullable(d.obj({"target": TARGET, "slot": SLOT}))},
                                 optional=("known", "from")), "the card being played, if any"),
        "round_scores": d.array(d.array(d.INT)),
        "last_round": d.nullable(d.obj(ROUND_BODY)),
    },
    view_recall={"known": "card"},  # BC-5.5: known beside a face-down castle card
    view_admin_only=("draw_pile",),  # BC-7.2: the draw pile is "admin only"
    presets={"short": {"rounds": 1}, "variant": {"with_biberbande": True, "recall": "none", "rounds": 2},
             "play": {"rounds": 1, "max_turns": 24}},
    bot="bots.biberclan",
    board="biberclan.js",
    docs="docs/games/biberclan.md",
)
#: the game's own event types (the worlds read their cards as a seat saw them)
_OWN_EVENTS = {e.type: e for e in DECLARATION.events}


# ==========================================================================
# Determinization (contract "Worlds and simulation"; docs/games/biberclan.md)
# ==========================================================================
#: the pool label of a card whose value went public when it was drawn (a special, D5)
DRAWN_PUBLIC = -1


@dataclass
class _Pools:
    """Where the round's hidden cards came from, as the public history says.

    Pool 0 is the round's deck (BC-3.1), pool i the pile of the i-th
    reshuffle: exactly the discard pile then (BC-4.10, D17).  ``gone[i]``
    counts the cards of pool i seen going to the discard or the box since;
    ``castles`` labels every castle card with its pool, ``held`` and ``draw``
    label the held card and the draw pile."""

    cards: list[list[str]]
    gone: list[Counter[str]]
    castles: list[list[int]]
    held: int = 0
    draw: int = 0


def _pools_of_deal(state: BiberClanState) -> _Pools:
    """Before any reshuffle every card that went public is still on the
    discard, in the box or the held special (BC-5.1)."""
    held = state["held"]
    special = held is not None and held["kind"] == KIND_SPECIAL
    gone = Counter([*state["discard"], *state["box"], *([held["card"]] if held is not None and special else [])])
    return _Pools([canonical(state["with_biberbande"])], [gone], [[0] * CASTLE_SIZE for _ in state["castles"]],
                  held=DRAWN_PUBLIC if special else 0)


def _pools_of_history(state: BiberClanState, seat: int, events: Sequence[Event]) -> _Pools:
    """The round's events as ``seat`` sees them (BC-5.6), replayed for the
    pools: which cards went public from where, each reshuffled pile."""
    viewer = core.seat_viewer(seat)
    pools = _Pools([canonical(state["with_biberbande"])], [Counter()], [[0] * CASTLE_SIZE for _ in state["castles"]])
    discard: list[str] = []
    for e in worlds.round_as_seen(events, _OWN_EVENTS, viewer, EVENT_ROUND_STARTED):
        kind, actor = e["type"], e["seat"]
        if kind == EVENT_DREW:
            pools.held = pools.draw
            if e["kind"] == KIND_SPECIAL:
                pools.gone[pools.draw][e["card"]] += 1
                pools.held = DRAWN_PUBLIC
        elif kind in (EVENT_PLACED, EVENT_STASHED):
            pools.castles[actor if kind == EVENT_STASHED else e["target"]][SLOT_INDEX[e["slot"]]] = pools.held
        elif kind == EVENT_REPLACED:  # the removed card is held, or discarded from the own castle
            castle, i = pools.castles[e["target"]], SLOT_INDEX[e["slot"]]
            castle[i], pools.held = pools.held, castle[i]
            if e["target"] == actor:
                pools.gone[pools.held][e["removed"]] += 1
                discard.append(e["removed"])
        elif kind == EVENT_CLEARED:
            pools.gone[pools.castles[e["target"]][SLOT_INDEX[e["slot"]]]][e["card"]] += 1
            discard.append(e["card"])
        elif kind == EVENT_SWAPPED:
            a, b = pools.castles[e["target_a"]], pools.castles[e["target_b"]]
            i, j = SLOT_INDEX[e["slot_a"]], SLOT_INDEX[e["slot_b"]]
            a[i], b[j] = b[j], a[i]
        elif kind == EVENT_RESHUFFLED:
            pools.cards.append(discard)
            pools.gone.append(Counter())
            pools.draw, discard = len(pools.cards) - 1, []
    if discard != state["discard"]:
        raise ValueError("the events do not lead to this state's discard pile")
    return pools


def _deal_world(state: BiberClanState, seat: int, seed: int, events: Sequence[Event]) -> BiberClanState:
    """A world for ``seat``: every card it sees or knows (BC-5.1–5.5: face
    up, known face-down cards whatever ``recall``, its held card, the
    discard and the box) where it is; each other face-down castle card,
    another seat's hidden held card and the draw pile dealt uniformly from
    the cards of their pool not seen going public (:class:`_Pools`), the
    specials only into the draw pile (BC-10.1: never in a castle or held
    unseen).  Before the round's first reshuffle the state says it all;
    after one, ``events`` (the match's, at least this round's) tell the
    pools.  Later reshuffles and rounds come from a fresh seed (BC-3.1)."""
    pools = _pools_of_history(state, seat, events) if state["reshuffles"] else _pools_of_deal(state)
    me = core.only(seat)
    places: list[list[tuple[str, int, int]]] = [[] for _ in pools.cards]
    seen: list[list[str]] = [[] for _ in pools.cards]

    def classify(label: int, card: str, visible: bool, place: tuple[str, int, int]) -> None:
        if not visible:
            places[label].append(place)
        elif label != DRAWN_PUBLIC:
            seen[label].append(card)

    for o, castle in enumerate(state["castles"]):
        for i, entry in enumerate(castle):
            if entry is not None:
                classify(pools.castles[o][i], entry["card"], entry["face"] == UP or bool(entry["knowers"] & me),
                     ("castle", o, i))
    held = state["held"]
    if held is not None:
        classify(pools.held, held["card"], held["public"] or state["seat"] == seat or bool(held["knowers"] & me),
             ("held", 0, 0))
    places[pools.draw] += [("draw", i, 0) for i in range(len(state["draw"]))]
    rng = worlds.world_rng(GAME_ID, seed)
    world = cast(BiberClanState, core.copy_layout(state, STATE_COPIERS))
    for cards, gone, mine, spots in zip(pools.cards, pools.gone, seen, places):
        pool = worlds.unaccounted(cards, [*gone.elements(), *mine])
        dealt = worlds.deal_confined(rng, pool, [where == "draw" for where, _, _ in spots], _is_special)
        for (where, a, b), card in zip(spots, dealt):
            if where == "castle":
                _card_at(world["castles"][a], b)["card"] = card
            elif where == "held":
                _held_of(world)["card"] = card
            else:
                world["draw"][a] = card
    world.update({"seed": worlds.fresh_seed(rng), "decks": []})
    return world


def _is_special(card: str) -> bool:
    return not _is_number(card)


# ==========================================================================
# The working copy of a move: the state copied by its layout (module docstring)
# ==========================================================================
def _copy_castles(castles: list[_Castle]) -> list[_Castle]:
    """``castles``: a new list per castle and a new dict per card (slot by
    slot, BC-1.4: one comprehension for all castles is the fastest copy)."""
    return [[b0 and b0.copy(), b1 and b1.copy(), b2 and b2.copy(), t0 and t0.copy(), t1 and t1.copy()]
            for b0, b1, b2, t0, t1 in castles]


def _copy_held(held: _Held | None) -> _Held | None:
    """``held``: a new dict, and a new ``from`` dict."""
    if held is None:
        return None
    return {**held, "from": None if held["from"] is None else dict(held["from"])}


def _copy_round_body(body: RoundEnded | None) -> RoundEnded | None:
    """``last_round`` (:func:`_score_round`): a new dict in the same key
    order, a new list per list field and per castle of ``castles``."""
    if body is None:
        return None
    return {**body, "castles": list(map(list, body["castles"])), "values": list(body["values"]),
            "bonus": list(body["bonus"]), "penalty": list(body["penalty"]), "scores": list(body["scores"]),
            "five_of_a_kind": list(body["five_of_a_kind"]), "totals": list(body["totals"])}


#: the state's lists and dicts by key (lists of strings or ints copy with
#: ``list``); ``result`` and any other key are cloned
STATE_COPIERS: core.Copiers = {
    "names": list, "decks": list, "scores": list, "round_scores": core.copy_rows, "last_round": _copy_round_body,
    "final_turns": list, "castles": _copy_castles, "discard": list, "box": list, "held": _copy_held,
    "draw": list,
}


# ==========================================================================
# The engine
# ==========================================================================
class BiberClan(Game[BiberClanState, BiberClanMove]):
    """BiberClan: build a five-card beaver castle, steal and protect cards."""

    id = GAME_ID
    rule_prefix = "BC"
    title = "BiberClan"
    min_players = 2
    max_players = MAX_SEATS
    summary = ("Place number cards face up or down in your own or others' castles, steal "
               "unprotected cards, play compulsory specials; a completed castle starts the "
               "final lap; highest total after the rounds wins, five of a kind wins at once.")
    options = (
        Option("rounds", core.INT, 5, minimum=1, maximum=10, description="rounds in the match (BC-2.1, D2)"),
        Option("with_biberbande", core.BOOL, False,
               description="add Biberbande's numbers and swap/peek specials: 120 cards (BC-1.3)"),
        core.deck_option(), core.decks_option(), core.first_seat_option(), core.recall_option(),
        Option("max_turns", core.INT, 200, minimum=1, maximum=1000,
               description="turns per round after which a round nobody completes ends (D18)"),
    )
    declaration = DECLARATION
    handlers = HANDLERS
    #: BiberClan has no pass (BC-4.6: even a special is compulsory): the fallback
    #: is the first listed move (BC-4.12)
    fallback_types = ()
    state_copiers = STATE_COPIERS

    def canonical_deck(self, options: dict[str, Any]) -> list[str]:
        return canonical(bool(options.get("with_biberbande")))

    def setup(self, draft: Draft[BiberClanState], names: list[str], seed: int, options: dict[str, Any]) -> None:
        _setup(draft, names, seed, options)

    def to_act(self, state: BiberClanState) -> list[int]:
        """BC-10.3: exactly the seat whose turn it is, while active."""
        return [state["seat"]] if state["status"] == ACTIVE else []

    def seat_moves(self, state: BiberClanState, seat: int) -> list[BiberClanMove]:
        return _seat_moves(state, seat)

    def seat_moves_like(self, state: BiberClanState, seat: int, move: PostedMove) -> list[BiberClanMove]:
        return _seat_moves_like(state, seat, move)

    def players_view(self, state: BiberClanState, viewer: Viewer) -> list[dict[str, Any]]:
        return _players_view(state, viewer)

    def board_view(self, state: BiberClanState, viewer: Viewer) -> dict[str, Any]:
        return _board_view(state, viewer)

    def why_illegal(self, state: BiberClanState, seat: int, move: PostedMove, legal: list[BiberClanMove]) -> str:
        """A reason from public information only (BC-5.8)."""
        return _why_illegal(state, seat, move, legal) or super().why_illegal(state, seat, move, legal)

    def deal_world(self, state: BiberClanState, seat: int, seed: int, events: Sequence[Event]) -> BiberClanState:
        return _deal_world(state, seat, seed, events)
