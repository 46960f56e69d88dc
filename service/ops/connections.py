"""Open connections per client address, per gevent worker.

Under the gevent worker class a connection costs a greenlet and a socket, no
thread, so one client could open thousands (half-sent requests, idle
keep-alives, streams) and take a worker's whole ``WORKER_CONNECTIONS`` pool
from everybody else.  :func:`install` (called by ``deploy/gunicorn.conf.py``
in each worker) caps what one client address holds at
``MAX_CONNECTIONS_PER_CLIENT`` per worker: one more connection is answered at
once, before anything is read from it, with 429 ``rate_limited``
(problem+json, ``Retry-After``) and closed (a client still sending its
request may see the connection reset instead).

Off (0) behind a trusted proxy (``TRUSTED_PROXIES`` > 0): every connection's
peer is then the proxy, so the proxy must bound connections per client (README
"Put a reverse proxy in front").  gthread workers are not covered: their
``THREADS`` bound every client together.
"""
from __future__ import annotations

import socket
from collections import Counter
from typing import Any

from service.http import server_errors
from service.ops.config import Settings


def per_client(settings: Settings) -> int:
    """The cap in force (0: none)."""
    return 0 if settings.trusted_proxies > 0 else max(0, settings.max_connections_per_client)


def install(worker: Any, settings: Settings, cors: bool) -> bool:
    """Cap ``worker``'s connections per client address; False when no cap
    applies (none configured, or not an asynchronous worker)."""
    from gunicorn.workers.base_async import AsyncWorker

    cap = per_client(settings)
    if cap <= 0 or not isinstance(worker, AsyncWorker):
        return False
    refusal = server_errors.problem_bytes(
        429, "Too Many Requests",
        f"this client already holds {cap} open connections to this server process; "
        "close some (reuse keep-alive connections) and retry", cors,
        extra=["Retry-After: 1"], code="rate_limited")
    held: Counter[str] = Counter()  # greenlets switch only on I/O: no lock needed
    handle = worker.handle

    def capped(listener: Any, client: socket.socket, addr: Any) -> None:
        peer = addr[0] if isinstance(addr, tuple) and addr else "local"
        if held[peer] >= cap:
            _refuse(client, refusal)
            return
        held[peer] += 1
        try:
            handle(listener, client, addr)
        finally:
            held[peer] -= 1
            if not held[peer]:
                del held[peer]

    worker.handle = capped
    return True


def _refuse(client: socket.socket, answer: bytes) -> None:
    try:
        client.sendall(answer)
        client.shutdown(socket.SHUT_WR)
    except OSError:  # the client is gone already
        pass
    finally:
        client.close()
