"""Request bodies a careless client sends: JSON whatever its Content-Type.

Tokens are bearer headers and no cookie is involved, so a cross-site form
cannot act for anyone: a body that is valid JSON is read as JSON whether it
came as ``application/json``, ``text/plain`` (a browser's "simple" request),
form-encoded or without a Content-Type.  Anything else is 400
``invalid_request`` saying that the body must be a JSON object sent with
``Content-Type: application/json``.
"""
from __future__ import annotations

import json

import orjson
from flask import Flask, request

from service.http.errors import ApiError

#: the endpoints that read a JSON body
BODY_ENDPOINTS = frozenset({"matches.Matches", "matches.Moves", "seats.Seat"})
#: those of them whose body may be left out (a claim of a public match's seat)
OPTIONAL_BODY = frozenset({"seats.Seat"})
NEED = "send a JSON object with Content-Type: application/json"


def _read_as_json() -> None:
    """Before the view: a non-JSON Content-Type with a JSON body is taken as JSON."""
    if request.method != "POST" or request.url_rule is None or request.url_rule.endpoint not in BODY_ENDPOINTS:
        return
    if request.is_json:
        return
    sent = request.mimetype or "no Content-Type"
    data = request.get_data(cache=True)
    if not data.strip():
        if request.url_rule.endpoint in OPTIONAL_BODY:
            return
        raise ApiError("invalid_request", f"the request has no body ({sent}); {NEED}")
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            json.loads(data)
        except (ValueError, RecursionError):
            raise ApiError("invalid_request", f"the body is not JSON ({sent}); {NEED}") from None
    request.environ["CONTENT_TYPE"] = "application/json"
    for cached in ("_parsed_content_type", "mimetype", "mimetype_params", "content_type"):
        request.__dict__.pop(cached, None)


def install(app: Flask) -> None:
    """Register the hook (after the body-size check, so 413 comes first)."""
    app.before_request(_read_as_json)
