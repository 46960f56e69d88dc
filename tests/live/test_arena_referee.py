"""The referee against a live server (gunicorn + real redis-server): one
request per decision with ``?legal=true`` (counted on the wire), bots the
server plays (``server:KIND``) next to in-process ones, the server's clock
for ``--move-timeout`` (a slow in-process bot is timed out by the clock, its
late move refused, the timeout counted from the record's ``"by": "clock"``),
and reproducible matches: the same plan gives the same record."""
from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest

from arena import referee as referee_module
from arena.client import JSON, LodgeClient
from arena.entrants import Entrant
from arena.referee import MatchOutcome, MatchPlan, Referee
from arena.tournament import derive_seed
from bots import Bot, make_bot
from engine import REGISTRY

pytestmark = pytest.mark.live


class CountingClient(LodgeClient):
    """A client that counts its requests by (method, route)."""

    def __init__(self, url: str):
        super().__init__(url)
        self.sent: Counter[tuple[str, str]] = Counter()

    def _request(self, method: str, path: str, **kw: Any):
        parts = path.strip("/").split("/")  # v1/matches[/<id>[/<what>]]
        route = "match" if len(parts) == 3 else parts[-1]
        self.sent[method, route] += 1
        return super()._request(method, path, **kw)


def plan(*specs: str, seed: int = 5) -> MatchPlan:
    return MatchPlan(index=0, deal=0, seed=seed, lineup=[Entrant.parse(s) for s in specs],
                     bot_seeds=[derive_seed(seed, "bot", 0, s) for s in range(len(specs))])


def play(url: str, game: str, match: MatchPlan, **kw: Any) -> tuple[MatchOutcome, Counter]:
    client = CountingClient(url)
    with client:
        outcome = Referee(client, game, **kw).play(match)
        return outcome, client.sent


def recorded(outcome: MatchOutcome) -> JSON:
    """The match's record, which the referee keeps for every match it plays."""
    assert outcome.record is not None
    return outcome.record


@pytest.mark.parametrize("game", REGISTRY.ids())
def test_random_bots_need_one_request_per_move(live_server: str, game: str):
    """Played through the admin token with legal=true, each answer lists the
    next seat's moves: one POST per move, one GET of the view at the start."""
    outcome, sent = play(live_server, game, plan("a=random", "b=random", "c=random"))
    assert outcome.moves > 10
    assert sent == {("POST", "matches"): 1, ("GET", "match"): 1, ("POST", "moves"): outcome.moves,
                    ("GET", "record"): 1, ("DELETE", "match"): 1}


@pytest.mark.parametrize("game", REGISTRY.ids())
def test_heuristic_bots_read_their_view_once_per_turn(live_server: str, game: str):
    """A bot that reads its view plays with its seat's token: the answer is
    its view and next moves while it is still to act, so only a change of
    seat costs one GET (view and legal moves together)."""
    outcome, sent = play(live_server, game, plan("a=heuristic", "b=heuristic"))
    record_seats = [m["seat"] for m in recorded(outcome)["moves"]]
    changes = 1 + sum(a != b for a, b in zip(record_seats, record_seats[1:]))
    assert sent[("POST", "moves")] == outcome.moves
    assert sent[("GET", "match")] == changes
    assert ("GET", "legal-moves") not in sent


def test_server_bots_play_inside_the_requests(live_server: str):
    """server:KIND seats are bot seats: the referee never plays or waits for
    them, their moves are in the record with "by": "bot", results count."""
    game = "mein-lieber-biber"
    outcome, sent = play(live_server, game, plan("srv=server:heuristic", "loc=random", "rnd=server:random"))
    by_seat = Counter((m["seat"], m.get("by")) for m in recorded(outcome)["moves"])
    assert by_seat[(0, "bot")] > 0 and by_seat[(2, "bot")] > 0
    assert by_seat[(1, "bot")] == 0 and by_seat[(1, None)] > 0
    assert sent[("POST", "moves")] == by_seat[(1, None)]  # only the local bot's moves
    assert [s.entrant for s in outcome.seats] == ["srv", "loc", "rnd"]
    assert min(s.place for s in outcome.seats) == 1
    assert [s.score for s in outcome.seats] == outcome.result["scores"]

    alone, sent = play(live_server, game, plan("a=server:heuristic", "b=server:random"))
    assert alone.result["winners"] and sent[("POST", "moves")] == 0  # the create request played it all


@pytest.mark.parametrize("game", REGISTRY.ids())
def test_the_same_plan_gives_the_same_match(live_server: str, game: str):
    lineup = ("h=heuristic", "r=random", "s=server:heuristic")
    first, _ = play(live_server, game, plan(*lineup, seed=9), move_timeout=30)
    again, _ = play(live_server, game, plan(*lineup, seed=9), move_timeout=30)
    assert recorded(first)["moves"] == recorded(again)["moves"] and first.result == again.result
    assert [vars(s) for s in first.seats] == [vars(s) for s in again.seats]


class SlowBot(Bot):
    """Thinks ``seconds`` on its decisions number 2 and 3, and plays like ``inner``."""

    def __init__(self, inner: Bot, seconds: float):
        super().__init__(inner.game, inner.seat, 0)
        self.inner, self.seconds, self.decisions = inner, seconds, 0
        self.needs_view = inner.needs_view

    def choose(self, view, moves):
        self.decisions += 1
        if self.decisions in (2, 3):
            time.sleep(self.seconds)
        return self.inner.choose(view, moves)


@pytest.mark.parametrize("kind", ["random", "heuristic"])
def test_the_servers_clock_times_out_a_slow_bot(live_server: str, monkeypatch: pytest.MonkeyPatch, kind: str):
    """--move-timeout is clock.per_move_ms: the server plays the slow seat's
    fallback move (within 1 s of the deadline, so 3.5 s are late for a 2 s
    clock); the referee stops waiting for the bot one sweep after its deadline,
    drops its late answer and carries on from the new state, so the quick
    seat is never held up; the timeouts are the record's clock entries."""
    def slow_seat_0(kind_: str, game: str, seat: int, seed: int) -> Bot:
        bot = make_bot(kind_, game, seat, seed)
        return SlowBot(bot, 3.5) if seat == 0 else bot

    monkeypatch.setattr(referee_module, "make_bot", slow_seat_0)
    outcome, sent = play(live_server, "biberbande", plan(f"slow={kind}", "quick=random"), move_timeout=2.0)
    assert recorded(outcome)["clock"] == {"per_move_ms": 2000}
    clocked = [m for m in recorded(outcome)["moves"] if m.get("by") == "clock"]
    assert len(clocked) >= 2 and {m["seat"] for m in clocked} == {0}  # one or more per slow decision
    assert [s.timeouts for s in outcome.seats] == [len(clocked), 0] and [s.crashes for s in outcome.seats] == [0, 0]
    posted = [m for m in recorded(outcome)["moves"] if "by" not in m]
    assert sent[("POST", "moves")] == len(posted)  # the late answers were dropped, not sent


def test_without_a_timeout_there_is_no_clock(live_server: str):
    outcome, _ = play(live_server, "biberclan", plan("a=random", "b=random"), move_timeout=None)
    assert "clock" not in recorded(outcome) and all("by" not in m for m in recorded(outcome)["moves"])
    assert [s.timeouts for s in outcome.seats] == [0, 0]
