"""``make bench-cluster``: what a move costs Redis on one Redis and on a
3-primary Redis Cluster, with one and two Lodge instances, with and without
``WAIT`` and idempotency records, and the snapshot cache's hit rate under
round-robin against routing by match id.

Both stores have the recommended topology of docs/store-availability.md:
every primary has two replicas (one Redis: a primary and two replicas; the
cluster: 3 primaries and 6 replicas, ``cluster-node-timeout`` 1500 ms), no
persistence on either.  Both run at once, and each scenario plays its
moves in ``ROUNDS`` rounds, the two stores taking turns, so the machine's
load (shared, and drifting) weighs on both figures compared alike.  Each
scenario starts its gunicorns
(deploy/gunicorn.conf.py, 1 worker, 4 threads each, ``REDIS_MODE`` as the
store needs) and drives them with ``CLIENTS`` loopback clients playing
scripted random Biberbande matches (``bench.http_bench.LodgeClient``: one
POST per move, a new match when one ends).  With two instances a client
sends each move either to the next instance in turn (round-robin) or to the
instance its match id hashes to.

Redis CPU is each node's own account (``INFO cpu``: user + system time,
microseconds, not the 10 ms ticks of /proc), per move, for the primaries and
the replicas apart; with no load (timers; on a cluster the bus's gossip) it is
measured for ``IDLE_SECONDS`` and taken off ("less idle").  Beside it: moves
per server CPU-second (every gunicorn process, from /proc), the commands per
move with the microseconds the primaries spent in each (``INFO
commandstats``; the rest of their CPU is reading, parsing and answering,
replication and the bus), and the Redis reads a move needed besides its one
write script (HMGET of the snapshot, GET of the meta, which the read script
``keys.LOAD`` calls): a move whose instance had the match's current snapshot
cached needs none, so hit rate = 1 - HMGET calls / moves.

Then what a notification costs each store (``publish_cost``: ``PUBLISH``
against ``SPUBLISH``, with nobody subscribed), and Redis memory per match
(``memory_per_match``), for the sizing in docs/store-and-scaling.md.

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
from dataclasses import dataclass
from pathlib import Path

import redis
import requests

from bench import write_report
from bench.http_bench import LodgeClient, Measure, drive
from bench.servers import cpu_seconds
from devtools.servers import Cluster, SentinelGroup, start_gunicorn, stop_process
from service.ops.config import Settings

CLIENTS = 4
MOVES = 3000
WARMUP = 200
THREADS = 4
#: Replicas of every primary (docs/store-availability.md).
REPLICAS = 2
#: Rounds of MOVES / ROUNDS moves per scenario and store, the stores taking turns.
ROUNDS = 6
#: Seconds of Redis CPU measured with no load, per scenario.
IDLE_SECONDS = 3.0
#: Messages sent per publish command measured.
MESSAGES = 20_000
GAME, PLAYERS = "biberbande", 4


@dataclass(frozen=True)
class Store:
    """The Redis nodes of one store and how Lodge reaches them."""

    name: str
    mode: str
    url: str
    primaries: list[int]
    replicas: list[int]


@dataclass(frozen=True)
class Case:
    """One scenario: instances, routing, WAIT, idempotency records."""

    instances: int = 1
    by_match: bool = True
    wait: int = 0
    idempotency: bool = False


#: The scenarios run on each store.
CASES = (Case(), Case(wait=1), Case(wait=1, idempotency=True),
         Case(instances=2, by_match=False, wait=1), Case(instances=2, wait=1))


class RoutedClient(LodgeClient):
    """A LodgeClient over several instances: creates go round-robin, moves
    round-robin too or to the instance the match id hashes to."""

    def __init__(self, bases: list[str], session: requests.Session, seed: int, by_match: bool,
                 turns: itertools.count, idempotency: bool):
        self.bases, self.by_match, self.turns = bases, by_match, turns
        super().__init__(bases[0], session, GAME, PLAYERS, seed, idempotency=idempotency)

    def _create(self) -> tuple[str, dict[int, str], list[tuple[int, dict]]]:
        self.base = self.bases[next(self.turns) % len(self.bases)]
        return super()._create()

    def move(self) -> None:
        if self.by_match:
            self.base = self.bases[zlib.crc32(self.match.encode()) % len(self.bases)]
        else:
            self.base = self.bases[next(self.turns) % len(self.bases)]
        super().move()


def _info(port: int, section: str) -> dict:
    node = redis.Redis(port=port)
    try:
        return node.info(section)
    finally:
        node.close()


def redis_cpu(ports: list[int]) -> float:
    """User + system CPU seconds the Redis nodes on ``ports`` have used."""
    return sum(float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
               for info in (_info(port, "cpu") for port in ports))


def command_stats(ports: list[int]) -> dict[str, tuple[int, int]]:
    """Calls and microseconds per command, summed over the Redis nodes on ``ports``."""
    total: dict[str, tuple[int, int]] = {}
    for port in ports:
        for name, stats in _info(port, "commandstats").items():
            calls, usec = total.get(name, (0, 0))
            total[name] = (calls + int(stats["calls"]), usec + int(stats["usec"]))
    return total


def cpu_of(store: Store, seconds: float) -> dict[str, float]:
    """Redis CPU of the primaries and the replicas while ``seconds`` pass, in ms per second."""
    before = redis_cpu(store.primaries), redis_cpu(store.replicas)
    time.sleep(seconds)
    return {"primaries": (redis_cpu(store.primaries) - before[0]) * 1000 / seconds,
            "replicas": (redis_cpu(store.replicas) - before[1]) * 1000 / seconds}


class Run:
    """One scenario on one store: its gunicorns, and what its rounds measured."""

    def __init__(self, store: Store, case: Case, seeds: Callable[[], int]):
        self.store, self.case, self.seeds = store, case, seeds
        # rate limits off: this measures the store (the limits' counters share it)
        env = {"THREADS": str(THREADS), "LOG_LEVEL": "warning", "REDIS_WAIT_REPLICAS": str(case.wait),
               "RATE_LIMIT_ENABLED": "false", "REDIS_MODE": store.mode}
        self.servers, self.bases = [], []
        self.turns = itertools.count()
        for _ in range(case.instances):
            proc, base = start_gunicorn(Path(tempfile.mkdtemp(prefix="lodge-bench-")), store.url, 1, env)
            self.servers.append(proc)
            self.bases.append(base)
        self.measure: Measure | None = None
        self.server_cpu = 0.0
        self.used = {"primaries": 0.0, "replicas": 0.0}
        self.stats: dict[str, tuple[int, int]] = {}

    def _worker(self, session: requests.Session) -> Callable[[], None]:
        return RoutedClient(self.bases, session, self.seeds(), self.case.by_match, self.turns,
                            self.case.idempotency).move

    def warm_up(self) -> None:
        drive(self.servers[0], CLIENTS, WARMUP // CLIENTS, self._worker)
        self.idle = cpu_of(self.store, IDLE_SECONDS)

    def round(self, moves: int) -> None:
        """Play ``moves`` moves, adding what they cost to the totals."""
        store = self.store
        cpu_before = [cpu_seconds(p) for p in self.servers]
        redis_before = redis_cpu(store.primaries), redis_cpu(store.replicas)
        stats_before = command_stats(store.primaries)
        m = drive(self.servers[0], CLIENTS, moves // CLIENTS, self._worker)
        self.server_cpu += sum(cpu_seconds(p) for p in self.servers) - sum(cpu_before)
        self.used["primaries"] += redis_cpu(store.primaries) - redis_before[0]
        self.used["replicas"] += redis_cpu(store.replicas) - redis_before[1]
        for name, (calls, usec) in command_stats(store.primaries).items():
            was_calls, was_usec = stats_before.get(name, (0, 0))
            total_calls, total_usec = self.stats.get(name, (0, 0))
            self.stats[name] = (total_calls + calls - was_calls, total_usec + usec - was_usec)
        self.measure = m if self.measure is None else self.measure + m

    def stop(self) -> None:
        for proc in self.servers:
            stop_process(proc, timeout=20)

    def report(self) -> dict:
        m, case, used, idle = self.measure, self.case, self.used, self.idle
        assert m is not None
        hmget, get = self.stats.get("cmdstat_hmget", (0, 0))[0], self.stats.get("cmdstat_get", (0, 0))[0]
        per_move = {k.removeprefix("cmdstat_"): {"calls": round(c / m.requests, 3), "us": round(u / m.requests, 1)}
                    for k, (c, u) in sorted(self.stats.items(), key=lambda kv: -kv[1][1])
                    if c and u >= m.requests / 10}

        def ms_per_move(part: str, less_idle: bool = False) -> float:
            spent = used[part] * 1000 - (idle[part] * m.seconds if less_idle else 0)
            return round(spent / m.requests, 3)

        return {"store": self.store.name, "instances": case.instances,
                "routing": "by match id" if case.by_match else "round-robin",
                "wait_replicas": case.wait, "idempotency_keys": case.idempotency,
                "moves": m.requests, "moves_per_s": round(m.requests / m.seconds),
                "server_cpu_s": round(self.server_cpu, 2),
                "moves_per_server_cpu_s": round(m.requests / self.server_cpu),
                "redis_cpu_ms_per_move": round(ms_per_move("primaries") + ms_per_move("replicas"), 3),
                "primaries_cpu_ms_per_move": ms_per_move("primaries"),
                "replicas_cpu_ms_per_move": ms_per_move("replicas"),
                "redis_idle_cpu_ms_per_s": {part: round(v, 2) for part, v in idle.items()},
                "redis_cpu_ms_per_move_less_idle": round(ms_per_move("primaries", True)
                                                         + ms_per_move("replicas", True), 3),
                "primaries_cpu_ms_per_move_less_idle": ms_per_move("primaries", True),
                "replicas_cpu_ms_per_move_less_idle": ms_per_move("replicas", True),
                "primary_commands_per_move": per_move,
                "extra_reads_per_move": round((hmget + get) / m.requests, 3),
                "cache_hit_rate": round(1 - hmget / m.requests, 3),
                "p50_ms": m.summary()["p50_ms"], "p99_ms": m.summary()["p99_ms"]}


def scenario(stores: tuple[Store, ...], case: Case, seeds: Callable[[], int]) -> list[dict]:
    """``case`` on every store at once, in ``ROUNDS`` rounds taking turns."""
    runs: list[Run] = []
    try:
        for store in stores:
            runs.append(Run(store, case, seeds))
        for run in runs:
            run.warm_up()
        for _ in range(ROUNDS):
            for run in runs:
                run.round(MOVES // ROUNDS)
    finally:
        for run in runs:
            run.stop()
    return [run.report() for run in runs]


def publish_cost(store: Store, command: str, messages: int = MESSAGES) -> dict:
    """Redis CPU per message of ``command`` (PUBLISH or SPUBLISH) on a
    channel nobody subscribes to, sent to the channel's primary in pipelines
    of 100, for the primaries and the replicas apart, less idle."""
    channel = "lodge:{bench}:changed"
    slot_owner = store.primaries[0]
    if store.mode == "cluster":
        cluster = redis.RedisCluster(host="127.0.0.1", port=store.primaries[0])
        slot_owner = cluster.get_node_from_key(channel).port
        cluster.close()
    node = redis.Redis(port=slot_owner)
    idle = cpu_of(store, IDLE_SECONDS)
    before, started = (redis_cpu(store.primaries), redis_cpu(store.replicas)), time.monotonic()
    for _ in range(messages // 100):
        pipe = node.pipeline(transaction=False)
        for n in range(100):
            pipe.execute_command(command, channel, n)
        pipe.execute()
    seconds = time.monotonic() - started
    node.close()
    spent = {"primaries": redis_cpu(store.primaries) - before[0], "replicas": redis_cpu(store.replicas) - before[1]}
    return {"store": store.name, "command": command, "messages": messages,
            **{f"{part}_us_per_message": round((spent[part] - idle[part] * seconds / 1000) * 1e6 / messages, 2)
               for part in spent}}


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
                    "replicas_per_primary": REPLICAS,
                    "gunicorn": f"1 worker, {THREADS} threads per instance", "scenarios": [], "publish": []}
    work = Path(tempfile.mkdtemp(prefix="lodge-bench-"))
    groups: list[SentinelGroup | Cluster] = []
    try:
        single = SentinelGroup(work / "single", replicas=REPLICAS, sentinels=0)
        groups.append(single)
        cluster = Cluster(work / "cluster", replicas=REPLICAS)
        groups.append(cluster)
        url = f"redis://127.0.0.1:{single.primary}/0"
        stores = (Store("redis", "single", url, [single.primary], single.replica_ports),
                  Store("cluster", "cluster", cluster.seeds, cluster.masters, cluster.replicas))
        for case in CASES:
            for row in scenario(stores, case, seeds):
                report["scenarios"].append(row)
                print(json.dumps(row), flush=True)
        for command in ("PUBLISH", "SPUBLISH"):
            for store in stores:
                report["publish"].append(publish_cost(store, command))
                print(json.dumps(report["publish"][-1]), flush=True)
        report["memory"] = [memory_per_match(url), memory_per_match(url, idempotency=True)]
        print(json.dumps(report["memory"]), flush=True)
    finally:
        for group in groups:
            group.stop()
    write_report(report, "cluster.json")


if __name__ == "__main__":
    main()
