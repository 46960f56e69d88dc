"""Mein Lieber Biber: six beavers swim along a 30-ring spiral on a tipping raft.

Players move any beaver with the cards in their hands; landing on a ring of
the beaver's colour (or on the dam) earns a stick or a card, tipping the raft
costs two sticks and ends the round.  Most sticks after the rounds wins.

Rules: docs/games/mein-lieber-biber.md (rule ids MLB-n.m, decisions Dn).

MeinLieberBiberState layout (a plain JSON-able dict; cards are stored as their canonical
index 0..47 so hands sort by plain integer order and the snapshot stays small):

``status`` / ``result``  core.ACTIVE or core.FINISHED, final result or null
``names``, ``seed``      players and the match seed
``rounds``, ``tip``      resolved options (MLB-2.3, MLB-2.4); ``first_seat`` is used at
                         creation only and ``recall`` changes nothing (MLB-5.5)
``decks``                stacked round orders (card indexes) or null (MLB-2.1a)
``sticks``               per seat (MLB-1.3)
``round``, ``turn``, ``start_seat``
``hands``, ``piles``     hands per seat (sorted); two piles, top first (MLB-3.2, MLB-3.3)
``discards``             per seat, oldest first
``pos``                  beaver positions by colour index (0 middle, 1..30 rings, 31 dam)
``supply``               sticks left (MLB-3.4)
``last_play``, ``last_round_end``  as shown in the view (MLB-7.2)
``phase``                PHASE_PLAY, PHASE_EXCHANGE, PHASE_REWARD, PHASE_DRAW or PHASE_FINISHED
"""
from __future__ import annotations

import random
from bisect import insort
from collections.abc import Sequence
from typing import Any, Final, Literal, NotRequired, TypedDict, cast

from engine import core, worlds
from engine import declaration as d
from engine.core import ACTIVE, FINISHED, CoreState, Draft, Game, Handler, Option, PostedMove, Viewer

GAME_ID = "mein-lieber-biber"


#: The last card played, as the view shows it (MLB-7.2); ``from`` is a
#: Python keyword, hence the functional form
LastPlay = TypedDict("LastPlay", {"seat": int, "card": str, "beaver": str, "from": int, "to": int})


class LastRoundEnd(TypedDict):
    round: int
    reason: str
    seat: int


class MeinLieberBiberState(CoreState):
    """The snapshot (module docstring), cards as indexes into :data:`CARDS`."""

    names: list[str]
    seed: int
    rounds: int
    tip: int
    decks: list[list[int]] | None
    sticks: list[int]
    last_round_end: LastRoundEnd | None
    round: int
    turn: int
    start_seat: int
    hands: list[list[int]]
    piles: list[list[int]]
    discards: list[list[int]]
    pos: list[int]
    supply: int
    last_play: LastPlay | None

# --------------------------------------------------------------------------
# Components (MLB-1).
# --------------------------------------------------------------------------
COLOURS = ("red", "orange", "yellow", "green", "blue", "purple")  # MLB-1.1
COLOUR_INDEX = {c: i for i, c in enumerate(COLOURS)}
VALUES = range(1, 9)
CARDS = tuple(f"{c}-{v}" for c in COLOURS for v in VALUES)  # MLB-1.2, canonical order
CARD_INDEX = {card: i for i, card in enumerate(CARDS)}
STICKS = 60  # MLB-1.3
HAND_SIZE = 3  # MLB-3.2, MLB-4.3

MIDDLE = 0  # MLB-1.4
LAST_RING = 30
DAM = 31

#: MLB-1.4, normative: ring k (1..30) -> (colour, x, y) in thousandths of the
#: raft radius.  Index 0 is the middle of the raft (weightless, colourless).
RAFT: tuple[tuple[str | None, int, int], ...] = (
    (None, 0, 0),
    ("red", 105, 76), ("blue", 49, 152), ("yellow", -59, 181), ("purple", -178, 129),
    ("orange", -250, 0), ("green", -227, -165), ("yellow", -96, -295), ("red", 105, -323),
    ("purple", 299, -217), ("blue", 400, 0),
    ("green", 348, 253), ("orange", 142, 437), ("red", -151, 466), ("yellow", -421, 306),
    ("blue", -550, 0), ("purple", -469, -341), ("orange", -189, -580), ("green", 198, -609),
    ("red", 542, -394), ("blue", 700, 0),
    ("yellow", 591, 429), ("orange", 235, 723), ("purple", -244, 751), ("green", -663, 482),
    ("yellow", -850, 0), ("red", -712, -517), ("orange", -281, -865), ("blue", 290, -894),
    ("purple", 785, -570), ("green", 1000, 0),
)
RING_COLOURS: list[str] = [colour for colour, _, _ in RAFT[1:] if colour is not None]
#: Colour index of each position (None for middle and dam), for the reward test.
RING_COLOUR_INDEX: list[int | None] = [None, *(COLOUR_INDEX[c] for c in RING_COLOURS), None]

# --------------------------------------------------------------------------
# Phases (MLB-4, MLB-6.4), moves (MLB-4.3..4.8) and reward kinds (MLB-4.7),
# the reasons in events (MLB-8.1).
# --------------------------------------------------------------------------
PHASE_PLAY, PHASE_EXCHANGE, PHASE_REWARD, PHASE_DRAW, PHASE_FINISHED = (
    "play", "exchange", "reward", "draw", "finished")

MOVE_DRAW: Final = "draw"
MOVE_PLAY: Final = "play"
MOVE_EXCHANGE: Final = "exchange"
MOVE_DISCARD: Final = "discard"
MOVE_REWARD: Final = "reward"
MOVE_PASS: Final = "pass"
TAKE_STICK: Final = "stick"
TAKE_CARD: Final = "card"

#: why a card was drawn (``drew.reason``): a top-up (MLB-4.3) or the draw after a move (MLB-4.8)
REASON_TOP_UP, REASON_AFTER_MOVE = "top_up", "draw"
#: why a round ended (``round_ended.reason``, MLB-6.1)
REASON_TIPPED, REASON_SUPPLY_EXHAUSTED, REASON_HAND_EMPTY, REASON_RAFT_EMPTY = (
    "tipped", "supply_exhausted", "hand_empty", "raft_empty")


# --------------------------------------------------------------------------
# Pure rules (MLB-1.2, MLB-3, MLB-4.0..4.2, MLB-6.1).
# --------------------------------------------------------------------------
def _card_colour(card: int) -> int:
    """Colour index of a card index (MLB-1.2)."""
    return card >> 3


def _card_value(card: int) -> int:
    """Movement value 1..8 of a card index (MLB-1.2)."""
    return (card & 7) + 1


def _on_raft(position: int) -> bool:
    """The middle or a ring, not the dam (MLB-1.4)."""
    return position <= LAST_RING


def _target(position: int, value: int) -> int:
    """Where a beaver lands: occupied rings count; past 30 it reaches the dam (MLB-4.4a, D16)."""
    return min(position + value, DAM)


def _movable_beavers(pos: list[int], card: int) -> list[int]:
    """Beavers (colour indexes, in colour order) that ``card`` can move (MLB-4.1, D15).

    The card's own beaver while it is on the raft; any beaver on the raft when
    the card's beaver has reached the dam (joker).  The landing ring must be
    free, or the move must end on the dam.
    """
    colour, value = _card_colour(card), _card_value(card)
    if _on_raft(pos[colour]):
        candidates: tuple[int, ...] | range = (colour,)
    else:
        candidates = range(len(COLOURS))
    result = []
    for beaver in candidates:
        here = pos[beaver]
        if _on_raft(here):
            to = _target(here, value)
            if to == DAM or to not in pos:
                result.append(beaver)
    return result


def can_play(pos: list[int], hand: list[int]) -> bool:
    """Some card in ``hand`` can move a beaver (MLB-4.0)."""
    return any(_movable_beavers(pos, card) for card in hand)


def load(pos: list[int]) -> list[int]:
    """The raft's load (Σx, Σy) over beavers on rings 1..30 (MLB-4.2)."""
    x = y = 0
    for p in pos:
        if MIDDLE < p <= LAST_RING:
            x += RAFT[p][1]
            y += RAFT[p][2]
    return [x, y]


def tips(pos: list[int], threshold: int) -> bool:
    """Exact integer tipping test Lx²+Ly² > T²; equality does not tip (MLB-4.2)."""
    x, y = load(pos)
    return x * x + y * y > threshold * threshold


def _earns_reward(beaver: int, to: int) -> bool:
    """A beaver landing on the dam or on a ring of its own colour earns a reward (MLB-4.4c, D13)."""
    return to == DAM or RING_COLOUR_INDEX[to] == beaver


def _next_start_seat(sticks: list[int], last_mover: int) -> int:
    """Start seat of a later round: fewest sticks, ties clockwise from the seat
    after the last mover of the previous round (MLB-3.5, D17)."""
    n = len(sticks)
    fewest = min(sticks)
    return next(s for s in core.seats_from(core.seat_after(last_mover, n), n) if sticks[s] == fewest)


def _deal(deck: list[int], n: int) -> tuple[list[list[int]], list[list[int]]]:
    """Hands (sorted) and the two piles, top first, from a round's order (MLB-3.2, MLB-3.3)."""
    hands = [sorted(deck[s:HAND_SIZE * n:n]) for s in range(n)]
    rest = deck[HAND_SIZE * n:]
    return hands, [rest[0::2], rest[1::2]]


def _round_order(state: MeinLieberBiberState, round_no: int) -> list[int]:
    """Round ``round_no``'s order: stacked ``decks`` or the seeded shuffle (MLB-3.1, D18)."""
    decks = state["decks"]
    options = {"decks": [[CARDS[c] for c in d] for d in decks]} if decks else {}
    return [CARD_INDEX[c] for c in core.round_deck(GAME_ID, state["seed"], round_no, CARDS, options)]


def _turn_phase(state: MeinLieberBiberState) -> str:
    """`play` if some card in the turn seat's hand can move a beaver, else `exchange` (MLB-4.0)."""
    return PHASE_PLAY if can_play(state["pos"], state["hands"][state["turn"]]) else PHASE_EXCHANGE


def _round_end_reason(state: MeinLieberBiberState, mover: int) -> str | None:
    """MLB-6.1 after a move (tipping is handled before): the first that applies."""
    if state["supply"] == 0:
        return REASON_SUPPLY_EXHAUSTED
    if not state["hands"][mover]:
        return REASON_HAND_EMPTY
    if not any(_on_raft(p) for p in state["pos"]):
        return REASON_RAFT_EMPTY
    return None


# --------------------------------------------------------------------------
# The moves as listed, one TypedDict per move type (MLB-4.3..4.8; DECLARATION).
# --------------------------------------------------------------------------
class Draw(TypedDict):
    type: Literal["draw"]
    pile: int


class Play(TypedDict):
    type: Literal["play"]
    card: str
    beaver: str


class Exchange(TypedDict):
    type: Literal["exchange"]
    card: str
    pile: int


class Discard(TypedDict):
    type: Literal["discard"]
    card: str


class Reward(TypedDict):
    type: Literal["reward"]
    take: Literal["stick", "card"]
    #: the pile of ``take: "card"`` only
    pile: NotRequired[int]


class Pass(TypedDict):
    type: Literal["pass"]


MeinLieberBiberMove = Draw | Play | Exchange | Discard | Reward | Pass


# --------------------------------------------------------------------------
# The events' fields besides type and seat, one TypedDict per event type
# (MLB-8.1; DECLARATION).
# --------------------------------------------------------------------------
class RoundStarted(TypedDict):
    round: int
    start_seat: int


class Dealt(TypedDict):
    cards: list[str]


class Drew(TypedDict):
    pile: int
    card: str
    reason: str


#: ``from`` is a Python keyword, hence the functional form
Played = TypedDict("Played", {"card": str, "beaver": str, "from": int, "to": int, "joker": bool})


class Tipped(TypedDict):
    load: list[int]
    returned: int


class Rewarded(TypedDict):
    take: str
    pile: int | None
    card: str | None


class Exchanged(TypedDict):
    card: str
    pile: int
    drawn: str


class Discarded(TypedDict):
    card: str


class RoundEnded(TypedDict):
    round: int
    reason: str
    by: int
    sticks: list[int]
    supply: int


class MatchEnded(TypedDict):
    result: dict[str, Any]


EVENT_ROUND_STARTED = d.EventKind("round_started", RoundStarted)
EVENT_DEALT = d.EventKind("dealt", Dealt)
EVENT_DREW = d.EventKind("drew", Drew)
EVENT_PLAYED = d.EventKind("played", Played)
EVENT_TIPPED = d.EventKind("tipped", Tipped)
EVENT_REWARDED = d.EventKind("rewarded", Rewarded)
EVENT_PASSED = d.EventKind("passed", d.NoFields)
EVENT_EXCHANGED = d.EventKind("exchanged", Exchanged)
EVENT_DISCARDED = d.EventKind("discarded", Discarded)
EVENT_ROUND_ENDED = d.EventKind("round_ended", RoundEnded)
EVENT_MATCH_ENDED = d.EventKind("match_ended", MatchEnded)


# --------------------------------------------------------------------------
# Legal moves (MLB-4.9) and refusal reasons (MLB-4.10).
# --------------------------------------------------------------------------
def _seat_moves(state: MeinLieberBiberState, seat: int) -> list[MeinLieberBiberMove]:
    """Every legal move of the seat to act, in the order of MLB-4.9."""
    phase, piles = state["phase"], state["piles"]
    open_piles = [p for p in (0, 1) if piles[p]]
    hand = state["hands"][seat]
    moves: list[MeinLieberBiberMove] = []
    if phase == PHASE_REWARD:
        moves.append({"type": MOVE_REWARD, "take": TAKE_STICK})
        moves += [{"type": MOVE_REWARD, "take": TAKE_CARD, "pile": p} for p in open_piles]
        return moves
    if phase == PHASE_DRAW:
        moves += [{"type": MOVE_DRAW, "pile": p} for p in open_piles]
        moves.append({"type": MOVE_PASS})
        return moves
    if len(hand) < HAND_SIZE:
        moves += [{"type": MOVE_DRAW, "pile": p} for p in open_piles]
    if phase == PHASE_PLAY:
        pos = state["pos"]
        moves += [{"type": MOVE_PLAY, "card": CARDS[c], "beaver": COLOURS[b]}
                  for c in hand for b in _movable_beavers(pos, c)]
    elif open_piles:
        moves += [{"type": MOVE_EXCHANGE, "card": CARDS[c], "pile": p} for c in hand for p in open_piles]
    else:
        moves += [{"type": MOVE_DISCARD, "card": CARDS[c]} for c in hand]
    return moves


def _why_illegal(state: MeinLieberBiberState, seat: int, move: PostedMove) -> str | None:
    """A specific sentence for common refusals, or None for the generic one
    (MLB-4.10: only public facts or the seat's own)."""
    kind, phase, hand = move.get("type"), state["phase"], state["hands"][seat]
    named = move.get("card")
    card = CARD_INDEX.get(named) if isinstance(named, str) else None
    pile = move.get("pile")
    if type(pile) is int and pile in (0, 1) and not state["piles"][pile]:
        return f"pile {pile} is empty"
    if kind == MOVE_DRAW and phase in (PHASE_PLAY, PHASE_EXCHANGE) and len(hand) >= HAND_SIZE:
        return "a top-up is allowed only with fewer than 3 cards in hand (MLB-4.3)"
    if kind in (MOVE_PLAY, MOVE_EXCHANGE, MOVE_DISCARD) and "card" in move and card not in hand:
        return f"{move.get('card')!r} is not in your hand"
    if kind == MOVE_EXCHANGE and phase == PHASE_PLAY:
        return "an exchange is allowed only when no card can move a beaver (MLB-4.5, D9)"
    if kind == MOVE_PLAY and phase == PHASE_PLAY and card is not None:
        return _why_illegal_play(state, card, move.get("beaver"))
    return None


def _why_illegal_play(state: MeinLieberBiberState, card: int, beaver: Any) -> str | None:
    """Why a card in hand cannot move ``beaver`` (MLB-4.1)."""
    b = COLOUR_INDEX.get(beaver) if isinstance(beaver, str) else None
    if b is None:
        return f"unknown beaver {beaver!r}; beavers: {', '.join(COLOURS)}"
    pos, colour = state["pos"], _card_colour(card)
    if not _on_raft(pos[b]):
        return f"the {COLOURS[b]} beaver has left the raft"
    if b != colour and _on_raft(pos[colour]):
        return (f"{CARDS[card]} moves only the {COLOURS[colour]} beaver while it is on the raft "
                "(it becomes a joker once that beaver reaches the dam)")
    to = _target(pos[b], _card_value(card))
    if to != DAM and to in pos:
        return f"ring {to} is occupied; a beaver must end on a free ring (MLB-4.1)"
    return None


# --------------------------------------------------------------------------
# Setup (MLB-3).
# --------------------------------------------------------------------------
def _setup(draft: Draft[MeinLieberBiberState], names: list[str], seed: int, options: dict[str, Any]) -> None:
    """A new match: options into the state, then round 1 (MLB-2, MLB-3)."""
    n = len(names)
    decks = options.get("decks")
    draft.state.update({
        "status": ACTIVE, "result": None, "names": list(names), "seed": seed,
        "rounds": options["rounds"], "tip": options["tip_threshold"],
        "decks": [[CARD_INDEX[c] for c in d] for d in decks] if decks else None,
        "sticks": [0] * n, "last_round_end": None})
    first = [CARD_INDEX[c] for c in core.round_deck(GAME_ID, seed, 1, CARDS, options)]
    _start_round(draft, 1, options["first_seat"], first)


def _start_round(draft: Draft[MeinLieberBiberState], round_no: int, start: int, deck: list[int]) -> None:
    """Set up round ``round_no`` from its order ``deck`` (MLB-3.1..3.6)."""
    state = draft.state
    n = len(state["names"])
    hands, piles = _deal(deck, n)
    state.update({"round": round_no, "turn": start, "start_seat": start, "hands": hands, "piles": piles,
                  "discards": [[] for _ in range(n)], "pos": [MIDDLE] * len(COLOURS),
                  "supply": STICKS - sum(state["sticks"]), "last_play": None})
    state["phase"] = _turn_phase(state)
    draft.emit(EVENT_ROUND_STARTED, None, round=round_no, start_seat=start)
    for seat, hand in enumerate(hands):
        draft.emit(EVENT_DEALT, seat, cards=[CARDS[c] for c in hand])


# --------------------------------------------------------------------------
# Steps shared by the handlers: each changes ``draft.state`` (a private copy)
# and emits the events of MLB-8.1.
# --------------------------------------------------------------------------
def _take_top(state: MeinLieberBiberState, seat: int, pile: int) -> int:
    """Top card of ``pile`` into the seat's sorted hand; returns it."""
    card: int = state["piles"][pile].pop(0)
    insort(state["hands"][seat], card)
    return card


def _lay_down(state: MeinLieberBiberState, seat: int, card: int) -> None:
    """A hand card goes face up onto the seat's discard pile (MLB-4.4a, 4.5, 4.6)."""
    state["hands"][seat].remove(card)
    state["discards"][seat].append(card)


def _end_turn(state: MeinLieberBiberState) -> None:
    """Clockwise to the next seat (MLB-4.0)."""
    state["turn"] = core.seat_after(state["turn"], len(state["names"]))
    state["phase"] = _turn_phase(state)


def _tip(draft: Draft[MeinLieberBiberState], seat: int) -> None:
    """MLB-4.4b: the mover returns up to two sticks; the round ends, no reward (D11)."""
    state = draft.state
    returned = min(2, state["sticks"][seat])
    state["sticks"][seat] -= returned
    state["supply"] += returned
    draft.emit(EVENT_TIPPED, seat, load=load(state["pos"]), returned=returned)
    _end_round(draft, REASON_TIPPED, seat)


def _after_reward(draft: Draft[MeinLieberBiberState], seat: int) -> None:
    """MLB-4.4 d/e: round-end checks, then the optional draw if a pile is left."""
    state = draft.state
    reason = _round_end_reason(state, seat)
    if reason:
        _end_round(draft, reason, seat)
    elif state["piles"][0] or state["piles"][1]:
        state["phase"] = PHASE_DRAW
    else:
        _end_turn(state)


def _end_round(draft: Draft[MeinLieberBiberState], reason: str, by: int) -> None:
    """MLB-6.1..6.4: score, then the next round or the end of the match."""
    state = draft.state
    round_no = state["round"]
    state["last_round_end"] = {"round": round_no, "reason": reason, "seat": by}
    draft.emit(EVENT_ROUND_ENDED, None, round=round_no, reason=reason, by=by,
              sticks=list(state["sticks"]), supply=state["supply"])
    if round_no >= state["rounds"] or reason == REASON_SUPPLY_EXHAUSTED:
        result = core.make_result(state["sticks"], lowest_wins=False)
        state.update({"status": FINISHED, "phase": PHASE_FINISHED, "result": result})
        draft.emit(EVENT_MATCH_ENDED, None, result=result)
        return
    nxt = round_no + 1
    _start_round(draft, nxt, _next_start_seat(state["sticks"], by), _round_order(state, nxt))


# --------------------------------------------------------------------------
# Move handlers (MLB-4.3..4.8): each applies one legal move and every
# automatic step after it.
# --------------------------------------------------------------------------
def _do_draw(draft: Draft[MeinLieberBiberState], seat: int, move: Draw) -> None:
    """Top-up in `play`/`exchange` (MLB-4.3, D8) or the optional draw after a move (MLB-4.8)."""
    state = draft.state
    top_up = state["phase"] != PHASE_DRAW
    pile = move["pile"]
    card = _take_top(state, seat, pile)
    draft.emit(EVENT_DREW, seat, pile=pile, card=CARDS[card],
              reason=REASON_TOP_UP if top_up else REASON_AFTER_MOVE)
    if top_up:
        state["phase"] = _turn_phase(state)
    else:
        _end_turn(state)


def _do_play(draft: Draft[MeinLieberBiberState], seat: int, move: Play) -> None:
    """MLB-4.4: lay the card, move the beaver, then tip check, reward, round end, draw."""
    state = draft.state
    card, beaver = CARD_INDEX[move["card"]], COLOUR_INDEX[move["beaver"]]
    _lay_down(state, seat, card)
    pos = state["pos"]
    start = pos[beaver]
    pos[beaver] = to = _target(start, _card_value(card))
    played: LastPlay = {"seat": seat, "card": CARDS[card], "beaver": COLOURS[beaver], "from": start, "to": to}
    state["last_play"] = played
    draft.emit(EVENT_PLAYED, seat, card=played["card"], beaver=played["beaver"], **{"from": start}, to=to,
               joker=_card_colour(card) != beaver)
    if tips(pos, state["tip"]):
        _tip(draft, seat)
    elif _earns_reward(beaver, to):
        state["phase"] = PHASE_REWARD
    else:
        _after_reward(draft, seat)


def _do_reward(draft: Draft[MeinLieberBiberState], seat: int, move: Reward) -> None:
    """MLB-4.7: a stick from the supply or the top card of a pile."""
    state = draft.state
    if move["take"] == TAKE_STICK:
        state["supply"] -= 1
        state["sticks"][seat] += 1
        pile, card = None, None
    else:
        pile = move["pile"]
        card = CARDS[_take_top(state, seat, pile)]
    draft.emit(EVENT_REWARDED, seat, take=move["take"], pile=pile, card=card)
    _after_reward(draft, seat)


def _do_exchange(draft: Draft[MeinLieberBiberState], seat: int, move: Exchange) -> None:
    """MLB-4.5, D9: forced exchange; the phase is re-evaluated (MLB-4.0)."""
    state = draft.state
    card, pile = CARD_INDEX[move["card"]], move["pile"]
    _lay_down(state, seat, card)
    drawn = _take_top(state, seat, pile)
    draft.emit(EVENT_EXCHANGED, seat, card=CARDS[card], pile=pile, drawn=CARDS[drawn])
    state["phase"] = _turn_phase(state)


def _do_discard(draft: Draft[MeinLieberBiberState], seat: int, move: Discard) -> None:
    """MLB-4.6, D10: stuck with both piles empty; an empty hand ends the round."""
    state = draft.state
    card = CARD_INDEX[move["card"]]
    _lay_down(state, seat, card)
    draft.emit(EVENT_DISCARDED, seat, card=CARDS[card])
    if state["hands"][seat]:
        _end_turn(state)
    else:
        _end_round(draft, REASON_HAND_EMPTY, seat)


def _do_pass(draft: Draft[MeinLieberBiberState], seat: int, move: Pass) -> None:
    """MLB-4.8: no draw after the move; the turn passes on."""
    draft.emit(EVENT_PASSED, seat)
    _end_turn(draft.state)


HANDLERS: dict[str, Handler] = {
    MOVE_DRAW: _do_draw, MOVE_PLAY: _do_play, MOVE_REWARD: _do_reward,
    MOVE_EXCHANGE: _do_exchange, MOVE_DISCARD: _do_discard, MOVE_PASS: _do_pass,
}


# --------------------------------------------------------------------------
# Views (MLB-5.1..5.3, MLB-7) and event visibility (MLB-5.4).
# --------------------------------------------------------------------------
def _visible_cards(cards: list[int], owner: int | None, viewer: Viewer) -> list[str | None]:
    """Card ids for the owner (a seat, or None for the piles) and admin; nulls
    for everyone else (MLB-5.1, MLB-5.2)."""
    if viewer.sees_private(owner):
        return [CARDS[c] for c in cards]
    return [None] * len(cards)


def _players_view(state: MeinLieberBiberState, viewer: Viewer) -> list[dict[str, Any]]:
    """MLB-7.1: hands hidden but for their seat (MLB-5.1); discards and sticks public (MLB-5.3)."""
    return [
        {"seat": seat, "name": name, "hand": _visible_cards(hand, seat, viewer),
         "hand_count": len(hand), "discards": [CARDS[c] for c in state["discards"][seat]],
         "sticks": state["sticks"][seat]}
        for seat, (name, hand) in enumerate(zip(state["names"], state["hands"]))
    ]


def _board_view(state: MeinLieberBiberState, viewer: Viewer) -> dict[str, Any]:
    """MLB-7.2: the raft and beavers (public, MLB-5.3); pile cards for admin only (MLB-5.2)."""
    pos = state["pos"]
    return {
        "rings": list(RING_COLOURS),
        "beavers": dict(zip(COLOURS, pos)),
        "piles": [_visible_cards(pile, None, viewer) for pile in state["piles"]],
        "supply": state["supply"],
        "load": load(pos),
        "tip_threshold": state["tip"],
        "start_seat": state["start_seat"],
        "last_play": state["last_play"],
        "last_round_end": state["last_round_end"],
    }


# --------------------------------------------------------------------------
# The declaration: moves MLB-4, view MLB-7, events MLB-8.1.  The cards a seat
# takes into its hand are its own (MLB-5.4); everything else is public.
# --------------------------------------------------------------------------
COLOUR = d.enum(*COLOURS)
CARD = d.enum(*CARDS)
PILE = {**d.enum(0, 1), "description": "draw pile 0 or 1"}
POSITION = {"type": "integer", "minimum": MIDDLE, "maximum": DAM, "description": "0 raft middle, 1…30 rings, 31 dam"}
ROUND_REASON = d.enum(REASON_TIPPED, REASON_SUPPLY_EXHAUSTED, REASON_HAND_EMPTY, REASON_RAFT_EMPTY)
TAKE = d.enum(TAKE_STICK, TAKE_CARD)
RESULT = d.obj({"scores": d.array(d.INT), "ranking": d.array(d.array(d.SEAT)), "winners": d.array(d.SEAT)})
HIDDEN_CARD = d.nullable(CARD, d.HIDDEN)
pub, own = d.public, d.private

DECLARATION = d.Declaration(
    moves=(
        d.MoveType(MOVE_PLAY, {"card": CARD, "beaver": COLOUR},
                   typed=Play, doc="play a card to move a beaver (MLB-4.4; joker: D15)"),
        d.MoveType(MOVE_DRAW, {"pile": PILE},
                   typed=Draw, doc="top up from a pile (MLB-4.3, D8), or draw after the move (MLB-4.8)"),
        d.MoveType(MOVE_EXCHANGE, {"card": CARD, "pile": PILE},
                   typed=Exchange, doc="lay a card down, take a pile's top card (MLB-4.5, D9)"),
        d.MoveType(MOVE_DISCARD, {"card": CARD}, typed=Discard, doc="both piles empty: discard a card (MLB-4.6, D10)"),
        d.MoveType(MOVE_REWARD, {"take": TAKE, "pile": PILE}, optional=("pile",),
                   typed=Reward, doc="take a stick, or a pile's top card (MLB-4.7, D13); a stick has no pile"),
        d.MoveType(MOVE_PASS, typed=Pass, doc="do not draw after the move (D7)"),
    ),
    events=(
        d.EventType(EVENT_ROUND_STARTED, {"round": pub(d.INT), "start_seat": pub(d.SEAT)}),
        d.EventType(EVENT_DEALT, {"cards": own(d.array(HIDDEN_CARD))}, doc="MLB-5.4: the cards only to their seat"),
        d.EventType(EVENT_DREW, {"pile": pub(PILE), "card": own(HIDDEN_CARD),
                                 "reason": pub(d.enum(REASON_AFTER_MOVE, REASON_TOP_UP))},
                    doc="the card only to its seat"),
        d.EventType(EVENT_PLAYED, {"card": pub(CARD), "beaver": pub(COLOUR), "from": pub(POSITION),
                                   "to": pub(POSITION), "joker": pub(d.BOOL)}),
        d.EventType(EVENT_TIPPED, {"load": pub(d.array(d.INT, minItems=2, maxItems=2)), "returned": pub(d.INT)}),
        d.EventType(EVENT_REWARDED, {"take": pub(TAKE), "pile": pub(d.nullable(PILE)), "card": own(HIDDEN_CARD)}),
        d.EventType(EVENT_PASSED),
        d.EventType(EVENT_EXCHANGED, {"card": pub(CARD), "pile": pub(PILE), "drawn": own(HIDDEN_CARD)}),
        d.EventType(EVENT_DISCARDED, {"card": pub(CARD)}),
        d.EventType(EVENT_ROUND_ENDED, {"round": pub(d.INT), "reason": pub(ROUND_REASON), "by": pub(d.SEAT),
                                        "sticks": pub(d.array(d.INT)), "supply": pub(d.INT)}),
        d.EventType(EVENT_MATCH_ENDED, {"result": pub(RESULT)}),
    ),
    player={"hand": d.array(HIDDEN_CARD), "hand_count": d.INT, "discards": d.array(CARD), "sticks": d.INT},
    board_view={
        "rings": d.array(COLOUR, minItems=30, maxItems=30, description="colour of rings 1…30"),
        "beavers": d.obj({c: POSITION for c in COLOURS}),
        "piles": d.array(d.array(HIDDEN_CARD), minItems=2, maxItems=2),
        "supply": d.INT,
        "load": d.array(d.INT, minItems=2, maxItems=2,
                        description="the raft's load (x, y), thousandths of the radius"),
        "tip_threshold": d.INT, "start_seat": d.SEAT,
        "last_play": d.nullable(d.obj({"seat": d.SEAT, "card": CARD, "beaver": COLOUR, "from": POSITION,
                                       "to": POSITION})),
        "last_round_end": d.nullable(d.obj({"round": d.INT, "reason": ROUND_REASON, "seat": d.SEAT})),
    },
    presets={"short": {"rounds": 1}, "variant": {"recall": "none", "rounds": 1}, "play": {"rounds": 1}},
    bot="bots.mein_lieber_biber",
    board="mein-lieber-biber.js",
    docs="docs/games/mein-lieber-biber.md",
)


# --------------------------------------------------------------------------
# Determinization (contract "Worlds and simulation"; docs/games/mein-lieber-biber.md).
# --------------------------------------------------------------------------
def _deal_world(state: MeinLieberBiberState, seat: int, seed: int,
                events: Sequence[core.Event]) -> MeinLieberBiberState:
    """A world for ``seat``: its own hand, every discard pile, positions,
    sticks and counts as they are (MLB-5.1–5.3); the cards it has not seen
    (MLB-10.1: all but its hand and the discards) dealt uniformly over the
    other hands (sorted, MLB-1.2) and the two piles, among the deals that fit
    what the public history makes certain about the current positions: the
    cards a seat held when it had to exchange or discard since the last play
    (but the one laid down) cannot move a beaver (:func:`_stuck_counts`), nor
    can any card of a turn seat in phase ``exchange``, while in phase
    ``play`` one of its other cards can (MLB-4.0).  Later rounds are
    shuffled from a fresh seed with no stacked ``decks`` (MLB-3.1)."""
    rng = worlds.world_rng(GAME_ID, seed)
    world = cast(MeinLieberBiberState, core.copy_layout(state, STATE_COPIERS))
    seen = [*state["hands"][seat], *(c for pile in state["discards"] for c in pile)]
    pool = worlds.unaccounted(range(len(CARDS)), seen)
    others = [o for o in range(len(state["names"])) if o != seat]
    stuck = _stuck_counts(state, seat, events)
    chosen = rng.sample([c for c in pool if not _movable_beavers(state["pos"], c)], sum(stuck.values()))
    held = iter(chosen)
    hands = {o: [next(held) for _ in range(stuck.get(o, 0))] for o in others}
    pool = worlds.unaccounted(pool, chosen)
    mover = state["turn"]
    if mover != seat and state["phase"] == PHASE_PLAY:
        more = _some_playable(rng, state, pool, len(state["hands"][mover]) - len(hands[mover]))
        hands[mover] += more
        pool = worlds.unaccounted(pool, more)
    parts = worlds.deal(rng, pool, [len(state["hands"][o]) - len(hands[o]) for o in others]
                        + [len(pile) for pile in state["piles"]])
    for o, rest in zip(others, parts):
        world["hands"][o] = sorted(hands[o] + rest)
    world["piles"] = parts[len(others):]
    world["seed"], world["decks"] = worlds.fresh_seed(rng), None
    return world


def _stuck_counts(state: MeinLieberBiberState, seat: int, events: Sequence[core.Event]) -> dict[int, int]:
    """Per other seat, how many of the cards it holds the public history shows
    unable to move a beaver at the current positions (which only a play
    changes, MLB-4.4): after its last exchange (MLB-4.5) or discard (MLB-4.6)
    since the last play, every card it held then but the one laid down; the
    card drawn in the exchange and any top-up since (MLB-4.3) are free.  A
    turn seat in phase ``exchange`` holds only such cards (MLB-4.0).  Reads
    only public fields of ``events`` (type and seat)."""
    counts: dict[int, int] = {}
    fresh: dict[int, int] = {}
    for e in worlds.since_last(events, (EVENT_PLAYED, EVENT_ROUND_STARTED)):
        actor = e["seat"]
        if e["type"] in (EVENT_EXCHANGED, EVENT_DISCARDED):
            fresh[actor] = 1 if e["type"] == EVENT_EXCHANGED else 0
        elif e["type"] == EVENT_DREW and actor in fresh:
            fresh[actor] += 1
    for o, free in fresh.items():
        if o != seat:
            counts[o] = len(state["hands"][o]) - free
    if state["turn"] != seat and state["phase"] == PHASE_EXCHANGE:
        counts[state["turn"]] = len(state["hands"][state["turn"]])
    return counts


def _some_playable(rng: random.Random, state: MeinLieberBiberState, pool: list[int], size: int) -> list[int]:
    """``size`` cards from ``pool``, uniform among those sets with at least one
    card that can move a beaver (MLB-4.0, MLB-4.1)."""
    playable = [c for c in pool if _movable_beavers(state["pos"], c)]
    others = [c for c in pool if not _movable_beavers(state["pos"], c)]
    good = worlds.split_count(rng, len(playable), len(others), size, range(1, size + 1))
    return rng.sample(playable, good) + rng.sample(others, size - good)


# --------------------------------------------------------------------------
# The working copy of a move: the state copied by its layout (module docstring).
# --------------------------------------------------------------------------
#: the state's lists by key (per seat or per colour copy with ``list``, a
#: list per seat or pile with ``copy_rows``); ``decks``, ``last_play``,
#: ``last_round_end``, ``result`` and any other key are cloned
STATE_COPIERS: core.Copiers = {
    "names": list, "sticks": list, "hands": core.copy_rows, "piles": core.copy_rows,
    "discards": core.copy_rows, "pos": list,
}


# --------------------------------------------------------------------------
# The engine.
# --------------------------------------------------------------------------
class MeinLieberBiber(Game[MeinLieberBiberState, MeinLieberBiberMove]):
    """Mein Lieber Biber: move any beaver, collect sticks, don't tip the raft."""

    id = GAME_ID
    rule_prefix = "MLB"
    title = "Mein Lieber Biber"
    summary = ("Move any of six beavers along a spiral of swim rings to the dam; landing on "
               "a matching ring or the dam earns a stick or a card, tipping the raft costs two.")
    min_players = 2
    max_players = 5
    options = (
        Option("rounds", core.INT, 3, minimum=1, maximum=10,
               description="number of rounds (MLB-2.3); supply exhaustion ends the match earlier"),
        Option("tip_threshold", core.INT, 2700, minimum=1, maximum=6000,
               description="the raft tips when the load's length exceeds this, in thousandths "
                           "of the raft radius (MLB-2.4)"),
        core.first_seat_option(),
        core.deck_option(),
        core.decks_option(),
        core.recall_option("accepted for uniformity; changes nothing here: "
                           "a seat sees exactly its own hand (MLB-5.5)"),
    )
    declaration = DECLARATION
    handlers = HANDLERS
    #: no draw after a move (MLB-4.8, D7); elsewhere the first listed move (MLB-4.9)
    fallback_types = (MOVE_PASS,)
    state_copiers = STATE_COPIERS

    def canonical_deck(self, options: dict[str, Any]) -> list[str]:
        return list(CARDS)

    def setup(self, draft: Draft[MeinLieberBiberState], names: list[str], seed: int, options: dict[str, Any]) -> None:
        _setup(draft, names, seed, options)

    def to_act(self, state: MeinLieberBiberState) -> list[int]:
        """MLB-4.0: the seat whose turn it is while active; nobody once finished."""
        return [state["turn"]] if state["status"] == ACTIVE else []

    def seat_moves(self, state: MeinLieberBiberState, seat: int) -> list[MeinLieberBiberMove]:
        return _seat_moves(state, seat)

    def why_illegal(self, state: MeinLieberBiberState, seat: int, move: PostedMove,
                    legal: list[MeinLieberBiberMove]) -> str:
        """MLB-4.10: say which rule refuses the move (only public or own facts)."""
        return _why_illegal(state, seat, move) or super().why_illegal(state, seat, move, legal)

    def players_view(self, state: MeinLieberBiberState, viewer: Viewer) -> list[dict[str, Any]]:
        return _players_view(state, viewer)

    def board_view(self, state: MeinLieberBiberState, viewer: Viewer) -> dict[str, Any]:
        return _board_view(state, viewer)

    def scores_of(self, state: MeinLieberBiberState) -> list[int]:
        """The score is the sticks held (MLB-6.2)."""
        return list(state["sticks"])

    def deal_world(self, state: MeinLieberBiberState, seat: int, seed: int,
                   events: Sequence[core.Event]) -> MeinLieberBiberState:
        return _deal_world(state, seat, seed, events)
