"""Schemas of the ladder resources (api.md "Ladders: ratings on the server", 1.2)."""
from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from service.http.schemas import MAX_NAME

#: A display name: 1…MAX_NAME characters, not blank, no control character
#: (the rule :func:`service.domain.seats.seating` applies to player names).
NAME = validate.And(validate.Length(1, MAX_NAME),
                    validate.Regexp(r"^(?=.*\S)[^\x00-\x1f\x7f-\x9f]+$",
                                    error="must be printable text, not blank"))


class CreateLadderSchema(ma.Schema):
    game = fields.String(required=True, metadata={"description": "game id", "example": "biberbande"})
    name = fields.String(required=True, validate=NAME, metadata={"example": "weekly"})


class CreatedLadderSchema(ma.Schema):
    ladder_id = fields.String(required=True)
    game = fields.String(required=True)
    name = fields.String(required=True)
    admin_token = fields.String(required=True, metadata={
        "description": "registers entrants and seats ladder matches; given only here (stored hashed)"})


class CreateEntrantSchema(ma.Schema):
    name = fields.String(required=True, validate=NAME, metadata={
        "description": "unique in the ladder (else 422 invalid_options); the display name of its seats",
        "example": "snake-v2"})


class CreatedEntrantSchema(ma.Schema):
    entrant_id = fields.String(required=True, metadata={"description": "names the entrant in `players`"})
    name = fields.String(required=True)
    token = fields.String(required=True, metadata={
        "description": "acts for the seat the entrant holds in any of the ladder's matches, like that "
                       "seat's token; given only here (stored hashed)"})


class StandingSchema(ma.Schema):
    entrant_id = fields.String(required=True)
    name = fields.String(required=True)
    mu = fields.Float(required=True, metadata={"description": "openskill Plackett–Luce μ (25 at the start)"})
    sigma = fields.Float(required=True, metadata={"description": "σ (25/3 at the start)"})
    rating = fields.Float(required=True, metadata={"description": "μ − 3σ: the leaderboard's order"})
    matches = fields.Integer(required=True, metadata={"description": "finished ladder matches played"})
    wins = fields.Integer(required=True, metadata={"description": "of them, those finished in first place "
                                                                  "(shared or not)"})
    rank = fields.Integer(required=True, metadata={
        "description": "1 + the number of entrants with a strictly higher rating"})


class LeaderboardSchema(ma.Schema):
    ladder_id = fields.String(required=True)
    game = fields.String(required=True)
    name = fields.String(required=True)
    matches = fields.Integer(required=True, metadata={"description": "finished ladder matches (each rated once)"})
    entrants = fields.List(fields.Nested(StandingSchema), required=True,
                           metadata={"description": "best rating first"})
