"""The one error shape: RFC 9457 problem details with a stable ``code``.

Every error response is ``application/problem+json``::

    {"type": "tag:lodge,2026:problem:<code>", "title": "...", "status": 409,
     "detail": "a sentence for the client author", "code": "<code>", ...}

400s carry field errors in ``errors``; 409 ``version_conflict`` carries
``current_version``.  Details only ever hold public information.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

import orjson
import redis.exceptions
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from service.store.redis_client import NotReplicated, outage

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "tag:lodge,2026:problem:"

log = logging.getLogger(__name__)

#: code -> (status, title).  The contract's codes, plus the generic ones a
#: web server needs (unknown path, wrong method, bug).
CODES: dict[str, tuple[int, str]] = {
    "invalid_request": (400, "Invalid request"),
    "unauthenticated": (401, "Unauthenticated"),
    "forbidden": (403, "Forbidden"),
    "match_not_found": (404, "Match not found"),
    "game_not_found": (404, "Game not found"),
    "ladder_not_found": (404, "Ladder not found"),
    "not_found": (404, "Not found"),
    "method_not_allowed": (405, "Method not allowed"),
    "version_conflict": (409, "Version conflict"),
    "not_your_turn": (409, "Not your turn"),
    "match_finished": (409, "Match finished"),
    "seat_taken": (409, "Seat taken"),
    "payload_too_large": (413, "Payload too large"),
    "illegal_move": (422, "Illegal move"),
    "invalid_options": (422, "Invalid options"),
    "idempotency_key_reused": (422, "Idempotency key reused"),
    "invalid_world": (422, "Invalid world"),
    "rate_limited": (429, "Too many requests"),
    "internal_error": (500, "Internal server error"),
    "store_unavailable": (503, "Store unavailable"),
}

#: Redis failures that mean "try again later", never a 500: no connection, a
#: cluster that stayed unreachable or unsettled through the client's retries
#: (no node answers, a slot without a node, redirections without end), no
#: primary known to the sentinels (a ConnectionError).
STORE_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, redis.exceptions.ClusterError,
                redis.exceptions.SlotNotCoveredError)
#: Cluster redirections and "try again" replies still failing after the retries.
CLUSTER_REPLIES = (redis.exceptions.AskError, redis.exceptions.TryAgainError, redis.exceptions.ClusterDownError)
#: Error replies of a reachable Redis that cannot serve right now (memory
#: full, read-only replica after a failover, loading, busy script, cluster
#: resharding).  Inside a Lua script they arrive as a plain ResponseError.
OUTAGE_REPLIES = ("OOM", "READONLY", "MASTERDOWN", "LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN",
                  "NOREPLICAS", "NOTREADY")


#: Echoed client input is cut to this many characters (plus "…") in ``detail``;
#: as a net, so is any run without spaces over MAX_WORD, and the whole sentence
#: to MAX_DETAIL.
MAX_ECHO = 80
MAX_WORD = 100
MAX_DETAIL = 500
_LONG_WORD = re.compile(r"\S{" + str(MAX_WORD + 1) + ",}")


def clip(text: str, limit: int = MAX_ECHO) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[:limit] + "…"


def clip_echoes(detail: str, given: Any) -> str:
    """``detail`` with every long string of the client's ``given`` input
    (keys and values, at any depth) cut where it is quoted back."""
    for text in sorted(_long_strings(given), key=len, reverse=True):
        detail = detail.replace(repr(text), repr(clip(text))).replace(text, clip(text))
    return detail


def _long_strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value} if len(value) > MAX_ECHO else set()
    if isinstance(value, dict):
        return set().union(*(_long_strings(k) | _long_strings(v) for k, v in value.items()))
    if isinstance(value, list):
        return set().union(*(_long_strings(v) for v in value))
    return set()


def _short_detail(detail: str) -> str:
    return clip(_LONG_WORD.sub(lambda m: clip(m.group(0)), detail), MAX_DETAIL)


class ApiError(Exception):
    """An error response: raise it anywhere in a request."""

    def __init__(self, code: str, detail: str, *, headers: dict[str, str] | None = None,
                 **extra: Any):
        super().__init__(detail)
        self.code = code
        self.status, self.title = CODES[code]
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra

    def response(self) -> Response:
        return problem(self.code, self.detail, headers=self.headers, **self.extra)


def problem(code: str, detail: str, *, headers: dict[str, str] | None = None,
            **extra: Any) -> Response:
    """A problem+json response for ``code``."""
    status, title = CODES[code]
    body = {"type": TYPE_PREFIX + code, "title": title, "status": status,
            "detail": _short_detail(detail), "code": code, **extra}
    return Response(orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS), status=status, headers=headers,
                    content_type=PROBLEM_JSON)


def _field_errors(error: HTTPException) -> dict[str, Any] | None:
    """webargs puts marshmallow messages in ``data["messages"]`` by location."""
    data = getattr(error, "data", None) or {}
    messages = data.get("messages") or data.get("errors")
    if not messages:
        return None
    if isinstance(messages, dict) and len(messages) == 1:
        (only,) = messages.values()
        if isinstance(only, dict):
            messages = only
    if isinstance(messages, dict):  # unknown field names are the client's
        messages = {clip(str(k)): v for k, v in messages.items()}
    return messages


def _sentence(errors: dict[str, Any] | None) -> str:
    """One sentence for ``detail`` out of marshmallow/webargs field errors."""
    if not isinstance(errors, dict) or not errors:
        return "the request does not match the schema"
    if "json" in errors:
        return "the body is not valid JSON; send a JSON object with Content-Type: application/json"
    name, msgs = next(iter(errors.items()))
    msg = msgs[0] if isinstance(msgs, list) and msgs and isinstance(msgs[0], str) else None
    if msg is None:
        return "the request does not match the schema; see errors"
    if name == "_schema":
        if msg.startswith("Invalid input type"):
            return "the body must be a JSON object"
        return msg.rstrip(".")
    more = "; see errors" if len(errors) > 1 else ""
    return f"{name}: {msg.rstrip('.')}{more}"


def handle_http_exception(error: HTTPException) -> Response:
    """Werkzeug/webargs HTTP errors in the problem shape."""
    if error.code == 400:
        errors = _field_errors(error)
        extra = {"errors": errors} if errors else {}
        return problem("invalid_request", _sentence(errors), **extra)
    if isinstance(error, RequestEntityTooLarge) or error.code == 413:
        _discard_body()
        return problem("payload_too_large", f"the request body is over the {_size(request.max_content_length)} limit",
                       headers={"Connection": "close"})
    if error.code == 404:
        return problem("not_found", "no such path; GET /openapi.json lists every endpoint")
    if error.code == 405:
        allowed = getattr(error, "valid_methods", None)
        headers = {"Allow": ", ".join(allowed)} if allowed else None
        return problem("method_not_allowed", "this path does not accept that method", headers=headers)
    if error.code == 429 and isinstance(error.response, Response):  # flask-limiter's, see service/ops/limits.py
        return error.response
    if error.code == 500:
        return problem("internal_error", "the server failed; this is a bug, please report it")
    body = {"type": TYPE_PREFIX + "http_" + str(error.code), "title": error.name,
            "status": error.code, "detail": error.description or error.name,
            "code": "http_" + str(error.code)}
    return Response(orjson.dumps(body), status=error.code, content_type=PROBLEM_JSON)


def _size(limit: int | None) -> str:
    """A body limit in words: ``64 KiB``, ``1 MiB``, ``1000 bytes``."""
    if limit is None:
        return "configured"
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if limit >= scale and limit % scale == 0:
            return f"{limit // scale} {unit}"
    return f"{limit} bytes"


#: Most of an oversized body read and dropped so a keep-alive connection
#: stays in sync (gunicorn itself drains only 64 KiB after announcing keep-alive).
DISCARD_LIMIT = 4 * 1024 * 1024


def _discard_body() -> None:
    stream = request.environ.get("wsgi.input")
    left = DISCARD_LIMIT
    try:
        while stream is not None and left > 0:
            chunk = stream.read(min(64 * 1024, left))
            if not chunk:
                break
            left -= len(chunk)
    except (OSError, ValueError):  # client gone or stream closed: nothing to keep in sync
        pass


def is_store_fault(error: BaseException) -> bool:
    """A failure of the store (answered 503 by a request), not a bug."""
    if isinstance(error, redis.exceptions.ResponseError):
        return is_outage(error)
    if isinstance(error, redis.exceptions.RedisClusterException):
        return "cannot be connected" in str(error)
    return isinstance(error, (*STORE_ERRORS, NotReplicated))


def is_outage(error: redis.exceptions.ResponseError) -> bool:
    """An error reply that means the store cannot serve now, not a bug."""
    if isinstance(error, (redis.exceptions.ReadOnlyError, redis.exceptions.OutOfMemoryError,
                          redis.exceptions.BusyLoadingError, *CLUSTER_REPLIES)):
        return True
    words = str(error).replace(":", " ").replace("-", " ").split()
    return any(word in OUTAGE_REPLIES for word in words)


def store_unavailable(retry_after: int) -> Response:
    return problem("store_unavailable",
                   "the match store is unreachable right now; nothing was changed, retry shortly",
                   headers={"Retry-After": str(retry_after)})


Handler = Callable[[Any], Response]


def handlers(retry_after: int) -> dict[type[Exception], Handler]:
    """The handlers that turn every failure into a problem, by exception class
    (Flask's error handlers, and :func:`respond` outside Flask)."""

    def on_bug(error: Exception) -> Response:
        log.exception("unhandled error", exc_info=error)
        return problem("internal_error", "the server failed; this is a bug, please report it")

    def on_store_error(error: Exception) -> Response:
        outage.failed(error)
        return store_unavailable(retry_after)

    def on_not_replicated(error: Exception) -> Response:
        outage.failed(error)
        return problem("store_unavailable",
                       "the store could not confirm the write on a replica in time; it may or may not have been "
                       "applied: retry with the same Idempotency-Key, or read the match",
                       headers={"Retry-After": str(retry_after)})

    def on_cluster_setup(error: redis.exceptions.RedisClusterException) -> Response:
        if "cannot be connected" in str(error):  # building the client: no startup node answers
            return on_store_error(error)
        return on_bug(error)

    def on_store_reply(error: redis.exceptions.ResponseError) -> Response:
        if is_outage(error):
            return on_store_error(error)
        return on_bug(error)

    table: dict[type[Exception], Handler] = {ApiError: lambda e: e.response(),
                                                 HTTPException: handle_http_exception}
    table.update(dict.fromkeys(STORE_ERRORS, on_store_error))
    table[NotReplicated] = on_not_replicated
    table[redis.exceptions.RedisClusterException] = on_cluster_setup
    table[redis.exceptions.ResponseError] = on_store_reply
    table[Exception] = on_bug
    return table


def respond(table: dict[type[Exception], Handler], error: Exception) -> Response:
    """The response Flask would give for ``error``: the handler of the
    nearest class in its MRO (as Flask picks them)."""
    for cls in type(error).__mro__:
        handler = table.get(cls)
        if handler is not None:
            return handler(error)
    raise error


def register(app: Flask, retry_after: int) -> None:
    """Install the handlers that turn every failure into a problem."""
    for exc, handler in handlers(retry_after).items():
        app.register_error_handler(exc, handler)
