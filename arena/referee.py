"""One match, refereed over the public HTTP contract.

The referee creates the match, seats the entrants and walks it to the end,
with ``?legal=true`` so that every answer already carries the next legal
moves (one request per decision):

- a built-in bot that decides from the legal moves alone (``random``) is
  played with the admin token (``?seat=k``): the move's answer lists the
  moves of whichever seat acts next;
- a built-in bot that reads its view (``heuristic``) plays with its seat's
  token, and the answer carries that seat's view and, while it is still to
  act, its next moves; when it takes over from another seat, one GET of its
  view (with ``legal=true``) gives both;
- a server bot (``server:KIND``) is a bot seat: the server plays it inside
  the request that hands it the turn, so the referee never waits for it;
- an external bot plays on its own; the referee long-polls the match's events
  with the admin token until the version moves on.

``move_timeout`` is the server's clock (``clock.per_move_ms`` at creation):
a seat that has not moved by its deadline gets its fallback move played by
the server (``"by": "clock"`` in the record; the timeouts are counted from
those entries).  An external bot's late move is then refused with 409; a
built-in bot still thinking one sweep (1 s) after its seat's deadline (the
view's ``deadline``, so the machines' clocks should agree) is left to finish
in the background, its answer dropped, so that the other seats do not wait
for it (one that answers within that second may get the 409 too).  Either
way the referee carries on from the new state.  Without a timeout there is
no clock and the referee waits forever.  A built-in bot that raises or answers a move
the server refuses, and an external bot that exits before the match is over,
count a crash; their seat then gets *default moves* (the first move its
legal moves list) through the admin token at once.
External bots start with the match, so their first turn's time includes
their start-up.
The match's record is fetched at the end, so every match can be replayed.
With a server ladder (``tournament --ladder``) every match is created as a
ladder match, each seat named by its entrant's ladder id.
"""
from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bots import Bot, make_bot
from engine.ranking import places

from .client import JSON, IllegalMove, LodgeClient, MatchFinished, VersionConflict, legal_of
from .entrants import Entrant, start_external, stop_external
from .ladder import ServerLadder

#: Longest single long-poll while waiting for an external bot, so that a bot
#: that exits is noticed within this many seconds.
POLL_SECONDS = 1.0
#: The latest a server plays a fallback move after the deadline (api.md, Clocks).
SWEEP_SECONDS = 1.0
#: The server's clock range for ``clock.per_move_ms``, in seconds.
MIN_CLOCK, MAX_CLOCK = 1.0, 86_400.0
#: Who played a record entry that the server made on its own.
BY_CLOCK = "clock"

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


@dataclass
class _Seat:
    entrant: Entrant
    token: str | None  # None for a server bot
    bot: Bot | None = None
    process: subprocess.Popen | None = None
    timeouts: int = 0
    crashes: int = 0
    gone: bool = False  # crashed: default moves from now on

    @property
    def reads_view(self) -> bool:
        return self.bot is not None and self.bot.needs_view


@dataclass(frozen=True)
class _Known:
    """The referee's latest answer: a view (its ``viewer`` says whose) and
    the legal moves it carried, by seat."""
    view: JSON
    legal: dict[int, list[JSON]] = field(default_factory=dict)

    def serves(self, s: int, reads_view: bool) -> bool:
        """True when it holds seat ``s``'s moves, and its view if the bot reads one."""
        return s in self.legal and (not reads_view or self.view["viewer"] == {"role": "seat", "seat": s})


class Referee:
    """Plays matches of one game on one server.  Not thread-safe: use one
    referee (and client) per thread."""

    def __init__(self, client: LodgeClient, game: str, *, options: JSON | None = None,
                 move_timeout: float | None = None, logs: Path | None = None,
                 keep_matches: bool = False, observer: Observer | None = None,
                 ladder: ServerLadder | None = None):
        self.client = client
        self.game = game
        self.options = options or {}
        self.move_timeout = move_timeout
        self.logs = logs
        self.keep_matches = keep_matches
        self.ladder = ladder
        self.observer = observer

    def play(self, plan: MatchPlan) -> MatchOutcome:
        started = time.monotonic()
        clock = None if self.move_timeout is None else round(self.move_timeout * 1000)
        ladder = self.ladder
        players = [e.player(None if ladder is None else ladder.entrants[e.name]) for e in plan.lineup]
        created = self.client.create(self.game, players, seed=plan.seed, options=self.options, per_move_ms=clock,
                                     ladder=None if ladder is None else ladder.ref())
        match_id, admin = created.match_id, created.admin_token
        seats = [_Seat(entrant, seat.token) for entrant, seat in zip(plan.lineup, created.seats)]
        try:
            for s, seat in enumerate(seats):
                if seat.entrant.external:
                    assert seat.token is not None
                    log = self.logs / f"match-{plan.index:05d}-seat-{s}.log" if self.logs else None
                    seat.process = start_external(seat.entrant.command or "", url=self.client.url,
                                                  match_id=match_id, seat=s, token=seat.token, log=log)
                elif not seat.entrant.server_played:
                    seat.bot = make_bot(seat.entrant.kind, self.game, s, plan.bot_seeds[s])
            known = _Known(created.state)
            self._observe(match_id, known.view)
            while known.view["status"] != "finished":
                s = known.view["to_act"][0]
                if seats[s].gone:
                    known = self._default_move(match_id, admin, s, known)
                elif seats[s].bot is not None:
                    known = self._bot_turn(match_id, admin, s, seats[s], known)
                else:
                    known = self._await(match_id, admin, s, seats[s], known.view["version"])
                self._observe(match_id, known.view)
        finally:
            for seat in seats:
                if seat.process is not None:
                    stop_external(seat.process)
        record = self.client.record(match_id, admin)
        if not self.keep_matches:
            self.client.delete(match_id, admin)
        for entry in record["moves"]:
            if entry.get("by") == BY_CLOCK:
                seats[entry["seat"]].timeouts += 1
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

    def _ready(self, match_id: str, token: str, s: int, reads_view: bool, known: _Known) -> _Known:
        """``known`` when it serves seat ``s``, else one GET of the view with
        ``legal=true`` (with the seat's token when the bot reads its view)."""
        if known.serves(s, reads_view):
            return known
        view = self.client.view(match_id, token, legal=True)
        return _Known(view, legal_of(view))

    def _bot_turn(self, match_id: str, admin: str, s: int, seat: _Seat, known: _Known) -> _Known:
        assert seat.bot is not None and seat.token is not None
        # a bot that reads its view plays as its seat; one that does not, through the admin token
        token, as_seat = (seat.token, None) if seat.reads_view else (admin, s)
        known = self._ready(match_id, token, s, seat.reads_view, known)
        outcome, move = self._think(seat.bot, known.view if seat.reads_view else None, known.legal[s],
                                    known.view.get("deadline", {}).get(str(s)))
        if outcome == "crash":
            return self._crash(match_id, admin, s, seat, known)
        if outcome == "late":  # the server's clock has played its fallback: carry on from there
            self.client.events(match_id, admin, after=known.view["version"], wait=POLL_SECONDS)
            return self._latest(match_id, admin)
        try:
            return self._post(match_id, admin, token, move, known, as_seat)
        except IllegalMove:
            return self._crash(match_id, admin, s, seat, known)

    def _think(self, bot: Bot, view: JSON | None, moves: list[JSON], deadline: int | None) -> tuple[str, Any]:
        """("ok", move), ("crash", exception), or ("late", None) when a
        clock is set and the bot is still thinking one sweep
        (:data:`SWEEP_SECONDS`) after the seat's ``deadline`` (epoch ms, the
        server's; else ``move_timeout`` from now): the server has played the
        seat's fallback by then, and the other seats must not wait for the
        bot.  Its late answer is dropped (the bot thinks in a daemon thread)."""
        answer: list[tuple[str, Any]] = []

        def think() -> None:
            try:
                answer.append(("ok", bot.choose(view, moves)))
            except Exception as exc:  # a bot's bug is the bot's crash, not the harness's
                answer.append(("crash", exc))

        if self.move_timeout is None:
            think()
        else:
            thread = threading.Thread(target=think, daemon=True)
            thread.start()
            until = deadline / 1000 if deadline is not None else time.time() + self.move_timeout
            thread.join(max(0.0, until - time.time()) + SWEEP_SECONDS)
        return answer[0] if answer else ("late", None)

    def _post(self, match_id: str, admin: str, token: str, move: JSON, known: _Known,
              seat: int | None) -> _Known:
        """Post ``move`` at the known version, with ``legal=true``.  When the
        server's clock played first (409: stale version, or it ended the
        match), the latest state instead."""
        try:
            answer = self.client.move(match_id, token, move, version=known.view["version"], seat=seat,
                                      legal=True)
        except (VersionConflict, MatchFinished):
            if self.move_timeout is None:
                raise
            return self._latest(match_id, admin)
        return _Known(answer.state, answer.legal_moves)

    def _crash(self, match_id: str, admin: str, s: int, seat: _Seat, known: _Known) -> _Known:
        seat.crashes += 1
        seat.gone = True
        return self._default_move(match_id, admin, s, known)

    def _latest(self, match_id: str, admin: str) -> _Known:
        view = self.client.view(match_id, admin, legal=True)
        return _Known(view, legal_of(view))

    def _await(self, match_id: str, admin: str, s: int, seat: _Seat, version: int) -> _Known:
        """Wait until the version moves on: the seat's external bot moved,
        or the server's clock played for it.  Default moves once the bot
        has exited."""
        while True:
            exited = seat.process is not None and seat.process.poll() is not None  # before the version:
            wait = 0 if exited else POLL_SECONDS  # a last move before exiting counts
            if self.client.events(match_id, admin, after=version, wait=wait).version > version:
                return self._latest(match_id, admin)
            if exited:
                return self._crash(match_id, admin, s, seat, self._latest(match_id, admin))

    def _default_move(self, match_id: str, admin: str, s: int, known: _Known) -> _Known:
        """Play the first listed legal move for seat ``s`` with the admin token."""
        known = self._ready(match_id, admin, s, False, known)
        return self._post(match_id, admin, admin, known.legal[s][0], known, s)
