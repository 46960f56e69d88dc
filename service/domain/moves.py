"""The move pipeline: validate → load → ask the engine → write with the one
compare-and-set.

A client's move (:meth:`MovePipeline.play`), the moves the server owes
(bot seats, resigned seats, a clock's fallback: :meth:`MovePipeline.advance`
from the sweeper, :meth:`MovePipeline.start` for a new match) and a webhook
seat's answer (:meth:`MovePipeline.answer`) take the same way: the engine
plays them on the stored (or this worker's cached) snapshot, and one Redis
script stores every version a request produced at once, or reports the
conflict, the idempotent replay or the lost match.  A match is compacted as
soon as its last move is stored.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
import redis

from bots import pool as bot_pool
from bots.pool import INLINE, NoDecision, Thinking
from engine.core import (
    BY_BOT,
    BY_CLOCK,
    BY_RESIGNED,
    BY_WEBHOOK,
    FINISHED,
    MOVE_RESIGN,
    Game,
    GameError,
    IllegalMove,
    MatchFinished,
    Move,
    NotYourTurn,
    Viewer,
    resigned_seats,
    seat_viewer,
)
from service.domain import auth, clock, lobby, seats, webhooks
from service.domain.access import Access, not_found, store_faults
from service.domain.history import replay, stamp
from service.domain.ladders import Ladders
from service.domain.views import legal_for, redact, view_of, with_ids
from service.domain.webhooks import TIMEOUT, Decision, Webhooks
from service.http.errors import ApiError, clip_echoes
from service.ops import metrics
from service.store.store import ApplyResult, Archive, DamagedMatch, Meta, Snapshot, Store, fingerprint

log = logging.getLogger(__name__)

#: CAS attempts for a move without an explicit version before answering 409.
MAX_ATTEMPTS = 8
#: Moves the server plays in one request at most (bot seats, resigned seats;
#: a match of bots only would otherwise play to its end inside one request),
#: and the time it spends on them once it has played one (seconds).  The rest
#: is played by the sweeper (:mod:`service.ops.sweeper`) at once, batch by batch.
AUTO_MOVES = 64
AUTO_SECONDS = 1.0

_GAME_ERRORS: dict[type[GameError], str] = {
    MatchFinished: "match_finished", NotYourTurn: "not_your_turn", IllegalMove: "illegal_move"}

#: A move's answer: (status, body, the version the body carries).
Answer = tuple[int, bytes, int]
#: One version a request writes: (move log entry, stamped events).
Step = tuple[dict[str, Any], list[dict[str, Any]]]
#: A client's move played: (the move as logged, the new state, its events).
Played = tuple[Move, dict[str, Any], list[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class MoveRequest:
    """A client's move once its caller and seat are known."""

    viewer: Viewer
    seat: int
    move: Move
    version: int | None
    key: str | None       # the Idempotency-Key as sent
    idem: str | None      # its record's name: the key within the caller's own
    fingerprint: str      # what a repeat of the key must match ('' without a key)
    legal: bool


def move_request(meta: Meta, viewer: Viewer, seat: int | None, move: Move, version: int | None,
                 key: str | None, legal: bool) -> MoveRequest:
    """Validate who moves for which seat (the acting seat's checks), and
    name the request's idempotency record; a move's ``label`` is not part of it."""
    seat = auth.acting_seat(viewer, seat, len(meta.players), "moving")
    move = {k: v for k, v in move.items() if k != "label"}
    if key is None:
        return MoveRequest(viewer, seat, move, version, None, None, "", legal)
    idem = f"{'admin' if viewer.is_admin else f'seat{viewer.seat}'}:{key}"
    return MoveRequest(viewer, seat, move, version, key, idem, fingerprint(seat, move, version), legal)


@dataclass(frozen=True)
class ServerMoves:
    """A request's moves, each a (move log entry, stamped events) step, and
    the snapshot after the last (deadlines set); ``owed`` when the server
    stopped with moves still to play (:data:`AUTO_MOVES`)."""

    snap: Snapshot
    steps: list[Step]
    owed: bool = False


@dataclass(frozen=True)
class MovePipeline:
    """Every move into a match, the client's and the server's."""

    access: Access
    webhooks: Webhooks = field(default_factory=Webhooks)
    thinking: Thinking = field(default_factory=Thinking)

    @property
    def store(self) -> Store:
        return self.access.store

    @functools.cached_property
    def ladders(self) -> Ladders:
        """Where a finished ladder match is rated."""
        return Ladders(self.access)

    @functools.cached_property
    def schedule(self) -> clock.Schedule:
        """When to look at which match (the sweeper's sorted sets)."""
        return clock.Schedule(self.store.client)

    # --- a client's move ---------------------------------------------------
    @store_faults
    def play(self, match_id: str, authorization: str | None, seat: int | None, move: Move,
             version: int | None, idempotency_key: str | None, legal: bool = False) -> Answer:
        """Apply one move: (status, body, version the body carries).

        One Redis round trip when this worker's cached snapshot is current;
        the compare-and-set in Redis decides.  A replayed idempotent request
        returns the first response unchanged.  ``legal``: the body also
        carries ``legal_moves`` at its version (a replay: at the first
        response's version, whatever happened since)."""
        (meta, snap), fresh = self._load(match_id)
        request = move_request(meta, self.access.identify(meta, authorization), seat, move, version,
                               idempotency_key, legal)
        game = self.access.game(meta.game)
        for _attempt in range(MAX_ATTEMPTS):
            played = try_move(game, snap, request.seat, request.move, request.version)
            if isinstance(played, ApiError) and not fresh:  # the cache may be behind: decide on the stored state
                snap, fresh = self.access.snapshot(match_id), True
            elif isinstance(played, ApiError):
                return self._refused(match_id, game, meta, request, played)
            else:
                written = self._commit(match_id, game, meta, snap, request, played)
                if not isinstance(written, Snapshot):
                    return written
                snap, fresh = written, True
        metrics.CONFLICTS.labels("refused").inc()
        raise _conflict(snap.version, None)

    def _load(self, match_id: str) -> tuple[tuple[Meta, Snapshot], bool]:
        """The match and whether it is fresh from the store: this worker's
        cached snapshot when it has one (the store may be ahead of it)."""
        cached = self.store.cached(match_id) if auth.MATCH_ID.fullmatch(match_id) else None
        if cached is not None:
            return cached, False
        return self.access.load(match_id), True

    def _refused(self, match_id: str, game: Game, meta: Meta, request: MoveRequest, error: ApiError) -> Answer:
        """A move the stored match refuses: the first response when the
        request repeats an idempotent one already applied, else the error."""
        if request.idem is not None:
            stored = self.store.idempotent_response(match_id, request.idem)
            if stored is not None:
                version, first_fingerprint = stored
                if first_fingerprint != request.fingerprint:
                    raise _reused(request.key)
                return self._replayed(match_id, game, meta, request.viewer, version, request.legal)
        if error.code == "version_conflict":
            metrics.CONFLICTS.labels("refused").inc()
        raise error

    def _commit(self, match_id: str, game: Game, meta: Meta, snap: Snapshot, request: MoveRequest,
                played: Played) -> Answer | Snapshot:
        """Write the move and the server's moves after it with the one
        compare-and-set: the answer, or the stored snapshot to try again on."""
        move, state, events = played
        version = snap.version + 1
        own = ({"version": version, "seat": request.seat, "move": move}, stamp(events, version))
        moves = self._server_moves(game, meta, Snapshot(version, state, snap.deadline, snap.bank), [own])
        body = _move_body(game, meta, request.viewer, moves.snap, [e for _, step in moves.steps for e in step],
                          request.legal)
        result = self._write(match_id, game, meta, snap.version, moves, request.idem, request.fingerprint)
        if result.version is not None:
            return 200, body, moves.snap.version
        return self._unwritten(match_id, game, meta, request, result)

    def _unwritten(self, match_id: str, game: Game, meta: Meta, request: MoveRequest,
                   result: ApplyResult) -> Answer | Snapshot:
        """A write the compare-and-set did not make: the first response of
        an idempotent replay, the error, or the stored snapshot to try again on."""
        if result.replay is not None:
            return self._replayed(match_id, game, meta, request.viewer, result.replay, request.legal)
        if result.reused:
            raise _reused(request.key)
        if result.conflict is None:  # neither applied, replayed nor refused: the match is gone
            raise not_found(match_id)
        if request.version is None:
            metrics.CONFLICTS.labels("retried").inc()
        return result.conflict

    def _replayed(self, match_id: str, game: Game, meta: Meta, viewer: Viewer,
                  version: int, legal: bool) -> Answer:
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
        timing = current[1] if current is not None and current[1].version == version else Snapshot(version, {})
        events = [e for step in timeline[first:version + 1] for e in step]
        return 200, _move_body(game, meta, viewer, replace(timing, state=state), events,
                                 legal), version

    # --- the server's moves ------------------------------------------------
    def start(self, match_id: str, game: Game, meta: Meta, snap: Snapshot) -> Snapshot:
        """A new match's first deadlines and the moves its bot seats make
        before anyone else (nobody knows the match yet: no race but the
        sweeper's, settled by the compare-and-set)."""
        if meta.clock_ms is None and owed_seat(game, meta, snap.state) is None \
                and webhook_seat(game, meta, snap.state) is None:
            return snap
        moves = self._server_moves(game, meta, snap, [])
        if moves.steps:
            if self._write(match_id, game, meta, snap.version, moves).version is not None:
                return moves.snap
            return self.access.snapshot(match_id)
        look = clock.next_look(moves.snap.deadline, _owes(game, meta, moves), clock.now_ms())
        if look is not None:
            self.schedule.look_at(match_id, look)
        self.store.start_clock(match_id, moves.snap)
        return moves.snap

    def advance(self, match_id: str) -> int | None:
        """The sweeper's part (:mod:`service.ops.sweeper`): play what is due now,
        a timed-out seat's fallback (``by: "clock"``) or the moves the server
        still owes, by the same compare-and-set as any move; else start the
        call of a webhook seat to act (:meth:`_call_webhook`).  Returns when to
        look at the match again (epoch ms; None: never)."""
        with self.store.budget():
            for _attempt in range(MAX_ATTEMPTS):
                settled, look = self._advance_once(match_id)
                if settled:
                    return look
            return clock.now_ms()  # it kept changing: look again at once

    def _advance_once(self, match_id: str) -> tuple[bool, int | None]:
        """One try of :meth:`advance`: whether it is settled (else the
        compare-and-set lost), and when to look at the match again."""
        loaded = self.store.load(match_id) if auth.MATCH_ID.fullmatch(match_id) else None
        if loaded is None:
            return True, None
        meta, snap = loaded
        game = self.access.game(meta.game)
        now = clock.now_ms()
        if game.status(snap.state) == FINISHED:
            return True, None
        owed = owed_seat(game, meta, snap.state)
        timed = None if owed else clock.due_seat(game, snap.state, snap.deadline, now)
        if owed is None and timed is None:
            return True, self._call_webhook(match_id, game, meta, snap, now)
        reason = TIMEOUT if timed is not None and meta.kinds[timed] == seats.WEBHOOK else None
        moves = self._server_moves(game, meta, snap, [], timed, reason)
        result = self._write(match_id, game, meta, snap.version, moves)
        if result.version is not None:
            return True, clock.next_look(moves.snap.deadline, _owes(game, meta, moves), clock.now_ms())
        return result.conflict is None, None

    # --- webhook seats ---------------------------------------------------------
    def _call_webhook(self, match_id: str, game: Game, meta: Meta, snap: Snapshot, now: int) -> int | None:
        """Call the webhook of each webhook seat to act that nobody has
        called yet (:meth:`service.domain.webhooks.Webhooks.deliver`); when
        to look at the match again: its deadline (for the fallback), or soon
        when this worker has no call free."""
        look = clock.next_look(snap.deadline, False, now)
        for seat in webhook_seats(game, meta, snap.state):
            hook = meta.hooks[seat]
            if hook is None or str(seat) not in snap.deadline:
                continue
            payload = {"match_id": match_id, "game": meta.game, "seat": seat, "version": snap.version,
                       "deadline": snap.deadline[str(seat)],
                       "state": view_of(game, meta, snap, seat_viewer(seat)),
                       "legal_moves": game.legal_moves(snap.state, seat)}
            decision = Decision(match_id, snap.version, seat, snap.deadline[str(seat)], hook, payload)
            if not self.webhooks.deliver(self.store.client, self.store.ttl, decision, self.answer):
                look = now + webhooks.BUSY_MS
        return look

    def answer(self, decision: Decision, move: Move | None, reason: str | None) -> None:
        """Play a webhook's answer to ``decision`` with the compare-and-set
        on its version: ``move`` as ``by: "webhook"`` when it is legal, else
        the seat's fallback after ``timed_out`` with the ``reason``
        (``illegal`` for a move the rules refuse).  Nothing when the match
        has moved on (the sweeper played the fallback at the deadline).
        When the next seat to act is a webhook seat too, its call starts
        here (no mover waits for it: this runs in the previous call's thread)."""
        with self.store.budget():
            loaded = self.store.load(decision.match_id)
            if loaded is None:
                return
            meta, snap = loaded
            game = self.access.game(meta.game)
            if snap.version != decision.version or decision.seat not in webhook_seats(game, meta, snap.state):
                return
            played = None
            if move is not None and move.get("type") != MOVE_RESIGN:  # never listed, so never a webhook's answer
                with contextlib.suppress(GameError):
                    played = game.play(snap.state, decision.seat, move, BY_WEBHOOK)
            if played is None:
                moves = self._server_moves(game, meta, snap, [], decision.seat, reason or webhooks.ILLEGAL)
            else:
                version = snap.version + 1
                own = ({"version": version, "seat": decision.seat, "move": move, "by": BY_WEBHOOK},
                       stamp(played[1], version))
                moves = self._server_moves(game, meta, Snapshot(version, played[0]), [own])
            if self._write(decision.match_id, game, meta, snap.version, moves).version is not None:
                self._call_webhook(decision.match_id, game, meta, moves.snap, clock.now_ms())  # the next, at once

    def _server_moves(self, game: Game, meta: Meta, snap: Snapshot, steps: list[Step],
                      timed: int | None = None, reason: str | None = None) -> ServerMoves:
        """:func:`server_moves`, the bots deciding as :attr:`thinking` says;
        their thinking is not store time, so it does not spend the request's
        store budget."""
        upto = snap.version - len(steps)
        read: list[list[dict[str, Any]]] = []

        def stored() -> list[dict[str, Any]]:  # read once, when a searching bot first asks
            if not read:
                read.append(self._stored_events(meta.match_id, upto))
            return read[0]
        with self.store.off_budget():
            return server_moves(game, meta, snap, steps, timed, reason, stored, self.thinking)

    def _stored_events(self, match_id: str, upto: int) -> list[dict[str, Any]]:
        """The match's stored events up to version ``upto``: the history a
        searching bot (:data:`bots.ISMCTS`) reads through its seat's worlds."""
        with self.store.budget():
            found = self.store.events_since(match_id, -1)
        if found is None or isinstance(found[1], Archive):  # gone or finished: the write will say
            return []
        events = (orjson.loads(e) for e in found[1])
        return [e for e in events if e["version"] <= upto]

    # --- the write -----------------------------------------------------------
    def _write(self, match_id: str, game: Game, meta: Meta, expected: int, moves: ServerMoves,
               idem: str | None = None, request: str = "") -> ApplyResult:
        """Store a request's moves (its own, then the server's) with one
        compare-and-set, after telling the schedule when to look at the match
        next (:mod:`service.domain.clock`); a finished match is compacted."""
        final = moves.snap
        look = clock.next_look(final.deadline, _owes(game, meta, moves), clock.now_ms())
        if look is not None:
            self.schedule.look_at(match_id, look)
        (entry, events), *later = moves.steps
        result = self.store.apply(match_id, expected, final.state, entry, events, idem, request,
                                  later=later, deadline=final.deadline, bank=final.bank)
        if result.version is not None:
            metrics.moves_of(game.id).inc(len(moves.steps))
            if game.status(final.state) == FINISHED:
                self._compact(match_id, final.version, final.state)
                if meta.ladder is not None:
                    self.ladders.finished(meta, game, final.state)
        return result

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


def webhook_seats(game: Game, meta: Meta, state: dict[str, Any]) -> list[int]:
    """The webhook seats to act (not resigned: the server plays those)."""
    if game.status(state) == FINISHED:
        return []
    gone = resigned_seats(state)
    return [seat for seat in game.to_act(state) if meta.kinds[seat] == seats.WEBHOOK and seat not in gone]


def webhook_seat(game: Game, meta: Meta, state: dict[str, Any]) -> int | None:
    """The first webhook seat to act, or None."""
    return next(iter(webhook_seats(game, meta, state)), None)


def _owes(game: Game, meta: Meta, moves: ServerMoves) -> bool:
    """Whether the server owes something at once after ``moves``: moves it
    stopped before, or a webhook seat's call."""
    return moves.owed or webhook_seat(game, meta, moves.snap.state) is not None


def deadlines(game: Game, meta: Meta, state: dict[str, Any], now: int,
              bank: dict[str, int] | None = None) -> dict[str, int]:
    """The seats' deadlines (:func:`service.domain.clock.deadlines`, with
    what is left of their ``bank``); without a clock, a webhook seat to act
    still gets one, ``WEBHOOK_TIMEOUT_MS`` as it was when the match was
    created (api.md "Webhook seats", 1.2)."""
    out = clock.deadlines(game, meta.clock_ms, state, now, bank)
    if meta.clock_ms is None and meta.webhook_ms is not None:
        out.update({str(seat): now + meta.webhook_ms for seat in webhook_seats(game, meta, state)})
    return out


def server_moves(game: Game, meta: Meta, snap: Snapshot, steps: list[Step],
                 timed: int | None = None, reason: str | None = None,
                 stored: Callable[[], list[dict[str, Any]]] = list, thinking: Thinking = INLINE) -> ServerMoves:
    """The moves the server plays after ``snap`` (reached by ``steps``, the
    request's own move; ``snap`` still carries the deadlines and banks of
    the version before it): seat ``timed``'s fallback first when its clock
    ran out or its webhook failed (``by: "clock"``, with ``reason`` for a
    webhook seat, in the log entry too for replays), then, while a bot seat
    or a resigned seat is to act, its move (``by: "bot"`` /
    ``"resigned"``), like the engine's automatic moves; at most
    :data:`AUTO_MOVES` and :data:`AUTO_SECONDS`.  The decisions that end now
    are charged to the seats' banks first.  ``stored`` gives the match's
    events stored before ``steps`` (read only by a searching bot); the bots
    decide as ``thinking`` says (inline, or in its pool: a bot that gives
    no move there within its budget gets its fallback, ``by: "clock"``)."""
    steps, state, version = list(steps), snap.state, snap.version
    now, started, played = clock.now_ms(), time.monotonic(), 0
    bank = clock.charged(snap.deadline, snap.bank, now)

    def timed_snap() -> Snapshot:
        return Snapshot(version, state, deadlines(game, meta, state, now, bank), bank)

    owed = (timed, BY_CLOCK) if timed is not None else owed_seat(game, meta, state)
    while owed is not None:
        if played >= AUTO_MOVES or (played and time.monotonic() - started > AUTO_SECONDS):
            return ServerMoves(timed_snap(), steps, owed=True)
        seat, owed_by = owed
        move, by = _server_decision(game, meta, timed_snap(), seat, owed_by,
                                    functools.partial(_history, stored, steps), thinking)
        why = reason if seat == timed and owed_by == BY_CLOCK else None
        state, events = game.play(state, seat, move, by, why)
        version, played = version + 1, played + 1
        entry = {"version": version, "seat": seat, "move": move, "by": by, **({"reason": why} if why else {})}
        steps.append((entry, stamp(events, version)))
        owed = owed_seat(game, meta, state)
    return ServerMoves(timed_snap(), steps)


def _history(stored: Callable[[], list[dict[str, Any]]], steps: list[Step]) -> list[dict[str, Any]]:
    """The match's events: the stored ones, then those of ``steps``."""
    return [*stored(), *(e for _, events in steps for e in events)]


def _server_decision(game: Game, meta: Meta, snap: Snapshot, seat: int, by: str,
                     history: Callable[[], list[dict[str, Any]]], thinking: Thinking) -> tuple[Move, str]:
    """The move the server plays for ``seat`` and who decided it (``by``).
    A bot seat's choice, made from exactly that seat's view (what its GET
    returns) and legal moves (with their ids; a choice by id is logged as the
    listed move it names; a searching bot: from the match, read only through
    its seat's worlds, :func:`bots.decide`), with the seat's deadline as the
    budget of a pooled decision (:meth:`bots.pool.Thinking.decide`); else,
    or when the bot gave no move in time, the game's fallback
    (:meth:`Game.fallback`; ``by: "clock"`` for the bot, as when a clock runs out)."""
    choice = None
    if by == BY_BOT:
        decision = bot_pool.Decision(str(meta.bots[seat]), game.id, seat, meta.seed, snap.version,
                            view_of(game, meta, snap, seat_viewer(seat)),
                            with_ids(game, game.legal_moves(snap.state, seat)), lambda: (snap.state, history()))
        try:
            choice = thinking.decide(decision, snap.deadline.get(str(seat)))
        except NoDecision as failed:
            metrics.BOT_FALLBACKS.labels(failed.reason).inc()
            by = BY_CLOCK
        else:
            if "id" in choice:
                choice = game.posted_move(snap.state, seat, choice)
    if choice is None:
        choice = game.fallback(snap.state, seat)
    return {k: v for k, v in choice.items() if k != "label"}, by


def _move_body(game: Game, meta: Meta, viewer: Viewer, snap: Snapshot,
               events: list[dict[str, Any]], legal: bool = False) -> bytes:
    """The 200 body of a move: its version, events and the caller's view
    (and ``legal_moves`` at that version when ``legal``)."""
    body = {"version": snap.version, "events": redact(game, events, viewer),
            "state": view_of(game, meta, snap, viewer)}
    if legal:
        body["legal_moves"] = legal_for(game, snap.state, viewer)
    return orjson.dumps(body)


def try_move(game: Game, snap: Snapshot, seat: int, move: dict[str, Any],
              version: int | None) -> ApiError | Played:
    """Check a move in the contract's order (finished, version, turn,
    legality) and play it: the move as logged (a move posted by its ``id``:
    the listed move it names), the new state and events, or the error."""
    if game.status(snap.state) == FINISHED:
        return ApiError("match_finished", "the match is finished; no more moves are accepted")
    if version is not None and version != snap.version:
        return _conflict(snap.version, version)
    try:
        if "id" in move:
            move = {k: v for k, v in game.posted_move(snap.state, seat, move).items() if k != "label"}
        return move, *game.play(snap.state, seat, move)
    except GameError as exc:
        return ApiError(_GAME_ERRORS.get(type(exc), "illegal_move"), clip_echoes(exc.detail, move))


def _reused(key: str | None) -> ApiError:
    return ApiError("idempotency_key_reused",
                    f"the Idempotency-Key {str(key)[:64]!r} was sent before with a different request "
                    "(move, version or seat); nothing was changed. Use a new key for a new request")


def _conflict(current: int, given: int | None) -> ApiError:
    if given is None:
        detail = (f"the match kept changing while the move was tried (now version {current}); "
                  "GET the match and decide again")
    else:
        detail = (f"the move was meant for version {given} but the match is at version {current}; "
                  "GET the match and decide again")
    return ApiError("version_conflict", detail, current_version=current)
