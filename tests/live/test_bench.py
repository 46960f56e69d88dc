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


def test_balance_bench_reports_the_winners_avenue_share(capsys: pytest.CaptureFixture[str]) -> None:
    """``make bench-balance`` (a short run): a winner "takes the avenue" when the seat that
    reached Paradise (TB-6.1) moved by an exact avenue answer (TB-4.8); the interval is
    Wilson's.  On ``standard`` the heuristic winner always takes it (D3); on ``balanced``
    (TB-1.7, D17) some winners do and some do not."""
    from bench import thirteen_beavers_balance as balance

    assert balance.wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert balance.wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert balance.main(["--board", "standard", "--matches", "4"]) == 0
    assert "the winner took the avenue in 4/4 = 100.0%" in capsys.readouterr().out
    game = REGISTRY.get("thirteen-beavers")
    assert game is not None
    races = [balance.play(game, "balanced", "heuristic", 2, match, None) for match in range(12)]
    taken = [race.winner in race.avenue_taken for race in races]
    assert all(race.winner is not None for race in races) and any(taken) and not all(taken)
