"""The Redis client for ``REDIS_MODE``, and writes that wait for replicas.

* ``single``: ``redis.Redis`` for ``REDIS_URL`` (unset: an in-process
  fakeredis).
* ``cluster``: redis-py's ``RedisCluster`` bootstrapped from the nodes that
  ``REDIS_URL`` lists (comma-separated seeds, :func:`seeds`; credentials and
  options come from the first): it asks the first that answers for the slot
  map, so a process starts and serves while any one seed is down.  It
  follows MOVED/ASK and retries TRYAGAIN/CLUSTERDOWN and connection errors
  itself, with a fresh slot map, while the request's store budget lasts
  (:func:`may_retry`: a failover costs the requests on its shard a wait, not
  a 503, and the other shards nothing).  It is built on first use
  (:class:`LazyCluster`), because building it already talks to the cluster
  and the app must start with the store down.
* ``sentinel``: redis-py's ``Sentinel`` client for the primary named
  ``REDIS_SENTINEL_MASTER``; it asks the sentinels where the primary is and
  drops connections to a primary that became a replica (READONLY); within a
  request it tries again until the budget is spent (:class:`FailoverRetry`).

Whatever still fails after the client's own redirections and retries reaches
the web layer as a redis-py exception and is answered 503 (``service.http.errors``).

Before each command the pool checks that the connection it hands out holds
no unread reply (``can_read`` with no wait).  Under gevent redis-py answers
that with gevent's cooperative ``poll``: watchers, a timer and a trip
through the hub (three system calls, 29–52 µs on the benchmark machine) for
a question that never waits.  :class:`Parser` asks the operating system's
own ``poll`` instead (one system call, 1.5–7 µs) and leaves anything else to
redis-py: a socket that reads as ready, TLS, or a wait.  ``single`` and
``sentinel`` use it; redis-py's cluster client takes no parser setting.

Honest answers (:func:`noting_sends`): every connection this module builds
notes, for the write under way, that it reached a server (a connection was
being opened) and whether a script left for it.  A write that failed before
any script was sent was not applied (503 "nothing was changed"); once one
was sent, it may have been (:class:`service.store.WriteUnsettled`).  A
client built elsewhere notes nothing, and its failures count as "may have".

Durability (:class:`ReplicaWait`): replication in Redis is asynchronous, so a
write acknowledged by the primary alone is lost when the primary dies before
its replica got it.  With ``REDIS_WAIT_REPLICAS`` = n > 0 every write script
is followed by ``WAIT n timeout`` on the same connection (``WAIT`` counts the
replicas that have this connection's writes); fewer than n in time raises
:class:`NotReplicated` (503: the write may or may not survive a failover).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import select
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis
from gevent import monkey
from redis._parsers import _HiredisParser
from redis.backoff import ExponentialBackoff
from redis.cluster import ClusterNode
from redis.commands.core import Script
from redis.connection import parse_url
from redis.exceptions import (
    AskError,
    ClusterDownError,
    ConnectionError,
    MovedError,
    NoScriptError,
    SlotNotCoveredError,
    TimeoutError,
    TryAgainError,
)
from redis.retry import Retry
from redis.sentinel import SentinelManagedConnection

from service.ops.config import Settings

log = logging.getLogger(__name__)

#: Attempts of a cluster command after MOVED/ASK/TRYAGAIN/CLUSTERDOWN or a
#: lost node, with the slot map refreshed in between, outside a request
#: (within one: as many as its store budget allows, :func:`may_retry`).
CLUSTER_ATTEMPTS = 3
#: Seconds between two such attempts: a failover takes a cluster about
#: ``cluster-node-timeout`` plus an election, so a request polls it a few
#: times a second.
CLUSTER_PAUSE = 0.1
#: What a failover, a resharding or a lost node answers for a while: tried
#: again (the client's own loop has its list, ``RedisCluster.ERRORS_ALLOW_RETRY``).
CLUSTER_TRANSIENT = (AskError, MovedError, TryAgainError, ClusterDownError, SlotNotCoveredError,
                     ConnectionError, TimeoutError)

#: The request's store deadline (``time.monotonic()``), set by
#: :meth:`service.store.Store.budget`; None outside a request.
DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("lodge_redis_deadline", default=None)


class BudgetSpent(TimeoutError):
    """The request's store budget ran out before a command could start
    (nothing was sent; a cluster client does not retry it)."""


def check_deadline() -> None:
    """Raise :class:`BudgetSpent` once the request's deadline has passed."""
    deadline = DEADLINE.get()
    if deadline is not None and time.monotonic() >= deadline:
        raise BudgetSpent("the request's time budget for the store is spent")


def may_retry(failures: int, pause: float = CLUSTER_PAUSE) -> bool:
    """Whether a cluster command that failed ``failures`` times may be tried
    again after ``pause``: within a request while its deadline is not reached
    by then, outside one up to :data:`CLUSTER_ATTEMPTS` tries."""
    deadline = DEADLINE.get()
    if deadline is None:
        return failures < CLUSTER_ATTEMPTS
    return time.monotonic() + pause < deadline


#: The operating system's ``poll`` (``select.poll`` itself when gevent has not patched it).
_os_poll = monkey.get_original("select", "poll")


class Parser(_HiredisParser):
    """hiredis' parser whose no-wait readiness check asks the operating
    system directly (see the module docstring); redis-py's own check runs
    whenever the socket is not plainly quiet."""

    def can_read(self, timeout: float = 0) -> bool:
        if timeout == 0 and self._reader is not None and not self._reader.has_data() and _quiet(self._sock):
            return False
        return super().can_read(timeout)


def _quiet(sock: Any) -> bool:
    """Nothing to read on ``sock`` now: no TLS bytes buffered above the
    socket, and the OS reports it not readable (nor closed, nor in error)."""
    if getattr(sock, "pending", None) is not None and sock.pending():
        return False
    poller = _os_poll()
    poller.register(sock, select.POLLIN)
    return not poller.poll(0)


@dataclass
class Sends:
    """What the connections of this module did during one write
    (:func:`noting_sends`): ``noted`` one of them was used, ``script`` a
    script command (EVAL/EVALSHA) left for a server."""

    noted: bool = False
    script: bool = False

    @property
    def nothing_sent(self) -> bool:
        """Certain that no script reached a server (a client of this module said so)."""
        return self.noted and not self.script


_SENDS: contextvars.ContextVar[Sends | None] = contextvars.ContextVar("lodge_redis_sends", default=None)


def noting_sends() -> contextlib.AbstractContextManager[Sends]:
    """Note what the connections do during the block (one write)."""
    return _Noting()


class _Noting:
    """:func:`noting_sends`' block (a plain class: every write opens one)."""

    __slots__ = ("token",)

    def __enter__(self) -> Sends:
        sends = Sends()
        self.token = _SENDS.set(sends)
        return sends

    def __exit__(self, *_exc: object) -> None:
        _SENDS.reset(self.token)


class _NotesSends:
    """A connection that notes in the :class:`Sends` of the write under
    way that it was used, and when a script command is about to be written
    to the socket (after connecting: a refused connection sent nothing)."""

    def connect(self) -> None:
        sends = _SENDS.get()
        if sends is not None:
            sends.noted = True
        super().connect()  # type: ignore[misc]

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        sends = _SENDS.get()
        if sends is not None and _is_script(command):
            sends.noted = True
            if not self._sock:  # type: ignore[attr-defined]
                self.connect()
            if check_health:
                self.check_health()  # type: ignore[attr-defined]
            sends.script, check_health = True, False
        super().send_packed_command(command, check_health)  # type: ignore[misc]


def _is_script(command: Any) -> bool:
    """A packed command (or pipeline) that starts with EVAL or EVALSHA."""
    first = command if isinstance(command, (bytes, str)) else (command[0] if command else b"")
    head = first[:32].encode() if isinstance(first, str) else bytes(first[:32])
    return b"\r\nEVAL" in head.upper()


@functools.cache
def noting(connection_class: type) -> type:
    """``connection_class`` (plain, TLS, Unix socket, sentinel-managed) noting its sends."""
    return type(f"Noting{connection_class.__name__}", (_NotesSends, connection_class), {})


class Outage:
    """The store's availability as this process sees it (reachable, and
    confirming writes on replicas), logged as one warning when it is lost and
    one when it is back (with how long it was gone), not a line per failed
    request or sweep.

    :meth:`failed` is called on every store failure (a 503, a failed sweep
    or notifier subscription); :meth:`ok` when a look at the whole store
    succeeded (the clock sweeper's, every worker, several times a second),
    not after a request, which may have been served from the cache or by a
    healthy shard."""

    def __init__(self) -> None:
        self._since: float | None = None
        self._lock = threading.Lock()

    def failed(self, error: BaseException) -> None:
        with self._lock:
            first = self._since is None
            if first:
                self._since = time.monotonic()
        if first:
            log.warning("store unavailable: %s (requests that need it answer 503 until it is back)", error)
        else:
            log.debug("store still unavailable: %s", error)

    def ok(self) -> None:
        if self._since is None:
            return
        with self._lock:
            since, self._since = self._since, None
        if since is not None:
            log.warning("store available again after %.1f s", time.monotonic() - since)


#: This process's :class:`Outage`.
outage = Outage()


class NotReplicated(redis.exceptions.RedisError):
    """A write reached the primary but not ``REDIS_WAIT_REPLICAS`` replicas in time."""


class FailoverRetry(Retry):
    """The sentinel client's retry: within a request a lost primary is tried
    again, the sentinels asked anew each time, until the request's store
    budget is spent (``service.store.BudgetRetry``), so the requests during a
    failover wait for the promoted replica instead of answering 503; outside
    a request it tries as often as it is told."""


def build(settings: Settings) -> Any:
    """The client ``settings`` ask for (see the module docstring)."""
    # a reply to WAIT may take the whole wait: the socket must not give up first
    read_timeout = max(settings.redis_timeout, settings.wait_timeout_ms / 1000 + 1) \
        if settings.wait_replicas > 0 else settings.redis_timeout
    timeouts = {"socket_timeout": read_timeout, "socket_connect_timeout": settings.redis_timeout}
    # Two quick retries on connection errors cover a pooled connection that
    # went stale (Redis restart, failover); a longer outage fails fast as 503.
    # Resending a move script is safe: see the write id in ``keys.APPLY``.
    quick = ExponentialBackoff(cap=0.2, base=0.02), 2
    retry = Retry(*quick)
    if settings.redis_mode == "cluster":
        if not settings.redis_url:
            raise ValueError("REDIS_MODE=cluster needs REDIS_URL (nodes of the cluster, comma-separated)")
        return LazyCluster(seeds(settings.redis_url), **timeouts,
                           retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 3))
    if settings.redis_mode == "sentinel":
        if not settings.sentinels:
            raise ValueError("REDIS_MODE=sentinel needs REDIS_SENTINELS (host:port,...)")
        sentinel = Sentinels(list(settings.sentinels), sentinel_kwargs=timeouts, **timeouts)
        return sentinel.master_for(settings.sentinel_master, retry=FailoverRetry(*quick),
                                   health_check_interval=30,
                                   parser_class=Parser, connection_class=noting(SentinelManagedConnection))
    if settings.redis_url:
        connection_class = noting(parse_url(settings.redis_url).get("connection_class", redis.Connection))
        return redis.Redis.from_url(settings.redis_url, **timeouts, health_check_interval=30, retry=retry,
                                    parser_class=Parser, connection_class=connection_class)
    import fakeredis

    return fakeredis.FakeRedis()


class Sentinels(redis.Sentinel):
    """redis-py's ``Sentinel``, which takes no primary from a sentinel that
    is in the middle of a failover.

    redis-py reads the primary's address from ``SENTINEL MASTERS``.  The
    sentinel leading a failover keeps naming the *old* primary there (flag
    ``failover_in_progress``) until every replica has been pointed at the
    promoted one, although its ``GET-MASTER-ADDR-BY-NAME`` and the other
    sentinels already name the new primary.  Restarted meanwhile, the old
    primary answers again, empty and still a primary until the sentinels
    turn it into a replica; taken from that sentinel, it answered a move on
    a live match 404.  Such a state is skipped: the next sentinel names the
    promoted replica, and with none left the request tries again within its
    budget (:class:`FailoverRetry`)."""

    def check_master_state(self, state: dict[str, Any], service_name: str) -> bool:
        if "failover_in_progress" in str(state.get("flags", "")).split(","):
            return False
        return bool(super().check_master_state(state, service_name))


def seeds(redis_url: str) -> tuple[str, ...]:
    """The node URLs of a cluster-mode ``REDIS_URL`` (``redis://a:7000/0,redis://b:7000/0``)."""
    urls = tuple(filter(None, (part.strip() for part in redis_url.split(","))))
    for url in urls:
        if "host" not in parse_url(url):
            raise ValueError(f"REDIS_URL: a cluster node must be redis://host:port, got {url!r}")
    return urls


class LazyCluster:
    """A ``RedisCluster`` built on first use, and again after a failed build.

    It bootstraps from ``urls`` (:func:`seeds`), any one of which may be
    down.  Scripts are registered on this object (no network needed), every
    other attribute is the real client's.  :meth:`on_build` hooks run on
    each client built (e.g. the store's time budget).
    """

    def __init__(self, urls: str | tuple[str, ...], **kwargs: Any):
        self.urls = (urls,) if isinstance(urls, str) else urls
        self._kwargs = kwargs
        self._client: redis.RedisCluster | None = None
        self._lock = threading.Lock()
        self._hooks: list[Callable[[redis.RedisCluster], None]] = []

    def on_build(self, hook: Callable[[redis.RedisCluster], None]) -> None:
        """Run ``hook(client)`` on the cluster client once it is built."""
        with self._lock:
            self._hooks.append(hook)
            client = self._client
        if client is not None:
            hook(client)

    def register_script(self, script: str) -> Script:
        return NodeScript(self, script)  # type: ignore[arg-type]  # duck-typed: evalsha and get_encoder

    def get_encoder(self) -> Any:
        from redis._parsers import Encoder

        return Encoder("utf-8", "strict", False)

    @property
    def real(self) -> redis.RedisCluster:
        """The cluster client (built here; a store that cannot be reached raises)."""
        client = self._client
        if client is None:
            with self._lock:
                if self._client is None:
                    built = self._build()
                    for hook in self._hooks:
                        hook(built)
                    self._client = built
                client = self._client
        return client

    def _build(self) -> redis.RedisCluster:
        """The client, bootstrapped from every seed, with the first one's
        credentials and options and connections noting sends (TLS too: the
        first URL's ``rediss`` scheme becomes the connection class)."""
        first, *others = self.urls
        connection_class = noting(parse_url(first).get("connection_class", redis.Connection))
        if first.startswith("rediss://"):
            first = "redis://" + first[len("rediss://"):]
        nodes = [ClusterNode(found["host"], found.get("port", 6379)) for found in map(parse_url, others)]
        return redis.RedisCluster(url=first, startup_nodes=nodes, connection_class=connection_class, **self._kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class NodeScript(Script):
    """A script of a cluster client: missing on the node of its keys (a
    fresh node, a promoted replica), it is sent whole with EVAL, which also
    caches it there, instead of redis-py's SCRIPT LOAD to every primary,
    which fails while any one of them is down."""

    def __call__(self, keys: Any = None, args: Any = None, client: Any = None) -> Any:
        keys, args = list(keys or ()), list(args or ())
        client = client or self.registered_client
        try:
            return client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            return client.eval(self.script, len(keys), *keys, *args)


class ReplicaWait:
    """Run a write script, then ``WAIT`` for ``replicas`` on the same connection."""

    def __init__(self, client: Any, replicas: int, timeout_ms: int):
        self.client, self.replicas, self.timeout_ms = client, replicas, timeout_ms

    def __call__(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        real = self.client.real if isinstance(self.client, LazyCluster) else self.client
        if isinstance(real, redis.RedisCluster):
            return self._on_cluster(real, script, keys, args)
        return self._on_node(real, script, keys, args)

    def _on_cluster(self, cluster: redis.RedisCluster, script: Script, keys: list[str], args: list[Any]) -> Any:
        """The node that holds the match's slot, directly (a cluster client
        sends keyless commands such as WAIT to some other node), tried again
        with a fresh slot map while :func:`may_retry`."""
        failures = 0
        while True:
            check_deadline()
            try:
                node = cluster.get_node_from_key(keys[0])
                return self._on_node(node.redis_connection, script, keys, args)
            except CLUSTER_TRANSIENT:
                failures += 1
                if not may_retry(failures):
                    raise
                time.sleep(CLUSTER_PAUSE)
                cluster.nodes_manager.initialize()

    def _on_node(self, client: redis.Redis, script: Script, keys: list[str], args: list[Any]) -> Any:
        for _ in range(2):  # a second time after loading the script into a node without it
            pipe = client.pipeline(transaction=False)
            pipe.evalsha(script.sha, len(keys), *keys, *args)
            pipe.execute_command("WAIT", self.replicas, self.timeout_ms)
            reply, acked = pipe.execute(raise_on_error=False)
            if isinstance(reply, NoScriptError):
                client.script_load(script.script)
                continue
            if isinstance(reply, Exception):
                raise reply
            if isinstance(acked, redis.exceptions.ResponseError) and "replica" in str(acked):
                # a failover demoted the node between the script and WAIT: the
                # write may be lost with the old primary's history
                raise NotReplicated(f"the node became a replica before it confirmed the write ({acked})")
            if isinstance(acked, Exception):
                raise acked
            if int(acked) < self.replicas:
                raise NotReplicated(f"{acked} of {self.replicas} replicas confirmed the write "
                                    f"within {self.timeout_ms} ms")
            return reply
        raise NoScriptError("the script could not be loaded")
