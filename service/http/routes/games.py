"""The game catalogue."""
from __future__ import annotations

from flask import Response
from flask.views import MethodView

from service.http.api import Blueprint, json_response
from service.http.context import lodge
from service.http.openapi_games import catalogue_entry
from service.http.schemas import GameSchema, GamesSchema

blp = Blueprint("games", __name__, url_prefix="/v1/games",
                description="The game catalogue: players, options, defaults and limits")


@blp.route("")
class Games(MethodView):
    @blp.response(200, GamesSchema)
    @blp.problems("rate_limited")
    def get(self) -> Response:
        """Every game of the catalogue"""
        return json_response({"games": [catalogue_entry(g) for g in lodge().registry]})


@blp.route("/<string:game>")
class GameEntry(MethodView):
    @blp.response(200, GameSchema)
    @blp.problems("game_not_found", "rate_limited")
    def get(self, game: str) -> Response:
        """One game of the catalogue"""
        return json_response(catalogue_entry(lodge().game(game)))
