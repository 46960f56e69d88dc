"""The sweeper: plays what is due on matches nobody is requesting.

Every worker of every instance runs one (a daemon thread; a greenlet under
gunicorn's gevent workers), started by ``deploy/gunicorn.conf.py``
(``post_worker_init``) or by :func:`start`.  Every :data:`INTERVAL` seconds
it reads the entries of the schedule (:class:`service.domain.clock.Schedule`) that
are due, takes each with a lease (one script on the entry's shard: of
several sweepers reading the same entry one takes it), and lets
:meth:`service.domain.moves.MovePipeline.advance` play what is due: a timed-out seat's
fallback (``timed_out``, ``by: "clock"``) or the moves the server still owes
(bot and resigned seats beyond :data:`service.domain.moves.AUTO_MOVES`), or
starts the call of a webhook seat to act (:mod:`service.domain.webhooks`: in a
thread or greenlet of its own, so a slow webhook never holds the sweeper).  Those
moves are written by the same compare-and-set as every move, so a deadline
is enforced exactly once even if two sweepers (or a sweeper and a player)
race: the loser's write is a conflict and changes nothing.

A store that cannot be reached is logged once per outage, by
:data:`service.redis_client.outage` (a successful look at the schedule
ends it), not once per look.

A sweeper that dies holding a lease leaves the entry to the others once the
lease ends (:data:`LEASE_MS`).  A deadline is so enforced at the latest
about ``INTERVAL`` plus the time of the write after it passes while the
sweepers run.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from service.domain import clock
from service.domain.matches import Lodge
from service.http.context import EXTENSION
from service.http.errors import is_store_fault
from service.store.redis_client import outage
from service.store.store import DamagedMatch

log = logging.getLogger(__name__)

#: Seconds between two looks at the schedule.
INTERVAL = 0.2
#: How long a taken entry is left to its sweeper (ms).
LEASE_MS = 10_000
#: Entries taken per shard and look.
BATCH = 50
#: After a failure, look at the match again this much later (ms).
RETRY_MS = 1_000


class Sweeper:
    """One worker's sweeper of one :class:`Lodge`."""

    def __init__(self, lodge: Lodge, *, interval: float = INTERVAL, lease_ms: int = LEASE_MS):
        self.lodge = lodge
        self.interval = interval
        self.lease_ms = lease_ms
        self.stopped = threading.Event()
        #: A store fault happened during the current look (no "store back" after it).
        self.store_fault = False

    def sweep(self) -> int:
        """One look: play what is due; the number of entries this sweeper took."""
        schedule = self.lodge.moves.schedule
        now = clock.now_ms()
        taken = 0
        for match_id, seen in schedule.due(now, BATCH):
            lease = now + self.lease_ms
            if not schedule.claim(match_id, seen, lease):
                continue
            taken += 1
            try:
                when = self.lodge.moves.advance(match_id)
            except DamagedMatch:  # it cannot move any more (only its admin can delete it)
                log.error("match %s is damaged: dropped from the clock schedule", match_id)
                when = None
            except Exception as exc:  # a store fault or a bug: log it, keep sweeping, look again soon
                self._failed(exc, "sweeping match %s failed", match_id)
                when = clock.now_ms() + RETRY_MS
            schedule.settle(match_id, lease, when)
        return taken

    def run(self, alive: Callable[[], bool] = lambda: True) -> None:
        """Sweep every :attr:`interval` seconds while ``alive()`` and not stopped."""
        while alive() and not self.stopped.is_set():
            self.store_fault = False
            try:
                self.sweep()
            except Exception as exc:  # try again next time
                self._failed(exc, "sweeping the clock schedule failed")
            if not self.store_fault:
                outage.ok()  # every shard's schedule was read, every write of the look answered
            time.sleep(self.interval)

    def _failed(self, error: Exception, message: str, *args: Any) -> None:
        """A store fault goes to :data:`service.redis_client.outage` (one line
        per outage); anything else is a bug, logged with its traceback."""
        if is_store_fault(error):
            self.store_fault = True
            outage.failed(error)
        else:
            log.error(message, *args, exc_info=error)

    def stop(self) -> None:
        self.stopped.set()


def start(app: Any, alive: Callable[[], bool] = lambda: True) -> Sweeper:
    """Start a sweeper thread for the Flask ``app`` built by
    :func:`service.app.create_app`; it stops when ``alive()`` turns false
    or :meth:`Sweeper.stop` is called."""
    sweeper = Sweeper(app.extensions[EXTENSION])
    threading.Thread(target=sweeper.run, args=(alive,), name="lodge-sweeper", daemon=True).start()
    return sweeper
