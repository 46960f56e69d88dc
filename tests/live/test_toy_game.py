"""The "Adding a game" recipe (docs/adding-a-game.md), proved: a toy game
written from scratch against it (Beaver High Card, ``tests/toy_game``, not
shipped), registered by one line, the plugin variable ``LODGE_EXTRA_GAMES``,
passes every generic suite.

The suites are not listed by hand: a subprocess runs every test case of the
test tree whose id names the toy (each generic suite takes its games from
``engine.REGISTRY`` and parametrizes by game id), and this test checks that
each suite the recipe names ran at least one toy case, none failed and none
was skipped.  A new generic suite runs on the toy without a change here."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from engine.declaration import GENERIC_BOARD

ROOT = Path(__file__).resolve().parents[2]
TOY = "tests.toy_game:HighCard"
TOY_ID = "toy-high-card"
#: the generic suites the recipe names (docs/adding-a-game.md "Tests"): each
#: must run toy cases
GENERIC = ("engine/test_conformance.py", "engine/test_engine_core.py", "engine/test_engine_resign.py",
           "engine/test_engine_actions.py", "engine/test_engine_golden.py", "engine/test_worlds.py",
           "engine/test_openspiel.py", "service/test_game_schemas.py", "service/test_compaction.py",
           "service/test_api_all_games.py", "service/test_api_leaks.py", "service/test_api_leaks_http.py",
           "service/test_api_bots.py", "service/test_api_legal.py", "service/test_api_numbered.py",
           "service/test_api_stream.py", "service/test_api_worlds.py", "docs/test_docs.py",
           "arena/test_arena_bot_base.py", "live/test_play_games.py", "live/test_live_server.py",
           "live/test_arena_referee.py", "live/test_arena_tournament.py", "live/test_arena_human.py",
           "live/test_store_modes.py")


def toy_env() -> dict[str, str]:
    return {**os.environ, "LODGE_EXTRA_GAMES": TOY}


def test_one_line_registers_the_toy_game() -> None:
    """The toy names no board of its own: ``/play`` draws it with the generic one."""
    script = f"from engine import REGISTRY; print(REGISTRY.ids(), REGISTRY.games[{TOY_ID!r}].declaration.board)"
    done = subprocess.run([sys.executable, "-c", script],
                          cwd=ROOT, env=toy_env(), capture_output=True, text=True, timeout=60)
    assert TOY_ID in done.stdout and done.stdout.split()[-1] == GENERIC_BOARD, done.stdout + done.stderr


def outcomes(report: Path) -> dict[str, Counter[str]]:
    """Per test file (relative to ``tests/``), how many cases passed, failed
    (or errored) and were skipped, from a JUnit XML report."""
    per_file: dict[str, Counter[str]] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")  # tests.<dir>.test_<name>[.<class>]
        end = next(i for i, part in enumerate(parts) if part.startswith("test_"))
        path = "/".join(parts[1:end + 1]) + ".py"
        kinds = {child.tag for child in case} & {"failure", "error", "skipped"}
        per_file.setdefault(path, Counter())[kinds.pop() if kinds else "passed"] += 1
    return per_file


@pytest.mark.live
def test_the_generic_suites_pass_on_the_toy_game(tmp_path: Path) -> None:
    report = tmp_path / "toy.xml"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-k", TOY_ID, f"--junitxml={report}", "--ignore", str(Path(__file__)), "tests"],
                          cwd=ROOT, env=toy_env(), capture_output=True, text=True, timeout=3600)
    failed = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR", "E  "))]
    assert done.returncode == 0, "\n".join(failed[:40]) + "\n" + done.stdout[-3000:] + done.stderr[-2000:]
    ran = outcomes(report)
    missing = [name for name in GENERIC if not ran.get(name, Counter())["passed"]]
    assert not missing, f"generic suites without a passing toy case: {missing}"
    skipped = {name: counts["skipped"] for name, counts in ran.items() if counts["skipped"]}
    assert not skipped, f"toy cases skipped: {skipped}"
