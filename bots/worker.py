"""A bot worker process of :mod:`bots.pool`: ``python -m bots.worker PARENT_PID``.

Reads one decision per line on standard input (:meth:`bots.pool.Decision.to_line`)
and writes one JSON line per decision: ``{"move": …}``, or ``{"error": "…"}``
with the traceback when the bot raised.  Anything else the process prints
goes to standard error (the server's log), never into the answers.

It ends with its server process: at the end of its input (the server closed
the pipe or exited), and, since a decision may run for a while, a watcher
thread ends it as soon as its input hangs up (the server's end of the pipe
closes when the server exits, SIGKILL included), or within
:data:`WATCH_SECONDS` once its parent is gone while a copy of that end lives
on elsewhere (the parent's pid, given as the argument, is no longer its parent).
It runs at a lower CPU priority (:data:`NICENESS`) than the server, so
requests and streams get the CPU first when both want it.  Ctrl-C in the
terminal of ``make run`` is the server's to handle: this process ignores it
and ends with the server.
"""
from __future__ import annotations

import os
import select
import signal
import sys
import threading
import traceback
from typing import Any

import orjson

from bots.pool import Decision

#: seconds between two looks at the parent
WATCH_SECONDS = 0.5
#: added to the process's nice value: the server's requests go first
NICENESS = 5


def watch(parent: int) -> None:
    """End this process as soon as its input hangs up or ``parent`` is no
    longer its parent.  The hang-up is read without reading the input
    (``poll`` reports it whatever events are asked for)."""
    hangup = select.poll()
    hangup.register(sys.stdin.fileno(), 0)
    while os.getppid() == parent and not hangup.poll(WATCH_SECONDS * 1000):
        pass
    os._exit(0)


def answer(line: bytes) -> bytes:
    """The answer to one decision's line."""
    reply: dict[str, Any]
    try:
        reply = {"move": Decision.from_line(line).make()}
    except Exception:  # the bot's bug: reported to the server, which logs it and plays the fallback
        reply = {"error": traceback.format_exc()}
    return orjson.dumps(reply) + b"\n"


def main() -> None:
    parent = int(sys.argv[1])
    threading.Thread(target=watch, args=(parent,), name="watch-parent", daemon=True).start()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(NICENESS)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print goes to the log
    for line in sys.stdin.buffer:
        answers.write(answer(line))
        answers.flush()


if __name__ == "__main__":
    main()
