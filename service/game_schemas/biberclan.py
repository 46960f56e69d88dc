"""BiberClan (``spec/games/biberclan.md``): moves BC-4/BC-5, view and events BC-7."""
from __future__ import annotations

from service.game_schemas import BOOL, HIDDEN, INT, SEAT, array, enum, nullable, obj

NUMBER = enum(*[str(v) for v in range(10)])
SPECIAL = enum("clear", "flip", "swap", "peek")
CARD = enum(*[str(v) for v in range(10)], "clear", "flip", "swap", "peek")
SLOT = {**enum("b0", "b1", "b2", "t0", "t1"), "description": "castle slot: bottom b0…b2, top t0 (on b0+b1), t1"}
FACE = enum("up", "down")
TARGET = {**SEAT, "description": "the seat whose castle"}
ROUND_REASON = enum("castle", "turn_limit", "five_of_a_kind")
ROUND_BODY = {
    "round": INT, "reason": ROUND_REASON, "finisher": nullable(SEAT),
    "castles": array(array(nullable(CARD)), description="per seat, slots b0, b1, b2, t0, t1 (null: empty)"),
    "values": array(INT), "bonus": array(INT), "penalty": array(INT), "scores": array(INT),
    "five_of_a_kind": array(SEAT), "totals": array(INT),
}
RESULT = obj({"scores": array(INT), "ranking": array(array(SEAT)), "winners": array(SEAT)})

MOVES = {
    "place": {"target": TARGET, "slot": SLOT, "face": FACE},
    "replace": {"target": TARGET, "slot": SLOT, "face": FACE},
    "stash": {"slot": SLOT, "face": FACE},
    "clear": {"target": TARGET, "slot": SLOT},
    "flip": {"target": TARGET, "slot": SLOT},
    "swap": {"target_a": TARGET, "slot_a": SLOT, "target_b": TARGET, "slot_b": SLOT},
    "peek": {"target": TARGET, "slot": SLOT},
}

EVENTS = {
    "round_started": {"round": INT, "start_seat": SEAT},
    "drew": {"kind": enum("number", "special"), "card": nullable(CARD, HIDDEN)},
    "special_void": {"card": SPECIAL},
    "reshuffled": {"count": INT},
    "placed": {"target": TARGET, "slot": SLOT, "face": FACE, "card": nullable(NUMBER, HIDDEN)},
    "replaced": {"target": TARGET, "slot": SLOT, "face": FACE, "card": nullable(NUMBER, HIDDEN),
                 "removed": nullable(NUMBER, HIDDEN), "removed_face": FACE},
    "stashed": {"slot": SLOT, "face": FACE, "card": nullable(NUMBER, HIDDEN), "removed_face": FACE},
    "cleared": {"target": TARGET, "slot": SLOT, "face": FACE, "card": nullable(NUMBER, HIDDEN)},
    "flipped": {"target": TARGET, "slot": SLOT, "face": FACE, "card": nullable(NUMBER, HIDDEN)},
    "swapped": {"target_a": TARGET, "slot_a": SLOT, "target_b": TARGET, "slot_b": SLOT},
    "peeked": {"target": TARGET, "slot": SLOT, "card": nullable(NUMBER, HIDDEN)},
    "castle_completed": {"final_turns": array(SEAT)},
    "round_ended": ROUND_BODY,
    "match_ended": {"reason": enum("rounds", "five_of_a_kind"), "result": RESULT},
}
EVENT_DOCS = {"drew": "a drawn number only to its seat; a special to everyone",
              "peeked": "the card only to the peeking seat"}

CASTLE_CARD = nullable(obj({"face": FACE, "card": nullable(NUMBER, HIDDEN), "protected": BOOL,
                            "known": nullable(NUMBER)}, optional=("known",)), "null: empty slot")
PLAYER = {
    "cards": INT, "face_up": INT,
    "castle": obj({slot: CASTLE_CARD for slot in ("b0", "b1", "b2", "t0", "t1")}),
}
BOARD = {
    "draw_count": INT,
    "draw_pile": array(CARD, description="the draw order: admin only"),
    "discard": array(CARD), "box": array(CARD, description="specials out of the game this round"),
    "start_seat": SEAT, "turn_seat": nullable(SEAT), "turns": INT, "max_turns": INT,
    "finisher": nullable(SEAT), "final_turns": array(SEAT),
    "held": nullable(obj({"seat": SEAT, "kind": enum("number", "special", "removed"),
                          "card": nullable(CARD, HIDDEN), "known": nullable(CARD),
                          "from": nullable(obj({"target": TARGET, "slot": SLOT}))},
                         optional=("known", "from")), "the card being played, if any"),
    "round_scores": array(array(INT)),
    "last_round": nullable(obj(ROUND_BODY)),
}
OPTIONAL = ("known", "draw_pile")
