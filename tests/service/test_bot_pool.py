"""The bot worker processes (bots/pool.py, bots/worker.py): the same move as
inline, the budget and the fallback's cause, a crashed worker replaced, and
no worker left behind when its server process dies.  The slow, crashing and
failing bots are the tests' own (tests/slow_bot.py)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fakeredis
import pytest

import bots
from bots import pool as bot_pool
from engine import REGISTRY
from engine.core import FINISHED, seat_viewer
from lodge_openspiel import available
from tests import slow_bot
from tests.slow_bot import decision

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[bot_pool.Pool]:
    """A pool of one worker that knows the tests' bots (its processes read
    the environment when they start)."""
    monkeypatch.setenv(bots.EXTRA_BOTS, slow_bot.KINDS)
    monkeypatch.setenv("LODGE_SPIN_DIR", str(tmp_path))
    made = bot_pool.Pool(1)
    yield made
    made.close()


def gone(pid: int) -> bool:
    """The process has ended, every thread of it: after a SIGKILL the main
    thread may show as a zombie while another is still being torn down, and
    only then can the process be reaped (``poll()`` sees it)."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except FileNotFoundError:
        return True
    return all(_state(task) in ("Z", "X", None) for task in tasks)


def _state(task: Path) -> str | None:
    try:
        return task.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def wait_for(check: Any, seconds: float = 20.0) -> bool:
    """Poll ``check()`` until true or ``seconds`` pass (generous: the machine is shared)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return bool(check())


def idle_pid(pool: bot_pool.Pool) -> int:
    (worker,) = pool.idle
    return worker.process.pid


def test_pooled_decisions_are_the_inline_ones() -> None:
    """13 Beavers' heuristic bot decides in the pool, and plays there exactly
    what it plays inline, decision after decision of a whole match."""
    game = REGISTRY.games["thirteen-beavers"]
    assert bots.pooled("heuristic", game.id) and not bots.pooled("random", game.id)
    thinking = bot_pool.Thinking(bot_pool.Pool(1))
    state, _, _ = game.create(["a", "b", "c"], 7, None)
    version = 0
    try:
        while game.status(state) != FINISHED and version < 60:
            seat = game.to_act(state)[0]
            view = {"version": version, **game.view(state, seat_viewer(seat))}
            made = bot_pool.Decision("heuristic", game.id, seat, 7, version, view, game.legal_moves(state, seat))
            move = thinking.decide(made)
            assert move == made.make(), version
            state, _ = game.play(state, seat, move)
            version += 1
    finally:
        assert thinking.pool is not None
        thinking.pool.close()
    assert version >= 10


@pytest.mark.skipif(not available(), reason="the openspiel extra is not installed")
def test_a_pooled_ismcts_decision_is_the_inline_one() -> None:
    """ISMCTS gets the match (state and events) in its worker and, with the
    same seed, searches to the same move as inline."""
    game = REGISTRY.games["biberbande"]
    state, events, _ = game.create(["a", "b"], 11, None)
    seat = game.to_act(state)[0]
    made = bot_pool.Decision(bots.ISMCTS, game.id, seat, 3, 0, {"version": 0}, game.legal_moves(state, seat),
                             lambda: (state, events))
    pool = bot_pool.Pool(1)
    try:
        assert pool.decide(made, 60) == made.make()
    finally:
        pool.close()


def test_a_decision_past_its_budget_is_killed_and_the_seat_falls_back(pool: bot_pool.Pool, tmp_path: Path) -> None:
    """No move within the budget: :class:`NoDecision` ``timeout``, the
    worker is killed mid-thought and replaced at once, for the next
    decision; a deadline already past asks no worker."""
    thinking = bot_pool.Thinking(pool, timeout_ms=60_000)
    assert thinking.decide(decision("spin")) == {"type": "pass"}  # started: the budget is all thinking
    spun = idle_pid(pool)
    with pytest.raises(bot_pool.NoDecision) as past:
        thinking.decide(decision("spin", 1, spin=60), deadline_ms=int(time.time() * 1000) - 1)
    assert past.value.reason == bot_pool.TIMEOUT and idle_pid(pool) == spun
    with pytest.raises(bot_pool.NoDecision) as late:  # the seat's clock comes first
        thinking.decide(decision("spin", 1, spin=60), deadline_ms=int(time.time() * 1000) + 500)
    assert late.value.reason == bot_pool.TIMEOUT
    assert int((tmp_path / "started-m-1").read_text()) == spun and not (tmp_path / "finished-m-1").exists()
    assert wait_for(lambda: gone(spun))
    replacement = idle_pid(pool)
    assert replacement != spun
    assert thinking.decide(decision("spin", 2)) == {"type": "pass"}
    assert idle_pid(pool) == replacement


def test_a_crashed_worker_is_replaced(pool: bot_pool.Pool) -> None:
    """A worker that dies mid-decision gives ``error`` (the seat falls back)
    and is replaced at once; one that died while idle is replaced before it
    is asked; a bot that raises gives ``error`` and keeps its (sound) worker."""
    assert pool.decide(decision("spin"), 60) == {"type": "pass"}
    crashing = idle_pid(pool)
    with pytest.raises(bot_pool.NoDecision) as crashed:
        pool.decide(decision("crash"), 60)
    assert crashed.value.reason == bot_pool.ERROR and gone(crashing)
    assert pool.decide(decision("spin"), 60) == {"type": "pass"}
    first = idle_pid(pool)
    assert first != crashing
    os.kill(first, signal.SIGKILL)
    assert wait_for(lambda: gone(first))
    assert pool.decide(decision("spin", 1), 60) == {"type": "pass"}
    second = idle_pid(pool)
    assert second != first
    with pytest.raises(bot_pool.NoDecision) as failed:
        pool.decide(decision("fail"), 60)
    assert failed.value.reason == bot_pool.ERROR and "this bot has a bug" in str(failed.value)
    assert idle_pid(pool) == second


def test_every_slot_busy_past_the_budget_is_a_timeout(pool: bot_pool.Pool) -> None:
    """With its one slot taken, the pool gives up at the budget without
    asking any process."""
    assert pool.slots.acquire(timeout=1)
    try:
        with pytest.raises(bot_pool.NoDecision) as late:
            pool.decide(decision("spin"), 0.05)
    finally:
        pool.slots.release()
    assert late.value.reason == bot_pool.TIMEOUT and not pool.idle


PARENT = """
import sys
from tests.slow_bot import decision
from bots import pool as bot_pool
pool = bot_pool.Pool(1)
print(pool.decide(decision("spin", spin=float(sys.argv[1])), 600), flush=True)
print(pool.idle[0].process.pid, flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("thinking", [True, False], ids=["mid-decision", "idle"])
def test_workers_end_with_their_parent(tmp_path: Path, thinking: bool) -> None:
    """A server process killed (SIGKILL: nothing of its own runs) leaves no
    worker behind, whether the worker is thinking (it notices its parent is
    gone) or idle (its input ends)."""
    env = dict(os.environ, **{bots.EXTRA_BOTS: slow_bot.KINDS, "LODGE_SPIN_DIR": str(tmp_path)})
    parent = subprocess.Popen([sys.executable, "-c", PARENT, "600" if thinking else "0"], cwd=ROOT, env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    worker = None
    try:
        started = tmp_path / "started-m-0"
        if thinking:
            assert wait_for(started.exists, 60), "the worker never started the decision"
            worker = int(started.read_text())
        else:
            assert parent.stdout is not None
            assert parent.stdout.readline().strip() == "{'type': 'pass'}"
            worker = int(parent.stdout.readline())
        assert not gone(worker)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        assert wait_for(lambda: gone(worker)), f"worker {worker} outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if worker is not None and not gone(worker):  # the failure's orphan: ours to end
            os.kill(worker, signal.SIGKILL)


def test_a_worker_ends_when_the_pid_it_was_given_is_not_its_parent() -> None:
    """The watcher's other sign, for when its input does not hang up (a copy
    of the server's end of the pipe may live on in a process the server
    forked): the pid it was given is no longer its parent (here: never was)."""
    worker = subprocess.Popen([sys.executable, "-m", "bots.worker", "-1"], cwd=ROOT, stdin=subprocess.PIPE)
    try:
        assert worker.wait(20) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        assert worker.stdin is not None
        worker.stdin.close()


def test_the_settings_choose_the_pool() -> None:
    """``BOT_PROCESSES``: a whole number (0: inline), default two at most;
    the app decides through this process's shared pool of that size."""
    from service.app import create_app
    from service.http.context import EXTENSION
    from service.ops.config import Settings

    assert bot_pool.processes({}) == min(2, os.cpu_count() or 1) >= 1
    assert bot_pool.processes({"BOT_PROCESSES": " 0 "}) == 0
    with pytest.raises(ValueError, match="BOT_PROCESSES must be a whole number"):
        bot_pool.processes({"BOT_PROCESSES": "-1"})
    settings = Settings.from_env({"BOT_PROCESSES": "3", "BOT_TIMEOUT_MS": "2500"})
    thinking = create_app(fakeredis.FakeRedis(), settings=settings).extensions[EXTENSION].thinking
    assert thinking == bot_pool.Thinking(bot_pool.shared(3), 2500) and thinking.pool is not None
    assert thinking.pool.size == 3 and not thinking.pool.idle  # no process until a decision needs one
    inline = create_app(fakeredis.FakeRedis(), settings=Settings.from_env({"BOT_PROCESSES": "0"}))
    assert inline.extensions[EXTENSION].thinking.pool is None
