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
    """The engine's view for ``viewer`` plus the service's fields (1.2:
    ``bank`` beside ``deadline`` when the match has time banks)."""
    view = game.view(snap.state, viewer)
    body = {"match_id": meta.match_id, "game": meta.game, "version": snap.version,
            "status": view["status"], "viewer": viewer.to_json(), **view, "deadline": dict(snap.deadline)}
    if meta.bank_ms:
        body["bank"] = dict(snap.bank)
    return body


def clock_settings(meta: Meta) -> dict[str, int] | None:
    """The match's ``clock`` as created (record, lobby): None without one."""
    if meta.clock_ms is None:
        return None
    return {"per_move_ms": meta.clock_ms, **({"bank_ms": meta.bank_ms} if meta.bank_ms else {})}


def legal_for(game: Game, state: dict[str, Any], viewer: Viewer) -> dict[str, list[dict[str, Any]]]:
    """``legal_moves`` of a response (api.md "Legal moves", 1.1): by seat,
    only the caller's own options: a seat its own moves while it is in
    ``to_act``, the admin every seat in ``to_act``, a spectator nothing."""
    if viewer.is_spectator or game.status(state) == FINISHED:
        return {}
    return {str(seat): game.legal_moves(state, seat) for seat in game.to_act(state)
            if viewer.is_admin or viewer.is_seat(seat)}


def redact(game: Game, events: list[dict[str, Any]], viewer: Viewer) -> list[dict[str, Any]]:
    """Events as ``viewer`` may see them, each keeping its version."""
    shown = game.redact_events(events, viewer)
    return [e if "version" in e else {**e, "version": o["version"]} for o, e in zip(events, shown)]
