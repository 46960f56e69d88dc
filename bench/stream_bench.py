"""``make bench-stream``: many open SSE streams on one instance, plus a mover.

One gunicorn instance (deploy/gunicorn.conf.py, ``--workers`` workers) on a
real redis-server.  For each N: N streams are opened (asyncio sockets in this
process); ``WATCHERS`` of them follow the match a mover plays (one move every
``--pace`` seconds), the others follow idle matches (``PER_MATCH`` streams
each).  Reported per N:

* delivery: from sending the move's POST to each watcher's receiving that
  version's SSE message, p50/p99/max (ms);
* ``/healthz`` p99 (ms), probed every 50 ms while the streams are open and
  the mover plays;
* Redis commands per second per idle waiter: INFO commandstats over an idle
  window (streams open, no moves), divided by N and the window;
* memory per open stream: the workers' RSS with the streams open minus before
  they opened, divided by N.

Prints a JSON report and writes .bench/stream.json.  Not a test.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

import redis
import requests

from bench import write_report
from bench.http_bench import scripted_moves
from bench.servers import _tree
from devtools.servers import start_gunicorn, start_redis, stop_process

WATCHERS = 10
PER_MATCH = 4
GAME, PLAYERS = "thirteen-beavers", 2  # long matches: the mover never runs out of moves


class Streams:
    """N SSE streams over raw asyncio sockets; records arrival times."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.arrivals: dict[int, list[float]] = {}  # version of the mover's match -> arrival times
        self.opened = 0
        self.failed = 0
        self.tasks: list[asyncio.Task] = []
        self.writers: list[asyncio.StreamWriter] = []

    async def open(self, match_id: str, after: int, watch: bool) -> None:
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20)
        except OSError:
            self.failed += 1
            return
        self.writers.append(writer)
        writer.write(f"GET /v1/matches/{match_id}/stream?after={after} HTTP/1.1\r\nHost: bench\r\n"
                     "Accept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            self.failed += 1
            writer.close()
            return
        self.opened += 1
        self.tasks.append(asyncio.ensure_future(self._read(reader, watch)))

    async def _read(self, reader: asyncio.StreamReader, watch: bool) -> None:
        buffer = b""
        try:
            while True:
                size = int((await reader.readline()).strip() or b"0", 16)
                if size == 0:
                    return
                buffer += await reader.readexactly(size + 2)
                buffer = buffer[:-2] if buffer.endswith(b"\r\n") else buffer
                while b"\n\n" in buffer:
                    block, buffer = buffer.split(b"\n\n", 1)
                    if watch and block.startswith(b"id: "):
                        version = int(block[4:block.index(b"\n")])
                        self.arrivals.setdefault(version, []).append(time.perf_counter())
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            return

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        for writer in self.writers:
            writer.close()
        await asyncio.sleep(0.5)


def worker_rss(server) -> int:
    """RSS bytes of the gunicorn workers (not the master)."""
    total = 0
    for pid in _tree(server.pid):
        if pid == server.pid:
            continue
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except FileNotFoundError:
            pass
    return total


def redis_calls(client: redis.Redis) -> int:
    stats = client.info("commandstats")
    return sum(v["calls"] for v in stats.values())


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def create(base: str, seed: int) -> dict:
    r = requests.post(base + "/v1/matches", json={"game": GAME, "players": PLAYERS, "seed": seed}, timeout=30)
    r.raise_for_status()
    return r.json()


def move_and_probe(base: str, match: dict, seed: int, moves: int, pace: float,
                   seconds: float | None = None) -> tuple[dict[int, float], list[float]]:
    """The mover: ``moves`` scripted moves of ``match`` (created with
    ``seed``), one every ``pace`` seconds (no more once ``seconds`` have
    passed, if given), while /healthz is probed every 50 ms.  Returns when
    each version's move was sent (perf_counter) and the probes' times (ms)."""
    health: list[float] = []
    stop = threading.Event()

    def probe() -> None:
        session = requests.Session()
        while not stop.is_set():
            started = time.perf_counter()
            session.get(base + "/healthz", timeout=30).raise_for_status()
            health.append((time.perf_counter() - started) * 1000)
            time.sleep(0.05)

    prober = threading.Thread(target=probe)
    prober.start()
    script = scripted_moves(GAME, PLAYERS, seed)
    tokens = {s["seat"]: s["token"] for s in match["seats"]}
    sent: dict[int, float] = {}
    session = requests.Session()
    end = time.perf_counter() + (seconds if seconds is not None else float("inf"))
    for version, (seat, move) in enumerate(script[:moves]):
        if time.perf_counter() > end:
            break
        sent[version + 1] = time.perf_counter()
        r = session.post(f"{base}/v1/matches/{match['match_id']}/moves", timeout=30,
                         json={"move": move, "version": version}, headers={"Authorization": f"Bearer {tokens[seat]}"})
        r.raise_for_status()
        time.sleep(pace)
    time.sleep(1)
    stop.set()
    prober.join()
    return sent, health


def deliveries(streams: Streams, sent: dict[int, float]) -> list[float]:
    """From each move's sending to each watcher's receiving its version (ms)."""
    return [(t - sent[v]) * 1000 for v, times in streams.arrivals.items() if v in sent for t in times]


def one_size(base: str, server, rclient: redis.Redis, n: int, moves: int, pace: float, idle: float) -> dict:
    host, port = base.removeprefix("http://").split(":")
    mover_match = create(base, 1000 + n)
    idle_matches = [create(base, 5000 + n + i)["match_id"] for i in range((n - WATCHERS) // PER_MATCH + 1)]
    rss_before = worker_rss(server)
    loop = asyncio.new_event_loop()
    streams = Streams(host, int(port))
    targets = [(mover_match["match_id"], True)] * min(WATCHERS, n)
    targets += [(idle_matches[i // PER_MATCH], False) for i in range(n - len(targets))]

    async def open_all() -> None:
        for start in range(0, len(targets), 100):
            await asyncio.gather(*(streams.open(m, 0, w) for m, w in targets[start:start + 100]))
            await asyncio.sleep(0.05)

    loop.run_until_complete(open_all())
    runner = threading.Thread(target=loop.run_forever, daemon=True)
    runner.start()
    time.sleep(2)
    rss_open = worker_rss(server)

    # idle window: nobody moves
    calls_before = redis_calls(rclient)
    time.sleep(idle)
    idle_calls = redis_calls(rclient) - calls_before - 1  # minus our own INFO

    sent, health = move_and_probe(base, mover_match, 1000 + n, moves, pace)
    delivery = deliveries(streams, sent)
    expected = len(sent) * min(WATCHERS, n)
    asyncio.run_coroutine_threadsafe(streams.close(), loop).result(timeout=60)
    loop.call_soon_threadsafe(loop.stop)
    runner.join(timeout=10)
    return {"streams": n, "opened": streams.opened, "failed": streams.failed,
            "moves": len(sent), "deliveries": len(delivery), "deliveries_expected": expected,
            "delivery_p50_ms": round(statistics.median(delivery), 1) if delivery else None,
            "delivery_p99_ms": round(percentile(delivery, 0.99), 1) if delivery else None,
            "delivery_max_ms": round(max(delivery), 1) if delivery else None,
            "healthz_p50_ms": round(statistics.median(health), 1),
            "healthz_p99_ms": round(percentile(health, 0.99), 1),
            "redis_cmds_per_s_per_idle_waiter": round(idle_calls / idle / max(streams.opened, 1), 4),
            "rss_bytes_per_stream": round((rss_open - rss_before) / max(streams.opened, 1)),
            "worker_rss_mb_open": round(rss_open / 2**20, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", type=int, nargs="*", default=[100, 1000, 3000, 5000])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--moves", type=int, default=100)
    parser.add_argument("--pace", type=float, default=0.1, help="seconds between moves")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of the idle window")
    parser.add_argument("--worker-class", default="gevent", choices=["gevent", "gthread"])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lodge-stream-bench-"))
    redis_proc, redis_url = start_redis(work)
    server = None
    report: dict = {"workers": args.workers, "worker_class": args.worker_class, "watchers": WATCHERS,
                    "per_idle_match": PER_MATCH, "pace_s": args.pace, "runs": []}
    try:
        server, base = start_gunicorn(work, redis_url, args.workers,
                                      {"LOG_LEVEL": "warning", "WORKER_CLASS": args.worker_class})
        rclient = redis.Redis.from_url(redis_url)
        for n in args.counts:
            report["runs"].append(one_size(base, server, rclient, n, args.moves, args.pace, args.idle))
            print(json.dumps(report["runs"][-1]), flush=True)
    finally:
        if server is not None:
            stop_process(server, timeout=90)
        stop_process(redis_proc)
    write_report(report, "stream.json")


if __name__ == "__main__":
    main()
