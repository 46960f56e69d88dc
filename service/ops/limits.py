"""Per-client limits: request rates (flask-limiter) and concurrent long-polls.

Rates: every request counts against ``RATE_LIMIT_DEFAULT`` and a match
creation also against ``RATE_LIMIT_CREATE`` (flask-limiter's notation, e.g.
``"20/second;600/minute"``), per client address.  The counters live in the
match store's Redis, so every worker and every instance on that Redis shares
them (:func:`storage`), for every ``REDIS_MODE``:

* ``single`` (and the embedded fakeredis store): ``redis://`` on the store
  client's own connection pool;
* ``cluster``: ``redis+cluster://<REDIS_URL's node>`` on the store's own
  cluster client (:class:`SharedClusterStorage`: built on first use, so the
  app starts with the cluster down, as the store does); a counter key lives
  in one slot, like a match's keys;
* ``sentinel``: ``redis+sentinel://<REDIS_SENTINELS>/<REDIS_SENTINEL_MASTER>``:
  limits' sentinel storage asks the sentinels for the primary, as the store
  does, follows a failover, and reads the counters from the primary too.

Time: the counters' calls run within the request's store budget
(``REDIS_BUDGET``, :meth:`service.store.store.Store.budget`), opened before the
limiter looks and kept for the rest of the request, so a stalled Redis costs
a request one budget in all, limits included; a limiter that cannot reach
its counters lets the request through (``swallow_errors``).  Requests that
wait (long-polls, streams) let it go after the limiter: each of their looks
at the store has its own budget.

Over a limit: 429 ``rate_limited`` with ``Retry-After``; every limited answer
carries flask-limiter's ``X-RateLimit-Limit`` / ``-Remaining`` / ``-Reset``
(epoch seconds) headers.  Liveness, readiness and metrics are exempt.

Long-polls: at most ``MAX_WAITS_PER_CLIENT`` waiting ``GET …/events?wait=``
per client address and worker process (a thread each); one more is 429
``rate_limited`` at once.  Counted per process, so an instance holds at most
workers × that many per client: a count in Redis would outlive a killed
worker and lock a client out.

The hot paths (:mod:`service.http.routes.hot`: GET match, GET legal-moves, POST
moves, answered below Flask) count against the same application limits
through :class:`Gate`: the same counters, keys and strategy, the same 429
and headers, within the same budget.

The client address is the peer's, unless ``TRUSTED_PROXIES`` = n > 0: then
werkzeug's ProxyFix takes it from the n-th last ``X-Forwarded-For`` entry
(set that only behind that many proxies that overwrite the header).  It wraps
the whole WSGI app, hot paths included (:func:`trust_proxies`).
"""
from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import redis
from flask import Flask, Response, current_app, g, request
from flask_limiter import Limiter, RequestLimit
from limits import RateLimitItem, parse_many
from limits.storage import RedisClusterStorage, RedisStorage, Storage
from werkzeug.middleware.proxy_fix import ProxyFix

from service.http.errors import ApiError
from service.ops.config import Settings
from service.store.redis_client import LazyCluster

log = logging.getLogger(__name__)
WAITS = "lodge.waits"
#: Endpoints no limit applies to (probes and scrapers call them often).
EXEMPT = ("ops.Health", "ops.Ready", "ops.Metrics")
#: Endpoints that wait for changes: each look at the store has its own budget.
WAITING = ("matches.Events", "stream.Stream")
#: flask-limiter's key prefix for Lodge's counters, and the scope of its application limits.
KEY_PREFIX = "lodge"
GLOBAL = "global"


def client_address() -> str:
    """The client a request counts against (after ProxyFix, if configured)."""
    return request.remote_addr or "unknown"


def storage(redis_client: Any, settings: Settings) -> tuple[str, dict[str, Any]]:
    """flask-limiter's storage URI and options for the match store's Redis
    (see the module docstring)."""
    timeouts = {"socket_timeout": settings.redis_timeout, "socket_connect_timeout": settings.redis_timeout}
    if isinstance(redis_client, (LazyCluster, redis.RedisCluster)):
        urls = redis_client.urls if isinstance(redis_client, LazyCluster) else (_node_url(redis_client),)
        return "redis+cluster://" + ",".join(map(_netloc, urls)), {"client": redis_client}
    if settings.redis_mode == "sentinel" and settings.sentinels:
        nodes = ",".join(f"{host}:{port}" for host, port in settings.sentinels)
        # counters read from the primary too: a replica lags (replication is asynchronous)
        return f"redis+sentinel://{nodes}/{settings.sentinel_master}", {
            **timeouts, "sentinel_kwargs": timeouts, "use_replicas": False}
    pool = getattr(redis_client, "connection_pool", None)
    return "redis://", {} if pool is None else {"connection_pool": pool}


def _netloc(url: str) -> str:
    """``host:port`` (and credentials) of a ``redis://`` URL, without its path."""
    return url.split("://", 1)[-1].split("/", 1)[0]


def _node_url(cluster: redis.RedisCluster) -> str:
    node = cluster.get_default_node()
    return f"redis://{node.host}:{node.port}"


class SharedClusterStorage(RedisClusterStorage):
    """limits' Redis Cluster storage, on a cluster client given as the
    ``client`` option (the store's; its :class:`LazyCluster` connects on
    first use) instead of one built at once from the URI.  Without
    ``client`` it is limits' own.  It takes over the ``redis+cluster``
    scheme from :class:`RedisClusterStorage` (its subclass, so every other
    use is unchanged)."""

    STORAGE_SCHEME = ["redis+cluster"]

    def __init__(self, uri: str, key_prefix: str = RedisStorage.PREFIX, wrap_exceptions: bool = False,
                 client: Any = None, **options: Any):
        if client is None:
            super().__init__(uri, key_prefix=key_prefix, wrap_exceptions=wrap_exceptions, **options)
            return
        self.key_prefix = key_prefix
        self.target_server = "redis"
        self.dependency = self.dependencies["redis"].module
        self.storage = client
        self.initialize_storage(uri)
        Storage.__init__(self, uri, wrap_exceptions, **options)


def breach(limit: RequestLimit) -> ApiError:
    """429 ``rate_limited`` for a request over ``limit``."""
    retry = max(1, int(limit.reset_at - time.time()))
    return ApiError("rate_limited", f"too many requests from this client (limit {limit.limit}); retry after {retry} s",
                    headers={"Retry-After": str(retry)})


def _rate_limited(limit: RequestLimit) -> Response:
    return breach(limit).response()


def rate_headers(current: RequestLimit) -> list[tuple[str, str]]:
    """flask-limiter's ``X-RateLimit-*`` headers for ``current``; none when
    the counters' store is down (the request's own answer stands)."""
    try:
        return [("X-RateLimit-Limit", str(current.limit.amount)), ("X-RateLimit-Remaining", str(current.remaining)),
                ("X-RateLimit-Reset", str(current.reset_at))]
    except Exception:
        log.warning("rate limit headers unavailable", exc_info=True)
        return []


def install(app: Flask, redis_client: Any, settings: Settings,
            budget: Callable[[], AbstractContextManager[None]]) -> Limiter:
    """Rate limits on ``app`` with counters in ``redis_client``'s Redis,
    looked up within the request's store ``budget``."""
    uri, options = storage(redis_client, settings)
    limiter = Limiter(
        client_address, application_limits=[settings.rate_limit_default],
        storage_uri=uri, storage_options=options, strategy="fixed-window",
        headers_enabled=False, key_prefix=KEY_PREFIX, swallow_errors=True, on_breach=_rate_limited,
        enabled=settings.rate_limit_enabled)
    app.before_request(lambda: _hold_budget(budget))
    limiter.init_app(app)  # its check runs between the two hooks
    app.before_request(_release_budget_if_waiting)
    app.teardown_request(_release_budget)
    for endpoint in EXEMPT:
        view = app.view_functions.get(endpoint)
        if view is not None:
            limiter.exempt(view)
    create = app.view_functions.get("matches.Matches")
    if create is not None:
        limited: Any = limiter.limit(settings.rate_limit_create, methods=["POST"], scope="create",
                                    override_defaults=False)(create)
        app.view_functions["matches.Matches"] = limited
    app.extensions[WAITS] = WaitSlots(settings.max_waits_per_client)
    app.after_request(lambda response: _headers(limiter, response))
    return limiter


def _hold_budget(budget: Callable[[], AbstractContextManager[None]]) -> None:
    """Open the request's store budget (see the module docstring)."""
    held = budget()
    held.__enter__()
    g.lodge_budget = held


def _release_budget_if_waiting() -> None:
    if request.endpoint in WAITING:
        _release_budget()


def _release_budget(_exc: BaseException | None = None) -> None:
    held = g.pop("lodge_budget", None)
    if held is not None:
        held.__exit__(None, None, None)


def _headers(limiter: Limiter, response: Response) -> Response:
    """flask-limiter's ``X-RateLimit-*`` headers for the tightest limit of the
    request.  (Its own ``headers_enabled`` would also rewrite every
    ``Retry-After``, a 503's included, to its window's reset, rounded down to 0.)"""
    current = limiter.current_limit if limiter.enabled else None
    if current is not None:
        for name, value in rate_headers(current):
            response.headers[name] = value
    return response


def trust_proxies(app: Flask, settings: Settings) -> None:
    """ProxyFix around the whole WSGI app when ``TRUSTED_PROXIES`` > 0 (call last)."""
    if settings.trusted_proxies > 0:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies)  # type: ignore[method-assign]


class Gate:
    """The application limits (``RATE_LIMIT_DEFAULT``) of a request answered
    below Flask, as flask-limiter applies them to the Flask routes: the same
    counters (its strategy and storage, its keys: prefix, client address,
    ``global``), smallest window first, stopping at the first breach; the
    same 429 (:func:`breach`) and ``X-RateLimit-*`` headers (the breached
    limit's, else the smallest window's); a store that cannot be reached
    lets the request through."""

    def __init__(self, limiter: Limiter, default: str):
        self.limiter = limiter
        self.items: list[RateLimitItem] = sorted(parse_many(default))

    def check(self, address: str) -> list[tuple[str, str]]:
        """Count one request of ``address``: its ``X-RateLimit-*`` headers,
        or :class:`ApiError` 429 carrying them."""
        args = [KEY_PREFIX, address, GLOBAL]
        try:
            current = None
            for item in self.items:
                hit = self.limiter.limiter.hit(item, *args)
                if current is None or not hit:
                    current = RequestLimit(self.limiter, item, args, not hit, True)
                if not hit:
                    error = breach(current)
                    error.headers.update(rate_headers(current))
                    raise error
        except ApiError:
            raise
        except Exception:
            log.exception("Failed to rate limit. Swallowing error")
            return []
        return [] if current is None else rate_headers(current)


def wait_slot() -> Any:
    """A context holding one long-poll slot of the calling client (429 if none is left)."""
    slots: WaitSlots = current_app.extensions[WAITS]
    return slots.hold(client_address())


class WaitSlots:
    """Concurrent long-polls per client address in this process."""

    def __init__(self, per_client: int):
        self.per_client = per_client
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()

    @contextmanager
    def hold(self, client: str) -> Iterator[None]:
        """One waiting slot for ``client``, or 429 ``rate_limited``."""
        with self._lock:
            if self.per_client > 0 and self._held[client] >= self.per_client:
                raise ApiError("rate_limited",
                               f"this client already holds {self.per_client} waiting event requests; "
                               "wait on fewer matches at once, or poll without wait",
                               headers={"Retry-After": "1"})
            self._held[client] += 1
        try:
            yield
        finally:
            with self._lock:
                self._held[client] -= 1
                if not self._held[client]:
                    del self._held[client]
