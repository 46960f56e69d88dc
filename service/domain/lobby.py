"""The lobby: public matches that still have an open seat, newest first.

Index (:func:`service.store.keys.lobby_key`): one sorted set per game under its own
hash tag, member the match id, score its creation time in milliseconds.
Nothing here is a cross-slot command: the sets are written with single
commands next to a match's scripts (never inside them), and a page reads each
game's set on its own and checks the matches in pipelines (which a cluster
client splits by node).  So the index can be behind the matches, never
wrong for long:

* an entry is added *before* its match is written (a create that then fails
  leaves an entry without a match);
* a match that fills (its last open seat claimed), finishes or is deleted is
  removed at once (:func:`forget`; a store failure there is only logged);
* whatever slipped through (expired matches, failed creates or removals) is
  checked when a page lists it: a match that is gone, finished, not public or
  without an open seat is dropped from the index then and not shown.

Order: newest first, ties by match id (descending), across the games asked
for.  A page's ``next`` cursor (opaque: url-safe base64 of ``<score>:<id>``)
names the last match the page looked at; the next page starts after it.  A
page looks at no more than :data:`MAX_SCAN` matches, so a page may hold fewer
than ``limit`` matches and still have a ``next``; ``next`` is null only when
nothing older is left.
"""
from __future__ import annotations

import base64
import binascii
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import redis

from service.domain import auth
from service.http.errors import ApiError
from service.store.keys import lobby_key
from service.store.store import Meta, Store

log = logging.getLogger(__name__)

#: Matches one page looks at, at most (listed or dropped).
MAX_SCAN = 500
#: Entries read from a game's set per step.
BATCH = 50

#: A position in the lobby's order: (score, match id); a page starts after it.
Position = tuple[int, str]
#: Before everything: the first page.
START: Position = (2**62, "~")


def listed(meta: Meta) -> bool:
    """Whether ``meta``'s match belongs in the lobby now (as far as it shows)."""
    return meta.public and bool(meta.open_seats)


def score(meta: Meta) -> int:
    return int(meta.created * 1000)


def add(store: Store, meta: Meta) -> None:
    """Index a new public match with an open seat (before it is written)."""
    store.client.zadd(lobby_key(meta.game), {meta.match_id: score(meta)})


def forget(store: Store, meta: Meta) -> None:
    """Remove the match from the lobby (it filled, finished or was deleted).
    A store failure is only logged: the next page listing it drops it."""
    if not meta.public or not any(kind in ("open", "claimed") for kind in meta.kinds):
        return
    try:
        store.client.zrem(lobby_key(meta.game), meta.match_id)
    except redis.exceptions.RedisError as exc:
        log.warning("could not remove match %s from the lobby: %s", meta.match_id, exc)


def decode_cursor(cursor: str | None) -> Position:
    """The position a ``cursor`` names (400 ``invalid_request`` if it is not one of ours)."""
    if cursor is None:
        return START
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii") + b"=" * (-len(cursor) % 4)).decode("ascii")
        raw_score, match_id = text.split(":")
        value = int(raw_score)
    except (ValueError, UnicodeError, binascii.Error):
        value, match_id = -1, ""
    if value < 0 or not auth.MATCH_ID.fullmatch(match_id):
        raise ApiError("invalid_request", "cursor is not a lobby cursor; pass the `next` of a page",
                       errors={"cursor": ["not a lobby cursor"]})
    return value, match_id


def encode_cursor(position: Position) -> str:
    return base64.urlsafe_b64encode(f"{position[0]}:{position[1]}".encode()).decode().rstrip("=")


def page(store: Store, games: Sequence[str], limit: int, after: Position,
         entry: Callable[[Meta], dict[str, Any]]) -> dict[str, Any]:
    """``{"matches": [entry(meta), …], "next": cursor | None}``: up to
    ``limit`` listed matches of ``games`` after position ``after``."""
    sources = {game: _Source(store, game, after) for game in games}
    matches: list[dict[str, Any]] = []
    position, scanned = after, 0
    while len(matches) < limit and scanned < MAX_SCAN:
        batch = _next_batch(list(sources.values()), limit - len(matches))
        if not batch:
            return {"matches": matches, "next": None}
        for (found, (game, member, value)) in zip(store.metas([m for _, m, _ in batch]), batch):
            scanned += 1
            position = (value, member)
            if found is None or found[1] or found[0].game != game or not listed(found[0]):
                _drop(store, game, member)
                continue
            matches.append(entry(found[0]))
            if len(matches) == limit:
                break
        for source in sources.values():
            source.skip_to(position)
    more = any(source.more_after(position) for source in sources.values())
    return {"matches": matches, "next": encode_cursor(position) if more else None}


def _drop(store: Store, game: str, match_id: str) -> None:
    try:
        store.client.zrem(lobby_key(game), match_id)
    except redis.exceptions.RedisError as exc:
        log.warning("could not drop match %s from the lobby: %s", match_id, exc)


def _before(a: Position, b: Position) -> bool:
    """Whether ``a`` comes before ``b`` in the lobby's order (newest first)."""
    return a > b


class _Source:
    """One game's sorted set, read in order from a position on."""

    def __init__(self, store: Store, game: str, after: Position):
        self.store, self.game, self.key = store, game, lobby_key(game)
        self.after = after
        self.buffer: list[Position] = []
        self.exhausted = False

    def fill(self, want: int) -> None:
        """Read until ``want`` entries are buffered or the set ends."""
        offset = 0
        while len(self.buffer) < want and not self.exhausted:
            last = self.buffer[-1] if self.buffer else self.after
            rows: list[tuple[bytes | str, float]] = self.store.client.zrevrangebyscore(  # type: ignore[assignment]
                self.key, last[0], "-inf", start=offset, num=BATCH, withscores=True)
            fresh = [(int(s), m.decode() if isinstance(m, bytes) else m) for m, s in rows]
            kept = [p for p in fresh if _before(last, p)]
            self.buffer.extend(kept)
            if len(rows) < BATCH:
                self.exhausted = True
            offset = offset + BATCH if not kept else 0

    def skip_to(self, position: Position) -> None:
        """Forget the buffered entries at or before ``position``."""
        self.buffer = [p for p in self.buffer if _before(position, p)]
        if _before(self.after, position):
            self.after = position

    def more_after(self, position: Position) -> bool:
        self.skip_to(position)
        self.fill(1)
        return bool(self.buffer)


def _next_batch(sources: list[_Source], want: int) -> list[tuple[str, str, int]]:
    """The next ``want`` (or fewer) entries across ``sources``, in order, as
    (game, match id, score).  A source not read to its end may still hold
    entries after its last buffered one, so only entries that come before
    every such last one are known to be next."""
    for source in sources:
        source.fill(want)
    merged = sorted(((p, s.game) for s in sources for p in s.buffer), reverse=True)
    unread = [s.buffer[-1] for s in sources if not s.exhausted]
    bound = max(unread) if unread else None
    return [(game, p[1], p[0]) for p, game in merged if bound is None or not _before(bound, p)][:want]


def created_at(meta: Meta) -> str:
    """``meta.created`` in RFC 3339 UTC with milliseconds."""
    seconds = int(meta.created)
    millis = int((meta.created - seconds) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"
