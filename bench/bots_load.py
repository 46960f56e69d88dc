"""``make bench-bots-load``: what searching bot seats cost the other requests.

One gunicorn instance (deploy/gunicorn.conf.py, ``--workers`` gevent
workers) on a real redis-server, measured as ``make bench-stream`` measures
it (:func:`bench.stream_bench.move_and_probe`): a mover plays a 13 Beavers
match (one move every ``--pace`` seconds) that ``WATCHERS`` SSE streams
follow, while ``/healthz`` is probed every 50 ms.  Meanwhile ``--seats``
clients each play a Biberbande match against an ``ismcts`` bot seat (random
legal moves; a new match when one ends), so the server's ISMCTS searches run
all along.  Three runs, each on a fresh server:

* ``none``: no bot seats (the baseline);
* ``pool``: the ISMCTS seats, deciding in the bot processes (``BOT_PROCESSES``
  default);
* ``inline``: the same with ``BOT_PROCESSES=0``, every search inside its
  request, as before the pool (``--no-inline`` skips it).

Reported per run: stream delivery (from the mover's POST to each watcher's
receiving that version) and ``/healthz`` p50/p99/max in ms, the bot moves
played and the bots' fallbacks, and the machine's load average at the end
(on a shared machine other work moves the figures more than anything here).  Prints a JSON report and writes
.bench/bots_load.json.  Not a test.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import requests

import bots
from bench import write_report
from bench.stream_bench import WATCHERS, Streams, create, deliveries, move_and_probe, percentile
from devtools.servers import start_gunicorn, start_redis, stop_process

BOT_GAME = "biberbande"
#: the runs: name → the server's extra environment and whether the ISMCTS seats play
RUNS: dict[str, tuple[dict[str, str], bool]] = {
    "none": ({}, False),
    "pool": ({bots.ISMCTS_SETTING: "1"}, True),
    "inline": ({bots.ISMCTS_SETTING: "1", "BOT_PROCESSES": "0"}, True),
}


class Opponent(threading.Thread):
    """A client that plays matches against an ISMCTS bot seat until stopped;
    counts the bot's moves."""

    def __init__(self, base: str, seed: int, stop: threading.Event):
        super().__init__(daemon=True)
        self.base, self.rng, self.stop = base, random.Random(seed), stop
        self.session = requests.Session()
        self.bot_moves = 0

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                created = self.session.post(f"{self.base}/v1/matches", timeout=120, json={
                    "game": BOT_GAME, "seed": self.rng.randrange(2**31),
                    "players": ["me", {"name": "deep", "bot": bots.ISMCTS}]})
                if created.status_code == 201:
                    self.play(created.json())
                else:  # a 503 on a loaded machine: try again
                    self.stop.wait(1)
            except requests.RequestException:  # the server is stopping (or stalled past the timeout)
                self.stop.wait(1)

    def play(self, match: dict[str, Any]) -> None:
        """Play ``match`` until it ends or the run stops; every version I did
        not post is a move of the bot."""
        url = f"{self.base}/v1/matches/{match['match_id']}"
        auth = {"Authorization": f"Bearer {match['seats'][0]['token']}"}
        mine, version = 0, 0
        while not self.stop.is_set():
            got = self.session.get(url, params={"legal": "true"}, headers=auth, timeout=120)
            if got.status_code != 200:
                self.stop.wait(1)
                continue
            view = got.json()
            version = view["version"]
            if view["status"] == "finished":
                break
            if 0 in view["to_act"]:
                move = {k: v for k, v in self.rng.choice(view["legal_moves"]["0"]).items() if k != "label"}
                posted = self.session.post(f"{url}/moves", headers=auth, timeout=120,
                                           json={"move": move, "version": version})
                mine += posted.status_code == 200
            else:
                self.session.get(f"{url}/events", params={"after": version, "wait": 10}, headers=auth, timeout=120)
        self.bot_moves += version - mine


def fallbacks(base: str) -> float:
    """The server's ``lodge_bot_fallbacks_total`` summed over reasons."""
    text = requests.get(f"{base}/metrics", timeout=30).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("lodge_bot_fallbacks_total{"))


def created(base: str, seed: int) -> dict[str, Any]:
    """The mover's match (:func:`bench.stream_bench.create`), tried again
    after a 503 (a fresh server on a loaded machine)."""
    for _attempt in range(10):
        try:
            return create(base, seed)
        except requests.HTTPError as exc:
            if exc.response is None or exc.response.status_code != 503:
                raise
            time.sleep(1)
    return create(base, seed)


def one_run(work: Path, redis_url: str, env: dict[str, str], seats: int, args: argparse.Namespace) -> dict[str, Any]:
    budget = {} if args.bot_timeout_ms is None else {"BOT_TIMEOUT_MS": str(args.bot_timeout_ms)}
    server, base = start_gunicorn(work, redis_url, args.workers, {"LOG_LEVEL": "warning", **budget, **env})
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, daemon=True)
    stop = threading.Event()
    opponents = [Opponent(base, 100 + i, stop) for i in range(seats)]
    try:
        mover_match = created(base, 1000)
        host, port = base.removeprefix("http://").split(":")
        streams = Streams(host, int(port))

        async def open_all() -> None:
            await asyncio.gather(*(streams.open(mover_match["match_id"], 0, True) for _ in range(WATCHERS)))

        loop.run_until_complete(open_all())
        runner.start()
        for opponent in opponents:
            opponent.start()
        stop.wait(args.warmup)  # the bot processes start, the searches are under way
        sent, health = move_and_probe(base, mover_match, 1000, args.moves, args.pace, args.seconds)
        delivery = deliveries(streams, sent)
        asyncio.run_coroutine_threadsafe(streams.close(), loop).result(timeout=60)
        fallback_count = fallbacks(base)
    finally:
        stop.set()
        loop.call_soon_threadsafe(loop.stop)
        stop_process(server, timeout=90)
    for opponent in opponents:
        opponent.join(timeout=10)
    return {"bot_seats": seats, "load_average_1min": round(os.getloadavg()[0], 1), "moves": len(sent),
            "deliveries": len(delivery), "deliveries_expected": len(sent) * WATCHERS,
            "delivery_p50_ms": round(statistics.median(delivery), 1) if delivery else None,
            "delivery_p99_ms": round(percentile(delivery, 0.99), 1) if delivery else None,
            "delivery_max_ms": round(max(delivery), 1) if delivery else None,
            "healthz_probes": len(health), "healthz_p50_ms": round(statistics.median(health), 1),
            "healthz_p99_ms": round(percentile(health, 0.99), 1), "healthz_max_ms": round(max(health), 1),
            "bot_moves": sum(o.bot_moves for o in opponents), "bot_fallbacks": fallback_count}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seats", type=int, default=4, help="ISMCTS seats playing at once (default 4)")
    parser.add_argument("--moves", type=int, default=100, help="the mover's moves per run")
    parser.add_argument("--pace", type=float, default=0.1, help="seconds between the mover's moves")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="the mover stops after this many seconds even short of --moves (default 60)")
    parser.add_argument("--bot-timeout-ms", type=int, default=None,
                        help="the servers' BOT_TIMEOUT_MS (default: theirs, 10000)")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds the bots play before measuring")
    parser.add_argument("--no-inline", action="store_true", help="skip the run with every search inline")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lodge-bots-load-"))
    redis_proc, redis_url = start_redis(work)
    report: dict[str, Any] = {"workers": args.workers, "watchers": WATCHERS, "pace_s": args.pace,
                              "bot_game": BOT_GAME, "bot_timeout_ms": args.bot_timeout_ms, "runs": {}}
    try:
        for name, (env, playing) in RUNS.items():
            if name == "inline" and args.no_inline:
                continue
            report["runs"][name] = one_run(work, redis_url, env, args.seats if playing else 0, args)
            print(json.dumps({name: report["runs"][name]}), flush=True)
    finally:
        stop_process(redis_proc)
    write_report(report, "bots_load.json")


if __name__ == "__main__":
    main()
