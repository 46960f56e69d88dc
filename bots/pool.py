"""Bot decisions off the server's event loop: a small pool of worker processes.

A server bot seat decides inside the request that hands it the turn
(:func:`bots.decide`).  A cheap decision (a bot class with
:attr:`bots.base.Bot.inline`, e.g. ``random``) is made right there; one that
can take CPU for long (:func:`bots.pooled`: ``ismcts``, 13 Beavers' heuristic
bot) is sent to a worker process of this pool (``python -m bots.worker``),
one JSON line there and one back over pipes, while the request waits for the
answer without holding its worker: under gunicorn's gevent workers the pipe
waits (:func:`select.poll`) and the pool's slots (:class:`threading.Semaphore`)
are monkey-patched, so only the request's greenlet waits; elsewhere only its
thread does.

Each server process (gunicorn worker) has its own pool (:func:`shared`) of at
most ``size`` processes (``BOT_PROCESSES``), started on first need and kept
for the next decisions (a bot's per-process tables stay warm).  A decision
has a budget (:class:`Thinking`): the seat's clock deadline, or
``BOT_TIMEOUT_MS`` when that comes first.  When no slot frees in time, the
worker does not answer in time or dies (it is then killed with SIGKILL and a
replacement started at once), or the bot raises, the incident is logged in
one line and :class:`NoDecision` says why: the service then plays the seat's
fallback, as the clock would.  The same decision gives the same move here as inline:
the worker calls :func:`bots.decide` with the same arguments.

Workers end with their server process: on the end of their input pipe, and
when their parent dies, even mid-decision, even after SIGKILL (:mod:`bots.worker`).
"""
from __future__ import annotations

import logging
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

import bots

from .base import Move, View

log = logging.getLogger(__name__)

#: the settings: worker processes per server process (0: every decision
#: inline), and a decision's budget when its seat's clock leaves more
PROCESSES_SETTING, TIMEOUT_SETTING = "BOT_PROCESSES", "BOT_TIMEOUT_MS"
TIMEOUT_MS = 10_000
#: the reasons of :class:`NoDecision` (the words of ``timed_out``'s reasons)
TIMEOUT, ERROR = "timeout", "error"
#: seconds a killed worker is given to be reaped
REAP_SECONDS = 5.0


def default_processes() -> int:
    """``BOT_PROCESSES`` when unset: two, or one on a one-core machine."""
    return min(2, os.cpu_count() or 1)


def processes(env: Mapping[str, str]) -> int:
    """``BOT_PROCESSES`` from ``env`` (ValueError for anything but a whole number ≥ 0)."""
    raw = (env.get(PROCESSES_SETTING) or "").strip()
    if not raw:
        return default_processes()
    if not raw.isdigit():
        raise ValueError(f"environment variable {PROCESSES_SETTING} must be a whole number (0: decide inline), "
                         f"got {raw!r}")
    return int(raw)


class NoDecision(Exception):
    """A pooled decision that gave no move: ``reason`` :data:`TIMEOUT` or :data:`ERROR`."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason


@dataclass(frozen=True)
class Decision:
    """One server bot decision: the arguments of :func:`bots.decide`."""

    kind: str
    game: str
    seat: int
    match_seed: int
    version: int
    view: View
    moves: list[Move]
    match: Callable[[], bots.Match] | None = None

    def make(self) -> Move:
        """The decision, made here."""
        return bots.decide(self.kind, self.game, self.seat, self.match_seed, self.version, self.view,
                           self.moves, self.match)

    def to_line(self) -> bytes:
        """The decision as a worker reads it: one JSON line (the match only
        for a bot that reads it, :func:`bots.reads_match`)."""
        body: dict[str, Any] = {"kind": self.kind, "game": self.game, "seat": self.seat,
                                "match_seed": self.match_seed, "version": self.version,
                                "view": self.view, "moves": self.moves}
        if self.match is not None and bots.reads_match(self.kind):
            body["match"] = self.match()
        return orjson.dumps(body) + b"\n"

    @classmethod
    def from_line(cls, line: bytes) -> Decision:
        body = orjson.loads(line)
        match = body.pop("match", None)
        return cls(**body, match=None if match is None else lambda: (match[0], match[1]))


class Worker:
    """One worker process and its two pipes (ours non-blocking)."""

    def __init__(self) -> None:
        their_input, self.input = os.pipe()
        self.output, their_output = os.pipe()
        try:
            self.process = subprocess.Popen([sys.executable, "-m", "bots.worker", str(os.getpid())],
                                            stdin=their_input, stdout=their_output, close_fds=True)
        finally:
            os.close(their_input)
            os.close(their_output)
        os.set_blocking(self.input, False)
        os.set_blocking(self.output, False)
        self.buffer = b""

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def ask(self, line: bytes, until: float) -> bytes:
        """Send ``line``, return the answer's line; TimeoutError at
        ``until`` (monotonic), EOFError when the process is gone."""
        self._send(memoryview(line), until)
        while b"\n" not in self.buffer:
            self._wait(self.output, select.POLLIN, until)
            try:
                chunk = os.read(self.output, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                raise EOFError("the worker process ended")
            self.buffer += chunk
        answer, _, self.buffer = self.buffer.partition(b"\n")
        return answer

    def _send(self, data: memoryview, until: float) -> None:
        while data:
            self._wait(self.input, select.POLLOUT, until)
            try:
                data = data[os.write(self.input, data):]
            except BlockingIOError:
                continue
            except BrokenPipeError:
                raise EOFError("the worker process ended") from None

    @staticmethod
    def _wait(fd: int, events: int, until: float) -> None:
        """Wait until ``fd`` is ready (or closed), cooperatively under gevent."""
        left = until - time.monotonic()
        poller = select.poll()
        poller.register(fd, events)
        if left <= 0 or not poller.poll(left * 1000):
            raise TimeoutError

    def kill(self) -> None:
        """End the process now (it may be mid-decision) and close the pipes."""
        if self.alive:
            self.process.kill()
        try:
            self.process.wait(REAP_SECONDS)
        except subprocess.TimeoutExpired:  # reaped later by the interpreter
            pass
        os.close(self.input)
        os.close(self.output)


class Pool:
    """At most ``size`` worker processes, each deciding one decision at a time."""

    def __init__(self, size: int):
        if size < 1:
            raise ValueError("a pool needs at least one process")
        self.size = size
        self.slots = threading.BoundedSemaphore(size)
        self.idle: list[Worker] = []
        self.lock = threading.Lock()

    def decide(self, decision: Decision, seconds: float) -> Move:
        """The move of ``decision`` made by a worker within ``seconds`` (a
        free slot included); :class:`NoDecision` otherwise, after killing
        the worker that did not answer."""
        if seconds <= 0:  # the seat's deadline has passed already: no process is disturbed
            raise self._no(TIMEOUT, "no time left before the seat's deadline", decision)
        until = time.monotonic() + seconds
        line = decision.to_line()
        if not self.slots.acquire(timeout=seconds):
            raise self._no(TIMEOUT, f"no bot process free within {seconds * 1000:.0f} ms", decision)
        worker: Worker | None = None
        try:
            worker = self._worker()
            answer = orjson.loads(worker.ask(line, until))
        except TimeoutError:
            raise self._no(TIMEOUT, f"no move within {seconds * 1000:.0f} ms", decision, worker) from None
        except (EOFError, OSError, ValueError) as exc:  # it died, could not start, or garbled its answer
            raise self._no(ERROR, f"the bot process failed ({exc})", decision, worker) from None
        except BaseException:  # the request itself was stopped (gevent.Timeout, a signal): the worker may be busy
            self._discard(worker)
            raise
        else:
            self._put(worker)
            if "error" in answer:  # the bot raised: a bug, the process is fine
                raise self._no(ERROR, f"the bot failed:\n{answer['error']}", decision)
            move: Move = answer["move"]
            return move
        finally:
            self.slots.release()

    def _worker(self) -> Worker:
        """An idle live worker, or a new one (one crashed while idle is dropped)."""
        with self.lock:
            while self.idle:
                worker = self.idle.pop()
                if worker.alive:
                    return worker
                worker.kill()
        return Worker()

    def _put(self, worker: Worker) -> None:
        with self.lock:
            self.idle.append(worker)

    @staticmethod
    def _discard(worker: Worker | None) -> None:
        if worker is not None:
            worker.kill()

    def _no(self, reason: str, detail: str, decision: Decision, worker: Worker | None = None) -> NoDecision:
        """Kill ``worker`` (if any) and start its replacement, so the next
        decision finds one ready; log the incident once, and say why."""
        self._discard(worker)
        if worker is not None:
            self._replace()
        pid = f" (process {worker.process.pid}, killed)" if worker is not None else ""
        log.warning("bot %s deciding for seat %d of a %s match at version %d: %s%s; the seat plays its fallback",
                    decision.kind, decision.seat, decision.game, decision.version, detail, pid)
        return NoDecision(reason, detail)

    def _replace(self) -> None:
        """A new idle worker (it loads while nobody waits for it); none when
        no process can be started now (the next decision tries again)."""
        try:
            self._put(Worker())
        except OSError as exc:
            log.warning("starting a bot process failed: %s", exc)

    def close(self) -> None:
        """Kill the idle workers (busy ones end with their decision's request)."""
        with self.lock:
            idle, self.idle = self.idle, []
        for worker in idle:
            worker.kill()


_SHARED: dict[tuple[int, int], Pool] = {}


def shared(size: int) -> Pool | None:
    """This process's pool of ``size`` workers (None for 0: decide inline);
    one per process, so the apps a process builds (tests) share it, and a
    forked child gets its own."""
    if size <= 0:
        return None
    key = (os.getpid(), size)
    if key not in _SHARED:
        _SHARED[key] = Pool(size)
    return _SHARED[key]


@dataclass(frozen=True)
class Thinking:
    """Where the server's bot seats decide: in ``pool`` (None: inline, as
    ``BOT_PROCESSES=0``), within ``timeout_ms`` or the seat's deadline."""

    pool: Pool | None = None
    timeout_ms: int = TIMEOUT_MS

    def decide(self, decision: Decision, deadline_ms: int | None = None) -> Move:
        """The move of ``decision``: inline when its bot is cheap
        (:func:`bots.pooled`) or there is no pool, else by the pool within
        the budget: ``timeout_ms``, or until ``deadline_ms`` (the seat's
        clock deadline, epoch ms) when that is sooner.  :class:`NoDecision`
        when the pool gave no move."""
        if self.pool is None or not bots.pooled(decision.kind, decision.game):
            return decision.make()
        budget_ms = self.timeout_ms if deadline_ms is None else min(self.timeout_ms,
                                                                     deadline_ms - int(time.time() * 1000))
        return self.pool.decide(decision, budget_ms / 1000)


#: every decision inline (``BOT_PROCESSES=0``)
INLINE = Thinking()
