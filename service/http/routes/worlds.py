"""Worlds and simulation (api.md "Worlds and simulation: planning over
HTTP", 1.2): sample a match's worlds for a seat, make a new match's world,
simulate moves and playouts on a world.  The work is
:class:`service.domain.worlds.Planner`'s; these views parse and answer.
"""
from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import Response, current_app, request
from flask.views import MethodView
from marshmallow import fields, validate

from engine.core import SEED_MAX
from service.domain.matches import Lodge
from service.domain.world_token import MAX_WORLD
from service.domain.worlds import MAX_MOVES, MAX_STEPS, MAX_WORLDS, Planner
from service.http.api import NO_STORE, Blueprint, json_response
from service.http.context import lodge
from service.http.routes.matches import LEGAL_MOVES_COMPONENT, TOKEN
from service.http.schemas import EventSchema, ResultSchema, SeatQuerySchema

blp = Blueprint("worlds", __name__, url_prefix="/v1",
                description="Worlds and simulation: sample a seat's worlds, play moves and random playouts on them")

_EXTENSION = "lodge.worlds"
_OPEN = {"type": "object", "additionalProperties": True}
_SEED = {"type": "integer", "minimum": 0, "maximum": SEED_MAX}


def planner() -> Planner:
    """The app's planner (one per app: it keeps the world secret once read)."""
    return planner_of(current_app.extensions, lodge())


def planner_of(extensions: dict[str, Any], match_service: Lodge) -> Planner:
    """The planner kept in an app's ``extensions`` (made on first use), for
    the Flask routes here and the fast path (:mod:`service.http.routes.hot`)."""
    found: Planner = extensions.setdefault(_EXTENSION, Planner(match_service))
    return found


# --------------------------------------------------------------------------
# Requests.
# --------------------------------------------------------------------------
class WorldsQuerySchema(SeatQuerySchema):
    n = fields.Integer(load_default=1, validate=validate.Range(min=1, max=MAX_WORLDS), metadata={
        "description": f"how many worlds (1…{MAX_WORLDS}, default 1)"})
    seed = fields.Integer(validate=validate.Range(min=0, max=SEED_MAX), metadata={
        "description": "sample seed: the same seed and the same knowledge give the same worlds (absent: random)"})


class NewWorldSchema(ma.Schema):
    """As for create; a world has no open, bot or webhook seats, no clock and no ladder."""

    players = fields.Raw(required=True, metadata={
        "description": "2…max players: display names, or a player count (as for create; no open, bot or "
                       "webhook seats: 422 invalid_options)",
        "oneOf": [{"type": "array", "minItems": 2, "items": {}}, {"type": "integer", "minimum": 2}],
        "example": ["ana", "bo"]})
    seed = fields.Raw(allow_none=True, metadata={**_SEED, "example": 42,
                                                 "description": "as for create (absent: the server picks one)"})
    options = fields.Raw(allow_none=True, metadata={**_OPEN, "description": "as for create"})
    clock = fields.Raw(allow_none=True, metadata={"description": "not for worlds: 422 invalid_options unless null"})
    ladder = fields.Raw(allow_none=True, metadata={"description": "not for worlds: 422 invalid_options unless null"})


class PostedMoveSchema(ma.Schema):
    seat = fields.Integer(required=True, strict=True, validate=validate.Range(min=0),
                          metadata={"description": "the seat the move is played for (as the admin acting for it)"})
    move = fields.Dict(required=True, metadata={**_OPEN, "description": "one of the seat's legal moves"})


class SimulateSchema(ma.Schema):
    world = fields.String(required=True, metadata={
        "description": f"a world string this server issued (at most {MAX_WORLD} characters)"})
    moves = fields.List(fields.Nested(PostedMoveSchema), load_default=list,
                        validate=validate.Length(max=MAX_MOVES),
                        metadata={"description": f"played in order (at most {MAX_MOVES})"})
    playout = fields.String(allow_none=True, validate=validate.OneOf(["random"]), metadata={
        "description": '"random": then uniformly random legal moves until the world is finished '
                       f"(at most {MAX_STEPS} moves per call in all); null: none"})
    seed = fields.Integer(strict=True, allow_none=True, validate=validate.Range(min=0, max=SEED_MAX), metadata={
        "description": "seeds the playout's generator, alone (absent: random)"})
    as_ = fields.Integer(data_key="as", strict=True, allow_none=True, validate=validate.Range(min=0), metadata={
        "description": "answer as this seat would see the world (null: as the admin)"})


# --------------------------------------------------------------------------
# Responses (documentation only).
# --------------------------------------------------------------------------
class WorldSchema(ma.Schema):
    world = fields.String(required=True, metadata={
        "description": "the signed world: opaque, valid for 24 hours, never stored"})
    state = fields.Dict(required=True, metadata={
        **_OPEN, "description": "the world as the admin's view shows it (a `View`; `match_id` null for a world "
                                "made without a match)"})


class WorldsSchema(ma.Schema):
    version = fields.Integer(required=True)
    seat = fields.Integer(required=True)
    worlds = fields.List(fields.Nested(WorldSchema), required=True)


class SimulationSchema(WorldSchema):
    version = fields.Integer(required=True)
    status = fields.String(required=True, metadata={"enum": ["active", "finished"]})
    to_act = fields.List(fields.Integer(), required=True)
    legal_moves = fields.Dict(required=True, metadata={
        "allOf": [{"$ref": f"#/components/schemas/{LEGAL_MOVES_COMPONENT}"}],
        "description": "by seat: every seat to act (as the admin), or seat `as`'s own"})
    events = fields.List(fields.Nested(EventSchema), required=True, metadata={"description": "this call's events"})
    result = fields.Nested(ResultSchema, required=True, allow_none=True)


# --------------------------------------------------------------------------
# Routes.
# --------------------------------------------------------------------------
@blp.route("/matches/<string:match_id>/worlds")
class MatchWorlds(MethodView):
    @blp.doc(security=TOKEN)
    @blp.lazy_arguments(WorldsQuerySchema(), location="query")
    @blp.response(200, WorldsSchema, description="Worlds of the match for the seat at the current version")
    @blp.problems("invalid_request", "unauthenticated", "forbidden", "match_not_found", "match_finished",
                  "rate_limited", "store_unavailable")
    def get(self, query: dict[str, Any], match_id: str) -> Response:
        """Sample worlds for a seat (seat token, or admin with `?seat=k`)"""
        body = planner().match_worlds(match_id, request.headers.get("Authorization"), query.get("seat"),
                                      query["n"], query.get("seed"))
        return json_response(body, headers=NO_STORE)


@blp.route("/games/<string:game>/worlds")
class NewWorld(MethodView):
    @blp.body_arguments(NewWorldSchema())
    @blp.response(200, WorldSchema, description="The version-0 world of that match (stored nowhere)")
    @blp.problems("invalid_request", "game_not_found", "payload_too_large", "invalid_options", "rate_limited",
                  "store_unavailable")
    def post(self, body: dict[str, Any], game: str) -> Response:
        """The world a new match would start in"""
        return json_response(planner().new_world(game, body), headers=NO_STORE)


@blp.route("/games/<string:game>/simulate")
class Simulate(MethodView):
    @blp.body_arguments(SimulateSchema())
    @blp.response(200, SimulationSchema, description="The world after the moves and the playout")
    @blp.problems("invalid_request", "game_not_found", "payload_too_large", "invalid_world", "illegal_move",
                  "rate_limited", "store_unavailable")
    def post(self, body: dict[str, Any], game: str) -> Response:
        """Play moves and a random playout on a world (no token; stores nothing)"""
        found = planner().simulate(game, body["world"], body["moves"], body.get("playout"), body.get("seed"),
                                   body.get("as_"))
        return json_response(found, headers=NO_STORE)
