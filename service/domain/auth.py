"""Bearer tokens: minting, hashing and deciding who the caller is.

A token is ``<match_id>.<secret>`` (secret: 32 random bytes, url-safe
base64).  Only ``sha256(token)`` hex digests are stored, in the match's meta,
and compared with :func:`hmac.compare_digest`.  The match id prefix makes the
403 for "a valid token of another match" decidable without a global scan: on
that error path only, the other match's meta is loaded and its hashes checked.
In a ladder match, an entrant's token (``<ladder_id>.<secret>``) stands for
the seat the entrant holds, like that seat's own token.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable

from engine.core import ADMIN_VIEWER, SPECTATOR_VIEWER, Viewer, seat_viewer
from service.domain.views import REFEREE_VIEWER
from service.http.errors import ApiError
from service.store.store import Meta

MATCH_ID = re.compile(r"[a-z2-7]{16}")
_TOKEN = re.compile(r"([a-z2-7]{16})\.([A-Za-z0-9_-]{43})")


def new_match_id() -> str:
    """16 base32 characters: 80 random bits, safe inside a Redis hash tag."""
    return base64.b32encode(secrets.token_bytes(10)).decode().lower()


def new_token(match_id: str) -> str:
    return f"{match_id}.{secrets.token_urlsafe(32)}"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, None if absent.

    A header that is present but not a bearer token is refused (401)."""
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ApiError("unauthenticated",
                       "the Authorization header must be 'Bearer <token>'")
    return token


def _match(meta: Meta, digest: str) -> Viewer | None:
    """The viewer ``digest`` stands for in ``meta`` (checks every hash)."""
    found: Viewer | None = None
    if hmac.compare_digest(digest, meta.admin_hash):
        found = ADMIN_VIEWER
    if meta.referee_hash is not None and hmac.compare_digest(digest, meta.referee_hash):
        found = REFEREE_VIEWER
    for seat, stored in enumerate(meta.seat_hashes):
        if hmac.compare_digest(digest, stored):
            found = seat_viewer(seat)
    for seat, stored in enumerate(meta.entrant_hashes):
        if hmac.compare_digest(digest, stored):
            found = seat_viewer(seat)
    return found


def identify(meta: Meta, header: str | None, load_meta: Callable[[str], Meta | None]) -> Viewer:
    """Who is calling about ``meta``'s match: spectator without a token.

    Unknown or malformed token: 401.  A token of another existing match: 403
    (``load_meta`` fetches that match's meta, only on this path).
    """
    token = bearer(header)
    if token is None:
        return SPECTATOR_VIEWER
    parsed = _TOKEN.fullmatch(token)
    if parsed is None:
        raise ApiError("unauthenticated", "the bearer token is malformed or unknown")
    digest = token_hash(token)
    owner = parsed.group(1)
    if owner in (meta.match_id, meta.ladder):  # a ladder's entrant token acts for its seat
        viewer = _match(meta, digest)
        if viewer is not None:
            return viewer
    else:
        other = load_meta(owner)
        if other is not None and _match(other, digest) is not None:
            raise ApiError("forbidden", "this token belongs to another match")
    raise ApiError("unauthenticated", "the bearer token is malformed or unknown")


def require_token(viewer: Viewer, what: str) -> None:
    """401 for a caller without a token where one is needed."""
    if viewer.is_spectator:
        raise ApiError("unauthenticated", f"{what} needs a seat or admin bearer token")


def require_admin(viewer: Viewer, what: str) -> None:
    """401 without a token, 403 with a seat token."""
    require_token(viewer, what)
    if not viewer.is_admin:
        raise ApiError("forbidden", f"{what} needs the admin token")


def acting_seat(viewer: Viewer, seat: int | None, players: int, what: str) -> int:
    """The seat a seat/admin caller acts for (``?seat=k``).

    A seat token may only name its own seat (403 otherwise); the admin must
    name one (400 when missing); the seat must exist (400).
    """
    require_token(viewer, what)
    if seat is not None and not 0 <= seat < players:
        raise ApiError("invalid_request", f"seat must be between 0 and {players - 1}, got {seat}",
                       errors={"seat": [f"must be between 0 and {players - 1}"]})
    if viewer.is_admin:
        if seat is None:
            raise ApiError("invalid_request",
                           f"the admin token acts for any seat: name it with ?seat=k (0…{players - 1})",
                           errors={"seat": ["required with the admin token"]})
        return seat
    own = viewer.seat
    if own is None:  # neither admin nor a seat: nothing to act for
        raise ApiError("forbidden", f"{what} needs a seat or admin bearer token")
    if seat is not None and seat != own:
        raise ApiError("forbidden", f"this token is for seat {own}, not seat {seat}")
    return own
