"""Biberbande Schnupperspiel (``biberbande``): the rules engine.

Rule ids ``BB-x.y`` and decisions ``Dn`` refer to ``spec/games/biberbande.md``.

Snapshot layout (a plain JSON dict, never mutated once returned):

* Cards are stored as one-character codes so the snapshot stays small
  (≤ 4 KB after 20 rounds with 6 players): the number cards ``"0"``…``"9"``
  are their own code, ``"s"`` = ``"swap"``, ``"p"`` = ``"peek"``,
  ``"d"`` = ``"draw2"``.  Views and events always use the card ids of BB-1.1.
* ``display``: one 4-character string per seat (slots 0–3); ``known``: per
  seat, per slot, the bit mask of seats that know that physical card (BB-5.5).
* ``draw``: the draw pile as a string, next card first; ``discard``: the
  discard pile as a string, bottom → top; ``held``/``stage``: the held card.
* ``decks``: the stacked decks of ``options.decks`` (encoded), one per round.
* ``history``: per finished round ``[knocker, reason, displays]`` with the
  displays after replacement as one 4n-character string, seat by seat.
"""
from __future__ import annotations

from typing import Any, Callable

from engine import core
from engine.core import ACTIVE, FINISHED, INT, Event, Move, Option, State, Viewer

GAME_ID = "biberbande"

# --- cards (BB-1.1, BB-1.2) ------------------------------------------------
SWAP, PEEK, DRAW2 = "swap", "peek", "draw2"
CANONICAL: tuple[str, ...] = tuple(
    [str(v) for v in range(9) for _ in range(4)] + ["9"] * 9
    + [SWAP] * 9 + [PEEK] * 7 + [DRAW2] * 5)
_CODE = {SWAP: "s", PEEK: "p", DRAW2: "d", **{str(v): str(v) for v in range(10)}}
_CARD = {code: card for card, code in _CODE.items()}
_VALUE = {code: int(code) if code.isdigit() else 0 for code in _CARD}
SLOTS = range(4)
OUTER_SLOTS = (0, 3)

# --- phases, stages, moves, events, reasons ----------------------------------
ACTION, DRAWN, SECOND_DRAW, KNOCK_PHASE, FINISHED_PHASE = (
    "action", "drawn", "second_draw", "knock", "finished")
STAGE_ACTION, STAGE_DRAW2_FIRST, STAGE_DRAW2_SECOND = "action", "draw2_first", "draw2_second"

DRAW, TAKE_DISCARD, SWAP_DRAWN, DISCARD_DRAWN = "draw", "take_discard", "swap_drawn", "discard_drawn"
USE_SWAP, USE_PEEK, USE_DRAW2, SKIP_DRAW = "use_swap", "use_peek", "use_draw2", "skip_draw"
KNOCK, END_TURN = "knock", "end_turn"

EV_ROUND_STARTED, EV_DEALT, EV_TURN_STARTED, EV_RESHUFFLED = (
    "round_started", "dealt", "turn_started", "reshuffled")
EV_DREW, EV_TOOK_DISCARD, EV_SWAPPED_DRAWN, EV_DISCARDED_DRAWN = (
    "drew", "took_discard", "swapped_drawn", "discarded_drawn")
EV_USED_SWAP, EV_USED_PEEK, EV_USED_DRAW2, EV_SKIPPED_DRAW = (
    "used_swap", "used_peek", "used_draw2", "skipped_draw")
EV_KNOCKED, EV_ENDED_TURN = "knocked", "ended_turn"
EV_ROUND_ENDED, EV_REPLACED, EV_ROUND_SCORED, EV_MATCH_ENDED = (
    "round_ended", "replaced", "round_scored", "match_ended")
#: events whose ``card`` only the actor (and the admin) may see (BB-5.7)
PRIVATE_CARD_EVENTS = frozenset({EV_DREW, EV_SWAPPED_DRAWN, EV_USED_PEEK})

REASON_KNOCK, REASON_TURN_LIMIT, REASON_STUCK = "knock", "turn_limit", "stuck"


def _encode(cards: list[str] | tuple[str, ...]) -> str:
    return "".join(_CODE[c] for c in cards)


def _decode(codes: str) -> list[str]:
    return [_CARD[c] for c in codes]


def _is_number(code: str) -> bool:
    return code.isdigit()


# --- redaction: the one place deciding what a viewer sees (BB-5) -------------
def _private_card(card: str | None, owner: int | None, viewer: Viewer) -> str | None:
    """Held card / drawn, placed or peeked card: holder and admin (BB-5.2, BB-5.7)."""
    return card if viewer.sees_private(owner) else None


def _display_card(card: str, finished: bool, viewer: Viewer) -> str | None:
    """A face-down display card: admin, or everyone once the match is over (BB-5.1)."""
    return card if finished or viewer.is_admin else None


def _dealt_card(card: str, owner: int, slot: int, viewer: Viewer) -> str | None:
    """A freshly dealt card: admin, or its owner for the outer slots (BB-3.4, BB-5.7)."""
    if viewer.is_admin or (viewer.is_seat(owner) and slot in OUTER_SLOTS):
        return card
    return None


def _draw_pile(draw: str, viewer: Viewer) -> list[str] | None:
    """Draw pile order, top first: admin only (BB-5.3)."""
    return _decode(draw) if viewer.is_admin else None


# --- state helpers -----------------------------------------------------------
def _n(state: State) -> int:
    return len(state["names"])


def _starter(state: State, round_no: int | None = None) -> int:
    """BB-3.1: s_r = (first_seat + r − 1) mod n."""
    r = state["round"] if round_no is None else round_no
    return (state["first_seat"] + r - 1) % _n(state)


def _current(state: State) -> int:
    """Turn t belongs to (s_r + t − 1) mod n (BB-4)."""
    return (_starter(state) + state["turn"] - 1) % _n(state)


def _max_turn(state: State) -> int:
    """T = turn_limit · n (BB-4.9)."""
    return state["turn_limit"] * _n(state)


def _last_turn(state: State) -> int | None:
    return None if state["knock_turn"] is None else state["knock_turn"] + _n(state) - 1


def _can_draw(state: State) -> bool:
    """False only in the unreachable stuck position of BB-4.10."""
    return bool(state["draw"]) or len(state["discard"]) > 1


def _put(state: State, seat: int, slot: int, code: str) -> str:
    """Place ``code`` in a display slot; return the card it replaces."""
    row = state["display"][seat]
    state["display"][seat] = row[:slot] + code + row[slot + 1:]
    return row[slot]


def _discard(state: State, code: str) -> None:
    state["discard"] += code


def _points(row: str) -> int:
    """BB-6.3: the sum of the four values (an unreplaceable special scores 0, BB-4.10)."""
    return sum(map(_VALUE.__getitem__, row))


# --- drawing and reshuffling (BB-3.6, D6) --------------------------------------
def _reshuffle(state: State, events: list[Event]) -> None:
    """BB-3.6: all but the top discard, shuffled with key k, become the draw pile."""
    state["reshuffles"] += 1
    pile = state["discard"][:-1]
    key = core.reshuffle_key(GAME_ID, state["seed"], state["round"], state["reshuffles"])
    state["draw"] = _encode(core.seeded_shuffle(_decode(pile), key))
    state["discard"] = state["discard"][-1]
    events.append({"type": EV_RESHUFFLED, "seat": None, "count": state["reshuffles"]})


def _take_top(state: State, events: list[Event]) -> str | None:
    """Draw the next card (reshuffling first if needed); None when stuck (BB-4.10)."""
    if not state["draw"]:
        if len(state["discard"]) <= 1:
            return None
        _reshuffle(state, events)
    code, state["draw"] = state["draw"][0], state["draw"][1:]
    return code


def _draw_to_hand(state: State, seat: int, stage: str, events: list[Event]) -> bool:
    """Draw into the held card (BB-4.1, BB-4.3, BB-4.4); False when stuck."""
    code = _take_top(state, events)
    if code is None:
        return False
    state["held"], state["stage"], state["phase"] = code, stage, DRAWN
    events.append({"type": EV_DREW, "seat": seat, "card": _CARD[code], "stage": stage})
    return True


def _release_held(state: State) -> str:
    """Put the held card face up on the discard pile; return it."""
    code = state["held"]
    _discard(state, code)
    state["held"] = state["stage"] = None
    return code


class Biberbande(core.Game):
    """Biberbande: keep the lowest-valued face-down display of four cards."""

    id = GAME_ID
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

    def __init__(self) -> None:
        self._moves: dict[str, Callable[[State, int, Move, list[Event]], None]] = {
            DRAW: self._on_draw, TAKE_DISCARD: self._on_take_discard,
            SWAP_DRAWN: self._on_swap_drawn, DISCARD_DRAWN: self._on_discard_drawn,
            USE_SWAP: self._on_use_swap, USE_PEEK: self._on_use_peek,
            USE_DRAW2: self._on_use_draw2, SKIP_DRAW: self._on_skip_draw,
            KNOCK: self._on_knock, END_TURN: self._on_end_turn,
        }

    # --- setup (BB-3) ----------------------------------------------------------
    def canonical_deck(self, options: dict[str, Any]) -> list[str]:
        return list(CANONICAL)

    def new_state(self, names: list[str], seed: int, options: dict[str, Any]) -> tuple[State, list[Event]]:
        decks = options.get("decks") or ([options["deck"]] if options.get("deck") else [])
        state: State = {
            "status": ACTIVE, "result": None, "names": list(names), "seed": seed,
            "first_seat": options["first_seat"], "rounds": options["rounds"],
            "recall": options["recall"], "turn_limit": options["turn_limit"],
            "decks": [_encode(d) for d in decks],
            "scores": [0] * len(names), "history": [], "round": 0,
        }
        events: list[Event] = []
        self._start_round(state, 1, events)
        return state, events

    def _start_round(self, state: State, round_no: int, events: list[Event]) -> None:
        """BB-3.1–BB-3.5: deal round r and give turn 1 to its starter."""
        n = _n(state)
        starter = _starter(state, round_no)
        stacked = {"decks": [_decode(d) for d in state["decks"]]}
        deck = _encode(core.round_deck(self.id, state["seed"], round_no, CANONICAL, stacked))
        display = [""] * n
        for i in range(4 * n):  # BB-3.3, D1: round-robin from the starter, slot by slot
            display[(starter + i) % n] += deck[i]
        state.update({
            "round": round_no, "phase": ACTION, "turn": 1, "knocker": None, "knock_turn": None,
            "reshuffles": 0, "display": display, "discard": deck[4 * n], "draw": deck[4 * n + 1:],
            "held": None, "stage": None,
            "known": [[core.only(s) if j in OUTER_SLOTS else core.NOBODY for j in SLOTS]
                      for s in range(n)],
        })
        events.append({"type": EV_ROUND_STARTED, "seat": None, "round": round_no, "starter": starter})
        events.append({"type": EV_DEALT, "seat": None, "displays": [_decode(row) for row in display],
                       "discard": [_CARD[deck[4 * n]]]})
        events.append({"type": EV_TURN_STARTED, "seat": starter, "turn": 1})

    # --- whose turn, which moves (BB-4.1–BB-4.7) --------------------------------
    def to_act(self, state: State) -> list[int]:
        return [_current(state)] if state["status"] == ACTIVE else []

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        if state["status"] != ACTIVE or seat != _current(state):
            return []
        phase = state["phase"]
        if phase == ACTION:
            return self._action_moves(state)
        if phase == DRAWN:
            return self._held_moves(state, seat)
        if phase == SECOND_DRAW:
            return ([{"type": DRAW}] if _can_draw(state) else []) + [{"type": SKIP_DRAW}]
        return [{"type": KNOCK}, {"type": END_TURN}]

    @staticmethod
    def _action_moves(state: State) -> list[Move]:
        """BB-4.1 (and BB-4.10: no ``draw`` when nothing can be drawn)."""
        moves: list[Move] = [{"type": DRAW}] if _can_draw(state) else []
        if _is_number(state["discard"][-1]):
            moves += [{"type": TAKE_DISCARD, "slot": j} for j in SLOTS]
        return moves

    @staticmethod
    def _held_moves(state: State, seat: int) -> list[Move]:
        """BB-4.2: the moves for the held card, then ``discard_drawn``."""
        held = state["held"]
        if _is_number(held):
            moves = [{"type": SWAP_DRAWN, "slot": j} for j in SLOTS]
        elif held == _CODE[SWAP]:
            moves = [{"type": USE_SWAP, "slot": j, "target_seat": s, "target_slot": u}
                     for j in SLOTS for s in range(_n(state)) if s != seat for u in SLOTS]
        elif held == _CODE[PEEK]:
            moves = [{"type": USE_PEEK, "slot": j} for j in SLOTS]
        else:
            moves = [{"type": USE_DRAW2}]
        moves.append({"type": DISCARD_DRAWN})
        return moves

    def why_illegal(self, state: State, seat: int, move: Move, legal: list[Move]) -> str:
        kind = move.get("type")
        if kind == TAKE_DISCARD and state["phase"] == ACTION and not _is_number(state["discard"][-1]):
            return "take_discard needs a number card on top of the discard pile (BB-4.1, D5)"
        if kind == USE_SWAP and move.get("target_seat") == seat:
            return "use_swap needs another seat as target_seat; own-display swaps are not allowed (BB-4.2, D9)"
        if kind == KNOCK and state["phase"] != KNOCK_PHASE:
            return ("knock is offered only after your action, from turn n on, once per round "
                    "(BB-4.5, BB-4.7)")
        if "slot" in move and kind in {m["type"] for m in legal} and move["slot"] not in list(SLOTS):
            return "slot must be an integer 0…3 (BB-1.4)"
        return super().why_illegal(state, seat, move, legal)

    # --- applying moves ---------------------------------------------------------
    def apply(self, state: State, seat: int, move: Move) -> tuple[State, list[Event]]:
        new = core.clone(state)
        events: list[Event] = []
        self._moves[move["type"]](new, seat, move, events)
        return new, events

    def _on_draw(self, state: State, seat: int, move: Move, events: list[Event]) -> None:
        """Action A (BB-4.1) or the second draw of Draw Twice (BB-4.4)."""
        stage = STAGE_ACTION if state["phase"] == ACTION else STAGE_DRAW2_SECOND
        _draw_to_hand(state, seat, stage, events)

    def _on_take_discard(self, state: State, seat: int, move: Move, events: list[Event]) -> None:
        """Action B (BB-4.1): the face-up card becomes known to all (BB-5.5, D15)."""
        slot = move["slot"]
        card = state["discard"][-1]
        state["discard"] = state["discard"][:-1]
        old = _put(state, seat, slot, card)
        _discard(state, old)
        state["known"][seat][slot] = core.everyone(_n(state))
        events.append({"type": EV_TOOK_DISCARD, "seat": seat, "slot": slot,
                       "card": _CARD[card], "discarded": _CARD[old]})
        self._action_complete(state, events)

    def _on_swap_drawn(self, state: State, seat: int, move: Move, events: list[Event]) -> None:
        """BB-4.3: the slot card goes face up, the held number takes its place (known to the placer)."""
        slot = move["slot"]
        held = state["held"]
        state["held"] = state["stage"] = None
        old = _put(state, seat, slot, held)
        _discard(state, old)
        state["known"][seat][slot] = core.only(seat)
        events.append({"type": EV_SWAPPED_DRAWN, "seat": seat, "slot": slot,
                       "card": _CARD[held], "discarded": _CARD[old]})
        self._action_complete(state, events)

    def _on_discard_drawn(self, state: State, seat: int, move: Move, events: list[Event]) -> None:
        """BB-4.3: discarding the first Draw Twice card unused allows a second draw (D8)."""
        first_of_draw2 = state["stage"] == STAGE_DRAW2_FIRST
        card = _release_held(state)
        events.append({"type": EV_DISCARDED_DRAWN, "seat": seat, "card": _CARD[card]})
        if first_of_draw2:
            state["phase"] = SECOND_DRAW
        else:
            self._action_complete(state, events)

    def _on_use_swap(self, state: State, seat: int, move: Move, events: list[Event]) -> None:
        """BB-4.3: exchange own slot j with seat s's slot u; knowers move with the cards (BB-5.5)."""
        _release_held(state)
        slot, other, other_slot = move["slot"], move["target_seat"], move["target_slot"]
        mine = _put(state, seat, slot, state["display"][other][other_slot])
        _put(state, other, other_slot, mine)
        known = state["known"]
        known[seat][slot], known[other][other_slot] = known[other][other_slot], known[seat][slot]
        events.append({"type": EV_USED_SWAP, "seat": seat, "slot": slot,
                       "target_seat": other, "target_slot": other_slot})
        self._action_complete(state, events)

    def _on_use_peek(self, state: State, seat: int, move: Move, events: list[Event]) -> None:
        """BB-4.3: look at an own card (D10)."""
        _release_held(state)
        slot = move["slot"]
        state["known"][seat][slot] |= core.only(seat)
        events.append({"type": EV_USED_PEEK, "seat": seat, "slot": slot,
                       "card": _CARD[state["display"][seat][slot]]})
        self._action_complete(state, events)

    def _on_use_draw2(self, state: State, seat: int, move: Move, events: list[Event]) -> None:
        """BB-4.3, D8: the first draw is automatic (BB-4.10: none when stuck)."""
        _release_held(state)
        events.append({"type": EV_USED_DRAW2, "seat": seat})
        if not _draw_to_hand(state, seat, STAGE_DRAW2_FIRST, events):
            self._action_complete(state, events)

    def _on_skip_draw(self, state: State, seat: int, move: Move, events: list[Event]) -> None:
        """BB-4.4: no second draw."""
        events.append({"type": EV_SKIPPED_DRAW, "seat": seat})
        self._action_complete(state, events)

    def _on_knock(self, state: State, seat: int, move: Move, events: list[Event]) -> None:
        """BB-4.7: knock_turn = t; the others get one more turn each."""
        state["knocker"], state["knock_turn"] = seat, state["turn"]
        events.append({"type": EV_KNOCKED, "seat": seat, "turn": state["turn"]})
        self._next_turn(state, events)

    def _on_end_turn(self, state: State, seat: int, move: Move, events: list[Event]) -> None:
        """BB-4.7, BB-4.9: the round ends after turn T when nobody knocked."""
        events.append({"type": EV_ENDED_TURN, "seat": seat})
        if state["turn"] == _max_turn(state):
            self._end_round(state, REASON_TURN_LIMIT, events)
        else:
            self._next_turn(state, events)

    # --- turn sequencing (BB-4.5, BB-4.6, BB-4.8) --------------------------------
    def _action_complete(self, state: State, events: list[Event]) -> None:
        """BB-4.6: last turn after a knock → round end; else knock decision or next turn."""
        if state["knock_turn"] is not None and state["turn"] == _last_turn(state):
            self._end_round(state, REASON_KNOCK, events)
        elif state["knocker"] is None and state["turn"] >= _n(state):  # BB-4.5
            state["phase"] = KNOCK_PHASE
        else:
            self._next_turn(state, events)

    def _next_turn(self, state: State, events: list[Event]) -> None:
        """BB-4.8; BB-4.10: an action phase without legal moves ends the round."""
        state["turn"] += 1
        state["phase"] = ACTION
        events.append({"type": EV_TURN_STARTED, "seat": _current(state), "turn": state["turn"]})
        if not self._action_moves(state):
            self._end_round(state, REASON_STUCK, events)

    # --- end of round, scoring, end of match (BB-6) ------------------------------
    def _end_round(self, state: State, reason: str, events: list[Event]) -> None:
        """BB-6.1–BB-6.4: reveal, replace specials, score, then next round or match end."""
        n = _n(state)
        events.append({"type": EV_ROUND_ENDED, "seat": None, "reason": reason,
                       "knocker": state["knocker"],
                       "displays": [_decode(row) for row in state["display"]]})
        state["known"] = [[core.everyone(n)] * 4 for _ in range(n)]  # BB-6.1: all revealed
        first = state["knocker"] if state["knocker"] is not None else _starter(state)
        for seat in core.seats_from(first, n):
            for slot in SLOTS:
                if not _is_number(state["display"][seat][slot]):
                    self._replace(state, seat, slot, events)
        points = [_points(row) for row in state["display"]]
        state["scores"] = [a + b for a, b in zip(state["scores"], points)]
        state["history"].append([state["knocker"], reason, "".join(state["display"])])
        events.append({"type": EV_ROUND_SCORED, "seat": None, "round": state["round"],
                       "points": points, "scores": list(state["scores"])})
        if state["round"] < state["rounds"]:
            self._start_round(state, state["round"] + 1, events)
        else:
            self._end_match(state, events)

    @staticmethod
    def _replace(state: State, seat: int, slot: int, events: list[Event]) -> None:
        """BB-6.2, D13: draw until a number; drawn specials are discarded at once."""
        special = state["display"][seat][slot]
        drawn_specials: list[str] = []
        number = None
        while number is None:
            code = _take_top(state, events)
            if code is None:  # BB-4.10: the special stays and scores 0
                break
            if _is_number(code):
                number = code
            else:
                _discard(state, code)
                drawn_specials.append(_CARD[code])
        if number is not None:
            _put(state, seat, slot, number)
            _discard(state, special)
        events.append({"type": EV_REPLACED, "seat": seat, "slot": slot, "special": _CARD[special],
                       "discarded": drawn_specials,
                       "card": None if number is None else _CARD[number]})

    @staticmethod
    def _end_match(state: State, events: list[Event]) -> None:
        """BB-6.4, BB-6.5: lowest total wins; ties share a place (D18)."""
        state.update({"status": FINISHED, "phase": FINISHED_PHASE,
                      "result": core.make_result(state["scores"], lowest_wins=True)})
        events.append({"type": EV_MATCH_ENDED, "seat": None,
                       "result": core.make_result(state["scores"], lowest_wins=True)})

    # --- views and events (BB-5, BB-7) -------------------------------------------
    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        finished = state["status"] == FINISHED
        players = [
            {"seat": s, "name": name,
             "display": [_display_card(_CARD[c], finished, viewer) for c in state["display"][s]],
             "known": [core.known_value(_CARD[c], mask, viewer, state["recall"])
                       for c, mask in zip(state["display"][s], state["known"][s])]}
            for s, name in enumerate(state["names"])]
        return {"status": state["status"], "round": state["round"], "rounds": state["rounds"],
                "phase": state["phase"], "to_act": self.to_act(state), "players": players,
                "board": self._board(state, viewer), "scores": list(state["scores"]),
                "result": state["result"] and core.clone(state["result"])}

    def _board(self, state: State, viewer: Viewer) -> dict[str, Any]:
        """BB-7.2."""
        current = _current(state)
        held = state["held"]
        drawn = None if held is None else {
            "seat": current, "card": _private_card(_CARD[held], current, viewer), "stage": state["stage"]}
        return {"starter": _starter(state), "turn": state["turn"], "current_seat": current,
                "turn_limit": state["turn_limit"], "max_turn": _max_turn(state),
                "knocker": state["knocker"], "knock_turn": state["knock_turn"],
                "last_turn": _last_turn(state), "draw_count": len(state["draw"]),
                "draw_pile": _draw_pile(state["draw"], viewer), "discard": _decode(state["discard"]),
                "drawn": drawn, "history": self._history(state)}

    @staticmethod
    def _history(state: State) -> list[dict[str, Any]]:
        """Finished rounds, public (BB-6.1 reveals every display; D20)."""
        out = []
        for i, (knocker, reason, cards) in enumerate(state["history"]):
            rows = [cards[k:k + 4] for k in range(0, len(cards), 4)]
            out.append({"round": i + 1, "starter": _starter(state, i + 1), "knocker": knocker,
                        "reason": reason, "displays": [_decode(row) for row in rows],
                        "points": [_points(row) for row in rows]})
        return out

    def redact_event(self, event: Event, viewer: Viewer) -> Event:
        """BB-5.7: private cards to the actor and admin only; deal glimpses per seat."""
        kind = event["type"]
        if kind in PRIVATE_CARD_EVENTS:
            return {**event, "card": _private_card(event["card"], event["seat"], viewer)}
        if kind == EV_DEALT:
            return {**event, "displays": [[_dealt_card(c, s, j, viewer) for j, c in enumerate(row)]
                                          for s, row in enumerate(event["displays"])]}
        return dict(event)
