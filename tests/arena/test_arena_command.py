"""The ``lodge-arena`` console script (arena.command): the CLI's exit code,
or a clear message when the ``arena`` extra is not installed."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena import command


def test_runs_the_cli_and_returns_its_code(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "argv", ["lodge-arena", "replay", str(tmp_path / "missing.json")])
    assert command.main() == 2  # the file cannot be read


def test_the_installed_command_runs(tmp_path):
    """The console script pip installed next to this Python (pyproject.toml
    ``[project.scripts]``), run as the user runs it: its exit code and one
    line on stderr, no traceback."""
    missing = tmp_path / "missing.json"
    done = subprocess.run([Path(sys.executable).with_name("lodge-arena"), "replay", str(missing)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done
    assert done.stderr.startswith("lodge-arena: ") and str(missing) in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize("missing", ["requests", "tqdm"])  # imported with arena.cli
def test_without_the_arena_extra_says_what_to_install(monkeypatch, missing):
    assert missing in command.ARENA_PACKAGES
    for name in [m for m in sys.modules if m.startswith(("arena.", missing)) and m != "arena.command"]:
        monkeypatch.delitem(sys.modules, name)
        package, _, attribute = name.rpartition(".")
        if package in sys.modules:  # `from . import x` looks at the package's attribute first
            monkeypatch.delattr(sys.modules[package], attribute, raising=False)
    monkeypatch.setitem(sys.modules, missing, None)  # importing it now fails
    with pytest.raises(SystemExit) as stopped:
        command.main()
    assert "make install" in str(stopped.value.code) and "[arena]" in str(stopped.value.code)
