"""Service settings, read from the environment once at app creation."""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from bots import pool as bot_pool
from service.http.cors import parse_origins
from service.ops.webhook_http import HostPolicy


def _number(env: Mapping[str, str], name: str, default: float, kind: type[float] | type[int]) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return kind(raw)
    except ValueError:
        noun = "an integer" if kind is int else "a number"
        raise ValueError(f"environment variable {name} must be {noun}, got {raw!r}") from None


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = (env.get(name) or "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"environment variable {name} must be true or false, got {raw!r}")


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    return int(_number(env, name, default, int))


@dataclass(frozen=True)
class Settings:
    """Everything the service can be told from outside (environment variable:
    field).

    ``REDIS_URL`` (``redis_url``): where the store lives; empty means an
    embedded in-process fakeredis (single process only;
    ``deploy/gunicorn.conf.py`` starts a shared one for several workers).
    ``MATCH_TTL``: seconds of inactivity before a match expires.
    ``MATCH_CACHE_SIZE`` (``cache_size``): matches cached per worker.
    ``MAX_BODY``: the largest request body in bytes (larger: 413).
    ``REDIS_TIMEOUT``: socket timeout, seconds.  ``RETRY_AFTER``: the
    ``Retry-After`` seconds of a 503 ``store_unavailable``.
    ``CORS_ORIGINS`` (``cors_origins``): origins allowed to call from a
    browser (comma list, default ``*``).
    ``STREAM_KEEPALIVE``: seconds between keep-alives on an idle stream.
    ``STREAM_MAX``: seconds after which the server ends a stream (the client
    resumes with ``Last-Event-ID``; this spreads streams over instances).
    ``NOTIFY_SAFETY``: seconds between the safety re-reads of watched matches
    (:mod:`service.store.notify`).

    Store topology (:mod:`service.store.redis_client`): ``REDIS_MODE``
    (``redis_mode``) ``single`` (``REDIS_URL``), ``cluster`` (``REDIS_URL``
    names any node of a Redis Cluster) or ``sentinel`` (``REDIS_SENTINELS``
    ``host:port,...`` and ``REDIS_SENTINEL_MASTER``).  Durability:
    ``REDIS_WAIT_REPLICAS`` (``wait_replicas``) replicas must have every write
    before it is answered (Redis ``WAIT``; default 0 in single mode, 1
    otherwise), within ``REDIS_WAIT_TIMEOUT`` milliseconds (``wait_timeout_ms``).
    """

    redis_url: str | None = None
    match_ttl: int = 7 * 24 * 3600
    cache_size: int = 4096
    max_body: int = 64 * 1024
    redis_timeout: float = 5.0
    retry_after: int = 1
    #: ``IDEMPOTENCY_TTL``: seconds an idempotency record is kept.
    idempotency_ttl: int = 24 * 3600
    #: ``FINISHED_TTL``: seconds a finished (compacted) match is kept.
    finished_ttl: int = 7 * 24 * 3600
    #: ``REDIS_BUDGET``: seconds of store time one request may spend (0: no bound).
    redis_budget: float = 5.0

    #: ``RATE_LIMIT_ENABLED``, ``RATE_LIMIT_DEFAULT`` (every request),
    #: ``RATE_LIMIT_CREATE`` (match creations), per client: see service/ops/limits.py.
    rate_limit_enabled: bool = True
    rate_limit_default: str = "300/second"
    rate_limit_create: str = "20/second;600/minute"
    #: ``TRUSTED_PROXIES``: proxies in front that set X-Forwarded-For (0: use the peer address).
    trusted_proxies: int = 0
    #: ``MAX_WAITS_PER_CLIENT``: concurrent long-polls per client and worker (0: no cap).
    max_waits_per_client: int = 8
    #: ``MAX_CONNECTIONS_PER_CLIENT``: open connections per client and gevent
    #: worker (0: no cap; off behind ``TRUSTED_PROXIES``): see service/ops/connections.py.
    max_connections_per_client: int = 256
    #: ``CORS_ORIGINS``: origins allowed to call from a browser (``*``: any).
    cors_origins: list[str] = field(default_factory=lambda: ["*"])
    #: ``STREAM_KEEPALIVE``, ``STREAM_MAX``, ``NOTIFY_SAFETY``: see the class docstring.
    stream_keepalive: float = 15.0
    stream_max: float = 3600.0
    notify_safety: float = 5.0
    redis_mode: str = "single"
    sentinels: tuple[tuple[str, int], ...] = ()
    sentinel_master: str = "lodge"
    wait_replicas: int = 0
    wait_timeout_ms: int = 1000
    #: Webhook seats (1.2, service/domain/webhooks.py): ``WEBHOOK_HOSTS`` the
    #: hosts the server may call (comma list of host names, IP addresses and
    #: CIDR ranges; empty: no webhook seats), ``WEBHOOK_TIMEOUT_MS`` a
    #: webhook seat's time per decision without a clock, ``WEBHOOK_CONCURRENCY``
    #: the calls in flight per worker at most.
    webhook_hosts: str = ""
    webhook_timeout_ms: int = 2_000
    webhook_concurrency: int = 100
    #: ``WORLD_SECRET``: the key that signs worlds (api.md "Worlds and simulation"), the same on
    #: every instance; empty: one is made and kept in the store (service/domain/world_token.py).
    world_secret: str = field(default="", repr=False)
    #: Bot seats (bots/pool.py): ``BOT_PROCESSES`` worker processes per server
    #: process for the decisions that may take long (default two, one on a
    #: one-core machine; 0: every decision inline), ``BOT_TIMEOUT_MS`` a
    #: decision's budget when the seat's clock leaves more (then its fallback).
    bot_processes: int = field(default_factory=bot_pool.default_processes)
    bot_timeout_ms: int = bot_pool.TIMEOUT_MS

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        mode = (env.get("REDIS_MODE") or "single").strip().lower()
        if mode not in MODES:
            raise ValueError(f"environment variable REDIS_MODE must be one of {', '.join(MODES)}, got {mode!r}")
        return cls(
            redis_url=env.get("REDIS_URL") or None,
            match_ttl=_int(env, "MATCH_TTL", cls.match_ttl),
            cache_size=_int(env, "MATCH_CACHE_SIZE", cls.cache_size),
            max_body=_int(env, "MAX_BODY", cls.max_body),
            redis_timeout=_number(env, "REDIS_TIMEOUT", cls.redis_timeout, float),
            retry_after=_int(env, "RETRY_AFTER", cls.retry_after),
            idempotency_ttl=_int(env, "IDEMPOTENCY_TTL", cls.idempotency_ttl),
            finished_ttl=_int(env, "FINISHED_TTL", cls.finished_ttl),
            redis_budget=_number(env, "REDIS_BUDGET", cls.redis_budget, float),
            rate_limit_enabled=_flag(env, "RATE_LIMIT_ENABLED", cls.rate_limit_enabled),
            rate_limit_default=env.get("RATE_LIMIT_DEFAULT") or cls.rate_limit_default,
            rate_limit_create=env.get("RATE_LIMIT_CREATE") or cls.rate_limit_create,
            trusted_proxies=_int(env, "TRUSTED_PROXIES", cls.trusted_proxies),
            max_waits_per_client=_int(env, "MAX_WAITS_PER_CLIENT", cls.max_waits_per_client),
            max_connections_per_client=_int(env, "MAX_CONNECTIONS_PER_CLIENT", cls.max_connections_per_client),
            cors_origins=parse_origins(env.get("CORS_ORIGINS")),
            stream_keepalive=_number(env, "STREAM_KEEPALIVE", cls.stream_keepalive, float),
            stream_max=_number(env, "STREAM_MAX", cls.stream_max, float),
            notify_safety=_number(env, "NOTIFY_SAFETY", cls.notify_safety, float),
            redis_mode=mode,
            sentinels=_addresses(env.get("REDIS_SENTINELS", "")),
            sentinel_master=env.get("REDIS_SENTINEL_MASTER") or cls.sentinel_master,
            wait_replicas=_int(env, "REDIS_WAIT_REPLICAS", 0 if mode == "single" else 1),
            wait_timeout_ms=_int(env, "REDIS_WAIT_TIMEOUT", cls.wait_timeout_ms),
            webhook_hosts=_webhook_hosts(env.get("WEBHOOK_HOSTS", "")),
            webhook_timeout_ms=_int(env, "WEBHOOK_TIMEOUT_MS", cls.webhook_timeout_ms),
            webhook_concurrency=_int(env, "WEBHOOK_CONCURRENCY", cls.webhook_concurrency),
            world_secret=env.get("WORLD_SECRET", ""),
            bot_processes=bot_pool.processes(env),
            bot_timeout_ms=_int(env, bot_pool.TIMEOUT_SETTING, cls.bot_timeout_ms),
        )


#: The values of ``REDIS_MODE``.
MODES = ("single", "cluster", "sentinel")


def _addresses(raw: str) -> tuple[tuple[str, int], ...]:
    """``host:port,host:port`` (``REDIS_SENTINELS``) as pairs."""
    out = []
    for item in filter(None, (part.strip() for part in raw.split(","))):
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"environment variable REDIS_SENTINELS must be host:port,..., got {item!r}")
        out.append((host, int(port)))
    return tuple(out)


def _webhook_hosts(raw: str) -> str:
    """``WEBHOOK_HOSTS`` as given, once checked (ValueError naming a bad item)."""
    HostPolicy.parse(raw)
    return raw
