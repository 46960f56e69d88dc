"""``make bench-bots``: how long a server bot takes per decision.

Plays matches of heuristic bots only (3 seats, default options) per game
through the engine, every decision made as the service makes it
(:func:`bots.decide`: a fresh bot per decision, given the seat's view and
legal moves), and reports the CPU time per decision: p50, p99 and max, in
milliseconds, with the first decision of the process apart (a bot may build
tables once per process, e.g. 13 Beavers' plans).  Prints a JSON report and
writes it to .bench/bots.json.
"""
from __future__ import annotations

import argparse
import json
import time
from typing import Any

import bots
from bench import write_report
from engine import REGISTRY
from engine.core import FINISHED, Game, seat_viewer


def seat_view(game: Game, state: dict[str, Any], version: int, seat: int) -> dict[str, Any]:
    """The view the service hands a bot (``service.domain.views.view_of`` without a match id)."""
    viewer = seat_viewer(seat)
    view = game.view(state, viewer)
    return {"game": game.id, "version": version, "status": view["status"], "viewer": viewer.to_json(), **view,
            "deadline": {}}


def decisions(game: Game, matches: int, seats: int, kind: str) -> list[float]:
    """CPU seconds of every decision in ``matches`` matches of ``kind`` bots."""
    times: list[float] = []
    for seed in range(matches):
        state, _, _ = game.create([f"bot{i}" for i in range(seats)], seed, {})
        version = 0
        while game.status(state) != FINISHED:
            seat = game.to_act(state)[0]
            view = seat_view(game, state, version, seat)
            moves = game.legal_moves(state, seat)
            started = time.process_time()
            move = bots.decide(kind, game.id, seat, seed, version, view, moves)
            times.append(time.process_time() - started)
            state, _ = game.play(state, seat, move)
            version += 1
    return times


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def run(matches: int, kind: str = "heuristic", seats: int = 3) -> list[dict[str, Any]]:
    report = []
    for game in REGISTRY:
        first = decisions(game, 1, seats, kind)[:1]
        times = decisions(game, matches, seats, kind)
        ms = [t * 1000 for t in times]
        report.append({"game": game.id, "bot": kind, "matches": matches, "decisions": len(ms),
                       "first_ms": round(first[0] * 1000, 2), "p50_ms": round(percentile(ms, 50), 3),
                       "p99_ms": round(percentile(ms, 99), 3), "max_ms": round(max(ms), 2)})
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--matches", type=int, default=10, help="matches per game (default 10)")
    parser.add_argument("--bot", default="heuristic", choices=bots.KINDS)
    args = parser.parse_args()
    report = {"bots": run(args.matches, args.bot)}
    print(json.dumps(report, indent=2), flush=True)
    write_report(report, "bots.json")


if __name__ == "__main__":
    main()
