"""Engine core: the game interface and the mechanics every game shares.

A game is a pure, deterministic rules module.  Its state is a plain JSON-able
dict (the snapshot), so serialising is ``orjson.dumps`` and loading is
``orjson.loads``; engines never mutate the state they are given.

Everything here is free of Flask and Redis: the service talks to games only
through :class:`Game` and the registry in :mod:`engine`.
"""
from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, NotRequired, TypedDict, TypeVar, cast

import orjson

from engine.actions import ActionSpace
from engine.declaration import (
    REQUIRED_PRESETS,
    RESULT,
    Declaration,
    DeclarationError,
    EventKind,
    EventType,
    FieldsP,
    NoFields,
    described,
    enum,
    merge,
    public,
)

#: A move as JSON, whatever its game (as the service builds and logs it)
Move = dict[str, Any]
#: A move as posted (parsed JSON, not yet checked) or listed: what the entry
#: points read.  The moves a game lists are typed by the game: one
#: ``TypedDict`` per move type, their union its ``MoveT`` (e.g.
#: ``BiberbandeMove``); only a listed move reaches a handler (:meth:`Game.apply`).
PostedMove = Mapping[str, Any]
Event = dict[str, Any]
#: A snapshot as the service holds it, whatever its game
State = dict[str, Any]


class CoreState(TypedDict):
    """The keys of every game's state that the core reads and writes; a game
    types its state as a ``TypedDict`` extending this one."""

    status: str
    phase: str
    result: dict[str, Any] | None
    #: the seats that resigned, in order (absent before the first)
    resigned: NotRequired[list[int]]


#: The state type of one game (:class:`Game` and :class:`Draft` are generic in it)
StateT = TypeVar("StateT", bound=CoreState)
#: The moves of one game: the union of its move types' ``TypedDict``s
#: (:class:`Game` is generic in it)
MoveT = TypeVar("MoveT", bound=Mapping[str, Any])
JsonT = TypeVar("JsonT")

ACTIVE = "active"
FINISHED = "finished"


# --------------------------------------------------------------------------
# Errors.  Malformed input (a move that is not an object with a string type)
# is the service's job; the engine only tells illegal from not-your-turn.
# --------------------------------------------------------------------------
class GameError(Exception):
    """Base of every error a rules engine raises on a request."""

    code = "game_error"

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class InvalidOptions(GameError):
    """Bad ``players``, ``seed``, ``options`` or ``deck`` at creation."""

    code = "invalid_options"


class IllegalMove(GameError):
    """A well-formed move the rules forbid now."""

    code = "illegal_move"


class NotYourTurn(GameError):
    code = "not_your_turn"


class MatchFinished(GameError):
    code = "match_finished"


class UndeclaredEvent(Exception):
    """An engine emitted (or was asked to redact) an event its game does not
    declare: an undeclared type, a field the declaration does not list, or a
    declared field missing (``Game.declaration``).  A bug, never an answer:
    nothing of the event is shown to anyone, and the move that produced it is
    not applied."""


# --------------------------------------------------------------------------
# Viewers.
# --------------------------------------------------------------------------
SPECTATOR = "spectator"
SEAT = "seat"
ADMIN = "admin"


@dataclass(frozen=True)
class Viewer:
    """Who is looking: a spectator, one seat, or the admin."""

    role: str
    seat: int | None = None

    @property
    def is_admin(self) -> bool:
        return self.role == ADMIN

    @property
    def is_spectator(self) -> bool:
        return self.role == SPECTATOR

    def is_seat(self, seat: int | None) -> bool:
        """True when the viewer is exactly this seat (admin is not a seat)."""
        return self.role == SEAT and seat is not None and self.seat == seat

    def sees_private(self, owner: int | None) -> bool:
        """Admin, or the seat that owns the private thing."""
        return self.role == ADMIN or self.is_seat(owner)

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "seat": self.seat}


ADMIN_VIEWER = Viewer(ADMIN)
SPECTATOR_VIEWER = Viewer(SPECTATOR)


def seat_viewer(seat: int) -> Viewer:
    return Viewer(SEAT, seat)


# --------------------------------------------------------------------------
# Options.
# --------------------------------------------------------------------------
INT, BOOL, STRING, DECK, DECKS, PERMUTATION = "int", "bool", "string", "deck", "decks", "permutation"
OPTION_TYPES = (INT, BOOL, STRING, DECK, DECKS, PERMUTATION)
#: What a non-admin reads in place of a secret option that was given
#: (:meth:`Game.public_options`)
HIDDEN_OPTION = "hidden"


@dataclass(frozen=True)
class Option:
    """One match option as the catalogue shows it and creation checks it.

    ``default`` is a value, or a function of the player count (then
    ``default_doc`` says it in words for the catalogue).  A ``permutation``
    option must order exactly the tokens of ``items`` (e.g. 13 Beavers' fish).
    A ``secret`` option fixes hidden order (a deck, a pond): it is as secret
    as the seed, shown only to the admin until the match is finished
    (:meth:`Game.public_options`).
    """

    name: str
    type: str
    default: Any = None
    minimum: int | None = None
    maximum: int | Callable[[int], int] | None = None
    choices: tuple[str, ...] | None = None
    items: tuple[str, ...] | None = None
    description: str = ""
    default_doc: str | None = None
    #: the option fixes hidden order (a deck, hidden token placements): as
    #: secret as the seed
    secret: bool = False

    def default_for(self, players: int) -> Any:
        return self.default(players) if callable(self.default) else self.default

    def maximum_for(self, players: int) -> int | None:
        return self.maximum(players) if callable(self.maximum) else self.maximum

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "type": self.type,
                                 "description": self.description}
        entry["default"] = None if callable(self.default) else self.default
        if self.default_doc:
            entry["default_doc"] = self.default_doc
        if self.minimum is not None:
            entry["minimum"] = self.minimum
        if self.maximum is not None:
            entry["maximum"] = None if callable(self.maximum) else self.maximum
        if self.choices:
            entry["choices"] = list(self.choices)
        if self.items:
            entry["items"] = list(self.items)
        return entry


def recall_option(description: str = '"perfect": seat views add the values the seat has seen '
                                     'as `known`; "none": memory is left to the client.') -> Option:
    return Option("recall", STRING, "perfect", choices=("perfect", "none"), description=description)


def first_seat_option() -> Option:
    return Option("first_seat", INT, 0, minimum=0, maximum=lambda n: n - 1,
                  description="seat that moves first in round 1 (0…n−1)")


def deck_option(description: str = "explicit draw order for round 1 (first element drawn first)") -> Option:
    return Option("deck", DECK, None, description=description, secret=True)


def decks_option() -> Option:
    return Option("decks", DECKS, None,
                  description="one draw order per round (decks[r-1] is round r); later rounds are "
                              "shuffled from the seed; not together with deck", secret=True)


_TYPE_WORDS = {INT: "an integer", BOOL: "true or false", STRING: "a string", DECK: "a list of card ids",
               DECKS: "a list of decks", PERMUTATION: "a list of token ids"}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_deck(name: str, deck: Any, canonical: Sequence[str], noun: str = "card") -> list[str]:
    """A deck option (or any permutation option) must order exactly ``canonical``."""
    if not isinstance(deck, list) or not all(isinstance(c, str) for c in deck):
        raise InvalidOptions(f"options.{name} must be a list of {noun} ids (strings)")
    if len(deck) != len(canonical):
        raise InvalidOptions(f"options.{name} must hold exactly {len(canonical)} {noun}s, "
                             f"got {len(deck)}")
    have, want = Counter(deck), Counter(canonical)
    if have != want:
        wrong = sorted((have - want).keys() | (want - have).keys())
        raise InvalidOptions(f"options.{name} is not a permutation of the {noun}s: "
                             f"wrong counts of {', '.join(repr(c) for c in wrong[:6])}")
    return list(deck)


def validate_options(game: Game[Any, Any], players: int, options: Any) -> dict[str, Any]:
    """Check ``options`` against the game's declared options; fill defaults.

    Raises :class:`InvalidOptions` with a sentence naming the bad option.
    """
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise InvalidOptions("options must be a JSON object")
    declared = {o.name: o for o in game.options}
    unknown = sorted(set(options) - set(declared))
    if unknown:
        raise InvalidOptions(f"unknown option {unknown[0]!r} for {game.id}; "
                             f"known: {', '.join(sorted(declared))}")
    resolved: dict[str, Any] = {}
    # Plain options first: deck checks may depend on them (``rounds``,
    # ``with_biberbande``), and only valid values may be used there.
    ordered = sorted(declared.values(), key=lambda o: o.type in (DECK, DECKS, PERMUTATION))
    for opt in ordered:
        name = opt.name
        value = options.get(name)
        if value is None:
            if name in options and opt.default is not None:
                raise InvalidOptions(f"options.{name} must be {_TYPE_WORDS[opt.type]}, not null "
                                     "(leave it out for the default)")
            resolved[name] = opt.default_for(players)
            continue
        if opt.type == INT:
            if not _is_int(value):
                raise InvalidOptions(f"options.{name} must be an integer")
            high = opt.maximum_for(players)
            if (opt.minimum is not None and value < opt.minimum) or (high is not None and value > high):
                raise InvalidOptions(f"options.{name} must be between {opt.minimum} and {high}, got {value}")
        elif opt.type == BOOL:
            if not isinstance(value, bool):
                raise InvalidOptions(f"options.{name} must be true or false")
        elif opt.type == STRING:
            if not isinstance(value, str) or (opt.choices and value not in opt.choices):
                raise InvalidOptions(f"options.{name} must be one of {', '.join(map(repr, opt.choices or ()))}")
        elif opt.type == DECK:
            value = check_deck(name, value, game.canonical_deck(resolved))
        elif opt.type == DECKS:
            value = _check_decks(game, value, resolved)
        elif opt.type == PERMUTATION:
            value = check_deck(name, value, opt.items or (), noun="token")
        resolved[name] = value
    if resolved.get("deck") is not None and resolved.get("decks") is not None:
        raise InvalidOptions("give options.deck or options.decks, not both")
    resolved = {name: resolved[name] for name in declared}
    game.check_options(players, resolved)
    return resolved


def _check_decks(game: Game[Any, Any], decks: Any, options: dict[str, Any]) -> list[list[str]]:
    rounds = options["rounds"]
    if not isinstance(decks, list) or not 1 <= len(decks) <= rounds:
        raise InvalidOptions(f"options.decks must be a list of 1…{rounds} decks (one per round)")
    canonical = game.canonical_deck(options)
    return [check_deck(f"decks[{i}]", d, canonical) for i, d in enumerate(decks)]


# --------------------------------------------------------------------------
# Deterministic randomness: only from the seed, never global state.
# --------------------------------------------------------------------------
SEED_MAX = 2**53 - 1  # every JSON client (JavaScript numbers) reads it exactly


def seeded_shuffle(items: Iterable[str], key: str) -> list[str]:
    """Shuffle a copy of ``items`` with ``random.Random(key)``.

    ``random.Random`` seeds from a string through SHA-512, so the order is the
    same on every machine and Python version (the games' shuffle contracts
    rely on this).
    """
    cards = list(items)
    random.Random(key).shuffle(cards)
    return cards


def round_deck(game_id: str, seed: int, round_no: int, canonical: Sequence[str],
               options: dict[str, Any]) -> list[str]:
    """The draw order of a round: ``decks[r-1]``, ``deck`` (round 1), or a
    shuffle keyed ``"<game>:<seed>:<round>:0"``."""
    decks = options.get("decks")
    if decks and round_no <= len(decks):
        return list(decks[round_no - 1])
    if round_no == 1 and options.get("deck"):
        return list(options["deck"])
    return seeded_shuffle(canonical, f"{game_id}:{seed}:{round_no}:0")


def reshuffle_key(game_id: str, seed: int, round_no: int, count: int) -> str:
    """Key of the ``count``-th reshuffle (1, 2, …) of a round."""
    return f"{game_id}:{seed}:{round_no}:{count}"


# --------------------------------------------------------------------------
# Knowledge behind ``recall: "perfect"``: which seats know a physical card.
# A set of seats is an int bit mask so it is small in the snapshot.
# --------------------------------------------------------------------------
NOBODY = 0


def everyone(n: int) -> int:
    return (1 << n) - 1


def only(seat: int) -> int:
    return 1 << seat


def recall_mask(viewer: Viewer, recall: str) -> int:
    """The bit of the seat that gets ``known`` entries (BB-5.6 style): the
    viewer's seat under ``recall: "perfect"``, else :data:`NOBODY`.  A view
    computes it once and passes it to :func:`known_value` per card."""
    if recall != "perfect" or viewer.seat is None or viewer.role != SEAT:
        return NOBODY
    return only(viewer.seat)


def known_value(card: str | None, mask: int, seer: int) -> str | None:
    """The ``known`` entry for a hidden card whose knowers are ``mask``:
    the card when ``seer`` (:func:`recall_mask`) is among them."""
    return card if mask & seer else None


# --------------------------------------------------------------------------
# Seats, rounds, results.
# --------------------------------------------------------------------------
def seat_after(seat: int, n: int, steps: int = 1) -> int:
    return (seat + steps) % n


def seats_from(first: int, n: int) -> list[int]:
    """All seats clockwise starting at ``first``."""
    return [(first + i) % n for i in range(n)]


def ranking(scores: Sequence[int], lowest_wins: bool, first_group: Sequence[int] = ()) -> list[list[int]]:
    """Groups of seats with equal score, best first, seats ascending in a group.

    ``first_group`` seats (e.g. BiberClan's five of a kind) share first place
    ahead of everyone else, whatever their scores.
    """
    rest = [s for s in range(len(scores)) if s not in first_group]
    groups: list[list[int]] = [sorted(first_group)] if first_group else []
    for score in sorted({scores[s] for s in rest}, reverse=not lowest_wins):
        groups.append([s for s in rest if scores[s] == score])
    return groups


def make_result(scores: Sequence[int], lowest_wins: bool, first_group: Sequence[int] = (),
                **extra: Any) -> dict[str, Any]:
    groups = ranking(scores, lowest_wins, first_group)
    return {"scores": list(scores), "ranking": groups, "winners": groups[0], **extra}


# --------------------------------------------------------------------------
# Moves.
# --------------------------------------------------------------------------
def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def same_move(posted: PostedMove, listed: PostedMove) -> bool:
    """Posted move equals a listed one: same keys, same values and JSON types
    (``true`` is not ``1``).  ``label`` is ignored on both sides."""
    if posted.get("type") != listed.get("type"):
        return False
    keys = posted.keys() - {"label"}
    if keys != listed.keys() - {"label"}:
        return False
    return all(_same(posted[k], listed[k]) for k in keys)


def listed_move(posted: PostedMove, legal: Iterable[MoveT]) -> MoveT | None:
    """The first listed move that ``posted`` names (:func:`same_move`), or ``None``.

    Fast: ``label`` is dropped from ``posted`` once and each candidate is
    compared with dict ``==`` (in C); only an equal candidate (or one that
    carries a ``label``) is confirmed by :func:`same_move`, since ``==`` says
    ``true == 1``."""
    bare = {k: v for k, v in posted.items() if k != "label"} if "label" in posted else posted
    for candidate in legal:
        if candidate == bare:
            if all(type(value) is type(bare[key]) for key, value in candidate.items()):
                return candidate
        elif "label" in candidate and same_move(bare, candidate):
            return candidate
    return None


def clone(value: JsonT) -> JsonT:
    """A deep copy of a JSON-able value (fast: one orjson round trip)."""
    copy: JsonT = orjson.loads(orjson.dumps(value))
    return copy


#: JSON values that are never mutated, so a copy may hold the same object
ATOMS = frozenset({str, int, bool, float, type(None)})

#: Per top-level key of a game's state, a function returning a deep copy of
#: its value that knows the value's layout (e.g. ``list`` for a list of strings)
Copiers = Mapping[str, Callable[[Any], Any]]


def copy_rows(rows: list[list[Any]]) -> list[list[Any]]:
    """A copy of a list of lists of atoms (e.g. a hand per seat)."""
    return [list(row) for row in rows]


def copy_layout(state: Mapping[str, Any], copiers: Copiers) -> dict[str, Any]:
    """A deep copy of ``state``, key by key in order: a key in ``copiers``
    through its function, an atom as it is, anything else :func:`clone`d.
    Faster than :func:`clone` for a state with many small lists and dicts;
    as with it, the copy shares no list or dict with ``state``."""
    copy = dict(state)
    for key, value in state.items():
        if type(value) not in ATOMS:
            copy[key] = copiers[key](value) if key in copiers else clone(value)
    return copy


# --------------------------------------------------------------------------
# Cards stored as one character each, so a pile or a round's order is one
# short string in the snapshot.
# --------------------------------------------------------------------------
class CardCodec:
    """Maps card ids to one-character codes and back (``"swap"`` ↔ ``"s"``)."""

    def __init__(self, codes: Mapping[str, str]):
        if any(len(code) != 1 for code in codes.values()) or len(set(codes.values())) != len(codes):
            raise ValueError("card codes must be distinct single characters")
        self.code: dict[str, str] = dict(codes)
        self.card: dict[str, str] = {code: card for card, code in codes.items()}

    def encode(self, cards: Iterable[str]) -> str:
        return "".join(self.code[c] for c in cards)

    def decode(self, codes: str) -> list[str]:
        return list(map(self.card.__getitem__, codes))


#: ids a refusal of a numbered move lists at most (:meth:`Game.posted_move`)
MAX_IDS_SHOWN = 40


# --------------------------------------------------------------------------
# What every game shares beyond its own rules (contract 1.1): resigning, the
# fallback move a server plays for a seat, and who made a move.
# --------------------------------------------------------------------------
MOVE_RESIGN = "resign"
#: Who made a move that is not the seat's own decision (the record's ``by``):
#: a bot seat, the clock (a fallback after a deadline), or the server for a
#: seat that resigned (its fallback).  A seat's own move has no ``by``.
BY_BOT, BY_CLOCK, BY_RESIGNED, BY_WEBHOOK = "bot", "clock", "resigned", "webhook"
BY = (BY_BOT, BY_CLOCK, BY_RESIGNED, BY_WEBHOOK)
#: Why a webhook seat's fallback was played (1.2): ``timed_out``'s ``reason``
#: (no answer in time; another status or a body that is not a move; an
#: illegal move).  A clock's fallback for any other seat has no reason.
TIMED_OUT_REASONS = ("timeout", "error", "illegal")


class TimedOut(TypedDict):
    reason: NotRequired[str]


class EndedByResignation(TypedDict):
    reason: Literal["resigned"]
    result: dict[str, Any]


EVENT_RESIGNED = EventKind("resigned", NoFields)
EVENT_TIMED_OUT = EventKind("timed_out", TimedOut)
#: the core's ``match_ended`` (a resignation); each game's own is merged with it
EVENT_MATCH_ENDED = EventKind("match_ended", EndedByResignation)
#: Events every game emits the same way, all public (a game's own
#: ``match_ended`` is merged with the one of a resignation, :func:`merge`).
CORE_EVENTS: tuple[EventType, ...] = (
    EventType(EVENT_RESIGNED, doc="1.1: the seat resigned"),
    EventType(EVENT_TIMED_OUT,
              {"reason": public(described(enum(*TIMED_OUT_REASONS),
                                          "1.2, webhook seats only: no answer in time, another status or a "
                                          "body that is not a move, or an illegal move"))},
              doc="1.1: the seat's deadline passed (1.2: or its webhook failed); its fallback move follows",
              optional=("reason",)),
    EventType(EVENT_MATCH_ENDED, {"reason": public(enum("resigned")), "result": public(RESULT)},
              doc="1.1: the match ended because all seats but one resigned"),
)


def resigned_seats(state: Mapping[str, Any]) -> list[int]:
    """The seats that resigned, in the order they did (absent before the first)."""
    return list(state.get("resigned", ()))


def rank_resigned(result: dict[str, Any], order: Sequence[int]) -> dict[str, Any]:
    """``result`` with the resigned seats (``order``) below all others, the
    later resigner above the earlier; ``winners`` is the new first group."""
    groups = [[s for s in group if s not in order] for group in result["ranking"]]
    ranked = [g for g in groups if g] + [[s] for s in reversed(order)]
    return {**result, "ranking": ranked, "winners": list(ranked[0])}


# --------------------------------------------------------------------------
# A move (or the setup) being applied: the game's working copy of the state
# and the events it emits, each checked against the declaration.
# --------------------------------------------------------------------------
class Draft(Generic[StateT]):
    """The draft of one move (or the setup): ``state``, a private working copy
    the handlers change, and the ``events`` they emit.  Nothing of it is kept
    unless the whole move succeeds."""

    def __init__(self, game: Game[StateT, Any], state: StateT):
        self.game = game
        self.state = state
        self.events: list[Event] = []

    def emit(self, kind: EventKind[FieldsP], seat: int | None, /,
             *_: FieldsP.args, **fields: FieldsP.kwargs) -> Event:
        """Append event ``kind`` with ``fields`` (checked by mypy against the
        kind's ``TypedDict``); :class:`UndeclaredEvent` unless the game
        declares it with exactly these fields (:meth:`Game.declared`).

        ``kind`` and ``seat`` are positional-only, so an event may carry a field
        named ``kind``; a field named after a Python keyword (``from``) is passed
        as ``**{"from": …}``."""
        event: Event = {"type": str(kind), "seat": seat, **fields}
        rule = self.game.events.get(kind)
        if rule is None or event.keys() != rule.names:  # the common case checks in C
            self.game.declared(event)
        self.events.append(event)
        return event


#: A move handler: applies one legal move of ``seat`` to ``draft``.  Each
#: handler takes its game's draft and the ``TypedDict`` of its own move type
#: (hence ``Any``): :meth:`Game.apply` hands it only a listed move of that type.
Handler = Callable[[Any, int, Any], None]


# --------------------------------------------------------------------------
# The game interface.
# --------------------------------------------------------------------------
class Game(Generic[StateT, MoveT]):
    """Base class of every rules engine.

    Generic in the game's state (``StateT``, a ``TypedDict``) and its moves
    (``MoveT``, the union of one ``TypedDict`` per move type).  A subclass
    declares ``id``, ``title``, ``min_players``, ``max_players``,
    ``options``, ``declaration`` (its move and event types with every field
    and its visibility, view fields, presets, bot, board and docs page:
    :class:`engine.declaration.Declaration`) and ``handlers`` (move type →
    handler), and implements the hooks below.  ``events`` (event type →
    :class:`EventType`, the core's included) is derived from the declaration.
    The shared entry points (:meth:`create`, :meth:`play`, :meth:`apply`,
    :meth:`legal_moves`, :meth:`view`, :meth:`redact_event`) do what every
    game does the same way.
    """

    id: ClassVar[str]
    title: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    options: ClassVar[tuple[Option, ...]]
    declaration: ClassVar[Declaration]
    events: ClassVar[Mapping[str, EventType]]
    handlers: ClassVar[Mapping[str, Handler]]
    summary: ClassVar[str] = ""
    #: prefix of the rule ids in ``docs/games/<id>.md`` (``BB`` for ``BB-4.2``)
    rule_prefix: ClassVar[str]
    #: the class of the draft handed to handlers (a game may extend it)
    draft_class: ClassVar[type[Draft[Any]]] = Draft
    #: the game's safe fallback moves, by type, most preferred first (see
    #: :meth:`fallback`); empty when its rules name none
    fallback_types: ClassVar[tuple[str, ...]] = ()
    #: ``phase`` of a finished match (set when the last opponent resigns)
    finished_phase: ClassVar[str] = "finished"
    #: how :meth:`copy_state` copies the state's keys (:func:`copy_layout`;
    #: a key not listed is cloned)
    state_copiers: ClassVar[Copiers] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """``events`` from the declaration, with :data:`CORE_EVENTS`
        (resigned, timed_out, and the ``match_ended`` of a resignation merged
        into the game's own)."""
        super().__init_subclass__(**kwargs)
        if "declaration" in cls.__dict__:
            cls.events = event_types(cls.declaration)

    # --- to implement --------------------------------------------------
    def canonical_deck(self, options: dict[str, Any]) -> list[str]:
        """The deck in canonical order (``options.deck`` must permute it)."""
        raise NotImplementedError

    def check_options(self, players: int, options: dict[str, Any]) -> None:
        """Extra cross-option checks; raise :class:`InvalidOptions`."""

    def setup(self, draft: Draft[StateT], names: list[str], seed: int, options: dict[str, Any]) -> None:
        """Fill ``draft.state`` (empty) with a new match and emit its setup
        events (options already validated)."""
        raise NotImplementedError

    def to_act(self, state: StateT) -> list[int]:
        raise NotImplementedError

    def seat_moves(self, state: StateT, seat: int) -> list[MoveT]:
        """Every legal move of ``seat``, which is in ``to_act`` of an active
        match; fully specified, in a stable order; each a ``TypedDict`` of its
        move type (``MoveT``)."""
        raise NotImplementedError

    def seat_moves_like(self, state: StateT, seat: int, move: PostedMove) -> list[MoveT]:
        """What :meth:`play` searches for the posted ``move``: the legal moves
        of ``seat`` (to act, match active) with every one that may equal
        ``move`` (:func:`listed_move`) among them in listed order, others
        allowed.  A game may list only those here when that is cheaper (e.g.
        the moves of the posted type and target).  Default: :meth:`seat_moves`."""
        return self.seat_moves(state, seat)

    def players_view(self, state: StateT, viewer: Viewer) -> list[dict[str, Any]]:
        """The view's ``players``: one entry per seat as ``viewer`` may see it."""
        raise NotImplementedError

    def board_view(self, state: StateT, viewer: Viewer) -> dict[str, Any]:
        """The view's ``board`` as ``viewer`` may see it."""
        raise NotImplementedError

    def round_of(self, state: StateT) -> int:
        keys: Mapping[str, Any] = state  # a game without ``round`` overrides this
        return int(keys["round"])

    def rounds_of(self, state: StateT) -> int:
        keys: Mapping[str, Any] = state
        return int(keys["rounds"])

    def scores_of(self, state: StateT) -> list[int]:
        keys: Mapping[str, Any] = state
        return list(keys["scores"])

    def status(self, state: StateT) -> str:
        return str(state["status"])

    def result(self, state: StateT) -> dict[str, Any] | None:
        keys: Mapping[str, Any] = state
        result: dict[str, Any] | None = keys.get("result")
        return result

    def copy_state(self, state: StateT) -> StateT:
        """The private working copy a move starts from: shares no list or
        dict with ``state`` (:func:`copy_layout` by :attr:`state_copiers`)."""
        return cast(StateT, copy_layout(state, self.state_copiers))

    def normalize_move(self, move: PostedMove) -> PostedMove:
        """Map another spelling of a move to the listed one (e.g. 13 Beavers'
        ``"vision": false`` is the plain guess).  Default: unchanged."""
        return move

    def why_illegal(self, state: StateT, seat: int, move: PostedMove, legal: list[MoveT]) -> str:
        """A sentence for a bot author on why ``move`` is refused."""
        types = sorted({m["type"] for m in legal})
        if move.get("type") not in types:
            return (f"{move.get('type')!r} is not possible now (phase {state.get('phase')!r}); "
                    f"legal move types: {', '.join(types)}")
        return (f"no legal {move['type']!r} move has these parameters; "
                "GET legal-moves lists every legal move")

    def deal_world(self, state: StateT, seat: int, seed: int, events: Sequence[Event]) -> StateT:
        """The determinization behind :meth:`sample_world` (an active match)."""
        raise NotImplementedError(f"{self.id} does not sample worlds")

    # --- shared entry points -------------------------------------------
    def catalogue(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "summary": self.summary,
                "min_players": self.min_players, "max_players": self.max_players,
                "options": [o.to_json() for o in self.options], "actions": self.actions}

    def public_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Resolved ``options`` as a non-admin may read them before the match
        ends: a secret option (:attr:`Option.secret`) that was given reads
        :data:`HIDDEN_OPTION`, one left out stays null (its order comes from
        the seed); an option the game does not declare counts as secret."""
        public = {o.name for o in self.options if not o.secret}
        return {name: value if name in public or value is None else HIDDEN_OPTION
                for name, value in options.items()}

    def create(self, names: list[str], seed: int, options: Any) -> tuple[StateT, list[Event], dict[str, Any]]:
        """Validate and set up a match; returns state, setup events and the
        resolved options."""
        if not self.min_players <= len(names) <= self.max_players:
            raise InvalidOptions(f"{self.id} takes {self.min_players}…{self.max_players} players, "
                                 f"got {len(names)}")
        if not _is_int(seed) or not 0 <= seed <= SEED_MAX:
            raise InvalidOptions(f"seed must be an integer 0…{SEED_MAX}")
        resolved = validate_options(self, len(names), options)
        state, events = self.new_state(list(names), seed, resolved)
        return state, events, resolved

    def new_state(self, names: list[str], seed: int, options: dict[str, Any]) -> tuple[StateT, list[Event]]:
        """Set up a match from validated options: its state and setup events."""
        draft = self.draft_class(self, {})
        self.setup(draft, names, seed, options)
        return draft.state, self.checked(draft.events)

    def sample_world(self, state: StateT, seat: int, seed: int, events: Sequence[Event] = ()) -> StateT:
        """A world: a determinization of ``state`` for ``seat`` (contract
        "Worlds and simulation"), a complete state in which ``seat``'s view,
        with every card it has seen where it really is, is the real one, and
        every other hidden card is dealt uniformly among the arrangements
        that fit the public facts, from a generator seeded by ``seed`` alone;
        the world's own future randomness comes from a fresh seed, never the
        match's.  ``events`` is the match's event log so far, for a game whose
        public history constrains the deal beyond the state (only what
        ``seat`` sees of it is read).  A pure function of what ``seat`` knows
        and ``seed`` (:meth:`deal_world`, :mod:`engine.worlds`)."""
        if self.status(state) == FINISHED:
            raise MatchFinished("the match is finished; it has no world to sample")
        return self.deal_world(state, seat, seed, events)

    def legal_moves(self, state: StateT, seat: int) -> list[MoveT]:
        """Every legal move of ``seat`` now; empty unless it is to act."""
        if state["status"] != ACTIVE or seat not in self.to_act(state):
            return []
        return self.seat_moves(state, seat)

    def apply(self, state: StateT, seat: int, move: PostedMove, by: str | None = None,
              reason: str | None = None) -> tuple[StateT, list[Event]]:
        """Apply a move known to be legal (listed by :meth:`legal_moves`) to a
        copy of ``state`` through its handler; return the new state and its events.  A fallback played by
        the clock (``by="clock"``) starts with ``timed_out {seat}`` (with the
        ``reason`` of a webhook seat's fallback, :data:`TIMED_OUT_REASONS`); a
        match ending with resigned seats ranks them last (:func:`rank_resigned`)."""
        draft = self.draft_class(self, self.copy_state(state))
        if by == BY_CLOCK:
            draft.emit(EVENT_TIMED_OUT, seat, **({} if reason is None else {"reason": reason}))
        # The one place a move is narrowed to its game's type: ``move`` is a
        # listed legal move (play() checked it), so it is the TypedDict of its
        # ``type`` that the handler for that type takes (:data:`Handler`).
        self.handlers[move["type"]](draft, seat, move)
        order = resigned_seats(draft.state)
        if order and self.status(draft.state) == FINISHED:
            self._rank_resigned(draft, order)
        return draft.state, self.checked(draft.events)

    def _rank_resigned(self, draft: Draft[StateT], order: list[int]) -> None:
        """Resigned seats below all others, in the state's result and in the
        ``match_ended`` event (its ``result`` or ``winners``)."""
        finished = draft.state["result"]
        assert finished is not None  # the match is finished
        result = rank_resigned(finished, order)
        draft.state["result"] = result
        for event in draft.events:
            if event["type"] == EVENT_MATCH_ENDED:
                if "result" in event:
                    event["result"] = clone(result)
                if "winners" in event:
                    event["winners"] = list(result["winners"])

    def play(self, state: StateT, seat: int, move: PostedMove, by: str | None = None,
             reason: str | None = None) -> tuple[StateT, list[Event]]:
        """Check and apply ``move`` for ``seat``: the one path of every move.
        ``by`` says who decided it when not the seat (:data:`BY`), ``reason``
        why a clock's fallback was played (:meth:`apply`); ``resign`` is open
        to any seat at any time (:meth:`resign`); a move may name a listed
        one by its ``id`` (:meth:`posted_move`)."""
        chosen = self.posted_move(state, seat, move)
        if chosen.get("type") == MOVE_RESIGN:
            return self.resign(state, seat, chosen)
        return self.apply(state, seat, chosen, by, reason)

    def posted_move(self, state: StateT, seat: int, move: PostedMove) -> MoveT | Move:
        """The move :meth:`play` applies for a posted ``move``: the listed
        legal move it names (by its fields, or by its ``id``: contract "Moves
        as numbers"), or a ``resign`` as posted.  Raises in the contract's
        order: :class:`MatchFinished`, :class:`NotYourTurn`, :class:`IllegalMove`."""
        if self.status(state) == FINISHED:
            raise MatchFinished("the match is finished; no more moves are accepted")
        if move.get("type") == MOVE_RESIGN:
            return dict(move)
        if seat not in self.to_act(state):
            raise NotYourTurn(f"seat {seat} has no decision to make now; "
                              f"to act: {self.to_act(state)}")
        if "id" in move:
            return self._numbered(state, seat, move)
        move = self.normalize_move(move)
        candidate = listed_move(move, self.seat_moves_like(state, seat, move)) \
            if state["status"] == ACTIVE else None
        if candidate is None:
            legal = self.legal_moves(state, seat)
            raise IllegalMove(self.why_illegal(state, seat, move, legal))
        return candidate

    def _numbered(self, state: StateT, seat: int, move: PostedMove) -> MoveT:
        """The listed legal move with the posted move's ``id``; with other
        fields too, they must name that same move."""
        action = move["id"]
        found = self.move_of_action(state, seat, action) if _is_int(action) else None
        if found is None:
            raise IllegalMove(self._why_no_id(state, seat, action))
        fields = {k: v for k, v in move.items() if k not in ("id", "label")}
        if fields and not same_move(self.normalize_move(fields), found):
            raise IllegalMove(f"the move's id {action} names {orjson.dumps(found).decode()}, its other fields "
                              "another move; post the id alone, or the fields alone")
        return found

    def _why_no_id(self, state: StateT, seat: int, action: Any) -> str:
        if not _is_int(action):
            return f"a move's id must be an integer 0…{self.actions - 1}"
        ids = sorted(self.action_id(m) for m in self.legal_moves(state, seat))
        shown = ", ".join(map(str, ids[:MAX_IDS_SHOWN])) + (", …" if len(ids) > MAX_IDS_SHOWN else "")
        return (f"no legal move has id {action} now (ids of {self.id} are 0…{self.actions - 1}); "
                f"legal ids now: {shown}; GET legal-moves lists every legal move with its id")

    # --- moves as numbers (contract "Moves as numbers", engine.actions) ---
    @functools.cached_property
    def action_space(self) -> ActionSpace:
        """The game's action space, from its declared move types
        (:mod:`engine.actions`; :class:`DeclarationError` when a parameter's
        values are not known: :func:`check_declaration` builds it)."""
        return ActionSpace(self.declaration.moves, self.max_players)

    @property
    def actions(self) -> int:
        """The number of distinct moves the game has at its largest player count."""
        return self.action_space.size

    def action_id(self, move: PostedMove) -> int:
        """The id (0 … :attr:`actions` − 1) of a fully specified ``move``: a
        function of its type and parameters alone (``label`` ignored); a
        ``ValueError`` for a move outside the space (``resign``)."""
        return self.action_space.id_of(move)

    def move_of_action(self, state: StateT, seat: int, action: int) -> MoveT | None:
        """The listed legal move of ``seat`` whose id is ``action``, or ``None``."""
        if not _is_int(action) or state["status"] != ACTIVE or seat not in self.to_act(state):
            return None
        move = self.action_space.move_of(action)
        return None if move is None else listed_move(move, self.seat_moves_like(state, seat, move))

    def resign(self, state: StateT, seat: int, move: PostedMove) -> tuple[StateT, list[Event]]:
        """``{"type": "resign"}``: any seat of an active match, whether or not
        it is to act (never listed in legal moves).  Emits ``resigned {seat}``;
        when one seat is left that has not resigned, the match ends at once
        and that seat wins (``match_ended`` with ``reason: "resigned"``)."""
        order = resigned_seats(state)
        if seat in order:
            raise IllegalMove(f"seat {seat} has resigned already")
        if set(move) - {"type", "label"}:
            raise IllegalMove("resign takes no parameters: post {\"type\": \"resign\"}")
        draft = self.draft_class(self, self.copy_state(state))
        order.append(seat)
        draft.state["resigned"] = order
        draft.emit(EVENT_RESIGNED, seat)
        left = [s for s in range(len(self.scores_of(state))) if s not in order]
        if len(left) == 1:
            self._end_by_resignation(draft, left[0], order)
        return draft.state, self.checked(draft.events)

    def _end_by_resignation(self, draft: Draft[StateT], winner: int, order: list[int]) -> None:
        """The last seat that has not resigned wins at once; the others rank
        below it, the later resigner above the earlier."""
        result = {"scores": self.scores_of(draft.state), "ranking": [[winner], *([s] for s in reversed(order))],
                  "winners": [winner], "reason": "resigned"}
        draft.state["status"], draft.state["phase"], draft.state["result"] = FINISHED, self.finished_phase, result
        draft.emit(EVENT_MATCH_ENDED, None, reason="resigned", result=clone(result))

    def fallback(self, state: StateT, seat: int) -> MoveT:
        """The move the server plays for ``seat`` (to act) when its clock runs
        out or it has resigned: the first legal move of the most preferred
        type in :attr:`fallback_types`, else the first legal move."""
        legal = self.legal_moves(state, seat)
        for kind in self.fallback_types:
            for move in legal:
                if move["type"] == kind:
                    return move
        return legal[0]

    def declared(self, event: Event, stamped: bool = False) -> EventType:
        """The declared type of ``event``; :class:`UndeclaredEvent` unless the
        game declares its type with exactly its fields (optional ones aside;
        a ``stamped`` event, one stored by the service, may also carry its
        ``version``)."""
        rule = self.events.get(event["type"])
        if rule is None:
            raise UndeclaredEvent(f"{self.id} emitted undeclared event type {event['type']!r}")
        why = rule.mismatch(event, stamped)
        if why is not None:
            raise UndeclaredEvent(f"{self.id}: {why}")
        return rule

    def checked(self, events: list[Event], stamped: bool = False) -> list[Event]:
        """``events`` unchanged, or :class:`UndeclaredEvent` for the first one
        the game does not declare (:meth:`declared`; ``stamped``: stored ones)."""
        declared = self.events
        for event in events:
            rule = declared.get(event["type"])
            if rule is None or event.keys() != (rule.stamped if stamped else rule.names):
                self.declared(event, stamped)
        return events

    def view(self, state: StateT, viewer: Viewer) -> dict[str, Any]:
        """The state as ``viewer`` may see it (the envelope every game shares)."""
        result = self.result(state)
        return {"status": state["status"], "round": self.round_of(state), "rounds": self.rounds_of(state),
                "phase": state["phase"], "to_act": self.to_act(state),
                "players": self.players_view(state, viewer), "board": self.board_view(state, viewer),
                "scores": self.scores_of(state), "result": result and clone(result)}

    def redact_event(self, event: Event, viewer: Viewer) -> Event:
        """A new event as ``viewer`` may see it, field by field as declared
        (:meth:`EventType.redact`; never mutates ``event``); the admin gets
        every declared field; a stored event keeps its ``version``.  :class:`UndeclaredEvent` for an event that
        differs from its declaration: nothing of it is shown."""
        return self.declared(event, stamped=True).redact(event, viewer)

    def redact_events(self, events: Iterable[Event], viewer: Viewer) -> list[Event]:
        """Each event as :meth:`redact_event` gives it; the admin's (every
        declared field) checked in one pass and copied."""
        if viewer.is_admin:
            return [dict(e) for e in self.checked(list(events), stamped=True)]
        return [self.redact_event(e, viewer) for e in events]


def event_types(declaration: Declaration) -> dict[str, EventType]:
    """Event type → :class:`EventType`: the game's and :data:`CORE_EVENTS`
    (a type both declare, ``match_ended``, takes either shape)."""
    core = {e.type: e for e in CORE_EVENTS}
    out = {own.type: merge(own, core[own.type]) if own.type in core else own for own in declaration.events}
    return {**out, **{kind: e for kind, e in core.items() if kind not in out}}


def check_declaration(game: Game[Any, Any]) -> None:
    """:class:`DeclarationError` unless ``game`` declares every piece: move
    types matching its handlers (each typed one with the declared parameters,
    :meth:`MoveType.typed_mismatch`), each parameter's values known (its action
    space, :mod:`engine.actions`), event types (each typed one with the
    declared fields, :meth:`EventType.typed_mismatch`), view fields, the presets of
    :data:`REQUIRED_PRESETS` (valid options), a bot, a board and a docs page."""
    declaration = getattr(type(game), "declaration", None)
    if not isinstance(declaration, Declaration):
        raise DeclarationError(f"game {game.id!r} has no declaration (engine.declaration.Declaration)")
    problems = [piece for piece in ("moves", "events", "player", "board_view", "bot", "board", "docs")
                if not getattr(declaration, piece)]
    moves = {m.type for m in declaration.moves}
    if moves != set(game.handlers):
        problems.append(f"move types {sorted(moves ^ set(game.handlers))} declared or handled, not both")
    if not set(game.fallback_types) <= moves:
        problems.append("fallback_types not among the declared moves")
    problems += [f"preset {name!r}" for name in REQUIRED_PRESETS if name not in declaration.presets]
    problems += [f"move {m.type!r}'s TypedDict {m.typed.__name__} {why}" for m in declaration.moves
                 if (why := m.typed_mismatch()) is not None]
    problems += [f"event {e.type!r}'s TypedDict {why}" for e in declaration.events
                 if (why := e.typed_mismatch()) is not None]
    if problems:
        raise DeclarationError(f"game {game.id!r} lacks or contradicts: {'; '.join(problems)}")
    try:
        game.action_space  # noqa: B018 (built here so that registration fails, not a later move)
    except DeclarationError as error:
        raise DeclarationError(f"game {game.id!r}: {error}") from None
    for name, preset in declaration.presets.items():
        try:
            validate_options(game, game.min_players, dict(preset))
        except InvalidOptions as error:
            raise DeclarationError(f"game {game.id!r}: preset {name!r}: {error.detail}") from None


@dataclass
class Registry:
    """Maps game ids to engines; the service's only way to reach a game."""

    games: dict[str, Game[Any, Any]] = field(default_factory=dict)

    def register(self, game: Game[Any, Any]) -> Game[Any, Any]:
        """Add ``game`` (:class:`DeclarationError` if its declaration lacks a
        piece, :func:`check_declaration`, or its id is taken)."""
        check_declaration(game)
        if game.id in self.games:
            raise DeclarationError(f"game id {game.id!r} is registered twice")
        self.games[game.id] = game
        return game

    def get(self, game_id: str) -> Game[Any, Any] | None:
        return self.games.get(game_id)

    def __iter__(self) -> Iterator[Game[Any, Any]]:
        return iter(self.games.values())

    def ids(self) -> list[str]:
        return list(self.games)
