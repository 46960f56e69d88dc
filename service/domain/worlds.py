"""Worlds and simulation: planning over HTTP (api.md, 1.2).

:meth:`Planner.match_worlds` samples determinizations of a match for one
seat (``Game.sample_world``), :meth:`Planner.new_world` makes the version-0
world of a match that is never created, and :meth:`Planner.simulate` plays
moves and a random playout on a world.  Worlds travel as signed strings
(:mod:`service.domain.world_token`); nothing here writes to the store (the
world secret aside, made once per store by the first world issued).

Moves go the move pipeline's way: a posted move through the pipeline's own
check (:func:`service.domain.moves.try_move`), the server's moves after it
(a resigned seat's fallback) through :func:`service.domain.moves.server_moves`,
and ``legal_moves`` through :func:`service.domain.views.legal_for`, as in
every match response.
"""
from __future__ import annotations

import functools
import random
import secrets
from dataclasses import dataclass
from typing import Any

from engine.core import (
    ADMIN_VIEWER,
    FINISHED,
    SEED_MAX,
    Game,
    Viewer,
    resigned_seats,
    seat_viewer,
)
from service.domain import auth, seats
from service.domain.access import not_found, store_faults
from service.domain.history import stamp
from service.domain.matches import Lodge, new_state
from service.domain.moves import owed_seat, server_moves, try_move
from service.domain.views import legal_for, redact, view_of
from service.domain.world_token import World, WorldSigner
from service.http.errors import ApiError
from service.store.store import Meta, Snapshot, Store

#: Worlds one ``GET …/worlds`` may ask for.
MAX_WORLDS = 64
#: Moves one simulate call may post, and moves it plays in all (posted, the
#: server's and the playout's): a playout stops there, the world unfinished.
MAX_MOVES = 256
MAX_STEPS = 10_000


@dataclass(frozen=True)
class Planner:
    """Worlds and simulation on the match service's store and registry."""

    lodge: Lodge

    @property
    def store(self) -> Store:
        return self.lodge.store

    @functools.cached_property
    def signer(self) -> WorldSigner:
        return WorldSigner(self.lodge.store, self.lodge.store.world_secret)

    # --- GET /v1/matches/{id}/worlds -------------------------------------
    @store_faults
    def match_worlds(self, match_id: str, authorization: str | None, seat: int | None,
                     n: int, seed: int | None) -> dict[str, Any]:
        """``n`` worlds of the match for the caller's seat at the current
        version, from sample seeds derived from ``seed`` alone."""
        meta, snap = self.lodge.load(match_id)
        viewer = self.lodge.identify(meta, authorization)
        seat = auth.acting_seat(viewer, seat, len(meta.players), "sampling worlds")
        game = self.lodge.game(meta.game)
        if game.status(snap.state) == FINISHED:
            raise ApiError("match_finished", "the match is finished; it has no worlds to sample")
        found = self.lodge.events_after(match_id, meta, game, -1)
        if found is None:
            raise not_found(match_id)
        base = secrets.randbelow(SEED_MAX + 1) if seed is None else seed
        worlds = []
        for i in range(n):
            state = game.sample_world(snap.state, seat, base * MAX_WORLDS + i, found[1])
            worlds.append(self._issued(game, World(meta.game, match_id, meta.players, snap.version, state),
                                       ADMIN_VIEWER))
        return {"version": snap.version, "seat": seat, "worlds": worlds}

    # --- POST /v1/games/{game}/worlds ------------------------------------
    def new_world(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """The version-0 world of the match that creating with the body's
        ``players``, ``seed`` and ``options`` would make (no clock, no ladder)."""
        game = self.lodge.game(game_id)
        for name in ("clock", "ladder"):
            if body.get(name) is not None:
                raise ApiError("invalid_options", f"a world has no {name}: leave {name!r} out")
        seating = seats.seating(game, body["players"])
        if any(kind != seats.TOKEN for kind in seating.kinds):
            raise ApiError("invalid_options", "a world has no open, bot or webhook seats: name every player")
        _seed, state, _events, _resolved = new_state(game, seating.names, body.get("seed"), body.get("options"))
        return self._issued(game, World(game.id, None, seating.names, 0, state), ADMIN_VIEWER)

    # --- POST /v1/games/{game}/simulate ------------------------------------
    def simulate(self, game_id: str, text: str, moves: list[dict[str, Any]], playout: str | None,
                 seed: int | None, as_seat: int | None) -> dict[str, Any]:
        """Play ``moves`` on the world (each as the admin acting for its
        seat, the server's moves after each), then a random playout; the
        world after it, as the admin or seat ``as_seat`` sees it."""
        game = self.lodge.game(game_id)
        world = self.signer.read(text, game.id)
        meta = _meta(world)
        if as_seat is not None and not 0 <= as_seat < len(world.players):
            raise ApiError("invalid_request", f"as must be a seat of the world, 0…{len(world.players) - 1}",
                           errors={"as": [f"must be between 0 and {len(world.players) - 1}"]})
        snap, events = Snapshot(world.version, world.state), []
        for at, posted in enumerate(moves):
            snap, played = _posted(game, meta, snap, posted, at)
            events += played
        if playout == "random":
            snap, played = _random_playout(game, meta, snap, seed, MAX_STEPS - (snap.version - world.version))
            events += played
        viewer = ADMIN_VIEWER if as_seat is None else seat_viewer(as_seat)
        body = self._issued(game, World(game.id, world.match_id, world.players, snap.version, snap.state), viewer)
        return {**body, "version": snap.version, "status": game.status(snap.state),
                "to_act": game.to_act(snap.state), "legal_moves": legal_for(game, snap.state, viewer),
                "events": redact(game, events, viewer), "result": game.result(snap.state)}

    def _issued(self, game: Game, world: World, viewer: Viewer) -> dict[str, Any]:
        """``{"world", "state"}``: the signed world and its view for ``viewer``
        (``match_id`` null for a world made without a match)."""
        view = {**view_of(game, _meta(world), Snapshot(world.version, world.state), viewer),
                "match_id": world.match_id}
        return {"world": self.signer.issue(world), "state": view}


def _meta(world: World) -> Meta:
    """The match a world stands for: every seat a token seat, no clock (the
    server's moves in it are a resigned seat's fallback only)."""
    return Meta(world.match_id or "", world.game, list(world.players), 0, {}, "", [""] * len(world.players), 0.0)


def _posted(game: Game, meta: Meta, snap: Snapshot, posted: dict[str, Any],
            at: int) -> tuple[Snapshot, list[dict[str, Any]]]:
    """One posted move checked and played as the move pipeline does, then
    the server's moves; 422 ``illegal_move`` with ``at`` when it cannot be."""
    seat, move = posted["seat"], {k: v for k, v in posted["move"].items() if k != "label"}
    if not 0 <= seat < len(meta.players):
        raise ApiError("illegal_move", f"moves[{at}]: the world has no seat {seat}", at=at)
    played = try_move(game, snap, seat, move, None)
    if isinstance(played, ApiError):
        raise ApiError("illegal_move", f"moves[{at}] cannot be applied: {played.detail}", at=at)
    move, state, events = played
    own = ({"version": snap.version + 1, "seat": seat, "move": move}, stamp(events, snap.version + 1))
    return _server_after(game, meta, Snapshot(snap.version + 1, state), own[1])


def _server_after(game: Game, meta: Meta, snap: Snapshot,
                  events: list[dict[str, Any]]) -> tuple[Snapshot, list[dict[str, Any]]]:
    """The moves the server owes after ``snap`` (a resigned seat's
    fallback), played as in a match (:func:`server_moves`), all of them."""
    events = list(events)
    while owed_seat(game, meta, snap.state) is not None:
        after = server_moves(game, meta, snap, [])
        events += [e for _, step in after.steps for e in step]
        snap = Snapshot(after.snap.version, after.snap.state)
    return snap, events


def _random_playout(game: Game, meta: Meta, snap: Snapshot, seed: int | None,
                    budget: int) -> tuple[Snapshot, list[dict[str, Any]]]:
    """Uniformly random legal moves for the first seat to act, from a
    generator seeded by ``seed`` alone, until the world is finished or
    ``budget`` moves are played.  A move drawn from the seat's legal moves is
    applied as listed (:meth:`Game.apply`: checking it again would find it);
    the server's moves are looked for only once a seat has resigned (a
    playout never resigns, so that is known at its start)."""
    rng = random.Random(f"simulate:{secrets.randbelow(SEED_MAX + 1) if seed is None else seed}")
    state, version, events = snap.state, snap.version, []
    owing = bool(resigned_seats(state))
    while game.status(state) != FINISHED and version - snap.version < budget:
        seat = game.to_act(state)[0]
        state, played = game.apply(state, seat, rng.choice(game.legal_moves(state, seat)))
        version += 1
        if owing:
            after, played = _server_after(game, meta, Snapshot(version, state), stamp(played, version))
            state, version = after.state, after.version
            events += played
        else:
            events += stamp(played, version)
    return Snapshot(version, state), events
