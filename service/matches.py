"""Match operations, free of HTTP: create, view, move, events, record.

Routes call these with already-validated input and turn the returned
dicts/bytes into responses.  Games are reached only through the registry and
the :class:`engine.core.Game` interface; every view and event goes through
``game.view`` / ``game.redact_events`` for the caller's viewer, so nothing
hidden reaches the wrong client.

Store faults: every operation runs within the store's time budget
(``REDIS_BUDGET``); a damaged match (keys lost to eviction or a manual
delete) is 503 ``store_unavailable`` saying so, and a store failure while a
move may have been written is a 503 that says it may have been applied.  A
match is compacted as soon as its last move is stored.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import re
import secrets
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson
import redis

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
from service.errors import ApiError, clip, clip_echoes
from service.history import History, replay, stamp
from service.notify import Notifier
from service.schemas import MAX_NAME
from service.store import Archive, DamagedMatch, Meta, Snapshot, Store, WriteUnsettled, fingerprint

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])

#: CAS attempts for a move without an explicit version before answering 409.
MAX_ATTEMPTS = 8

_GAME_ERRORS: dict[type[GameError], str] = {
    MatchFinished: "match_finished", NotYourTurn: "not_your_turn", IllegalMove: "illegal_move"}


def _store_faults(method: F) -> F:
    """Run a match operation within the store's time budget (a long-poll
    opens one per look, see :meth:`Lodge.events`), with damaged matches and
    unsettled writes as 503s that say what happened."""
    @functools.wraps(method)
    def run(self: Lodge, match_id: str, *args: Any, **kwargs: Any) -> Any:
        with self.store.budget() if method.__name__ != "events" else contextlib.nullcontext():
            try:
                return method(self, match_id, *args, **kwargs)
            except DamagedMatch as exc:
                log.error("damaged match: %s", exc)
                raise _unavailable(self.store, (
                    f"the store has lost part of this match's data (its {exc.key!r} key: evicted or "
                    "deleted); it cannot be served or changed, only deleted by its admin")) from None
            except WriteUnsettled as exc:
                log.warning("store failed during a write: %s", exc)
                raise _unavailable(self.store, (
                    "the match store stopped answering while the change was being written: it may "
                    "have been applied. Retry with the same Idempotency-Key or version to settle it "
                    "(the retry answers the first response, or 409 if the move was applied without "
                    "a key)")) from None
    return run  # type: ignore[return-value]


@dataclass(frozen=True)
class Lodge:
    """What a request needs: the store, the game registry and the change
    notifications that wake long-polls and streams."""

    store: Store
    registry: Any
    notifier: Notifier
    history: History = field(default_factory=History)

    # --- lookups -----------------------------------------------------------
    def game(self, game_id: str) -> Game:
        game: Game | None = self.registry.get(game_id)
        if game is None:
            known = ", ".join(g.id for g in self.registry)
            raise ApiError("game_not_found", f"there is no game {clip(game_id)!r}; known games: {known}")
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
            raise ApiError("invalid_options", clip_echoes(exc.detail, options)) from None
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
    @_store_faults
    def view(self, match_id: str, authorization: str | None,
             if_none_match: str | None, legal: bool = False) -> tuple[int, dict[str, Any] | None]:
        """The current version and the caller's view (with ``legal_moves``
        when ``legal``), or None for the view while ``If-None-Match`` names
        the current version (304)."""
        meta, snap = self.load(match_id)
        viewer = self.identify(meta, authorization)
        if _matches_version(if_none_match, snap.version):
            return snap.version, None
        game = self.game(meta.game)
        body = view_of(game, meta, snap, viewer)
        if legal:
            body["legal_moves"] = legal_for(game, snap.state, viewer)
        return snap.version, body

    # --- moves -------------------------------------------------------------
    @_store_faults
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

    @_store_faults
    def play(self, match_id: str, authorization: str | None, seat: int | None, move: dict[str, Any],
             version: int | None, idempotency_key: str | None, legal: bool = False) -> tuple[int, bytes, int]:
        """Apply one move: (status, body, version the body carries).

        One Redis round trip when this worker's cached snapshot is current;
        the compare-and-set in Redis decides.  A replayed idempotent request
        returns the first response unchanged.  ``legal``: the body also
        carries ``legal_moves`` at its version (a replay: at the first
        response's version, whatever happened since)."""
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
        request = fingerprint(seat, move, version) if idempotency_key is not None else ""  # '' without a key
        if idempotency_key is not None:
            idem = f"{'admin' if viewer.is_admin else f'seat{viewer.seat}'}:{idempotency_key}"
        for _attempt in range(MAX_ATTEMPTS):
            outcome = _try_move(game, snap, seat, move, version)
            if isinstance(outcome, ApiError):
                if not fresh:  # the cache may be behind: decide on the stored state
                    snap, fresh = self._snapshot(match_id), True
                    continue
                if idem is not None:
                    stored = self.store.idempotent_response(match_id, idem)
                    if stored is not None:
                        first, fp = stored
                        if isinstance(fp, bytes):  # a record of the old layout
                            return self._legacy(match_id, game, meta, viewer, first, fp, legal)
                        if fp != request:
                            raise _reused(idempotency_key)
                        return self._replayed(match_id, game, meta, viewer, first, legal)
                if outcome.code == "version_conflict":
                    metrics.CONFLICTS.labels("refused").inc()
                raise outcome
            new_state, events = outcome
            new_version = snap.version + 1
            stamped = stamp(events, new_version)
            body = _move_body(game, meta, viewer, Snapshot(new_version, new_state), stamped, legal)
            result = self.store.apply(
                match_id, snap.version, new_state, {"version": new_version, "seat": seat, "move": move},
                stamped, idem, request)
            if result.version is not None:
                metrics.MOVES.labels(game.id).inc()
                if game.status(new_state) == FINISHED:
                    self._compact(match_id, new_version, new_state)
                return 200, body, new_version
            if result.replay is not None:
                return self._replayed(match_id, game, meta, viewer, result.replay, legal)
            if result.reused:
                raise _reused(idempotency_key)
            if result.legacy is not None:
                return self._legacy(match_id, game, meta, viewer, *result.legacy, legal)
            if result.conflict is None:  # neither applied, replayed nor refused: the match is gone
                raise _not_found(match_id)
            if version is None:
                metrics.CONFLICTS.labels("retried").inc()
            snap, fresh = result.conflict, True
        metrics.CONFLICTS.labels("refused").inc()
        raise _conflict(snap.version, None)

    def _replayed(self, match_id: str, game: Game, meta: Meta, viewer: Viewer,
                  version: int, legal: bool) -> tuple[int, bytes, int]:
        """The first response to an idempotent request that produced
        ``version``, rebuilt by replaying the move log up to it (with the
        legal moves at that version when ``legal``)."""
        state, timeline = replay(game, meta, self.store.moves(match_id, version))
        return 200, _move_body(game, meta, viewer, Snapshot(version, state), timeline[-1], legal), version

    def _legacy(self, match_id: str, game: Game, meta: Meta, viewer: Viewer, status: int, body: bytes,
                legal: bool) -> tuple[int, bytes, int]:
        """The first response stored by the old idempotency layout, with the
        legal moves at its version when ``legal`` (replayed from the log)."""
        version: int = orjson.loads(body)["version"]
        if not legal or status != 200:
            return status, body, version
        state, _timeline = replay(game, meta, self.store.moves(match_id, version))
        return status, orjson.dumps({**orjson.loads(body), "legal_moves": legal_for(game, state, viewer)}), version

    def _compact(self, match_id: str, version: int, state: dict[str, Any]) -> None:
        """Compact the match that just finished; a failure leaves it whole."""
        try:
            self.store.compact(match_id, version, state)
        except (redis.exceptions.RedisError, DamagedMatch) as exc:
            log.warning("compacting match %s failed: %s", match_id, exc)

    def _snapshot(self, match_id: str) -> Snapshot:
        snap = self.store.snapshot(match_id)
        if snap is None:
            raise _not_found(match_id)
        return snap

    # --- reads -------------------------------------------------------------
    @_store_faults
    def events(self, match_id: str, authorization: str | None, after: int, wait: float) -> dict[str, Any]:
        """Events after ``after``; waits up to ``wait`` seconds for one."""
        with self.store.budget():
            meta = self.meta(match_id)
            viewer = self.identify(meta, authorization)
        game = self.game(meta.game)
        version, events, final = self._events_after(match_id, meta, game, after)
        if not events and not final and wait > 0:
            deadline = time.monotonic() + wait
            with self.notifier.watch(match_id) as waiter:  # woken on changes (service.notify)
                while not events and not final and (left := deadline - time.monotonic()) > 0:
                    waiter.seen = version
                    waiter.wait(left)
                    version, events, final = self._events_after(match_id, meta, game, after)
        return {"version": version, "events": redact(game, events, viewer)}

    def events_after(self, match_id: str, meta: Meta, game: Game,
                     after: int) -> tuple[int, list[dict[str, Any]], bool] | None:
        """Current version, the (unredacted) events with version > ``after``
        and whether the match is compacted (finished: nothing more will come);
        None when the match is gone.  Within the store's budget."""
        with self.store.budget():
            found = self.store.events_since(match_id, after)
        if found is None:
            return None
        version, raw = found
        if isinstance(raw, Archive):  # finished and compacted: derived from its moves
            return version, self.history.events_after(game, meta, raw.moves, after), True
        return version, [orjson.loads(e) for e in raw], False

    def _events_after(self, match_id: str, meta: Meta, game: Game,
                      after: int) -> tuple[int, list[dict[str, Any]], bool]:
        found = self.events_after(match_id, meta, game, after)
        if found is None:
            raise _not_found(match_id)
        return found

    @_store_faults
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

    @_store_faults
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


def _move_body(game: Game, meta: Meta, viewer: Viewer, snap: Snapshot,
               events: list[dict[str, Any]], legal: bool = False) -> bytes:
    """The 200 body of a move: its version, events and the caller's view
    (and ``legal_moves`` at that version when ``legal``)."""
    body = {"version": snap.version, "events": redact(game, events, viewer),
            "state": view_of(game, meta, snap, viewer)}
    if legal:
        body["legal_moves"] = legal_for(game, snap.state, viewer)
    return orjson.dumps(body)


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
        return ApiError(_GAME_ERRORS.get(type(exc), "illegal_move"), clip_echoes(exc.detail, move))


_ETAG = re.compile(r'\s*(?:W/)?"(-?\d{1,18})"\s*')


def _matches_version(header: str | None, version: int) -> bool:
    """``If-None-Match`` names the current version (or is ``*``)."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    return any((m := _ETAG.fullmatch(tag)) is not None and int(m.group(1)) == version
               for tag in header.split(","))


def _reused(key: str | None) -> ApiError:
    return ApiError("idempotency_key_reused",
                    f"the Idempotency-Key {str(key)[:64]!r} was sent before with a different request "
                    "(move, version or seat); nothing was changed. Use a new key for a new request")


def _unavailable(store: Store, detail: str) -> ApiError:
    return ApiError("store_unavailable", detail, headers={"Retry-After": str(store.retry_after)})


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
        if any(unicodedata.category(ch) == "Cc" for ch in name):
            raise ApiError("invalid_options", f"player name {clip(name)!r} contains a control character "
                           "(such as NUL, tab or newline); names are printable text")
    if len(set(players)) < len(players):
        twice = next(n for i, n in enumerate(players) if n in players[:i])
        raise ApiError("invalid_options", f"player names must differ; {clip(twice)!r} is given twice")
    return list(players)
