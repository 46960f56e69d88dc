"""Engine benchmark: random legal playouts in-process, per game.

A move costs ``legal_moves`` for the seat to act plus ``play`` (the service's
path: membership check, then apply).  Each run plays whole matches until it
has timed ``moves_per_run`` moves; per run we take the median and the mean
µs per move, and quote the median of those over the runs.
"""
from __future__ import annotations

import random
import statistics
import time

import orjson

from engine import REGISTRY
from engine.core import FINISHED, Game

PLAYERS = 4


def one_run(game: Game, seed: int, moves_wanted: int) -> tuple[list[float], int]:
    """Per-move seconds of ``moves_wanted`` random moves, and the largest snapshot."""
    rng = random.Random(seed)
    times: list[float] = []
    biggest = 0
    match = 0
    while len(times) < moves_wanted:
        names = [f"p{i}" for i in range(min(PLAYERS, game.max_players))]
        state, _, _ = game.create(names, seed * 1000 + match, {})
        match += 1
        while game.status(state) != FINISHED and len(times) < moves_wanted:
            started = time.perf_counter()
            seat = game.to_act(state)[0]
            move = rng.choice(game.legal_moves(state, seat))
            state, _ = game.play(state, seat, move)
            times.append(time.perf_counter() - started)
            if len(times) % 50 == 0:
                biggest = max(biggest, len(orjson.dumps(state)))
    return times, biggest


def run(runs: int = 5, moves_per_run: int = 20_000) -> list[dict]:
    results = []
    for game in REGISTRY:
        medians, means, biggest = [], [], 0
        for r in range(runs):
            times, size = one_run(game, r + 1, moves_per_run)
            medians.append(statistics.median(times) * 1e6)
            means.append(statistics.fmean(times) * 1e6)
            biggest = max(biggest, size)
        mean = statistics.median(means)
        results.append({"game": game.id, "players": min(PLAYERS, game.max_players),
                        "runs": runs, "moves_per_run": moves_per_run,
                        "us_per_move_median": round(statistics.median(medians), 1),
                        "us_per_move_mean": round(mean, 1),
                        "moves_per_second": round(1e6 / mean),
                        "max_snapshot_bytes": biggest})
    return results
