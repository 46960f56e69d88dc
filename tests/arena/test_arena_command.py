"""The ``lodge-arena`` console script (arena.command): the CLI's exit code,
or a clear message when the ``arena`` extra is not installed."""
from __future__ import annotations

import sys

import pytest

from arena import command


def test_runs_the_cli_and_returns_its_code(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["lodge-arena", "tournament", "biberbande", "--url", "http://127.0.0.1:1"])
    assert command.main() == 1  # no server answers


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
