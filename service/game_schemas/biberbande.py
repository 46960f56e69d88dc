"""Biberbande (``spec/games/biberbande.md``): moves BB-4, view BB-7, events BB-5.7."""
from __future__ import annotations

from service.game_schemas import HIDDEN, INT, SEAT, array, enum, nullable, obj

CARD = enum(*[str(v) for v in range(10)], "swap", "peek", "draw2")
SLOT = {**enum(0, 1, 2, 3), "description": "display slot, 0…3"}
STAGE = enum("action", "draw2_first", "draw2_second")
DISPLAY = array(nullable(CARD), minItems=4, maxItems=4)
REASON = enum("knock", "turn_limit", "stuck")
RESULT = obj({"scores": array(INT), "ranking": array(array(SEAT)), "winners": array(SEAT)})

MOVES = {
    "draw": {},
    "take_discard": {"slot": SLOT},
    "swap_drawn": {"slot": SLOT},
    "discard_drawn": {},
    "use_swap": {"slot": SLOT, "target_seat": SEAT, "target_slot": SLOT},
    "use_peek": {"slot": SLOT},
    "use_draw2": {},
    "skip_draw": {},
    "knock": {},
    "end_turn": {},
}

EVENTS = {
    "round_started": {"round": INT, "starter": SEAT},
    "dealt": {"displays": array(DISPLAY, description="per seat; the glimpsed cards only to their seat"),
              "discard": array(CARD)},
    "turn_started": {"turn": INT},
    "reshuffled": {"count": INT},
    "drew": {"card": nullable(CARD, HIDDEN), "stage": STAGE},
    "took_discard": {"slot": SLOT, "card": CARD, "discarded": CARD},
    "swapped_drawn": {"slot": SLOT, "card": nullable(CARD, HIDDEN), "discarded": CARD},
    "discarded_drawn": {"card": CARD},
    "used_swap": {"slot": SLOT, "target_seat": SEAT, "target_slot": SLOT},
    "used_peek": {"slot": SLOT, "card": nullable(CARD, HIDDEN)},
    "used_draw2": {},
    "skipped_draw": {},
    "knocked": {"turn": INT},
    "ended_turn": {},
    "round_ended": {"reason": REASON, "knocker": nullable(SEAT), "displays": array(DISPLAY)},
    "replaced": {"slot": SLOT, "special": CARD, "discarded": array(CARD),
                 "card": nullable(CARD, "the number card that replaced the special; null if none was left")},
    "round_scored": {"round": INT, "points": array(INT), "scores": array(INT)},
    "match_ended": {"result": RESULT},
}
EVENT_DOCS = {"drew": "BB-4.2: the card only to the drawing seat", "used_peek": "BB-4.5: the card only to its seat",
              "swapped_drawn": "the kept card only to its seat"}

PLAYER = {
    "display": array(nullable(CARD, HIDDEN), minItems=4, maxItems=4),
    "known": array(nullable(CARD), minItems=4, maxItems=4,
                   description='recall "perfect", seat viewers only: the values this seat has seen'),
}
BOARD = {
    "starter": SEAT, "turn": INT, "current_seat": SEAT, "turn_limit": INT, "max_turn": INT,
    "knocker": nullable(SEAT), "knock_turn": nullable(INT), "last_turn": nullable(INT), "draw_count": INT,
    "draw_pile": nullable(array(CARD), "the draw order: admin only"),
    "discard": array(CARD, description="bottom first"),
    "drawn": nullable(obj({"seat": SEAT, "card": nullable(CARD, HIDDEN), "stage": STAGE}),
                      "the card in hand, if any"),
    "history": array(obj({"round": INT, "starter": SEAT, "reason": REASON, "knocker": nullable(SEAT),
                          "displays": array(DISPLAY), "points": array(INT)})),
}
OPTIONAL = ("known",)
