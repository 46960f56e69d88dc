"""A small tournament of every game against a live server (gunicorn + real
redis-server): random and heuristic bots, the shipped external example bot
and an external bot that sleeps past the move timeout (the server's clock
plays for it), in duplicate mode; and one with a bot the server plays
(``server:heuristic``).  It must run to completion and its results must add
up; every kept record replays to the same result.  Also the ``lodge-arena``
commands end to end."""
from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import orjson
import pytest

from arena import results, tournament
from arena.cli import main
from arena.client import LodgeClient
from arena.entrants import Entrant
from arena.replay import replay
from devtools.servers import ROOT
from engine import REGISTRY
from tests.conftest import closed_port

pytestmark = pytest.mark.live

EXAMPLE_BOT = ROOT / "arena" / "examples" / "external_bot.py"
SLEEPY_BOT = ROOT / "tests" / "bots" / "sleepy_bot.py"
#: The 13 Beavers heuristic's slowest decision takes about 0.6 CPU-s (its plan of
#: the river), its first in a process about 1.2 CPU-s (the plans are cached),
#: twice that with two matches thinking at once; with 1 s it was timed out on a
#: loaded two-core machine.  The server's clock also counts the requests around
#: the decision (from the move that handed the seat its turn): with 2 s and 3 s
#: the first decision timed out on that machine.
MOVE_TIMEOUT = 5.0
#: The sleepy bot's slow decisions: past the deadline and the sweep's 1 s.
SLEEPY_SECONDS = MOVE_TIMEOUT + 2.5


def entrants() -> list[Entrant]:
    return [Entrant.parse("rand=random"), Entrant.parse("heur=heuristic"),
            Entrant.parse(f"ext=cmd:python {EXAMPLE_BOT}"),
            Entrant.parse(f"sleepy=cmd:python {SLEEPY_BOT} {SLEEPY_SECONDS} 1")]


@pytest.mark.parametrize("game", REGISTRY.ids())
def test_duplicate_tournament_adds_up(live_server: str, tmp_path: Path, game: str):
    config = tournament.TournamentConfig(game=game, entrants=entrants(), matches=4, seats=4, seed=11,
                                         parallel=2, duplicate=True, move_timeout=MOVE_TIMEOUT, url=live_server)
    run = tournament.run(config, out_dir=tmp_path, progress=False)
    outcomes = run.outcomes
    names = [e.name for e in config.entrants]

    # duplicate: one deal, one seed, every entrant once in every seat
    assert [o.index for o in outcomes] == [0, 1, 2, 3]
    assert {(o.deal, o.seed) for o in outcomes} == {(0, outcomes[0].seed)}
    for seat in range(4):
        assert sorted(o.seats[seat].entrant for o in outcomes) == sorted(names)

    # places: a valid ranking per match, winners exactly the first place
    for o in outcomes:
        places = sorted(s.place for s in o.seats)
        assert places[0] == 1 and all(p <= 4 for p in places)
        assert all(s.winner == (s.place == 1) for s in o.seats)
        assert o.result["winners"] == [s.seat for s in o.seats if s.place == 1]
        assert [s.score for s in o.seats] == o.result["scores"] and o.moves > 0
        assert o.record is None  # on disk, not in memory

    # timeouts and crashes are counted per bot
    for o in outcomes:
        per_bot = {s.entrant: s for s in o.seats}
        assert per_bot["sleepy"].timeouts >= 1, o
        assert all(s.crashes == 0 for s in o.seats), o
        assert per_bot["rand"].timeouts == per_bot["heur"].timeouts == 0

    # standings add up: matches x seats = placements
    rows = results.standings(run)
    assert sum(r.matches for r in rows) == len(outcomes) * 4
    for r in rows:
        seats = [s for o in outcomes for s in o.seats if s.entrant == r.bot]
        assert (r.matches, r.wins, r.timeouts) == (4, sum(s.winner for s in seats), sum(s.timeouts for s in seats))
        assert 0 <= r.win_low <= r.win_rate <= r.win_high <= 1 and r.sigma > 0

    # files: JSON, CSV, chart, and a record per match that replays to the same result
    paths = results.write(run, rows, tmp_path)
    summary = orjson.loads(paths["json"].read_bytes())
    assert summary["matches"] == 4 and len(summary["standings"]) == 4
    assert len(list(csv.DictReader(paths["csv"].open()))) == 4
    assert len(list(csv.DictReader(paths["matches"].open()))) == 4 * 4
    assert paths["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    kept = list(tournament.iter_records(tmp_path))
    assert [k["match"] for k in kept] == [0, 1, 2, 3]
    with LodgeClient(live_server) as lodge:
        for k, o in zip(kept, outcomes):
            assert k == o.to_json() | {"record": k["record"]}
            assert len(k["record"]["moves"]) == o.moves and k["record"]["result"] == o.result
            assert replay(lodge, k["record"]) == o.result
    assert (tmp_path / "logs").is_dir()

    # the timeouts are the server clock's moves (--move-timeout is clock.per_move_ms)
    for k in kept:
        assert k["record"]["clock"] == {"per_move_ms": round(MOVE_TIMEOUT * 1000)}
        clocked = Counter(m["seat"] for m in k["record"]["moves"] if m.get("by") == "clock")
        assert clocked == {s["seat"]: s["timeouts"] for s in k["seats"] if s["timeouts"]}, k["seats"]


@pytest.mark.parametrize("game", REGISTRY.ids())
def test_server_bots_enter_like_any_bot(live_server: str, tmp_path: Path, game: str):
    """server:heuristic beside an in-process heuristic, random and the
    external example bot: seated by rotation, rated, counted, replayed."""
    config = tournament.TournamentConfig(
        game=game, entrants=[Entrant.parse("srv=server:heuristic"), *entrants()[:3]], matches=4, seats=4, seed=3,
        parallel=2, duplicate=True, move_timeout=30, url=live_server)
    run = tournament.run(config, out_dir=tmp_path, progress=False)
    assert len(run.outcomes) == 4
    for seat in range(4):
        assert sorted(o.seats[seat].entrant for o in run.outcomes) == ["ext", "heur", "rand", "srv"]
    rows = {r.bot: r for r in results.standings(run)}
    assert rows["srv"].kind == "server:heuristic" and rows["srv"].matches == 4
    assert sum(r.wins for r in rows.values()) >= 4 and all(r.timeouts == r.crashes == 0 for r in rows.values())
    kept = list(tournament.iter_records(tmp_path))
    with LodgeClient(live_server) as lodge:
        for k in kept:
            srv = next(s["seat"] for s in k["seats"] if s["entrant"] == "srv")
            assert {m.get("by") for m in k["record"]["moves"] if m["seat"] == srv} == {"bot"}
            assert all("by" not in m for m in k["record"]["moves"] if m["seat"] != srv)
            assert replay(lodge, k["record"]) == k["result"]
    summary = orjson.loads(results.write(run, results.standings(run), tmp_path)["json"].read_bytes())
    assert "srv=server:heuristic" in summary["config"]["entrants"]


def test_cli_tournament_play_and_replay(live_server: str, tmp_path: Path, capsys):
    out = tmp_path / "run"
    assert main(["tournament", "mein-lieber-biber", "--url", live_server, "--matches", "3", "--seed", "5",
                 "--out", str(out), "--quiet", "--bot", "ana=random", "--bot", "bo=heuristic"]) == 0
    printed = capsys.readouterr().out
    assert "mein-lieber-biber: 3 matches" in printed and "win rate (95% CI)" in printed
    assert "ana" in printed and "bo" in printed
    assert (out / "ratings.png").exists() and len(list((out / "records").glob("*.json"))) == 3

    assert main(["replay", *map(str, sorted((out / "records").glob("*.json"))), "--url", live_server]) == 0
    assert capsys.readouterr().out.count("same result") == 3

    assert main(["play", "thirteen-beavers", "--url", live_server, "--seed", "2",
                 "--bot", "ana=heuristic", "--bot", "bo=random"]) == 0
    printed = capsys.readouterr().out
    assert "── version 0 " in printed and "result: winners" in printed and "1. " in printed


def test_cli_errors_say_what_is_wrong(live_server: str, capsys):
    assert main(["tournament", "chess", "--url", live_server, "--quiet"]) == 2
    assert "game_not_found" in capsys.readouterr().err
    assert main(["tournament", "biberbande", "--url", live_server, "--quiet", "--bot", "a=random",
                 "--bot", "a=heuristic"]) == 2
    assert "names must differ" in capsys.readouterr().err
    assert main(["tournament", "biberbande", "--url", live_server, "--quiet", "--bot", "a=random"]) == 2
    assert "--seats is 1" in capsys.readouterr().err
    assert main(["play", "biberbande", "--url", f"http://127.0.0.1:{closed_port()}"]) == 1
    assert "make run" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["tournament", "biberbande", "--bot", "a=grandmaster"])


def test_ctrl_c_keeps_the_matches_that_ended(live_server: str, tmp_path: Path):
    """SIGINT (Ctrl-C) mid-tournament: the matches under way finish, the
    results of every ended match are written, the exit code is 130."""
    out = tmp_path / "run"
    harness = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "tournament", "biberbande", "--url", live_server, "--matches", "500",
         "--parallel", "1", "--out", str(out), "--quiet", "--bot", "a=random",
         "--bot", f"b=cmd:python {EXAMPLE_BOT}"], cwd=ROOT, stdout=subprocess.PIPE, text=True,
        start_new_session=True)
    deadline = time.monotonic() + 60
    while len(list((out / "records").glob("*.json"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(harness.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole foreground group
    printed, _ = harness.communicate(timeout=60)
    assert harness.returncode == 130, printed
    kept = len(list((out / "records").glob("*.json")))
    summary = orjson.loads((out / "results.json").read_bytes())
    assert summary["interrupted"] and 2 <= summary["matches"] == kept < 500
    assert f"the {kept} matches that ended" in printed
    assert all(s["crashes"] == 0 for o in summary["outcomes"] for s in o["seats"])  # the bot was not interrupted
