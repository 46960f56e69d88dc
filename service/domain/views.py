"""What a caller may see: its view of a match, its legal moves and the
events redacted for it.

Every view and event goes through ``game.view`` / ``game.redact_events``
for the caller's viewer, so nothing hidden reaches the wrong client.  The
referee (1.2) reads what the admin reads: the engine sees it as the admin
(:func:`engine_viewer`), its views say ``"role": "referee"``.
"""
from __future__ import annotations

from typing import Any

from engine.core import ADMIN_VIEWER, FINISHED, Game, Viewer
from service.store.store import Meta, Snapshot

#: 1.2: the referee's role: reads what the admin reads, with the spectators' delay, and does nothing.
REFEREE = "referee"
REFEREE_VIEWER = Viewer(REFEREE)


def engine_viewer(viewer: Viewer) -> Viewer:
    """Who the engine redacts for: the admin for the referee, else the caller."""
    return ADMIN_VIEWER if viewer.role == REFEREE else viewer


def delay_for(meta: Meta, viewer: Viewer) -> int:
    """The versions ``viewer`` is held back by (1.2 "Spectator delay and
    referees"): the match's ``spectators.delay`` for a caller without a seat
    or admin token and for the referee, else 0.  Callers apply it only
    while the match is unfinished."""
    return meta.delay if meta.delay and (viewer.is_spectator or viewer.role == REFEREE) else 0


def held_back(delay: int, version: int, events: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
    """The version a caller held back by ``delay`` sees of a match at
    ``version`` (max(0, version − delay)), and which of ``events`` it may see."""
    shown = max(0, version - delay)
    return shown, [e for e in events if e["version"] <= shown]


def view_of(game: Game, meta: Meta, snap: Snapshot, viewer: Viewer) -> dict[str, Any]:
    """The engine's view for ``viewer`` plus the service's fields:
    ``deadline`` (empty without a clock, also while a webhook seat's call
    runs against its own deadline) and, 1.2, ``bank`` beside it when the
    match has time banks."""
    view = game.view(snap.state, engine_viewer(viewer))
    body = {"match_id": meta.match_id, "game": meta.game, "version": snap.version,
            "status": view["status"], "viewer": viewer.to_json(), **view,
            "deadline": {} if meta.clock_ms is None else dict(snap.deadline)}
    if meta.bank_ms:
        body["bank"] = dict(snap.bank)
    return body


def clock_settings(meta: Meta) -> dict[str, int] | None:
    """The match's ``clock`` as created (record, lobby): None without one."""
    if meta.clock_ms is None:
        return None
    return {"per_move_ms": meta.clock_ms, **({"bank_ms": meta.bank_ms} if meta.bank_ms else {})}


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
    shown = game.redact_events(events, engine_viewer(viewer))
    return [e if "version" in e else {**e, "version": o["version"]} for o, e in zip(events, shown)]
