"""What a caller may see: its view of a match, its legal moves and the
events redacted for it.

Every view and event goes through ``game.view`` / ``game.redact_events``
for the caller's viewer, so nothing hidden reaches the wrong client.
"""
from __future__ import annotations

from typing import Any

from engine.core import FINISHED, Game, Viewer
from service.store.store import Meta, Snapshot


def view_of(game: Game, meta: Meta, snap: Snapshot, viewer: Viewer) -> dict[str, Any]:
    """The engine's view for ``viewer`` plus the service's fields."""
    view = game.view(snap.state, viewer)
    return {"match_id": meta.match_id, "game": meta.game, "version": snap.version,
            "status": view["status"], "viewer": viewer.to_json(), **view, "deadline": dict(snap.deadline)}


def with_ids(game: Game, moves: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A listed move list as a client gets it: each move (a new dict, the
    engine's may be shared) with its ``id`` (api.md "Moves as numbers", 1.2:
    :meth:`engine.core.Game.action_id`).  Every list of legal moves the
    service shows goes through here."""
    return [{**move, "id": game.action_id(move)} for move in moves]


def legal_for(game: Game, state: dict[str, Any], viewer: Viewer) -> dict[str, list[dict[str, Any]]]:
    """``legal_moves`` of a response (api.md "Legal moves", 1.1): by seat,
    only the caller's own options: a seat its own moves while it is in
    ``to_act``, the admin every seat in ``to_act``, a spectator nothing;
    each move with its ``id`` (:func:`with_ids`)."""
    if viewer.is_spectator or game.status(state) == FINISHED:
        return {}
    return {str(seat): with_ids(game, game.legal_moves(state, seat)) for seat in game.to_act(state)
            if viewer.is_admin or viewer.is_seat(seat)}


def redact(game: Game, events: list[dict[str, Any]], viewer: Viewer) -> list[dict[str, Any]]:
    """Events as ``viewer`` may see them, each keeping its version."""
    shown = game.redact_events(events, viewer)
    return [e if "version" in e else {**e, "version": o["version"]} for o, e in zip(events, shown)]
