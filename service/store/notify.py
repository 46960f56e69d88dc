"""Change notifications: one Redis subscription per process wakes the waiters.

A move and a delete announce the match's new version on its channel
(:attr:`service.store.keys.Keys.changed`, inside the match's hash tag) with
``SPUBLISH`` from the very script that wrote them, so a move costs no extra
round trip.  ``SPUBLISH``/``SSUBSCRIBE`` are sharded pub/sub: on a Redis
Cluster a message only travels to the shard that owns the match's slot; on a
single Redis 7 (or fakeredis) they behave like ``PUBLISH``/``SUBSCRIBE``.
On a cluster a move publishes only when the shard's primary has a subscriber
to the channel (:mod:`service.store.keys`): this notifier subscribes there.

Each process keeps ONE pub/sub connection (:class:`Notifier`), subscribed to
the channels of the matches that somebody in the process waits on (a stream
or a long-poll, see :meth:`Notifier.watch`), and unsubscribed when the last
waiter of a match leaves.  A notification only says "look again": waiters
re-read the store, so none can be lost for good:

* a channel's subscription, once confirmed, wakes its waiters (a move between
  their first read and the subscription is seen by that re-read);
* after the connection is lost and made again, every waiter is woken;
* every ``safety`` seconds the process reads the current version of every
  watched match in one pipelined round trip and wakes the waiters that are
  behind, or whose match is gone (an expiry publishes nothing).

An idle waiter costs no Redis command of its own: the safety check is one
command per watched match and process.  ``get_sharded_message`` is the
standalone client's ``get_message``; on a ``RedisCluster`` it reads the
per-shard connections of redis-py's ``ClusterPubSub`` in turn.  The listener is a thread, which under
gunicorn's gevent worker (monkey-patched) is a greenlet.
"""
from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import redis

from service.store.keys import Keys
from service.store.redis_client import outage

log = logging.getLogger(__name__)

#: Reads the current version of each match (None: gone), in one round trip.
Versions = Callable[[list[str]], list[int | None]]

#: Every notifier of this process, for :func:`close_all` at shutdown.
_NOTIFIERS: weakref.WeakSet[Notifier] = weakref.WeakSet()


class Waiter:
    """One waiting request: woken when its match may have changed."""

    __slots__ = ("match_id", "seen", "_event", "__weakref__")

    def __init__(self, match_id: str):
        self.match_id = match_id
        #: The newest version this waiter has read (the safety check wakes it
        #: when the store is ahead).
        self.seen = -1
        self._event = threading.Event()

    def wait(self, timeout: float) -> bool:
        """Sleep until woken or ``timeout`` seconds pass; True when woken.

        Re-read the store after it returns True: a wake-up that comes while
        the caller reads is kept for the next call, never lost.  Only a
        wake-up that was seen is cleared (clearing after a timeout could drop
        one that came just after it)."""
        woken = self._event.wait(max(timeout, 0.0))
        if woken:
            self._event.clear()
        return woken

    def wake(self) -> None:
        self._event.set()


class Notifier:
    """The process's subscription to match changes (started on first use)."""

    def __init__(self, client: Any, versions: Versions, *, safety: float = 5.0, poll: float = 0.05,
                 linger: float = 30.0):
        self._client = client
        self._versions = versions
        self.safety = safety
        self._poll = poll
        self._linger = linger
        self._lock = threading.Lock()
        self._changed = threading.Event()  # the set of watched matches changed
        self._waiters: dict[str, set[Waiter]] = {}
        self._thread: threading.Thread | None = None
        #: Set at shutdown: streams end so their clients reconnect elsewhere.
        self.closing = threading.Event()
        _NOTIFIERS.add(self)

    @contextmanager
    def watch(self, match_id: str) -> Iterator[Waiter]:
        """A :class:`Waiter` for ``match_id`` while the block runs."""
        waiter = Waiter(match_id)
        with self._lock:
            self._waiters.setdefault(match_id, set()).add(waiter)
            self._changed.set()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="lodge-notify", daemon=True)
                self._thread.start()
        try:
            yield waiter
        finally:
            with self._lock:
                group = self._waiters.get(match_id)
                if group is not None:
                    group.discard(waiter)
                    if not group:
                        del self._waiters[match_id]
                        self._changed.set()

    def watched(self) -> int:
        """How many waiters there are in this process."""
        with self._lock:
            return sum(len(group) for group in self._waiters.values())

    def close(self) -> None:
        """Shutdown: mark closing and wake every waiter."""
        self.closing.set()
        self._wake(None)

    # --- the listener -------------------------------------------------------
    def _run(self) -> None:
        backoff = 0.1
        while True:
            pubsub = self._client.pubsub()
            try:
                self._listen(pubsub)
                return
            except (redis.RedisError, OSError) as exc:  # logged once per outage
                outage.failed(exc)
                log.debug("change notifications lost (%s); subscribing again in %.1f s", exc, backoff)
            except Exception:  # a bug must not leave waiters unwoken for good
                log.exception("change notifier failed; starting again")
            finally:
                _close(pubsub)
            self._wake(None)  # whatever happened meanwhile: look again
            time.sleep(backoff)
            backoff = min(backoff * 2, 2.0)

    def _listen(self, pubsub: Any) -> None:
        """Subscribe what is watched and wake on messages; return after
        ``linger`` seconds without any waiter."""
        subscribed: dict[str, str] = {}  # channel -> match id
        idle_since = time.monotonic()
        next_check = idle_since + self.safety
        while True:
            self._changed.clear()
            with self._lock:
                wanted = set(self._waiters)
                if not wanted and not subscribed and time.monotonic() - idle_since > self._linger:
                    self._thread = None  # the next watch() starts a new listener
                    return
            self._reconcile(pubsub, subscribed, wanted)
            if subscribed:
                message = pubsub.get_sharded_message(timeout=self._poll)
                if message is not None:
                    self._handle(message, subscribed)
                idle_since = time.monotonic()
            else:
                self._changed.wait(self._linger)
            if time.monotonic() >= next_check:
                self._check_versions()
                next_check = time.monotonic() + self.safety

    def _reconcile(self, pubsub: Any, subscribed: dict[str, str], wanted: set[str]) -> None:
        have = set(subscribed.values())
        new = [Keys(m).changed for m in wanted - have]
        gone = [c for c, m in subscribed.items() if m not in wanted]
        if new:
            pubsub.ssubscribe(*new)
            subscribed.update((c, c[len("lodge:{"):c.index("}")]) for c in new)
        if gone:
            pubsub.sunsubscribe(*gone)
            for channel in gone:
                del subscribed[channel]

    def _handle(self, message: dict[str, Any], subscribed: dict[str, str]) -> None:
        kind = message["type"]
        channel = message["channel"]
        channel = channel.decode() if isinstance(channel, bytes) else str(channel)
        match_id = subscribed.get(channel)
        if kind in ("smessage", "message", "ssubscribe", "subscribe") and match_id is not None:
            self._wake(match_id)  # a change, or a subscription now live: look again
        elif kind == "sunsubscribe" and match_id is not None:
            # the server dropped it (a slot moved) or we did and want it again
            del subscribed[channel]
            self._wake(match_id)

    def _check_versions(self) -> None:
        """The safety net: wake the waiters the store is ahead of."""
        with self._lock:
            behind = {m: min(w.seen for w in group) for m, group in self._waiters.items()}
        if not behind:
            return
        ids = list(behind)
        for match_id, version in zip(ids, self._versions(ids)):
            if version is None or version > behind[match_id]:
                self._wake(match_id)

    def _wake(self, match_id: str | None) -> None:
        """Wake the waiters of ``match_id`` (None: every waiter)."""
        with self._lock:
            if match_id is None:
                waiters = [w for group in self._waiters.values() for w in group]
            else:
                waiters = list(self._waiters.get(match_id, ()))
        for waiter in waiters:
            waiter.wake()


def _close(pubsub: Any) -> None:
    try:
        pubsub.close()
    except (redis.RedisError, OSError):
        pass


def close_all() -> None:
    """Shutdown of this process: every notifier's streams end now."""
    for notifier in list(_NOTIFIERS):
        notifier.close()
