"""Who plays: built-in bots, bots the server plays, and external programs.

An entrant is written ``NAME=KIND`` on the command line (``KIND`` alone names
it after the kind):

- ``random`` / ``heuristic``: a built-in bot (:mod:`bots`), run in the
  harness's process;
- ``server:random`` / ``server:heuristic``: the same bot played by the server
  (a bot seat, ``{"name": NAME, "bot": "heuristic"}`` at creation): its moves
  are made inside the request that hands it the turn;
- ``ismcts`` (or ``server:ismcts``): OpenSpiel's ISMCTS bot, always a bot seat
  (it searches the match through the engine's worlds, which only the server
  holds), so the server must enable it (``LODGE_ISMCTS_BOTS=1``, docs/ai.md);
- ``cmd:<command line>``: an external program in any language, started once
  per match and seat.  It gets ``LODGE_URL``, ``LODGE_MATCH_ID``,
  ``LODGE_SEAT`` and ``LODGE_TOKEN`` in its environment and plays through the
  HTTP API on its own until the match is finished (``arena/examples/
  external_bot.py`` is a complete one).  A leading ``python`` or ``python3``
  means the Python running the harness.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from bots import ISMCTS, KINDS

EXTERNAL = "cmd"
SERVER = "server:"


@dataclass(frozen=True)
class Entrant:
    name: str
    kind: str
    command: str | None = None

    @property
    def external(self) -> bool:
        return self.kind == EXTERNAL

    @property
    def server_bot(self) -> str | None:
        """The bot kind the server plays for this entrant (``server:KIND``), else None."""
        return self.kind[len(SERVER):] if self.kind.startswith(SERVER) else None

    def player(self) -> str | dict[str, str]:
        """This entrant in a create request's ``players``."""
        bot = self.server_bot
        return self.name if bot is None else {"name": self.name, "bot": bot}

    @classmethod
    def parse(cls, spec: str) -> Entrant:
        """``random``, ``NAME=heuristic``, ``NAME=server:heuristic`` or
        ``NAME=cmd:python mybot.py``."""
        name, sep, kind = spec.partition("=")
        if not sep:
            name, kind = spec, spec
        name = name.strip()
        if not name:
            raise ValueError(f"bot {spec!r}: the name before '=' is empty")
        if kind.startswith(EXTERNAL + ":"):
            command = kind[len(EXTERNAL) + 1:].strip()
            if not command:
                raise ValueError(f"bot {spec!r}: 'cmd:' needs a command line")
            shlex.split(command)  # ValueError on unbalanced quotes
            return cls(name, EXTERNAL, command)
        if kind == ISMCTS:
            return cls(name, SERVER + ISMCTS)
        if kind.removeprefix(SERVER) not in (*KINDS, ISMCTS):
            raise ValueError(f"bot {spec!r}: unknown kind {kind!r}; use {', '.join((*KINDS, ISMCTS))}, "
                             f"{', '.join(SERVER + k for k in KINDS)} or cmd:<command line>")
        return cls(name, kind)

    def describe(self) -> str:
        return f"{self.name}={self.kind}" + (f":{self.command}" if self.command else "")


def start_external(command: str, *, url: str, match_id: str, seat: int, token: str,
                   log: Path | None = None) -> subprocess.Popen:
    """Start an external bot for one seat; its output goes to ``log``."""
    argv = shlex.split(command)
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    env = {**os.environ, "LODGE_URL": url, "LODGE_MATCH_ID": match_id, "LODGE_SEAT": str(seat),
           "LODGE_TOKEN": token}
    with open(log, "ab") if log is not None else nullcontext(subprocess.DEVNULL) as out:
        # its own session: a Ctrl-C meant for the harness does not reach it
        return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def stop_external(proc: subprocess.Popen, grace: float = 2.0) -> None:
    """Let a bot whose match is over exit on its own, else stop it by PID."""
    try:
        proc.wait(timeout=grace)
        return
    except subprocess.TimeoutExpired:
        pass
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
