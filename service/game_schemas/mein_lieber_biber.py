"""Mein Lieber Biber (``spec/games/mein-lieber-biber.md``): moves MLB-4, view MLB-7, events MLB-8."""
from __future__ import annotations

from service.game_schemas import BOOL, HIDDEN, INT, SEAT, array, enum, nullable, obj

COLOURS = ("red", "orange", "yellow", "green", "blue", "purple")
COLOUR = enum(*COLOURS)
CARD = enum(*[f"{c}-{v}" for c in COLOURS for v in range(1, 9)])
PILE = {**enum(0, 1), "description": "draw pile 0 or 1"}
POSITION = {"type": "integer", "minimum": 0, "maximum": 31, "description": "0 raft middle, 1…30 rings, 31 dam"}
ROUND_REASON = enum("tipped", "supply_exhausted", "hand_empty", "raft_empty")
RESULT = obj({"scores": array(INT), "ranking": array(array(SEAT)), "winners": array(SEAT)})

MOVES = {
    "play": {"card": CARD, "beaver": COLOUR},
    "draw": {"pile": PILE},
    "exchange": {"card": CARD, "pile": PILE},
    "discard": {"card": CARD},
    "reward": {"take": enum("stick", "card"), "pile": PILE},
    "pass": {},
}
#: ``reward {take: "stick"}`` has no pile
OPTIONAL_MOVE_FIELDS = {"reward": ("pile",)}

EVENTS = {
    "round_started": {"round": INT, "start_seat": SEAT},
    "dealt": {"cards": array(nullable(CARD, HIDDEN))},
    "drew": {"pile": PILE, "card": nullable(CARD, HIDDEN), "reason": enum("draw", "top_up")},
    "played": {"card": CARD, "beaver": COLOUR, "from": POSITION, "to": POSITION, "joker": BOOL},
    "tipped": {"load": array(INT, minItems=2, maxItems=2), "returned": INT},
    "rewarded": {"take": enum("stick", "card"), "pile": nullable(PILE), "card": nullable(CARD, HIDDEN)},
    "passed": {},
    "exchanged": {"card": CARD, "pile": PILE, "drawn": nullable(CARD, HIDDEN)},
    "discarded": {"card": CARD},
    "round_ended": {"round": INT, "reason": ROUND_REASON,
                    "by": SEAT, "sticks": array(INT), "supply": INT},
    "match_ended": {"result": RESULT},
}
EVENT_DOCS = {"dealt": "MLB-5.4: the cards only to their seat", "drew": "the card only to its seat"}

PLAYER = {
    "hand": array(nullable(CARD, HIDDEN)), "hand_count": INT, "discards": array(CARD), "sticks": INT,
}
BOARD = {
    "rings": array(COLOUR, minItems=30, maxItems=30, description="colour of rings 1…30"),
    "beavers": obj({c: POSITION for c in COLOURS}),
    "piles": array(array(nullable(CARD, HIDDEN)), minItems=2, maxItems=2),
    "supply": INT,
    "load": array(INT, minItems=2, maxItems=2, description="the raft's load (x, y), thousandths of the radius"),
    "tip_threshold": INT, "start_seat": SEAT,
    "last_play": nullable(obj({"seat": SEAT, "card": CARD, "beaver": COLOUR, "from": POSITION, "to": POSITION})),
    "last_round_end": nullable(obj({"round": INT, "reason": ROUND_REASON, "seat": SEAT})),
}
OPTIONAL: tuple[str, ...] = ()
