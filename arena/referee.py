"""One match, refereed over the public HTTP contract.

The referee creates the match, seats the entrants and walks it to the end:

- a built-in bot's turn: the referee fetches the seat's legal moves (and its
  view, if the bot reads one) with the seat's token, asks the bot, and posts
  the move with the seat's token and the version it saw;
- an external bot plays on its own; the referee long-polls the match's events
  with the admin token until the version moves on.

A bot that has not moved ``move_timeout`` seconds after its turn began gets
the *default move* (the first move GET legal-moves lists) played for it
through the admin token, and a timeout counted.  A built-in bot that raises
or answers a move the server refuses, and an external bot that exits before
the match is over, count a crash; their seat then gets default moves at once.
External bots start with the match, so their first turn's time includes
their start-up.
The match's record is fetched at the end, so every match can be replayed.
"""
from __future__ import annotations

import math
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bots import Bot, make_bot

from .client import JSON, IllegalMove, LodgeClient, VersionConflict
from .entrants import Entrant, start_external, stop_external

#: Longest single long-poll while waiting for an external bot, so that a bot
#: that exits is noticed within this many seconds.
POLL_SECONDS = 1.0

Observer = Callable[[str, int], None]


@dataclass(frozen=True)
class MatchPlan:
    """What to play: ``lineup[s]`` sits at seat ``s``.  Matches of one
    duplicate deal share ``deal`` and ``seed``."""
    index: int
    deal: int
    seed: int
    lineup: list[Entrant]
    bot_seeds: list[int]


@dataclass
class SeatOutcome:
    seat: int
    entrant: str
    score: int
    place: int
    winner: bool
    timeouts: int = 0
    crashes: int = 0


@dataclass
class MatchOutcome:
    index: int
    deal: int
    seed: int
    match_id: str
    moves: int
    seconds: float
    seats: list[SeatOutcome]
    result: JSON
    #: The full record (GET record); a tournament writes it to disk and drops it.
    record: JSON | None = field(default=None, repr=False)

    def to_json(self) -> JSON:
        summary = {"match": self.index, "deal": self.deal, "seed": self.seed, "match_id": self.match_id,
                   "moves": self.moves, "seconds": round(self.seconds, 3),
                   "seats": [vars(s) for s in self.seats], "result": self.result}
        return summary if self.record is None else {**summary, "record": self.record}


def places(ranking: list[list[int]], n: int) -> list[int]:
    """1-based place per seat from a result's ``ranking`` groups; equal
    results share a place and the next place skips (1, 1, 3)."""
    place = [0] * n
    better = 0
    for group in ranking:
        for seat in group:
            place[seat] = better + 1
        better += len(group)
    return place


@dataclass
class _Seat:
    entrant: Entrant
    token: str
    bot: Bot | None = None
    process: subprocess.Popen | None = None
    timeouts: int = 0
    crashes: int = 0
    gone: bool = False  # crashed: default moves from now on


class Referee:
    """Plays matches of one game on one server.  Not thread-safe: use one
    referee (and client) per thread."""

    def __init__(self, client: LodgeClient, game: str, *, options: JSON | None = None,
                 move_timeout: float | None = None, logs: Path | None = None,
                 keep_matches: bool = False, observer: Observer | None = None):
        self.client = client
        self.game = game
        self.options = options or {}
        self.move_timeout = move_timeout
        self.logs = logs
        self.keep_matches = keep_matches
        self.observer = observer

    def play(self, plan: MatchPlan) -> MatchOutcome:
        started = time.monotonic()
        created = self.client.create(self.game, [e.name for e in plan.lineup], seed=plan.seed,
                                     options=self.options)
        match_id, admin = created.match_id, created.admin_token
        seats = [_Seat(entrant, created.token(s)) for s, entrant in enumerate(plan.lineup)]
        try:
            for s, seat in enumerate(seats):
                if seat.entrant.external:
                    log = self.logs / f"match-{plan.index:05d}-seat-{s}.log" if self.logs else None
                    seat.process = start_external(seat.entrant.command or "", url=self.client.url,
                                                  match_id=match_id, seat=s, token=seat.token, log=log)
                else:
                    seat.bot = make_bot(seat.entrant.kind, self.game, s, plan.bot_seeds[s])
            view = created.state
            self._observe(match_id, view)
            while view["status"] != "finished":
                s = view["to_act"][0]
                if seats[s].gone:
                    view = self._default_move(match_id, admin, s)
                elif seats[s].bot is not None:
                    view = self._bot_turn(match_id, admin, s, seats[s])
                else:
                    view = self._await_external(match_id, admin, s, seats[s], view["version"])
                self._observe(match_id, view)
        finally:
            for seat in seats:
                if seat.process is not None:
                    stop_external(seat.process)
        record = self.client.record(match_id, admin)
        if not self.keep_matches:
            self.client.delete(match_id, admin)
        result = record["result"]
        place = places(result["ranking"], len(seats))
        return MatchOutcome(
            index=plan.index, deal=plan.deal, seed=plan.seed, match_id=match_id,
            moves=len(record["moves"]), seconds=time.monotonic() - started,
            seats=[SeatOutcome(seat=s, entrant=seat.entrant.name, score=result["scores"][s],
                               place=place[s], winner=s in result["winners"],
                               timeouts=seat.timeouts, crashes=seat.crashes)
                   for s, seat in enumerate(seats)],
            result=result, record=record)

    # --- turns ----------------------------------------------------------
    def _observe(self, match_id: str, view: JSON) -> None:
        if self.observer is not None:
            self.observer(match_id, view["version"])

    def _bot_turn(self, match_id: str, admin: str, s: int, seat: _Seat) -> JSON:
        assert seat.bot is not None
        legal = self.client.legal_moves(match_id, seat.token)
        view = self.client.view(match_id, seat.token) if seat.bot.needs_view else None
        outcome, move = self._decide(seat.bot, view, legal.moves)
        if outcome == "timeout":
            seat.timeouts += 1
            return self._default_move(match_id, admin, s)
        if outcome == "crash":
            seat.crashes += 1
            seat.gone = True
            return self._default_move(match_id, admin, s)
        try:
            return self.client.move(match_id, seat.token, move, version=legal.version).state
        except IllegalMove:
            seat.crashes += 1
            seat.gone = True
            return self._default_move(match_id, admin, s)

    def _decide(self, bot: Bot, view: JSON | None, moves: list[JSON]) -> tuple[str, Any]:
        """("ok", move), ("timeout", None) or ("crash", exception).  With a
        move timeout the bot thinks in a daemon thread; a late answer is
        dropped."""
        if self.move_timeout is None:
            try:
                return "ok", bot.choose(view, moves)
            except Exception as exc:  # a bot's bug is the bot's crash, not the harness's
                return "crash", exc
        answer: list[tuple[str, Any]] = []

        def think() -> None:
            try:
                answer.append(("ok", bot.choose(view, moves)))
            except Exception as exc:
                answer.append(("crash", exc))

        thread = threading.Thread(target=think, daemon=True)
        thread.start()
        thread.join(self.move_timeout)
        return answer[0] if answer else ("timeout", None)

    def _await_external(self, match_id: str, admin: str, s: int, seat: _Seat, version: int) -> JSON:
        """Wait for an external bot's move; default move on timeout or exit."""
        assert seat.process is not None
        deadline = time.monotonic() + (self.move_timeout if self.move_timeout is not None else math.inf)
        while True:
            exited = seat.process.poll() is not None  # read before the version, so a last move counts
            remaining = deadline - time.monotonic()
            wait = 0 if exited or remaining <= 0 else min(remaining, POLL_SECONDS)
            if self.client.events(match_id, admin, after=version, wait=wait).version > version:
                return self.client.view(match_id, admin)
            if exited:
                seat.crashes += 1
                seat.gone = True
                return self._default_move(match_id, admin, s)
            if remaining <= 0:
                late = self._default_move_at(match_id, admin, s, version)
                if late is None:  # it moved at the last instant
                    return self.client.view(match_id, admin)
                seat.timeouts += 1
                return late

    def _default_move(self, match_id: str, admin: str, s: int) -> JSON:
        """Play the first listed legal move for seat ``s`` with the admin token."""
        legal = self.client.legal_moves(match_id, admin, seat=s)
        return self.client.move(match_id, admin, legal.moves[0], version=legal.version, seat=s).state

    def _default_move_at(self, match_id: str, admin: str, s: int, version: int) -> JSON | None:
        """The default move, only if the match is still at ``version``; None
        when the seat moved meanwhile."""
        legal = self.client.legal_moves(match_id, admin, seat=s)
        if legal.version != version:
            return None
        try:
            return self.client.move(match_id, admin, legal.moves[0], version=legal.version, seat=s).state
        except VersionConflict:
            return None
