"""Match operations, free of HTTP: create, view, move, events, record.

Routes call these with already-validated input and turn the returned
dicts/bytes into responses.  Games are reached only through the registry and
the :class:`engine.core.Game` interface; every view and event goes through
``game.view`` / ``game.redact_events`` for the caller's viewer, so nothing
hidden reaches the wrong client.
"""
from __future__ import annotations

import re
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from engine.core import (
    FINISHED,
    SEED_MAX,
    SPECTATOR_VIEWER,
    Game,
    GameError,
    IllegalMove,
    InvalidOptions,
    MatchFinished,
    NotYourTurn,
    Viewer,
)
from service import auth, metrics
from service.errors import ApiError
from service.notify import Notifier
from service.schemas import MAX_NAME
from service.store import Meta, Snapshot, Store, encode_record

#: CAS attempts for a move without an explicit version before answering 409.
MAX_ATTEMPTS = 8

_GAME_ERRORS: dict[type[GameError], str] = {
    MatchFinished: "match_finished", NotYourTurn: "not_your_turn", IllegalMove: "illegal_move"}


@dataclass(frozen=True)
class Lodge:
    """What a request needs: the store, the game registry and the change
    notifications that wake long-polls and streams."""

    store: Store
    registry: Any
    notifier: Notifier

    # --- lookups -----------------------------------------------------------
    def game(self, game_id: str) -> Game:
        game: Game | None = self.registry.get(game_id)
        if game is None:
            known = ", ".join(g.id for g in self.registry)
            raise ApiError("game_not_found", f"there is no game {game_id!r}; known games: {known}")
        return game

    def catalogue(self) -> list[dict[str, Any]]:
        """Every game's catalogue entry, in registry order."""
        return [g.catalogue() for g in self.registry]

    def meta(self, match_id: str) -> Meta:
        meta = self.store.meta(match_id) if auth.MATCH_ID.fullmatch(match_id) else None
        if meta is None:
            raise _not_found(match_id)
        return meta

    def load(self, match_id: str) -> tuple[Meta, Snapshot]:
        loaded = self.store.load(match_id) if auth.MATCH_ID.fullmatch(match_id) else None
        if loaded is None:
            raise _not_found(match_id)
        return loaded

    def identify(self, meta: Meta, authorization: str | None) -> Viewer:
        return auth.identify(meta, authorization, self._other_meta)

    def _other_meta(self, match_id: str) -> Meta | None:
        """Another match's meta: only loaded to tell 403 from 401."""
        return self.store.meta(match_id)

    # --- create ------------------------------------------------------------
    def create(self, game_id: str, players: Any, seed: Any, options: Any) -> dict[str, Any]:
        """Set up a match; the 201 body (tokens included)."""
        game = self.game(game_id)
        names = _names(game, players)
        if seed is None:
            seed = secrets.randbelow(SEED_MAX + 1)
        try:
            state, events, resolved = game.create(names, seed, options)
        except InvalidOptions as exc:
            raise ApiError("invalid_options", exc.detail) from None
        while True:
            match_id = auth.new_match_id()
            tokens = [auth.new_token(match_id) for _ in names]
            admin = auth.new_token(match_id)
            meta = Meta(match_id, game.id, names, seed, resolved, auth.token_hash(admin),
                        [auth.token_hash(t) for t in tokens], time.time())
            if self.store.create(meta, state, stamp(events, 0)):
                break
        metrics.MATCHES.labels(game.id).inc()
        return {"match_id": match_id, "game": game.id, "version": 0, "seed": seed,
                "seats": [{"seat": i, "name": n, "token": t} for i, (n, t) in enumerate(zip(names, tokens))],
                "admin_token": admin,
                "state": view_of(game, meta, Snapshot(0, state), SPECTATOR_VIEWER)}

    # --- view --------------------------------------------------------------
    def view(self, match_id: str, authorization: str | None,
             if_none_match: str | None) -> tuple[int, dict[str, Any] | None]:
        """The current version and the caller's view, or None for the view
        while ``If-None-Match`` names the current version (304)."""
        meta, snap = self.load(match_id)
        viewer = self.identify(meta, authorization)
        if _matches_version(if_none_match, snap.version):
            return snap.version, None
        return snap.version, view_of(self.game(meta.game), meta, snap, viewer)

    # --- moves -------------------------------------------------------------
    def legal_moves(self, match_id: str, authorization: str | None, seat: int | None) -> dict[str, Any]:
        """The seat's legal moves now; empty when it has nothing to decide."""
        meta, snap = self.load(match_id)
        viewer = self.identify(meta, authorization)
        seat = auth.acting_seat(viewer, seat, len(meta.players), "listing legal moves")
        game = self.game(meta.game)
        moves: list[dict[str, Any]] = []
        if game.status(snap.state) != FINISHED and seat in game.to_act(snap.state):
            moves = game.legal_moves(snap.state, seat)
        return {"version": snap.version, "seat": seat, "moves": moves}

    def play(self, match_id: str, authorization: str | None, seat: int | None, move: dict[str, Any],
             version: int | None, idempotency_key: str | None) -> tuple[int, bytes, int]:
        """Apply one move: (status, body, version the body carries).

        One Redis round trip when this worker's cached snapshot is current;
        the compare-and-set in Redis decides.  A replayed idempotent request
        returns the first response unchanged."""
        cached = self.store.cached(match_id) if auth.MATCH_ID.fullmatch(match_id) else None
        if cached is not None:
            (meta, snap), fresh = cached, False
        else:
            (meta, snap), fresh = self.load(match_id), True
        viewer = self.identify(meta, authorization)
        seat = auth.acting_seat(viewer, seat, len(meta.players), "moving")
        game = self.game(meta.game)
        move = {k: v for k, v in move.items() if k != "label"}
        idem = None
        if idempotency_key is not None:
            idem = f"{'admin' if viewer.is_admin else f'seat{viewer.seat}'}:{idempotency_key}"
        for _attempt in range(MAX_ATTEMPTS):
            outcome = _try_move(game, snap, seat, move, version)
            if isinstance(outcome, ApiError):
                if not fresh:  # the cache may be behind: decide on the stored state
                    snap, fresh = self._snapshot(match_id), True
                    continue
                if idem is not None:
                    replay = self.store.idempotent_response(match_id, idem)
                    if replay is not None:
                        return _replayed(replay)
                if outcome.code == "version_conflict":
                    metrics.CONFLICTS.labels("refused").inc()
                raise outcome
            new_state, events = outcome
            new_version = snap.version + 1
            stamped = stamp(events, new_version)
            body = orjson.dumps({
                "version": new_version,
                "events": redact(game, stamped, viewer),
                "state": view_of(game, meta, Snapshot(new_version, new_state), viewer)})
            result = self.store.apply(
                match_id, snap.version, new_state, {"version": new_version, "seat": seat, "move": move},
                stamped, idem, encode_record(200, body) if idem is not None else b"")
            if result.version is not None:
                metrics.MOVES.labels(game.id).inc()
                return 200, body, new_version
            if result.replay is not None:
                return _replayed(result.replay)
            if result.conflict is None:  # neither applied, replayed nor refused: the match is gone
                raise _not_found(match_id)
            if version is None:
                metrics.CONFLICTS.labels("retried").inc()
            snap, fresh = result.conflict, True
        metrics.CONFLICTS.labels("refused").inc()
        raise _conflict(snap.version, None)

    def _snapshot(self, match_id: str) -> Snapshot:
        snap = self.store.snapshot(match_id)
        if snap is None:
            raise _not_found(match_id)
        return snap

    # --- reads -------------------------------------------------------------
    def events(self, match_id: str, authorization: str | None, after: int, wait: float) -> dict[str, Any]:
        """Events after ``after``; waits up to ``wait`` seconds for one."""
        meta = self.meta(match_id)
        viewer = self.identify(meta, authorization)
        game = self.game(meta.game)
        version, raw = self._events_since(match_id, after)
        if not raw and wait > 0:
            deadline = time.monotonic() + wait
            with self.notifier.watch(match_id) as waiter:  # woken on changes (service.notify)
                while not raw and (left := deadline - time.monotonic()) > 0:
                    waiter.seen = version
                    waiter.wait(left)
                    version, raw = self._events_since(match_id, after)
        return {"version": version, "events": redact(game, [orjson.loads(e) for e in raw], viewer)}

    def _events_since(self, match_id: str, after: int) -> tuple[int, list[bytes]]:
        found = self.store.events_since(match_id, after)
        if found is None:
            raise _not_found(match_id)
        return found

    def record(self, match_id: str, authorization: str | None) -> dict[str, Any]:
        """The game record: admin any time, anyone once the match is finished."""
        meta = self.meta(match_id)
        viewer = self.identify(meta, authorization)
        found = self.store.record(match_id)
        if found is None:
            raise _not_found(match_id)
        snap, moves = found
        game = self.game(meta.game)
        if game.status(snap.state) != FINISHED and not viewer.is_admin:
            if viewer.is_spectator:
                raise ApiError("unauthenticated", "the record of an unfinished match needs the admin token")
            raise ApiError("forbidden", "the record of an unfinished match is for the admin only")
        return {"game": meta.game, "players": meta.players, "seed": meta.seed, "options": meta.options,
                "moves": [orjson.Fragment(m) for m in moves], "result": game.result(snap.state)}

    def delete(self, match_id: str, authorization: str | None) -> None:
        """Remove the match (admin token)."""
        meta = self.meta(match_id)
        auth.require_admin(self.identify(meta, authorization), "deleting a match")
        if not self.store.delete(match_id):
            raise _not_found(match_id)


# --------------------------------------------------------------------------
# Helpers.
# --------------------------------------------------------------------------
def view_of(game: Game, meta: Meta, snap: Snapshot, viewer: Viewer) -> dict[str, Any]:
    """The engine's view for ``viewer`` plus the service's fields."""
    view = game.view(snap.state, viewer)
    return {"match_id": meta.match_id, "game": meta.game, "version": snap.version,
            "status": view["status"], "viewer": viewer.to_json(), **view}


def stamp(events: Iterable[dict[str, Any]], version: int) -> list[dict[str, Any]]:
    """Events as stored: each carries the version its move produced."""
    return [{**e, "version": version} for e in events]


def redact(game: Game, events: list[dict[str, Any]], viewer: Viewer) -> list[dict[str, Any]]:
    """Events as ``viewer`` may see them, each keeping its version."""
    shown = game.redact_events(events, viewer)
    return [e if "version" in e else {**e, "version": o["version"]} for o, e in zip(events, shown)]


def _try_move(game: Game, snap: Snapshot, seat: int, move: dict[str, Any],
              version: int | None) -> ApiError | tuple[dict[str, Any], list[dict[str, Any]]]:
    """Check a move in the contract's order (finished, version, turn,
    legality) and play it: the new state and events, or the error."""
    if game.status(snap.state) == FINISHED:
        return ApiError("match_finished", "the match is finished; no more moves are accepted")
    if version is not None and version != snap.version:
        return _conflict(snap.version, version)
    try:
        return game.play(snap.state, seat, move)
    except GameError as exc:
        return ApiError(_GAME_ERRORS.get(type(exc), "illegal_move"), exc.detail)


_ETAG = re.compile(r'\s*(?:W/)?"(-?\d{1,18})"\s*')


def _matches_version(header: str | None, version: int) -> bool:
    """``If-None-Match`` names the current version (or is ``*``)."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    return any((m := _ETAG.fullmatch(tag)) is not None and int(m.group(1)) == version
               for tag in header.split(","))


def _replayed(replay: tuple[int, bytes]) -> tuple[int, bytes, int]:
    status, body = replay
    return status, body, orjson.loads(body)["version"]


def _conflict(current: int, given: int | None) -> ApiError:
    if given is None:
        detail = (f"the match kept changing while the move was tried (now version {current}); "
                  "GET the match and decide again")
    else:
        detail = (f"the move was meant for version {given} but the match is at version {current}; "
                  "GET the match and decide again")
    return ApiError("version_conflict", detail, current_version=current)


def _not_found(match_id: str) -> ApiError:
    return ApiError("match_not_found",
                    f"there is no match {match_id[:64]!r} (it may have expired or been deleted)")


def _names(game: Game, players: Any) -> list[str]:
    """Display names from a list of names or a player count (422 if bad)."""
    limits = f"{game.id} takes {game.min_players}…{game.max_players} players"
    if isinstance(players, int) and not isinstance(players, bool):
        if not game.min_players <= players <= game.max_players:
            raise ApiError("invalid_options", f"{limits}, got {players}")
        return [f"Player {i + 1}" for i in range(players)]
    if not isinstance(players, list) or not all(isinstance(n, str) for n in players):
        raise ApiError("invalid_options", "players must be a list of display names or a player count")
    if not game.min_players <= len(players) <= game.max_players:
        raise ApiError("invalid_options", f"{limits}, got {len(players)}")
    for name in players:
        if not name.strip() or len(name) > MAX_NAME:
            raise ApiError("invalid_options", f"a player name must be 1…{MAX_NAME} characters, not blank")
    return list(players)
