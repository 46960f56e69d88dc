"""Beaver High Card (``toy-high-card``): a toy trick game written against the
"Adding a game" recipe (docs/adding-a-game.md), kept in the tests, never shipped.

Sixteen cards ``"1"``…``"16"``; each seat is dealt a hidden hand, and in each
trick every seat in turn lays one card face down; when all have played, the
cards are revealed and the highest wins the trick.  The most tricks after all
rounds wins.

Rules: tests/data/toy-high-card.md (rule ids HC-n.m, decisions Dn).

HighCardState (the snapshot, a plain JSON dict never mutated once returned):
``status``, ``phase``, ``result``, ``names``, ``seed``, the options
``first_seat``, ``rounds`` and ``hand``, ``decks`` (the stacked orders of
``options.deck``/``options.decks``, one per round), ``scores`` (tricks won in
the match); the round: ``round``, ``trick``, ``leader``, ``current`` (the
seat to act), ``hands`` (per seat, ascending),
``table`` (per seat, its face-down card of this trick or null), ``draw`` (the
undealt cards, HC-3.2), ``tricks`` (this round's revealed tricks, the cards
per seat) and ``won`` (tricks won this round per seat).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal, TypedDict

from engine import core, worlds
from engine import declaration as d
from engine.core import ACTIVE, FINISHED, INT, CoreState, Draft, Event, Option, PostedMove, Viewer

GAME_ID = "toy-high-card"


class HighCardState(CoreState):
    """The snapshot (module docstring)."""

    names: list[str]
    seed: int
    first_seat: int
    rounds: int
    hand: int
    decks: list[list[str]]
    scores: list[int]
    round: int
    trick: int
    leader: int
    current: int
    hands: list[list[str]]
    table: list[str | None]
    draw: list[str]
    tricks: list[list[str]]
    won: list[int]


# --- cards (HC-1) ----------------------------------------------------------------
CANONICAL: tuple[str, ...] = tuple(str(v) for v in range(1, 17))

PHASE_PLAY, PHASE_FINISHED = "play", "finished"
MOVE_PLAY: Final = "play"


# --- the move as listed (HC-4; DECLARATION) -----------------------------------------
class Play(TypedDict):
    type: Literal["play"]
    card: str


# --- the events' fields besides type and seat (HC-7; DECLARATION) -----------------
class RoundStarted(TypedDict):
    round: int
    starter: int


class Dealt(TypedDict):
    cards: list[str]


class Played(TypedDict):
    trick: int
    card: str


class Revealed(TypedDict):
    trick: int
    cards: list[str]
    winner: int


class RoundScored(TypedDict):
    round: int
    tricks: list[int]
    scores: list[int]


class MatchEnded(TypedDict):
    result: dict[str, Any]


EVENT_ROUND_STARTED = d.EventKind("round_started", RoundStarted)
EVENT_DEALT = d.EventKind("dealt", Dealt)
EVENT_PLAYED = d.EventKind("played", Played)
EVENT_REVEALED = d.EventKind("revealed", Revealed)
EVENT_ROUND_SCORED = d.EventKind("round_scored", RoundScored)
EVENT_MATCH_ENDED = d.EventKind("match_ended", MatchEnded)


def _n(state: HighCardState) -> int:
    return len(state["names"])


def _value(card: str) -> int:
    """HC-1.1: a card's rank is its number."""
    return int(card)


def _starter(state: HighCardState, round_no: int) -> int:
    """HC-3.1: s_r = (first_seat + r − 1) mod n."""
    return (state["first_seat"] + round_no - 1) % _n(state)


def _winner(cards: Sequence[str]) -> int:
    """HC-4.3: the seat of the highest card (every card is distinct, HC-1.1)."""
    return max(range(len(cards)), key=lambda seat: _value(cards[seat]))


# --- setup and deal (HC-2, HC-3) -------------------------------------------------
def _setup(draft: Draft[HighCardState], names: list[str], seed: int, options: dict[str, Any]) -> None:
    """HC-2: the match from validated options, then round 1."""
    draft.state.update({
        "status": ACTIVE, "phase": PHASE_PLAY, "result": None, "names": list(names), "seed": seed,
        "first_seat": options["first_seat"], "rounds": options["rounds"], "hand": options["hand"],
        "decks": options["decks"] or ([options["deck"]] if options["deck"] else []), "scores": [0] * len(names),
    })
    _start_round(draft, 1)


def _start_round(draft: Draft[HighCardState], round_no: int) -> None:
    """HC-3.1–HC-3.3: deal ``hand`` cards a seat round-robin from the
    starter; the rest stays face down, unused (the draw pile)."""
    state = draft.state
    n, size = _n(state), state["hand"]
    starter = _starter(state, round_no)
    deck = core.round_deck(GAME_ID, state["seed"], round_no, CANONICAL, {"decks": state["decks"]})
    hands: list[list[str]] = [[] for _ in range(n)]
    for i in range(n * size):
        hands[(starter + i) % n].append(deck[i])
    state.update({"round": round_no, "trick": 1, "leader": starter, "current": starter,
                  "hands": [sorted(hand, key=_value) for hand in hands], "table": [None] * n,
                  "draw": deck[n * size:], "tricks": [], "won": [0] * n})
    draft.emit(EVENT_ROUND_STARTED, None, round=round_no, starter=starter)
    for seat in core.seats_from(starter, n):
        draft.emit(EVENT_DEALT, seat, cards=list(state["hands"][seat]))


# --- the one move (HC-4) -----------------------------------------------------------
def _seat_moves(state: HighCardState, seat: int) -> list[Play]:
    """HC-4.2: any card of the own hand."""
    return [{"type": MOVE_PLAY, "card": card} for card in state["hands"][seat]]


def _why_illegal(state: HighCardState, seat: int, move: PostedMove) -> str | None:
    """HC-4.2 (the refusal names no card: the hand is the seat's secret, HC-5.1)."""
    if move.get("type") == MOVE_PLAY:
        return "play needs a card of your own hand (HC-4.2); GET legal-moves lists them"
    return None


def _do_play(draft: Draft[HighCardState], seat: int, move: Play) -> None:
    """HC-4.2: the card goes face down; the next seat plays (in turn, D1), or
    the trick is revealed (HC-4.3)."""
    state = draft.state
    card = move["card"]
    state["hands"][seat].remove(card)
    state["table"][seat] = card
    draft.emit(EVENT_PLAYED, seat, trick=state["trick"], card=card)
    following = core.seat_after(seat, _n(state))
    if following == state["leader"]:
        _reveal(draft)
    else:
        state["current"] = following


def _reveal(draft: Draft[HighCardState]) -> None:
    """HC-4.3, HC-4.4: all cards up, the highest wins the trick and leads the next."""
    state = draft.state
    cards = [card for card in state["table"] if card is not None]
    winner = _winner(cards)
    state["tricks"].append(cards)
    state["won"][winner] += 1
    state["table"] = [None] * _n(state)
    draft.emit(EVENT_REVEALED, None, trick=state["trick"], cards=list(cards), winner=winner)
    if state["trick"] == state["hand"]:
        _end_round(draft)
    else:
        state["trick"] += 1
        state["leader"] = state["current"] = winner


def _end_round(draft: Draft[HighCardState]) -> None:
    """HC-6.1, HC-6.2: a trick is a point; the next round, or the end."""
    state = draft.state
    state["scores"] = [total + won for total, won in zip(state["scores"], state["won"])]
    draft.emit(EVENT_ROUND_SCORED, None, round=state["round"], tricks=list(state["won"]),
               scores=list(state["scores"]))
    if state["round"] < state["rounds"]:
        _start_round(draft, state["round"] + 1)
        return
    result = core.make_result(state["scores"], lowest_wins=False)
    state.update({"status": FINISHED, "phase": PHASE_FINISHED, "result": result})
    draft.emit(EVENT_MATCH_ENDED, None, result=core.clone(result))


# --- views (HC-5, HC-7) --------------------------------------------------------------
def _players_view(state: HighCardState, viewer: Viewer) -> list[dict[str, Any]]:
    """HC-7.1: a hand and a face-down card only to their seat (HC-5.1, HC-5.2)."""
    out = []
    for seat, name in enumerate(state["names"]):
        mine = viewer.sees_private(seat)
        hand, card = state["hands"][seat], state["table"][seat]
        out.append({"seat": seat, "name": name, "hand": list(hand) if mine else d.hide(hand),
                    "table": card if mine else None, "played": card is not None,
                    "won": state["won"][seat]})
    return out


def _board_view(state: HighCardState, viewer: Viewer) -> dict[str, Any]:
    """HC-7.2: the trick, this round's revealed tricks (HC-5.4), the draw pile's
    order to the admin only (HC-5.3)."""
    leaders = [_starter(state, state["round"]), *(_winner(cards) for cards in state["tricks"])]
    return {"starter": leaders[0], "trick": state["trick"], "leader": state["leader"],
            "current_seat": state["current"] if state["status"] == ACTIVE else None,
            "hand_size": state["hand"], "draw_count": len(state["draw"]),
            "draw_pile": list(state["draw"]) if viewer.is_admin else None,
            "tricks": [{"trick": i + 1, "leader": leaders[i], "cards": list(cards), "winner": _winner(cards)}
                       for i, cards in enumerate(state["tricks"])]}


# --- determinization (contract "Worlds and simulation") ------------------------------
def _deal_world(state: HighCardState, seat: int, seed: int) -> HighCardState:
    """HC-5: ``seat``'s hand and face-down card and the revealed tricks stay;
    every other hand, face-down card and the draw pile are dealt uniformly
    from the cards left (their counts are public).  The public history adds
    no constraint (no rule ties a play to a hand, D2), so the events are not read."""
    mine = [*state["hands"][seat], *(c for c in [state["table"][seat]] if c is not None)]
    shown = [card for cards in state["tricks"] for card in cards]
    rng = worlds.world_rng(GAME_ID, seed)
    others = [s for s in range(_n(state)) if s != seat]
    faces = [s for s in others if state["table"][s] is not None]
    sizes = [*(len(state["hands"][s]) for s in others), len(faces), len(state["draw"])]
    parts = worlds.deal(rng, worlds.unaccounted(CANONICAL, [*mine, *shown]), sizes)
    world = core.clone(state)
    for s, hand in zip(others, parts):
        world["hands"][s] = sorted(hand, key=_value)
    for s, card in zip(faces, parts[len(others)]):
        world["table"][s] = card
    world.update({"draw": parts[-1], "seed": worlds.fresh_seed(rng), "decks": []})
    return world


# --- the declaration ------------------------------------------------------------------
CARD = d.enum(*CANONICAL)
HIDDEN_CARD = d.nullable(CARD, d.HIDDEN)
RESULT = d.obj({"scores": d.array(d.INT), "ranking": d.array(d.array(d.SEAT)), "winners": d.array(d.SEAT)})
pub, own = d.public, d.private

DECLARATION = d.Declaration(
    moves=(d.MoveType(MOVE_PLAY, {"card": CARD}, typed=Play, doc="lay a card of your hand face down (HC-4.2)"),),
    events=(
        d.EventType(EVENT_ROUND_STARTED, {"round": pub(d.INT), "starter": pub(d.SEAT)}),
        d.EventType(EVENT_DEALT, {"cards": own(d.array(HIDDEN_CARD))}, doc="HC-5.1: the hand only to its seat"),
        d.EventType(EVENT_PLAYED, {"trick": pub(d.INT), "card": own(HIDDEN_CARD)},
                    doc="HC-5.2: face down, the card only to its seat"),
        d.EventType(EVENT_REVEALED, {"trick": pub(d.INT), "cards": pub(d.array(CARD, description="per seat")),
                                     "winner": pub(d.SEAT)}, doc="HC-4.3"),
        d.EventType(EVENT_ROUND_SCORED, {"round": pub(d.INT), "tricks": pub(d.array(d.INT)),
                                         "scores": pub(d.array(d.INT))}),
        d.EventType(EVENT_MATCH_ENDED, {"result": pub(RESULT)}),
    ),
    player={"hand": d.array(HIDDEN_CARD), "table": d.nullable(CARD, "the face-down card of this trick: its seat only"),
            "played": d.BOOL, "won": d.INT},
    board_view={
        "starter": d.SEAT, "trick": d.INT, "leader": d.SEAT, "current_seat": d.nullable(d.SEAT),
        "hand_size": d.INT, "draw_count": d.INT,
        "draw_pile": d.nullable(d.array(CARD), "the undealt cards: admin only"),
        "tricks": d.array(d.obj({"trick": d.INT, "leader": d.SEAT, "cards": d.array(CARD), "winner": d.SEAT})),
    },
    presets={"short": {"rounds": 1}, "variant": {"rounds": 1, "hand": 4, "first_seat": 1},
             "play": {"rounds": 2, "hand": 2}},
    bot="tests.toy_game.bot",  # no ``board``: /play draws it with the generic board (D3)
    docs="tests/data/toy-high-card.md",
)


class HighCard(core.Game[HighCardState, Play]):
    """Beaver High Card: the highest face-down card takes the trick."""

    id = GAME_ID
    rule_prefix = "HC"
    title = "Beaver High Card"
    min_players = 2
    max_players = 4
    summary = "Lay a card face down each trick; the highest card takes it (a test game, not shipped)."
    options = (
        Option("rounds", INT, 2, minimum=1, maximum=5, description="number of rounds (1…5)"),
        Option("hand", INT, 3, minimum=1, maximum=4, description="cards dealt to each seat per round (HC-3.2)"),
        core.first_seat_option(),
        core.deck_option(),
        core.decks_option(),
    )
    declaration = DECLARATION
    handlers = {MOVE_PLAY: _do_play}

    def canonical_deck(self, options: dict[str, Any]) -> list[str]:
        return list(CANONICAL)

    def setup(self, draft: Draft[HighCardState], names: list[str], seed: int, options: dict[str, Any]) -> None:
        _setup(draft, names, seed, options)

    def to_act(self, state: HighCardState) -> list[int]:
        return [state["current"]] if state["status"] == ACTIVE else []

    def seat_moves(self, state: HighCardState, seat: int) -> list[Play]:
        return _seat_moves(state, seat)

    def players_view(self, state: HighCardState, viewer: Viewer) -> list[dict[str, Any]]:
        return _players_view(state, viewer)

    def board_view(self, state: HighCardState, viewer: Viewer) -> dict[str, Any]:
        return _board_view(state, viewer)

    def why_illegal(self, state: HighCardState, seat: int, move: PostedMove, legal: list[Play]) -> str:
        return _why_illegal(state, seat, move) or super().why_illegal(state, seat, move, legal)

    def deal_world(self, state: HighCardState, seat: int, seed: int, events: Sequence[Event]) -> HighCardState:
        return _deal_world(state, seat, seed)

