"""HTTP benchmark: Lodge under gunicorn + real Redis against a bare reference.

Both apps run side by side (both servers up at once) in the same gunicorn
configuration against the same redis-server, under the same bounded loopback
load (``CLIENTS`` threads with keep-alive sessions, ``REQUESTS`` requests per
scenario), in alternating rounds (``ROUNDS``: Lodge, reference, reference, Lodge, …) so
that the machine's load swings hit both alike.  The machine is shared and
noisy, so the figure that counts is requests per server CPU-second (user +
system time of the gunicorn master and workers, read from /proc), quoted with
raw throughput and p50/p99 latency.  The ratio is given two ways: pooled
over all rounds (``ratio_per_cpu_s``), and per pair of rounds (a Lodge round
and the reference round next to it, ``round_ratios``) with their median
(``median_round_ratio``), which a load swing hitting one round moves less.

Per-client rate limits are off in both (``RATE_LIMIT_ENABLED=false``,
``MAX_WAITS_PER_CLIENT=0``, :data:`NO_LIMITS`): four loopback clients are one
client address playing thousands of requests a second, and the reference has
no limits.  ``rate_limits=True`` measures Lodge with its default limits on
(one more Redis call per request) instead.
"""
from __future__ import annotations

import itertools
import random
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from bench.servers import cpu_seconds
from devtools.servers import LODGE_APP, start_gunicorn, stop_process
from engine import REGISTRY
from engine.core import FINISHED

CLIENTS = 4
REQUESTS = 4000
WARMUP = 200
#: Both apps run with these gunicorn settings (deploy/gunicorn.conf.py;
#: THREADS only matters to the gthread worker class).
WORKERS = 1
THREADS = 4
#: Measured rounds per scenario and app, alternating between the apps.
ROUNDS = 8
#: The environment of both servers: no per-client limits (see the module docstring).
NO_LIMITS = {"RATE_LIMIT_ENABLED": "false", "MAX_WAITS_PER_CLIENT": "0"}


@dataclass
class Measure:
    requests: int
    seconds: float
    cpu_seconds: float
    latencies_ms: list[float]

    def __add__(self, other: Measure) -> Measure:
        return Measure(self.requests + other.requests, self.seconds + other.seconds,
                       self.cpu_seconds + other.cpu_seconds, self.latencies_ms + other.latencies_ms)

    def summary(self) -> dict:
        lat = sorted(self.latencies_ms)
        return {"requests": self.requests,
                "req_per_s": round(self.requests / self.seconds),
                "server_cpu_s": round(self.cpu_seconds, 2),
                "req_per_cpu_s": round(self.requests / self.cpu_seconds) if self.cpu_seconds else None,
                "p50_ms": round(statistics.median(lat), 2),
                "p99_ms": round(lat[int(len(lat) * 0.99) - 1], 2)}


def drive(server: subprocess.Popen, clients: int, per_client: int,
          make_worker: Callable[[requests.Session], Callable[[], None]]) -> Measure:
    """Run ``clients`` threads, each calling its worker ``per_client`` times."""
    latencies: list[float] = []
    lock = threading.Lock()
    workers = []
    for _ in range(clients):
        session = requests.Session()
        workers.append(make_worker(session))

    def loop(work: Callable[[], None]) -> None:
        mine = []
        for _ in range(per_client):
            started = time.perf_counter()
            work()
            mine.append((time.perf_counter() - started) * 1000)
        with lock:
            latencies.extend(mine)

    cpu_before = cpu_seconds(server)
    started = time.perf_counter()
    threads = [threading.Thread(target=loop, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    return Measure(len(latencies), seconds, cpu_seconds(server) - cpu_before, latencies)


def scripted_moves(game_id: str, players: int, seed: int) -> list[tuple[int, dict]]:
    """A random legal match played in-process: the moves the client will POST."""
    game = REGISTRY.get(game_id)
    assert game is not None, f"unknown game {game_id!r}"
    rng = random.Random(seed)
    state, _, _ = game.create([f"p{i}" for i in range(players)], seed, {})
    moves = []
    while game.status(state) != FINISHED:
        seat = game.to_act(state)[0]
        move = rng.choice(game.legal_moves(state, seat))
        moves.append((seat, move))
        state, _ = game.play(state, seat, move)
    return moves


class LodgeClient:
    """Plays scripted matches one after another through the public API.

    The matches for ``moves`` moves are created up front, when the client is
    made (before :func:`drive` reads the server's CPU), so a move scenario
    measures moves, not match creations.  ``idempotency``: every move sends
    an ``Idempotency-Key``, so the server keeps a record of each."""

    def __init__(self, base: str, session: requests.Session, game: str, players: int, seed: int, moves: int = 1,
                 idempotency: bool = False):
        self.base, self.session, self.game, self.players = base, session, game, players
        self.seed, self.idempotency = seed, idempotency
        self.ready: list[tuple[str, dict[int, str], list[tuple[int, dict]]]] = []
        while sum(len(script) for _, _, script in self.ready) < moves:
            self.ready.append(self._create())
        self._next_match()

    def _create(self) -> tuple[str, dict[int, str], list[tuple[int, dict]]]:
        self.seed += 1
        script = scripted_moves(self.game, self.players, self.seed)
        body: dict[str, Any] = {"game": self.game, "players": self.players, "seed": self.seed}
        created = self.session.post(self.base + "/v1/matches", json=body).json()
        return created["match_id"], {s["seat"]: s["token"] for s in created["seats"]}, script

    def _next_match(self) -> None:
        self.match, self.tokens, self.script = self.ready.pop(0) if self.ready else self._create()
        self.version = 0

    def move(self) -> None:
        if self.version == len(self.script):
            self._next_match()
        seat, move = self.script[self.version]
        headers = {"Authorization": f"Bearer {self.tokens[seat]}"}
        if self.idempotency:  # each move keeps an idempotency record
            headers["Idempotency-Key"] = f"m{self.version}"
        reply = self.session.post(f"{self.base}/v1/matches/{self.match}/moves",
                                  json={"move": move, "version": self.version}, headers=headers)
        assert reply.status_code == 200, reply.text
        self.version += 1

    def view(self) -> None:
        reply = self.session.get(f"{self.base}/v1/matches/{self.match}",
                                 headers={"Authorization": f"Bearer {self.tokens[0]}"})
        assert reply.status_code == 200, reply.text


class ReferenceClient:
    counter = 0

    def __init__(self, base: str, session: requests.Session):
        ReferenceClient.counter += 1
        self.base, self.session = base, session
        self.match = f"m{ReferenceClient.counter}"
        self.version = 0
        session.put(f"{base}/ref/{self.match}").raise_for_status()

    def move(self) -> None:
        reply = self.session.post(f"{self.base}/ref/{self.match}/moves", json={"version": self.version})
        assert reply.status_code == 200, reply.text
        self.version += 1

    def view(self) -> None:
        self.session.get(f"{self.base}/ref/{self.match}").raise_for_status()


def start(app_spec: str, redis_url: str, worker_class: str, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    return start_gunicorn(Path(tempfile.mkdtemp(prefix="lodge-bench-")), redis_url, WORKERS,
                          {"THREADS": str(THREADS), "LOG_LEVEL": "warning", "WORKER_CLASS": worker_class, **env},
                          app=app_spec)


def run(redis: subprocess.Popen, redis_url: str, game: str = "biberbande", players: int = 4,
        worker_class: str = "gevent", rate_limits: bool = False, requests_per_scenario: int = REQUESTS,
        rounds: int = ROUNDS) -> dict:
    """Lodge and the reference side by side under gunicorn's ``worker_class``
    workers: per scenario a warm-up each, then ``rounds`` alternating rounds
    of ``requests_per_scenario`` requests in all per app."""
    seeds = itertools.count(10_000, 100_000)  # one per client of every round: any --rounds
    lodge_env = {} if rate_limits else NO_LIMITS
    lodge, lodge_base = start(LODGE_APP, redis_url, worker_class, lodge_env)
    try:
        ref, ref_base = start("bench.reference_app:create_app()", redis_url, worker_class, NO_LIMITS)
    except BaseException:
        stop_process(lodge, timeout=20)
        raise
    per_round = requests_per_scenario // CLIENTS // rounds
    moves = max(per_round, WARMUP // CLIENTS)
    apps = {"lodge": (lodge, lambda s: LodgeClient(lodge_base, s, game, players, next(seeds), moves)),
            "reference": (ref, lambda s: ReferenceClient(ref_base, s))}
    out: dict[str, dict] = {"lodge": {}, "reference": {}}
    round_ratios: dict[str, list[float]] = {"move": [], "view": []}
    try:
        for scenario in ("move", "view"):
            def maker(client_for, scenario=scenario):
                return lambda session: getattr(client_for(session), scenario)
            totals: dict[str, Measure] = {}
            redis_cpu = dict.fromkeys(apps, 0.0)
            for server, client_for in apps.values():
                drive(server, CLIENTS, WARMUP // CLIENTS, maker(client_for))
            for turn in range(rounds):
                pair = {}
                order = list(apps.items())
                for name, (server, client_for) in order[::-1] if turn % 2 else order:  # ABBA
                    redis_before = cpu_seconds(redis)
                    m = pair[name] = drive(server, CLIENTS, per_round, maker(client_for))
                    redis_cpu[name] += cpu_seconds(redis) - redis_before
                    totals[name] = totals[name] + m if name in totals else m
                ratio = _ratio(pair["lodge"], pair["reference"])
                if ratio is not None:
                    round_ratios[scenario].append(ratio)
            for name in apps:
                out[name][scenario] = totals[name].summary() | {"redis_cpu_s": round(redis_cpu[name], 2)}
    finally:
        stop_process(lodge, timeout=20)
        stop_process(ref, timeout=20)
    ratios = {scenario: round(out["lodge"][scenario]["req_per_cpu_s"] / out["reference"][scenario]["req_per_cpu_s"], 2)
              for scenario in ("move", "view")}
    return {"game": game, "players": players, "clients": CLIENTS, "worker_class": worker_class,
            "rate_limits": rate_limits, "lodge": out["lodge"], "reference": out["reference"],
            "ratio_per_cpu_s": ratios,
            "round_ratios": {scenario: [round(r, 2) for r in found] for scenario, found in round_ratios.items()},
            "median_round_ratio": {scenario: round(statistics.median(found), 2) if found else None
                                   for scenario, found in round_ratios.items()}}


def _ratio(lodge: Measure, reference: Measure) -> float | None:
    """Lodge's requests per server CPU-second over the reference's, in one
    pair of rounds (None when a round was too short to show CPU time)."""
    if lodge.cpu_seconds <= 0 or reference.cpu_seconds <= 0:
        return None
    return (lodge.requests / lodge.cpu_seconds) / (reference.requests / reference.cpu_seconds)
