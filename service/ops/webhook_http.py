"""One webhook call (api.md "Webhook seats", 1.2): a POST that cannot reach
a host the operator did not allow and cannot outlive its deadline.

* The url's host name is resolved here, every address it resolves to is
  checked (``allowed``), and the connection goes to a checked address: a
  name cannot point inside the network, whatever its DNS says at call time.
* One overall deadline bounds everything after the lookup: the connect, the
  TLS handshake, sending, and every read of the answer, each with what is
  left of it as its socket timeout, and a read past the deadline fails.  A
  service answering byte by byte cannot stretch a call beyond it.
* The answer's body is read up to :data:`BODY_LIMIT` bytes; a longer one is
  an error at once.  Redirects are never followed (a 3xx is just another
  status), nothing is retried.

The sockets are the standard library's, so under gunicorn's gevent workers
(monkey-patched) a call only ever blocks its own greenlet.
"""
from __future__ import annotations

import http.client
import io
import ipaddress
import re
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from engine.core import TIMED_OUT_REASONS

#: The largest answer body read (bytes); a move is a few hundred.
BODY_LIMIT = 64 * 1024
#: Reasons a call failed (two of ``timed_out``'s reasons).
TIMEOUT, ERROR, _ = TIMED_OUT_REASONS

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class HostPolicy:
    """``WEBHOOK_HOSTS``: the host names and networks webhooks may be on."""

    names: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, raw: str | None) -> HostPolicy:
        """``"bots.example.org, 10.1.2.3, 192.168.7.0/24"``; ValueError for an
        item that is neither a host name nor an address or range."""
        names, networks = set(), []
        for item in filter(None, (part.strip().lower() for part in (raw or "").split(","))):
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                if not _NAME.fullmatch(item):
                    raise ValueError(f"WEBHOOK_HOSTS: {item!r} is neither a host name, an IP address "
                                     "nor a CIDR range") from None
                names.add(item.rstrip("."))
        return cls(frozenset(names), tuple(networks))

    @property
    def enabled(self) -> bool:
        return bool(self.names or self.networks)

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be a webhook (None: it may), checked at creation."""
        if not self.enabled:
            return "webhook seats are disabled on this server (its WEBHOOK_HOSTS setting is empty)"
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018  # a bad port raises ValueError
        except ValueError:
            return "webhook.url is not a valid URL"
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return "webhook.url must be an absolute http:// or https:// URL"
        if parts.username is not None or parts.password is not None:
            return "webhook.url must not carry a user name or password"
        host = parts.hostname.rstrip(".")
        address = _address(host)
        if (address is None and host in self.names) or (address is not None and self._listed(address)):
            return None
        return f"the webhook host {host[:80]!r} is not one this server calls (its WEBHOOK_HOSTS setting)"

    def allows(self, host: str, address: Address) -> bool:
        """Whether a call to ``host`` may connect to ``address`` (one it resolved to)."""
        if self._listed(address):
            return True
        return host.rstrip(".").lower() in self.names and address.is_global

    def _listed(self, address: Address) -> bool:
        return any(address in network for network in self.networks if network.version == address.version)


def _address(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


class CallFailed(Exception):
    """The call got no usable HTTP answer: ``reason`` is :data:`TIMEOUT`
    (the deadline passed) or :data:`ERROR`; ``detail`` says what happened
    (it never holds the url, the body or a header)."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason


@dataclass(frozen=True)
class Reply:
    """An HTTP answer: its status and (at most :data:`BODY_LIMIT` bytes of) body."""

    status: int
    body: bytes


def post(url: str, body: bytes, headers: dict[str, str], deadline: float,
         allowed: Callable[[str, Address], bool]) -> Reply:
    """POST ``body`` to ``url`` before ``deadline`` (``time.monotonic()``
    seconds), connecting only to addresses ``allowed(host, address)``
    accepts; :class:`CallFailed` when no answer came in time or it is unusable."""
    parts = urlsplit(url)
    host, https = parts.hostname or "", parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    addresses = _resolve(host, port)
    refused = [a for a in addresses if not allowed(host, a[0])]
    if not addresses or refused:
        raise CallFailed(ERROR, f"the webhook's host resolves to an address WEBHOOK_HOSTS does not allow "
                                f"({refused[0][0] if refused else 'none'})")
    sock = _connect(addresses, deadline)
    try:
        if https:
            sock.settimeout(_left(deadline))
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        conn = http.client.HTTPConnection(host, port)
        conn.sock = _DeadlineSocket(sock, deadline)  # connected already: http.client only talks over it
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request("POST", path, body=body, headers=headers)
        answer = conn.getresponse()
        data = answer.read(BODY_LIMIT + 1)
        if len(data) > BODY_LIMIT:
            raise CallFailed(ERROR, f"the webhook's answer is longer than {BODY_LIMIT} bytes")
        return Reply(answer.status, data)
    except TimeoutError:
        raise CallFailed(TIMEOUT, "no complete answer before the deadline") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise CallFailed(ERROR, f"the webhook call failed: {type(exc).__name__}") from None
    finally:
        sock.close()


def _resolve(host: str, port: int) -> list[tuple[Address, tuple[Any, ...], int]]:
    """Every (address, socket address, family) ``host`` resolves to."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise CallFailed(ERROR, "the webhook's host name does not resolve") from None
    return [(ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0]), sockaddr, family)
            for family, _, _, _, sockaddr in infos]


def _connect(addresses: list[tuple[Address, tuple[Any, ...], int]], deadline: float) -> socket.socket:
    """A socket connected to the first checked address that answers."""
    for _, sockaddr, family in addresses:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(_left(deadline))
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            if isinstance(exc, TimeoutError):
                raise CallFailed(TIMEOUT, "the webhook did not accept the connection before the deadline") \
                    from None
    raise CallFailed(ERROR, "the webhook refused the connection")


def _left(deadline: float) -> float:
    """Seconds left before ``deadline``; :class:`TimeoutError` when none."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline passed")
    return left


class _DeadlineSocket:
    """What http.client needs of a socket (``sendall``, ``makefile``,
    ``close``), every operation bounded by the call's deadline."""

    def __init__(self, sock: socket.socket, deadline: float):
        self.sock, self.deadline = sock, deadline

    def sendall(self, data: bytes) -> None:
        self.sock.settimeout(_left(self.deadline))
        self.sock.sendall(data)

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self))

    def close(self) -> None:
        """Nothing: http.client closes its connection as soon as it has the
        headers of a ``Connection: close`` answer, before reading the body;
        :func:`post` closes the socket when it is done."""


class _DeadlineReader(io.RawIOBase):
    """The socket's bytes, each read bounded by what is left of the deadline."""

    def __init__(self, owner: _DeadlineSocket):
        super().__init__()
        self.owner = owner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self.owner.sock.settimeout(_left(self.owner.deadline))
        return self.owner.sock.recv_into(buffer)
