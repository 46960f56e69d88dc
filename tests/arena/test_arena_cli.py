"""``lodge-arena`` without friction: ``LODGE_URL``, a "no server" message
that names ``--url``/``LODGE_URL``, and replays of missing or malformed
files refused in one line (exit 2, no traceback).

The CLI runs in-process (:func:`arena.cli.main`); the installed command
itself is run as a program in ``test_arena_command.py``."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from arena import cli
from arena import client as client_module
from arena.client import DEFAULT_URL
from tests.conftest import closed_port


@pytest.fixture
def retry_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The client's pauses between retries, noted instead of slept (against
    a closed port its five retries would wait 3.1 s)."""
    waits: list[float] = []
    monkeypatch.setattr(client_module, "time", SimpleNamespace(sleep=waits.append))
    return waits


def test_url_defaults_to_lodge_url(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("LODGE_URL", raising=False)
    assert cli.parser().parse_args(["play", "biberbande"]).url == DEFAULT_URL
    monkeypatch.setenv("LODGE_URL", "http://127.0.0.1:9999")
    for argv in (["play", "biberbande"], ["tournament", "biberclan"], ["replay", "x.json"]):
        assert cli.parser().parse_args(argv).url == "http://127.0.0.1:9999"
    assert cli.parser().parse_args(["play", "biberbande", "--url", "http://h:1"]).url == "http://h:1"


def test_no_server_names_url_and_lodge_url(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                           retry_waits: list[float]):
    url = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("LODGE_URL", url)
    assert cli.main(["play", "biberbande"]) == 1
    assert retry_waits, "the client tries again before it gives up"
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and url in lines[0] and "--url" in lines[0] and "LODGE_URL" in lines[0], lines


@pytest.mark.parametrize("content", [None, b"{not json", b"[1, 2]", b'{"game": "biberbande"}'])
def test_replay_of_a_bad_file_says_so_in_one_line(tmp_path: Path, content: bytes | None,
                                                   monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "match.json"
    if content is not None:
        path.write_bytes(content)
    monkeypatch.setenv("LODGE_URL", f"http://127.0.0.1:{closed_port()}")
    assert cli.main(["replay", str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lodge-arena: ") and str(path) in lines[0], lines
    expected = "cannot read" if content is None else ("not JSON" if content == b"{not json" else "not a match record")
    assert expected in lines[0]
