"""``make bench-memory``: bytes in Redis per match of every game.

A real redis-server (devtools/servers.py) behind the app in process; 4-player
matches with default options, moves from seeded random playouts posted over
the API.  For a new match (version 0), an active one (half its moves played)
and a finished one (compacted), ``MEMORY USAGE`` (``SAMPLES 0``: exact) is
summed over the match's keys, without and with an ``Idempotency-Key`` on
every move; idempotency records (which expire after ``IDEMPOTENCY_TTL``) are
counted apart.  Prints a Markdown table, writes .bench/memory.json.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import redis

from bench import write_report
from devtools.servers import start_redis, stop_process
from engine import REGISTRY
from service.app import create_app
from service.ops.config import Settings
from tests.playout import play_out

PLAYERS = 4


def usage(client: redis.Redis, match_id: str) -> tuple[int, int, int]:
    """(bytes of the match's own keys, bytes of its idempotency records and
    their index, the largest record)."""
    own = idem = largest = 0
    for key in client.scan_iter(match=f"lodge:{{{match_id}}}:*", count=1000):
        size = int(client.memory_usage(key, samples=0) or 0)
        if b":idem" in key:
            idem += size
            if not key.endswith(b":idems"):
                largest = max(largest, size)
        else:
            own += size
    return own, idem, largest


def measure(client: redis.Redis, api: Any, game: str, seed: int, keyed: bool) -> dict[str, Any]:
    engine = REGISTRY.get(game)
    assert engine is not None
    moves = play_out(engine, PLAYERS, seed).moves
    r = api.post("/v1/matches", json={"game": game, "players": PLAYERS, "seed": seed})
    assert r.status_code == 201, r.get_data()
    created = r.get_json()
    mid, tokens = created["match_id"], [s["token"] for s in created["seats"]]
    row: dict[str, Any] = {"game": game, "seed": seed, "keyed": keyed, "moves": len(moves),
                           "new": usage(client, mid)[0]}
    for i, (seat, move) in enumerate(moves):
        if i == len(moves) // 2:
            row["active"], row["active_idem"], _ = usage(client, mid)
        headers = {"Authorization": f"Bearer {tokens[seat]}"}
        if keyed:
            headers["Idempotency-Key"] = f"bench-{seat}-{i}"
        r = api.post(f"/v1/matches/{mid}/moves", json={"move": move, "version": i}, headers=headers)
        assert r.status_code == 200, r.get_data()
    row["finished"], row["finished_idem"], row["largest_idem"] = usage(client, mid)
    row["compacted"] = bool(client.hexists(f"lodge:{{{mid}}}:snap", "z"))
    return row


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: per game, the range over seeds of each measure, in KB."""
    def kb(values: list[int]) -> str:
        lo, hi = min(values) / 1024, max(values) / 1024
        return f"{lo:.1f}" if round(lo, 1) == round(hi, 1) else f"{lo:.1f}–{hi:.1f}"

    lines = ["| game (4 players) | moves | new | active | finished | with a key on every move: "
             "active + records | finished + records (≤ IDEMPOTENCY_TTL) | largest record |",
             "|---|---|---|---|---|---|---|---|"]
    for game in dict.fromkeys(r["game"] for r in rows):
        plain = [r for r in rows if r["game"] == game and not r["keyed"]]
        keyed = [r for r in rows if r["game"] == game and r["keyed"]]
        moves = [r["moves"] for r in plain]
        lines.append(
            f"| {game} | {min(moves)}–{max(moves)} | {kb([r['new'] for r in plain])} | "
            f"{kb([r['active'] for r in plain])} | {kb([r['finished'] for r in plain])} | "
            f"{kb([r['active'] + r['active_idem'] for r in keyed])} | "
            f"{kb([r['finished'] + r['finished_idem'] for r in keyed])} | "
            f"{max(r['largest_idem'] for r in keyed)} B |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=3, help="matches per game and mode")
    args = parser.parse_args()
    proc, url = start_redis(Path(tempfile.mkdtemp(prefix="lodge-bench-memory-")))
    try:
        client = redis.Redis.from_url(url)
        settings = Settings.from_env({"REDIS_URL": url, "RATE_LIMIT_ENABLED": "false"})
        api = create_app(redis_client=client, settings=settings).test_client()
        rows = [measure(client, api, game.id, seed, keyed)
                for game in REGISTRY for keyed in (False, True) for seed in range(1, args.seeds + 1)]
    finally:
        stop_process(proc)
    print(table(rows))
    assert all(r["compacted"] for r in rows), "a finished match was not compacted"
    write_report({"rows": rows, "table": table(rows)}, "memory.json")


if __name__ == "__main__":
    main()
