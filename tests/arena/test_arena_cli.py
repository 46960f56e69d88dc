"""``lodge-arena`` without friction: ``LODGE_URL``, a "no server" message
that names ``--url``/``LODGE_URL``, and replays of missing or malformed
files refused in one line (exit 2, no traceback)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena import cli
from arena.client import DEFAULT_URL
from tests.conftest import closed_port


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    import os

    full_env = {k: v for k, v in os.environ.items() if k != "LODGE_URL"}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=60,
                          env=full_env, cwd=Path(__file__).resolve().parents[2])


def test_url_defaults_to_lodge_url(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("LODGE_URL", raising=False)
    assert cli.parser().parse_args(["play", "biberbande"]).url == DEFAULT_URL
    monkeypatch.setenv("LODGE_URL", "http://127.0.0.1:9999")
    for argv in (["play", "biberbande"], ["tournament", "biberclan"], ["replay", "x.json"]):
        assert cli.parser().parse_args(argv).url == "http://127.0.0.1:9999"
    assert cli.parser().parse_args(["play", "biberbande", "--url", "http://h:1"]).url == "http://h:1"


def test_no_server_names_url_and_lodge_url():
    url = f"http://127.0.0.1:{closed_port()}"
    done = _run("play", "biberbande", env={"LODGE_URL": url})
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and url in lines[0] and "--url" in lines[0] and "LODGE_URL" in lines[0], done.stderr


@pytest.mark.parametrize("content", [None, b"{not json", b"[1, 2]", b'{"game": "biberbande"}'])
def test_replay_of_a_bad_file_says_so_in_one_line(tmp_path: Path, content: bytes | None):
    path = tmp_path / "match.json"
    if content is not None:
        path.write_bytes(content)
    done = _run("replay", str(path), env={"LODGE_URL": f"http://127.0.0.1:{closed_port()}"})
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lodge-arena: ") and str(path) in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    expected = "cannot read" if content is None else ("not JSON" if content == b"{not json" else "not a match record")
    assert expected in lines[0]
