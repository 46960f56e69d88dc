"""``make bench-faults``: a Redis primary SIGKILLed under a load of matches,
on Sentinel and on a Redis Cluster, in the recommended topology
(docs/store-availability.md): two replicas per primary,
``REDIS_WAIT_REPLICAS=1``, ``down-after-milliseconds`` 1000 (Sentinel),
``cluster-node-timeout`` 1500 and ``cluster-require-full-coverage no``
(cluster).

Each scenario starts the Redis servers (``devtools.servers``) and one
gunicorn (deploy/gunicorn.conf.py, ``WORKERS`` workers), and ``CLIENTS``
client threads that play scripted random matches (``bench.http_bench.scripted_moves``),
one POST per move with an ``Idempotency-Key``; a 503 is retried with the
same key (as the contract tells a client to) until it is answered.  After
``BEFORE`` seconds a primary is SIGKILLed (the cluster's second: not the
first seed), the load goes on for ``AFTER`` seconds, then
every match's record is read and compared with what was acknowledged.

Figures per scenario: moves acknowledged; lost (acknowledged, not in the
record); duplicated (a record entry that is not the scripted move of its
version: a move applied twice); the responses by status and problem code;
the time from the kill to the first acknowledged write on the killed
primary's shard, and (cluster) the 5xx and the longest wait on the other
shards meanwhile.  Prints a JSON report and writes .bench/faults.json.
Not part of the tests.
"""
from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import redis
import requests

from bench import write_report
from bench.http_bench import scripted_moves
from devtools.servers import Cluster, SentinelGroup, start_gunicorn, stop_process
from service.store.keys import Keys

CLIENTS = 8
WORKERS = 2
BEFORE, AFTER = 4.0, 12.0
GAME, PLAYERS = "biberbande", 2


class Player(threading.Thread):
    """Plays scripted matches, retrying a 503 with the same key; notes every
    answer and every acknowledged move with its time and shard."""

    def __init__(self, base: str, seed: int, stop: threading.Event, shard_of: Any):
        super().__init__(daemon=True)
        self.base, self.seed, self.stop, self.shard_of = base, seed, stop, shard_of
        self.session = requests.Session()
        self.answers: Counter[str] = Counter()
        self.acked: list[tuple[str, int]] = []  # match, version
        self.waits: list[tuple[float, float, Any]] = []  # sent, seconds until acknowledged, shard
        self.matches: dict[str, tuple[str, list[tuple[int, dict]]]] = {}  # id -> admin token, script

    def _post(self, path: str, body: dict, headers: dict[str, str]) -> requests.Response | None:
        """POST until it is answered other than 503 (None: stopped first)."""
        while not self.stop.is_set():
            try:
                r = self.session.post(self.base + path, json=body, headers=headers, timeout=30)
            except requests.RequestException:
                self.answers["no answer"] += 1
                time.sleep(0.05)
                continue
            code = r.json().get("code", "") if r.status_code >= 400 else ""
            self.answers[f"{r.status_code} {code}".strip()] += 1
            if r.status_code != 503:
                return r
            time.sleep(0.05)
        return None

    def run(self) -> None:
        while not self.stop.is_set():
            self.seed += 1
            script = scripted_moves(GAME, PLAYERS, self.seed)
            r = self._post("/v1/matches", {"game": GAME, "players": PLAYERS, "seed": self.seed}, {})
            if r is None or r.status_code != 201:
                continue
            created = r.json()
            mid, tokens = created["match_id"], {s["seat"]: s["token"] for s in created["seats"]}
            self.matches[mid] = (created["admin_token"], script)
            shard = self.shard_of(mid)
            for version, (seat, move) in enumerate(script):
                started = time.monotonic()
                r = self._post(f"/v1/matches/{mid}/moves", {"move": move, "version": version},
                               {"Authorization": f"Bearer {tokens[seat]}", "Idempotency-Key": f"{mid}-{version}"})
                if r is None or r.status_code != 200:
                    break
                self.acked.append((mid, version))
                self.waits.append((started, time.monotonic() - started, shard))


def check(base: str, players: list[Player]) -> dict[str, int]:
    """Compare every match's record with what was acknowledged."""
    session = requests.Session()
    acked = {(mid, v) for p in players for mid, v in p.acked}
    lost = duplicated = unreadable = 0
    for p in players:
        for mid, (admin, script) in p.matches.items():
            r = session.get(f"{base}/v1/matches/{mid}/record", headers={"Authorization": f"Bearer {admin}"},
                            timeout=30)
            if r.status_code != 200:
                unreadable += 1
                continue
            # an entry's version is the one its move produced: the move sent with version v is entry v + 1
            logged = {e["version"] - 1: e["move"] for e in r.json()["moves"]}
            expected = [_unlabelled(move) for _, move in script]
            lost += sum(1 for (m, v) in acked if m == mid and logged.get(v) != expected[v])
            duplicated += sum(1 for v, move in logged.items() if v >= len(script) or move != expected[v])
    return {"lost": lost, "duplicated": duplicated, "records_unreadable": unreadable}


def _unlabelled(move: dict) -> dict:
    """A move as the record keeps it (a legal move's ``label`` is for people)."""
    return {k: v for k, v in move.items() if k != "label"}


def run_load(base: str, shard_of: Any, kill: Any, victim: Any) -> dict[str, Any]:
    stop = threading.Event()
    players = [Player(base, 1000 * (i + 1), stop, shard_of) for i in range(CLIENTS)]
    for p in players:
        p.start()
    time.sleep(BEFORE)
    kill()
    killed = time.monotonic()
    time.sleep(AFTER)
    stop.set()
    for p in players:
        p.join(timeout=60)
    answers: Counter[str] = sum((p.answers for p in players), Counter())
    # a write sent after the kill: one answered just after it may have been done before it
    on_victim = sorted(start + wait for p in players for start, wait, shard in p.waits
                       if shard == victim and start > killed)
    others = [(start, wait) for p in players for start, wait, shard in p.waits if shard != victim]
    report: dict[str, Any] = {
        "acknowledged": sum(len(p.acked) for p in players),
        "answers": dict(sorted(answers.items())),
        "5xx": {k: n for k, n in answers.items() if k.startswith("5") or k == "no answer"},
        "kill_to_first_write_on_its_shard_s": round(on_victim[0] - killed, 2) if on_victim else None,
    }
    if others:
        during = [wait for start, wait in others if start + wait > killed and start < killed + 10]
        report["other_shards_longest_wait_s"] = round(max(during, default=0.0), 2)
    report.update(check(base, players))
    return report


def sentinel(workdir: Path) -> dict[str, Any]:
    group = SentinelGroup(workdir / "redis")
    gunicorn = None
    try:
        env = {"REDIS_MODE": "sentinel", "REDIS_SENTINELS": group.sentinels, "REDIS_SENTINEL_MASTER": group.master,
               "REDIS_WAIT_REPLICAS": "1", "RATE_LIMIT_ENABLED": "false"}
        gunicorn, base = start_gunicorn(workdir, None, workers=WORKERS, extra_env=env)
        return run_load(base, lambda mid: "primary", lambda: group.kill(group.primary), "primary")
    finally:
        if gunicorn is not None:
            stop_process(gunicorn, timeout=20)
        group.stop()


def cluster(workdir: Path) -> dict[str, Any]:
    nodes = Cluster(workdir / "redis", masters=3, replicas=2)
    gunicorn = None
    client = redis.RedisCluster.from_url(nodes.url)
    try:
        env = {"REDIS_MODE": "cluster", "REDIS_WAIT_REPLICAS": "1",
               "RATE_LIMIT_ENABLED": "false"}
        gunicorn, base = start_gunicorn(workdir, nodes.seeds, workers=WORKERS, extra_env=env)
        ports: dict[str, int] = {}

        def shard_of(mid: str) -> int:
            """The primary's port of the match's slot when the load started (the slot map cached then)."""
            if mid not in ports:
                ports[mid] = int(client.get_node_from_key(Keys(mid).snap).port)
            return ports[mid]

        victim = nodes.masters[1]
        return run_load(base, shard_of, lambda: nodes.kill(victim), victim)
    finally:
        client.close()
        if gunicorn is not None:
            stop_process(gunicorn, timeout=20)
        nodes.stop()


SCENARIOS = {"sentinel": sentinel, "cluster": cluster}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*", help=f"any of {', '.join(SCENARIOS)} (default: all)")
    args = parser.parse_args()
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    report = {}
    for name in args.scenarios or SCENARIOS:
        with tempfile.TemporaryDirectory(prefix=f"lodge-faults-{name}-") as tmp:
            report[name] = SCENARIOS[name](Path(tmp))
        print(name, report[name], flush=True)
    write_report({"clients": CLIENTS, "workers": WORKERS, "before_s": BEFORE, "after_s": AFTER, **report},
                 "faults.json")


if __name__ == "__main__":
    main()
