"""gunicorn's own error answers (a request it refuses before the app sees
it: 400 bad request line or header, 414 request line too long, 431 too many
or too large headers) as problem+json instead of its HTML page.

gunicorn has no setting for that body, so :func:`install` (called by
``deploy/gunicorn.conf.py`` in the master, before workers fork) replaces
``gunicorn.util.write_error``, the one function its workers answer those
errors with.  Codes are ``http_<status>`` like the app's generic errors.
"""
from __future__ import annotations

import os
from typing import Any

import orjson

from service.http.errors import PROBLEM_JSON, TYPE_PREFIX, clip

DETAILS = {
    414: "the request line is over the server's limit (limit_request_line, 4094 bytes): shorten the URL",
    431: "the request headers are over the server's limits (limit_request_fields 100, "
         "limit_request_field_size 8190 bytes)",
}


def problem_bytes(status: int, reason: str, message: str, cors: bool,
                  extra: list[str] | None = None, code: str | None = None) -> bytes:
    """The whole HTTP response gunicorn writes for an error (``extra``:
    more header lines; ``code``: the problem's, else ``http_<status>``)."""
    code = code or f"http_{status}"
    body = orjson.dumps({"type": TYPE_PREFIX + code, "title": reason, "status": status,
                         "detail": DETAILS.get(status) or clip(message or reason), "code": code})
    head = [f"HTTP/1.1 {status} {reason}", "Connection: close", f"Content-Type: {PROBLEM_JSON}",
            f"Content-Length: {len(body)}", *(extra or [])]
    if cors:
        head += ["Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: ETag, Location, Retry-After"]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


def any_origin() -> bool:
    """Whether ``CORS_ORIGINS`` lets any origin read the answers."""
    return (os.environ.get("CORS_ORIGINS") or "*").strip() in ("", "*")


def install() -> None:
    """Make gunicorn's workers answer their own errors as problem+json."""
    from gunicorn import util

    cors = any_origin()

    def write_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
        util.write_nonblock(sock, problem_bytes(status_int, reason, mesg, cors))

    util.write_error = write_error
