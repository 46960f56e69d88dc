"""Store availability on real servers (issue 27; api.md "Storage" 1.2):
cluster seeds, a failover that costs its shard seconds and the other shards
nothing, honest answers when nothing was sent.  See docs/store-availability.md.
"""
from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from devtools import servers
from engine import REGISTRY
from service.store.keys import Keys
from tests.conftest import requests_api, start_gunicorn
from tests.http_helpers import Api, Match, assert_problem
from tests.live.test_store_modes import settings_app
from tests.playout import play_out


@pytest.fixture(autouse=True)
def _no_rate_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hundreds of requests a second from one client: the store is measured, not the limits."""
    monkeypatch.setenv("RATE_LIMIT_ENABLED", "false")


def shards(cluster: servers.Cluster, match_ids: list[str]) -> dict[int, list[str]]:
    """The matches on each primary, by its port."""
    client = redis.RedisCluster.from_url(cluster.url)
    try:
        found: dict[int, list[str]] = {port: [] for port in cluster.masters}
        for mid in match_ids:
            found[int(client.get_node_from_key(Keys(mid).snap).port)].append(mid)
        return found
    finally:
        client.close()


class Games:
    """4-seat Thirteen Beavers matches (325 moves) played one move at a time
    along a seeded playout."""

    def __init__(self, api: Api):
        engine = REGISTRY.get("thirteen-beavers")
        assert engine is not None
        self.api = api
        self.moves = play_out(engine, 4, 21, {}).moves
        self.version: dict[str, int] = {}
        self.matches: dict[str, Match] = {}

    def create(self) -> Match:
        m = self.api.create(4, game="thirteen-beavers", seed=21)
        self.matches[m.id], self.version[m.id] = m, 0
        return m

    def step(self, match_id: str) -> Any:
        """Play the match's next move (None once finished); a 503 is retried
        with the same Idempotency-Key."""
        m, v = self.matches[match_id], self.version[match_id]
        if v == len(self.moves):  # finished
            return None
        seat, move = self.moves[v]
        r = self.api.move(m.id, m.token(seat), move, v, headers={"Idempotency-Key": f"{m.id}-{v}"})
        if r.status == 200:
            self.version[match_id] = v + 1
        return r


def test_cluster_failover_costs_its_shard_seconds_others_nothing_and_seeds_start_without_it(tmp_path: Path):
    """3 primaries with 2 replicas each, ``REDIS_WAIT_REPLICAS=1``,
    ``cluster-require-full-coverage no`` (docs/store-availability.md): the
    node named first in ``REDIS_URL`` (a primary) is SIGKILLed while moves
    are played on every shard.  No request anywhere gets a 503: the other
    shards keep answering at once, the dead shard's requests wait within
    their store budget until a replica has taken over, and its first
    acknowledged write comes within 5 s.  Then a fresh instance started with
    the seeds, the first one dead, serves every shard; started with only the
    dead node it cannot (503)."""
    cluster = servers.Cluster(tmp_path, masters=3, replicas=2)
    try:
        env = {"REDIS_MODE": "cluster", "REDIS_URL": cluster.seeds, "REDIS_WAIT_REPLICAS": "1",
               "REDIS_TIMEOUT": "0.5"}
        games = Games(settings_app(**env))
        by_shard = shards(cluster, [games.create().id for _ in range(12)])
        assert min(len(ids) for ids in by_shard.values()) >= 1, by_shard
        dead = cluster.masters[0]
        assert cluster.url.endswith(f":{dead}/0")
        for ids in by_shard.values():
            for mid in ids:
                assert games.step(mid).status == 200
        cluster.kill(dead)
        killed = time.monotonic()
        first_write: float | None = None
        statuses: dict[str, list[int]] = {"dead": [], "others": []}
        while time.monotonic() < killed + 6:
            for port, ids in by_shard.items():
                for mid in ids:
                    r = games.step(mid)
                    if r is None:
                        continue
                    statuses["dead" if port == dead else "others"].append(r.status)
                    if port == dead and r.status == 200 and first_write is None:
                        first_write = time.monotonic() - killed
        assert set(statuses["others"]) == {200}, statuses
        assert set(statuses["dead"]) == {200}, statuses
        assert first_write is not None and first_write <= 5, first_write

        fresh = Games(settings_app(**env))
        for _ in range(9):
            m = fresh.create()
            assert fresh.step(m.id).status == 200
        assert fresh.api.get("/readyz").status == 200
        lone = settings_app(**{**env, "REDIS_URL": cluster.url})
        assert_problem(lone.get("/readyz"), 503, "store_unavailable")
    finally:
        cluster.stop()


def test_a_refused_connection_says_nothing_was_applied_and_nothing_was(tmp_path: Path):
    """A move against a Redis that is gone (the connection refused: nothing
    sent) is 503 saying nothing was changed, never "may have been applied";
    the same match's move while the Redis is frozen (the script sent, no
    answer) says it may have been (tests/service/test_store_faults.py covers that
    with the retry that settles it).  After a restart on the same port (AOF)
    the refused move is indeed not in the log and plays normally."""
    proc, url = servers.start_redis(tmp_path, persistence=servers.AOF_ALWAYS)
    try:
        games = Games(settings_app(REDIS_URL=url, REDIS_TIMEOUT="0.5", REDIS_BUDGET="1"))
        m = games.create()
        assert games.step(m.id).status == 200
        servers.stop_process(proc)
        body = assert_problem(games.step(m.id), 503, "store_unavailable")
        assert "nothing was changed" in body["detail"] and "may have been applied" not in body["detail"], body
        proc, _ = servers.start_redis(tmp_path, port=int(url.rsplit(":", 1)[1].split("/")[0]),
                                      persistence=servers.AOF_ALWAYS)
        assert redis.Redis.from_url(url).llen(Keys(m.id).moves) == 1
        assert games.step(m.id).status == 200
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            body = assert_problem(games.step(m.id), 503, "store_unavailable")
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        assert "may have been applied" in body["detail"], body
    finally:
        servers.stop_process(proc)


def test_a_dead_cluster_shard_without_replicas_says_nothing_was_applied(tmp_path: Path):
    """Cluster mode, a primary without replica killed: a move on its shard
    retries within the budget (the slot map refreshed through the other
    nodes), then answers 503 saying nothing was changed; the other shards
    play on (``cluster-require-full-coverage no``)."""
    cluster = servers.Cluster(tmp_path, masters=3)
    try:
        games = Games(settings_app(REDIS_MODE="cluster", REDIS_URL=cluster.seeds, REDIS_WAIT_REPLICAS="0",
                                   REDIS_TIMEOUT="0.5", REDIS_BUDGET="1"))
        by_shard = shards(cluster, [games.create().id for _ in range(12)])
        dead = cluster.masters[1]
        cluster.kill(dead)
        for port, ids in by_shard.items():
            for mid in ids:
                r = games.step(mid)
                if port != dead:
                    assert r.status == 200, r
                    continue
                body = assert_problem(r, 503, "store_unavailable")
                assert r.header("retry-after")
                assert "nothing was changed" in body["detail"] and "may have" not in body["detail"], body
    finally:
        cluster.stop()


def test_an_outage_and_a_sigterm_read_as_one_line_each_in_the_log(tmp_path: Path):
    """Real gunicorn, 2 workers, their clock sweepers looking 5 times a
    second: Redis stopped for 3 s (requests meanwhile get 503s) logs one
    warning per worker when it goes and one when it is back, with the
    outage's length, and no traceback; a graceful SIGTERM then logs nothing
    at error level (no ``StreamServer failed with [Errno 22]``)."""
    proc, url = servers.start_redis(tmp_path, persistence=servers.AOF_ALWAYS)
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    gunicorn, base = start_gunicorn(tmp_path, url, workers=2)
    try:
        api = requests_api(base)
        m = api.create(2)
        servers.stop_process(proc)
        for _ in range(10):
            assert_problem(api.view(m.id, m.admin), 503, "store_unavailable")
        time.sleep(3)
        proc, _ = servers.start_redis(tmp_path, port=port, persistence=servers.AOF_ALWAYS)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and api.view(m.id, m.admin).status != 200:
            time.sleep(0.1)
        time.sleep(1)  # every sweeper has looked again
        log = (tmp_path / "gunicorn.log").read_text()
        gone = [line for line in log.splitlines() if "store unavailable" in line]
        back = re.findall(r"\[(\d+)\] \[WARNING\] store available again after (\d+\.\d) s", log)
        assert len(gone) == 2 and all("[WARNING]" in line for line in gone), log
        assert len({pid for pid, _ in back}) == 2 and len(back) == 2, log
        assert all(2.5 <= float(seconds) <= 15 for _, seconds in back), back
        assert "Traceback" not in log and "[ERROR]" not in log, log
        os.kill(gunicorn.pid, signal.SIGTERM)
        gunicorn.wait(timeout=30)
        log = (tmp_path / "gunicorn.log").read_text()
        assert "Worker exiting" in log
        assert "Traceback" not in log and "ERROR" not in log and "failed with" not in log, log
    finally:
        servers.stop_process(gunicorn, timeout=20)
        servers.stop_process(proc)


def test_sentinel_failover_costs_seconds_of_waiting_not_503s(tmp_path: Path):
    """A primary, two replicas and three sentinels (down after 1 s),
    ``REDIS_WAIT_REPLICAS=1``: the primary is SIGKILLed while moves are
    played; the requests during the failover wait for the promoted replica
    within their store budget (the sentinels asked again on each try)
    instead of answering 503, the first acknowledged write comes within
    5 s, and every acknowledged move is in the record."""
    group = servers.SentinelGroup(tmp_path)
    try:
        games = Games(settings_app(REDIS_MODE="sentinel", REDIS_SENTINELS=group.sentinels,
                                   REDIS_SENTINEL_MASTER=group.master, REDIS_WAIT_REPLICAS="1", REDIS_TIMEOUT="0.5"))
        ids = [games.create().id for _ in range(3)]
        for mid in ids:
            assert games.step(mid).status == 200
        old = group.primary
        group.kill(old)
        killed = time.monotonic()
        statuses, first_write = [], None
        while time.monotonic() < killed + 6:
            for mid in ids:
                r = games.step(mid)
                if r is None:
                    continue
                statuses.append(r.status)
                if r.status == 200 and first_write is None:
                    first_write = time.monotonic() - killed
        assert set(statuses) == {200}, statuses
        assert group.current_primary() != old
        assert first_write is not None and first_write <= 5, first_write
        for mid in ids:
            record = games.api.record(mid, games.matches[mid].admin)
            assert record.status == 200 and len(record.json["moves"]) == games.version[mid], record
    finally:
        group.stop()


def test_seeds_parse():
    """A cluster-mode REDIS_URL: comma-separated node URLs (spaces allowed);
    something that is not a node URL is refused at start with the setting's name."""
    from service.store.redis_client import seeds

    assert seeds("redis://a:7000/0, redis://b:7001/0,") == ("redis://a:7000/0", "redis://b:7001/0")
    with pytest.raises(ValueError, match="REDIS_URL"):
        seeds("redis://a:7000/0,unix:///tmp/redis.sock")
