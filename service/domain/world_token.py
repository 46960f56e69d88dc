"""Signed worlds: the opaque ``world`` string of api.md "Worlds and
simulation" (1.2), so the engine only ever runs on states the server made.

A world string is ``w1.<payload>.<signature>``: the payload is the zlib of
the JSON ``{"g": game, "m": match id or null, "p": players, "v": version,
"s": state, "t": issued at (epoch seconds)}``, base64url without padding;
the signature is HMAC-SHA256 of ``w1.<payload>`` with the world secret,
base64url.  Anyone can read a world (it holds only what its caller was
given); nobody without the secret can make or alter one.

The secret is the ``WORLD_SECRET`` setting, the same on every instance; when
it is empty, the first instance that issues a world makes one and keeps it in
the store with ``SET NX`` (:data:`service.store.keys.WORLD_SECRET`), so every
instance on that store shares it.  Reading a world never writes: a store
without a secret has issued no world.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from service.http.errors import ApiError
from service.store.keys import WORLD_SECRET
from service.store.store import Store

#: The format tag that starts every world string.
FORMAT = "w1"
#: Seconds a world stays valid after it was issued (the contract: at least 24 hours).
WORLD_TTL = 24 * 3600
#: Seconds an issue time may lie ahead of this instance's clock (other instances' clocks).
CLOCK_SKEW = 300
#: The longest world string accepted (characters); the payload may inflate to at most MAX_STATE bytes.
MAX_WORLD = 16 * 1024
MAX_STATE = 256 * 1024
_SHAPE = re.compile(rf"{FORMAT}\.([A-Za-z0-9_-]{{1,{MAX_WORLD}}})\.([A-Za-z0-9_-]{{43}})")


@dataclass(frozen=True)
class World:
    """What a world string carries."""

    game: str
    match_id: str | None
    players: list[str]
    version: int
    state: dict[str, Any]


def invalid(detail: str) -> ApiError:
    return ApiError("invalid_world", f"{detail}; use a world this server issued (GET …/worlds, "
                                     "POST /v1/games/{game}/worlds or simulate) in the last 24 hours")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class WorldSigner:
    """Issues and checks world strings for one store (the secret is read
    once per process, or made once per store)."""

    store: Store
    configured: str = ""
    _key: bytes | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _secret(self, make: bool) -> bytes | None:
        """The HMAC key: the setting's, else the store's (made with ``SET NX``
        when ``make``); None when the store has none and ``make`` is false."""
        if self._key is not None:
            return self._key
        if self.configured:
            self._key = hashlib.sha256(self.configured.encode()).digest()
            return self._key
        with self._lock, self.store.budget():
            client = self.store.client
            if make:
                client.set(WORLD_SECRET, secrets.token_hex(32), nx=True)
            stored = client.get(WORLD_SECRET)
            if stored is None:
                return None
            self._key = hashlib.sha256(stored if isinstance(stored, bytes) else stored.encode()).digest()
            return self._key

    def issue(self, world: World) -> str:
        """The signed string of ``world``, issued now."""
        payload = orjson.dumps({"g": world.game, "m": world.match_id, "p": world.players, "v": world.version,
                                "s": world.state, "t": int(time.time())})
        body = f"{FORMAT}.{_b64(zlib.compress(payload, 1))}"
        key = self._secret(make=True)
        assert key is not None
        return f"{body}.{_b64(hmac.new(key, body.encode(), hashlib.sha256).digest())}"

    def read(self, text: str, game_id: str) -> World:
        """The world of a string this server signed for ``game_id`` within
        :data:`WORLD_TTL`; 422 ``invalid_world`` for anything else."""
        shape = _SHAPE.fullmatch(text)
        if shape is None:
            raise invalid("this is not a world string (w1.<payload>.<signature>)")
        key = self._secret(make=False)
        body = text[:shape.end(1)]
        if key is None or not hmac.compare_digest(
                hmac.new(key, body.encode(), hashlib.sha256).digest(), _unb64(shape.group(2))):
            raise invalid("the world's signature does not match: it was altered or not issued here")
        try:
            payload = _inflate(_unb64(shape.group(1)))
            world = World(payload["g"], payload["m"], payload["p"], payload["v"], payload["s"])
            issued = payload["t"]
        except (binascii.Error, zlib.error, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            raise invalid("the world cannot be read") from None
        if world.game != game_id:
            raise invalid(f"this is a world of {str(world.game)[:64]!r}, not of {game_id!r}")
        now = time.time()
        if not isinstance(issued, int) or issued > now + CLOCK_SKEW or now - issued > WORLD_TTL:
            raise invalid("the world has expired")
        return world


def _inflate(raw: bytes) -> dict[str, Any]:
    """The payload JSON, refusing one that inflates beyond :data:`MAX_STATE`."""
    inflater = zlib.decompressobj()
    data = inflater.decompress(raw, MAX_STATE)
    if inflater.unconsumed_tail or not inflater.eof:
        raise ValueError("the payload is too large or truncated")
    payload = orjson.loads(data)
    if not isinstance(payload, dict):
        raise ValueError("the payload is not an object")
    return payload
