"""The "Adding a game" recipe (docs/adding-a-game.md), proved: a toy game
(``tests/toy_game.py``, not shipped) registered by one line, the plugin
variable ``LODGE_EXTRA_GAMES``, passes every generic suite (conformance, leak
properties, schemas, docs, golden recordings, compaction, the HTTP suites over
all games, bots, the ``/play`` smoke test), run in a subprocess on the toy's
cases.  Nothing in those suites names the toy: they take their games from
``engine.REGISTRY``."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOY = "tests.toy_game:ToyBiberbande"
#: the generic suites: every game of the registry, nothing per game
GENERIC = ("engine/test_conformance.py", "service/test_game_schemas.py", "docs/test_docs.py",
           "engine/test_engine_golden.py", "engine/test_engine_core.py", "engine/test_engine_resign.py",
           "arena/test_arena_bot_base.py", "service/test_compaction.py", "service/test_api_all_games.py",
           "service/test_api_leaks_http.py", "service/test_api_bots.py", "live/test_play_games.py")


def _pytest(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)


def test_one_line_registers_the_toy_game() -> None:
    env = {**os.environ, "LODGE_EXTRA_GAMES": TOY}
    done = subprocess.run([sys.executable, "-c", "from engine import REGISTRY; print(REGISTRY.ids())"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert "toy-biberbande" in done.stdout, done.stderr


@pytest.mark.live
def test_the_generic_suites_pass_on_the_toy_game() -> None:
    env = {**os.environ, "LODGE_EXTRA_GAMES": TOY}
    done = _pytest(env, "-k", "toy", *(f"tests/{name}" for name in GENERIC))
    tail = done.stdout[-3000:]
    failed = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR", "E  "))]
    assert done.returncode == 0, "\n".join(failed[:40]) + "\n" + tail + done.stderr[-2000:]
    passed = re.search(r"(\d+) passed", tail)
    assert passed and int(passed.group(1)) >= 30, f"too few toy cases ran: {tail}"
