"""``make bench``'s HTTP benchmark runs (a short one): both apps boot under
the same gunicorn configuration, answer every request, and the report
holds the ratios docs/benchmarks.md quotes.  Speed itself is never asserted here
(``make bench`` measures it)."""
from __future__ import annotations

from pathlib import Path

import pytest

from bench import http_bench
from devtools.servers import stop_process
from engine import REGISTRY
from tests.conftest import start_redis


@pytest.mark.parametrize("rate_limits", [False, True])
def test_http_bench_runs_lodge_and_the_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 rate_limits: bool):
    monkeypatch.setattr(http_bench, "WARMUP", 8)
    redis, url = start_redis(tmp_path)
    try:
        report = http_bench.run(redis, url, "biberclan", rate_limits=rate_limits, requests_per_scenario=96, rounds=2)
    finally:
        stop_process(redis)
    assert report["rate_limits"] is rate_limits
    for app in ("lodge", "reference"):
        for scenario in ("move", "view"):
            measured = report[app][scenario]
            assert measured["requests"] == 96, (app, scenario, measured)
            assert measured["server_cpu_s"] > 0 and measured["p99_ms"] >= measured["p50_ms"] > 0
    assert set(report["ratio_per_cpu_s"]) == {"move", "view"}
    assert all(ratio > 0 for ratio in report["ratio_per_cpu_s"].values())
    assert {s: len(r) for s, r in report["round_ratios"].items()} == {"move": 2, "view": 2}
    assert all(report["median_round_ratio"][s] > 0 for s in ("move", "view"))


def test_simulate_bench_runs_every_game() -> None:
    """``make bench``'s simulate part (a short run): random playouts through
    simulate and in-process for every game, with a ratio per game."""
    from bench import simulate_bench

    rows = simulate_bench.run(playouts=20, engine_moves=300)  # 20: above the CPU clock's 10 ms ticks
    assert [r["game"] for r in rows] == [g.id for g in REGISTRY]
    for row in rows:
        assert row["simulate"]["moves"] > 0 and row["simulate"]["server_cpu_s"] > 0, row
        assert row["engine_moves_per_cpu_s"] > 0 and row["ratio"] > 0, row
    assert "| biberbande |" in simulate_bench.table(rows)
