"""Cross-origin use (contract 1.1): browser front ends on other origins.

flask-cors adds the headers to every response, errors (problem+json) and
304s included.  ``CORS_ORIGINS`` (comma list, default ``*``) names the
origins allowed; credentials are never allowed: tokens are bearer headers,
no cookie is involved.  A preflight (``OPTIONS`` with
``Access-Control-Request-Method``) answers 204 with no body.  The hot paths
(:mod:`service.http.routes.hot`, below Flask) take the same headers from the same
resolved options (:func:`install` returns how).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask, Response, request
from flask_cors import CORS
from flask_cors.core import get_cors_headers, get_cors_options
from werkzeug.datastructures import Headers as RequestHeaders

METHODS = ["GET", "POST", "DELETE"]
ALLOW_HEADERS = ["Authorization", "Content-Type", "If-Match", "If-None-Match", "Idempotency-Key",
                 "Last-Event-ID"]
EXPOSE_HEADERS = ["ETag", "Location", "Retry-After"]
#: Seconds a browser may cache a preflight answer.
MAX_AGE = 600
#: The request headers a non-preflight answer's CORS headers depend on
#: (flask-cors' ``get_cors_headers``), and how many answers to keep.
ORIGIN, PRIVATE_NETWORK = "Origin", "Access-Control-Request-Private-Network"
_ORIGIN_KEY, _PRIVATE_NETWORK_KEY = (f"HTTP_{name.upper().replace('-', '_')}" for name in (ORIGIN, PRIVATE_NETWORK))
CACHED = 1024
VARY_ORIGIN = ("Vary", ORIGIN)


def parse_origins(raw: str | None) -> list[str]:
    """``CORS_ORIGINS`` as a list: comma separated, blanks dropped, ``*`` by default."""
    origins = [o.strip() for o in (raw or "").split(",") if o.strip()]
    return origins or ["*"]


Headers = Callable[[dict[str, Any]], list[tuple[str, str]]]


def install(app: Flask, origins: list[str]) -> Headers:
    """CORS headers on every response for ``origins``; preflights as 204.

    With ``*`` every response says ``Access-Control-Allow-Origin: *``; with a
    list, an allowed ``Origin`` is echoed and any other origin gets no CORS
    header, so its browser refuses the answer, and every response says
    ``Vary: Origin`` (flask-cors adds it only beside an echoed origin, and
    only with several listed) so that no cache serves one origin's answer to
    another.  A preflight's ``Access-Control-Allow-Headers`` lists the
    requested headers that are allowed.  Returns the CORS headers of a
    (non-preflight) answer to the request of a WSGI environ, as flask-cors
    adds them (computed by flask-cors once per ``Origin``, for the last
    :data:`CACHED` ones, with ``Vary: Origin`` as above)."""
    anyone = origins == ["*"]
    # strings keep the contract's order (flask-cors sorts lists)
    options: dict[str, Any] = dict(
        origins="*" if anyone else origins, send_wildcard=anyone, methods=", ".join(METHODS),
        allow_headers=ALLOW_HEADERS, expose_headers=", ".join(EXPOSE_HEADERS), supports_credentials=False,
        max_age=MAX_AGE, vary_header=True)
    if not anyone:
        app.after_request(_vary_origin)  # before flask-cors': runs after it
    CORS(app, **options)
    app.after_request(_preflight_no_content)
    resolved = get_cors_options(app, options)

    @functools.lru_cache(maxsize=CACHED)
    def for_origin(origin: str | None, private_network: str | None) -> list[tuple[str, str]]:
        sent = RequestHeaders([(name, value) for name, value in ((ORIGIN, origin), (PRIVATE_NETWORK, private_network))
                               if value is not None])
        found = [(name, str(value)) for name, value in get_cors_headers(resolved, sent, "GET").items(multi=True)]
        return found if anyone or _varies_by_origin(found) else [*found, VARY_ORIGIN]

    def headers(environ: dict[str, Any]) -> list[tuple[str, str]]:
        return for_origin(environ.get(_ORIGIN_KEY), environ.get(_PRIVATE_NETWORK_KEY))
    return headers


def _varies_by_origin(headers: Iterable[tuple[str, str]]) -> bool:
    return any(name.lower() == "vary" and ORIGIN.lower() in value.lower() for name, value in headers)


def _vary_origin(response: Response) -> Response:
    """``Vary: Origin`` on a response that lacks it (a listed-origins app)."""
    if not _varies_by_origin(response.headers.items()):
        response.headers.add(*VARY_ORIGIN)
    return response


def _preflight_no_content(response: Response) -> Response:
    """Flask answers ``OPTIONS`` with 200 and an empty body; a preflight is 204."""
    if (request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers
            and response.status_code == 200):
        response.status_code = 204
        response.set_data(b"")
        response.headers.pop("Content-Type", None)
    return response
