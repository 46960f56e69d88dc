"""Ladders (api.md 1.2): create one, register entrants, read the leaderboard.

Thin like :mod:`service.http.routes.matches`: parse, call
:class:`service.domain.ladders.Ladders`, return an orjson ``Response``.
"""
from __future__ import annotations

from typing import Any

from flask import Response, request, url_for
from flask.views import MethodView

from service.http.api import NO_STORE, Blueprint, json_response
from service.http.context import lodge
from service.http.ladder_schemas import (
    CreatedEntrantSchema,
    CreatedLadderSchema,
    CreateEntrantSchema,
    CreateLadderSchema,
    LeaderboardSchema,
)

blp = Blueprint("ladders", __name__, url_prefix="/v1/ladders",
                description="Rating ladders: entrants, ratings updated by every finished ladder match, "
                            "the leaderboard")

TOKEN: list[dict[str, list[str]]] = [{"bearer": []}]


@blp.route("")
class Ladders(MethodView):
    @blp.body_arguments(CreateLadderSchema())
    @blp.response(201, CreatedLadderSchema, description="Created: the ladder's admin token", headers={
        "Location": {"description": "URL of the leaderboard", "schema": {"type": "string"}}})
    @blp.problems("invalid_request", "game_not_found", "payload_too_large", "rate_limited", "store_unavailable")
    def post(self, body: dict[str, Any]) -> Response:
        """Create a rating ladder of one game

        Returns its `admin_token` (keep it: it is stored hashed), which
        registers entrants and puts matches in the ladder.
        """
        created = lodge().ladders.create(body["game"], body["name"])
        return json_response(created, 201, {"Location": url_for("ladders.Ladder", ladder_id=created["ladder_id"])})


@blp.route("/<string:ladder_id>")
class Ladder(MethodView):
    @blp.response(200, LeaderboardSchema, description="The leaderboard, best rating (μ − 3σ) first")
    @blp.problems("ladder_not_found", "rate_limited", "store_unavailable")
    def get(self, ladder_id: str) -> Response:
        """The leaderboard

        Every finished ladder match is rated in it exactly once.
        """
        return json_response(lodge().ladders.board(ladder_id), headers=NO_STORE)


@blp.route("/<string:ladder_id>/entrants")
class Entrants(MethodView):
    @blp.doc(security=TOKEN)
    @blp.body_arguments(CreateEntrantSchema())
    @blp.response(201, CreatedEntrantSchema, description="Registered: the entrant's id and token")
    @blp.problems("invalid_request", "unauthenticated", "forbidden", "ladder_not_found", "invalid_options",
                  "payload_too_large", "rate_limited", "store_unavailable")
    def post(self, body: dict[str, Any], ladder_id: str) -> Response:
        """Register an entrant (the ladder's admin token)

        Names are unique per ladder (else 422 `invalid_options`).  The
        entrant's `token` acts for its seat in the ladder's matches.
        """
        added = lodge().ladders.add_entrant(ladder_id, request.headers.get("Authorization"), body["name"])
        return json_response(added, 201)
