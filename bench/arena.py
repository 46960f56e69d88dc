"""``make bench-arena``: the arena over real HTTP, on this machine.

0. One request per move against two: per game, random-bot matches (4 seats,
   2 in parallel) driven over HTTP directly, in alternating rounds on the same
   server, by the two-request loop (GET legal-moves with the seat's token,
   then POST the move) and the one-request loop (the admin POSTs each move
   with ``?seat=k&legal=true`` and takes the next seat's moves from the
   answer); matches per server CPU-second (gunicorn's processes, /proc),
   matches per minute and moves per second, and the ratio of the two
   (``--loops-only`` runs just this).  ``--baseline REV`` also runs the
   two-request loop, in the same alternation, on a second server serving
   that git revision's code (e.g. the one before the hot paths: "today's
   two-request loop"), and gives the one-request loop's gain over it.
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
import random
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import requests

from arena import results, tournament
from arena.entrants import Entrant
from bench import write_report
from bench.servers import cpu_seconds
from devtools.servers import ROOT, start_gunicorn, start_redis, stop_process
from engine import REGISTRY

#: Server settings of the loops' comparison: no per-client limits (one loopback client plays fast).
NO_LIMITS = {"RATE_LIMIT_ENABLED": "false", "MAX_WAITS_PER_CLIENT": "0", "LOG_LEVEL": "warning"}
SEATS = 4
PARALLEL = 2
ROUNDS = 2
#: The code before issue 17 (no hot paths, no ``?legal=true``): "today's
#: two-request loop" that ``make bench`` measures the one-request loop against.
BEFORE_ONE_REQUEST = "d51df7c"


def two_requests(session: requests.Session, url: str, game: str, seed: int) -> int:
    """A random match with the seats' tokens: legal moves, then the move. Its moves."""
    rng = random.Random(seed)
    created = session.post(f"{url}/v1/matches", json={"game": game, "players": SEATS, "seed": seed}).json()
    match, tokens, state = created["match_id"], [s["token"] for s in created["seats"]], created["state"]
    moves = 0
    while state["status"] != "finished":
        auth = {"Authorization": f"Bearer {tokens[state['to_act'][0]]}"}
        legal = session.get(f"{url}/v1/matches/{match}/legal-moves", headers=auth).json()
        reply = session.post(f"{url}/v1/matches/{match}/moves", headers=auth,
                             json={"move": rng.choice(legal["moves"]), "version": legal["version"]})
        reply.raise_for_status()
        state = reply.json()["state"]
        moves += 1
    return moves


def one_request(session: requests.Session, url: str, game: str, seed: int) -> int:
    """The same match by the admin, one request per move (``?legal=true``). Its moves."""
    rng = random.Random(seed)
    created = session.post(f"{url}/v1/matches", json={"game": game, "players": SEATS, "seed": seed}).json()
    match, auth = created["match_id"], {"Authorization": f"Bearer {created['admin_token']}"}
    body = session.get(f"{url}/v1/matches/{match}?legal=true", headers=auth).json()
    version, legal = body["version"], body["legal_moves"]
    moves = 0
    while legal:
        seat = min(legal, key=int)
        reply = session.post(f"{url}/v1/matches/{match}/moves?seat={seat}&legal=true", headers=auth,
                             json={"move": rng.choice(legal[seat]), "version": version})
        reply.raise_for_status()
        body = reply.json()
        version, legal = body["version"], body["legal_moves"]
        moves += 1
    return moves


def drive_matches(server: object, url: str, game: str, seeds: list[int],
                  play: Callable[[requests.Session, str, str, int], int]) -> dict:
    """``seeds`` matches, ``PARALLEL`` at a time: wall and server CPU seconds, moves."""
    todo = list(seeds)
    lock = threading.Lock()
    moves = [0]

    def worker() -> None:
        with requests.Session() as session:
            while True:
                with lock:
                    if not todo:
                        return
                    seed = todo.pop()
                n = play(session, url, game, seed)
                with lock:
                    moves[0] += n

    cpu = cpu_seconds(server)  # type: ignore[arg-type]
    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(PARALLEL)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"matches": len(seeds), "moves": moves[0], "seconds": time.perf_counter() - started,
            "cpu_s": cpu_seconds(server) - cpu}  # type: ignore[arg-type]


def start_revision(revision: str, work: Path, redis_url: str, workers: int) -> tuple[subprocess.Popen, str]:
    """gunicorn serving ``revision``'s code (``git archive`` into ``work``), by
    :func:`devtools.servers.start_gunicorn`."""
    code = work / f"code-{revision}"
    code.mkdir()
    archive = subprocess.run(["git", "archive", revision], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(code)], input=archive, check=True)
    run = work / f"run-{revision}"
    run.mkdir()
    return start_gunicorn(run, redis_url, workers, dict(NO_LIMITS), code=code)


def loops(server: object, url: str, game: str, matches: int, baseline: tuple[object, str] | None = None) -> dict:
    """Both loops on the same matches (same seeds), in alternating rounds;
    with ``baseline`` (server, url) also the two-request loop there."""
    runs: list[tuple[str, object, str, Callable[[requests.Session, str, str, int], int]]] = [
        ("two", server, url, two_requests), ("one", server, url, one_request)]
    if baseline is not None:
        runs.append(("two_baseline", *baseline, two_requests))
    totals = {name: {"matches": 0, "moves": 0, "seconds": 0.0, "cpu_s": 0.0} for name, *_ in runs}
    for r in range(ROUNDS):
        seeds = [1000 * r + i for i in range(matches // ROUNDS)]
        for name, at, base, play in runs:
            got = drive_matches(at, base, game, seeds, play)
            for key in totals[name]:
                totals[name][key] += got[key]
    out: dict = {"game": game}
    for name, t in totals.items():
        out[f"{name}_request"] = {
            "matches": t["matches"], "moves": t["moves"],
            "matches_per_minute": round(60 * t["matches"] / t["seconds"], 1),
            "moves_per_second": round(t["moves"] / t["seconds"], 1),
            "server_cpu_s": round(t["cpu_s"], 2),
            "matches_per_cpu_s": round(t["matches"] / t["cpu_s"], 2) if t["cpu_s"] else None}
    one, two = out["one_request"]["matches_per_cpu_s"], out["two_request"]["matches_per_cpu_s"]
    out["gain_per_cpu_s"] = round(one / two, 2) if one and two else None
    if baseline is not None:
        old = out["two_baseline_request"]["matches_per_cpu_s"]
        out["gain_vs_baseline_per_cpu_s"] = round(one / old, 2) if one and old else None
    return out


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


def compare_loops(games: list[str], matches: int, baseline: str | None) -> list[dict]:
    """Part 0 of the module docstring, per game, on its own redis-server and
    servers (this code's, and ``baseline``'s when given)."""
    work = Path(tempfile.mkdtemp(prefix="lodge-arena-bench-"))
    redis, redis_url = start_redis(work)
    rows = []
    try:
        server, url = start_gunicorn(work, redis_url, workers=2, extra_env=NO_LIMITS)
        try:
            old = start_revision(baseline, work, redis_url, 2) if baseline else None
            try:
                for game in games:
                    rows.append(loops(server, url, game, matches, old))
                    print(json.dumps(rows[-1]), flush=True)
            finally:
                if old is not None:
                    stop_process(old[0], timeout=20)
        finally:
            stop_process(server, timeout=20)
    finally:
        stop_process(redis)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", nargs="*", default=[g.id for g in REGISTRY])
    parser.add_argument("--throughput-matches", type=int, default=40)
    parser.add_argument("--deals", type=int, default=100, help="duplicate deals heads-up (x2 matches)")
    parser.add_argument("--deals-4p", type=int, default=25, help="duplicate deals with 4 seats (x4 matches)")
    parser.add_argument("--loop-matches", type=int, default=20, help="matches per loop and game (one vs two requests)")
    parser.add_argument("--loops-only", action="store_true", help="only the one-vs-two-requests comparison")
    parser.add_argument("--baseline", metavar="REV", help="also the two-request loop on this git revision's server")
    args = parser.parse_args()
    report: dict = {"loops": compare_loops(args.games, args.loop_matches, args.baseline), "throughput": [],
                    "margins": []}
    if args.loops_only:
        write_report(report, "arena.json")
        return
    work = Path(tempfile.mkdtemp(prefix="lodge-arena-bench-"))
    redis, redis_url = start_redis(work)
    server = None
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
