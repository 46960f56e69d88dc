"""Ladders: ratings on the server (api.md "Ladders: ratings on the server", 1.2).

A ladder belongs to one game; its admin token registers entrants, each with
a name (unique in the ladder) and a token.  A match joins a ladder at
creation (``"ladder": {"id", "token"}``): every seat names an entrant
(:meth:`Ladders.seating`), whose name becomes the seat's display name and
whose token may act for that seat like the seat's own token
(:func:`service.domain.auth.identify`).

Ratings, exactly once per finished ladder match: the match is noted as
*pending* in its ladder before it is created (:meth:`Ladders.enter`).  When
it finishes, the ratings are computed with openskill's Plackett–Luce model
(μ 25, σ 25/3 at the start; seats sharing a place tie) and written by one
script on the ladder's slot that writes only while the match is pending and
removes it in the same step, comparing each entrant's record with the one
the ratings were computed from (:data:`service.store.keys.LADDER_RATE`).  So
a retry, a second instance or a second reader rating the same match changes
nothing, and two matches finishing together are rated one after the other.
The match's own keys and the ladder's are never written by one command
(separate hash slots).

The finishing move rates its match right after its compare-and-set
(:meth:`service.domain.moves.MovePipeline`).  A process killed in between
leaves the match pending: every read of the leaderboard first settles the
ladder's pending matches (:meth:`Ladders.settle`), rating the finished ones
and dropping those gone before their end (deleted or expired; a match
deleted after its end is rated before it goes).  A pending match not found
is only dropped :data:`GONE_AFTER_MS` after its creation began, as its create
may still be under way.
"""
from __future__ import annotations

import functools
import hmac
import logging
import time
from dataclasses import dataclass
from typing import Any

import orjson
import redis
from openskill.models import PlackettLuce

from engine.core import FINISHED, Game
from engine.ranking import places
from service.domain import auth
from service.domain.access import Access
from service.http.errors import ApiError, clip
from service.store.ladders import LadderStore
from service.store.store import DamagedMatch, Meta

log = logging.getLogger(__name__)

#: Ratings at the start (openskill's defaults, named by the contract).
MU, SIGMA = 25.0, 25.0 / 3
#: Compare-and-set attempts of one rating before leaving it to the next read.
RATE_ATTEMPTS = 16
#: A pending match not found this long after its creation began is gone (ms).
GONE_AFTER_MS = 60_000
MODEL = PlackettLuce(mu=MU, sigma=SIGMA)


@dataclass(frozen=True)
class LadderSeating:
    """A ladder match's seats: ``players`` with the entrants' names (for
    :func:`service.domain.seats.seating`), the entrant and its token hash per seat."""

    ladder_id: str
    players: list[dict[str, Any]]
    entrants: list[str]
    hashes: list[str]


def not_found(ladder_id: str) -> ApiError:
    return ApiError("ladder_not_found", f"there is no ladder {ladder_id[:64]!r}")


def rated(records: list[dict[str, Any]], place: list[int]) -> list[dict[str, Any]]:
    """The entrants' records after a match in which seat i (entrant
    ``records[i]``) took ``place[i]`` (1 best; equal places tie)."""
    teams = [[MODEL.rating(mu=r["mu"], sigma=r["sigma"])] for r in records]
    after = MODEL.rate(teams, ranks=[float(p) for p in place])
    return [{**r, "mu": team[0].mu, "sigma": team[0].sigma, "matches": r["matches"] + 1,
             "wins": r["wins"] + (p == 1)} for r, team, p in zip(records, after, place)]


def leaderboard(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Entrants, best ``rating`` (μ − 3σ) first; rank = 1 + the number of
    entrants with a strictly higher rating."""
    rows = [{"entrant_id": entrant_id, "name": r["name"], "mu": r["mu"], "sigma": r["sigma"],
             "rating": r["mu"] - 3 * r["sigma"], "matches": r["matches"], "wins": r["wins"]}
            for entrant_id, r in records.items()]
    rows.sort(key=lambda row: (-row["rating"], row["name"]))
    for i, row in enumerate(rows):
        row["rank"] = rows[i - 1]["rank"] if i and rows[i - 1]["rating"] == row["rating"] else i + 1
    return rows


@dataclass(frozen=True)
class Ladders:
    """Ladders, their entrants and ratings, on the match store's Redis."""

    access: Access

    @functools.cached_property
    def saved(self) -> LadderStore:
        return LadderStore(self.access.store)

    # --- ladders and entrants ------------------------------------------
    def create(self, game_id: str, name: str) -> dict[str, Any]:
        """A new ladder of ``game_id``: the 201 body with its admin token."""
        game = self.access.game(game_id)
        with self.access.store.budget():
            while True:
                ladder_id = auth.new_match_id()
                admin = auth.new_token(ladder_id)
                header = {"game": game.id, "name": name, "admin": auth.token_hash(admin),
                          "created": time.time(), "matches": 0}
                if self.saved.create(ladder_id, header):
                    return {"ladder_id": ladder_id, "game": game.id, "name": name, "admin_token": admin}

    def add_entrant(self, ladder_id: str, authorization: str | None, name: str) -> dict[str, Any]:
        """Register entrant ``name`` (the ladder's admin token): the 201 body with its token."""
        with self.access.store.budget():
            header = self._header(ladder_id)
            token = auth.bearer(authorization)
            if token is None:
                raise ApiError("unauthenticated", "registering an entrant needs the ladder's admin token")
            if not hmac.compare_digest(auth.token_hash(token), header["admin"]):
                raise ApiError("forbidden", "this token is not the ladder's admin token")
            while True:
                entrant_id = auth.new_match_id()
                entrant_token = auth.new_token(ladder_id)
                record = {"name": name, "token": auth.token_hash(entrant_token), "mu": MU, "sigma": SIGMA,
                          "matches": 0, "wins": 0}
                outcome = self.saved.add_entrant(ladder_id, entrant_id, record)
                if outcome == "taken":
                    raise ApiError("invalid_options", f"the ladder already has an entrant named {clip(name)!r}")
                if outcome == "missing":
                    raise not_found(ladder_id)
                if outcome == "ok":
                    return {"entrant_id": entrant_id, "name": name, "token": entrant_token}

    def board(self, ladder_id: str) -> dict[str, Any]:
        """The leaderboard, once the ladder's finished matches are rated."""
        with self.access.store.budget():
            if auth.MATCH_ID.fullmatch(ladder_id) is None:
                raise not_found(ladder_id)
            self.settle(ladder_id)
            read = self.saved.read(ladder_id)
        if read is None:
            raise not_found(ladder_id)
        records = {entrant_id: orjson.loads(raw) for entrant_id, raw in read.entrants.items()}
        return {"ladder_id": ladder_id, "game": read.header["game"], "name": read.header["name"],
                "matches": int(read.header["matches"]), "entrants": leaderboard(records)}

    def _header(self, ladder_id: str) -> dict[str, str]:
        header = self.saved.header(ladder_id) if auth.MATCH_ID.fullmatch(ladder_id) else None
        if header is None:
            raise not_found(ladder_id)
        return header

    # --- ladder matches ----------------------------------------------------
    def seating(self, game: Game, ladder: Any, players: Any) -> LadderSeating | None:
        """A create request's ladder seats (None without ``ladder``).
        Unknown ladder: 404; wrong token: 403; anything else wrong: 422
        ``invalid_options``."""
        if ladder is None:
            if isinstance(players, list) and any(isinstance(p, dict) and "entrant" in p for p in players):
                raise ApiError("invalid_options", "seats name entrants only in a ladder match: add "
                               "\"ladder\": {\"id\": …, \"token\": <the ladder's admin token>}")
            return None
        if (not isinstance(ladder, dict) or set(ladder) != {"id", "token"}
                or not all(isinstance(v, str) for v in ladder.values())):
            raise ApiError("invalid_options", "ladder must be {\"id\": \"<ladder id>\", "
                           "\"token\": \"<the ladder's admin token>\"}")
        header = self._header(ladder["id"])
        if not hmac.compare_digest(auth.token_hash(ladder["token"]), header["admin"]):
            raise ApiError("forbidden", "ladder.token is not the ladder's admin token")
        if header["game"] != game.id:
            raise ApiError("invalid_options", f"this ladder's matches are {header['game']} matches, "
                           f"not {game.id}")
        ids = _entrant_ids(players)
        read = self.saved.read(ladder["id"], ids)
        records = {} if read is None else {i: orjson.loads(raw) for i, raw in read.entrants.items()}
        seated = [_ladder_seat(p, records.get(i), i) for p, i in zip(players, ids)]
        return LadderSeating(ladder["id"], seated, ids, [records[i]["token"] for i in ids])

    def enter(self, seating: LadderSeating, match_id: str) -> None:
        """Note a ladder match as not rated yet, before it is created."""
        self.saved.pend(seating.ladder_id, match_id, int(time.time() * 1000))

    def rate(self, meta: Meta, game: Game, state: dict[str, Any]) -> None:
        """Rate a finished ladder match, once (nothing when it was rated
        already).  A store failure leaves it to the next read."""
        assert meta.ladder is not None
        result = game.result(state)
        assert result is not None  # finished
        place = places(result["ranking"], len(meta.players))
        for _attempt in range(RATE_ATTEMPTS):
            read = self.saved.read(meta.ladder, meta.entrants)
            if read is None or len(read.entrants) != len(meta.entrants):
                log.error("ladder match %s: its ladder or an entrant is gone", meta.match_id)
                return
            raw = [read.entrants[i] for i in meta.entrants]
            after = rated([orjson.loads(r) for r in raw], place)
            if self.saved.rate(meta.ladder, meta.match_id, list(zip(meta.entrants, raw, after))) != "stale":
                return
        log.warning("ladder match %s: its entrants kept changing; the next read rates it", meta.match_id)

    def settle(self, ladder_id: str) -> None:
        """Rate the ladder's finished pending matches; drop those gone."""
        now = int(time.time() * 1000)
        for match_id, created in self.saved.pending(ladder_id):
            if not self.settle_match(ladder_id, match_id) and now - created > GONE_AFTER_MS:
                self.saved.drop(ladder_id, match_id)

    def settle_match(self, ladder_id: str, match_id: str) -> bool:
        """Rate a match of the ladder if it is finished; False when there is
        no such match of this ladder (gone, or its create never happened)."""
        try:
            loaded = self.access.store.load(match_id)
        except DamagedMatch as exc:  # cannot finish any more; its admin may delete it
            log.error("ladder match: %s", exc)
            return True
        if loaded is None or loaded[0].ladder != ladder_id:
            return False
        meta, snap = loaded
        game = self.access.game(meta.game)
        if game.status(snap.state) == FINISHED:
            self.rate(meta, game, snap.state)
        return True

    def forget(self, meta: Meta) -> None:
        """A deleted ladder match is no longer pending (rated or not)."""
        assert meta.ladder is not None
        self.saved.drop(meta.ladder, meta.match_id)

    def finished(self, meta: Meta, game: Game, state: dict[str, Any]) -> None:
        """The finishing move's part: rate the match now; a store failure
        leaves it pending (:meth:`settle` rates it)."""
        try:
            self.rate(meta, game, state)
        except redis.exceptions.RedisError as exc:
            log.warning("rating ladder match %s failed (the next read rates it): %s", meta.match_id, exc)


def _entrant_ids(players: Any) -> list[str]:
    """The entrant of each seat of a ladder match (each at most once)."""
    if not isinstance(players, list) or not all(isinstance(p, dict) and "entrant" in p for p in players):
        raise ApiError("invalid_options", "in a ladder match every element of players is "
                       "{\"entrant\": \"<entrant id>\", …}")
    ids = [p["entrant"] for p in players]
    if not all(isinstance(i, str) for i in ids):
        raise ApiError("invalid_options", "an entrant is named by its entrant_id (a string)")
    if len(set(ids)) < len(ids):
        twice = next(i for n, i in enumerate(ids) if i in ids[:n])
        raise ApiError("invalid_options", f"entrant {clip(twice)!r} is seated twice; each plays one seat")
    return ids


def _ladder_seat(player: dict[str, Any], record: dict[str, Any] | None, entrant_id: str) -> dict[str, Any]:
    """A ladder seat as a player object of :func:`service.domain.seats.seating`:
    the entrant's name instead of ``entrant``."""
    if record is None:
        raise ApiError("invalid_options", f"{clip(entrant_id)!r} is not an entrant of this ladder")
    if player.get("open"):
        raise ApiError("invalid_options", f"entrant {record['name']!r}'s seat is played by the entrant; "
                       "it cannot be open")
    if player.get("name", record["name"]) != record["name"]:
        raise ApiError("invalid_options", f"a ladder seat's name is its entrant's ({record['name']!r}); "
                       "leave out name")
    return {**{k: v for k, v in player.items() if k != "entrant"}, "name": record["name"]}
