"""Mein Lieber Biber: six beavers swim along a 30-ring spiral on a tipping raft.

Rules reference: ``spec/games/mein-lieber-biber.md`` (rule ids ``MLB-x.y``).

State layout (a plain JSON-able dict; cards are stored as their canonical
index 0..47 so hands sort by plain integer order and the snapshot stays small):

``status`` / ``result``  core.ACTIVE or core.FINISHED, final result or null
``names``, ``seed``      players and the match seed
``rounds``, ``tip``      resolved options (MLB-2.3, MLB-2.4); ``first_seat`` is used at
                         creation only and ``recall`` changes nothing (MLB-5.5)
``decks``                stacked round orders (card indexes) or null (MLB-2.1a)
``round``, ``phase``, ``turn``, ``start_seat``
``hands``, ``discards``  per seat; ``piles`` two piles, top first
``sticks``, ``supply``   MLB-1.3 / MLB-3.4
``pos``                  beaver positions by colour index (0 middle, 1..30 rings, 31 dam)
``last_play``, ``last_round_end``  as shown in the view (MLB-7.2)
"""
from __future__ import annotations

from bisect import insort
from typing import Any

from engine import core
from engine.core import ACTIVE, FINISHED, Event, Game, Move, Option, State, Viewer

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
RING_COLOURS = [colour for colour, _, _ in RAFT[1:]]
#: Colour index of each position (None for middle and dam), for the reward test.
RING_COLOUR_INDEX = [None] + [COLOUR_INDEX[c] for c in RING_COLOURS] + [None]

# Phases (MLB-4, MLB-6.4).
PLAY, EXCHANGE, REWARD, DRAW, PHASE_FINISHED = "play", "exchange", "reward", "draw", "finished"

# Move types (MLB-4.3..4.8) and reward kinds (MLB-4.7).
M_DRAW, M_PLAY, M_EXCHANGE, M_DISCARD, M_REWARD, M_PASS = (
    "draw", "play", "exchange", "discard", "reward", "pass")
TAKE_STICK, TAKE_CARD = "stick", "card"

# Events (MLB-8.1) and their reasons.
E_ROUND_STARTED, E_DEALT, E_DREW, E_PLAYED, E_TIPPED = (
    "round_started", "dealt", "drew", "played", "tipped")
E_REWARDED, E_PASSED, E_EXCHANGED, E_DISCARDED = "rewarded", "passed", "exchanged", "discarded"
E_ROUND_ENDED, E_MATCH_ENDED = "round_ended", "match_ended"
TOP_UP, AFTER_MOVE = "top_up", "draw"
TIPPED, SUPPLY_EXHAUSTED, HAND_EMPTY, RAFT_EMPTY = (
    "tipped", "supply_exhausted", "hand_empty", "raft_empty")

#: MLB-5.4: the private field of each event; only its seat and admin see it.
PRIVATE_EVENT_FIELD = {E_DEALT: "cards", E_DREW: "card", E_EXCHANGED: "drawn", E_REWARDED: "card"}


def card_colour(card: int) -> int:
    """Colour index of a card index (MLB-1.2)."""
    return card >> 3


def card_value(card: int) -> int:
    """Movement value 1..8 of a card index (MLB-1.2)."""
    return (card & 7) + 1


# --------------------------------------------------------------------------
# Pure board rules (MLB-4.1, MLB-4.2).
# --------------------------------------------------------------------------
def on_raft(position: int) -> bool:
    return position <= LAST_RING


def target(position: int, value: int) -> int:
    """Where a beaver lands: occupied rings count; past 30 it reaches the dam (MLB-4.4a, D16)."""
    return min(position + value, DAM)


def movable_beavers(pos: list[int], card: int) -> list[int]:
    """Beavers (colour indexes, in colour order) that ``card`` can move (MLB-4.1, D15).

    The card's own beaver while it is on the raft; any beaver on the raft when
    the card's beaver has reached the dam (joker).  The landing ring must be
    free, or the move must end on the dam.
    """
    colour, value = card_colour(card), card_value(card)
    if on_raft(pos[colour]):
        candidates: tuple[int, ...] | range = (colour,)
    else:
        candidates = range(len(COLOURS))
    result = []
    for beaver in candidates:
        here = pos[beaver]
        if on_raft(here):
            to = target(here, value)
            if to == DAM or to not in pos:
                result.append(beaver)
    return result


def can_play(pos: list[int], hand: list[int]) -> bool:
    """Some card in ``hand`` can move a beaver (MLB-4.0)."""
    return any(movable_beavers(pos, card) for card in hand)


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


def next_start_seat(sticks: list[int], last_mover: int) -> int:
    """Start seat of a later round: fewest sticks, ties clockwise from the seat
    after the last mover of the previous round (MLB-3.5, D17)."""
    n = len(sticks)
    fewest = min(sticks)
    return next(s for s in core.seats_from(core.seat_after(last_mover, n), n) if sticks[s] == fewest)


def deal(deck: list[int], n: int) -> tuple[list[list[int]], list[list[int]]]:
    """Hands (sorted) and the two piles, top first, from a round's order (MLB-3.2, MLB-3.3)."""
    hands = [sorted(deck[s:HAND_SIZE * n:n]) for s in range(n)]
    rest = deck[HAND_SIZE * n:]
    return hands, [rest[0::2], rest[1::2]]


# --------------------------------------------------------------------------
# Redaction (MLB-5): the one place deciding what a viewer sees.
# --------------------------------------------------------------------------
def visible_cards(cards: list[int], owner: int | None, viewer: Viewer) -> list[str | None]:
    """Card ids for the owner (a seat, or None for the piles) and admin; nulls
    for everyone else (MLB-5.1, MLB-5.2)."""
    if viewer.sees_private(owner):
        return [CARDS[c] for c in cards]
    return [None] * len(cards)


def redact(event: Event, viewer: Viewer) -> Event:
    """An event as ``viewer`` may see it (MLB-5.4); never mutates ``event``."""
    field = PRIVATE_EVENT_FIELD.get(event["type"])
    if field is None or event[field] is None or viewer.sees_private(event["seat"]):
        return event
    hidden = [None] * len(event[field]) if isinstance(event[field], list) else None
    return {**event, field: hidden}


# --------------------------------------------------------------------------
# The engine.
# --------------------------------------------------------------------------
class MeinLieberBiber(Game):
    """Mein Lieber Biber: move any beaver, collect sticks, don't tip the raft."""

    id = "mein-lieber-biber"
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

    # --- setup (MLB-3) ---------------------------------------------------
    def canonical_deck(self, options: dict[str, Any]) -> list[str]:
        return list(CARDS)

    def new_state(self, names: list[str], seed: int, options: dict[str, Any]) -> tuple[State, list[Event]]:
        n = len(names)
        decks = options.get("decks")
        state: State = {
            "status": ACTIVE, "result": None, "names": list(names), "seed": seed,
            "rounds": options["rounds"], "tip": options["tip_threshold"],
            "decks": [[CARD_INDEX[c] for c in d] for d in decks] if decks else None,
            "sticks": [0] * n, "last_round_end": None,
        }
        first = [CARD_INDEX[c] for c in core.round_deck(self.id, seed, 1, CARDS, options)]
        events: list[Event] = []
        _start_round(state, 1, options["first_seat"], first, events)
        return state, events

    # --- queries -----------------------------------------------------------
    def to_act(self, state: State) -> list[int]:
        """MLB-4.0: the seat whose turn it is while active; nobody once finished."""
        return [state["turn"]] if state["status"] == ACTIVE else []

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        """Every legal move in the order of MLB-4.9."""
        if state["status"] != ACTIVE or seat != state["turn"]:
            return []
        phase, piles = state["phase"], state["piles"]
        open_piles = [p for p in (0, 1) if piles[p]]
        hand = state["hands"][seat]
        if phase == REWARD:
            return ([{"type": M_REWARD, "take": TAKE_STICK}]
                    + [{"type": M_REWARD, "take": TAKE_CARD, "pile": p} for p in open_piles])
        if phase == DRAW:
            return [{"type": M_DRAW, "pile": p} for p in open_piles] + [{"type": M_PASS}]
        moves: list[Move] = []
        if len(hand) < HAND_SIZE:
            moves += [{"type": M_DRAW, "pile": p} for p in open_piles]
        if phase == PLAY:
            pos = state["pos"]
            moves += [{"type": M_PLAY, "card": CARDS[c], "beaver": COLOURS[b]}
                      for c in hand for b in movable_beavers(pos, c)]
        elif open_piles:
            moves += [{"type": M_EXCHANGE, "card": CARDS[c], "pile": p} for c in hand for p in open_piles]
        else:
            moves += [{"type": M_DISCARD, "card": CARDS[c]} for c in hand]
        return moves

    def why_illegal(self, state: State, seat: int, move: Move, legal: list[Move]) -> str:
        """MLB-4.10: say which rule refuses the move (only public or own facts)."""
        reason = _refusal(state, seat, move)
        return reason or super().why_illegal(state, seat, move, legal)

    # --- moves -------------------------------------------------------------
    def apply(self, state: State, seat: int, move: Move) -> tuple[State, list[Event]]:
        """Apply a legal move and every automatic step after it (MLB-4, MLB-6, spec 8)."""
        s = core.clone(state)
        events: list[Event] = []
        kind = move["type"]
        if kind == M_DRAW:
            _draw(s, seat, move["pile"], events)
        elif kind == M_PLAY:
            _play(s, seat, CARD_INDEX[move["card"]], COLOUR_INDEX[move["beaver"]], events)
        elif kind == M_REWARD:
            _reward(s, seat, move, events)
        elif kind == M_EXCHANGE:
            _exchange(s, seat, CARD_INDEX[move["card"]], move["pile"], events)
        elif kind == M_DISCARD:
            _discard(s, seat, CARD_INDEX[move["card"]], events)
        else:
            events.append({"type": E_PASSED, "seat": seat})
            _end_turn(s)
        return s, events

    # --- views (MLB-5, MLB-7) ------------------------------------------------
    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        players = [
            {"seat": s, "name": name, "hand": visible_cards(hand, s, viewer),
             "hand_count": len(hand), "discards": [CARDS[c] for c in state["discards"][s]],
             "sticks": state["sticks"][s]}
            for s, (name, hand) in enumerate(zip(state["names"], state["hands"]))
        ]
        pos = state["pos"]
        board = {
            "rings": list(RING_COLOURS),
            "beavers": dict(zip(COLOURS, pos)),
            "piles": [visible_cards(pile, None, viewer) for pile in state["piles"]],
            "supply": state["supply"],
            "load": load(pos),
            "tip_threshold": state["tip"],
            "start_seat": state["start_seat"],
            "last_play": state["last_play"],
            "last_round_end": state["last_round_end"],
        }
        return {"status": state["status"], "round": state["round"], "rounds": state["rounds"],
                "phase": state["phase"], "to_act": self.to_act(state), "players": players,
                "board": board, "scores": list(state["sticks"]), "result": state["result"]}

    def redact_event(self, event: Event, viewer: Viewer) -> Event:
        return redact(event, viewer)


# --------------------------------------------------------------------------
# Steps.  Each mutates the (already cloned) state ``s`` and appends events.
# --------------------------------------------------------------------------
def _start_round(s: State, round_no: int, start: int, deck: list[int], events: list[Event]) -> None:
    """Set up round ``round_no`` from its order ``deck`` (MLB-3.1..3.6)."""
    n = len(s["names"])
    hands, piles = deal(deck, n)
    s.update(round=round_no, turn=start, start_seat=start, hands=hands, piles=piles,
             discards=[[] for _ in range(n)], pos=[MIDDLE] * len(COLOURS),
             supply=STICKS - sum(s["sticks"]), last_play=None)
    s["phase"] = _turn_phase(s)
    events.append({"type": E_ROUND_STARTED, "seat": None, "round": round_no, "start_seat": start})
    events += [{"type": E_DEALT, "seat": seat, "cards": [CARDS[c] for c in hand]}
               for seat, hand in enumerate(hands)]


def _turn_phase(s: State) -> str:
    """`play` if some card in the turn seat's hand can move a beaver, else `exchange` (MLB-4.0)."""
    return PLAY if can_play(s["pos"], s["hands"][s["turn"]]) else EXCHANGE


def _take_top(s: State, seat: int, pile: int) -> int:
    """Top card of ``pile`` into the seat's sorted hand; returns it."""
    card = s["piles"][pile].pop(0)
    insort(s["hands"][seat], card)
    return card


def _lay_down(s: State, seat: int, card: int) -> None:
    """A hand card goes face up onto the seat's discard pile (MLB-4.4a, 4.5, 4.6)."""
    s["hands"][seat].remove(card)
    s["discards"][seat].append(card)


def _draw(s: State, seat: int, pile: int, events: list[Event]) -> None:
    """Top-up in `play`/`exchange` (MLB-4.3, D8) or the optional draw after a move (MLB-4.8)."""
    top_up = s["phase"] != DRAW
    card = _take_top(s, seat, pile)
    events.append({"type": E_DREW, "seat": seat, "pile": pile, "card": CARDS[card],
                   "reason": TOP_UP if top_up else AFTER_MOVE})
    if top_up:
        s["phase"] = _turn_phase(s)
    else:
        _end_turn(s)


def _play(s: State, seat: int, card: int, beaver: int, events: list[Event]) -> None:
    """MLB-4.4: lay the card, move the beaver, then tip check, reward, round end, draw."""
    _lay_down(s, seat, card)
    pos = s["pos"]
    start = pos[beaver]
    pos[beaver] = to = target(start, card_value(card))
    s["last_play"] = {"seat": seat, "card": CARDS[card], "beaver": COLOURS[beaver],
                      "from": start, "to": to}
    events.append({"type": E_PLAYED, "seat": seat, "card": CARDS[card], "beaver": COLOURS[beaver],
                   "from": start, "to": to, "joker": card_colour(card) != beaver})
    if tips(pos, s["tip"]):
        _tip(s, seat, events)
    elif to == DAM or RING_COLOUR_INDEX[to] == beaver:  # MLB-4.4c, D13
        s["phase"] = REWARD
    else:
        _after_reward(s, seat, events)


def _tip(s: State, seat: int, events: list[Event]) -> None:
    """MLB-4.4b: the mover returns up to two sticks; the round ends, no reward (D11)."""
    returned = min(2, s["sticks"][seat])
    s["sticks"][seat] -= returned
    s["supply"] += returned
    events.append({"type": E_TIPPED, "seat": seat, "load": load(s["pos"]), "returned": returned})
    _end_round(s, TIPPED, seat, events)


def _reward(s: State, seat: int, move: Move, events: list[Event]) -> None:
    """MLB-4.7: a stick from the supply or the top card of a pile."""
    if move["take"] == TAKE_STICK:
        s["supply"] -= 1
        s["sticks"][seat] += 1
        pile, card = None, None
    else:
        pile = move["pile"]
        card = CARDS[_take_top(s, seat, pile)]
    events.append({"type": E_REWARDED, "seat": seat, "take": move["take"], "pile": pile, "card": card})
    _after_reward(s, seat, events)


def _after_reward(s: State, seat: int, events: list[Event]) -> None:
    """MLB-4.4 d/e: round-end checks, then the optional draw if a pile is left."""
    reason = _round_end_reason(s, seat)
    if reason:
        _end_round(s, reason, seat, events)
    elif s["piles"][0] or s["piles"][1]:
        s["phase"] = DRAW
    else:
        _end_turn(s)


def _round_end_reason(s: State, mover: int) -> str | None:
    """MLB-6.1 after a move (tipping is handled before): the first that applies."""
    if s["supply"] == 0:
        return SUPPLY_EXHAUSTED
    if not s["hands"][mover]:
        return HAND_EMPTY
    if not any(on_raft(p) for p in s["pos"]):
        return RAFT_EMPTY
    return None


def _exchange(s: State, seat: int, card: int, pile: int, events: list[Event]) -> None:
    """MLB-4.5, D9: forced exchange; the phase is re-evaluated (MLB-4.0)."""
    _lay_down(s, seat, card)
    drawn = _take_top(s, seat, pile)
    events.append({"type": E_EXCHANGED, "seat": seat, "card": CARDS[card], "pile": pile,
                   "drawn": CARDS[drawn]})
    s["phase"] = _turn_phase(s)


def _discard(s: State, seat: int, card: int, events: list[Event]) -> None:
    """MLB-4.6, D10: stuck with both piles empty; an empty hand ends the round."""
    _lay_down(s, seat, card)
    events.append({"type": E_DISCARDED, "seat": seat, "card": CARDS[card]})
    if s["hands"][seat]:
        _end_turn(s)
    else:
        _end_round(s, HAND_EMPTY, seat, events)


def _end_turn(s: State) -> None:
    """Clockwise to the next seat (MLB-4.0)."""
    s["turn"] = core.seat_after(s["turn"], len(s["names"]))
    s["phase"] = _turn_phase(s)


def _end_round(s: State, reason: str, by: int, events: list[Event]) -> None:
    """MLB-6.1..6.4: score, then the next round or the end of the match."""
    round_no = s["round"]
    s["last_round_end"] = {"round": round_no, "reason": reason, "seat": by}
    events.append({"type": E_ROUND_ENDED, "seat": None, "round": round_no, "reason": reason,
                   "by": by, "sticks": list(s["sticks"]), "supply": s["supply"]})
    if round_no >= s["rounds"] or reason == SUPPLY_EXHAUSTED:
        result = core.make_result(s["sticks"], lowest_wins=False)
        s.update(status=FINISHED, phase=PHASE_FINISHED, result=result)
        events.append({"type": E_MATCH_ENDED, "seat": None, "result": result})
        return
    nxt = round_no + 1
    _start_round(s, nxt, next_start_seat(s["sticks"], by), _round_order(s, nxt), events)


def _round_order(s: State, round_no: int) -> list[int]:
    """Round ``round_no``'s order: stacked ``decks`` or the seeded shuffle (MLB-3.1, D18)."""
    decks = s["decks"]
    options = {"decks": [[CARDS[c] for c in d] for d in decks]} if decks else {}
    return [CARD_INDEX[c] for c in core.round_deck(MeinLieberBiber.id, s["seed"], round_no, CARDS, options)]


# --------------------------------------------------------------------------
# Refusal reasons (MLB-4.10).
# --------------------------------------------------------------------------
def _refusal(s: State, seat: int, move: Move) -> str | None:
    """A specific sentence for common refusals, or None for the generic one."""
    kind, phase, hand = move.get("type"), s["phase"], s["hands"][seat]
    card = CARD_INDEX.get(move.get("card")) if isinstance(move.get("card"), str) else None
    pile = move.get("pile")
    if type(pile) is int and pile in (0, 1) and not s["piles"][pile]:
        return f"pile {pile} is empty"
    if kind == M_DRAW and phase in (PLAY, EXCHANGE) and len(hand) >= HAND_SIZE:
        return "a top-up is allowed only with fewer than 3 cards in hand (MLB-4.3)"
    if kind in (M_PLAY, M_EXCHANGE, M_DISCARD) and "card" in move and card not in hand:
        return f"{move.get('card')!r} is not in your hand"
    if kind == M_EXCHANGE and phase == PLAY:
        return "an exchange is allowed only when no card can move a beaver (MLB-4.5, D9)"
    if kind == M_PLAY and phase == PLAY and card is not None:
        return _play_refusal(s, card, move.get("beaver"))
    return None


def _play_refusal(s: State, card: int, beaver: Any) -> str | None:
    """Why a card in hand cannot move ``beaver`` (MLB-4.1)."""
    b = COLOUR_INDEX.get(beaver) if isinstance(beaver, str) else None
    if b is None:
        return f"unknown beaver {beaver!r}; beavers: {', '.join(COLOURS)}"
    pos, colour = s["pos"], card_colour(card)
    if not on_raft(pos[b]):
        return f"the {COLOURS[b]} beaver has left the raft"
    if b != colour and on_raft(pos[colour]):
        return (f"{CARDS[card]} moves only the {COLOURS[colour]} beaver while it is on the raft "
                "(it becomes a joker once that beaver reaches the dam)")
    to = target(pos[b], card_value(card))
    if to != DAM and to in pos:
        return f"ring {to} is occupied; a beaver must end on a free ring (MLB-4.1)"
    return None
