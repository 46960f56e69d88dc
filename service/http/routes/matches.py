"""Match resources: create, view, legal moves, moves, events, record, delete.

Views are thin: parse (schemas), call :class:`service.domain.matches.Lodge`, return an
orjson ``Response``.  The ``@blp.response`` decorators document the bodies.
"""
from __future__ import annotations

import re
from typing import Any

import marshmallow as ma
from flask import Response, request, url_for
from flask.views import MethodView
from marshmallow import fields

from service.http.api import ETAG_HEADER, NO_STORE, PRIVATE, Blueprint, json_response
from service.http.context import lodge
from service.http.errors import ApiError
from service.http.schemas import (
    ConditionalHeaders,
    CreatedMatchSchema,
    CreateMatchSchema,
    EventsQuerySchema,
    EventsSchema,
    LegalMovesSchema,
    MoveHeaders,
    MoveRequestSchema,
    MoveResultSchema,
    RecordSchema,
    SeatQuerySchema,
    ViewSchema,
)
from service.ops.limits import wait_slot

blp = Blueprint("matches", __name__, url_prefix="/v1/matches",
                description="Matches: create, watch, play, follow, record, delete")

#: Token optional (spectator without one) / required.
OPTIONAL_TOKEN: list[dict[str, list[str]]] = [{}, {"bearer": []}]
TOKEN: list[dict[str, list[str]]] = [{"bearer": []}]
_VERSION_TAG = re.compile(r'\s*(?:(?:W/)?"(-?\d{1,18})"|(-?\d{1,18}))\s*')

#: ``?legal=true`` (api.md "Legal moves", 1.1), on the view, moves and the stream.
LEGAL_DESCRIPTION = ("add `legal_moves`: the caller's own legal moves by seat (a seat: its own while it is to "
                     "act; the admin: every seat to act; a spectator: `{}`), so a bot needs one request per move")
#: The component documenting a body's ``legal_moves`` (:func:`document_legal`).
LEGAL_MOVES_COMPONENT = "LegalMovesBySeat"
LEGAL_MOVES = {"$ref": f"#/components/schemas/{LEGAL_MOVES_COMPONENT}"}


def legal_field(description: str = LEGAL_DESCRIPTION) -> fields.Boolean:
    """The ``legal`` query flag (default false)."""
    return fields.Boolean(load_default=False, metadata={"description": description})


class ViewQuerySchema(ma.Schema):
    legal = legal_field()


class MoveQuerySchema(SeatQuerySchema):
    legal = legal_field()



def _etag(version: int) -> dict[str, str]:
    return {"ETag": f'"{version}"', **PRIVATE}


def _match_url(match_id: str) -> str:
    return url_for("matches.Match", match_id=match_id)


@blp.route("")
class Matches(MethodView):
    @blp.body_arguments(CreateMatchSchema())
    @blp.response(201, CreatedMatchSchema, description="Created: tokens and the spectator view", headers={
        "Location": {"description": "URL of the new match", "schema": {"type": "string"}}, **ETAG_HEADER})
    @blp.problems("invalid_request", "game_not_found", "forbidden", "ladder_not_found", "payload_too_large",
                  "invalid_options", "rate_limited", "store_unavailable")
    def post(self, body: dict[str, Any]) -> Response:
        """Create a match

        Returns a bearer token per seat and an `admin_token` (sees everything,
        may act for any seat, may delete).  Keep them: they are stored hashed.
        """
        created = lodge().create(body["game"], body["players"], body.get("seed"), body.get("options"),
                                 public=body.get("public"), clock=body.get("clock"),
                                 spectators=body.get("spectators"), referee=body.get("referee"),
                                 ladder=body.get("ladder"))
        headers = {"Location": _match_url(created["match_id"]), **_etag(0)}
        return json_response(created, 201, headers)


@blp.route("/<string:match_id>")
class Match(MethodView):
    @blp.doc(security=OPTIONAL_TOKEN)
    @blp.lazy_arguments(ViewQuerySchema(), location="query")
    @blp.lazy_arguments(ConditionalHeaders(), location="headers")
    @blp.response(200, ViewSchema, description="The caller's view (and `legal_moves` with `?legal=true`)",
                  headers=ETAG_HEADER)
    @blp.alt_response(304, description="Not Modified: still at the version of `If-None-Match`",
                      headers=ETAG_HEADER)
    @blp.problems("invalid_request", "unauthenticated", "forbidden", "match_not_found", "rate_limited",
                  "store_unavailable")
    def get(self, query: dict[str, Any], headers: dict[str, Any], match_id: str) -> Response:
        """The match as the caller may see it (spectator, seat or admin)"""
        version, body = lodge().view(match_id, request.headers.get("Authorization"), headers.get("if_none_match"),
                                     query["legal"])
        if body is None:
            return Response(status=304, headers=_etag(version))
        return json_response(body, 200, _etag(version))

    @blp.doc(security=TOKEN)
    @blp.response(204, description="Deleted")
    @blp.problems("unauthenticated", "forbidden", "match_not_found", "rate_limited", "store_unavailable")
    def delete(self, match_id: str) -> Response:
        """Delete a match (admin token)"""
        lodge().delete(match_id, request.headers.get("Authorization"))
        return Response(status=204)


@blp.route("/<string:match_id>/legal-moves")
class LegalMoves(MethodView):
    @blp.doc(security=TOKEN)
    @blp.lazy_arguments(SeatQuerySchema(), location="query")
    @blp.response(200, LegalMovesSchema, description="Every legal move of the seat now (empty: nothing to decide)")
    @blp.problems("invalid_request", "unauthenticated", "forbidden", "match_not_found", "rate_limited",
                  "store_unavailable")
    def get(self, query: dict[str, Any], match_id: str) -> Response:
        """Legal moves of a seat (seat token, or admin with `?seat=k`)"""
        body = lodge().legal_moves(match_id, request.headers.get("Authorization"), query.get("seat"))
        return json_response(body, headers=NO_STORE)


@blp.route("/<string:match_id>/moves")
class Moves(MethodView):
    @blp.doc(security=TOKEN)
    @blp.lazy_arguments(MoveQuerySchema(), location="query")
    @blp.lazy_arguments(MoveHeaders(), location="headers")
    @blp.body_arguments(MoveRequestSchema())
    @blp.response(200, MoveResultSchema, description="Applied: new version, events and the caller's view",
                  headers=ETAG_HEADER)
    @blp.problems("invalid_request", "unauthenticated", "forbidden", "match_not_found", "version_conflict",
                  "not_your_turn", "match_finished", "payload_too_large", "illegal_move",
                  "idempotency_key_reused", "rate_limited", "store_unavailable")
    def post(self, query: dict[str, Any], headers: dict[str, Any], body: dict[str, Any], match_id: str) -> Response:
        """Apply one move

        Checks, in order: match exists, token, match finished, version (body
        `version` or `If-Match`), seat to act, legality.  Moves that need no
        decision are carried out in the same request and show up as events.
        With `?legal=true` the body also carries `legal_moves` at its version
        (for the admin: of every seat to act next); a replayed idempotent
        request answers the first response with the legal moves at its version.
        """
        version = _expected_version(body.get("version"), headers.get("if_match"))
        status, data, new_version = lodge().moves.play(
            match_id, request.headers.get("Authorization"), query.get("seat"), body["move"], version,
            headers.get("idempotency_key"), query["legal"])
        return json_response(data, status, _etag(new_version))


@blp.route("/<string:match_id>/events")
class Events(MethodView):
    @blp.doc(security=OPTIONAL_TOKEN)
    @blp.lazy_arguments(EventsQuerySchema(), location="query")
    @blp.response(200, EventsSchema, description="Events after `after`, redacted for the caller")
    @blp.problems("invalid_request", "unauthenticated", "forbidden", "match_not_found", "rate_limited",
                  "store_unavailable")
    def get(self, query: dict[str, Any], match_id: str) -> Response:
        """Events after a version, optionally long-polling (`wait` seconds)"""
        if query["wait"] <= 0:
            return json_response(lodge().events(match_id, request.headers.get("Authorization"), query["after"], 0),
                                 headers=NO_STORE)
        with wait_slot():
            body = lodge().events(match_id, request.headers.get("Authorization"), query["after"], query["wait"])
        return json_response(body, headers=NO_STORE)


@blp.route("/<string:match_id>/record")
class Record(MethodView):
    @blp.doc(security=OPTIONAL_TOKEN)
    @blp.response(200, RecordSchema, description="The full game record")
    @blp.problems("unauthenticated", "forbidden", "match_not_found", "rate_limited", "store_unavailable")
    def get(self, match_id: str) -> Response:
        """Game record (admin any time; anyone once the match is finished)"""
        return json_response(lodge().record(match_id, request.headers.get("Authorization")), headers=PRIVATE)


def _expected_version(in_body: int | None, if_match: str | None) -> int | None:
    """The version a move is meant for: body ``version`` or ``If-Match``."""
    if if_match is None or if_match.strip() == "*":
        return in_body
    parsed = _VERSION_TAG.fullmatch(if_match)
    if parsed is None:
        raise ApiError("invalid_request", 'If-Match must be a version in quotes, like "17"',
                       errors={"If-Match": ['expected "<version>"']})
    version = int(parsed.group(1) or parsed.group(2))
    if in_body is not None and in_body != version:
        raise ApiError("invalid_request", "body version and If-Match disagree; send one of them",
                       errors={"version": ["differs from If-Match"]})
    return version


def document_legal(spec: Any) -> None:
    """Document ``legal_moves``: its component (moves by seat, each one of
    the games' moves, as in ``LegalMoves``), the member of ``MoveResult`` and
    the optional member of each game's view (GET match's body is the view,
    and the games' views admit no other member).  Runs after
    :func:`service.http.openapi_games.document`."""
    schemas = spec.components.schemas
    for variant in schemas["View"].get("oneOf", []):
        view = schemas[variant["$ref"].rsplit("/", 1)[1]]
        view["properties"]["legal_moves"] = {
            "allOf": [LEGAL_MOVES], "description": "GET match with `?legal=true` only (elsewhere beside `state`)"}
    spec.components.schema(LEGAL_MOVES_COMPONENT, component={
        "type": "object", "description": "with `?legal=true`: " + LEGAL_DESCRIPTION.split(": ", 1)[1],
        "additionalProperties": {"type": "array", "items": schemas["LegalMoves"]["properties"]["moves"]["items"]},
        "example": {"2": [{"type": "draw"}]}})
    schemas["MoveResult"]["properties"]["legal_moves"] = LEGAL_MOVES
