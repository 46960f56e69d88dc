"""``lodge-arena tournament --ladder``: a tournament rated on the server too,
against a live gunicorn: every match of the run is a ladder match, rated once,
and the leaderboard the CLI prints is the server's."""
from __future__ import annotations

from pathlib import Path

import orjson

from arena.cli import main
from arena.client import LodgeClient


def test_a_tournament_into_a_server_ladder(live_server: str, tmp_path: Path, capsys):
    out = tmp_path / "run"
    assert main(["tournament", "biberbande", "--url", live_server, "--matches", "4", "--seed", "3", "--quiet",
                 "--bot", "ana=heuristic", "--bot", "bo=server:random", "--options", '{"rounds": 1}',
                 "--out", str(out), "--ladder", "nightly"]) == 0
    saved = orjson.loads((out / "ladder.json").read_bytes())
    assert set(saved["entrants"]) == {"ana", "bo"}
    with LodgeClient(live_server) as lodge:
        board = lodge.ladder(saved["ladder_id"])
    assert (board["game"], board["name"], board["matches"]) == ("biberbande", "nightly", 4)
    assert [e["matches"] for e in board["entrants"]] == [4, 4]
    assert sum(e["wins"] for e in board["entrants"]) >= 4
    best = board["entrants"][0]
    assert best["rank"] == 1 and best["rating"] >= board["entrants"][1]["rating"]
    printed = capsys.readouterr().out
    assert f"server ladder {saved['ladder_id']} (nightly): 4 matches rated" in printed
    assert f"{best['rating']:.2f}" in printed
