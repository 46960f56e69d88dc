"""``make bench-cluster``: apply-move throughput on one Redis and on a
3-master Redis Cluster, with one and two Lodge instances, and the snapshot
cache's hit rate under round-robin against routing by match id.

Each scenario starts its gunicorns (deploy/gunicorn.conf.py, 1 worker, 4
threads each, ``REDIS_MODE`` as the store needs) and drives them with
``CLIENTS`` loopback clients playing scripted random Biberbande matches
(``bench.http_bench.LodgeClient``: one POST per move, a new match when one
ends).  With two instances a client sends each move either to the next
instance in turn (round-robin) or to the instance its match id hashes to.

Figures per scenario: moves per server CPU-second (user + system time of
every gunicorn process from /proc; Redis's own CPU apart), Redis CPU per
move, Redis's CPU with no load (timers; on a cluster the bus's gossip) and
the CPU per move less it, the commands per move with the microseconds Redis
spent in each (``INFO commandstats``: the rest of Redis' CPU is reading,
parsing and answering), and the Redis reads a move needed besides its one write script, from
``INFO commandstats`` summed over every Redis node (HMGET of the snapshot,
GET of the meta, which the read script ``keys.LOAD`` calls): a move whose instance had the match's current snapshot
cached needs none, so hit rate = 1 - HMGET calls / moves.  Then Redis
memory per match (``memory_per_match``), for the sizing in the README.

Prints a JSON report and writes .bench/cluster.json.  Not part of the tests.
"""
from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import redis
import requests

from bench import write_report
from bench.http_bench import LodgeClient, drive
from bench.servers import cpu_seconds
from devtools.servers import Cluster, start_gunicorn, start_redis, stop_process
from service.ops.config import Settings

CLIENTS = 4
MOVES = 3000
WARMUP = 200
THREADS = 4
#: Seconds of Redis CPU measured with no load, per scenario.
IDLE_SECONDS = 3.0
GAME, PLAYERS = "biberbande", 4


class RoutedClient(LodgeClient):
    """A LodgeClient over several instances: creates go round-robin, moves
    round-robin too or to the instance the match id hashes to."""

    def __init__(self, bases: list[str], session: requests.Session, seed: int, by_match: bool,
                 turns: itertools.count):
        self.bases, self.by_match, self.turns = bases, by_match, turns
        super().__init__(bases[0], session, GAME, PLAYERS, seed)

    def _create(self) -> tuple[str, dict[int, str], list[tuple[int, dict]]]:
        self.base = self.bases[next(self.turns) % len(self.bases)]
        return super()._create()

    def move(self) -> None:
        if self.by_match:
            self.base = self.bases[zlib.crc32(self.match.encode()) % len(self.bases)]
        else:
            self.base = self.bases[next(self.turns) % len(self.bases)]
        super().move()


def command_stats(ports: list[int]) -> dict[str, tuple[int, int]]:
    """Calls and microseconds per command, summed over the Redis nodes on ``ports``."""
    total: dict[str, tuple[int, int]] = {}
    for port in ports:
        node = redis.Redis(port=port)
        for name, stats in node.info("commandstats").items():
            calls, usec = total.get(name, (0, 0))
            total[name] = (calls + int(stats["calls"]), usec + int(stats["usec"]))
        node.close()
    return total


def idle_cpu_ms_per_s(redis_procs: list, seconds: float = IDLE_SECONDS) -> float:
    """Redis CPU with no load (timers, the cluster bus), in ms per second."""
    before = sum(cpu_seconds(p) for p in redis_procs)
    time.sleep(seconds)
    return (sum(cpu_seconds(p) for p in redis_procs) - before) * 1000 / seconds


def scenario(store: str, url: str, redis_procs: list, ports: list[int], instances: int, by_match: bool,
             seeds: Callable[[], int]) -> dict:
    # rate limits off: this measures the store (the limits' counters share it)
    env = {"THREADS": str(THREADS), "LOG_LEVEL": "warning", "REDIS_WAIT_REPLICAS": "0", "RATE_LIMIT_ENABLED": "false",
           "REDIS_MODE": "cluster" if store == "cluster" else "single"}
    servers, bases = [], []
    try:
        for _ in range(instances):
            proc, base = start_gunicorn(Path(tempfile.mkdtemp(prefix="lodge-bench-")), url, 1, env)
            servers.append(proc)
            bases.append(base)
        turns = itertools.count()

        def make_worker(session: requests.Session):
            return RoutedClient(bases, session, seeds(), by_match, turns).move

        drive(servers[0], CLIENTS, WARMUP // CLIENTS, make_worker)
        idle = idle_cpu_ms_per_s(redis_procs)
        cpu_before = [cpu_seconds(p) for p in servers]
        redis_before = sum(cpu_seconds(p) for p in redis_procs)
        stats_before = command_stats(ports)
        m = drive(servers[0], CLIENTS, MOVES // CLIENTS, make_worker)
        cpu = sum(cpu_seconds(p) for p in servers) - sum(cpu_before)
        redis_cpu = sum(cpu_seconds(p) for p in redis_procs) - redis_before
        stats = command_stats(ports)
        delta = {k: (calls - stats_before.get(k, (0, 0))[0], usec - stats_before.get(k, (0, 0))[1])
                 for k, (calls, usec) in stats.items()}
        hmget, get = delta.get("cmdstat_hmget", (0, 0))[0], delta.get("cmdstat_get", (0, 0))[0]
        per_move = {k.removeprefix("cmdstat_"): {"calls": round(c / m.requests, 3), "us": round(u / m.requests, 1)}
                    for k, (c, u) in sorted(delta.items(), key=lambda kv: -kv[1][1]) if c}
        return {"store": store, "instances": instances,
                "routing": "by match id" if by_match else "round-robin",
                "moves": m.requests, "moves_per_s": round(m.requests / m.seconds),
                "server_cpu_s": round(cpu, 2), "moves_per_server_cpu_s": round(m.requests / cpu),
                "redis_cpu_ms_per_move": round(redis_cpu * 1000 / m.requests, 3),
                "redis_idle_cpu_ms_per_s": round(idle, 2),
                "redis_cpu_ms_per_move_less_idle": round((redis_cpu * 1000 - idle * m.seconds) / m.requests, 3),
                "redis_commands_per_move": per_move,
                "extra_reads_per_move": round((hmget + get) / m.requests, 3),
                "cache_hit_rate": round(1 - hmget / m.requests, 3),
                "p50_ms": m.summary()["p50_ms"], "p99_ms": m.summary()["p99_ms"]}
    finally:
        for proc in servers:
            stop_process(proc, timeout=20)


def memory_per_match(url: str, matches: int = 200, moves: int = 30, idempotency: bool = False) -> dict:
    """Redis ``used_memory`` per match after ``moves`` moves of a 4-player
    Biberbande match (in-process app on the plain Redis), with or without an
    Idempotency-Key on every move (each keeps its response for MATCH_TTL)."""
    import random

    from service.app import create_app

    client = redis.Redis.from_url(url)
    client.flushall()
    before = client.info("memory")["used_memory"]
    app = create_app(redis_client=client, settings=Settings.from_env({"REDIS_URL": url, "RATE_LIMIT_ENABLED": "false"}))
    http = app.test_client()
    rng = random.Random(7)
    for k in range(matches):
        created = http.post("/v1/matches", json={"game": GAME, "players": PLAYERS, "seed": k}).get_json()
        admin = {"Authorization": f"Bearer {created['admin_token']}"}
        mid = created["match_id"]
        for n in range(moves):
            view = http.get(f"/v1/matches/{mid}", headers=admin).get_json()
            if view["status"] == "finished":
                break
            seat = view["to_act"][0]
            legal = http.get(f"/v1/matches/{mid}/legal-moves?seat={seat}", headers=admin).get_json()
            headers = {**admin, "Idempotency-Key": f"k{n}"} if idempotency else admin
            http.post(f"/v1/matches/{mid}/moves?seat={seat}", headers=headers,
                      json={"move": rng.choice(legal["moves"]), "version": view["version"]})
    used = client.info("memory")["used_memory"] - before
    client.flushall()
    client.close()
    return {"matches": matches, "moves_each": moves, "idempotency_keys": idempotency,
            "bytes_per_match": round(used / matches)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args()
    seed_iter = iter(range(50_000, 50_000_000, 100_000))

    def seeds() -> int:
        return next(seed_iter)

    report: dict = {"clients": CLIENTS, "moves": MOVES, "game": GAME, "players": PLAYERS,
                    "gunicorn": f"1 worker, {THREADS} threads per instance", "scenarios": []}
    work = Path(tempfile.mkdtemp(prefix="lodge-bench-"))
    single, url = start_redis(work)
    try:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        for instances, by_match in ((1, True), (2, False), (2, True)):
            report["scenarios"].append(scenario("redis", url, [single], [port], instances, by_match, seeds))
            print(json.dumps(report["scenarios"][-1]), flush=True)
        report["memory"] = [memory_per_match(url), memory_per_match(url, idempotency=True)]
        print(json.dumps(report["memory"]), flush=True)
    finally:
        stop_process(single)
    cluster = Cluster(work / "cluster")
    try:
        procs = list(cluster.procs.values())
        for instances, by_match in ((1, True), (2, False), (2, True)):
            report["scenarios"].append(scenario("cluster", cluster.url, procs, cluster.masters, instances,
                                                by_match, seeds))
            print(json.dumps(report["scenarios"][-1]), flush=True)
    finally:
        cluster.stop()
    write_report(report, "cluster.json")


if __name__ == "__main__":
    main()
