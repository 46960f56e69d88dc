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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson
import redis

import bots
from engine.core import (
    BY_BOT,
    BY_CLOCK,
    BY_RESIGNED,
    FINISHED,
    SEED_MAX,
    SPECTATOR_VIEWER,
    Game,
    GameError,
    IllegalMove,
    InvalidOptions,
    MatchFinished,
    Move,
    NotYourTurn,
    Viewer,
    resigned_seats,
    seat_viewer,
)
from service import auth, clock, lobby, metrics, seats
from service.errors import ApiError, clip, clip_echoes
from service.history import History, replay, stamp
from service.notify import Notifier
from service.redis_client import outage
from service.store import ApplyResult, Archive, DamagedMatch, Meta, Snapshot, Store, WriteUnsettled, fingerprint

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])

#: CAS attempts for a move without an explicit version before answering 409.
MAX_ATTEMPTS = 8
#: Moves the server plays in one request at most (bot seats, resigned seats;
#: a match of bots only would otherwise play to its end inside one request),
#: and the time it spends on them once it has played one (seconds).  The rest
#: is played by the sweeper (:mod:`service.sweeper`) at once, batch by batch.
AUTO_MOVES = 64
AUTO_SECONDS = 1.0

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
                outage.failed(exc)
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
        """Who is calling.  A token this worker does not know for a match
        with open seats may be one claimed since ``meta`` was cached (on any
        instance): it is judged again on the stored meta."""
        try:
            return auth.identify(meta, authorization, self._other_meta)
        except ApiError as exc:
            if exc.code != "unauthenticated" or not meta.open_seats:
                raise
            fresh = self.store.meta(meta.match_id, fresh=True)
            if fresh is None or fresh.kinds == meta.kinds:
                raise
            return auth.identify(fresh, authorization, self._other_meta)

    def _other_meta(self, match_id: str) -> Meta | None:
        """Another match's meta (with its latest claims): only loaded to tell 403 from 401."""
        return self.store.meta(match_id, fresh=True)

    # --- create ------------------------------------------------------------
    def create(self, game_id: str, players: Any, seed: Any, options: Any, *,
               public: Any = None, clock: Any = None) -> dict[str, Any]:
        """Set up a match; the 201 body (tokens, and the invite when a seat is open)."""
        game = self.game(game_id)
        seating = seats.seating(game, players)
        clock_ms, listed = seats.clock_ms(clock), seats.public(public)
        if seed is None:
            seed = secrets.randbelow(SEED_MAX + 1)
        try:
            state, events, resolved = game.create(seating.names, seed, options)
        except InvalidOptions as exc:
            raise ApiError("invalid_options", clip_echoes(exc.detail, options)) from None
        invite = seats.new_invite() if seating.has_open else None
        while True:
            match_id = auth.new_match_id()
            tokens = [auth.new_token(match_id) if kind == seats.TOKEN else None for kind in seating.kinds]
            admin = auth.new_token(match_id)
            meta = Meta(match_id, game.id, seating.names, seed, resolved, auth.token_hash(admin),
                        ["" if t is None else auth.token_hash(t) for t in tokens], time.time(),
                        seating.kinds, seating.bots, clock_ms, listed,
                        None if invite is None else seats.invite_hash(invite))
            if lobby.listed(meta):
                lobby.add(self.store, meta)
            if self.store.create(meta, state, stamp(events, 0)):
                break
        metrics.MATCHES.labels(game.id).inc()
        start = self._start(match_id, game, meta, Snapshot(0, state))
        body: dict[str, Any] = {"match_id": match_id, "game": game.id, "version": start.version, "seed": seed,
                                "seats": seats.created_seats(seating, tokens), "admin_token": admin}
        if invite is not None:
            body["invite"] = invite
        body["state"] = view_of(game, meta, start, SPECTATOR_VIEWER)
        return body

    # --- seats and the lobby --------------------------------------------
    @_store_faults
    def claim(self, match_id: str, seat: int, invite: Any) -> dict[str, Any]:
        """Claim open seat ``seat`` (the invite, or none for a public match):
        the 201 body with the seat's token and view.  Checks: match exists,
        invite (403), finished (409 ``match_finished``), seat open (409
        ``seat_taken``); the compare-and-set in Redis decides a race."""
        meta, snap = self.load(match_id)
        if not meta.public and not seats.invite_matches(invite, meta.invite_hash):
            raise ApiError("forbidden", seats.invite_refusal(meta, invite))
        game = self.game(meta.game)
        if game.status(snap.state) == FINISHED:
            raise ApiError("match_finished", "the match is finished; its seats can no longer be claimed")
        if not 0 <= seat < len(meta.kinds) or meta.kinds[seat] != seats.OPEN:
            raise seats.taken(meta, seat)
        token = auth.new_token(match_id)
        try:
            outcome = self.store.claim(match_id, seat, auth.token_hash(token))
        except WriteUnsettled as exc:
            outage.failed(exc)
            raise _unavailable(self.store, (
                "the match store stopped answering while the seat was being claimed: it may be claimed now "
                "(GET …/seats shows it); if it is, its token is lost, else claim it again")) from None
        if outcome == "missing":
            raise _not_found(match_id)
        if outcome == "finished":
            raise ApiError("match_finished", "the match is finished; its seats can no longer be claimed")
        if outcome != "ok":
            raise seats.taken(self.store.meta(match_id, fresh=True) or meta, seat)
        meta = meta.with_claims({seat: auth.token_hash(token)})
        with contextlib.suppress(redis.exceptions.RedisError):  # the seat is claimed: answer 201 whatever
            meta = self.store.meta(match_id, fresh=True) or meta  # claims of other seats meanwhile
            if not meta.open_seats:
                lobby.forget(self.store, meta)
        return {"match_id": match_id, "seat": seat, "name": meta.players[seat], "token": token,
                "state": view_of(game, meta, snap, seat_viewer(seat))}

    @_store_faults
    def seat_table(self, match_id: str) -> dict[str, Any]:
        """Who holds each seat, as stored now (not as this worker cached it)."""
        meta = self.store.meta(match_id, fresh=True) if auth.MATCH_ID.fullmatch(match_id) else None
        if meta is None:
            raise _not_found(match_id)
        return {"seats": seats.table(meta)}

    def lobby_page(self, game_id: str | None, limit: int, cursor: str | None) -> dict[str, Any]:
        """A page of the lobby: public matches with an open seat, newest first."""
        games = [self.game(game_id).id] if game_id is not None else [g.id for g in self.registry]
        after = lobby.decode_cursor(cursor)
        with self.store.budget():
            return lobby.page(self.store, games, limit, after, _lobby_entry)

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
            own = ({"version": new_version, "seat": seat, "move": move}, stamp(events, new_version))
            moves = self._server_moves(game, meta, Snapshot(new_version, new_state), [own])
            body = _move_body(game, meta, viewer, moves.snap, [e for _, step in moves.steps for e in step],
                              legal)
            result = self._write(match_id, game, meta, snap.version, moves, idem, request)
            if result.version is not None:
                return 200, body, moves.snap.version
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

    def _server_moves(self, game: Game, meta: Meta, snap: Snapshot, steps: list[Step],
                      timed: int | None = None) -> ServerMoves:
        """:func:`server_moves`; the bots' thinking is not store time, so it
        does not spend the request's store budget."""
        with self.store.off_budget():
            return server_moves(game, meta, snap, steps, timed)

    def _write(self, match_id: str, game: Game, meta: Meta, expected: int, moves: ServerMoves,
               idem: str | None = None, request: str = "") -> ApplyResult:
        """Store a request's moves (its own, then the server's) with one
        compare-and-set, after telling the schedule when to look at the match
        next (:mod:`service.clock`); a finished match is compacted."""
        final = moves.snap
        look = clock.next_look(final.deadline, moves.owed, clock.now_ms())
        if look is not None:
            self.schedule.look_at(match_id, look)
        (entry, events), *later = moves.steps
        result = self.store.apply(match_id, expected, final.state, entry, events, idem, request,
                                  later=later, deadline=final.deadline)
        if result.version is not None:
            metrics.MOVES.labels(game.id).inc(len(moves.steps))
            if game.status(final.state) == FINISHED:
                self._compact(match_id, final.version, final.state)
        return result

    @functools.cached_property
    def schedule(self) -> clock.Schedule:
        """When to look at which match (the sweeper's sorted sets)."""
        return clock.Schedule(self.store.client)

    def _start(self, match_id: str, game: Game, meta: Meta, snap: Snapshot) -> Snapshot:
        """A new match's first deadlines and the moves its bot seats make
        before anyone else (nobody knows the match yet: no race but the
        sweeper's, settled by the compare-and-set)."""
        if meta.clock_ms is None and owed_seat(game, meta, snap.state) is None:
            return snap
        moves = self._server_moves(game, meta, snap, [])
        if moves.steps:
            if self._write(match_id, game, meta, snap.version, moves).version is not None:
                return moves.snap
            return self._snapshot(match_id)
        look = clock.next_look(moves.snap.deadline, moves.owed, clock.now_ms())
        if look is not None:
            self.schedule.look_at(match_id, look)
        self.store.start_clock(match_id, moves.snap)
        return moves.snap

    def advance(self, match_id: str) -> int | None:
        """The sweeper's part (:mod:`service.sweeper`): play what is due now,
        a timed-out seat's fallback (``by: "clock"``) or the moves the server
        still owes, by the same compare-and-set as any move.  Returns when to
        look at the match again (epoch ms; None: never)."""
        with self.store.budget():
            for _attempt in range(MAX_ATTEMPTS):
                loaded = self.store.load(match_id) if auth.MATCH_ID.fullmatch(match_id) else None
                if loaded is None:
                    return None
                meta, snap = loaded
                game = self.game(meta.game)
                now = clock.now_ms()
                if game.status(snap.state) == FINISHED:
                    return None
                timed = None if owed_seat(game, meta, snap.state) else clock.due_seat(
                    game, snap.state, snap.deadline, now)
                if timed is None and owed_seat(game, meta, snap.state) is None:
                    return clock.next_look(snap.deadline, False, now)
                moves = self._server_moves(game, meta, snap, [], timed)
                result = self._write(match_id, game, meta, snap.version, moves)
                if result.version is not None:
                    return clock.next_look(moves.snap.deadline, moves.owed, clock.now_ms())
                if result.conflict is None:
                    return None
            return clock.now_ms()

    def _replayed(self, match_id: str, game: Game, meta: Meta, viewer: Viewer,
                  version: int, legal: bool) -> tuple[int, bytes, int]:
        """The first response to an idempotent request whose moves ended at
        ``version``, rebuilt by replaying the move log up to it: from the
        request's own move (the last without ``by``) to ``version`` (with the
        legal moves at that version when ``legal``)."""
        log_entries = self.store.moves(match_id, version)
        state, timeline = replay(game, meta, log_entries)
        first = version
        while first > 1 and "by" in orjson.loads(log_entries[first - 1]):
            first -= 1
        current = self.store.cached(match_id)
        deadline = current[1].deadline if current is not None and current[1].version == version else {}
        events = [e for step in timeline[first:version + 1] for e in step]
        return 200, _move_body(game, meta, viewer, Snapshot(version, state, deadline), events,
                                 legal), version

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
        """Compact the match that just finished (and take it out of the
        lobby); a failure leaves it whole."""
        with contextlib.suppress(redis.exceptions.RedisError):  # a lobby entry left behind is dropped when listed
            meta = self.store.meta(match_id)
            if meta is not None:
                lobby.forget(self.store, meta)
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
        clock = {"clock": {"per_move_ms": meta.clock_ms}} if meta.clock_ms is not None else {}
        return {"game": meta.game, "players": meta.players, "seed": meta.seed, "options": meta.options,
                **clock, "moves": [orjson.Fragment(m) for m in moves], "result": game.result(snap.state)}

    @_store_faults
    def delete(self, match_id: str, authorization: str | None) -> None:
        """Remove the match (admin token)."""
        meta = self.meta(match_id)
        auth.require_admin(self.identify(meta, authorization), "deleting a match")
        if not self.store.delete(match_id):
            raise _not_found(match_id)
        lobby.forget(self.store, meta)


# --------------------------------------------------------------------------
# Helpers.
# --------------------------------------------------------------------------
Step = tuple[dict[str, Any], list[dict[str, Any]]]


@dataclass(frozen=True)
class ServerMoves:
    """A request's moves, each a (move log entry, stamped events) step, and
    the snapshot after the last (deadlines set); ``owed`` when the server
    stopped with moves still to play (:data:`AUTO_MOVES`)."""

    snap: Snapshot
    steps: list[Step]
    owed: bool = False


def owed_seat(game: Game, meta: Meta, state: dict[str, Any]) -> tuple[int, str] | None:
    """A seat to act whose move the server makes at once, and why: a
    resigned seat (its fallback) or a bot seat; None when there is none."""
    if game.status(state) == FINISHED:
        return None
    gone = resigned_seats(state)
    for seat in game.to_act(state):
        if seat in gone:
            return seat, BY_RESIGNED
        if meta.kinds[seat] == seats.BOT:
            return seat, BY_BOT
    return None


def server_moves(game: Game, meta: Meta, snap: Snapshot, steps: list[Step],
                 timed: int | None = None) -> ServerMoves:
    """The moves the server plays after ``snap`` (reached by ``steps``, the
    request's own move): seat ``timed``'s fallback first when its clock ran
    out (``by: "clock"``), then, while a bot seat or a resigned seat is to
    act, its move (``by: "bot"`` / ``"resigned"``), like the engine's
    automatic moves; at most :data:`AUTO_MOVES` and :data:`AUTO_SECONDS`."""
    steps, state, version = list(steps), snap.state, snap.version
    now, started, played = clock.now_ms(), time.monotonic(), 0
    owed = (timed, BY_CLOCK) if timed is not None else owed_seat(game, meta, state)
    while owed is not None:
        if played >= AUTO_MOVES or (played and time.monotonic() - started > AUTO_SECONDS):
            return ServerMoves(Snapshot(version, state, clock.deadlines(game, meta.clock_ms, state, now)),
                               steps, owed=True)
        seat, by = owed
        move = _server_decision(game, meta, Snapshot(version, state, clock.deadlines(
            game, meta.clock_ms, state, now)), seat, by)
        state, events = game.play(state, seat, move, by)
        version, played = version + 1, played + 1
        steps.append(({"version": version, "seat": seat, "move": move, "by": by}, stamp(events, version)))
        owed = owed_seat(game, meta, state)
    return ServerMoves(Snapshot(version, state, clock.deadlines(game, meta.clock_ms, state, now)), steps)


def _server_decision(game: Game, meta: Meta, snap: Snapshot, seat: int, by: str) -> Move:
    """A bot seat's choice, made from exactly that seat's view (what its GET
    returns) and legal moves; else the game's fallback (:meth:`Game.fallback`)."""
    if by == BY_BOT:
        view = view_of(game, meta, snap, seat_viewer(seat))
        choice = bots.decide(str(meta.bots[seat]), game.id, seat, meta.seed, snap.version, view,
                             game.legal_moves(snap.state, seat))
    else:
        choice = game.fallback(snap.state, seat)
    return {k: v for k, v in choice.items() if k != "label"}


def view_of(game: Game, meta: Meta, snap: Snapshot, viewer: Viewer) -> dict[str, Any]:
    """The engine's view for ``viewer`` plus the service's fields."""
    view = game.view(snap.state, viewer)
    return {"match_id": meta.match_id, "game": meta.game, "version": snap.version,
            "status": view["status"], "viewer": viewer.to_json(), **view, "deadline": dict(snap.deadline)}


def _lobby_entry(meta: Meta) -> dict[str, Any]:
    """One match of a lobby page."""
    return {"match_id": meta.match_id, "game": meta.game, "options": meta.options, "seats": seats.table(meta),
            "clock": None if meta.clock_ms is None else {"per_move_ms": meta.clock_ms},
            "created": lobby.created_at(meta)}


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
