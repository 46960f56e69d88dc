"""Simulate benchmark (part of ``make bench``): simulated moves per server
CPU-second in random playouts through ``POST /v1/games/{game}/simulate``
(``"playout": "random"``, as the admin), next to the in-process engine's
random moves per CPU-second (``legal_moves`` + ``play``, the same work per
move); the goal is at least half the in-process figure for every game.

One gunicorn worker on a real Redis; per game, worlds of 4-player matches
(fewer where the game takes fewer) from ``POST …/worlds``, each played out
from version 0 by one simulate call.  A call's moves are its ``version``; the
server's CPU is read from /proc (:func:`bench.servers.cpu_seconds`).
"""
from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

import requests

from bench.servers import cpu_seconds
from devtools.servers import start_gunicorn, start_redis, stop_process
from engine import REGISTRY
from engine.core import FINISHED, Game

PLAYERS = 4
#: Playouts per game through HTTP, and in-process moves per game.
PLAYOUTS = 400
ENGINE_MOVES = 20_000


def engine_moves_per_cpu_s(game: Game, moves_wanted: int = ENGINE_MOVES) -> float:
    """Random legal moves per CPU-second in-process, whole matches from version 0."""
    rng, played, match = random.Random(1), 0, 0
    started = time.process_time()
    while played < moves_wanted:
        names = [f"p{i}" for i in range(min(PLAYERS, game.max_players))]
        state, _, _ = game.create(names, match, {})
        match += 1
        while game.status(state) != FINISHED and played < moves_wanted:
            seat = game.to_act(state)[0]
            state, _ = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
            played += 1
    return played / (time.process_time() - started)


def simulate_moves_per_cpu_s(server, base: str, game: Game, playouts: int = PLAYOUTS) -> dict:
    """Moves per server CPU-second over ``playouts`` simulate calls (one world each)."""
    session = requests.Session()
    players = min(PLAYERS, game.max_players)
    worlds = [session.post(f"{base}/v1/games/{game.id}/worlds", json={"players": players, "seed": s},
                           timeout=30).json()["world"] for s in range(playouts)]
    session.post(f"{base}/v1/games/{game.id}/simulate", json={"world": worlds[0], "playout": "random"}, timeout=60)
    moves, calls = 0, []
    before = cpu_seconds(server)
    for s, world in enumerate(worlds):
        started = time.perf_counter()
        r = session.post(f"{base}/v1/games/{game.id}/simulate",
                         json={"world": world, "playout": "random", "seed": s}, timeout=60)
        calls.append(time.perf_counter() - started)
        r.raise_for_status()
        moves += r.json()["version"]
    cpu = cpu_seconds(server) - before
    if cpu <= 0:
        raise RuntimeError(f"{game.id}: {playouts} playouts took less than one tick of the server's CPU clock; "
                           "run more playouts")
    calls.sort()
    return {"playouts": playouts, "moves": moves, "server_cpu_s": round(cpu, 2),
            "moves_per_cpu_s": round(moves / cpu), "call_p50_ms": round(calls[len(calls) // 2] * 1000, 1)}


def run(playouts: int = PLAYOUTS, engine_moves: int = ENGINE_MOVES) -> list[dict]:
    workdir = Path(tempfile.mkdtemp(prefix="lodge-bench-simulate-"))
    redis, url = start_redis(workdir)
    try:
        server, base = start_gunicorn(workdir, url, workers=1)
        try:
            rows = []
            for game in REGISTRY:
                http = simulate_moves_per_cpu_s(server, base, game, playouts)
                engine = engine_moves_per_cpu_s(game, engine_moves)
                rows.append({"game": game.id, "players": min(PLAYERS, game.max_players), "simulate": http,
                             "engine_moves_per_cpu_s": round(engine),
                             "ratio": round(http["moves_per_cpu_s"] / engine, 2)})
            return rows
        finally:
            stop_process(server)
    finally:
        stop_process(redis)


def table(rows: list[dict]) -> str:
    """Simulated against in-process moves per CPU-second, one line per game (Markdown)."""
    lines = ["| game | players | simulate: moves per server CPU-s | in-process engine: moves per CPU-s | ratio "
             "| simulate call p50 |", "|---" * 6 + "|"]
    for r in rows:
        lines.append(f"| {r['game']} | {r['players']} | {r['simulate']['moves_per_cpu_s']:,} "
                     f"| {r['engine_moves_per_cpu_s']:,} | **{r['ratio']}** | {r['simulate']['call_p50_ms']} ms |")
    return "\n".join(lines)
