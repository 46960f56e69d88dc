"""The match service, free of HTTP: create, claim, view, the lobby, events,
record and delete; moves go through the move pipeline
(:class:`service.domain.moves.MovePipeline`, :attr:`Lodge.moves`).

Routes call these with already-validated input and turn the returned
dicts/bytes into responses.  Games are reached only through the registry and
the :class:`engine.core.Game` interface; every view and event goes through
``game.view`` / ``game.redact_events`` for the caller's viewer
(:mod:`service.domain.views`), so nothing hidden reaches the wrong client.
Store faults are answered as :func:`service.domain.access.store_faults` says.
"""
from __future__ import annotations

import contextlib
import functools
import re
import secrets
import time
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
import redis

from bots.pool import Thinking
from engine.core import FINISHED, SEED_MAX, SPECTATOR_VIEWER, Game, InvalidOptions, Viewer, seat_viewer
from service.domain import auth, lobby, seats
from service.domain.access import Access, not_found, store_faults, unavailable
from service.domain.clock import first_bank
from service.domain.history import History, stamp
from service.domain.ladders import Ladders
from service.domain.moves import MovePipeline
from service.domain.views import REFEREE, clock_settings, delay_for, held_back, legal_for, redact, view_of, with_ids
from service.domain.webhooks import Webhooks
from service.http.errors import ApiError, clip_echoes
from service.ops import metrics
from service.store.notify import Notifier
from service.store.redis_client import outage
from service.store.store import Archive, Meta, Snapshot, WriteUnsettled


@dataclass(frozen=True)
class Lodge(Access):
    """What a request needs: the store, the game registry (lookups from
    :class:`Access`), the change notifications that wake long-polls and
    streams, the move pipeline, the webhook calls, and where bot seats
    decide (default: inline)."""

    notifier: Notifier
    history: History = field(default_factory=History)
    webhooks: Webhooks = field(default_factory=Webhooks)
    thinking: Thinking = field(default_factory=Thinking)

    @functools.cached_property
    def ladders(self) -> Ladders:
        """Rating ladders, their entrants and leaderboards."""
        return Ladders(self)

    @functools.cached_property
    def moves(self) -> MovePipeline:
        """Every move into a match: a client's, a bot's, a clock's, a webhook's."""
        return MovePipeline(self, self.webhooks, self.thinking)

    # --- create ------------------------------------------------------------
    def create(self, game_id: str, players: Any, seed: Any, options: Any, *,
               public: Any = None, clock: Any = None, spectators: Any = None,
               referee: Any = None, ladder: Any = None) -> dict[str, Any]:
        """Set up a match; the 201 body (tokens, the invite when a seat is
        open, the referee's token when asked for)."""
        game = self.game(game_id)
        with self.store.budget():
            ranked = self.ladders.seating(game, ladder, players)
        seating = seats.seating(game, players if ranked is None else ranked.players, self.webhooks.policy)
        clock_ms, bank_ms, delay = seats.clock_ms(clock), seats.bank_ms(clock), seats.spectator_delay(spectators)
        listed, refereed = seats.flag("public", public), seats.flag("referee", referee)
        seed, state, events, resolved = new_state(game, seating.names, seed, options)
        invite = seats.new_invite() if seating.has_open else None
        while True:
            match_id = auth.new_match_id()
            tokens = [auth.new_token(match_id) if kind == seats.TOKEN else None for kind in seating.kinds]
            admin = auth.new_token(match_id)
            judge = auth.new_token(match_id) if refereed else None
            meta = Meta(match_id, game.id, seating.names, seed, resolved, auth.token_hash(admin),
                        ["" if t is None else auth.token_hash(t) for t in tokens], time.time(),
                        seating.kinds, seating.bots, clock_ms, listed,
                        None if invite is None else seats.invite_hash(invite), seating.hooks,
                        self.webhooks.timeout_ms if seats.WEBHOOK in seating.kinds else None, bank_ms, delay,
                        None if judge is None else auth.token_hash(judge))
            if ranked is not None:
                meta = replace(meta, ladder=ranked.ladder_id, entrants=ranked.entrants,
                               entrant_hashes=ranked.hashes)
                self.ladders.enter(ranked, match_id)
            if lobby.listed(meta):
                lobby.add(self.store, meta)
            if self.store.create(meta, state, stamp(events, 0)):
                break
        metrics.MATCHES.labels(game.id).inc()
        start = self.moves.start(match_id, game, meta,
                                 Snapshot(0, state, bank=first_bank(bank_ms, len(seating.names))))
        body: dict[str, Any] = {"match_id": match_id, "game": game.id, "version": start.version, "seed": seed,
                                "seats": seats.created_seats(seating, tokens), "admin_token": admin}
        if judge is not None:
            body["referee_token"] = judge
        if invite is not None:
            body["invite"] = invite
        body["state"] = view_of(game, meta, start, SPECTATOR_VIEWER)
        return body

    # --- seats and the lobby --------------------------------------------
    @store_faults
    def claim(self, match_id: str, seat: int, invite: Any, authorization: str | None = None) -> dict[str, Any]:
        """Claim open seat ``seat`` (the invite, or none for a public match):
        the 201 body with the seat's token and view.  Checks: match exists,
        the referee's token (403: it may not claim), invite (403), finished
        (409 ``match_finished``), seat open (409 ``seat_taken``); the
        compare-and-set in Redis decides a race."""
        meta, snap = self.load(match_id)
        self._refuse_referee(meta, authorization)
        game = self._claimable(meta, snap, seat, invite)
        token = auth.new_token(match_id)
        self._store_claim(meta, seat, token)
        meta = meta.with_claims({seat: auth.token_hash(token)})
        with contextlib.suppress(redis.exceptions.RedisError):  # the seat is claimed: answer 201 whatever
            meta = self.store.meta(match_id, fresh=True) or meta  # claims of other seats meanwhile
            if not meta.open_seats:
                lobby.forget(self.store, meta)
        return {"match_id": match_id, "seat": seat, "name": meta.players[seat], "token": token,
                "state": view_of(game, meta, snap, seat_viewer(seat))}

    def _claimable(self, meta: Meta, snap: Snapshot, seat: int, invite: Any) -> Game:
        """The match's game when ``seat`` may be claimed with ``invite`` as
        this worker sees the match, else the refusal."""
        if not meta.public and not seats.invite_matches(invite, meta.invite_hash):
            raise ApiError("forbidden", seats.invite_refusal(meta, invite))
        game = self.game(meta.game)
        if game.status(snap.state) == FINISHED:
            raise _finished_seats()
        if not 0 <= seat < len(meta.kinds) or meta.kinds[seat] != seats.OPEN:
            raise seats.taken(meta, seat)
        return game

    def _store_claim(self, meta: Meta, seat: int, token: str) -> None:
        """The compare-and-set of a claim: returns once the seat is the
        token's, else the refusal as the store decided it."""
        match_id = meta.match_id
        try:
            outcome = self.store.claim(match_id, seat, auth.token_hash(token))
        except WriteUnsettled as exc:
            outage.failed(exc)
            raise unavailable(self.store, (
                "the match store stopped answering while the seat was being claimed: it may be claimed now "
                "(GET …/seats shows it); if it is, its token is lost, else claim it again")) from None
        if outcome == "missing":
            raise not_found(match_id)
        if outcome == "finished":
            raise _finished_seats()
        if outcome != "ok":
            raise seats.taken(self.store.meta(match_id, fresh=True) or meta, seat)

    def _refuse_referee(self, meta: Meta, authorization: str | None) -> None:
        """403 for the referee's token (claiming needs no token, and others are not looked at)."""
        if authorization is None:
            return
        try:
            viewer = self.identify(meta, authorization)
        except ApiError:
            return
        if viewer.role == REFEREE:
            raise ApiError("forbidden", "the referee token may not claim a seat")

    @store_faults
    def seat_table(self, match_id: str) -> dict[str, Any]:
        """Who holds each seat, as stored now (not as this worker cached it)."""
        meta = self.store.meta(match_id, fresh=True) if auth.MATCH_ID.fullmatch(match_id) else None
        if meta is None:
            raise not_found(match_id)
        return {"seats": seats.table(meta)}

    def lobby_page(self, game_id: str | None, limit: int, cursor: str | None) -> dict[str, Any]:
        """A page of the lobby: public matches with an open seat, newest first."""
        games = [self.game(game_id).id] if game_id is not None else [g.id for g in self.registry]
        after = lobby.decode_cursor(cursor)
        with self.store.budget():
            return lobby.page(self.store, games, limit, after,
                              lambda meta: _lobby_entry(self.game(meta.game), meta))

    # --- view --------------------------------------------------------------
    @store_faults
    def view(self, match_id: str, authorization: str | None,
             if_none_match: str | None, legal: bool = False) -> tuple[int, dict[str, Any] | None]:
        """The current version and the caller's view (with ``legal_moves``
        when ``legal``), or None for the view while ``If-None-Match`` names
        the current version (304)."""
        meta, snap = self.load(match_id)
        viewer = self.identify(meta, authorization)
        if meta.delay:
            snap = self.shown(match_id, self.game(meta.game), meta, viewer, snap)
        if _matches_version(if_none_match, snap.version):
            return snap.version, None
        game = self.game(meta.game)
        body = view_of(game, meta, snap, viewer)
        if legal:
            body["legal_moves"] = legal_for(game, snap.state, viewer)
        return snap.version, body

    # --- spectator delay (1.2) -----------------------------------------------
    def shown(self, match_id: str, game: Game, meta: Meta, viewer: Viewer, snap: Snapshot) -> Snapshot:
        """What ``viewer`` may see of the match at ``snap``: ``snap``, or,
        for a caller held back by the spectator delay (:func:`delay_for`)
        while the match is unfinished, the snapshot at max(0, version −
        delay) (:meth:`snapshot_at`)."""
        delay = delay_for(meta, viewer)
        if not delay or snap.version <= 0 or game.status(snap.state) == FINISHED:
            return snap
        return self.snapshot_at(match_id, game, meta, max(0, snap.version - delay))

    def snapshot_at(self, match_id: str, game: Game, meta: Meta, version: int) -> Snapshot:
        """The match at an earlier ``version``, replayed from its move log;
        without deadlines or banks (those of the current version would tell
        when the last moves were made)."""
        return Snapshot(version, self.history.state_at(game, meta, self.store.moves(match_id, version)))

    # --- moves ----------------------------------------------------------------
    @store_faults
    def legal_moves(self, match_id: str, authorization: str | None, seat: int | None) -> dict[str, Any]:
        """The seat's legal moves now; empty when it has nothing to decide."""
        meta, snap = self.load(match_id)
        viewer = self.identify(meta, authorization)
        seat = auth.acting_seat(viewer, seat, len(meta.players), "listing legal moves")
        game = self.game(meta.game)
        moves: list[dict[str, Any]] = []
        if game.status(snap.state) != FINISHED and seat in game.to_act(snap.state):
            moves = with_ids(game, game.legal_moves(snap.state, seat))
        return {"version": snap.version, "seat": seat, "moves": moves}

    # --- reads -------------------------------------------------------------
    @store_faults
    def events(self, match_id: str, authorization: str | None, after: int, wait: float) -> dict[str, Any]:
        """Events after ``after``; waits up to ``wait`` seconds for one."""
        with self.store.budget():
            meta = self.meta(match_id)
            viewer = self.identify(meta, authorization)
        game = self.game(meta.game)
        delay = delay_for(meta, viewer)
        version, shown, events, final = self._visible_events(match_id, meta, game, delay, after)
        if not events and not final and wait > 0:
            deadline = time.monotonic() + wait
            with self.notifier.watch(match_id) as waiter:  # woken on changes (service.store.notify)
                while not events and not final and (left := deadline - time.monotonic()) > 0:
                    waiter.seen = version
                    waiter.wait(left)
                    version, shown, events, final = self._visible_events(match_id, meta, game, delay, after)
        return {"version": shown, "events": redact(game, events, viewer)}

    def _visible_events(self, match_id: str, meta: Meta, game: Game, delay: int,
                        after: int) -> tuple[int, int, list[dict[str, Any]], bool]:
        """Current version, the version the caller may see (held back by
        ``delay`` while the match is unfinished), the events after ``after``
        up to it, and whether nothing more will come."""
        version, events, final = self._events_after(match_id, meta, game, after)
        if not delay or final or game.status(self.snapshot(match_id).state) == FINISHED:
            return version, version, events, final
        shown, events = held_back(delay, version, events)
        return version, shown, events, False

    @store_faults
    def stream_check(self, match_id: str, authorization: str | None) -> tuple[Meta, Viewer]:
        """The match and the caller of a stream about to open, the match read
        from the store: this worker's cached meta may be of a match deleted
        through another worker, and the stream would answer 200 then end."""
        meta, _snap = self.load(match_id)
        return meta, self.identify(meta, authorization)

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
            raise not_found(match_id)
        return found

    @store_faults
    def record(self, match_id: str, authorization: str | None) -> dict[str, Any]:
        """The game record: admin any time, anyone once the match is
        finished; 1.2: the referee any time, held back by the spectator
        delay (the moves up to max(0, version − delay), no result) until then."""
        meta = self.meta(match_id)
        viewer = self.identify(meta, authorization)
        found = self.store.record(match_id)
        if found is None:
            raise not_found(match_id)
        snap, moves = found
        game = self.game(meta.game)
        if game.status(snap.state) != FINISHED and viewer.role == REFEREE:
            moves = moves[:max(0, snap.version - meta.delay)]
        elif game.status(snap.state) != FINISHED and not viewer.is_admin:
            if viewer.is_spectator:
                raise ApiError("unauthenticated", "the record of an unfinished match needs the admin token")
            raise ApiError("forbidden", "the record of an unfinished match is for the admin only")
        settings = clock_settings(meta)
        clock = {"clock": settings} if settings is not None else {}
        return {"game": meta.game, "players": meta.players, "seed": meta.seed, "options": meta.options,
                **clock, "moves": [orjson.Fragment(m) for m in moves], "result": game.result(snap.state)}

    @store_faults
    def delete(self, match_id: str, authorization: str | None) -> None:
        """Remove the match (admin token)."""
        meta = self.meta(match_id)
        auth.require_admin(self.identify(meta, authorization), "deleting a match")
        if meta.ladder is not None:  # a finished match is rated before it goes
            self.ladders.settle_match(meta.ladder, match_id)
        if not self.store.delete(match_id):
            raise not_found(match_id)
        if meta.ladder is not None:  # an unfinished one changes nothing
            self.ladders.forget(meta)
        lobby.forget(self.store, meta)


def new_state(game: Game, names: list[str], seed: Any,
              options: Any) -> tuple[int, dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """A new match of ``game`` as create makes it (a match, or a version-0
    world): the seed (absent: drawn in 0 … 2^53−1), the state, the setup's
    events and the resolved options; what the game refuses is 422
    ``invalid_options``."""
    if seed is None:
        seed = secrets.randbelow(SEED_MAX + 1)
    try:
        state, events, resolved = game.create(names, seed, options)
    except InvalidOptions as exc:
        raise ApiError("invalid_options", clip_echoes(exc.detail, options)) from None
    return seed, state, events, resolved

def _finished_seats() -> ApiError:
    return ApiError("match_finished", "the match is finished; its seats can no longer be claimed")


def _lobby_entry(game: Game, meta: Meta) -> dict[str, Any]:
    """One match of a lobby page (unfinished: secret options hidden)."""
    return {"match_id": meta.match_id, "game": meta.game, "options": game.public_options(meta.options),
            "seats": seats.table(meta),
            "clock": clock_settings(meta),
            "created": lobby.created_at(meta)}


_ETAG = re.compile(r'\s*(?:W/)?"(-?\d{1,18})"\s*')


def _matches_version(header: str | None, version: int) -> bool:
    """``If-None-Match`` names the current version (or is ``*``)."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    return any((m := _ETAG.fullmatch(tag)) is not None and int(m.group(1)) == version
               for tag in header.split(","))


