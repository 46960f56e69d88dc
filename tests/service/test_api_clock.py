"""Clocks (contract 1.1, "Clocks, fallback moves and resigning"): deadlines
in every view (streams too), the sweeper playing a timed-out seat's fallback
with nobody connected (in-process with the clock moved forward, and on a real
gunicorn with real time), exactly once when two instances race for it."""
from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from service.domain import clock
from service.http.context import EXTENSION
from service.ops import sweeper
from tests.conftest import flask_api, make_app
from tests.http_helpers import Api, Match, strip_label
from tests.service.test_api_stream import Stream, sapi, sapp  # noqa: F401  # the stream fixtures

PER_MOVE = 30_000


def create(api: Api, players: Any = 2, game: str = "biberbande", per_move: int | None = PER_MOVE,
           **extra: Any) -> Match:
    body: dict[str, Any] = {"game": game, "players": players, "seed": 3, **extra}
    if per_move is not None:
        body["clock"] = {"per_move_ms": per_move}
    r = api.create_raw(body)
    assert r.status == 201, r
    return Match(api, r.json, r)


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch):
    """Move the service's clock forward by ``ms`` (time.time stays)."""
    offset = [0]
    real = clock.now_ms
    monkeypatch.setattr(clock, "now_ms", lambda: real() + offset[0])

    def forward(ms: int) -> None:
        offset[0] += ms
    return forward


def test_deadline_in_every_view(api: Api) -> None:
    """Each seat to act has ``now + per_move_ms``, the same for every viewer;
    a move sets the next one; no clock or a finished match: ``{}``."""
    before = int(time.time() * 1000)
    m = create(api)
    deadline = m.created["state"]["deadline"]
    assert list(deadline) == [str(m.created["state"]["to_act"][0])]
    assert before + PER_MOVE <= deadline["0"] <= int(time.time() * 1000) + PER_MOVE
    for view in (m.spectator_view(), m.admin_view(), m.seat_view(0), m.seat_view(1)):
        assert view["deadline"] == deadline
    r = m.play(0, strip_label(m.legal(0)[0]))
    assert r.json["state"]["deadline"] == m.seat_view(1)["deadline"]
    to_act = r.json["state"]["to_act"]
    assert list(r.json["state"]["deadline"]) == [str(s) for s in to_act]
    assert r.json["state"]["deadline"][str(to_act[0])] >= deadline["0"]
    assert create(api, per_move=None).created["state"]["deadline"] == {}
    assert m.play(1, {"type": "resign"}).json["state"]["deadline"] == {}
    assert api.record(m.id).json["clock"] == {"per_move_ms": PER_MOVE}


def test_deadline_in_streams(sapp: Any, sapi: Api) -> None:  # noqa: F811  # the imported fixtures
    m = create(sapi)
    with Stream(sapp, m.id, m.token(1), state=True, ndjson=True) as s:
        first = s.take(1)[0]
    assert first.data["state"]["deadline"] == m.seat_view(1)["deadline"] != {}


def test_a_clock_fires_with_no_client(app: Any, api: Api, later: Any) -> None:
    """Past the deadline the sweeper plays the seat's fallback: ``timed_out``
    before the move's events, ``"by": "clock"`` in the record; not before."""
    m = create(api)
    sweep = sweeper.Sweeper(app.extensions[EXTENSION])
    assert sweep.sweep() == 0
    later(PER_MOVE - 1000)
    assert sweep.sweep() == 0 and m.admin_view()["version"] == 0
    later(1001)
    assert sweep.sweep() == 1
    view = m.admin_view()
    assert view["version"] == 1
    events = m.events(m.admin, after=0)
    assert events[0] == {"type": "timed_out", "seat": 0, "version": 1}
    assert [e["version"] for e in events] == [1] * len(events)
    entry = api.record(m.id, m.admin).json["moves"][0]
    assert entry == {"version": 1, "seat": 0, "move": entry["move"], "by": "clock"}
    assert entry["move"] == {"type": "draw"}                       # the first listed (BB-4.1)
    assert sweep.sweep() == 0                                      # next deadline: 30 s from the move


def test_fallbacks_named_by_the_game(app: Any, api: Api, later: Any) -> None:
    """13 Beavers' fallback after an answer is ``dam`` (TB-4.12)."""
    m = create(api, game="thirteen-beavers")
    m.play(0, strip_label(m.legal(0)[0]))
    assert m.admin_view()["to_act"] == [0], "seed 3: the first answer is right, so seat 0 decides again"
    later(PER_MOVE + 1)
    assert sweeper.Sweeper(app.extensions[EXTENSION]).sweep() == 1
    assert api.record(m.id, m.admin).json["moves"][-1]["move"] == {"type": "dam"}


def test_a_timed_out_match_replays(app: Any, api: Api, later: Any) -> None:
    """Clock moves and bot moves replay to the same events (compaction
    derives a finished match's events again from its record)."""
    m = create(api, ["me", {"name": "Bobo", "bot": "heuristic"}], game="mein-lieber-biber",
               options={"rounds": 1})
    sweep = sweeper.Sweeper(app.extensions[EXTENSION])
    for _ in range(500):
        if m.admin_view()["status"] == "finished":
            break
        live = m.events(m.admin)
        later(PER_MOVE + 1)
        sweep.sweep()
    else:
        raise AssertionError("the match did not end")
    record = api.record(m.id).json
    assert {e.get("by") for e in record["moves"]} == {"clock", "bot"}
    assert m.events(m.admin)[:len(live)] == live


def test_two_instances_race_for_one_deadline(store: Any, later: Any) -> None:
    """Two apps (two instances, own caches) on one store sweep the same due
    deadline at once, several times over: one fallback move, once."""
    apps = [make_app(store), make_app(store)]
    m = create(flask_api(apps[0]))
    later(PER_MOVE + 1)
    lodges = [a.extensions[EXTENSION] for a in apps]
    for lodge in lodges:
        lodge.store.load(m.id)                                      # both have the match cached
    barrier = threading.Barrier(4)

    def race(run: Any) -> None:
        barrier.wait()
        run()

    runs = [sweeper.Sweeper(lodges[0]).sweep, sweeper.Sweeper(lodges[1]).sweep,
            lambda: lodges[0].moves.advance(m.id), lambda: lodges[1].moves.advance(m.id)]
    threads = [threading.Thread(target=race, args=(run,)) for run in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    record = flask_api(apps[1]).record(m.id, m.admin).json
    assert [(e["version"], e["by"]) for e in record["moves"]] == [(1, "clock")]


@pytest.mark.live
def test_a_clock_fires_on_a_live_server_with_nobody_connected(live_api: Api) -> None:
    """gunicorn (its workers' sweepers) on the real redis, real time: the
    fallback is played at the latest 1 s after the deadline."""
    m = create(live_api, per_move=1000)
    deadline = m.created["state"]["deadline"]["0"]
    time.sleep(max(0.0, deadline / 1000 + 1.0 - time.time()))
    view = live_api.view(m.id, m.admin).json
    assert view["version"] >= 1, view
    events = live_api.events(m.id, m.admin, after=0).json["events"]
    assert events[0] == {"type": "timed_out", "seat": 0, "version": 1}
