"""The event stream of a match (contract: "Stream (1.1)"), free of Flask.

:func:`follow` checks the match (on the store: a worker's cache may still
hold a match deleted through another) and the caller at once (404/401/403
before the first byte), then returns the stream: one message per version after
``after``, in order and without gaps, each ``{"version", "events"}`` with the
events redacted for the caller by the same code as ``/events``
(:func:`service.domain.views.redact` over :meth:`service.domain.matches.Lodge.events_after`),
plus ``"state"`` on the message of the current version when asked.  1.2:
a caller held back by the spectator delay gets version v once the match is
at v + delay (and everything once it is finished).  Between
changes it sleeps on a :class:`service.store.notify.Waiter` (no polling), sending a
keep-alive every ``keepalive`` seconds.  A finished match ends the stream
(``end`` ``finished``), a deleted or expired one too (``deleted``); so do
shutdown and ``max_seconds``, without an ``end``, so that clients reconnect
with ``Last-Event-ID``, and a look at the store that fails (:func:`_until_store_fault`).

The query-string token (for ``EventSource``, which cannot send headers) is
taken out of the WSGI environ by :func:`hide_query_token` before anything
can log the URL.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

import orjson

from engine.core import FINISHED, Game, Viewer
from service.domain.matches import Lodge
from service.domain.views import delay_for, held_back, legal_for, redact, view_of
from service.http.errors import is_store_fault
from service.store.store import DamagedMatch, Meta, Snapshot

log = logging.getLogger(__name__)

#: WSGI environ key holding the ``?token=`` value once it is out of the URL.
QUERY_TOKEN = "lodge.query_token"


@dataclass(frozen=True)
class Framing:
    """How messages are written on the wire."""

    media_type: str
    keepalive: bytes
    message: Callable[[int, bytes], bytes]
    end: Callable[[str], bytes]


SSE = Framing(
    "text/event-stream", b": keep-alive\n\n",
    lambda version, data: b"id: %d\nevent: events\ndata: %s\n\n" % (version, data),
    lambda status: b"event: end\ndata: %s\n\n" % orjson.dumps({"status": status}))
NDJSON = Framing(
    "application/x-ndjson", b"\n",
    lambda version, data: data + b"\n",
    lambda status: b"")
FRAMINGS = {f.media_type: f for f in (SSE, NDJSON)}


def follow(lodge: Lodge, match_id: str, authorization: str | None, after: int, with_state: bool,
           framing: Framing, *, keepalive: float, max_seconds: float, legal: bool = False) -> Iterator[bytes]:
    """Check the match and the caller now; then the stream's chunks
    (``legal``: ``legal_moves`` beside each ``state``)."""
    meta, viewer = lodge.stream_check(match_id, authorization)
    game = lodge.game(meta.game)
    return _until_store_fault(match_id, _chunks(lodge, meta, game, viewer, after, with_state, framing, keepalive,
                                                time.monotonic() + max_seconds, legal))


def _until_store_fault(match_id: str, chunks: Iterator[bytes]) -> Iterator[bytes]:
    """``chunks`` until a look at the store fails: Redis unreachable, its
    budget (``REDIS_BUDGET``) spent, e.g. while a bot's search inline
    (``BOT_PROCESSES=0``) held the worker, or the match damaged.  The stream
    then ends as at shutdown, after its last whole message and without
    ``end``: the client reconnects with ``Last-Event-ID`` and misses nothing
    (while the store still fails, the reconnect is a 503 with ``Retry-After``);
    anything else is a bug and raised."""
    try:
        yield from chunks
    except Exception as error:
        if not (is_store_fault(error) or isinstance(error, DamagedMatch)):
            raise
        log.warning("stream of match %s ended: the store failed during a look (%s: %s); the client resumes "
                    "with Last-Event-ID", match_id, type(error).__name__, error)


def _chunks(lodge: Lodge, meta: Meta, game: Game, viewer: Viewer, after: int, with_state: bool,
            framing: Framing, keepalive: float, deadline: float, legal: bool) -> Iterator[bytes]:
    store, notifier = lodge.store, lodge.notifier
    match_id = meta.match_id
    delay = delay_for(meta, viewer)
    first = True
    with notifier.watch(match_id) as waiter:
        while True:
            found = lodge.events_after(match_id, meta, game, after)
            snap = store.snapshot(match_id) if found is not None and (first or found[0] > after) else None
            if found is None or (snap is None and (first or found[0] > after)):
                yield framing.end("deleted")
                return
            version, events, _final = found
            if snap is not None:
                current = snap if snap.version == version else None
                shown = version
                if delay and game.status(snap.state) != FINISHED:  # 1.2: version v once the match is at v + delay
                    shown, events = held_back(delay, version, events)
                    if shown < version:
                        current = (lodge.snapshot_at(match_id, game, meta, shown)
                                   if with_state and current is not None and shown > after else None)
                chunk = b"".join(_messages(game, meta, viewer, after, shown, events,
                                           current if with_state else None, framing, legal))
                after = max(after, shown)
                if current is not None and game.status(current.state) == FINISHED:
                    yield chunk + framing.end("finished")
                    return
                if chunk or first:  # the first time the headers go out, even with nothing to send
                    yield chunk or framing.keepalive
                    first = False
                if snap.version > version:  # moved on meanwhile: read again now
                    continue
            waiter.seen = version
            # Sleep until woken (keep-alives meanwhile, no reads of the store).
            while not waiter.wait(min(keepalive, deadline - time.monotonic())):
                if notifier.closing.is_set() or time.monotonic() >= deadline:
                    return
                yield framing.keepalive
            if notifier.closing.is_set():
                return


def _messages(game: Game, meta: Meta, viewer: Viewer, after: int, version: int, events: list[dict[str, Any]],
              current: Snapshot | None, framing: Framing, legal: bool = False) -> Iterable[bytes]:
    """One framed message per version in (after, version], redacted exactly
    as ``/events?after=<after>`` would redact them; ``state`` (and with
    ``legal`` the caller's ``legal_moves``) on the one of ``current``."""
    by_version: dict[int, list[dict[str, Any]]] = {}
    for event in redact(game, events, viewer):
        by_version.setdefault(event["version"], []).append(event)
    for v in range(after + 1, version + 1):
        body: dict[str, Any] = {"version": v, "events": by_version.get(v, [])}
        if current is not None and v == current.version:
            body["state"] = view_of(game, meta, current, viewer)
            if legal:
                body["legal_moves"] = legal_for(game, current.state, viewer)
        yield framing.message(v, orjson.dumps(body))


WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def hide_query_token(app: WsgiApp) -> WsgiApp:
    """WSGI middleware: move ``token=`` out of the query string (and the raw
    URI) into ``environ[QUERY_TOKEN]`` before the server or the app sees the
    URL, so no access log or error report can contain it."""

    def scrubbed(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        query = environ.get("QUERY_STRING", "")
        if "token" in query:
            kept, tokens = [], []
            for part in query.split("&"):
                name, _, value = part.partition("=")
                if unquote_plus(name) == "token":
                    tokens.append(unquote_plus(value))
                else:
                    kept.append(part)
            if tokens:
                environ[QUERY_TOKEN] = tokens[0]
                environ["QUERY_STRING"] = "&".join(kept)
                for key in ("RAW_URI", "REQUEST_URI"):
                    if key in environ:
                        path = environ[key].partition("?")[0]
                        environ[key] = f"{path}?{environ['QUERY_STRING']}" if kept else path
        return app(environ, start_response)

    return scrubbed
