"""Bots for the tests of the bot worker processes (bots/pool.py), plugged in
like any extra bot kind: ``LODGE_EXTRA_BOTS=`` :data:`KINDS`.

* ``spin``: thinks by burning CPU (a busy loop that never yields, like a
  search) for the view's ``spin_seconds`` (a unit test's own view), else
  ``LODGE_SPIN_SECONDS`` (default 4), then plays the first listed move.
  With ``LODGE_SPIN_DIR`` set it marks there when it starts and ends each
  decision (``started-<match>-<version>``, ``finished-…``, holding its
  pid), so a test can tell what happened while it thought;
* ``crash``: its process dies mid-decision;
* ``fail``: raises, as a buggy bot would.

None is :attr:`~bots.base.Bot.inline`: the server sends them to its pool.
:func:`decision` asks one of them (this module imports only the bots'
code: the tests' parent processes start quickly with it).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from bots import pool as bot_pool
from bots.base import Bot, Move, View

KINDS = "spin=tests.slow_bot:SpinBot,crash=tests.slow_bot:CrashBot,fail=tests.slow_bot:FailBot"


def decision(kind: str, version: int = 0, spin: float = 0) -> bot_pool.Decision:
    """A decision for one of these bots (they read only the view's
    version and ``spin_seconds``, and the moves)."""
    return bot_pool.Decision(kind, "biberbande", 0, 1, version,
                             {"match_id": "m", "version": version, "spin_seconds": spin}, [{"type": "pass"}])


def mark(what: str, view: View) -> None:
    """Write ``<what>-<match>-<version>`` (this pid) into ``LODGE_SPIN_DIR``, if set."""
    where = os.environ.get("LODGE_SPIN_DIR")
    if where:
        name = f"{what}-{view.get('match_id', 'none')}-{view['version']}"
        (Path(where) / name).write_text(str(os.getpid()))


class SpinBot(Bot):
    inline = False

    def choose(self, view: View | None, moves: list[Move]) -> Move:
        view = self.seen(view)
        mark("started", view)
        end = time.monotonic() + float(view.get("spin_seconds", os.environ.get("LODGE_SPIN_SECONDS", "4")))
        while time.monotonic() < end:
            pass
        mark("finished", view)
        return moves[0]


class CrashBot(Bot):
    inline = False

    def choose(self, view: View | None, moves: list[Move]) -> Move:
        os._exit(3)


class FailBot(Bot):
    inline = False

    def choose(self, view: View | None, moves: list[Move]) -> Move:
        raise RuntimeError("this bot has a bug")
