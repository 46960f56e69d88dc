"""Marshmallow schemas: request validation and the documented responses.

Request schemas load and validate bodies and query strings (failures are 400
``invalid_request`` with field errors).  Response schemas only document: hot
paths serialise with orjson and return a ready ``Response``.
"""
from __future__ import annotations

import json
import re
from typing import Any

import marshmallow as ma
from marshmallow import fields, validate

import bots
from engine.core import ADMIN, OPTION_TYPES, SEAT, SEED_MAX, SPECTATOR
from service.http.errors import MAX_ECHO, clip

MAX_WAIT = 60
#: The largest version a query may name (2**53 - 1: exact in every JSON client).
MAX_VERSION = 2**53 - 1
#: Longest display name of a player.
MAX_NAME = 64
#: If-Match: a version tag ``"17"`` (a bare ``17`` is accepted too) or ``*``.
IF_MATCH = r'^\s*((W/)?"-?[0-9]{1,18}"|-?[0-9]{1,18}|\*)\s*$'
IDEMPOTENCY_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


# --------------------------------------------------------------------------
# Requests.
# --------------------------------------------------------------------------
#: The bots a seat may name: the tournament harness's built-in bots, and
#: ``ismcts`` where the server enables it (:func:`bots.server_kinds`).
BOT_NAMES = bots.server_kinds()
#: Limits of a webhook seat's secret (api.md "Webhook seats", 1.2).
SECRET_MIN, SECRET_MAX = 16, 256
#: Limits of ``clock.per_move_ms``: one second to one day.
CLOCK_MIN_MS, CLOCK_MAX_MS = 1_000, 86_400_000
#: 1.2: the most ``clock.bank_ms`` (one hour) and ``spectators.delay`` (versions) may be.
BANK_MAX_MS, DELAY_MAX = 3_600_000, 1_000
#: A player object of the create request (api.md "Create", 1.1).
PLAYER_OBJECT: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["name"],
    "properties": {"name": {"type": "string", "minLength": 1, "maxLength": MAX_NAME},
                   "open": {"type": "boolean", "description": "no token now: claimed later with the invite"},
                   "bot": {"type": "string", "enum": list(BOT_NAMES),
                           "description": "the server plays this seat (not together with `open`)"},
                   "webhook": {
                       "type": "object", "additionalProperties": False, "required": ["url", "secret"],
                       "description": "1.2: an HTTP service plays this seat: the server POSTs each decision to "
                                      "`url` (a host `WEBHOOK_HOSTS` allows), signed with `secret` (stored, "
                                      "never shown again)",
                       "properties": {"url": {"type": "string", "format": "uri"},
                                      "secret": {"type": "string", "minLength": SECRET_MIN,
                                                 "maxLength": SECRET_MAX}}}}}
#: A seat of a ladder match (1.2): an entrant instead of a name (the name is the entrant's).
LADDER_PLAYER: dict[str, Any] = {
    **PLAYER_OBJECT, "required": ["entrant"],
    "properties": {"entrant": {"type": "string", "description": "an entrant_id of the match's ladder"},
                   **{k: v for k, v in PLAYER_OBJECT["properties"].items() if k not in ("name", "open")}}}


class CreateMatchSchema(ma.Schema):
    """Create a match.  ``players``, ``seed``, ``options``, ``public`` and
    ``clock`` are judged by the game and :mod:`service.domain.seats` (bad values:
    422 ``invalid_options``), so they load as given."""

    game = fields.String(required=True, metadata={"description": "game id", "example": "biberbande"})
    players = fields.Raw(required=True, metadata={
        "description": f"2…max players: display names (1…{MAX_NAME} characters each) or player objects "
                       "(`{\"name\"}`, `{\"name\", \"open\": true}`: claimed later with the invite, "
                       "`{\"name\", \"bot\": \"random\" | \"heuristic\"}`: played by the server), "
                       "mixed freely; or a player count",
        "oneOf": [{"type": "array", "minItems": 2,
                   "items": {"oneOf": [{"type": "string", "minLength": 1, "maxLength": MAX_NAME},
                                       PLAYER_OBJECT, LADDER_PLAYER]}},
                  {"type": "integer", "minimum": 2}],
        "example": ["ana", {"name": "bo", "open": True}, {"name": "Bobo", "bot": "heuristic"}]})
    seed = fields.Raw(allow_none=True, metadata={
        "type": "integer", "minimum": 0, "maximum": SEED_MAX, "example": 42,
        "description": "makes the match reproducible; absent: the server picks one and records it"})
    options = fields.Raw(allow_none=True, metadata={
        "type": "object", "additionalProperties": True, "example": {"rounds": 3},
        "description": "game-specific options (see the catalogue); unknown ones: 422"})
    public = fields.Raw(allow_none=True, metadata={
        "type": "boolean", "nullable": True,
        "description": "list the match in the lobby while a seat is open, and let anyone claim its open seats "
                       "(default false)"})
    clock = fields.Raw(allow_none=True, metadata={
        "type": "object", "nullable": True, "additionalProperties": False, "required": ["per_move_ms"],
        "properties": {"per_move_ms": {"type": "integer", "minimum": CLOCK_MIN_MS, "maximum": CLOCK_MAX_MS},
                       "bank_ms": {"type": "integer", "minimum": 0, "maximum": BANK_MAX_MS, "default": 0,
                                   "description": "1.2: each seat's time bank: a deadline is `per_move_ms` plus "
                                                  "what is left of it; time beyond `per_move_ms` comes out of it"}},
        "example": {"per_move_ms": 30000},
        "description": "a deadline on every decision (milliseconds per move); part of the record"})
    spectators = fields.Raw(allow_none=True, metadata={
        "type": "object", "nullable": True, "additionalProperties": False,
        "properties": {"delay": {"type": "integer", "minimum": 0, "maximum": DELAY_MAX, "default": 0}},
        "example": {"delay": 10},
        "description": "1.2: until the match is finished, callers without a seat or admin token (and the "
                       "referee) see version max(0, current − delay)"})
    referee = fields.Raw(allow_none=True, metadata={
        "type": "boolean", "nullable": True,
        "description": "1.2: add a `referee_token` to the response: it reads every hidden card, with the "
                       "spectators' delay, and may not act, delete or claim"})
    ladder = fields.Raw(allow_none=True, metadata={
        "type": "object", "nullable": True, "additionalProperties": False, "required": ["id", "token"],
        "properties": {"id": {"type": "string"}, "token": {"type": "string"}},
        "description": "1.2: the match joins this ladder (`token`: the ladder's admin token); every element of "
                       "`players` is then `{\"entrant\": \"<entrant_id>\", …}`"})


class MoveRequestSchema(ma.Schema):
    move = fields.Dict(required=True, metadata={
        "description": "one of the seat's legal moves, e.g. {\"type\": \"draw\"}, or its id alone, e.g. {\"id\": 3}",
        "type": "object", "additionalProperties": True,
        "properties": {"type": {"type": "string"}, "id": {"type": "integer"}}})
    version = fields.Integer(strict=True, allow_none=True, metadata={
        "description": "the version the move is meant for; stale: 409 version_conflict"})

    @ma.pre_load
    def _wrapped(self, data: Any, **kwargs: Any) -> Any:
        """A move posted bare (``{"type": "draw"}``) or as a string: the
        detail shows the body it belongs in."""
        if isinstance(data, dict) and ("move" not in data or isinstance(data["move"], str)):
            raise ma.ValidationError(_wrap_hint(data), "move")
        return data

    @ma.validates_schema
    def _move_has_type(self, data: dict[str, Any], **kwargs: Any) -> None:
        """A move names its ``type`` (a string) or its ``id`` (an integer), or both."""
        move = data.get("move")
        if move is None:
            return
        if "id" in move and not _is_id(move["id"]):
            raise ma.ValidationError("the move's 'id' must be an integer (GET …/legal-moves lists each "
                                     "legal move with its id)", "move")
        if "id" not in move and not isinstance(move.get("type"), str):
            raise ma.ValidationError("the move needs a string 'type' (or an integer 'id')", "move")


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _wrap_hint(body: dict[str, Any]) -> str:
    """How to post ``body``'s move: its own move wrapped in ``{"move": …}``
    when it has a ``type``, else the shape of the body (docs/api.md "Apply a move")."""
    move = body.get("move")
    move = {"type": move} if isinstance(move, str) else {k: v for k, v in body.items() if k != "version"}
    version = {"version": body["version"]} if type(body.get("version")) is int else {}
    optional = "" if version else ' (optionally with "version": <n>)'
    if not isinstance(move.get("type"), str) and not _is_id(move.get("id")):
        return (f'missing; post {{"move": <one of the seat\'s legal moves>}}{optional}, e.g. '
                '{"move": {"type": "draw"}}; GET …/legal-moves lists them')
    expected = clip(json.dumps({"move": move, **version}, ensure_ascii=False), 2 * MAX_ECHO)
    where = "must be an object; post" if "move" in body else 'missing; post the move inside "move":'
    return f"{where} {expected}{optional}"


class SeatQuerySchema(ma.Schema):
    seat = fields.Integer(validate=validate.Range(min=0), metadata={
        "description": "the seat (required with the admin token; a seat token may only name its own)"})


class EventsQuerySchema(ma.Schema):
    after = fields.Integer(load_default=-1, validate=validate.Range(min=-1, max=MAX_VERSION), metadata={
        "description": "only events with a version above this (-1: all)"})
    wait = fields.Float(load_default=0, validate=validate.Range(min=0, max=MAX_WAIT), allow_nan=False,
                        metadata={"description": f"long-poll up to this many seconds (0…{MAX_WAIT})"})


class ConditionalHeaders(ma.Schema):
    if_none_match = fields.String(data_key="If-None-Match", metadata={
        "description": '`"<version>"`: 304 Not Modified while the match is still at that version'})


class MoveHeaders(ma.Schema):
    if_match = fields.String(data_key="If-Match", metadata={
        "pattern": IF_MATCH,
        "description": '`"<version>"`: the version the move is meant for (like body `version`)'})
    idempotency_key = fields.String(data_key="Idempotency-Key", validate=validate.Regexp(IDEMPOTENCY_KEY), metadata={
        "description": "1…255 visible ASCII characters; a retry with the same key (same match, same "
                       "token) returns the first response and applies nothing twice"})


# --------------------------------------------------------------------------
# Responses (documentation only).
# --------------------------------------------------------------------------
_OPEN = {"type": "object", "additionalProperties": True}


class OptionSchema(ma.Schema):
    """One match option of a game, as the catalogue lists it."""

    class Meta:
        unknown = ma.INCLUDE

    name = fields.String(required=True)
    type = fields.String(required=True, metadata={"enum": list(OPTION_TYPES)})
    description = fields.String()
    default = fields.Raw(required=True, allow_none=True, metadata={"nullable": True})
    default_doc = fields.String()
    minimum = fields.Integer()
    maximum = fields.Integer(allow_none=True)
    choices = fields.List(fields.String(), metadata={"description": "string options: the allowed values"})
    items = fields.List(fields.String(), metadata={"description": "permutation options: the items to order"})


class MoveTypeSchema(ma.Schema):
    """One move type of a game and the fields a move of it carries."""

    type = fields.String(required=True)
    fields_ = fields.List(fields.String(), required=True, data_key="fields")


class GameSchema(ma.Schema):
    id = fields.String(required=True)
    title = fields.String(required=True)
    summary = fields.String()
    min_players = fields.Integer(required=True)
    max_players = fields.Integer(required=True)
    options = fields.List(fields.Nested(OptionSchema), required=True)
    actions = fields.Integer(required=True, metadata={
        "description": "the number of distinct moves at the largest player count: every listed move's `id` "
                       "is 0 … actions − 1 (docs: each game's \"Moves as numbers\")"})
    moves = fields.List(fields.Nested(MoveTypeSchema), metadata={"description": "every move type of the game"})
    schemas = fields.Dict(keys=fields.String(), values=fields.String(), metadata={
        "description": "names of the game's components in this document: `move`, `view`, `event`"})
    board = fields.String(metadata={"description": "the `/play` board module of the game (under `/play/js/boards/`)"})


class GamesSchema(ma.Schema):
    games = fields.List(fields.Nested(GameSchema), required=True)


class ViewerSchema(ma.Schema):
    role = fields.String(required=True, metadata={"enum": [SPECTATOR, SEAT, ADMIN, "referee"]})
    seat = fields.Integer(required=True, allow_none=True)


class ResultSchema(ma.Schema):
    class Meta:
        unknown = ma.INCLUDE

    scores = fields.List(fields.Integer(), required=True)
    ranking = fields.List(fields.List(fields.Integer()), required=True)
    winners = fields.List(fields.Integer(), required=True)


class ViewSchema(ma.Schema):
    """The match as the caller may see it."""

    match_id = fields.String(required=True)
    game = fields.String(required=True)
    version = fields.Integer(required=True)
    status = fields.String(required=True, metadata={"enum": ["active", "finished"]})
    viewer = fields.Nested(ViewerSchema, required=True)
    round = fields.Integer(required=True)
    rounds = fields.Integer(required=True)
    phase = fields.String(required=True)
    to_act = fields.List(fields.Integer(), required=True)
    players = fields.List(fields.Dict(metadata=_OPEN), required=True,
                          metadata={"description": "per seat: seat, name and public game fields"})
    board = fields.Dict(required=True, metadata={**_OPEN, "description": "game-specific"})
    scores = fields.List(fields.Integer(), required=True)
    result = fields.Nested(ResultSchema, required=True, allow_none=True)
    deadline = fields.Dict(keys=fields.String(), values=fields.Integer(), metadata={
        "description": "1.1: per seat to act, the epoch millisecond by which it must move (a match with a "
                       "clock; then the server plays its fallback move); {} without a clock or when nobody acts "
                       "(1.2: and in a view held back by a spectator delay)"})
    bank = fields.Dict(keys=fields.String(), values=fields.Integer(), metadata={
        "description": "1.2: with `clock.bank_ms` > 0, per seat (every seat), what is left of its time bank "
                       "in milliseconds ({} in a view held back by a spectator delay)"})


class SeatTokenSchema(ma.Schema):
    """A seat of the new match: its token, or `open` / `bot` (no token)."""

    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    token = fields.String(metadata={"description": "bearer token of this seat (token seats only)"})
    open = fields.Boolean(metadata={"enum": [True], "description": "an open seat: claim it with the invite"})
    bot = fields.String(metadata={"enum": list(BOT_NAMES), "description": "a seat the server plays"})
    webhook = fields.Boolean(metadata={"enum": [True], "description": "1.2: a seat its webhook plays"})


class CreatedMatchSchema(ma.Schema):
    match_id = fields.String(required=True)
    game = fields.String(required=True)
    version = fields.Integer(required=True)
    seed = fields.Integer(required=True)
    seats = fields.List(fields.Nested(SeatTokenSchema), required=True)
    admin_token = fields.String(required=True)
    referee_token = fields.String(metadata={
        "description": "1.2: with `referee: true` only: reads every hidden card with the spectators' delay"})
    invite = fields.String(metadata={
        "description": "when a seat is open: the secret that claims it (`POST …/seats/{k}`); given only here"})
    state = fields.Nested(ViewSchema, required=True, metadata={"description": "spectator view"})


class EventSchema(ma.Schema):
    class Meta:
        unknown = ma.INCLUDE

    type = fields.String(required=True)
    seat = fields.Integer(required=True, allow_none=True)
    version = fields.Integer(required=True)


class LegalMovesSchema(ma.Schema):
    version = fields.Integer(required=True)
    seat = fields.Integer(required=True)
    moves = fields.List(fields.Dict(metadata=_OPEN), required=True,
                        metadata={"description": "every legal move, stable order, each with its `id`; "
                                                 "may carry a `label`"})


class MoveResultSchema(ma.Schema):
    version = fields.Integer(required=True)
    events = fields.List(fields.Nested(EventSchema), required=True)
    state = fields.Nested(ViewSchema, required=True, metadata={"description": "the caller's view"})


class EventsSchema(ma.Schema):
    version = fields.Integer(required=True, metadata={"description": "current version"})
    events = fields.List(fields.Nested(EventSchema), required=True)


class LoggedMoveSchema(ma.Schema):
    version = fields.Integer(required=True)
    seat = fields.Integer(required=True)
    move = fields.Dict(required=True, metadata=_OPEN)
    by = fields.String(metadata={"enum": ["bot", "clock", "resigned", "webhook"], "description": (
        "1.1: a move the server played: a bot seat's, a fallback after the seat's deadline passed, or a "
        "resigned seat's fallback; 1.2: a webhook seat's answer; absent for a seat's own move")})
    reason = fields.String(metadata={"enum": ["timeout", "error", "illegal"], "description": (
        "1.2: why a webhook seat's fallback (`by: clock`) was played, as in its `timed_out` event")})


class RecordSchema(ma.Schema):
    game = fields.String(required=True)
    players = fields.List(fields.String(), required=True)
    seed = fields.Integer(required=True)
    options = fields.Dict(required=True, metadata=_OPEN)
    clock = fields.Dict(metadata={**_OPEN, "description": "`{\"per_move_ms\"}` of a match with a clock, with "
                                                          "`bank_ms` when it has a time bank (absent without one)"})
    moves = fields.List(fields.Nested(LoggedMoveSchema), required=True)
    result = fields.Nested(ResultSchema, required=True, allow_none=True)


class StatusSchema(ma.Schema):
    status = fields.String(required=True, metadata={"example": "ok"})
    warning = fields.String(metadata={"description": "readiness only: a store setting to fix, e.g. a "
                                                     "maxmemory-policy that can evict matches"})


class ProblemSchema(ma.Schema):
    """RFC 9457 problem details with a stable ``code``."""

    type = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    code = fields.String(required=True)
    errors = fields.Dict(metadata={"description": "400: field errors by field name"})
    current_version = fields.Integer(metadata={"description": "409 version_conflict: the current version"})


# --------------------------------------------------------------------------
# Seats, invites and the lobby (api.md 1.1).
# --------------------------------------------------------------------------
SEAT_KINDS = ["token", "open", "claimed", "bot", "webhook"]
#: Lobby page sizes: the default and the most.
LOBBY_LIMIT, LOBBY_MAX = 20, 100


class ClaimRequestSchema(ma.Schema):
    invite = fields.String(metadata={
        "description": "the match's invite (from the create response); not needed for a public match"})


class ClaimedSeatSchema(ma.Schema):
    match_id = fields.String(required=True)
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    token = fields.String(required=True, metadata={"description": "bearer token of the claimed seat"})
    state = fields.Nested(ViewSchema, required=True, metadata={"description": "the seat's view"})


class SeatSchema(ma.Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True, metadata={
        "enum": SEAT_KINDS, "description": "`token`: its token went to the creator; `open`: nobody holds it "
                                           "yet; `claimed`: claimed with the invite; `bot`: the server plays it; "
                                           "`webhook` (1.2): the server calls the seat's webhook"})
    bot = fields.String(metadata={"enum": list(BOT_NAMES), "description": "bot seats: which bot"})


class SeatsSchema(ma.Schema):
    seats = fields.List(fields.Nested(SeatSchema), required=True)


class LobbyQuerySchema(ma.Schema):
    game = fields.String(metadata={"description": "only this game's matches (absent: every game's)"})
    open = fields.Boolean(load_default=True, validate=validate.Equal(
        True, error="the lobby lists only matches with an open seat: leave open out or send true"), metadata={
        "description": "only matches with an open seat (the lobby lists no others; `false` is refused)"})
    limit = fields.Integer(load_default=LOBBY_LIMIT, validate=validate.Range(min=1, max=LOBBY_MAX), metadata={
        "description": f"matches per page (1…{LOBBY_MAX}, default {LOBBY_LIMIT})"})
    cursor = fields.String(validate=validate.Length(max=200), metadata={
        "description": "the `next` of the previous page"})


class LobbyEntrySchema(ma.Schema):
    match_id = fields.String(required=True)
    game = fields.String(required=True)
    options = fields.Dict(required=True, metadata=_OPEN)
    seats = fields.List(fields.Nested(SeatSchema), required=True)
    clock = fields.Dict(required=True, allow_none=True, metadata={
        **_OPEN, "nullable": True, "description": "`{\"per_move_ms\"}`, or null without a clock"})
    created = fields.String(required=True, metadata={"format": "date-time", "description": "RFC 3339, UTC"})


class LobbyPageSchema(ma.Schema):
    matches = fields.List(fields.Nested(LobbyEntrySchema), required=True, metadata={
        "description": "newest first; may hold fewer than `limit` while `next` is not null"})
    next = fields.String(required=True, allow_none=True, metadata={
        "nullable": True, "description": "cursor of the next page; null when nothing older is left"})
