"""Who plays: built-in bots, bots the server plays, and external programs.

An entrant is written ``NAME=KIND`` on the command line (``KIND`` alone names
it after the kind):

- ``random`` / ``heuristic``: a built-in bot (:mod:`bots`), run in the
  harness's process;
- ``server:random`` / ``server:heuristic``: the same bot played by the server
  (a bot seat, ``{"name": NAME, "bot": "heuristic"}`` at creation): its moves
  are made during the request that hands it the turn (a long decision in one
  of the server's bot processes, docs/operations.md);
- ``ismcts`` (or ``server:ismcts``): OpenSpiel's ISMCTS bot, always a bot seat
  (it searches the match through the engine's worlds, which only the server
  holds), so the server must enable it (``LODGE_ISMCTS_BOTS=1``, docs/ai.md);
- ``cmd:<command line>``: an external program in any language, started once
  per match and seat.  It gets ``LODGE_URL``, ``LODGE_MATCH_ID``,
  ``LODGE_SEAT`` and ``LODGE_TOKEN`` in its environment and plays through the
  HTTP API on its own until the match is finished (``arena/examples/
  external_bot.py`` is a complete one).  A leading ``python`` or ``python3``
  means the Python running the harness.
- ``webhook:<url>``: a webhook seat (1.2): the server calls the bot's HTTP
  service at ``url`` for every decision (``arena/examples/webhook_bot.py``
  is a complete one; the server's ``WEBHOOK_HOSTS`` must allow its host).
  The calls are signed with the secret in ``LODGE_WEBHOOK_SECRET`` (16…256
  characters, the same for every webhook entrant), never on the command line.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bots import ISMCTS, KINDS

EXTERNAL = "cmd"
SERVER = "server:"
WEBHOOK = "webhook"
#: The environment variable holding the webhook entrants' secret.
SECRET_ENV = "LODGE_WEBHOOK_SECRET"


@dataclass(frozen=True)
class Entrant:
    name: str
    kind: str
    command: str | None = None   # cmd: the command line; webhook: the url
    secret: str | None = field(default=None, repr=False)

    @property
    def external(self) -> bool:
        return self.kind == EXTERNAL

    @property
    def server_bot(self) -> str | None:
        """The bot kind the server plays for this entrant (``server:KIND``), else None."""
        return self.kind[len(SERVER):] if self.kind.startswith(SERVER) else None

    @property
    def server_played(self) -> bool:
        """Whether the server makes this entrant's moves (a bot or webhook seat)."""
        return self.server_bot is not None or self.kind == WEBHOOK

    def player(self, entrant_id: str | None = None) -> str | dict[str, Any]:
        """This entrant in a create request's ``players``; in a ladder match,
        as its ladder entrant ``entrant_id``."""
        seat: dict[str, Any] = {"name": self.name} if entrant_id is None else {"entrant": entrant_id}
        if self.kind == WEBHOOK:
            return {**seat, "webhook": {"url": self.command, "secret": self.secret}}
        bot = self.server_bot
        if bot is not None:
            seat["bot"] = bot
        return self.name if seat == {"name": self.name} else seat

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
        if kind.startswith(WEBHOOK + ":"):
            return cls._webhook(spec, name, kind[len(WEBHOOK) + 1:].strip())
        if kind == ISMCTS:
            return cls(name, SERVER + ISMCTS)
        if kind.removeprefix(SERVER) not in (*KINDS, ISMCTS):
            raise ValueError(f"bot {spec!r}: unknown kind {kind!r}; use {', '.join((*KINDS, ISMCTS))}, "
                             f"{', '.join(SERVER + k for k in KINDS)}, cmd:<command line> or webhook:<url>")
        return cls(name, kind)

    @classmethod
    def _webhook(cls, spec: str, name: str, url: str) -> Entrant:
        """``NAME=webhook:URL``, signed with the secret in :data:`SECRET_ENV`."""
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"bot {spec!r}: 'webhook:' needs an http:// or https:// URL")
        secret = os.environ.get(SECRET_ENV, "")
        if not 16 <= len(secret) <= 256:
            raise ValueError(f"bot {spec!r}: a webhook entrant needs {SECRET_ENV} set to its secret "
                             "(16…256 characters)")
        return cls(name, WEBHOOK, url, secret)

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
