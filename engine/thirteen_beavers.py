"""13 Beavers (``thirteen-beavers``): a push-your-luck race down the river.

One match is one race of 2–6 beavers.  On its turn a seat guesses whether the
next card is higher or lower than the face-up one, moving its beaver forward
on every right answer, and secures its progress with its dam before a wrong
answer sends the beaver back; the first beaver in Paradise wins.  The engine
is the card master: it turns every card.

Rules: ``docs/games/thirteen-beavers.md`` (rule ids ``TB-n.m``, decisions ``Dn``).

Shuffle contract (TB-3.1, TB-4.11).  Part of the public contract: recorded
matches replay from it, so changing it is a breaking change.

* draw order: ``options.deck``, else ``core.round_deck`` =
  ``seeded_shuffle(DECK, "thirteen-beavers:{seed}:1:0")``; ``deck[0]`` is turned
  face up at setup.
* pond: ``options.fish``, else ``seeded_shuffle(FISH, "thirteen-beavers:{seed}:fish")``;
  the first fish is caught first.
* cave: ``options.wolves``, else ``seeded_shuffle(WOLVES, "thirteen-beavers:{seed}:wolves")``;
  the first token is revealed first.
* the k-th reshuffle (k = 1, 2, …): ``seeded_shuffle(discard, core.reshuffle_key(
  "thirteen-beavers", seed, 1, k))`` = key ``"thirteen-beavers:{seed}:1:{k}"``,
  with the discard oldest first; the face-up card stays.

Canonical orders: ``DECK`` = "1"×4, "2"×4, …, "13"×4; ``FISH`` = turbo×3,
vision×3, stinky×2; ``WOLVES`` = awake×4, asleep.

ThirteenBeaversState (the snapshot; plain JSON): ``status``, ``result``, ``phase``, ``seed``,
``board`` (layout name), ``max_turns``, ``names``; per seat
``beaver``, ``dam`` (space ids) and ``fish`` (held fish ids); ``face_up``,
``draw`` (``draw[0]`` is turned next), ``discard`` (oldest first),
``reshuffles``; ``pond``, ``used_fish``, ``cave``, ``wolf_out``; turn state
``turn``, ``active``, ``answers``, ``turbo`` and ``turn_dam`` (where the active
dam stood at turn start, TB-4.1).  The cave is open iff it is empty (TB-10.2).
An armed Vision (TB-5.4) lives only inside the move that arms it: it is never
stored, so no view or event can show it.  ``recall`` (TB-5.6) changes
nothing: a seat never loses sight of a value it saw, so no view has ``known``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, NotRequired, TypedDict, cast

from engine import declaration as d
from engine import worlds
from engine.core import (
    ACTIVE,
    FINISHED,
    INT,
    PERMUTATION,
    STRING,
    Copiers,
    CoreState,
    Draft,
    Event,
    Game,
    Handler,
    Option,
    PostedMove,
    Viewer,
    copy_layout,
    copy_rows,
    deck_option,
    first_seat_option,
    make_result,
    recall_option,
    reshuffle_key,
    round_deck,
    seat_after,
    seeded_shuffle,
)

GAME_ID = "thirteen-beavers"


class ThirteenBeaversState(CoreState):
    """The snapshot (module docstring)."""

    seed: int
    board: str
    max_turns: int
    names: list[str]
    beaver: list[int]
    dam: list[int]
    fish: list[list[str]]
    face_up: str
    draw: list[str]
    discard: list[str]
    reshuffles: int
    pond: list[str]
    used_fish: list[str]
    cave: list[str]
    wolf_out: list[str]
    turn: int
    active: int | None
    answers: int
    turbo: bool
    turn_dam: int

# --- components (TB-1.1, TB-1.2) -------------------------------------------
CARD_VALUES = tuple(str(v) for v in range(1, 14))
DECK = tuple(v for v in CARD_VALUES for _ in range(4))
TURBO, VISION, STINKY = "turbo", "vision", "stinky"
FISH = (TURBO,) * 3 + (VISION,) * 3 + (STINKY,) * 2
AWAKE, ASLEEP = "awake", "asleep"
WOLVES = (AWAKE,) * 4 + (ASLEEP,)

# --- space kinds (TB-1.4, TB-1.5, TB-1.7) ------------------------------------
START, WATER, AVENUE, LAVA, FISH_POND, RAPIDS, WOLF, PARADISE = (
    "start", "water", "avenue", "lava", "fish", "rapids", "wolf", "paradise")

# --- phases ------------------------------------------------------------------
PHASE_PLAY, PHASE_FINISHED = "play", "over"

# --- moves (TB-4.2) and their parameters -------------------------------------
MOVE_USE_TURBO: Final = "use_turbo"
MOVE_GUESS: Final = "guess"
MOVE_RAPIDS: Final = "rapids"
MOVE_AVENUE: Final = "avenue"
MOVE_DAM: Final = "dam"
HIGHER: Final = "higher"
LOWER: Final = "lower"


# --- the moves as listed (TB-4.2; DECLARATION): a TypedDict per move type -----------
class UseTurbo(TypedDict):
    type: Literal["use_turbo"]


class Guess(TypedDict):
    """``guess``, and ``rapids`` on the rapids space: the same parameters
    (one generator lists both, :func:`_two_ways`)."""

    type: Literal["guess", "rapids"]
    dir: Literal["higher", "lower"]
    #: listed only as ``true`` (TB-4.3: ``false`` is the move without it)
    vision: NotRequired[bool]


class Avenue(TypedDict):
    type: Literal["avenue"]
    value: str


class Dam(TypedDict):
    type: Literal["dam"]


ThirteenBeaversMove = UseTurbo | Guess | Avenue | Dam

# --- outcomes of an answer (TB-4.5, D6) ---------------------------------------
OUTCOME_RIGHT, OUTCOME_WRONG, OUTCOME_EQUAL, OUTCOME_EXACT, OUTCOME_MISS = (
    "right", "wrong", "equal", "exact", "miss")

# --- events (TB-8.1): their fields besides type and seat, one TypedDict per event type ---
class MatchStarted(TypedDict):
    first_seat: int
    face_up: str


class TurnStarted(TypedDict):
    turn: int


class Answered(TypedDict):
    move: str
    dir: str | None
    value: str | None
    previous: str
    card: str
    outcome: str


#: ``from`` is a Python keyword, hence the functional form
Moved = TypedDict("Moved", {"from": int, "to": int, "cause": str})


class DamPlaced(TypedDict):
    space: int
    cause: str


class WolfRevealed(TypedDict):
    token: str


class CaveOpened(TypedDict):
    removed: list[str]


class FishCaught(TypedDict):
    fish: str


class TurnEnded(TypedDict):
    reason: str


class Reshuffled(TypedDict):
    face_up: str
    draw: list[str]


class MatchEnded(TypedDict):
    reason: str
    winners: list[int]


EVENT_MATCH_STARTED = d.EventKind("match_started", MatchStarted)
EVENT_TURN_STARTED = d.EventKind("turn_started", TurnStarted)
EVENT_TURBO_USED = d.EventKind("turbo_used", d.NoFields)
EVENT_ANSWERED = d.EventKind("answered", Answered)
EVENT_VISION_USED = d.EventKind("vision_used", d.NoFields)
EVENT_MOVED = d.EventKind("moved", Moved)
EVENT_DAM_PLACED = d.EventKind("dam_placed", DamPlaced)
EVENT_WOLF_REVEALED = d.EventKind("wolf_revealed", WolfRevealed)
EVENT_CAVE_OPENED = d.EventKind("cave_opened", CaveOpened)
EVENT_FISH_CAUGHT = d.EventKind("fish_caught", FishCaught)
EVENT_TURN_ENDED = d.EventKind("turn_ended", TurnEnded)
EVENT_RESHUFFLED = d.EventKind("reshuffled", Reshuffled)
EVENT_MATCH_ENDED = d.EventKind("match_ended", MatchEnded)

# --- reasons (TB-8.1): ``cause`` of moved / dam_placed, ``reason`` of
# turn_ended / match_ended --------------------------------------------------
REASON_RIGHT, REASON_WRONG, REASON_EQUAL, REASON_VISION, REASON_STINKY = (
    "right", "wrong", "equal", "vision", "stinky")
REASON_RAPIDS, REASON_RAPIDS_BACK, REASON_RAPIDS_WRONG = "rapids", "rapids_back", "rapids_wrong"
REASON_AVENUE, REASON_AVENUE_MISS, REASON_TO_START = "avenue", "avenue_miss", "to_start"
REASON_BACK_TO_DAM, REASON_DAM, REASON_LAVA = "back_to_dam", "dam", "lava"
REASON_WOLF, REASON_WOLF_AWAKE = "wolf", "wolf_awake"
REASON_PARADISE, REASON_MAX_TURNS = "paradise", "max_turns"


# ---------------------------------------------------------------------------
# Boards as data (TB-1.4 – TB-1.7).
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _Board:
    """A river: ``kinds[i]`` and ``next[i]`` of every space id ``i``."""

    name: str
    kinds: tuple[str, ...]
    next: tuple[tuple[int, ...], ...]

    @property
    def paradise(self) -> int:
        return len(self.kinds) - 1

    def is_lava(self, space: int) -> bool:
        return self.kinds[space] == LAVA

    def water_behind(self, space: int) -> int:
        """TB-1.6: the largest id < ``space`` that is not lava."""
        return self.water_at_or_behind(space - 1)

    def water_at_or_behind(self, space: int) -> int:
        """Where a backward move to ``space`` ends: lava continues back (TB-1.6)."""
        space = max(space, 0)
        while self.is_lava(space):
            space -= 1
        return space

    def spaces(self) -> list[dict[str, Any]]:
        """The ``board.spaces`` view entry (TB-7.1), a fresh list."""
        return [{"id": i, "kind": k, "next": list(n)} for i, (k, n) in enumerate(zip(self.kinds, self.next))]


def _make_board(name: str, paradise: int, special: dict[int, str], avenue_exit: int) -> _Board:
    """A board from its special spaces; every other id is water (TB-1.6)."""
    kinds = tuple(special.get(i, WATER) for i in range(paradise + 1))
    nexts = tuple(() if i == paradise else (i + 1, avenue_exit) if kinds[i] == AVENUE else (i + 1,)
                  for i in range(paradise + 1))
    return _Board(name, kinds, nexts)


BOARDS = {
    "standard": _make_board("standard", 30, {
        0: START, 3: AVENUE, 6: LAVA, 7: LAVA, 10: FISH_POND, 14: RAPIDS, 18: LAVA, 19: LAVA,
        20: LAVA, 22: WOLF, 26: LAVA, 27: LAVA, 30: PARADISE}, avenue_exit=24),
    "short": _make_board("short", 12, {
        0: START, 1: AVENUE, 3: FISH_POND, 5: LAVA, 7: RAPIDS, 8: WOLF, 11: LAVA, 12: PARADISE},
        avenue_exit=10),
    # TB-1.7, D17: standard's river with the avenue one space later and a
    # shorter skip that ends before the cave (moved to 24), so the avenue is
    # a gamble against the river rather than the way to win (measured in D17)
    "balanced": _make_board("balanced", 30, {
        0: START, 4: AVENUE, 6: LAVA, 7: LAVA, 10: FISH_POND, 14: RAPIDS, 18: LAVA, 19: LAVA,
        20: LAVA, 24: WOLF, 26: LAVA, 27: LAVA, 30: PARADISE}, avenue_exit=21),
}


# ---------------------------------------------------------------------------
# Pure rules: answers, legal moves, why a move is refused.
# ---------------------------------------------------------------------------
def _outcome_of(move: Guess | Avenue, previous: str, card: str) -> str:
    """TB-4.5, D6: right/wrong/equal for guess and rapids, exact/miss for avenue."""
    if move["type"] == MOVE_AVENUE:
        return OUTCOME_EXACT if card == move["value"] else OUTCOME_MISS
    new, old = int(card), int(previous)
    if new == old:
        return OUTCOME_EQUAL
    return OUTCOME_RIGHT if (new > old) == (move["dir"] == HIGHER) else OUTCOME_WRONG


def _two_ways(kind: Literal["guess", "rapids"], vision: bool) -> list[Guess]:
    """TB-4.2 (2)–(4): higher, lower, then both armed with Vision if held."""
    moves: list[Guess] = [{"type": kind, "dir": HIGHER}, {"type": kind, "dir": LOWER}]
    if vision:
        moves += [{"type": kind, "dir": HIGHER, "vision": True}, {"type": kind, "dir": LOWER, "vision": True}]
    return moves


def _seat_moves(state: ThirteenBeaversState, seat: int) -> list[ThirteenBeaversMove]:
    """TB-4.2, in its exact order, for the active seat."""
    held, answers = state["fish"][seat], state["answers"]
    kind = BOARDS[state["board"]].kinds[state["beaver"][seat]]
    moves: list[ThirteenBeaversMove] = []
    if TURBO in held and answers == 0 and not state["turbo"]:
        moves.append({"type": MOVE_USE_TURBO})
    moves += _two_ways(MOVE_GUESS, VISION in held)
    if kind == RAPIDS:
        moves += _two_ways(MOVE_RAPIDS, VISION in held)
    elif kind == AVENUE:
        moves += [{"type": MOVE_AVENUE, "value": v} for v in CARD_VALUES]
    if answers >= 1 and kind != LAVA:
        moves.append({"type": MOVE_DAM})
    return moves


def _normalize_move(move: PostedMove) -> PostedMove:
    """TB-4.3: ``"vision": false`` is the same move as no ``vision`` field."""
    if move.get("vision") is False:
        return {k: v for k, v in move.items() if k != "vision"}
    return move


def _why_illegal(state: ThirteenBeaversState, seat: int, move: PostedMove,
                 legal: list[ThirteenBeaversMove]) -> str | None:
    """Why a legal type has wrong parameters, or why the type is not possible now (TB-4.2)."""
    kind = move.get("type")
    if kind in {m["type"] for m in legal}:
        return _why_illegal_parameters(move)
    return _why_illegal_now(state, seat, kind)


def _why_illegal_parameters(move: PostedMove) -> str | None:
    """Why a move of a legal type has wrong parameters (TB-4.2, TB-4.3)."""
    if move["type"] == MOVE_AVENUE and move.get("value") not in CARD_VALUES:
        return 'avenue needs "value": a card id string "1"…"13" (TB-4.2)'
    if move["type"] not in (MOVE_GUESS, MOVE_RAPIDS):
        return None
    if move.get("dir") not in (HIGHER, LOWER):
        return f'dir must be "{HIGHER}" or "{LOWER}" (TB-4.2)'
    if move.get("vision") is True:
        return '"vision": true needs a held vision fish (TB-4.2, D12)'
    if "vision" in move:
        return '"vision" must be true or false (TB-4.3)'
    return None


def _why_illegal_now(state: ThirteenBeaversState, seat: int, kind: Any) -> str | None:
    """Why a move type is not possible now (TB-4.2), from the seat's own facts."""
    space = state["beaver"][seat]
    if kind == MOVE_USE_TURBO:
        return ("use_turbo needs a held turbo fish, before the turn's first answer, "
                "with turbo not yet on (TB-4.2, D11)")
    if kind == MOVE_DAM:
        return ("dam needs at least one answer this turn (D5)" if state["answers"] == 0
                else f"no dam on lava: space {space} is lava (TB-4.2, D7)")
    if kind in (MOVE_RAPIDS, MOVE_AVENUE):
        return f"{kind} answers are only possible on the {kind} space; the beaver is on space {space} (TB-4.2)"
    return None


# ---------------------------------------------------------------------------
# A move being applied: the working copy of the state, the events it
# produces in play order (TB-8.2), and the steps the handlers share.
# ---------------------------------------------------------------------------
class _BeaverDraft(Draft[ThirteenBeaversState]):
    """The draft of one 13 Beavers move (or the setup), with the steps its handlers share."""

    @property
    def board(self) -> _Board:
        return BOARDS[self.state["board"]]

    def closed_wolf(self, space: int) -> bool:
        """The wolf space while the cave is closed (TB-4.9, TB-4.10)."""
        return self.board.kinds[space] == WOLF and bool(self.state["cave"])

    # --- cards ---------------------------------------------------------
    def answer(self, seat: int, move: Guess | Avenue) -> tuple[str, bool]:
        """TB-4.5: turn a card, report it, reshuffle if needed.  Vision
        (TB-4.6, D12) turns a wrong answer into a right one.  Returns the
        outcome and whether Vision saved it."""
        previous, card = self.turn_card()
        outcome = _outcome_of(move, previous, card)
        direction, value = (None, move["value"]) if move["type"] == MOVE_AVENUE else (move["dir"], None)
        self.emit(EVENT_ANSWERED, seat, move=move["type"], dir=direction, value=value,
                  previous=previous, card=card, outcome=outcome)
        self.reshuffle_if_empty()
        if outcome == OUTCOME_WRONG and move.get("vision"):
            self.spend(seat, VISION)
            self.emit(EVENT_VISION_USED, seat)
            return OUTCOME_RIGHT, True
        return outcome, False

    def turn_card(self) -> tuple[str, str]:
        """TB-4.5: reveal the top draw card; returns (old face-up, new face-up)."""
        state = self.state
        previous, card = state["face_up"], state["draw"].pop(0)
        state["discard"].append(previous)
        state["face_up"] = card
        state["answers"] += 1
        return previous, card

    def reshuffle_if_empty(self) -> None:
        """TB-4.11: an empty draw pile is refilled from the shuffled discard."""
        state = self.state
        if state["draw"]:
            return
        state["reshuffles"] += 1
        state["draw"] = seeded_shuffle(state["discard"], reshuffle_key(GAME_ID, state["seed"], 1, state["reshuffles"]))
        state["discard"] = []
        self.emit(EVENT_RESHUFFLED, None, face_up=state["face_up"], draw=list(state["draw"]))

    # --- fish ----------------------------------------------------------
    def spend(self, seat: int, fish: str) -> None:
        """TB-4.4, TB-4.6: a held fish goes to ``used_fish``."""
        self.state["fish"][seat].remove(fish)
        self.state["used_fish"].append(fish)

    def go_fishing(self, seat: int) -> None:
        """TB-4.12(a), D13: a dam newly on the fish space catches the first fish."""
        state = self.state
        dam = state["dam"][seat]
        if self.board.kinds[dam] != FISH_POND or dam == state["turn_dam"] or not state["pond"]:
            return
        fish = state["pond"].pop(0)
        self.emit(EVENT_FISH_CAUGHT, seat, fish=fish)
        if fish != STINKY:
            state["fish"][seat].append(fish)
            return
        state["used_fish"].append(fish)
        self.send_back(seat, self.board.water_at_or_behind(dam - 2), REASON_STINKY)

    # --- pieces --------------------------------------------------------
    def move_beaver(self, seat: int, to: int, cause: str) -> None:
        """TB-8.1: ``moved`` whenever a beaver changes space."""
        start = self.state["beaver"][seat]
        if start != to:
            self.state["beaver"][seat] = to
            self.emit(EVENT_MOVED, seat, **{"from": start}, to=to, cause=cause)

    def place_dam(self, seat: int, space: int, cause: str) -> None:
        """TB-8.1: ``dam_placed`` whenever a rule places the dam, even in place."""
        self.state["dam"][seat] = space
        self.emit(EVENT_DAM_PLACED, seat, space=space, cause=cause)

    def send_back(self, seat: int, space: int, cause: str) -> None:
        """Beaver and dam both to ``space`` (lava, rapids, avenue miss, stinky)."""
        self.move_beaver(seat, space, cause)
        self.place_dam(seat, space, cause)

    def forward(self, seat: int, steps: int, cause: str) -> None:
        """TB-4.9: step by step; stop at Paradise or the closed wolf space."""
        space = self.state["beaver"][seat]
        for _ in range(steps):
            space = self.board.next[space][0]
            if space == self.board.paradise or self.closed_wolf(space):
                break
        self.move_beaver(seat, space, cause)
        self.land(seat, space)

    def land(self, seat: int, space: int) -> None:
        """TB-4.9: Paradise wins (TB-6.1); the closed wolf space places the dam
        and reveals (TB-4.10); anything else does nothing."""
        if space == self.board.paradise:
            self.place_dam(seat, space, REASON_PARADISE)
            self.finish(REASON_PARADISE)
        elif self.closed_wolf(space):
            self.place_dam(seat, space, REASON_WOLF)
            self.reveal_wolf(seat)

    def reveal_wolf(self, seat: int) -> None:
        """TB-4.10: awake ends the turn; asleep opens the cave for good."""
        state = self.state
        token = state["cave"].pop(0)
        state["wolf_out"].append(token)
        self.emit(EVENT_WOLF_REVEALED, seat, token=token)
        if token == AWAKE:
            self.end_turn(seat, REASON_WOLF_AWAKE)
            return
        removed, state["cave"] = state["cave"], []
        state["wolf_out"].extend(removed)
        self.emit(EVENT_CAVE_OPENED, seat, removed=list(removed))

    # --- turns and the end ---------------------------------------------
    def start_turn(self, seat: int) -> None:
        """TB-4.1: reset the turn; a beaver on the closed wolf space reveals."""
        state = self.state
        state.update({"active": seat, "answers": 0, "turbo": False, "turn_dam": state["dam"][seat]})
        self.emit(EVENT_TURN_STARTED, seat, turn=state["turn"])
        if self.closed_wolf(state["beaver"][seat]):
            self.reveal_wolf(seat)

    def end_turn(self, seat: int, reason: str) -> None:
        """TB-4.12: fishing, then ``max_turns`` (TB-6.2) or the next seat."""
        self.go_fishing(seat)
        self.emit(EVENT_TURN_ENDED, seat, reason=reason)
        state = self.state
        if state["turn"] == state["max_turns"]:
            self.finish(REASON_MAX_TURNS)
            return
        state["turn"] += 1
        self.start_turn(seat_after(seat, len(state["names"])))

    def finish(self, reason: str) -> None:
        """TB-6.1 – TB-6.3: rank by dam position, highest first."""
        state = self.state
        result = make_result(state["dam"], lowest_wins=False, reason=reason)
        state.update({"status": FINISHED, "phase": PHASE_FINISHED, "active": None, "result": result})
        self.emit(EVENT_MATCH_ENDED, None, reason=reason, winners=list(result["winners"]))


# ---------------------------------------------------------------------------
# Setup (TB-3) and the move handlers (TB-4.4 – TB-4.12).
# ---------------------------------------------------------------------------
def _setup(draft: _BeaverDraft, names: list[str], seed: int, options: dict[str, Any]) -> None:
    """TB-3.1 – TB-3.3: the river, the shuffled piles, the first turn."""
    n = len(names)
    deck = round_deck(GAME_ID, seed, 1, DECK, options)
    draft.state.update({
        "status": ACTIVE, "result": None, "phase": PHASE_PLAY, "seed": seed,
        "board": options["board"], "max_turns": options["max_turns"],
        "names": list(names), "beaver": [0] * n, "dam": [0] * n, "fish": [[] for _ in range(n)],
        "face_up": deck[0], "draw": deck[1:], "discard": [], "reshuffles": 0,
        "pond": list(options["fish"] or seeded_shuffle(FISH, f"{GAME_ID}:{seed}:fish")),
        "used_fish": [],
        "cave": list(options["wolves"] or seeded_shuffle(WOLVES, f"{GAME_ID}:{seed}:wolves")),
        "wolf_out": [],
        "turn": 1, "active": None, "answers": 0, "turbo": False, "turn_dam": 0,
    })
    draft.emit(EVENT_MATCH_STARTED, None, first_seat=options["first_seat"], face_up=deck[0])
    draft.start_turn(options["first_seat"])


def _do_use_turbo(draft: _BeaverDraft, seat: int, move: UseTurbo) -> None:
    """TB-4.4, D11: the turn's right guesses move two spaces."""
    draft.spend(seat, TURBO)
    draft.state["turbo"] = True
    draft.emit(EVENT_TURBO_USED, seat)


def _do_guess(draft: _BeaverDraft, seat: int, move: Guess) -> None:
    """TB-4.6, D7: right moves on (two with turbo), wrong returns the beaver
    to its dam, equal places the dam (on lava: both back to water)."""
    outcome, saved = draft.answer(seat, move)
    space = draft.state["beaver"][seat]
    if outcome == OUTCOME_RIGHT:
        draft.forward(seat, 2 if draft.state["turbo"] else 1, REASON_VISION if saved else REASON_RIGHT)
    elif outcome == OUTCOME_WRONG:
        draft.move_beaver(seat, draft.state["dam"][seat], REASON_BACK_TO_DAM)
        draft.end_turn(seat, REASON_WRONG)
    elif draft.board.is_lava(space):
        draft.send_back(seat, draft.board.water_behind(space), REASON_LAVA)
        draft.end_turn(seat, REASON_LAVA)
    else:
        draft.place_dam(seat, space, REASON_EQUAL)
        draft.end_turn(seat, REASON_EQUAL)


def _do_rapids(draft: _BeaverDraft, seat: int, move: Guess) -> None:
    """TB-4.7, D8: three forward (turbo ignored), or back to min(dam, R−3)."""
    outcome, saved = draft.answer(seat, move)
    space = draft.state["beaver"][seat]
    if outcome == OUTCOME_RIGHT:
        draft.forward(seat, 3, REASON_VISION if saved else REASON_RAPIDS)
    elif outcome == OUTCOME_WRONG:
        back = draft.board.water_at_or_behind(min(draft.state["dam"][seat], space - 3))
        draft.send_back(seat, back, REASON_RAPIDS_BACK)
        draft.end_turn(seat, REASON_RAPIDS_WRONG)
    else:
        draft.place_dam(seat, space, REASON_EQUAL)
        draft.end_turn(seat, REASON_EQUAL)


def _do_avenue(draft: _BeaverDraft, seat: int, move: Avenue) -> None:
    """TB-4.8, D9: exact jumps to the exit; a miss sends beaver and dam to Start."""
    outcome, _ = draft.answer(seat, move)
    if outcome == OUTCOME_EXACT:
        exit_space = draft.board.next[draft.state["beaver"][seat]][1]
        draft.move_beaver(seat, exit_space, REASON_AVENUE)
        draft.land(seat, exit_space)
    else:
        draft.send_back(seat, 0, REASON_TO_START)
        draft.end_turn(seat, REASON_AVENUE_MISS)


def _do_dam(draft: _BeaverDraft, seat: int, move: Dam) -> None:
    """TB-4.12: secure the progress and end the turn."""
    draft.place_dam(seat, draft.state["beaver"][seat], REASON_DAM)
    draft.end_turn(seat, REASON_DAM)


HANDLERS: dict[str, Handler] = {
    MOVE_USE_TURBO: _do_use_turbo, MOVE_GUESS: _do_guess, MOVE_RAPIDS: _do_rapids,
    MOVE_AVENUE: _do_avenue, MOVE_DAM: _do_dam,
}


# ---------------------------------------------------------------------------
# Views (TB-7) and events (TB-8); hidden information (TB-5) is decided by
# ``visible_fish`` and ``visible_pile`` only.
# ---------------------------------------------------------------------------
def _visible_fish(fish: str, owner: int, viewer: Viewer) -> str | None:
    """TB-5.3: a fish id is shown to its holder and the admin; stinky to all."""
    return fish if fish == STINKY or viewer.sees_private(owner) else None


def _visible_pile(items: list[str], viewer: Viewer) -> list[str | None]:
    """TB-5.2: draw order, pond and cave are admin only; others see the count."""
    return list(items) if viewer.is_admin else [None] * len(items)


def _players_view(state: ThirteenBeaversState, viewer: Viewer) -> list[dict[str, Any]]:
    """TB-7.2: positions are public, held fish per TB-5.3."""
    return [{"seat": i, "name": name, "beaver": state["beaver"][i], "dam": state["dam"][i],
             "fish": [_visible_fish(f, i, viewer) for f in state["fish"][i]]}
            for i, name in enumerate(state["names"])]


def _board_view(state: ThirteenBeaversState, viewer: Viewer) -> dict[str, Any]:
    """TB-7.1: the river and the piles (draw, pond and cave per TB-5.2)."""
    board = BOARDS[state["board"]]
    active = state["active"]
    return {
        "layout": board.name, "paradise": board.paradise, "spaces": board.spaces(),
        "face_up": state["face_up"], "discard": list(state["discard"]),
        "draw": _visible_pile(state["draw"], viewer), "pond": _visible_pile(state["pond"], viewer),
        "used_fish": list(state["used_fish"]), "cave": _visible_pile(state["cave"], viewer),
        "wolf_out": list(state["wolf_out"]), "cave_open": not state["cave"],
        "turn": state["turn"], "max_turns": state["max_turns"],
        "active": None if active is None else
        {"seat": active, "answers": state["answers"], "turbo": state["turbo"]},
    }


def _redact_fish_caught(event: Mapping[str, Any], viewer: Viewer) -> str | None:
    """TB-5.3: the caught fish as the view shows a held one (stinky is public)."""
    return _visible_fish(event["fish"], event["seat"], viewer)


def _redact_reshuffled(event: Mapping[str, Any], viewer: Viewer) -> list[str | None]:
    """TB-5.2: the new draw order is admin only."""
    return _visible_pile(event["draw"], viewer)


# ---------------------------------------------------------------------------
# The declaration: moves TB-4, view TB-7, events TB-8.
# ---------------------------------------------------------------------------
CARD = d.enum(*CARD_VALUES)
DIR = d.enum(HIGHER, LOWER)
FISH_KIND = d.enum(TURBO, VISION, STINKY)
WOLF_TOKEN = d.enum(AWAKE, ASLEEP)
SPACE = {"type": "integer", "minimum": 0, "description": "a space id"}
KIND = d.enum(START, WATER, AVENUE, LAVA, FISH_POND, RAPIDS, WOLF, PARADISE)
_pub = d.public

DECLARATION = d.Declaration(
    moves=(
        d.MoveType(MOVE_GUESS, {"dir": DIR, "vision": d.BOOL}, optional=("vision",), typed=Guess,
                   doc="guess the next card is higher / lower (TB-4.6); `vision: true` only when holding one (D12)"),
        d.MoveType(MOVE_RAPIDS, {"dir": DIR, "vision": d.BOOL}, optional=("vision",),
                   typed=Guess, doc="on the rapids space: a rapids answer, 3 forward (D8)"),
        d.MoveType(MOVE_AVENUE, {"value": CARD}, typed=Avenue,
                   doc="on the avenue space: name the next card exactly (D9)"),
        d.MoveType(MOVE_USE_TURBO, typed=UseTurbo, doc="holding a turbo, before the turn's first answer (D11)"),
        d.MoveType(MOVE_DAM, typed=Dam, doc="after an answer, not on lava: secure the beaver's space (D5, D7)"),
    ),
    events=(
        d.EventType(EVENT_MATCH_STARTED, {"first_seat": _pub(d.SEAT), "face_up": _pub(CARD)}),
        d.EventType(EVENT_TURN_STARTED, {"turn": _pub(d.INT)}),
        d.EventType(EVENT_TURBO_USED),
        d.EventType(EVENT_VISION_USED),
        d.EventType(EVENT_ANSWERED, {
            "move": _pub(d.enum(MOVE_GUESS, MOVE_RAPIDS, MOVE_AVENUE)), "dir": _pub(d.nullable(DIR)),
            "value": _pub(d.nullable(CARD)), "previous": _pub(CARD), "card": _pub(CARD),
            "outcome": _pub(d.enum(OUTCOME_RIGHT, OUTCOME_WRONG, OUTCOME_EQUAL, OUTCOME_EXACT, OUTCOME_MISS))}),
        d.EventType(EVENT_MOVED, {"from": _pub(SPACE), "to": _pub(SPACE), "cause": _pub(d.STR)}),
        d.EventType(EVENT_DAM_PLACED, {"space": _pub(SPACE), "cause": _pub(d.STR)}),
        d.EventType(EVENT_WOLF_REVEALED, {"token": _pub(WOLF_TOKEN)}),
        d.EventType(EVENT_CAVE_OPENED, {"removed": _pub(d.array(WOLF_TOKEN))}),
        d.EventType(EVENT_FISH_CAUGHT, {"fish": d.redacted(d.nullable(FISH_KIND, d.HIDDEN), _redact_fish_caught)},
                    doc="the fish only to its seat"),
        d.EventType(EVENT_TURN_ENDED, {"reason": _pub(d.STR)}),
        d.EventType(EVENT_RESHUFFLED, {"face_up": _pub(CARD),
                                       "draw": d.redacted(d.array(d.nullable(CARD, d.HIDDEN)), _redact_reshuffled)}),
        d.EventType(EVENT_MATCH_ENDED, {"reason": _pub(d.enum(REASON_PARADISE, REASON_MAX_TURNS)),
                                        "winners": _pub(d.array(d.SEAT))}),
    ),
    player={"beaver": SPACE, "dam": SPACE, "fish": d.array(d.nullable(FISH_KIND, d.HIDDEN))},
    board_view={
        "layout": d.enum(*BOARDS), "paradise": SPACE,
        "spaces": d.array(d.obj({"id": SPACE, "kind": KIND, "next": d.array(SPACE)})),
        "face_up": CARD, "discard": d.array(CARD), "draw": d.array(d.nullable(CARD, d.HIDDEN)),
        "pond": d.array(d.nullable(FISH_KIND, d.HIDDEN)), "used_fish": d.array(FISH_KIND),
        "cave": d.array(d.nullable(WOLF_TOKEN, d.HIDDEN)),
        "wolf_out": d.array(WOLF_TOKEN), "cave_open": d.BOOL, "turn": d.INT, "max_turns": d.INT,
        "active": d.nullable(d.obj({"seat": d.SEAT, "answers": d.INT, "turbo": d.BOOL})),
    },
    presets={"short": {"board": "short"}, "variant": {"board": "short", "recall": "none"},
             "play": {"max_turns": 200}},
    bot="bots.thirteen_beavers",
    board="thirteen-beavers.js",
    docs="docs/games/thirteen-beavers.md",
)


# ---------------------------------------------------------------------------
# Determinization (contract "Worlds and simulation"; docs/games/thirteen-beavers.md).
# ---------------------------------------------------------------------------
def _deal_world(state: ThirteenBeaversState, seat: int, seed: int) -> ThirteenBeaversState:
    """A world for ``seat``: everything public (TB-5.1) and its own fish as
    they are; the draw pile is the cards neither face up nor discarded
    (TB-10.1) in uniform order; the fish nobody has shown (TB-10.2: not held
    by ``seat``, not used) dealt uniformly over the others' hands and the
    pond, stinky ones only into the pond (a caught stinky is public and
    spent at once, TB-4.12, TB-5.3); the cave holds the tokens not yet out
    in uniform order.  Reshuffles come from a fresh seed (TB-4.11)."""
    rng = worlds.world_rng(GAME_ID, seed)
    world = cast(ThirteenBeaversState, copy_layout(state, STATE_COPIERS))
    draw = worlds.unaccounted(DECK, [state["face_up"], *state["discard"]])
    rng.shuffle(draw)
    world["draw"] = draw
    others = [o for o in range(len(state["names"])) if o != seat]
    hidden = worlds.unaccounted(FISH, [*state["fish"][seat], *state["used_fish"]])
    spots = [False] * sum(len(state["fish"][o]) for o in others) + [True] * len(state["pond"])
    fish = iter(worlds.deal_confined(rng, hidden, spots, STINKY.__eq__))
    for o in others:
        world["fish"][o] = [next(fish) for _ in state["fish"][o]]
    world["pond"] = list(fish)
    cave = worlds.unaccounted(WOLVES, state["wolf_out"])
    rng.shuffle(cave)
    world["cave"] = cave
    world["seed"] = worlds.fresh_seed(rng)
    return world


# ---------------------------------------------------------------------------
# The working copy of a move: the state copied by its layout (module docstring).
# ---------------------------------------------------------------------------
#: the state's lists by key (lists of ids or strings copy with ``list``,
#: ``fish`` holds a list per seat); ``result`` and any other key are cloned
STATE_COPIERS: Copiers = {
    "names": list, "beaver": list, "dam": list, "fish": copy_rows, "draw": list, "discard": list,
    "pond": list, "used_fish": list, "cave": list, "wolf_out": list,
}


# ---------------------------------------------------------------------------
# The engine.
# ---------------------------------------------------------------------------
class ThirteenBeavers(Game[ThirteenBeaversState, ThirteenBeaversMove]):
    """13 Beavers: guess higher or lower, dam your progress, reach Paradise."""

    id = GAME_ID
    rule_prefix = "TB"
    title = "13 Beavers"
    summary = ("Push-your-luck river race: guess whether the next card is higher or lower, "
               "secure progress with your dam, first beaver in Paradise wins.")
    min_players = 2
    max_players = 6
    options = (
        deck_option("explicit draw order of the 52 cards (TB-1.1); deck[0] is turned face up first"),
        Option("fish", PERMUTATION, None, items=FISH, secret=True,
               description='pond order, first caught first: a permutation of "turbo"×3, '
                           '"vision"×3, "stinky"×2 (TB-1.2); default: seeded shuffle'),
        Option("wolves", PERMUTATION, None, items=WOLVES, secret=True,
               description='cave order, first revealed first: a permutation of "awake"×4, '
                           '"asleep"×1 (TB-1.2); default: seeded shuffle'),
        first_seat_option(),
        Option("board", STRING, "standard", choices=tuple(BOARDS),
               description="river layout: standard (Paradise 30), short (Paradise 12) or balanced "
                           "(Paradise 30, a shorter avenue ending before the cave: TB-1.7, D17)"),
        Option("max_turns", INT, 2000, minimum=1, maximum=10000,
               description="total turns of all seats; the match ends after this turn (TB-6.2)"),
        recall_option("accepted for uniformity; changes nothing here: every value a seat saw "
                      "stays visible to it, so no view has `known` (TB-5.6)"),
    )
    declaration = DECLARATION
    handlers = HANDLERS
    #: bank the answers so far (TB-4.12); before the first answer the first
    #: listed move (TB-4.2)
    fallback_types = (MOVE_DAM,)
    state_copiers = STATE_COPIERS
    finished_phase = PHASE_FINISHED
    draft_class = _BeaverDraft

    def canonical_deck(self, options: dict[str, Any]) -> list[str]:
        return list(DECK)

    def setup(self, draft: Draft[ThirteenBeaversState], names: list[str], seed: int, options: dict[str, Any]) -> None:
        assert isinstance(draft, _BeaverDraft)
        _setup(draft, names, seed, options)

    def to_act(self, state: ThirteenBeaversState) -> list[int]:
        active = state["active"]
        return [active] if state["status"] == ACTIVE and active is not None else []

    def seat_moves(self, state: ThirteenBeaversState, seat: int) -> list[ThirteenBeaversMove]:
        return _seat_moves(state, seat)

    def normalize_move(self, move: PostedMove) -> PostedMove:
        return _normalize_move(move)

    def why_illegal(self, state: ThirteenBeaversState, seat: int, move: PostedMove,
                    legal: list[ThirteenBeaversMove]) -> str:
        """Name the TB-4.2 condition ``move`` misses (only the seat's own facts)."""
        return _why_illegal(state, seat, move, legal) or super().why_illegal(state, seat, move, legal)

    def players_view(self, state: ThirteenBeaversState, viewer: Viewer) -> list[dict[str, Any]]:
        return _players_view(state, viewer)

    def board_view(self, state: ThirteenBeaversState, viewer: Viewer) -> dict[str, Any]:
        return _board_view(state, viewer)

    def round_of(self, state: ThirteenBeaversState) -> int:
        """One match is one race: always round 1 of 1."""
        return 1

    def rounds_of(self, state: ThirteenBeaversState) -> int:
        return 1

    def scores_of(self, state: ThirteenBeaversState) -> list[int]:
        """TB-6.3: a seat's score is its dam's space."""
        return list(state["dam"])

    def deal_world(self, state: ThirteenBeaversState, seat: int, seed: int,
                   events: Sequence[Event]) -> ThirteenBeaversState:
        """Needs no history: the state holds every public fact (see :func:`_deal_world`)."""
        return _deal_world(state, seat, seed)
