"""Seats and the lobby (api.md 1.1): claim an open seat, the seat table,
the list of public matches waiting for players.

Thin like :mod:`service.http.routes.matches`: parse, call
:class:`service.domain.matches.Lodge`, return an orjson ``Response``.  The lobby
shares its path with creation (``/v1/matches``: GET here, POST there).
"""
from __future__ import annotations

from typing import Any

from flask import Response, request, url_for
from flask.views import MethodView

from service.http.api import ETAG_HEADER, Blueprint, json_response
from service.http.context import lodge
from service.http.schemas import ClaimedSeatSchema, ClaimRequestSchema, LobbyPageSchema, LobbyQuerySchema, SeatsSchema

blp = Blueprint("seats", __name__, url_prefix="/v1/matches",
                description="Seats and the lobby: open seats, invites, claiming, public matches waiting for players")


@blp.route("")
class Lobby(MethodView):
    @blp.arguments(LobbyQuerySchema(), location="query")
    @blp.response(200, LobbyPageSchema, description="A page of public matches with an open seat, newest first")
    @blp.problems("invalid_request", "game_not_found", "rate_limited", "store_unavailable")
    def get(self, query: dict[str, Any]) -> Response:
        """The lobby: public matches with an open seat

        Newest first; `next` is the cursor of the next page (null at the end).
        Matches that filled, finished, expired or were deleted are not listed.
        """
        return json_response(lodge().lobby_page(query.get("game"), query["limit"], query.get("cursor")))


@blp.route("/<string:match_id>/seats")
class Seats(MethodView):
    @blp.response(200, SeatsSchema, description="Who holds each seat")
    @blp.problems("match_not_found", "rate_limited", "store_unavailable")
    def get(self, match_id: str) -> Response:
        """Who holds each seat: `token`, `open`, `claimed` or `bot`"""
        return json_response(lodge().seat_table(match_id))


@blp.route("/<string:match_id>/seats/<int:seat>")
class Seat(MethodView):
    @blp.body_arguments(ClaimRequestSchema())
    @blp.response(201, ClaimedSeatSchema, description="Claimed: the seat's token and view", headers={
        "Location": {"description": "URL of the match", "schema": {"type": "string"}}, **ETAG_HEADER})
    @blp.problems("invalid_request", "forbidden", "match_not_found", "seat_taken", "match_finished",
                  "payload_too_large", "rate_limited", "store_unavailable")
    def post(self, body: dict[str, Any], match_id: str, seat: int) -> Response:
        """Claim an open seat (the invite; anyone for a public match)

        Turns open seat `seat` into a claimed one and returns its bearer
        token (keep it: it is stored hashed).  The match's version does not
        change.  A seat that is not open is 409 `seat_taken`.
        """
        claimed = lodge().claim(match_id, seat, body.get("invite"), request.headers.get("Authorization"))
        version = claimed["state"]["version"]
        headers = {"Location": url_for("matches.Match", match_id=match_id), "ETag": f'"{version}"',
                   "Cache-Control": "private, no-cache"}
        return json_response(claimed, 201, headers)
