"""The README's per-game shell examples, run as printed (bash, curl, jq)
against a live server: each prints the events the README shows beside it.
(Each curl output gets a newline, so the last line is the move's reply.)"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
BLOCKS = re.findall(r"```sh\n(.*?)```", README, re.DOTALL)
SETUP = next(b for b in BLOCKS if b.lstrip().startswith("B=") and "new() {" in b)
GAME_BLOCKS = {m.group(1): b for b in BLOCKS if (m := re.match(r"new (\S+)\n", b))}

pytestmark = [pytest.mark.live,
              pytest.mark.skipif(not (shutil.which("jq") and shutil.which("curl")), reason="needs curl and jq")]


def test_every_game_has_an_example():
    assert set(GAME_BLOCKS) == {"biberbande", "biberclan", "mein-lieber-biber", "thirteen-beavers"}


def _claims(block: str) -> list[tuple[str, str]]:
    """``key:"value"`` / ``key:3`` pairs of the block's last ``# →`` line."""
    line = [ln for ln in block.splitlines() if ln.startswith("# →")][-1]
    if '"events":[' in line:  # printed JSON: compare its events whole
        events = json.loads(re.search(r'"events":(\[.*?\])', line).group(1))
        return [(k, json.dumps(v)) for e in events for k, v in e.items()]
    return [(k, v) for k, v in re.findall(r'(\w+):("[^"]*"|-?\d+|true|false|null)', line)]


@pytest.mark.parametrize("game", sorted(GAME_BLOCKS))
def test_readme_example_prints_what_it_shows(live_server: str, game: str):
    setup = SETUP.replace("B=http://127.0.0.1:8000", f"B={live_server}")
    script = 'curl() { command curl "$@"; echo; }\n' + setup + GAME_BLOCKS[game]
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.strip().splitlines()[-1])
    assert reply.get("version") == 1, reply
    events = reply["events"]
    for key, value in _claims(GAME_BLOCKS[game]):
        assert any(json.dumps(e.get(key)) == value for e in events), (key, value, events)
