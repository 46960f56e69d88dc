"""Webhook seats (contract 1.2, "Webhook seats and time banks"): real HTTP
bots on loopback (tests/webhook_bot.py) called by the service's sweepers on
a real Redis: the payload and its signature, one call and one move per
decision (also with two instances), the fallback with its ``reason`` for
every way an answer fails, the hosts ``WEBHOOK_HOSTS`` allows checked at
creation and on the resolved address, and the secret nowhere to be seen."""
from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

from arena import tournament
from arena.entrants import SECRET_ENV, Entrant
from devtools.servers import ROOT, free_port, stop_process
from service.app import create_app
from service.ops import sweeper
from service.ops.config import Settings
from service.ops.webhook_http import HostPolicy
from tests.conftest import flask_api, requests_api, start_gunicorn
from tests.http_helpers import Api, assert_problem, strip_label
from tests.webhook_bot import Bot

SECRET = "s3cret-webhook-key-0123456789"
TIMEOUT_MS = 1000
ONE_ROUND = {"rounds": 1}
EXAMPLE = ROOT / "arena" / "examples" / "webhook_bot.py"


@pytest.fixture
def rclient(request: pytest.FixtureRequest) -> Iterator[redis.Redis | redis.RedisCluster]:
    """The real Redis, or (``indirect`` parameter ``"cluster"``) the Redis
    Cluster, emptied."""
    client: redis.Redis | redis.RedisCluster
    if getattr(request, "param", "redis") == "cluster":
        client = redis.RedisCluster.from_url(request.getfixturevalue("redis_cluster").url)
        client.flushall()
    else:
        client = redis.Redis.from_url(request.getfixturevalue("redis_server"))
        client.flushdb()
    yield client
    client.close()


@pytest.fixture
def instances(rclient: redis.Redis | redis.RedisCluster) -> Iterator[Callable[..., Api]]:
    """``start(hosts=…)``: an app (an instance) on the shared Redis with its
    sweeper running; every one is stopped at the end."""
    running: list[sweeper.Sweeper] = []

    def start(hosts: str = "127.0.0.1", timeout_ms: int = TIMEOUT_MS) -> Api:
        app = create_app(redis_client=rclient, settings=Settings(
            webhook_hosts=hosts, webhook_timeout_ms=timeout_ms, rate_limit_enabled=False))
        app.config["TESTING"] = True
        running.append(sweeper.start(app))
        return flask_api(app)

    yield start
    for one in running:
        one.stop()


@pytest.fixture
def bots() -> Iterator[Callable[..., Bot]]:
    started: list[Bot] = []

    def start(behaviour: str = "good", **kw: Any) -> Bot:
        bot = Bot(SECRET, behaviour, **kw)
        started.append(bot)
        return bot

    yield start
    for bot in started:
        bot.close()


def hook(url: str, secret: str = SECRET) -> dict[str, str]:
    return {"url": url, "secret": secret}


def create(api: Api, players: list[Any], **extra: Any) -> dict[str, Any]:
    r = api.create_raw({"game": "biberbande", "players": players, "seed": 5, "options": ONE_ROUND, **extra})
    assert r.status == 201, r
    return r.json


def wait_for(check: Callable[[], Any], seconds: float = 20.0) -> Any:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def finished(api: Api, created: dict[str, Any]) -> dict[str, Any]:
    return wait_for(lambda: (v := api.view(created["match_id"], created["admin_token"]).json)["status"]
                    == "finished" and v, 30.0)


# --------------------------------------------------------------------------
# A match played by webhooks
# --------------------------------------------------------------------------
def test_two_webhook_bots_play_a_match_to_the_end(instances: Any, bots: Any) -> None:
    """Every decision is one signed call with a unique delivery id and the
    contract's payload; every move is ``by: "webhook"``; the second call of a
    seat reports the first's latency."""
    api = instances()
    first, second = bots("good"), bots("numbered")
    created = create(api, [{"name": "one", "webhook": hook(first.url)}, {"name": "two", "webhook": hook(second.url)}])
    assert [s.get("webhook") for s in created["seats"]] == [True, True]
    assert all("token" not in s for s in created["seats"])
    finished(api, created)
    record = api.record(created["match_id"]).json
    assert record["moves"] and {m["by"] for m in record["moves"]} == {"webhook"}
    calls = first.calls + second.calls
    assert len(calls) == len(record["moves"])
    assert sorted(c["payload"]["version"] for c in calls) == [m["version"] - 1 for m in record["moves"]]
    assert all(c["signed"] for c in calls)
    assert len({c["delivery"] for c in calls}) == len(calls)
    payload = first.calls[0]["payload"]
    assert set(payload) == {"match_id", "game", "seat", "version", "deadline", "state", "legal_moves", "latency_ms"}
    assert (payload["match_id"], payload["game"], payload["seat"]) == (created["match_id"], "biberbande", 0)
    assert payload["state"]["viewer"] == {"role": "seat", "seat": 0}
    assert payload["state"]["deadline"] == {}  # no clock: views show none (api.md), the call carries it
    assert abs(payload["deadline"] - time.time() * 1000) < 60_000  # epoch ms, WEBHOOK_TIMEOUT_MS ahead
    assert payload["latency_ms"] is None
    later = [c["payload"]["latency_ms"] for bot in (first, second) for c in bot.calls[1:]]
    assert later and all(isinstance(ms, int) and 0 <= ms < TIMEOUT_MS for ms in later)
    seats = api.get(f"/v1/matches/{created['match_id']}/seats").json["seats"]
    assert seats == [{"seat": 0, "name": "one", "kind": "webhook"}, {"seat": 1, "name": "two", "kind": "webhook"}]


def test_a_webhook_answers_a_human_seats_move(instances: Any, bots: Any) -> None:
    """The seat's move hands the turn to the webhook; the mover's request
    returns at once, and the webhook's move follows on its own."""
    api = instances()
    bot = bots("good")
    created = create(api, ["ana", {"name": "snake", "webhook": hook(bot.url)}])
    mid, token = created["match_id"], created["seats"][0]["token"]
    state = created["state"]
    while state["to_act"] == [0]:
        started = time.monotonic()
        r = api.move(mid, token, strip_label(api.legal(mid, token).json["moves"][0]), state["version"])
        assert r.status == 200 and time.monotonic() - started < 0.5
        state = r.json["state"]
    handed = state["version"]
    wait_for(lambda: api.view(mid, token).json["version"] > handed)
    record = api.record(mid, created["admin_token"]).json
    assert "by" not in record["moves"][handed - 1] and record["moves"][handed]["by"] == "webhook"
    assert bot.calls[0]["payload"]["version"] == handed and bot.calls[0]["signed"]


# --------------------------------------------------------------------------
# Every way an answer can fail: the fallback, at once or at the deadline
# --------------------------------------------------------------------------
@pytest.mark.parametrize(("behaviour", "reason", "early"), [
    ("slow", "timeout", False), ("drip", "timeout", False), ("error", "error", True),
    ("garbage", "error", True), ("huge", "error", True), ("illegal", "illegal", True)])
def test_a_failed_answer_plays_the_fallback(instances: Any, bots: Any, behaviour: str, reason: str,
                                            early: bool) -> None:
    """``timed_out {seat, reason}`` then the fallback, ``by: "clock"``:
    at the deadline for no (complete) answer, before it for a wrong one;
    the record replays with the same reason once the match is finished."""
    api = instances()
    bot = bots(behaviour)
    created = create(api, [{"name": "snake", "webhook": hook(bot.url)}, "bo"])
    mid, admin = created["match_id"], created["admin_token"]
    assert created["state"]["deadline"] == {}  # no clock: views show none (api.md)
    wait_for(lambda: api.view(mid, admin).json["version"] >= 1, 10.0)
    played_at = time.time() * 1000
    deadline = bot.calls[0]["payload"]["deadline"]
    events = api.events(mid, admin, after=0).json["events"]
    assert events[0] == {"type": "timed_out", "seat": 0, "reason": reason, "version": 1}
    entry = api.record(mid, admin).json["moves"][0]
    assert (entry["by"], entry["reason"]) == ("clock", reason)
    if early:
        assert played_at < deadline
    else:
        assert deadline <= played_at < deadline + 1500
    assert bot.calls[0]["payload"]["version"] == 0
    api.move(mid, created["seats"][1]["token"], {"type": "resign"})
    assert api.view(mid).json["status"] == "finished"
    assert api.events(mid, after=0).json["events"][0] == events[0]  # replayed from the compacted log


def test_a_redirect_is_not_followed(instances: Any, bots: Any) -> None:
    api = instances()
    target = bots("good")
    bot = bots("redirect", redirect_to=target.url)
    created = create(api, [{"name": "snake", "webhook": hook(bot.url)}, "bo"])
    wait_for(lambda: api.view(created["match_id"]).json["version"] >= 1, 10.0)
    assert api.events(created["match_id"], after=0).json["events"][0]["reason"] == "error"
    assert bot.calls[0]["payload"]["version"] == 0 and target.calls == []


@pytest.mark.parametrize("behaviour", ["drip", "huge"])
def test_a_dripping_or_endless_answer_is_cut_off(instances: Any, bots: Any, behaviour: str) -> None:
    """The server hangs up on an answer drip-fed at 0.3 s a byte (30 bytes:
    9 s) at the deadline, and on an endless one at the body limit: the bot
    sees its connection closed soon after the call started."""
    api = instances()
    bot = bots(behaviour)
    create(api, [{"name": "snake", "webhook": hook(bot.url)}, "bo"])
    wait_for(lambda: bot.calls, 5.0)
    started = bot.calls[0]["at"]
    assert bot.cut.wait(TIMEOUT_MS / 1000 + 3.0)
    assert time.time() - started < TIMEOUT_MS / 1000 + 3.0


# --------------------------------------------------------------------------
# Which hosts
# --------------------------------------------------------------------------
@pytest.mark.parametrize(("hosts", "url", "says"), [
    ("127.0.0.1", "http://10.1.2.3/bot", "not one this server calls"),
    ("127.0.0.1", "http://localhost:8080/bot", "not one this server calls"),
    ("", "http://127.0.0.1/bot", "disabled"),
    ("127.0.0.1", "ftp://127.0.0.1/bot", "http:// or https://"),
    ("127.0.0.1", "/bot", "http:// or https://"),
    ("127.0.0.1", "http://user:pw@127.0.0.1/bot", "user name"),
    ("127.0.0.0/8", "http://127.9.9.9:99999/bot", "not a valid URL"),
])
def test_a_webhook_the_server_does_not_call_is_refused_at_creation(instances: Any, hosts: str, url: str,
                                                                   says: str) -> None:
    api = instances(hosts)
    r = api.create_raw({"game": "biberbande", "players": [{"name": "x", "webhook": hook(url)}, "bo"]})
    assert says in assert_problem(r, 422, "invalid_options")["detail"]
    assert SECRET not in r.body.decode()


@pytest.mark.parametrize("webhook", [
    {"url": "http://127.0.0.1/bot", "secret": "too-short"},
    {"url": "http://127.0.0.1/bot", "secret": "x" * 257},
    {"url": "http://127.0.0.1/bot"},
    {"url": "http://127.0.0.1/bot", "secret": SECRET, "extra": 1},
    "http://127.0.0.1/bot",
])
def test_a_malformed_webhook_is_refused(instances: Any, webhook: Any) -> None:
    r = instances().create_raw({"game": "biberbande", "players": [{"name": "x", "webhook": webhook}, "bo"]})
    assert_problem(r, 422, "invalid_options")


def test_a_webhook_seat_is_not_also_a_bot(instances: Any) -> None:
    r = instances().create_raw({"game": "biberbande", "players": [
        {"name": "x", "bot": "random", "webhook": hook("http://127.0.0.1/bot")}, "bo"]})
    assert_problem(r, 422, "invalid_options")


def test_a_name_resolving_to_a_disallowed_address_is_refused_at_call_time(instances: Any, bots: Any) -> None:
    """``localhost`` is a listed name, but it resolves to loopback, which
    WEBHOOK_HOSTS does not list: no connection is made, reason ``error``."""
    api = instances("localhost")
    bot = bots("good")
    created = create(api, [{"name": "snake", "webhook": hook(f"http://localhost:{bot.port}/bot")}, "bo"])
    wait_for(lambda: api.view(created["match_id"]).json["version"] >= 1, 10.0)
    assert api.events(created["match_id"], after=0).json["events"][0]["reason"] == "error"
    assert bot.calls == []


def test_a_listed_name_on_a_listed_network_is_called(instances: Any, bots: Any) -> None:
    api = instances("localhost,127.0.0.0/8,::1")
    bot = bots("good")
    created = create(api, [{"name": "snake", "webhook": hook(f"http://localhost:{bot.port}/bot")}, "bo"])
    wait_for(lambda: api.view(created["match_id"]).json["version"] >= 1, 10.0)
    assert api.record(created["match_id"], created["admin_token"]).json["moves"][0]["by"] == "webhook"


def test_host_policy() -> None:
    policy = HostPolicy.parse(" Bots.Example.org, 10.0.0.0/8 ,2001:db8::1")
    assert policy.refusal("https://bots.example.org/x") is None
    assert policy.refusal("http://10.2.3.4:8080/") is None
    assert policy.refusal("http://[2001:db8::1]/") is None
    assert policy.refusal("http://11.0.0.1/") is not None
    assert policy.allows("bots.example.org", ipaddress.ip_address("93.184.216.34"))
    assert not policy.allows("bots.example.org", ipaddress.ip_address("192.168.1.1"))
    assert not policy.allows("bots.example.org", ipaddress.ip_address("127.0.0.1"))
    assert policy.allows("bots.example.org", ipaddress.ip_address("10.9.9.9"))
    assert not policy.allows("other.example.org", ipaddress.ip_address("93.184.216.34"))
    with pytest.raises(ValueError, match="WEBHOOK_HOSTS"):
        HostPolicy.parse("bots.example.org, not a host")
    with pytest.raises(ValueError, match="WEBHOOK_HOSTS"):
        Settings.from_env({"WEBHOOK_HOSTS": "under_score!"})


# --------------------------------------------------------------------------
# Several instances; the secret
# --------------------------------------------------------------------------
@pytest.mark.parametrize("rclient", ["redis", "cluster"], indirect=True)
def test_two_instances_call_once_per_decision(instances: Any, bots: Any) -> None:
    """Two apps (each with its sweeper) on one Redis, or on a Redis Cluster:
    each decision is one call, each played once."""
    apis = [instances(), instances()]
    first, second = bots("good"), bots("good")
    created = create(apis[0], [{"name": "one", "webhook": hook(first.url)},
                               {"name": "two", "webhook": hook(second.url)}])
    finished(apis[1], created)
    calls = [c["payload"]["version"] for c in first.calls + second.calls]
    assert sorted(calls) == sorted(set(calls))
    record = apis[1].record(created["match_id"]).json
    assert [m["version"] - 1 for m in record["moves"]] == sorted(calls)


def test_the_secret_is_never_shown_nor_logged(instances: Any, bots: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    api = instances()
    bot, failing = bots("good"), bots("error")
    created = create(api, [{"name": "one", "webhook": hook(bot.url)}, {"name": "two", "webhook": hook(failing.url)}])
    mid, admin = created["match_id"], created["admin_token"]
    finished(api, created)
    bodies = [api.create_raw({"game": "biberbande", "players": [{"name": "x", "webhook": hook(bot.url)}, "y"]}),
              api.view(mid), api.view(mid, admin), api.get(f"/v1/matches/{mid}/seats"), api.events(mid, admin),
              api.record(mid, admin), api.get("/v1/matches", params={"game": "biberbande"})]
    shown = repr(created) + "".join(r.body.decode() + repr(r.headers) for r in bodies)
    logged = "\n".join(r.getMessage() + repr(r.args) for r in caplog.records)
    assert failing.calls
    for secret in (SECRET, bot.url):
        assert secret not in shown
    assert SECRET not in logged


def test_the_example_webhook_bot_plays_a_match(instances: Any, tmp_path: Any) -> None:
    """arena/examples/webhook_bot.py, as shipped, in its own process: it plays
    every decision of its seat (no fallback), and refuses an unsigned call."""
    with example_bot(tmp_path) as url:
        api = instances()
        created = create(api, [{"name": "one", "webhook": hook(url)}, {"name": "two", "webhook": hook(url)}])
        finished(api, created)
        assert {m["by"] for m in api.record(created["match_id"]).json["moves"]} == {"webhook"}


@contextlib.contextmanager
def example_bot(tmp_path: Any) -> Iterator[str]:
    """arena/examples/webhook_bot.py in its own process: its url."""
    port = free_port()
    with open(tmp_path / "bot.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, str(EXAMPLE), str(port)],
                                env=dict(os.environ, WEBHOOK_SECRET=SECRET), stderr=log)
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_for(lambda: _answers(url), 10.0)
        yield url
    finally:
        stop_process(proc)


def _answers(url: str) -> bool:
    """Whether the bot is up (it answers an unsigned call with 401)."""
    try:
        urllib.request.urlopen(urllib.request.Request(url, data=b"{}", method="POST"), timeout=1)
    except urllib.error.HTTPError as exc:
        return exc.code == 401
    except OSError:
        return False
    return False


# --------------------------------------------------------------------------
# gunicorn (gevent workers): two instances on one Redis, real time
# --------------------------------------------------------------------------
@pytest.mark.live
def test_two_gunicorns_play_webhook_matches_without_blocking_a_worker(
        redis_server: str, rclient: redis.Redis, tmp_path: Any, bots: Any) -> None:
    """Two gunicorns of one gevent worker each on one Redis: two good bots
    play a match to the end, one call per decision, while a bot that never
    answers in time holds a call open on each worker and /healthz still
    answers at once; nothing in either server's log holds the secret."""

    env = {"WEBHOOK_HOSTS": "127.0.0.1", "WEBHOOK_TIMEOUT_MS": "3000", "RATE_LIMIT_ENABLED": "false"}
    procs = []
    try:
        for name in ("a", "b"):
            workdir = tmp_path / name
            workdir.mkdir()
            procs.append(start_gunicorn(workdir, redis_server, workers=1, extra_env=env))
        apis = [requests_api(base) for _, base in procs]
        slow = bots("slow")
        for api in apis:
            create(api, [{"name": "sloth", "webhook": hook(slow.url)}, "bo"])
        first, second = bots("good"), bots("good")
        created = create(apis[0], [{"name": "one", "webhook": hook(first.url)},
                                   {"name": "two", "webhook": hook(second.url)}])
        wait_for(lambda: len(slow.calls) == 2, 5.0)
        for api in apis:
            started = time.monotonic()
            assert api.get("/healthz").status == 200
            assert time.monotonic() - started < 0.5
        finished(apis[1], created)
        calls = sorted(c["payload"]["version"] for c in first.calls + second.calls)
        record = apis[1].record(created["match_id"]).json
        assert [m["version"] - 1 for m in record["moves"]] == calls
        assert {m["by"] for m in record["moves"]} == {"webhook"}
    finally:
        for proc, _ in procs:
            stop_process(proc)
    for name in ("a", "b"):
        assert SECRET not in (tmp_path / name / "gunicorn.log").read_text()


@pytest.mark.live
def test_the_arena_seats_webhook_entrants(redis_server: str, rclient: redis.Redis, tmp_path: Any,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``NAME=webhook:URL`` (the secret from LODGE_WEBHOOK_SECRET): the
    server plays the entrant through its webhook in every match; the secret
    is in none of the tournament's files."""
    monkeypatch.setenv(SECRET_ENV, SECRET)
    proc, base = start_gunicorn(tmp_path, redis_server, workers=1,
                                extra_env={"WEBHOOK_HOSTS": "127.0.0.1", "RATE_LIMIT_ENABLED": "false"})
    out = tmp_path / "out"
    try:
        with example_bot(tmp_path) as url:
            config = tournament.TournamentConfig(
                game="biberbande", entrants=[Entrant.parse(f"hook=webhook:{url}"), Entrant.parse("heur=heuristic")],
                matches=2, seats=2, seed=3, parallel=1, duplicate=True, move_timeout=10, url=base,
                options=ONE_ROUND)
            run = tournament.run(config, out_dir=out, progress=False)
    finally:
        stop_process(proc)
    assert len(run.outcomes) == 2
    for kept in tournament.iter_records(out):
        hook_seat = next(s["seat"] for s in kept["seats"] if s["entrant"] == "hook")
        assert {m.get("by") for m in kept["record"]["moves"] if m["seat"] == hook_seat} == {"webhook"}
    for path in out.rglob("*"):
        assert not path.is_file() or SECRET not in path.read_text(errors="replace")
    with pytest.raises(ValueError, match=SECRET_ENV):
        monkeypatch.delenv(SECRET_ENV)
        Entrant.parse(f"hook=webhook:{url}")


# --------------------------------------------------------------------------
# Everything a tournament on the server uses, in one match (issue 26)
# --------------------------------------------------------------------------
def test_a_ladder_match_of_webhook_bots_with_a_time_bank_a_delay_and_a_referee(instances: Any, bots: Any) -> None:
    """A harness's whole tournament match: two webhook bots entered in a
    ladder play a match with a clock and a time bank while spectators see
    it ``delay`` versions late and the referee reads every hand at that
    delayed version; at the end the ladder has rated it once."""
    api = instances()
    first, second = bots("steady"), bots("steady")  # a match that lasts a few seconds, to be watched live
    ladder = api.post("/v1/ladders", {"game": "biberbande", "name": "cup"}).json
    path, admin = f"/v1/ladders/{ladder['ladder_id']}", ladder["admin_token"]
    entrants = [api.post(f"{path}/entrants", {"name": name}, token=admin).json["entrant_id"]
                for name in ("one", "two")]
    created = create(api, [{"entrant": entrants[0], "webhook": hook(first.url)},
                           {"entrant": entrants[1], "webhook": hook(second.url)}],
                     ladder={"id": ladder["ladder_id"], "token": admin},
                     clock={"per_move_ms": 1000, "bank_ms": 2000}, spectators={"delay": 3}, referee=True)
    mid, referee = created["match_id"], created["referee_token"]
    assert set(created["state"]["bank"]) == {"0", "1"}
    judged_live = 0
    while True:
        spectator, judged = api.view(mid).json, api.view(mid, referee).json
        now = api.view(mid, created["admin_token"]).json  # read last: the match only moves on
        if now["status"] != "active":
            break
        if now["version"] >= 3:
            assert max(spectator["version"], judged["version"]) <= now["version"] - 3
            assert judged["viewer"]["role"] == "referee"
            assert all(card is not None for p in judged["players"] for card in p["display"])  # every hand
            judged_live += 1
        assert_problem(api.move(mid, referee, {"type": "draw"}), 403, "forbidden")
        time.sleep(0.02)
    assert judged_live > 0
    final = finished(api, created)
    assert api.view(mid).json["version"] == final["version"]  # nothing held back once finished
    record = api.record(mid, referee).json
    assert record["moves"] and {m.get("by") for m in record["moves"]} <= {"webhook", "clock"}
    board = api.get(path).json
    assert board["matches"] == 1 and [e["matches"] for e in board["entrants"]] == [1, 1]
    assert sorted(c["payload"]["version"] for c in first.calls + second.calls) == sorted(
        {c["payload"]["version"] for c in first.calls + second.calls})  # one call per decision
