"""``python -m bench.layers [GAME …]``: where one move's time goes, block by block.

The whole WSGI app in-process (hot paths in front, limits off) on a real
redis-server it starts; 12 scripted random 4-seat matches, up to 100 moves
each, posted with seat tokens.  Each block of the move path is wrapped in a
timer (``perf_counter_ns``, wall time of this one thread: a Redis call's
includes the server's own time) and the mean µs per move is printed, outer
blocks including their inner ones.  The wrappers add about a microsecond
each, so compare blocks, and runs of this same tool, not absolute figures
with ``make bench``.
"""
from __future__ import annotations

import argparse
import collections
import functools
import io
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.http_bench import scripted_moves
from devtools.servers import start_redis, stop_process
from engine import REGISTRY

#: (owner, attribute, depth, label): the blocks, outermost first.
BLOCKS: list[tuple[str, str, int, str]] = [
    ("service.http.routes.hot:HotPaths", "__call__", 0, "whole request (hot path)"),
    ("service.http.routes.hot:HotPaths", "_checked", 1, "path, query, headers and body checks"),
    ("service.domain.access:Access", "identify", 1, "token → viewer"),
    ("service.domain.moves:", "try_move", 1, "engine: check and apply the move"),
    ("service.domain.moves:", "server_moves", 1, "moves the server owes (bots, clocks)"),
    ("service.domain.moves:", "_move_body", 1, "response body: events, view, JSON"),
    ("service.domain.moves:", "view_of", 2, "the caller's view"),
    ("service.domain.moves:MovePipeline", "_write", 1, "write: schedule, store, metrics"),
    ("service.store.store:Store", "apply", 2, "Store.apply"),
    ("redis.commands.core:Script", "__call__", 3, "the EVALSHA round trip"),
    ("service.http.routes.hot:HotPaths", "_observe", 1, "request metrics"),
]


def _owner(spec: str) -> Any:
    module, _, cls = spec.partition(":")
    __import__(module)
    target = sys.modules[module]
    return getattr(target, cls) if cls else target


def instrument(totals: collections.Counter[str]) -> None:
    """Wrap every block in a timer adding to ``totals`` (ns by label)."""
    for spec, name, _depth, label in BLOCKS:
        owner = _owner(spec)
        setattr(owner, name, _timed(getattr(owner, name), label, totals))


def _timed(function: Callable[..., Any], label: str, totals: collections.Counter[str]) -> Callable[..., Any]:
    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter_ns()
        try:
            return function(*args, **kwargs)
        finally:
            totals[label] += time.perf_counter_ns() - started
    return run


def _caller(wsgi: Any) -> Callable[..., tuple[str, bytes]]:
    def call(method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[str, bytes]:
        environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "bench",
                   "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "http",
                   "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr, "REMOTE_ADDR": "127.0.0.1",
                   "CONTENT_LENGTH": str(len(body)), "CONTENT_TYPE": "application/json",
                   **{"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}}
        status: list[str] = []
        data = b"".join(wsgi(environ, lambda s, h, e=None: status.append(s)))
        return status[0], data
    return call


def measure(url: str, game: str, matches: int = 12, moves: int = 100) -> dict[str, float]:
    """Mean µs per move of every block, for ``game``."""
    os.environ.update(REDIS_URL=url, RATE_LIMIT_ENABLED="false", MAX_WAITS_PER_CLIENT="0")
    from service.app import create_app

    call = _caller(create_app().wsgi_app)
    posts = []
    for seed in range(matches):
        _, data = call("POST", "/v1/matches", json.dumps({"game": game, "players": 4, "seed": seed}).encode(), {})
        created = json.loads(data)
        tokens = {s["seat"]: s["token"] for s in created["seats"]}
        for version, (seat, move) in enumerate(scripted_moves(game, 4, seed)[:moves]):
            posts.append((f"/v1/matches/{created['match_id']}/moves",
                          json.dumps({"move": move, "version": version}).encode(),
                          {"Authorization": f"Bearer {tokens[seat]}"}))
    totals: collections.Counter[str] = collections.Counter()
    instrument(totals)
    try:
        for path, body, headers in posts:
            status, data = call("POST", path, body, headers)
            assert status.startswith("200"), data
    finally:
        for spec, name, _depth, _label in BLOCKS:  # unwrap, so another game starts clean
            owner = _owner(spec)
            setattr(owner, name, getattr(owner, name).__wrapped__)
    return {label: round(totals[label] / len(posts) / 1000, 1) for _, _, _, label in BLOCKS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*", default=[g.id for g in REGISTRY])
    args = parser.parse_args()
    redis, url = start_redis(Path(tempfile.mkdtemp(prefix="lodge-layers-")))
    try:
        rows = {game: measure(url, game) for game in args.games}
    finally:
        stop_process(redis)
    print("| block (µs per move, in-process) | " + " | ".join(rows) + " |")
    print("|---" * (len(rows) + 1) + "|")
    for _, _, depth, label in BLOCKS:
        print(f"| {'· ' * depth}{label} | " + " | ".join(str(rows[g][label]) for g in rows) + " |")

if __name__ == "__main__":
    main()
