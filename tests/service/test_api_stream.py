"""GET /v1/matches/{id}/stream (api.md "Stream (1.1)") through the Flask test
client, on both stores: order without gaps, resume by ``after`` and
``Last-Event-ID``, ``state``, ``end`` on finish and delete, NDJSON,
keep-alives, the query token, errors like /events, wake-ups by notification
(stream and long-poll), and the leak property: every viewer's stream equals
its /events pages, for every game."""
from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

import bots
from engine import REGISTRY
from service.app import create_app
from service.domain import seats
from service.domain.stream import hide_query_token
from service.ops.config import Settings
from tests import slow_bot
from tests.conftest import flask_api
from tests.http_helpers import W1_MOVES, W1_OPTIONS, Api, Match, assert_problem, play_random, until
from tests.knowledge import judge_events, model_for
from tests.service.test_api_all_games import _short_options, redacted_from
from tests.stream_helpers import Frame, messages, ndjson_frames, sse_frames

KEEPALIVE = 0.05
SETTINGS = {"STREAM_KEEPALIVE": str(KEEPALIVE), "NOTIFY_SAFETY": "30", "STREAM_MAX": "30",
            "RATE_LIMIT_ENABLED": "false", "MAX_WAITS_PER_CLIENT": "0"}  # one test client plays fast


@pytest.fixture
def sapp(store: Any):
    """An app with a short keep-alive; the safety re-read (30 s) never helps
    within a test, so every wake-up below is a notification."""
    app = create_app(redis_client=store, settings=Settings.from_env(SETTINGS))
    app.config["TESTING"] = True
    return app


@pytest.fixture
def sapi(sapp) -> Api:
    return flask_api(sapp)


class Stream:
    """An open stream: its response and its frames."""

    def __init__(self, app, mid: str, token: str | None = None, *, after: int | None = None,
                 last_event_id: str | None = None, state: bool = False, ndjson: bool = False,
                 query_token: bool = False):
        headers: dict[str, str] = {}
        params: dict[str, Any] = {}
        if token is not None and query_token:
            params["token"] = token
        elif token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if after is not None:
            params["after"] = after
        if state:
            params["state"] = "true"
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        if ndjson:
            headers["Accept"] = "application/x-ndjson"
        self.response = app.test_client().get(f"/v1/matches/{mid}/stream", headers=headers,
                                              query_string=params, buffered=False)
        self.status = self.response.status_code
        parse = ndjson_frames if ndjson else sse_frames
        self.frames = parse(iter(self.response.response)) if self.status == 200 else iter(())

    def take(self, count: int | None = None) -> list[Frame]:
        return messages(self.frames, count)

    def close(self) -> None:
        self.response.close()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _page(m: Match, token: str | None, version: int) -> list[dict[str, Any]]:
    """The /events page of one version for ``token``."""
    return [e for e in m.events(token, after=version - 1) if e["version"] == version]


def _play_w1(m: Match, moves: int) -> None:
    for seat, mv in W1_MOVES[:moves]:
        assert m.play(seat, mv).status == 200


def _subscribed(app, match_id: str) -> bool:
    """Whether the app's process listens to the match's changes (its
    notifier subscribes to them while a stream or long-poll waits on it)."""
    from service.store.keys import Keys

    ((_channel, listeners),) = app.extensions["lodge"].store.client.pubsub_shardnumsub(Keys(match_id).changed)
    return listeners > 0


def _when(condition, act) -> threading.Thread:
    """Run ``act`` in a thread as soon as ``condition()`` holds."""
    def run() -> None:
        until(condition, "ready to act")
        act()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _once_subscribed(app, match_id: str, act) -> threading.Thread:
    """Run ``act`` in a thread as soon as the match's waiters can be woken
    by its notification (:func:`_subscribed`)."""
    return _when(lambda: _subscribed(app, match_id), act)


# --------------------------------------------------------------------------
# Order, gaps, resume.
# --------------------------------------------------------------------------
def test_backlog_in_order_without_gaps_sse(sapp, sapi: Api):
    m = sapi.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    _play_w1(m, 3)
    with Stream(sapp, m.id, m.token(0)) as s:
        assert s.status == 200
        assert s.response.headers["Content-Type"].startswith("text/event-stream")
        got = s.take(4)
    assert [f.kind for f in got] == ["events"] * 4
    assert [f.data["version"] for f in got] == [0, 1, 2, 3]
    assert [f.id for f in got] == ["0", "1", "2", "3"]
    for f in got:
        assert set(f.data) == {"version", "events"}
        assert f.data["events"] == _page(m, m.token(0), f.data["version"])


def test_live_moves_arrive_in_order(sapp, sapi: Api):
    m = sapi.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    with Stream(sapp, m.id, after=0) as s:
        mover = _once_subscribed(sapp, m.id, lambda: _play_w1(m, 4))
        got = s.take(4)
        mover.join()
    assert [f.data["version"] for f in got] == [1, 2, 3, 4]
    for f in got:
        assert f.data["events"] == _page(m, None, f.data["version"])


def test_resume_after_and_last_event_id(sapp, sapi: Api):
    m = sapi.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    _play_w1(m, 4)
    with Stream(sapp, m.id, m.admin, after=2) as s:
        assert [f.data["version"] for f in s.take(2)] == [3, 4]
    # Last-Event-ID replaces after (a reconnecting EventSource sends both kinds)
    with Stream(sapp, m.id, m.admin, after=0, last_event_id="3") as s:
        assert [f.data["version"] for f in s.take(1)] == [4]
    with Stream(sapp, m.id, m.admin, last_event_id="-1") as s:
        assert [f.data["version"] for f in s.take(5)] == [0, 1, 2, 3, 4]


def test_state_on_the_current_version_only(sapp, sapi: Api):
    m = sapi.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    _play_w1(m, 2)
    with Stream(sapp, m.id, m.token(1), state=True) as s:
        backlog = s.take(3)
        assert [("state" in f.data) for f in backlog] == [False, False, True]
        assert backlog[-1].data["state"] == m.seat_view(1)
        mover = _once_subscribed(sapp, m.id, lambda: m.play(*W1_MOVES[2]))
        live = s.take(1)[0]
        mover.join()
    assert live.data["version"] == 3 and live.data["state"] == m.seat_view(1)


# --------------------------------------------------------------------------
# End of the stream.
# --------------------------------------------------------------------------
def test_end_when_finished(sapp, sapi: Api):
    m = sapi.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    _play_w1(m, 5)
    final = len(W1_MOVES)
    with Stream(sapp, m.id, m.token(0), after=5) as s:
        mover = _once_subscribed(sapp, m.id, lambda: m.play(*W1_MOVES[5]))
        got = s.take()  # until the server closes the stream
        mover.join()
    assert m.admin_view()["status"] == "finished"
    assert [f.kind for f in got] == ["events", "end"]
    assert got[0].data["version"] == final and got[1].data == {"status": "finished"}
    # a finished match: the rest of the backlog, then end at once
    with Stream(sapp, m.id, after=final - 2) as s:
        got = s.take()
    assert [f.kind for f in got] == ["events", "events", "end"]
    with Stream(sapp, m.id, last_event_id=str(final)) as s:
        assert [(f.kind, f.data) for f in s.take()] == [("end", {"status": "finished"})]


def test_end_when_deleted(sapp, sapi: Api):
    m = sapi.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    with Stream(sapp, m.id, m.token(0), after=0) as s:
        deleter = _once_subscribed(sapp, m.id, lambda: sapi.delete_match(m.id, m.admin))
        started = time.monotonic()
        got = s.take()
        deleter.join()
    assert [(f.kind, f.data) for f in got] == [("end", {"status": "deleted"})]
    assert time.monotonic() - started < 5, "the delete was not notified"


def test_ndjson(sapp, sapi: Api):
    m = sapi.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    _play_w1(m, 4)
    with Stream(sapp, m.id, m.token(1), after=1, ndjson=True, state=True) as s:
        assert s.response.headers["Content-Type"] == "application/x-ndjson"
        mover = _once_subscribed(sapp, m.id, lambda: _play_w1_rest(m))
        got = s.take()
        mover.join()
    assert [f.kind for f in got] == ["events"] * 5  # no end line: NDJSON just closes
    assert [f.data["version"] for f in got] == [2, 3, 4, 5, 6]
    assert got[-1].data["state"] == m.seat_view(1) and got[-1].data["state"]["status"] == "finished"
    for f in got:
        assert f.data["events"] == _page(m, m.token(1), f.data["version"])


def _play_w1_rest(m: Match) -> None:
    for seat, mv in W1_MOVES[4:]:
        assert m.play(seat, mv).status == 200
        time.sleep(0.05)


def test_keepalive_on_an_idle_stream(store: Any):
    sapp = create_app(redis_client=store, settings=Settings.from_env({**SETTINGS, "STREAM_KEEPALIVE": "0.005"}))
    m = flask_api(sapp).create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    with Stream(sapp, m.id, after=0) as s:
        started = time.monotonic()
        kinds = [next(s.frames).kind for _ in range(4)]
        elapsed = time.monotonic() - started
    assert kinds == ["keepalive"] * 4
    assert elapsed < 2, elapsed
    with Stream(sapp, m.id, after=0, ndjson=True) as s:
        assert [next(s.frames).kind for _ in range(3)] == ["keepalive"] * 3


def test_no_cache_keeps_a_stream(sapp, sapi: Api):
    """A stream is about now and the caller's own: ``no-store``, by token."""
    m = sapi.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    for ndjson in (False, True):
        with Stream(sapp, m.id, m.token(0), ndjson=ndjson) as s:
            assert s.status == 200
            assert s.response.headers["Cache-Control"] == "no-store"
            assert s.response.headers.getlist("Vary") == ["Authorization"]


# --------------------------------------------------------------------------
# Tokens and errors, like /events.
# --------------------------------------------------------------------------
def test_query_token_is_the_bearer_token(sapp, sapi: Api):
    m = sapi.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    with Stream(sapp, m.id, m.token(0), query_token=True) as s:
        assert s.take(1)[0].data["events"] == _page(m, m.token(0), 0)
    r = sapi.get(f"/v1/matches/{m.id}/stream", params={"token": m.id + ".x"})
    assert_problem(r, 401, "unauthenticated")


def test_errors_like_events(sapp, sapi: Api):
    m = sapi.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    other = sapi.create(["ana", "bo"], seed=12)
    for path in ("events", "stream"):
        assert_problem(sapi.get(f"/v1/matches/aaaaaaaaaaaaaaaa/{path}"), 404, "match_not_found")
        assert_problem(sapi.get(f"/v1/matches/{m.id}/{path}", token="nope"), 401, "unauthenticated")
        assert_problem(sapi.get(f"/v1/matches/{m.id}/{path}", token=other.admin), 403, "forbidden")
        assert_problem(sapi.get(f"/v1/matches/{m.id}/{path}", params={"after": -2}), 400, "invalid_request")
    assert_problem(sapi.get(f"/v1/matches/{m.id}/stream", headers={"Last-Event-ID": "x"}), 400, "invalid_request")


def test_hide_query_token_rewrites_what_servers_log():
    seen: dict[str, Any] = {}

    def app(environ, start_response):
        seen.update(environ)
        return [b""]

    def start_response(*_args: object) -> None:
        """Not called: ``app`` returns without starting a response."""

    environ = {"QUERY_STRING": "after=3&token=abc.d%2Be&state=true", "PATH_INFO": "/v1/matches/x/stream",
               "RAW_URI": "/v1/matches/x/stream?after=3&token=abc.d%2Be&state=true",
               "REQUEST_URI": "/v1/matches/x/stream?after=3&token=abc.d%2Be&state=true"}
    hide_query_token(app)(environ, start_response)
    assert seen["lodge.query_token"] == "abc.d+e"
    assert seen["QUERY_STRING"] == "after=3&state=true"
    assert seen["RAW_URI"] == seen["REQUEST_URI"] == "/v1/matches/x/stream?after=3&state=true"
    hide_query_token(app)({"QUERY_STRING": "token=t", "PATH_INFO": "/p", "RAW_URI": "/p?token=t"}, start_response)
    assert seen["RAW_URI"] == "/p" and seen["QUERY_STRING"] == ""


# --------------------------------------------------------------------------
# Notification, not polling.
# --------------------------------------------------------------------------
def test_long_poll_is_woken_by_the_notification(sapp, sapi: Api):
    m = sapi.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    moved: dict[str, float] = {}

    def move() -> None:
        moved["at"] = time.monotonic()
        m.play(*W1_MOVES[0])

    mover = _once_subscribed(sapp, m.id, move)
    r = sapi.events(m.id, after=0, wait=20)
    woke = time.monotonic()
    mover.join()
    assert r.status == 200 and [e["version"] for e in r.json["events"]] == [1, 1][:len(r.json["events"])]
    assert r.json["events"], r
    assert woke - moved["at"] < 1.0, "the long-poll was not woken by the move"
    assert sapp.extensions["lodge"].notifier.watched() == 0


def test_many_streams_one_subscription(sapp, sapi: Api):
    """Streams of two matches in one process share one pub/sub connection;
    each is woken only by its own match."""
    a = sapi.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    b = sapi.create(["ana", "bo"], seed=12, options=W1_OPTIONS)
    streams = [Stream(sapp, a.id, after=0) for _ in range(3)] + [Stream(sapp, b.id, after=0)]
    try:
        for s in streams:
            next(s.frames)  # open: the first keep-alive
        assert sapp.extensions["lodge"].notifier.watched() == 4
        _play_w1(a, 1)
        for s in streams[:3]:
            assert s.take(1)[0].data["version"] == 1
        assert next(streams[3].frames).kind == "keepalive"
    finally:
        for s in streams:
            s.close()
    assert sapp.extensions["lodge"].notifier.watched() == 0


# --------------------------------------------------------------------------
# Leaks: a viewer's stream is its /events pages, for every game.
# --------------------------------------------------------------------------
@pytest.mark.parametrize("game", [g.id for g in REGISTRY])
def test_stream_equals_events_pages_for_every_viewer(embedded_store: Any, game: str):
    app = create_app(redis_client=embedded_store, settings=Settings.from_env(SETTINGS))
    api = flask_api(app)
    entry = api.get(f"/v1/games/{game}").json
    rng = random.Random(f"stream-leaks:{game}")
    n = entry["max_players"]
    m = api.create(n, game=game, seed=rng.getrandbits(53), options=_short_options(entry))
    viewers = [None, m.admin, *(m.token(s) for s in range(n))]
    checked = 0

    def step(match: Match, _seat: int, _move: dict[str, Any], r: Any) -> None:
        """After a move: each viewer's next stream message is its /events page
        and its view."""
        nonlocal checked
        version = r.json["version"]
        if version % 4 and version > 3:
            return
        for token in viewers:
            with Stream(app, match.id, token, after=version - 1, state=True) as s:
                got = s.take(1)[0].data
            want_view = api.view(match.id, token).json
            assert got == {"version": version, "events": _page(match, token, version), "state": want_view}
            checked += 1

    final = play_random(m, rng, on_step=step)
    assert checked > 0 and final["status"] == "finished"
    admin_all = m.events(m.admin)
    declared = REGISTRY.get(game)
    assert declared is not None
    model = model_for(declared, n, api.record(m.id, m.admin).json["options"])
    for token in viewers:
        with Stream(app, m.id, token) as s:
            got = s.take()
        assert got[-1].kind == "end" and got[-1].data == {"status": "finished"}
        versions = [f.data["version"] for f in got[:-1]]
        assert versions == list(range(final["version"] + 1)), "gaps or disorder"
        streamed = [e for f in got[:-1] for e in f.data["events"]]
        assert streamed == m.events(token)
        redacted_from(streamed, admin_all, "stream")
        if token != m.admin:  # every field, by the independent knowledge model
            seat = next((s for s in range(n) if token == m.token(s)), None)
            judge_events(model, streamed, admin_all, seat, "stream")


# --------------------------------------------------------------------------
# A lost notification loses no event.
# --------------------------------------------------------------------------
def test_safety_reread_delivers_without_notification(store: Any, monkeypatch: pytest.MonkeyPatch):
    """Notifications dropped on the floor: the safety re-read (every 50 ms
    here) still brings the move to the stream and the long-poll."""
    from service.store.notify import Notifier

    monkeypatch.setattr(Notifier, "_handle", lambda self, message, subscribed: None)
    app = create_app(redis_client=store, settings=Settings.from_env({**SETTINGS, "NOTIFY_SAFETY": "0.05"}))
    api = flask_api(app)
    m = api.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    with Stream(app, m.id, after=0) as s:
        mover = _once_subscribed(app, m.id, lambda: m.play(*W1_MOVES[0]))
        started = time.monotonic()
        assert s.take(1)[0].data["version"] == 1
        mover.join()
    assert time.monotonic() - started < 3
    mover = _when(lambda: app.extensions["lodge"].notifier.watched() == 1, lambda: m.play(*W1_MOVES[1]))
    r = api.events(m.id, after=1, wait=10)  # the stream has left: this poll is the one waiter
    mover.join()
    assert r.json["version"] == 2 and r.json["events"]


def test_reconnect_of_the_subscription_loses_nothing(redis_server: str):
    """The pub/sub connection is killed and a move made at once: the waiters
    are woken after the reconnect and read the move (safety re-read: 30 s)."""
    import redis

    client = redis.Redis.from_url(redis_server)
    client.flushdb()
    app = create_app(redis_client=client, settings=Settings.from_env(SETTINGS))
    api = flask_api(app)
    m = api.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    with Stream(app, m.id, after=0) as s:
        assert next(s.frames).kind == "keepalive"
        until(lambda: _subscribed(app, m.id), "subscribed")

        def kill_and_move() -> None:
            assert client.client_kill_filter(_type="pubsub") >= 1
            m.play(*W1_MOVES[0])

        mover = threading.Thread(target=kill_and_move)
        mover.start()
        started = time.monotonic()
        assert s.take(1)[0].data["version"] == 1
        mover.join()
    assert time.monotonic() - started < 5
    client.close()


# --------------------------------------------------------------------------
# A look at the store that outlasts its budget.
# --------------------------------------------------------------------------
class StallingStore(redis.Redis):
    """The service's Redis client (retrying, as ``REDIS_URL`` builds it:
    the store's budget bounds its retries) whose next command from the thread
    :meth:`stall` names waits until ``free`` is set: in a gevent worker, a
    stream's look waits so while an inline bot's search holds the worker
    (threads here, so the test holds it)."""

    def __init__(self, url: str) -> None:
        super().__init__(connection_pool=redis.ConnectionPool.from_url(url, retry=Retry(NoBackoff(), 1)))
        self.victim: int | None = None
        self.stalled, self.free = threading.Event(), threading.Event()

    def stall(self, thread: threading.Thread) -> None:
        self.victim = thread.ident

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if self.victim is not None and threading.get_ident() == self.victim:
            self.victim = None
            self.stalled.set()
            assert self.free.wait(10)
        return super().execute_command(*args, **options)


def test_a_look_past_its_store_budget_ends_the_stream_cleanly(redis_server: str, monkeypatch: pytest.MonkeyPatch,
                                                              caplog: pytest.LogCaptureFixture):
    """``BOT_PROCESSES=0``: a stream's look at the store starts, then waits
    while a move hands the turn to a bot seat whose search (``spin``, 0.3 s
    per decision) runs inline, longer than ``REDIS_BUDGET`` (0.1 s).  The
    look's budget is spent: the stream ends without ``end`` and without an
    error (as at shutdown), and a reconnect with ``Last-Event-ID`` gets every
    later version, none missing.  On a real ``redis-server``: fakeredis'
    client has no retry, so the budget bounds no read there."""
    monkeypatch.setenv(bots.EXTRA_BOTS, slow_bot.KINDS)
    monkeypatch.setattr(seats, "BOT_NAMES", (*seats.BOT_NAMES, "spin"))  # as if set when the server started
    monkeypatch.setenv("LODGE_SPIN_SECONDS", "0.3")
    store = StallingStore(redis_server)
    store.flushdb()
    app = create_app(redis_client=store, settings=Settings.from_env(
        {**SETTINGS, "BOT_PROCESSES": "0", "REDIS_BUDGET": "0.1"}))
    api = flask_api(app)
    m = api.create(["ana", {"name": "spinner", "bot": "spin"}], seed=11, options=W1_OPTIONS)
    seen: list[Frame] = []
    failed: list[BaseException] = []

    def follow() -> None:
        try:
            with Stream(app, m.id, m.token(0)) as s:
                seen.extend(s.frames)
        except BaseException as error:  # noqa: BLE001 (the test reports it)
            failed.append(error)

    reader = threading.Thread(target=follow)
    reader.start()
    deadline = time.monotonic() + 10
    while not any(f.kind == "events" for f in seen):
        assert reader.is_alive() and time.monotonic() < deadline, failed
        time.sleep(0.01)
    store.stall(reader)
    m.play(0, {"type": "draw"})  # seat 0 still to act; the stream's look starts and waits
    assert store.stalled.wait(5)
    while m.admin_view()["to_act"] == [0]:  # the last hands the turn to the bot: it searches inline
        m.play(0, m.legal(0)[0])
    store.free.set()
    reader.join(10)
    assert not reader.is_alive() and not failed, failed
    assert [f.data["version"] for f in seen if f.kind == "events"] == [0]
    assert all(f.kind != "end" for f in seen)
    assert f"stream of match {m.id} ended: the store failed during a look (BudgetSpent" in caplog.text
    version = m.admin_view()["version"]
    assert version > 2
    with Stream(app, m.id, m.token(0), last_event_id="0") as s:
        assert [f.data["version"] for f in s.take(version)] == list(range(1, version + 1))
