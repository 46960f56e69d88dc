"""Store modes and several instances on real servers (issue 13; api.md
"Storage" 1.1): ``REDIS_MODE=cluster`` on a 3-master Redis Cluster,
``REDIS_MODE=sentinel`` through a failover under load with
``REDIS_WAIT_REPLICAS=1``, two app instances on one store, and a shared
``PROMETHEUS_MULTIPROC_DIR``.  The API suite's core runs on the cluster too
(``CLUSTER_MODULES`` in conftest.py); this file adds what needs the service's
own client (built from the environment) or several processes.
"""
from __future__ import annotations

import random
import threading
import time
import uuid
from pathlib import Path
from typing import Any, cast

import pytest
import redis
import requests

from devtools import servers
from service.ops.config import Settings
from tests.conftest import closed_port, flask_api, requests_api, start_gunicorn, stop_process
from tests.http_helpers import Api, assert_problem, strip_label
from tests.service.test_api_all_games import GAMES
from tests.service.test_api_all_games import test_game_plays_through_contract as play_through_contract


def settings_app(**env: str) -> Api:
    """An in-process app whose Redis client comes from ``env`` (as in
    production); rate limits off unless ``env`` says (these tests measure the
    store, and the limits' counters share it)."""
    from service.app import create_app

    app = create_app(settings=Settings.from_env({"RATE_LIMIT_ENABLED": "false", **env}))
    app.config["TESTING"] = True
    return flask_api(app)


def test_settings_modes():
    """Storage 1.1: the modes, the sentinels, and WAIT on by default only with replicas."""
    assert Settings.from_env({}).redis_mode == "single" and Settings.from_env({}).wait_replicas == 0
    s = Settings.from_env({"REDIS_MODE": "sentinel", "REDIS_SENTINELS": "a:1, b:2", "REDIS_SENTINEL_MASTER": "m"})
    assert s.sentinels == (("a", 1), ("b", 2)) and s.sentinel_master == "m" and s.wait_replicas == 1
    assert Settings.from_env({"REDIS_MODE": "cluster", "REDIS_WAIT_REPLICAS": "0"}).wait_replicas == 0
    with pytest.raises(ValueError, match="REDIS_MODE"):
        Settings.from_env({"REDIS_MODE": "galaxy"})
    with pytest.raises(ValueError, match="REDIS_SENTINELS"):
        Settings.from_env({"REDIS_MODE": "sentinel", "REDIS_SENTINELS": "nohost"})


# --------------------------------------------------------------------------
# Redis Cluster.
# --------------------------------------------------------------------------
@pytest.fixture
def cluster_api(redis_cluster: servers.Cluster) -> Api:
    import redis

    redis.RedisCluster.from_url(redis_cluster.url).flushall()
    return settings_app(REDIS_MODE="cluster", REDIS_URL=redis_cluster.url, REDIS_WAIT_REPLICAS="0")


def test_cluster_matches_spread_over_every_master(cluster_api: Api, redis_cluster: servers.Cluster):
    """Storage 1.1: 30 creates and a move each on a 3-master cluster, all
    answered (the issue saw 17 × 500 MovedError with a plain client), and
    the matches live on every master."""
    import redis

    matches = []
    for seed in range(30):
        m = cluster_api.create(2, seed=seed)
        assert cluster_api.move(m.id, m.token(0), {"type": "draw"}, 0).status == 200
        assert cluster_api.record(m.id, m.admin).status == 200
        matches.append(m)
    ids = [m.id for m in matches]
    holders = set()
    for port in redis_cluster.masters:
        node = redis.Redis(port=port, decode_responses=True)
        local = set(node.keys("lodge:*"))  # KEYS lists the node's own keys only
        if any(f"lodge:{{{mid}}}:snap" in local for mid in ids):
            holders.add(port)
        node.close()
    assert holders == set(redis_cluster.masters)
    for m in matches:
        assert cluster_api.delete_match(m.id, m.admin).status == 204
        assert cluster_api.view(m.id, m.admin).status == 404


@pytest.mark.parametrize("game", GAMES)
def test_cluster_every_game_plays_through_contract(cluster_api: Api, game: str):
    """Every game, min and max players, to the end through the contract on
    the cluster: views, legal moves, events, record and its replay."""
    play_through_contract(cluster_api, game)


def test_cluster_rate_limits_shared_by_instances(redis_cluster: servers.Cluster):
    """Issue 11's rate limits in cluster mode: the counters live on the
    cluster (``redis+cluster://``, on the store's own cluster client), so two
    instances share one creation limit and the 429 carries its headers."""
    from service.ops import limits

    cluster = redis.RedisCluster.from_url(redis_cluster.url)
    cluster.flushall()
    env = {"REDIS_MODE": "cluster", "REDIS_URL": redis_cluster.url, "REDIS_WAIT_REPLICAS": "0",
           "RATE_LIMIT_ENABLED": "true", "RATE_LIMIT_CREATE": "3/minute"}
    uri, options = limits.storage(redis.RedisCluster.from_url(redis_cluster.url), Settings.from_env(env))
    assert uri == "redis+cluster://" + redis_cluster.url.split("://")[1].split("/")[0] and "client" in options
    one, two = settings_app(**env), settings_app(**env)
    for api in (one, two, one):
        r = api.create_raw({"game": "biberbande", "players": 2})
        assert r.status == 201 and r.header("X-RateLimit-Limit") == "3", r
    for api in (two, one):
        r = api.create_raw({"game": "biberbande", "players": 2})
        assert_problem(r, 429, "rate_limited")
        assert r.header("retry-after") and r.header("X-RateLimit-Remaining") == "0", r.headers
    assert list(cluster.scan_iter(match="LIMITS*")), "the counters are on the cluster"
    assert one.get("/v1/games").status == 200  # only creation is limited
    cluster.close()


def test_cluster_and_sentinel_clients_get_the_budget(redis_cluster: servers.Cluster):
    """REDIS_BUDGET on the cluster client (built lazily; it has set_retry but
    no get_retry and retries by itself): its Retry becomes a BudgetRetry and
    no attempt starts once the request's deadline has passed (a 503).  The
    sentinel client (a redis.Redis) gets a BudgetRetry as in single mode."""
    from service.store.redis_client import LazyCluster, build
    from service.store.store import BudgetRetry, Store

    lazy = LazyCluster(redis_cluster.url)
    # Store is annotated with the single-node client; the service hands it any of them (redis_client.build)
    store = Store(cast(redis.Redis, lazy), ttl=60, settings=Settings.from_env({"REDIS_BUDGET": "0.2"}))
    assert lazy._client is None, "installing the budget must not connect"
    assert isinstance(lazy.real.retry, BudgetRetry)
    with store.budget():
        assert store.meta("nothing") is None
        time.sleep(0.25)
        with pytest.raises(redis.exceptions.TimeoutError, match="budget"):
            store.meta("nothing-either")
    assert store.meta("after") is None  # outside a request: no deadline
    sentinel = build(Settings.from_env({"REDIS_MODE": "sentinel", "REDIS_SENTINELS": "127.0.0.1:1"}))
    Store(sentinel, ttl=60, settings=Settings.from_env({}))
    assert isinstance(sentinel.get_retry(), BudgetRetry)


def test_limits_storage_for_every_mode():
    """The rate limits' storage follows REDIS_MODE: the store's connection
    pool (single), the store's cluster client, the sentinels."""
    import fakeredis

    from service.ops import limits
    from service.store.redis_client import LazyCluster

    single = fakeredis.FakeRedis()
    assert limits.storage(single, Settings.from_env({})) == ("redis://", {"connection_pool": single.connection_pool})
    lazy = LazyCluster(("redis://10.0.0.7:7000/0", "redis://10.0.0.8:7000/0"))
    uri, options = limits.storage(lazy, Settings.from_env({"REDIS_MODE": "cluster"}))
    assert (uri, options) == ("redis+cluster://10.0.0.7:7000,10.0.0.8:7000", {"client": lazy})
    uri, options = limits.storage(object(), Settings.from_env(
        {"REDIS_MODE": "sentinel", "REDIS_SENTINELS": "a:1,b:2", "REDIS_SENTINEL_MASTER": "m", "REDIS_TIMEOUT": "2"}))
    assert uri == "redis+sentinel://a:1,b:2/m"
    assert options["socket_timeout"] == 2 and options["sentinel_kwargs"]["socket_timeout"] == 2
    assert options["use_replicas"] is False  # a replica's counters lag


def test_sentinel_rate_limits_on_the_primary(tmp_path: Path):
    """Sentinel mode: the rate limits' counters are on the primary the
    sentinels name (``redis+sentinel://``), shared by two instances."""
    group = servers.SentinelGroup(tmp_path / "redis", replicas=0, sentinels=1)
    try:
        env = {"REDIS_MODE": "sentinel", "REDIS_SENTINELS": group.sentinels, "REDIS_SENTINEL_MASTER": group.master,
               "REDIS_WAIT_REPLICAS": "0", "RATE_LIMIT_ENABLED": "true", "RATE_LIMIT_CREATE": "2/minute"}
        one, two = settings_app(**env), settings_app(**env)
        assert one.create_raw({"game": "biberbande", "players": 2}).status == 201
        assert two.create_raw({"game": "biberbande", "players": 2}).status == 201
        assert_problem(one.create_raw({"game": "biberbande", "players": 2}), 429, "rate_limited")
        primary = redis.Redis(port=group.current_primary())
        assert primary.keys("LIMITS*"), "the counters are on the primary"
        primary.close()
    finally:
        group.stop()


def test_cluster_unreachable_at_start_is_503_then_recovers(tmp_path: Path):
    """The app starts with no cluster node reachable; requests are 503
    store_unavailable with Retry-After (never 500) until the cluster is up."""
    api = settings_app(REDIS_MODE="cluster", REDIS_URL=f"redis://127.0.0.1:{closed_port()}/0",
                       REDIS_TIMEOUT="0.3")
    for r in (api.create_raw({"game": "biberbande", "players": 2}), api.get("/readyz")):
        assert_problem(r, 503, "store_unavailable")
        assert r.header("retry-after"), r.headers


def test_cluster_wait_without_replicas_is_503_not_500(redis_cluster: servers.Cluster):
    """REDIS_WAIT_REPLICAS=1 on masters without replicas: the write cannot be
    confirmed, answered 503 with Retry-After and a detail saying so."""
    api = settings_app(REDIS_MODE="cluster", REDIS_URL=redis_cluster.url, REDIS_WAIT_REPLICAS="1",
                       REDIS_WAIT_TIMEOUT="50")
    r = api.create_raw({"game": "biberbande", "players": 2, "seed": 5})
    body = assert_problem(r, 503, "store_unavailable")
    assert "replica" in body["detail"] and r.header("retry-after"), r


def test_cluster_with_replicas_acknowledges_with_wait(tmp_path: Path):
    """3 masters with a replica each and REDIS_WAIT_REPLICAS=1 (the
    ConfigMap's setting): creates, moves and deletes are answered once the
    shard's replica has them, on every shard."""
    cluster = servers.Cluster(tmp_path, masters=3, replicas=1)
    try:
        api = settings_app(REDIS_MODE="cluster", REDIS_URL=cluster.url, REDIS_WAIT_REPLICAS="1")
        for seed in range(12):
            m = api.create(2, seed=seed)
            assert api.move(m.id, m.token(0), {"type": "draw"}, 0).status == 200
            r = api.move(m.id, m.token(0), {"type": "discard_drawn"}, 1, headers={"Idempotency-Key": "k"})
            assert r.status == 200, r
            assert api.delete_match(m.id, m.admin).status == 204
        for port in cluster.replicas:  # every replica got writes
            node = redis.Redis(port=port)
            assert node.info("replication")["role"] == "slave"
            assert node.info("replication")["slave_repl_offset"] > 0
            node.close()
    finally:
        cluster.stop()


def test_cluster_master_killed_is_503_never_500(tmp_path: Path):
    """A master of a cluster without replicas dies: its matches (and, with
    full coverage required, all of them) answer 503 with Retry-After, never
    500; once it is back, the service recovers without a restart."""
    cluster = servers.Cluster(tmp_path)
    try:
        api = settings_app(REDIS_MODE="cluster", REDIS_URL=cluster.url, REDIS_WAIT_REPLICAS="0",
                           REDIS_TIMEOUT="0.5")
        # 24 matches: with 6, all of them missed the killed master's slots in about 9 % of runs
        matches = [api.create(2, seed=s) for s in range(24)]
        cluster.kill(cluster.masters[1])
        statuses = set()
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline and 503 not in statuses:
            for m in matches:
                r = api.view(m.id, m.token(0))
                statuses.add(r.status)
                if r.status == 503:
                    assert_problem(r, 503, "store_unavailable")
                    assert r.header("retry-after")
        assert 503 in statuses and statuses <= {200, 503}, statuses
        cluster.restart(cluster.masters[1])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            r = api.create_raw({"game": "biberbande", "players": 2})
            assert r.status in (201, 503), r
            if r.status == 201:
                break
            time.sleep(0.2)
        assert r.status == 201, r
    finally:
        cluster.stop()


# --------------------------------------------------------------------------
# Sentinel: a failover under load loses no acknowledged move.
# --------------------------------------------------------------------------
class Player(threading.Thread):
    """Plays random legal moves on one match (as the admin) and remembers
    every acknowledged one (a version acknowledged twice means the first was
    lost); a 503 is retried with the same Idempotency-Key."""

    def __init__(self, base: str, match: dict[str, Any], stop: threading.Event, seed: int):
        super().__init__(daemon=True)
        self.base, self.match, self.stop = base, match, stop
        self.rng = random.Random(seed)
        self.acked: list[tuple[int, dict[str, Any]]] = []  # (version, move) of every 200
        self.statuses: list[int] = []
        self.slowest = 0.0  # seconds, of a move request
        self.bad: list[str] = []

    def run(self) -> None:
        session = requests.Session()
        mid, admin = self.match["match_id"], {"Authorization": f"Bearer {self.match['admin_token']}"}
        while not self.stop.is_set():
            view = session.get(f"{self.base}/v1/matches/{mid}", headers=admin, timeout=30)
            self.statuses.append(view.status_code)
            if view.status_code != 200:
                self._check(view)
                time.sleep(0.05)
                continue
            state = view.json()
            if state["status"] == "finished":
                return
            seat = state["to_act"][0]
            legal = session.get(f"{self.base}/v1/matches/{mid}/legal-moves", params={"seat": seat}, headers=admin,
                                timeout=30)
            self.statuses.append(legal.status_code)
            if legal.status_code != 200:
                self._check(legal)
                continue
            move = strip_label(self.rng.choice(legal.json()["moves"]))
            key = uuid.uuid4().hex
            while not self.stop.is_set():
                sent = time.monotonic()
                r = session.post(f"{self.base}/v1/matches/{mid}/moves", params={"seat": seat},
                                 headers={**admin, "Idempotency-Key": key},
                                 json={"move": move, "version": state["version"]}, timeout=30)
                self.slowest = max(self.slowest, time.monotonic() - sent)
                self.statuses.append(r.status_code)
                if r.status_code == 200:
                    self.acked.append((r.json()["version"], move))
                    break
                self._check(r)
                if r.status_code != 503:
                    break
                time.sleep(0.05)

    def _check(self, r: requests.Response) -> None:
        if r.status_code == 503:
            if not r.headers.get("Retry-After") or "store_unavailable" not in r.text:
                self.bad.append(f"503 without problem/Retry-After: {r.text[:200]}")
        elif r.status_code != 409:
            self.bad.append(f"{r.status_code}: {r.text[:300]}")


@pytest.mark.parametrize("replicas", [1, pytest.param(2, marks=pytest.mark.xfail(
    strict=False, reason="issue 27: a 404 during the failover was seen once in CI with two replicas (before the "
                         "store stopped believing a primary without its replicas about a missing match); expected "
                         "to pass, watched until it has passed in CI repeatedly"))])
def test_sentinel_failover_under_load_loses_no_acknowledged_move(tmp_path: Path, replicas: int):
    """Primary + ``replicas`` replicas + 3 sentinels, REDIS_MODE=sentinel with
    REDIS_WAIT_REPLICAS=1: while 4 clients play, a replica falls behind
    (SIGSTOP, 16 MB of filler in the replication stream) and the primary is
    SIGKILLed, then restarted (empty) as soon as the sentinels name a new one;
    their moves during the switch wait for the new primary (or, past their
    store budget, get 503 with Retry-After), never a 500 nor a 404; they play
    on after it, and every move answered 200 is in the record afterwards.
    With one replica the one that fell behind is promoted (without WAIT the
    moves acknowledged meanwhile are lost); with two, the recommended
    topology, the other one is, while the sentinel that led the failover
    still points the one behind at it (:class:`Sentinels`)."""
    group = servers.SentinelGroup(tmp_path / "redis", replicas=replicas)
    gunicorn = None
    try:
        env = {"REDIS_MODE": "sentinel", "REDIS_SENTINELS": group.sentinels, "REDIS_SENTINEL_MASTER": group.master,
               "REDIS_WAIT_REPLICAS": "1", "REDIS_WAIT_TIMEOUT": "500", "REDIS_TIMEOUT": "0.5"}
        gunicorn, base = start_gunicorn(tmp_path, None, workers=1, extra_env=env)
        api = requests_api(base)
        created = [api.create(4, game="thirteen-beavers", seed=s).created for s in range(4)]
        stop = threading.Event()
        players = [Player(base, c, stop, seed) for seed, c in enumerate(created)]
        for p in players:
            p.start()
        time.sleep(1.0)
        before = sum(len(p.acked) for p in players)
        old, replica = group.primary, group.replica_ports[0]
        # The replica falls behind: stopped, with 16 MB of filler in the
        # replication stream so the moves after it stay in the primary's
        # buffers.  Then the primary dies: without WAIT the moves acknowledged
        # meanwhile were on the primary only.
        group.pause(replica)
        filler = redis.Redis(port=old, socket_timeout=5)
        filler.set("filler", b"x" * (16 << 20))
        filler.close()
        time.sleep(0.6)
        group.kill(old)
        group.pause(replica, False)
        deadline = time.monotonic() + 20
        while group.agreed_primary() in (old, None) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert group.agreed_primary() not in (old, None), "no failover"
        # Back (empty) once every sentinel names the new primary: the empty
        # node answers as a primary until the sentinels turn it into a
        # replica.  The sentinel leading the failover still names it in
        # SENTINEL MASTERS until it has pointed every replica at the new one
        # (test_sentinel_client_takes_no_primary_from_a_sentinel_mid_failover).
        group.restart(old)
        settled = sum(len(p.acked) for p in players)
        deadline = time.monotonic() + 20
        while sum(len(p.acked) for p in players) < settled + 40 and time.monotonic() < deadline:
            time.sleep(0.1)
        stop.set()
        for p in players:
            p.join(timeout=40)
        after = sum(len(p.acked) for p in players)
        statuses = [s for p in players for s in p.statuses]
        assert not [b for p in players for b in p.bad]
        assert 500 not in statuses
        assert before > 0 and after >= settled + 40, (before, settled, after)
        # during the switch a move waits for the new primary within its budget, or is a 503 past it
        assert 503 in statuses or max(p.slowest for p in players) >= 0.5, "no client saw the switch"
        for p in players:
            rec = api.record(p.match["match_id"], p.match["admin_token"])
            assert rec.status == 200, rec
            logged = {e["version"]: e["move"] for e in rec.json["moves"]}
            lost = [(v, m) for v, m in p.acked if logged.get(v) != m]
            assert not lost, f"acknowledged moves missing after the failover: {lost}"
    finally:
        if gunicorn is not None:
            stop_process(gunicorn, timeout=20)
        group.stop()


def test_sentinel_client_takes_no_primary_from_a_sentinel_mid_failover(tmp_path: Path):
    """The sentinel leading a failover names the old primary in SENTINEL
    MASTERS (flag ``failover_in_progress``) until every replica follows the
    promoted one; the old primary restarted meanwhile answers again, empty.
    redis-py's own ``Sentinel`` then takes it from that sentinel; Lodge's
    :class:`~service.store.redis_client.Sentinels` never does.  One replica
    here cannot follow (a wrong ``masterauth``; never promoted: priority
    0), so the failover lasts its whole ``failover-timeout``."""
    from service.store.redis_client import Sentinels

    group = servers.SentinelGroup(tmp_path / "redis", replicas=2)
    try:
        old, stuck = group.primary, group.replica_ports[0]
        node = redis.Redis(port=stuck, socket_timeout=2)
        node.config_set("replica-priority", 0)
        node.config_set("masterauth", "not-the-password")  # applies from its next connection: the promoted one
        node.close()
        time.sleep(1.5)  # the sentinels read the priority (INFO every second once the primary is down)
        group.kill(old)
        deadline = time.monotonic() + 20
        while group.agreed_primary() in (old, None) and time.monotonic() < deadline:
            time.sleep(0.05)
        new = group.agreed_primary()
        assert new not in (old, stuck, None), "no failover"
        group.restart(old)
        plain_named: set[int] = set()
        lodge_named: set[int] = set()
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and old not in plain_named:
            for port in group.sentinel_ports:
                address = [("127.0.0.1", port)]
                for client, named in ((redis.Sentinel(address), plain_named), (Sentinels(address), lodge_named)):
                    try:
                        named.add(client.discover_master(group.master)[1])
                    except redis.sentinel.MasterNotFoundError:
                        pass
            time.sleep(0.05)
        assert old in plain_named, "the window did not open: no sentinel named the restarted primary"
        assert lodge_named == {new}, lodge_named
    finally:
        group.stop()


# --------------------------------------------------------------------------
# Two instances on one store.
# --------------------------------------------------------------------------
@pytest.fixture
def two_instances(redis_server: str, tmp_path: Path):
    """Two gunicorns (1 worker each) on database 3 of the real redis, sharing
    one PROMETHEUS_MULTIPROC_DIR."""
    url = redis_server.rsplit("/", 1)[0] + "/3"
    metrics = tmp_path / "metrics"
    procs = []
    try:
        bases = []
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            proc, base = start_gunicorn(tmp_path / name, url, workers=1,
                                        extra_env={"PROMETHEUS_MULTIPROC_DIR": str(metrics), "THREADS": "8"})
            procs.append(proc)
            bases.append(base)
        yield bases
    finally:
        for proc in procs:
            stop_process(proc, timeout=20)


def test_two_instances_race_idempotency_and_fresh_views(two_instances: list[str]):
    """Racing moves across instances: exactly one 200 per version; a retry
    with the same Idempotency-Key on the other instance is answered, not
    applied again; each instance's view is current after the other moved
    (its cached snapshot is never served)."""
    a, b = (requests_api(base) for base in two_instances)
    m = a.create(2, game="biberbande", seed=21, options={"rounds": 1})
    for version in range(12):
        view = b.view(m.id, m.admin).json
        assert view["version"] == version, view  # whichever instance applied the last move
        if view["status"] == "finished":
            break
        seat = view["to_act"][0]
        legal = b.legal(m.id, m.admin, seat=seat).json
        move = strip_label(legal["moves"][0])
        results: list[Any] = [None, None]

        def send(i: int, api: Api, move: dict[str, Any], version: int, seat: int, results: list[Any]) -> None:
            results[i] = api.move(m.id, m.admin, move, version, seat=seat,
                                  headers={"Idempotency-Key": f"race-{version}-{i}"})

        threads = [threading.Thread(target=send, args=(i, api, move, version, seat, results))
                   for i, api in enumerate((a, b))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(r.status for r in results) == [200, 409], results
        winner = 0 if results[0].status == 200 else 1
        retry = (b, a)[winner].move(m.id, m.admin, move, version, seat=seat,
                                    headers={"Idempotency-Key": f"race-{version}-{winner}"})
        assert retry.status == 200 and retry.body == results[winner].body, retry
        for api in (a, b):
            assert api.view(m.id, m.admin).json["version"] == version + 1
            assert api.events(m.id, m.admin, after=version).json["version"] == version + 1


def metric(base: str, name: str) -> float:
    total = 0.0
    for line in requests.get(base + "/metrics", timeout=10).text.splitlines():
        if line.startswith(name + "{") and 'endpoint="/healthz"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_shared_metrics_dir_keeps_the_other_instance_counters(redis_server: str, tmp_path: Path):
    """A second instance started on the same PROMETHEUS_MULTIPROC_DIR leaves
    the first one's metric files alone (its counter of 50 stays 50), and each
    instance reports its own requests."""
    url = redis_server.rsplit("/", 1)[0] + "/3"
    env = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"), "THREADS": "4"}
    procs = []
    try:
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        proc_a, a = start_gunicorn(tmp_path / "a", url, workers=1, extra_env=env)
        procs.append(proc_a)
        for _ in range(50):
            requests.get(a + "/healthz", timeout=10)
        before = metric(a, "lodge_http_requests_total")
        assert before >= 50
        proc_b, b = start_gunicorn(tmp_path / "b", url, workers=1, extra_env=env)
        procs.append(proc_b)
        assert metric(a, "lodge_http_requests_total") >= before
        assert metric(b, "lodge_http_requests_total") < before
    finally:
        for proc in procs:
            stop_process(proc, timeout=20)
