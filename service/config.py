"""Service settings, read from the environment once at app creation."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from service.cors import parse_origins


def _int(env: dict[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {raw!r}") from None


@dataclass(frozen=True)
class Settings:
    """Everything the service can be told from outside.

    ``REDIS_URL``: where the store lives; empty means an embedded in-process
    fakeredis (single process only; ``deploy/gunicorn.conf.py`` starts a shared
    one for several workers).  ``MATCH_TTL``: seconds of inactivity before a
    match expires.  ``MATCH_CACHE_SIZE``: matches cached per worker.
    ``REDIS_TIMEOUT``:
    socket timeout, seconds.  ``CORS_ORIGINS``: origins allowed to call
    from a browser (comma list, default ``*``).
    """

    redis_url: str | None = None
    match_ttl: int = 7 * 24 * 3600
    cache_size: int = 4096
    max_body: int = 64 * 1024
    redis_timeout: float = 5.0
    retry_after: int = 1
    cors_origins: list[str] = field(default_factory=lambda: ["*"])

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Settings":
        env = dict(os.environ if env is None else env)
        return cls(
            redis_url=env.get("REDIS_URL") or None,
            match_ttl=_int(env, "MATCH_TTL", cls.match_ttl),
            cache_size=_int(env, "MATCH_CACHE_SIZE", cls.cache_size),
            redis_timeout=float(env.get("REDIS_TIMEOUT") or cls.redis_timeout),
            cors_origins=parse_origins(env.get("CORS_ORIGINS")),
        )
