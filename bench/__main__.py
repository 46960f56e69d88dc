"""``make bench``: engine playouts for every game, HTTP against the reference,
random playouts through simulate against the in-process engine
(:mod:`bench.simulate_bench`), then a random-bot tournament's one request
per move against two.

Per game, Lodge and bench/reference_app.py run side by side (same gunicorn
settings, same Redis, alternating rounds; per-client rate limits off unless
``--rate-limits on|both``).  The tournament part (:func:`bench.arena.compare_loops`)
plays the one-request loop on this code and the two-request loop on this code
and on the code before issue 17 (:data:`bench.arena.BEFORE_ONE_REQUEST`),
alternating.  Prints a JSON report and a table per part, and writes the
report to .bench/results.json.
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from bench import arena, engine_bench, http_bench, simulate_bench, write_report
from devtools.servers import start_redis, stop_process
from engine import REGISTRY


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-http", action="store_true", help="engine benchmark only")
    parser.add_argument("--skip-engine", action="store_true", help="HTTP benchmark only")
    parser.add_argument("--worker-class", action="append", choices=["gevent", "gthread"],
                        help="gunicorn worker class of the HTTP benchmark (repeat to compare; default gevent)")
    parser.add_argument("--rate-limits", choices=["off", "on", "both"], default="off",
                        help="Lodge's per-client rate limits in the HTTP benchmark (default off, like the reference)")
    parser.add_argument("--requests", type=int, default=http_bench.REQUESTS,
                        help="measured HTTP requests per scenario and app (more: less noise)")
    parser.add_argument("--rounds", type=int, default=http_bench.ROUNDS, help="alternating HTTP rounds per scenario")
    parser.add_argument("--skip-tournament", action="store_true", help="no one-vs-two-requests tournament")
    parser.add_argument("--skip-simulate", action="store_true", help="no simulate-against-engine benchmark")
    parser.add_argument("--loop-matches", type=int, default=6, help="tournament matches per loop and game")
    parser.add_argument("--games", nargs="*", default=[g.id for g in REGISTRY],
                        help="games of the HTTP benchmark and the tournament")
    args = parser.parse_args()
    report: dict = {}
    if not args.skip_engine:
        report["engine"] = engine_bench.run()
        print(json.dumps({"engine": report["engine"]}, indent=2), flush=True)
    if not args.skip_http:
        redis, url = start_redis(Path(tempfile.mkdtemp(prefix="lodge-bench-")))
        try:
            limits = {"off": [False], "on": [True], "both": [False, True]}[args.rate_limits]
            report["http"] = [http_bench.run(redis, url, game, worker_class=worker_class, rate_limits=on,
                                              requests_per_scenario=args.requests, rounds=args.rounds)
                              for game in args.games for worker_class in args.worker_class or ["gevent"]
                              for on in limits]
        finally:
            stop_process(redis)
        print(json.dumps({"http": report["http"]}, indent=2), flush=True)
        print(table(report["http"]), flush=True)
    if not args.skip_simulate:
        report["simulate"] = simulate_bench.run()
        print(json.dumps({"simulate": report["simulate"]}, indent=2), flush=True)
        print(simulate_bench.table(report["simulate"]), flush=True)
    if not args.skip_tournament:
        report["tournament"] = arena.compare_loops(args.games, args.loop_matches, arena.BEFORE_ONE_REQUEST)
        print(tournament_table(report["tournament"]), flush=True)
    write_report(report, "results.json")

def table(rows: list[dict]) -> str:
    """The ratios per server CPU-second, one line per game (Markdown)."""
    lines = ["| game | workers | limits | apply-move Lodge / ref (req per CPU-s) | ratio: pooled, median of rounds "
             "(range) | p50 / p99 Lodge · ref | get-state Lodge / ref | ratio: pooled, median of rounds (range) "
             "| p50 / p99 Lodge · ref |", "|---" * 9 + "|"]
    for r in rows:
        lo, ref = r["lodge"], r["reference"]
        lines.append(
            f"| {r['game']} | {r['worker_class']} | {'on' if r.get('rate_limits') else 'off'} "
            f"| {lo['move']['req_per_cpu_s']:,} / {ref['move']['req_per_cpu_s']:,} | {_ratios(r, 'move')} "
            f"| {_latency(lo['move'])} · {_latency(ref['move'])} ms "
            f"| {lo['view']['req_per_cpu_s']:,} / {ref['view']['req_per_cpu_s']:,} | {_ratios(r, 'view')} "
            f"| {_latency(lo['view'])} · {_latency(ref['view'])} ms |")
    return "\n".join(lines)


def _ratios(row: dict, scenario: str) -> str:
    rounds = row["round_ratios"][scenario]
    spread = (f"{row['median_round_ratio'][scenario]} ({min(rounds)}–{max(rounds)})" if rounds
              else "no round long enough")
    return f"**{row['ratio_per_cpu_s'][scenario]}**, {spread}"


def _latency(measured: dict) -> str:
    return f"{measured['p50_ms']} / {measured['p99_ms']}"


def tournament_table(rows: list[dict]) -> str:
    """One request per move against two, per game (Markdown)."""
    lines = ["| game | matches per server CPU-s: two requests, before issue 17 / two, this code / one, this code "
             "| gain over before / over two | one request: matches/min, moves/s |", "|---" * 4 + "|"]
    for r in rows:
        old, two, one = r["two_baseline_request"], r["two_request"], r["one_request"]
        lines.append(f"| {r['game']} | {old['matches_per_cpu_s']} / {two['matches_per_cpu_s']} / "
                     f"{one['matches_per_cpu_s']} | {r['gain_vs_baseline_per_cpu_s']} / {r['gain_per_cpu_s']} "
                     f"| {one['matches_per_minute']}, {one['moves_per_second']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
