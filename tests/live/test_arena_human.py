"""``lodge-arena play GAME --bots …``: a person at the terminal against bots
the server plays, on a live server (gunicorn + real redis-server).  The
person is a pipe answering "1" to every prompt: each game's match is played
to its end; a clock that runs out first makes the server play the fallback
move and the late answer is said to be too late; a resign ends the match."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from arena import human
from arena.cli import main
from arena.client import LodgeClient
from arena.replay import replay
from devtools.servers import ROOT
from engine import REGISTRY

pytestmark = pytest.mark.live


def lodge_arena(*args: str, stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], input=stdin, capture_output=True,
                          text=True, timeout=240, cwd=ROOT)


@pytest.mark.parametrize("game", REGISTRY.ids())
def test_a_pipe_answering_1_plays_a_whole_match(live_server: str, game: str):
    done = lodge_arena("play", game, "--bots", "heuristic,random", "--url", live_server, "--seed", "3",
                       "--name", "ana", stdin="1\n" * 3000)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    prompts = out.count("your move (1…")
    assert prompts > 3 and out.count("\n  1. ") >= prompts  # every decision lists its moves from 1
    assert "ana (seat 0)" in out and "heuristic-1" in out and "random-2" in out
    assert "result: winners" in out and f"{game} match " in out and "finished" in out
    assert out.rstrip().splitlines()[-3].startswith("  1. ")  # the places, one line per seat


def test_the_person_sees_the_seats_view_and_the_bots_moves(live_server: str):
    said: list[str] = []
    answers = iter(["1"] * 3000)
    with LodgeClient(live_server) as lodge:
        final = human.play(lodge, human.Table(game="biberbande", bots=["heuristic"], seed=8,
                                              options={"rounds": 1}),
                           ask=lambda prompt: next(answers), say=said.append)
        record = lodge.record(final["match_id"])
    assert final["status"] == "finished" and final["viewer"] == {"role": "seat", "seat": 0}
    assert {m["by"] for m in record["moves"] if m["seat"] == 1} == {"bot"}
    assert all("by" not in m for m in record["moves"] if m["seat"] == 0)
    shown = "\n".join(said)
    assert "heuristic-1 (seat 1)" in shown and "· heuristic-1 (seat 1): " in shown  # the bot's events
    assert "known=" in shown  # the seat's view (perfect recall), not the spectator's
    assert human.summary(final)[0].startswith("  1. ")


def test_a_late_answer_gets_the_clocks_fallback(live_server: str):
    said: list[str] = []
    calls = {"n": 0}

    def slow_first(prompt: str) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            time.sleep(2.5)  # the clock is 1 s; the server plays the fallback within 1 s of the deadline
        return "1"

    with LodgeClient(live_server) as lodge:
        final = human.play(lodge, human.Table(game="mein-lieber-biber", bots=["random"], seed=2, clock=1.0,
                                              options={"rounds": 1}),
                           ask=slow_first, say=said.append)
        record = lodge.record(final["match_id"])
    assert "   too late: the clock played your fallback move" in said
    assert record["moves"][0]["by"] == "clock" and record["moves"][0]["seat"] == 0
    assert any(line.startswith("   clock: ") and line.endswith(" s left") for line in said)


def test_resign_ends_the_match(live_server: str, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr("builtins.input", lambda prompt: "resign")
    assert main(["play", "biberclan", "--bots", "random", "--url", live_server, "--name", "ana"]) == 0
    out = capsys.readouterr().out
    assert "· ana (seat 0): resigned" in out and "result: winners random-1" in out
    assert out.rstrip().splitlines()[-1].startswith("  2. ana (seat 0)")


def test_a_resigned_match_replays(live_server: str):
    """With two bots left the match goes on: the server plays the resigned
    seat's fallbacks ("by": "resigned"), and the record replays to the same result."""
    answers = iter(["1", "1", "resign"])
    with LodgeClient(live_server) as lodge:
        final = human.play(lodge, human.Table(game="thirteen-beavers", bots=["random", "heuristic"], seed=4),
                           ask=lambda prompt: next(answers), say=lambda line: None)
        record = lodge.record(final["match_id"])
        assert {m["by"] for m in record["moves"] if m["seat"] == 0 and "by" in m} == {"resigned"}
        assert final["result"]["ranking"][-1] == [0] and replay(lodge, record) == final["result"]


def test_input_that_ends_early_leaves_the_match(live_server: str):
    done = lodge_arena("play", "biberbande", "--bots", "random", "--url", live_server, stdin="1\n")
    assert done.returncode == 130 and "stays on the server" in done.stderr and "Traceback" not in done.stderr


def test_bots_and_bot_do_not_mix(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit):
        main(["play", "biberbande", "--bots", "random", "--bot", "a=random"])
    assert "do not mix" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["play", "biberbande", "--bots", "random,grandmaster"])
    assert "unknown kind 'grandmaster'" in capsys.readouterr().err
