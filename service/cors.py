"""Cross-origin use (contract 1.1): browser front ends on other origins.

flask-cors adds the headers to every response, errors (problem+json) and
304s included.  ``CORS_ORIGINS`` (comma list, default ``*``) names the
origins allowed; credentials are never allowed: tokens are bearer headers,
no cookie is involved.  A preflight (``OPTIONS`` with
``Access-Control-Request-Method``) answers 204 with no body.
"""
from __future__ import annotations

from flask import Flask, Response, request
from flask_cors import CORS

METHODS = ["GET", "POST", "DELETE"]
ALLOW_HEADERS = ["Authorization", "Content-Type", "If-Match", "If-None-Match", "Idempotency-Key",
                 "Last-Event-ID"]
EXPOSE_HEADERS = ["ETag", "Location", "Retry-After"]
#: Seconds a browser may cache a preflight answer.
MAX_AGE = 600


def parse_origins(raw: str | None) -> list[str]:
    """``CORS_ORIGINS`` as a list: comma separated, blanks dropped, ``*`` by default."""
    origins = [o.strip() for o in (raw or "").split(",") if o.strip()]
    return origins or ["*"]


def install(app: Flask, origins: list[str]) -> None:
    """CORS headers on every response for ``origins``; preflights as 204.

    With ``*`` every response says ``Access-Control-Allow-Origin: *``; with a
    list, an allowed ``Origin`` is echoed (and ``Vary: Origin`` added) and any
    other origin gets no CORS header, so its browser refuses the answer.  A
    preflight's ``Access-Control-Allow-Headers`` lists the requested headers
    that are allowed."""
    anyone = origins == ["*"]
    # strings keep the contract's order (flask-cors sorts lists)
    CORS(app, origins="*" if anyone else origins, send_wildcard=anyone, methods=", ".join(METHODS),
         allow_headers=ALLOW_HEADERS, expose_headers=", ".join(EXPOSE_HEADERS), supports_credentials=False,
         max_age=MAX_AGE, vary_header=True)
    app.after_request(_preflight_no_content)


def _preflight_no_content(response: Response) -> Response:
    """Flask answers ``OPTIONS`` with 200 and an empty body; a preflight is 204."""
    if (request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers
            and response.status_code == 200):
        response.status_code = 204
        response.set_data(b"")
        response.headers.pop("Content-Type", None)
    return response
