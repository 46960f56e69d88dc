"""Bot seats that think for long do it off the event loop (bots/pool.py), on
real gunicorn with one gevent worker: while a bot burns CPU for seconds,
``/healthz`` and another match's moves are answered; a bot whose seat's
clock runs out first gets its fallback; the bot processes end with the
server.  The bot is the tests' ``spin`` (tests/slow_bot.py), which marks
when each decision starts and ends, so the checks compare the order of
events, not durations."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

import bots
from devtools.servers import stop_process, worker_pids
from tests import slow_bot
from tests.conftest import start_gunicorn
from tests.service.test_bot_pool import gone, wait_for

pytestmark = pytest.mark.live

SPIN_SECONDS = 3


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Any]]:
    """One gevent worker (so a stall would hold every request) on the
    embedded store, its bots' marks in a directory: (base URL, marks, process)."""
    marks = tmp_path_factory.mktemp("spin-marks")
    proc, base = start_gunicorn(tmp_path_factory.mktemp("gunicorn"), None, workers=1,
                                extra_env={bots.EXTRA_BOTS: slow_bot.KINDS, "LODGE_SPIN_DIR": str(marks),
                                           "LODGE_SPIN_SECONDS": str(SPIN_SECONDS), "LOG_LEVEL": "warning"})
    try:
        yield base, marks, proc
    finally:
        stop_process(proc, timeout=20)


def create(base: str, players: list[Any], **body: Any) -> dict[str, Any]:
    r = requests.post(f"{base}/v1/matches", json={"game": "biberbande", "players": players, "seed": 5, **body},
                      timeout=60)
    assert r.status_code == 201, r.text
    return r.json()


def play_one(base: str, match: dict[str, Any]) -> requests.Response:
    """Seat 0 (to act) posts its first legal move: the answer."""
    auth = {"Authorization": f"Bearer {match['seats'][0]['token']}"}
    legal = requests.get(f"{base}/v1/matches/{match['match_id']}/legal-moves", headers=auth, timeout=60).json()
    move = {k: v for k, v in legal["moves"][0].items() if k != "label"}
    return requests.post(f"{base}/v1/matches/{match['match_id']}/moves", headers=auth, timeout=60,
                         json={"move": move, "version": legal["version"]})


def hand_over(base: str, match: dict[str, Any]) -> requests.Response:
    """Seat 0 plays until a move of its hands the turn on (to the bot of
    seat 1): that move's answer, which carries the bot's moves."""
    while True:
        r = play_one(base, match)
        if r.status_code != 200 or len(r.json()["events"]) > 1 or 0 not in r.json()["state"]["to_act"]:
            return r


def mark(marks: Path, what: str, match: dict[str, Any]) -> Path | None:
    """The bot's mark ``what`` (``started`` or ``finished``) in ``match``, if any."""
    return next(marks.glob(f"{what}-{match['match_id']}-*"), None)


def test_requests_are_answered_while_a_bot_thinks(server: tuple[str, Path, Any]) -> None:
    """My move hands the turn to a bot that thinks for seconds; meanwhile the
    same worker answers /healthz and another match's move, before the bot
    has finished; then my move's answer carries the bot's move."""
    base, marks, _ = server
    mine = create(base, ["me", {"name": "Spinner", "bot": "spin"}])
    other = create(base, ["ana", "bo"])
    answered: dict[str, Any] = {}
    mover = threading.Thread(target=lambda: answered.update(mine=hand_over(base, mine)))
    mover.start()
    try:
        assert wait_for(lambda: mark(marks, "started", mine), 60), "the bot never started deciding"
        assert requests.get(f"{base}/healthz", timeout=60).status_code == 200
        healthz_done = mark(marks, "finished", mine) is not None
        assert play_one(base, other).status_code == 200
        other_done = mark(marks, "finished", mine) is not None
    finally:
        mover.join(60)
    assert not healthz_done and not other_done, "the worker answered only once the bot had finished"
    assert mark(marks, "finished", mine) is not None and answered["mine"].status_code == 200, answered
    body = answered["mine"].json()
    assert any(event.get("seat") == 1 for event in body["events"]), body  # the bot's move is in it


def test_a_bot_whose_clock_runs_out_gets_its_fallback(server: tuple[str, Path, Any]) -> None:
    """With a 1 s clock the bot's budget is its deadline: it is stopped
    mid-thought and the server plays its fallback, ``by: "clock"`` after
    ``timed_out``, in the answer to the move that handed it the turn."""
    base, marks, _ = server
    match = create(base, ["me", {"name": "Spinner", "bot": "spin"}], clock={"per_move_ms": 1000})
    r = hand_over(base, match)
    assert r.status_code == 200, r.text
    assert mark(marks, "finished", match) is None
    assert {"type": "timed_out", "seat": 1} in [{k: e.get(k) for k in ("type", "seat")} for e in r.json()["events"]]
    record = requests.get(f"{base}/v1/matches/{match['match_id']}/record",
                          headers={"Authorization": f"Bearer {match['admin_token']}"}, timeout=60).json()
    assert [m.get("by") for m in record["moves"] if m["seat"] == 1][:1] == ["clock"]


def bot_processes(master: Any) -> set[int]:
    """The bot processes of the gunicorn workers of ``master``, thinking or idle."""
    found = set()
    for worker in worker_pids(master):
        for task in Path(f"/proc/{worker}/task").iterdir():
            for child in (task / "children").read_text().split():
                if b"bots.worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.add(int(child))
    return found


def test_bot_processes_end_with_the_server(server: tuple[str, Path, Any]) -> None:
    """After SIGTERM to gunicorn no bot process is left (the last test of the module: it stops the server)."""
    base, marks, proc = server
    match = create(base, ["me", {"name": "Spinner", "bot": "spin"}])
    mover = threading.Thread(target=hand_over, args=(base, match))
    mover.start()
    assert wait_for(lambda: mark(marks, "started", match), 60)
    pids = {int(mark.read_text()) for mark in marks.iterdir()} | bot_processes(proc)
    assert bot_processes(proc)  # the thinking one (and idle ones: replacements, earlier tests' workers)
    stop_process(proc, timeout=20)
    mover.join(60)
    assert wait_for(lambda: all(gone(pid) for pid in pids)), [pid for pid in pids if not gone(pid)]
