"""13 Beavers (``spec/games/thirteen-beavers.md``): moves TB-4, view TB-7, events TB-8."""
from __future__ import annotations

from service.game_schemas import BOOL, HIDDEN, INT, SEAT, STR, array, enum, nullable, obj

CARD = enum(*[str(v) for v in range(1, 14)])
DIR = enum("higher", "lower")
FISH = enum("turbo", "vision", "stinky")
WOLF = enum("awake", "asleep")
SPACE = {"type": "integer", "minimum": 0, "description": "a space id"}
KIND = enum("start", "water", "avenue", "lava", "fish", "rapids", "wolf", "paradise")

MOVES = {
    "guess": {"dir": DIR, "vision": BOOL},
    "rapids": {"dir": DIR, "vision": BOOL},
    "avenue": {"value": CARD},
    "use_turbo": {},
    "dam": {},
}
#: ``vision`` is only listed (as true) when the seat holds a vision fish
OPTIONAL_MOVE_FIELDS = {"guess": ("vision",), "rapids": ("vision",)}

EVENTS = {
    "match_started": {"first_seat": SEAT, "face_up": CARD},
    "turn_started": {"turn": INT},
    "turbo_used": {},
    "vision_used": {},
    "answered": {"move": enum("guess", "rapids", "avenue"), "dir": nullable(DIR), "value": nullable(CARD),
                 "previous": CARD, "card": CARD, "outcome": enum("right", "wrong", "equal", "exact", "miss")},
    "moved": {"from": SPACE, "to": SPACE, "cause": STR},
    "dam_placed": {"space": SPACE, "cause": STR},
    "wolf_revealed": {"token": WOLF},
    "cave_opened": {"removed": array(WOLF)},
    "fish_caught": {"fish": nullable(FISH, HIDDEN)},
    "turn_ended": {"reason": STR},
    "reshuffled": {"face_up": CARD, "draw": array(nullable(CARD, HIDDEN))},
    "match_ended": {"reason": enum("paradise", "max_turns"), "winners": array(SEAT)},
}
EVENT_DOCS = {"fish_caught": "the fish only to its seat", "answered": "a vision guess only to its seat"}

PLAYER = {"beaver": SPACE, "dam": SPACE, "fish": array(nullable(FISH, HIDDEN))}
BOARD = {
    "layout": enum("standard", "short"), "paradise": SPACE,
    "spaces": array(obj({"id": SPACE, "kind": KIND, "next": array(SPACE)})),
    "face_up": CARD, "discard": array(CARD), "draw": array(nullable(CARD, HIDDEN)),
    "pond": array(nullable(FISH, HIDDEN)), "used_fish": array(FISH), "cave": array(nullable(WOLF, HIDDEN)),
    "wolf_out": array(WOLF), "cave_open": BOOL, "turn": INT, "max_turns": INT,
    "active": nullable(obj({"seat": SEAT, "answers": INT, "turbo": BOOL})),
}
OPTIONAL: tuple[str, ...] = ()
