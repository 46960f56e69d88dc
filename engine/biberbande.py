"""Biberbande Schnupperspiel (``biberbande``): remember and improve four face-down cards.

Each seat has a display of four face-down cards (slots 0–3) and knows only what
it has seen.  On its turn a seat draws or takes the face-up discard, swaps,
peeks or draws twice, and from turn n on may knock; the others then get one
more turn each.  Specials left in a display are replaced at the end of the
round; the lowest total after all rounds wins.

Rules: docs/games/biberbande.md (rule ids BB-n.m, decisions Dn).

BiberbandeState (the snapshot: a plain JSON dict, never mutated once returned):

* Cards are stored as one-character codes (:data:`CODEC`) so the snapshot
  stays small (≤ 4 KB after 20 rounds with 6 players): the number cards
  ``"0"``…``"9"`` are their own code, ``"s"`` = ``"swap"``, ``"p"`` =
  ``"peek"``, ``"d"`` = ``"draw2"``.  Views and events always use the card
  ids of BB-1.1.
* ``status``, ``result``, ``names``, ``seed`` and the options ``first_seat``,
  ``rounds``, ``recall``, ``turn_limit``; ``decks``: the stacked decks of
  ``options.deck``/``options.decks`` (encoded), one per round.
* ``scores``; ``history``: per finished round ``[knocker, reason, displays]``
  with the displays after replacement as one 4n-character string, seat by seat.
* The round: ``round``, ``phase``, ``turn``, ``knocker``, ``knock_turn``,
  ``reshuffles``; ``display``: one 4-character string per seat; ``discard``:
  the discard pile as a string, bottom → top; ``draw``: the draw pile as a
  string, next card first; ``held``/``stage``: the held card and why it was
  drawn; ``known``: per seat, per slot, the bit mask of seats that know that
  physical card (BB-5.5).
"""
from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypedDict, cast

from engine import core, worlds
from engine import declaration as d
from engine.core import ACTIVE, FINISHED, INT, CoreState, Draft, Event, Option, PostedMove, Viewer

GAME_ID = "biberbande"


class BiberbandeState(CoreState):
    """The snapshot (module docstring), cards as one-character codes."""

    names: list[str]
    seed: int
    first_seat: int
    rounds: int
    recall: str
    turn_limit: int
    decks: list[str]
    scores: list[int]
    #: per finished round ``[knocker, reason, displays]``
    history: list[list[Any]]
    round: int
    turn: int
    knocker: int | None
    knock_turn: int | None
    reshuffles: int
    display: list[str]
    discard: str
    draw: str
    held: str | None
    stage: str | None
    known: list[list[int]]

# --- cards (BB-1.1, BB-1.2) ------------------------------------------------
SWAP, PEEK, DRAW2 = "swap", "peek", "draw2"
CANONICAL: tuple[str, ...] = tuple(
    [str(v) for v in range(9) for _ in range(4)] + ["9"] * 9
    + [SWAP] * 9 + [PEEK] * 7 + [DRAW2] * 5)
CODEC = core.CardCodec({SWAP: "s", PEEK: "p", DRAW2: "d", **{str(v): str(v) for v in range(10)}})
_VALUE = {code: int(code) if code.isdigit() else 0 for code in CODEC.card}
SLOTS = range(4)
OUTER_SLOTS = (0, 3)

# --- phases, stages, moves, reasons -----------------------------------------
PHASE_ACTION, PHASE_DRAWN, PHASE_SECOND_DRAW, PHASE_KNOCK, PHASE_FINISHED = (
    "action", "drawn", "second_draw", "knock", "finished")
STAGE_ACTION, STAGE_DRAW2_FIRST, STAGE_DRAW2_SECOND = "action", "draw2_first", "draw2_second"

MOVE_DRAW: Final = "draw"
MOVE_TAKE_DISCARD: Final = "take_discard"
MOVE_SWAP_DRAWN: Final = "swap_drawn"
MOVE_DISCARD_DRAWN: Final = "discard_drawn"
MOVE_USE_SWAP: Final = "use_swap"
MOVE_USE_PEEK: Final = "use_peek"
MOVE_USE_DRAW2: Final = "use_draw2"
MOVE_SKIP_DRAW: Final = "skip_draw"
MOVE_KNOCK: Final = "knock"
MOVE_END_TURN: Final = "end_turn"

REASON_KNOCK, REASON_TURN_LIMIT, REASON_STUCK = "knock", "turn_limit", "stuck"


# --- the moves as listed, one TypedDict per move type (BB-4; DECLARATION) ------------
class Draw(TypedDict):
    type: Literal["draw"]


class TakeDiscard(TypedDict):
    type: Literal["take_discard"]
    slot: int


class SwapDrawn(TypedDict):
    type: Literal["swap_drawn"]
    slot: int


class DiscardDrawn(TypedDict):
    type: Literal["discard_drawn"]


class UseSwap(TypedDict):
    type: Literal["use_swap"]
    slot: int
    target_seat: int
    target_slot: int


class UsePeek(TypedDict):
    type: Literal["use_peek"]
    slot: int


class UseDraw2(TypedDict):
    type: Literal["use_draw2"]


class SkipDraw(TypedDict):
    type: Literal["skip_draw"]


class Knock(TypedDict):
    type: Literal["knock"]


class EndTurn(TypedDict):
    type: Literal["end_turn"]


BiberbandeMove = (Draw | TakeDiscard | SwapDrawn | DiscardDrawn | UseSwap | UsePeek | UseDraw2 | SkipDraw
                  | Knock | EndTurn)


# --- the events' fields besides type and seat, one TypedDict per event type (BB-8; DECLARATION) ---
class RoundStarted(TypedDict):
    round: int
    starter: int


class Dealt(TypedDict):
    displays: list[list[str]]
    discard: list[str]


class Turn(TypedDict):
    """``turn_started`` and ``knocked``: the turn."""

    turn: int


class Reshuffled(TypedDict):
    count: int


class Drew(TypedDict):
    card: str
    stage: str


class SlotExchanged(TypedDict):
    """``took_discard`` and ``swapped_drawn``: the slot, its new card and the discarded one."""

    slot: int
    card: str
    discarded: str


class DiscardedDrawn(TypedDict):
    card: str


class UsedSwap(TypedDict):
    slot: int
    target_seat: int
    target_slot: int


class UsedPeek(TypedDict):
    slot: int
    card: str


class RoundEnded(TypedDict):
    reason: str
    knocker: int | None
    displays: list[list[str]]


class Replaced(TypedDict):
    slot: int
    special: str
    discarded: list[str]
    card: str | None


class RoundScored(TypedDict):
    round: int
    points: list[int]
    scores: list[int]


class MatchEnded(TypedDict):
    result: dict[str, Any]


EVENT_ROUND_STARTED = d.EventKind("round_started", RoundStarted)
EVENT_DEALT = d.EventKind("dealt", Dealt)
EVENT_TURN_STARTED = d.EventKind("turn_started", Turn)
EVENT_RESHUFFLED = d.EventKind("reshuffled", Reshuffled)
EVENT_DREW = d.EventKind("drew", Drew)
EVENT_TOOK_DISCARD = d.EventKind("took_discard", SlotExchanged)
EVENT_SWAPPED_DRAWN = d.EventKind("swapped_drawn", SlotExchanged)
EVENT_DISCARDED_DRAWN = d.EventKind("discarded_drawn", DiscardedDrawn)
EVENT_USED_SWAP = d.EventKind("used_swap", UsedSwap)
EVENT_USED_PEEK = d.EventKind("used_peek", UsedPeek)
EVENT_USED_DRAW2 = d.EventKind("used_draw2", d.NoFields)
EVENT_SKIPPED_DRAW = d.EventKind("skipped_draw", d.NoFields)
EVENT_KNOCKED = d.EventKind("knocked", Turn)
EVENT_ENDED_TURN = d.EventKind("ended_turn", d.NoFields)
EVENT_ROUND_ENDED = d.EventKind("round_ended", RoundEnded)
EVENT_REPLACED = d.EventKind("replaced", Replaced)
EVENT_ROUND_SCORED = d.EventKind("round_scored", RoundScored)
EVENT_MATCH_ENDED = d.EventKind("match_ended", MatchEnded)


# --- pure rules helpers --------------------------------------------------------
def _is_number(code: str) -> bool:
    """BB-1.1: ``"0"``…``"9"`` are number cards; the rest are specials."""
    return code.isdigit()


def _n(state: BiberbandeState) -> int:
    return len(state["names"])


def _starter(state: BiberbandeState, round_no: int | None = None) -> int:
    """BB-3.1: s_r = (first_seat + r − 1) mod n."""
    r: int = state["round"] if round_no is None else round_no
    first: int = state["first_seat"]
    return (first + r - 1) % _n(state)


def _current(state: BiberbandeState) -> int:
    """BB-4: turn t belongs to (s_r + t − 1) mod n."""
    t: int = state["turn"]
    return (_starter(state) + t - 1) % _n(state)


def _max_turn(state: BiberbandeState) -> int:
    """BB-4.9: T = turn_limit · n."""
    limit: int = state["turn_limit"]
    return limit * _n(state)


def _last_turn(state: BiberbandeState) -> int | None:
    """BB-4.6: after a knock in turn k, the round's last turn is k + n − 1."""
    return None if state["knock_turn"] is None else state["knock_turn"] + _n(state) - 1


def _can_draw(state: BiberbandeState) -> bool:
    """BB-4.10: False only in the (unreachable) stuck position."""
    return bool(state["draw"]) or len(state["discard"]) > 1


def _points(row: str) -> int:
    """BB-6.3: the sum of the four values (an unreplaceable special scores 0, BB-4.10)."""
    return sum(map(_VALUE.__getitem__, row))


def _action_moves(state: BiberbandeState) -> list[BiberbandeMove]:
    """BB-4.1 (and BB-4.10: no ``draw`` when nothing can be drawn)."""
    moves: list[BiberbandeMove] = [{"type": MOVE_DRAW}] if _can_draw(state) else []
    if _is_number(state["discard"][-1]):
        moves += [{"type": MOVE_TAKE_DISCARD, "slot": j} for j in SLOTS]
    return moves


def _held_moves(state: BiberbandeState, seat: int) -> list[BiberbandeMove]:
    """BB-4.2: the moves for the held card, then ``discard_drawn``."""
    held = state["held"]
    assert held is not None  # phase drawn: a card is held
    moves: list[BiberbandeMove]
    if _is_number(held):
        moves = [{"type": MOVE_SWAP_DRAWN, "slot": j} for j in SLOTS]
    elif held == CODEC.code[SWAP]:
        moves = [{"type": MOVE_USE_SWAP, "slot": j, "target_seat": s, "target_slot": u}
                 for j in SLOTS for s in range(_n(state)) if s != seat for u in SLOTS]
    elif held == CODEC.code[PEEK]:
        moves = [{"type": MOVE_USE_PEEK, "slot": j} for j in SLOTS]
    else:
        moves = [{"type": MOVE_USE_DRAW2}]
    moves.append({"type": MOVE_DISCARD_DRAWN})
    return moves


def _seat_moves(state: BiberbandeState, seat: int) -> list[BiberbandeMove]:
    """BB-4.1–BB-4.7: the legal moves of the current seat in its phase."""
    phase = state["phase"]
    if phase == PHASE_ACTION:
        return _action_moves(state)
    if phase == PHASE_DRAWN:
        return _held_moves(state, seat)
    if phase == PHASE_SECOND_DRAW:
        second: list[BiberbandeMove] = [{"type": MOVE_DRAW}] if _can_draw(state) else []
        return [*second, {"type": MOVE_SKIP_DRAW}]
    return [{"type": MOVE_KNOCK}, {"type": MOVE_END_TURN}]


def _why_illegal(state: BiberbandeState, seat: int, move: PostedMove, legal: list[BiberbandeMove]) -> str | None:
    """The rule a refused move breaks (BB-4.1, BB-4.2, BB-4.5, BB-4.7, BB-1.4), or None."""
    kind = move.get("type")
    if kind == MOVE_TAKE_DISCARD and state["phase"] == PHASE_ACTION and not _is_number(state["discard"][-1]):
        return "take_discard needs a number card on top of the discard pile (BB-4.1, D5)"
    if kind == MOVE_USE_SWAP and move.get("target_seat") == seat:
        return "use_swap needs another seat as target_seat; own-display swaps are not allowed (BB-4.2, D9)"
    if kind == MOVE_KNOCK and state["phase"] != PHASE_KNOCK:
        return ("knock is offered only after your action, from turn n on, once per round "
                "(BB-4.5, BB-4.7)")
    if "slot" in move and kind in {m["type"] for m in legal} and move["slot"] not in list(SLOTS):
        return "slot must be an integer 0…3 (BB-1.4)"
    return None


# --- state changes shared by the handlers ----------------------------------------
def _put(state: BiberbandeState, seat: int, slot: int, code: str) -> str:
    """Place ``code`` in a display slot; return the card it replaces."""
    row: str = state["display"][seat]
    state["display"][seat] = row[:slot] + code + row[slot + 1:]
    return row[slot]


def _discard(state: BiberbandeState, code: str) -> None:
    """Put a card face up on the discard pile (BB-5.3)."""
    state["discard"] += code


def _release_held(state: BiberbandeState) -> str:
    """Put the held card face up on the discard pile; return it."""
    code = state["held"]
    assert code is not None  # only called while a card is held
    _discard(state, code)
    state["held"] = state["stage"] = None
    return code


def _reshuffle(draft: Draft[BiberbandeState]) -> None:
    """BB-3.6: all but the top discard, shuffled with key k, become the draw pile."""
    state = draft.state
    state["reshuffles"] += 1
    pile = state["discard"][:-1]
    key = core.reshuffle_key(GAME_ID, state["seed"], state["round"], state["reshuffles"])
    state["draw"] = CODEC.encode(core.seeded_shuffle(CODEC.decode(pile), key))
    state["discard"] = state["discard"][-1]
    draft.emit(EVENT_RESHUFFLED, None, count=state["reshuffles"])


def _take_top(draft: Draft[BiberbandeState]) -> str | None:
    """Draw the next card (reshuffling first if needed, D6); None when stuck (BB-4.10)."""
    state = draft.state
    if not state["draw"]:
        if len(state["discard"]) <= 1:
            return None
        _reshuffle(draft)
    code: str = state["draw"][0]
    state["draw"] = state["draw"][1:]
    return code


def _draw_to_hand(draft: Draft[BiberbandeState], seat: int, stage: str) -> bool:
    """Draw into the held card (BB-4.1, BB-4.3, BB-4.4); False when stuck."""
    code = _take_top(draft)
    if code is None:
        return False
    state = draft.state
    state["held"], state["stage"], state["phase"] = code, stage, PHASE_DRAWN
    draft.emit(EVENT_DREW, seat, card=CODEC.card[code], stage=stage)
    return True


# --- setup (BB-3) --------------------------------------------------------------------
def _setup(draft: Draft[BiberbandeState], names: list[str], seed: int, options: dict[str, Any]) -> None:
    """BB-2, BB-3: the match from validated options, then round 1."""
    decks = options.get("decks") or ([options["deck"]] if options.get("deck") else [])
    draft.state.update({
        "status": ACTIVE, "result": None, "names": list(names), "seed": seed,
        "first_seat": options["first_seat"], "rounds": options["rounds"],
        "recall": options["recall"], "turn_limit": options["turn_limit"],
        "decks": [CODEC.encode(d) for d in decks],
        "scores": [0] * len(names), "history": [], "round": 0,
    })
    _start_round(draft, 1)


def _start_round(draft: Draft[BiberbandeState], round_no: int) -> None:
    """BB-3.1–BB-3.5: deal round r and give turn 1 to its starter."""
    state = draft.state
    n = _n(state)
    starter = _starter(state, round_no)
    stacked = {"decks": [CODEC.decode(d) for d in state["decks"]]}
    deck = CODEC.encode(core.round_deck(GAME_ID, state["seed"], round_no, CANONICAL, stacked))
    display = [""] * n
    for i in range(4 * n):  # BB-3.3, D1: round-robin from the starter, slot by slot
        display[(starter + i) % n] += deck[i]
    state.update({
        "round": round_no, "phase": PHASE_ACTION, "turn": 1, "knocker": None, "knock_turn": None,
        "reshuffles": 0, "display": display, "discard": deck[4 * n], "draw": deck[4 * n + 1:],
        "held": None, "stage": None,
        "known": [[core.only(s) if j in OUTER_SLOTS else core.NOBODY for j in SLOTS]
                  for s in range(n)],
    })
    draft.emit(EVENT_ROUND_STARTED, None, round=round_no, starter=starter)
    draft.emit(EVENT_DEALT, None, displays=[CODEC.decode(row) for row in display],
              discard=[CODEC.card[deck[4 * n]]])
    draft.emit(EVENT_TURN_STARTED, starter, turn=1)


# --- turn sequencing (BB-4.5, BB-4.6, BB-4.8) ----------------------------------------
def _action_complete(draft: Draft[BiberbandeState]) -> None:
    """BB-4.6: last turn after a knock → round end; else knock decision (BB-4.5) or next turn."""
    state = draft.state
    if state["knock_turn"] is not None and state["turn"] == _last_turn(state):
        _end_round(draft, REASON_KNOCK)
    elif state["knocker"] is None and state["turn"] >= _n(state):
        state["phase"] = PHASE_KNOCK
    else:
        _next_turn(draft)


def _next_turn(draft: Draft[BiberbandeState]) -> None:
    """BB-4.8; BB-4.10: an action phase without legal moves ends the round."""
    state = draft.state
    state["turn"] += 1
    state["phase"] = PHASE_ACTION
    draft.emit(EVENT_TURN_STARTED, _current(state), turn=state["turn"])
    if not _action_moves(state):
        _end_round(draft, REASON_STUCK)


# --- end of round, scoring, end of match (BB-6) ----------------------------------------
def _end_round(draft: Draft[BiberbandeState], reason: str) -> None:
    """BB-6.1–BB-6.4: reveal, replace specials, score, then next round or match end."""
    state = draft.state
    n = _n(state)
    draft.emit(EVENT_ROUND_ENDED, None, reason=reason, knocker=state["knocker"],
              displays=[CODEC.decode(row) for row in state["display"]])
    state["known"] = [[core.everyone(n)] * 4 for _ in range(n)]  # BB-6.1: all revealed
    first = state["knocker"] if state["knocker"] is not None else _starter(state)
    for seat in core.seats_from(first, n):
        for slot in SLOTS:
            if not _is_number(state["display"][seat][slot]):
                _replace(draft, seat, slot)
    points = [_points(row) for row in state["display"]]
    state["scores"] = [a + b for a, b in zip(state["scores"], points)]
    state["history"].append([state["knocker"], reason, "".join(state["display"])])
    draft.emit(EVENT_ROUND_SCORED, None, round=state["round"], points=points, scores=list(state["scores"]))
    if state["round"] < state["rounds"]:
        _start_round(draft, state["round"] + 1)
    else:
        _end_match(draft)


def _replace(draft: Draft[BiberbandeState], seat: int, slot: int) -> None:
    """BB-6.2, D13: draw until a number; drawn specials are discarded at once."""
    state = draft.state
    special = state["display"][seat][slot]
    drawn_specials: list[str] = []
    number = None
    while number is None:
        code = _take_top(draft)
        if code is None:  # BB-4.10: the special stays and scores 0
            break
        if _is_number(code):
            number = code
        else:
            _discard(state, code)
            drawn_specials.append(CODEC.card[code])
    if number is not None:
        _put(state, seat, slot, number)
        _discard(state, special)
    draft.emit(EVENT_REPLACED, seat, slot=slot, special=CODEC.card[special], discarded=drawn_specials,
              card=None if number is None else CODEC.card[number])


def _end_match(draft: Draft[BiberbandeState]) -> None:
    """BB-6.4, BB-6.5: lowest total wins; ties share a place (D18)."""
    state = draft.state
    state.update({"status": FINISHED, "phase": PHASE_FINISHED,
                  "result": core.make_result(state["scores"], lowest_wins=True)})
    draft.emit(EVENT_MATCH_ENDED, None, result=core.make_result(state["scores"], lowest_wins=True))


# --- move handlers (BB-4) ----------------------------------------------------------------
def _do_draw(draft: Draft[BiberbandeState], seat: int, move: Draw) -> None:
    """Action A (BB-4.1) or the second draw of Draw Twice (BB-4.4)."""
    stage = STAGE_ACTION if draft.state["phase"] == PHASE_ACTION else STAGE_DRAW2_SECOND
    _draw_to_hand(draft, seat, stage)


def _do_take_discard(draft: Draft[BiberbandeState], seat: int, move: TakeDiscard) -> None:
    """Action B (BB-4.1): the face-up card becomes known to all (BB-5.5, D15)."""
    state = draft.state
    slot = move["slot"]
    card = state["discard"][-1]
    state["discard"] = state["discard"][:-1]
    old = _put(state, seat, slot, card)
    _discard(state, old)
    state["known"][seat][slot] = core.everyone(_n(state))
    draft.emit(EVENT_TOOK_DISCARD, seat, slot=slot, card=CODEC.card[card], discarded=CODEC.card[old])
    _action_complete(draft)


def _do_swap_drawn(draft: Draft[BiberbandeState], seat: int, move: SwapDrawn) -> None:
    """BB-4.3: the slot card goes face up, the held number takes its place (known to the placer)."""
    state = draft.state
    slot = move["slot"]
    held = state["held"]
    assert held is not None  # swap_drawn is legal only while a card is held
    state["held"] = state["stage"] = None
    old = _put(state, seat, slot, held)
    _discard(state, old)
    state["known"][seat][slot] = core.only(seat)
    draft.emit(EVENT_SWAPPED_DRAWN, seat, slot=slot, card=CODEC.card[held], discarded=CODEC.card[old])
    _action_complete(draft)


def _do_discard_drawn(draft: Draft[BiberbandeState], seat: int, move: DiscardDrawn) -> None:
    """BB-4.3: discarding the first Draw Twice card unused allows a second draw (D8)."""
    state = draft.state
    first_of_draw2 = state["stage"] == STAGE_DRAW2_FIRST
    card = _release_held(state)
    draft.emit(EVENT_DISCARDED_DRAWN, seat, card=CODEC.card[card])
    if first_of_draw2:
        state["phase"] = PHASE_SECOND_DRAW
    else:
        _action_complete(draft)


def _do_use_swap(draft: Draft[BiberbandeState], seat: int, move: UseSwap) -> None:
    """BB-4.3: exchange own slot j with seat s's slot u; knowers move with the cards (BB-5.5)."""
    state = draft.state
    _release_held(state)
    slot, other, other_slot = move["slot"], move["target_seat"], move["target_slot"]
    mine = _put(state, seat, slot, state["display"][other][other_slot])
    _put(state, other, other_slot, mine)
    known = state["known"]
    known[seat][slot], known[other][other_slot] = known[other][other_slot], known[seat][slot]
    draft.emit(EVENT_USED_SWAP, seat, slot=slot, target_seat=other, target_slot=other_slot)
    _action_complete(draft)


def _do_use_peek(draft: Draft[BiberbandeState], seat: int, move: UsePeek) -> None:
    """BB-4.3: look at an own card (D10)."""
    state = draft.state
    _release_held(state)
    slot = move["slot"]
    state["known"][seat][slot] |= core.only(seat)
    draft.emit(EVENT_USED_PEEK, seat, slot=slot, card=CODEC.card[state["display"][seat][slot]])
    _action_complete(draft)


def _do_use_draw2(draft: Draft[BiberbandeState], seat: int, move: UseDraw2) -> None:
    """BB-4.3, D8: the first draw is automatic (BB-4.10: none when stuck)."""
    _release_held(draft.state)
    draft.emit(EVENT_USED_DRAW2, seat)
    if not _draw_to_hand(draft, seat, STAGE_DRAW2_FIRST):
        _action_complete(draft)


def _do_skip_draw(draft: Draft[BiberbandeState], seat: int, move: SkipDraw) -> None:
    """BB-4.4: no second draw."""
    draft.emit(EVENT_SKIPPED_DRAW, seat)
    _action_complete(draft)


def _do_knock(draft: Draft[BiberbandeState], seat: int, move: Knock) -> None:
    """BB-4.7: knock_turn = t; the others get one more turn each."""
    state = draft.state
    state["knocker"], state["knock_turn"] = seat, state["turn"]
    draft.emit(EVENT_KNOCKED, seat, turn=state["turn"])
    _next_turn(draft)


def _do_end_turn(draft: Draft[BiberbandeState], seat: int, move: EndTurn) -> None:
    """BB-4.7, BB-4.9: the round ends after turn T when nobody knocked."""
    draft.emit(EVENT_ENDED_TURN, seat)
    if draft.state["turn"] == _max_turn(draft.state):
        _end_round(draft, REASON_TURN_LIMIT)
    else:
        _next_turn(draft)


HANDLERS: dict[str, core.Handler] = {
    MOVE_DRAW: _do_draw, MOVE_TAKE_DISCARD: _do_take_discard,
    MOVE_SWAP_DRAWN: _do_swap_drawn, MOVE_DISCARD_DRAWN: _do_discard_drawn,
    MOVE_USE_SWAP: _do_use_swap, MOVE_USE_PEEK: _do_use_peek,
    MOVE_USE_DRAW2: _do_use_draw2, MOVE_SKIP_DRAW: _do_skip_draw,
    MOVE_KNOCK: _do_knock, MOVE_END_TURN: _do_end_turn,
}


# --- views (BB-5, BB-7) ------------------------------------------------------------------
def _players_view(state: BiberbandeState, viewer: Viewer) -> list[dict[str, Any]]:
    """BB-7.1: display cards to the admin, or to everyone once finished (BB-5.1);
    ``known`` per BB-5.6."""
    shown = state["status"] == FINISHED or viewer.is_admin
    seer = core.recall_mask(viewer, state["recall"])
    return [_player_view(s, name, state["display"][s], state["known"][s], shown, seer)
            for s, name in enumerate(state["names"])]


def _player_view(seat: int, name: str, row: str, masks: list[int], shown: bool, seer: int) -> dict[str, Any]:
    """One seat of BB-7.1: its display if ``shown``; ``known``: the cards whose
    knowers include ``seer`` (:func:`core.recall_mask`, BB-5.6)."""
    return {"seat": seat, "name": name, "display": CODEC.decode(row) if shown else [None] * len(row),
            "known": [CODEC.card[c] if mask & seer else None for c, mask in zip(row, masks)] if seer
            else [None] * len(row)}


def _board_view(state: BiberbandeState, viewer: Viewer) -> dict[str, Any]:
    """BB-7.2: the held card to its holder (BB-5.2), the draw order to the admin (BB-5.3)."""
    current = _current(state)
    held = state["held"]
    drawn = None if held is None else {
        "seat": current, "card": CODEC.card[held] if viewer.sees_private(current) else None,
        "stage": state["stage"]}
    return {"starter": _starter(state), "turn": state["turn"], "current_seat": current,
            "turn_limit": state["turn_limit"], "max_turn": _max_turn(state),
            "knocker": state["knocker"], "knock_turn": state["knock_turn"],
            "last_turn": _last_turn(state), "draw_count": len(state["draw"]),
            "draw_pile": CODEC.decode(state["draw"]) if viewer.is_admin else None,
            "discard": CODEC.decode(state["discard"]),
            "drawn": drawn, "history": _history_view(state)}


def _history_view(state: BiberbandeState) -> list[dict[str, Any]]:
    """Finished rounds, public (BB-6.1 reveals every display; D20)."""
    out = []
    for i, (knocker, reason, codes) in enumerate(state["history"]):
        displays, points = _scored_displays(codes)
        out.append({"round": i + 1, "starter": _starter(state, i + 1), "knocker": knocker,
                    "reason": reason, "displays": [list(row) for row in displays], "points": list(points)})
    return out


@functools.lru_cache(maxsize=4096)
def _scored_displays(codes: str) -> tuple[tuple[tuple[str, ...], ...], tuple[int, ...]]:
    """A finished round's displays (four codes a seat) as card ids, and their
    points (BB-6.3).  Memoized: every view repeats the whole history; the
    view copies the tuples into fresh lists."""
    rows = [codes[k:k + 4] for k in range(0, len(codes), 4)]
    return tuple(tuple(CODEC.decode(row)) for row in rows), tuple(_points(row) for row in rows)


def _redact_dealt(event: Mapping[str, Any], viewer: Viewer) -> list[list[str | None]]:
    """BB-3.4, BB-5.7: each seat sees its own outer slots of the deal; spectators none."""
    return [[card if viewer.is_seat(s) and j in OUTER_SLOTS else None for j, card in enumerate(row)]
            for s, row in enumerate(event["displays"])]


# --- the declaration: moves BB-4, view BB-7, events BB-5.7 and BB-8 ----------------------
CARD = d.enum(*[str(v) for v in range(10)], SWAP, PEEK, DRAW2)
SLOT = {**d.enum(*SLOTS), "description": "display slot, 0…3"}
STAGE = d.enum(STAGE_ACTION, STAGE_DRAW2_FIRST, STAGE_DRAW2_SECOND)
DISPLAY = d.array(d.nullable(CARD), minItems=4, maxItems=4)
REASON = d.enum(REASON_KNOCK, REASON_TURN_LIMIT, REASON_STUCK)
RESULT = d.obj({"scores": d.array(d.INT), "ranking": d.array(d.array(d.SEAT)), "winners": d.array(d.SEAT)})
HIDDEN_CARD = d.nullable(CARD, d.HIDDEN)
pub, own = d.public, d.private

DECLARATION = d.Declaration(
    moves=(
        d.MoveType(MOVE_DRAW, typed=Draw,
                   doc="Action A: draw the top card (BB-4.1); second_draw: the second Draw Twice draw (BB-4.4)"),
        d.MoveType(MOVE_TAKE_DISCARD, {"slot": SLOT}, typed=TakeDiscard,
                   doc="Action B: the top discard (a number) into slot j (BB-4.1)"),
        d.MoveType(MOVE_SWAP_DRAWN, {"slot": SLOT},
                   typed=SwapDrawn, doc="the held number into slot j; the slot card to the discard pile (BB-4.3)"),
        d.MoveType(MOVE_DISCARD_DRAWN, typed=DiscardDrawn, doc="discard the held card unused (BB-4.3)"),
        d.MoveType(MOVE_USE_SWAP, {"slot": SLOT, "target_seat": d.SEAT, "target_slot": SLOT},
                   typed=UseSwap, doc="exchange own slot j with another seat's slot (BB-4.3, D9)"),
        d.MoveType(MOVE_USE_PEEK, {"slot": SLOT}, typed=UsePeek, doc="look at own slot j (BB-4.3, D10)"),
        d.MoveType(MOVE_USE_DRAW2, typed=UseDraw2,
                   doc="Draw Twice: the engine draws the first card at once (BB-4.3, D8)"),
        d.MoveType(MOVE_SKIP_DRAW, typed=SkipDraw, doc="no second Draw Twice draw (BB-4.4)"),
        d.MoveType(MOVE_KNOCK, typed=Knock, doc="knock (BB-4.5, BB-4.7)"),
        d.MoveType(MOVE_END_TURN, typed=EndTurn, doc="do not knock (BB-4.7)"),
    ),
    events=(
        d.EventType(EVENT_ROUND_STARTED, {"round": pub(d.INT), "starter": pub(d.SEAT)}),
        d.EventType(EVENT_DEALT, {
            "displays": d.redacted(d.array(DISPLAY, description="per seat; the glimpsed cards only to their seat"),
                                   _redact_dealt),
            "discard": pub(d.array(CARD))}),
        d.EventType(EVENT_TURN_STARTED, {"turn": pub(d.INT)}),
        d.EventType(EVENT_RESHUFFLED, {"count": pub(d.INT)}),
        d.EventType(EVENT_DREW, {"card": own(HIDDEN_CARD), "stage": pub(STAGE)},
                    doc="BB-4.2: the card only to the drawing seat"),
        d.EventType(EVENT_TOOK_DISCARD, {"slot": pub(SLOT), "card": pub(CARD), "discarded": pub(CARD)}),
        d.EventType(EVENT_SWAPPED_DRAWN, {"slot": pub(SLOT), "card": own(HIDDEN_CARD), "discarded": pub(CARD)},
                    doc="the kept card only to its seat"),
        d.EventType(EVENT_DISCARDED_DRAWN, {"card": pub(CARD)}),
        d.EventType(EVENT_USED_SWAP, {"slot": pub(SLOT), "target_seat": pub(d.SEAT), "target_slot": pub(SLOT)}),
        d.EventType(EVENT_USED_PEEK, {"slot": pub(SLOT), "card": own(HIDDEN_CARD)},
                    doc="BB-4.5: the card only to its seat"),
        d.EventType(EVENT_USED_DRAW2),
        d.EventType(EVENT_SKIPPED_DRAW),
        d.EventType(EVENT_KNOCKED, {"turn": pub(d.INT)}),
        d.EventType(EVENT_ENDED_TURN),
        d.EventType(EVENT_ROUND_ENDED, {"reason": pub(REASON), "knocker": pub(d.nullable(d.SEAT)),
                                        "displays": pub(d.array(DISPLAY))}),
        d.EventType(EVENT_REPLACED, {
            "slot": pub(SLOT), "special": pub(CARD), "discarded": pub(d.array(CARD)),
            "card": pub(d.nullable(CARD, "the number card that replaced the special; null if none was left"))}),
        d.EventType(EVENT_ROUND_SCORED, {"round": pub(d.INT), "points": pub(d.array(d.INT)),
                                         "scores": pub(d.array(d.INT))}),
        d.EventType(EVENT_MATCH_ENDED, {"result": pub(RESULT)}),
    ),
    player={
        "display": d.array(HIDDEN_CARD, minItems=4, maxItems=4),
        "known": d.array(d.nullable(CARD), minItems=4, maxItems=4,
                         description='recall "perfect", seat viewers only: the values this seat has seen'),
    },
    board_view={
        "starter": d.SEAT, "turn": d.INT, "current_seat": d.SEAT, "turn_limit": d.INT, "max_turn": d.INT,
        "knocker": d.nullable(d.SEAT), "knock_turn": d.nullable(d.INT), "last_turn": d.nullable(d.INT),
        "draw_count": d.INT,
        "draw_pile": d.nullable(d.array(CARD), "the draw order: admin only"),
        "discard": d.array(CARD, description="bottom first"),
        "drawn": d.nullable(d.obj({"seat": d.SEAT, "card": HIDDEN_CARD, "stage": STAGE}), "the card in hand, if any"),
        "history": d.array(d.obj({"round": d.INT, "starter": d.SEAT, "reason": REASON, "knocker": d.nullable(d.SEAT),
                                  "displays": d.array(DISPLAY), "points": d.array(d.INT)})),
    },
    view_recall={"known": "display"},  # BB-5.6: known[i] is display[i] as the seat saw it
    presets={"short": {"rounds": 1}, "variant": {"recall": "none", "rounds": 1},
             "play": {"rounds": 2, "turn_limit": 10}},
    bot="bots.biberbande",
    board="biberbande.js",
    docs="docs/games/biberbande.md",
)
#: the game's own event types (the worlds read their cards as a seat saw them)
_OWN_EVENTS = {e.type: e for e in DECLARATION.events}


# --- the working copy of a move: the state copied by its layout (module docstring) ---
#: the state's lists by key (lists of strings or ints copy with ``list``,
#: ``history`` and ``known`` hold a list per round or seat); ``result`` and
#: any other key are cloned
STATE_COPIERS: core.Copiers = {
    "names": list, "decks": list, "scores": list, "history": core.copy_rows, "display": list,
    "known": core.copy_rows,
}


# --- determinization (contract "Worlds and simulation"; docs/games/biberbande.md) ---------
#: the pool label of a card that was face up when it reached its slot (BB-5.5, D15)
FACE_UP = -1
#: the events of a used special, which goes face up first (BB-4.3)
_USED_SPECIAL = {EVENT_USED_SWAP: SWAP, EVENT_USED_PEEK: PEEK, EVENT_USED_DRAW2: DRAW2}


@dataclass
class _Pools:
    """Where the round's hidden cards came from, as the public history says.

    Pool 0 is the round's deck (BB-3.2), pool i the pile of the i-th
    reshuffle (BB-3.6): exactly the discard pile then, but its top card.
    ``gone[i]`` counts the cards of pool i seen going face up since;
    ``slots`` labels every display card with its pool, ``held`` and ``draw``
    label the held card and the draw pile."""

    cards: list[str]
    gone: list[Counter[str]]
    slots: list[list[int]]
    held: int = 0
    draw: int = 0


def _pools_of_deal(state: BiberbandeState) -> _Pools:
    """Before any reshuffle every hidden card comes from the deal, and every
    card that went face up is on the discard pile (BB-5.3)."""
    return _Pools([CODEC.encode(CANONICAL)], [Counter(state["discard"])],
                  [[0] * len(SLOTS) for _ in state["display"]])


def _pools_of_history(state: BiberbandeState, seat: int, events: Sequence[Event]) -> _Pools:
    """The round's events as ``seat`` sees them (BB-5.7), replayed for the
    pools: what went face up from where, and each reshuffled pile."""
    viewer = core.seat_viewer(seat)
    pools = _Pools([CODEC.encode(CANONICAL)], [Counter()], [[0] * len(SLOTS) for _ in state["display"]])
    discard = ""

    def face_up(label: int, card: str) -> None:
        nonlocal discard
        code = CODEC.code[card]
        discard += code
        if label != FACE_UP:
            pools.gone[label][code] += 1

    for e in worlds.round_as_seen(events, _OWN_EVENTS, viewer, EVENT_ROUND_STARTED):
        kind, actor = e["type"], e["seat"]
        if kind == EVENT_DEALT:
            face_up(0, e["discard"][0])
        elif kind == EVENT_DREW:
            pools.held = pools.draw
        elif kind == EVENT_TOOK_DISCARD:
            discard = discard[:-1]
            face_up(pools.slots[actor][e["slot"]], e["discarded"])
            pools.slots[actor][e["slot"]] = FACE_UP
        elif kind == EVENT_SWAPPED_DRAWN:
            face_up(pools.slots[actor][e["slot"]], e["discarded"])
            pools.slots[actor][e["slot"]] = pools.held
        elif kind == EVENT_DISCARDED_DRAWN:
            face_up(pools.held, e["card"])
        elif kind in _USED_SPECIAL:
            face_up(pools.held, _USED_SPECIAL[kind])
        if kind == EVENT_USED_SWAP:
            mine, theirs = pools.slots[actor], pools.slots[e["target_seat"]]
            mine[e["slot"]], theirs[e["target_slot"]] = theirs[e["target_slot"]], mine[e["slot"]]
        elif kind == EVENT_RESHUFFLED:
            pools.cards.append(discard[:-1])
            pools.gone.append(Counter())
            pools.draw, discard = len(pools.cards) - 1, discard[-1]
    if discard != state["discard"]:
        raise ValueError("the events do not lead to this state's discard pile")
    return pools


def _deal_world(state: BiberbandeState, seat: int, seed: int, events: Sequence[Event]) -> BiberbandeState:
    """A world for ``seat``: every display card it knows (BB-5.5, whatever
    ``recall``), its held card and every public card where they are; each
    other display card, another seat's held card and the draw pile dealt
    uniformly from the cards of their pool not seen going face up
    (:class:`_Pools`).  Before the round's first reshuffle the state says it
    all; after one, ``events`` (the match's, at least this round's) tell the
    pools.  Later reshuffles and rounds come from a fresh seed (BB-3.2)."""
    pools = _pools_of_history(state, seat, events) if state["reshuffles"] else _pools_of_deal(state)
    me, current = core.only(seat), _current(state)
    held_hidden = state["held"] is not None and current != seat
    places: list[list[tuple[str, int, int]]] = [[] for _ in pools.cards]
    seen: list[list[str]] = [[] for _ in pools.cards]
    for s, row in enumerate(state["display"]):
        for j, code in enumerate(row):
            label = pools.slots[s][j]
            if state["known"][s][j] & me:
                if label != FACE_UP:
                    seen[label].append(code)
            else:
                places[label].append(("display", s, j))
    if held_hidden:
        places[pools.held].append(("held", 0, 0))
    elif state["held"] is not None:
        seen[pools.held].append(state["held"])
    places[pools.draw] += [("draw", i, 0) for i in range(len(state["draw"]))]
    rng = worlds.world_rng(GAME_ID, seed)
    world = cast(BiberbandeState, core.copy_layout(state, STATE_COPIERS))
    rows = [list(row) for row in state["display"]]
    draw = list(state["draw"])
    for cards, gone, mine, spots in zip(pools.cards, pools.gone, seen, places):
        pool = worlds.unaccounted(cards, [*gone.elements(), *mine])
        for (where, a, b), code in zip(spots, worlds.deal(rng, pool, [len(spots)])[0]):
            if where == "display":
                rows[a][b] = code
            elif where == "held":
                world["held"] = code
            else:
                draw[a] = code
    world.update({"display": ["".join(row) for row in rows], "draw": "".join(draw),
                  "seed": worlds.fresh_seed(rng), "decks": []})
    return world


# --- the game ----------------------------------------------------------------------------
class Biberbande(core.Game[BiberbandeState, BiberbandeMove]):
    """Biberbande: keep the lowest-valued face-down display of four cards."""

    id = GAME_ID
    rule_prefix = "BB"
    title = "Biberbande"
    min_players = 2
    max_players = 6
    summary = ("Swap, peek and remember your four face-down cards; knock when your "
               "display is low — the lowest total after all rounds wins.")
    # ``rounds`` before ``deck``/``decks``: the decks check reads the validated rounds.
    options = (
        Option("rounds", INT, lambda n: 4 if n == 2 else n, minimum=1, maximum=20,
               description="number of rounds (1…20)",
               default_doc="the number of players (4 with 2 players)"),
        core.first_seat_option(),
        core.recall_option(),
        Option("turn_limit", INT, 30, minimum=1, maximum=200,
               description="turns per seat per round before a knock-less round ends (BB-4.9)"),
        core.deck_option(),
        core.decks_option(),
    )
    declaration = DECLARATION
    handlers = HANDLERS
    #: the moves that change nothing on the table: end the turn without knocking
    #: (BB-4.7), skip a second draw (BB-4.4), discard the drawn card (BB-4.3)
    fallback_types = (MOVE_END_TURN, MOVE_SKIP_DRAW, MOVE_DISCARD_DRAWN)
    state_copiers = STATE_COPIERS

    def canonical_deck(self, options: dict[str, Any]) -> list[str]:
        return list(CANONICAL)

    def setup(self, draft: Draft[BiberbandeState], names: list[str], seed: int, options: dict[str, Any]) -> None:
        _setup(draft, names, seed, options)

    def to_act(self, state: BiberbandeState) -> list[int]:
        return [_current(state)] if state["status"] == ACTIVE else []

    def seat_moves(self, state: BiberbandeState, seat: int) -> list[BiberbandeMove]:
        return _seat_moves(state, seat)

    def players_view(self, state: BiberbandeState, viewer: Viewer) -> list[dict[str, Any]]:
        return _players_view(state, viewer)

    def board_view(self, state: BiberbandeState, viewer: Viewer) -> dict[str, Any]:
        return _board_view(state, viewer)

    def why_illegal(self, state: BiberbandeState, seat: int, move: PostedMove, legal: list[BiberbandeMove]) -> str:
        return _why_illegal(state, seat, move, legal) or super().why_illegal(state, seat, move, legal)

    def deal_world(self, state: BiberbandeState, seat: int, seed: int, events: Sequence[Event]) -> BiberbandeState:
        return _deal_world(state, seat, seed, events)
