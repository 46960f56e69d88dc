"""``make bench-arena``: the arena over real HTTP, on this machine.

1. Throughput: a tournament of random bots per game (4 seats, 2 matches in
   parallel), in matches per minute.
2. Heuristic margins: per game, ``heuristic`` against ``random`` in duplicate
   mode, heads-up and against three random bots, with the heuristic bot's
   win rate and 95 % Wilson interval (chance: 1/2 and 1/4).

Starts its own redis-server and gunicorn (2 workers) on free ports and stops
them by PID.  Prints a JSON report and writes it to .bench/arena.json.
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from arena import results, tournament
from arena.entrants import Entrant
from bench import write_report
from devtools.servers import start_gunicorn, start_redis, stop_process
from engine import REGISTRY


def throughput(url: str, game: str, matches: int) -> dict:
    config = tournament.TournamentConfig(
        game=game, entrants=[Entrant.parse(f"r{i}=random") for i in range(4)], matches=matches, seats=4,
        parallel=2, url=url)
    run = tournament.run(config, progress=False)
    moves = sum(o.moves for o in run.outcomes)
    return {"game": game, "matches": len(run.outcomes), "seconds": round(run.seconds, 1),
            "matches_per_minute": round(run.matches_per_minute, 1),
            "moves_per_second": round(moves / run.seconds, 1), "mean_moves": round(moves / len(run.outcomes), 1)}


def margin(url: str, game: str, seats: int, deals: int) -> dict:
    entrants = [Entrant.parse("heuristic")] + [Entrant.parse(f"random{i}=random") for i in range(1, seats)]
    config = tournament.TournamentConfig(game=game, entrants=entrants, matches=deals * seats, seats=seats,
                                         seed=2026, parallel=2, duplicate=True, url=url)
    run = tournament.run(config, progress=False)
    row = next(r for r in results.standings(run) if r.bot == "heuristic")
    others = [r for r in results.standings(run) if r.bot != "heuristic"]
    return {"game": game, "seats": seats, "matches": row.matches, "chance": round(1 / seats, 3),
            "heuristic_win_rate": round(row.win_rate, 3),
            "interval_95": [round(row.win_low, 3), round(row.win_high, 3)],
            "heuristic_mean_score": round(row.mean_score, 2),
            "random_mean_score": round(sum(r.mean_score for r in others) / len(others), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", nargs="*", default=[g.id for g in REGISTRY])
    parser.add_argument("--throughput-matches", type=int, default=40)
    parser.add_argument("--deals", type=int, default=100, help="duplicate deals heads-up (x2 matches)")
    parser.add_argument("--deals-4p", type=int, default=25, help="duplicate deals with 4 seats (x4 matches)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lodge-arena-bench-"))
    redis, redis_url = start_redis(work)
    server = None
    report: dict = {"throughput": [], "margins": []}
    try:
        server, url = start_gunicorn(work, redis_url, workers=2)
        for game in args.games:
            report["throughput"].append(throughput(url, game, args.throughput_matches))
            print(json.dumps(report["throughput"][-1]), flush=True)
        for game in args.games:
            for seats, deals in ((2, args.deals), (4, args.deals_4p)):
                report["margins"].append(margin(url, game, seats, deals))
                print(json.dumps(report["margins"][-1]), flush=True)
    finally:
        if server is not None:
            stop_process(server, timeout=20)
        stop_process(redis)
    write_report(report, "arena.json")


if __name__ == "__main__":
    main()
