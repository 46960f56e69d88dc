"""Thin flask-smorest subclasses and documentation helpers.

* Request validation failures are 400 ``invalid_request`` (webargs' default
  is 422, which the contract reserves for game-level refusals).
* Errors are documented as ``application/problem+json`` with
  :class:`~service.schemas.ProblemSchema`; the service's own handlers
  (:mod:`service.errors`) replace flask-smorest's.
* :func:`json_response` serialises with orjson and returns a ``Response``,
  which flask-smorest passes through without schema dumping.
"""
from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any, Callable

import flask_smorest
import orjson
from flask import Response
from flask_smorest.utils import prepare_response
from webargs.flaskparser import FlaskParser

from service.errors import CODES, PROBLEM_JSON
from service.schemas import ProblemSchema

JSON = "application/json"


class Parser(FlaskParser):
    """webargs' Flask parser with 400 for invalid input, including JSON
    nested too deeply for the decoder (a RecursionError would be a 500)."""

    DEFAULT_VALIDATION_STATUS = 400

    def _raw_load_json(self, req: Any) -> Any:
        try:
            return super()._raw_load_json(req)
        except RecursionError:
            raise json.JSONDecodeError("JSON nested too deeply", "<nested>", 0) from None


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = Parser()

    def problems(self, *codes: str) -> Callable[[Callable], Callable]:
        """Document the error responses an operation may give, by code."""
        by_status: dict[int, list[str]] = {}
        for code in codes:
            by_status.setdefault(CODES[code][0], []).append(code)

        def decorator(func: Callable) -> Callable:
            for status, group in sorted(by_status.items(), reverse=True):
                func = self.alt_response(
                    status, schema=ProblemSchema, content_type=PROBLEM_JSON,
                    description="Problem details; `code`: " + ", ".join(f"`{c}`" for c in group))(func)
            return func

        return decorator


class Api(flask_smorest.Api):
    ERROR_SCHEMA = ProblemSchema

    def _register_error_handlers(self) -> None:
        """Left to :func:`service.errors.register` (one error shape)."""

    def _register_responses(self) -> None:
        """Named error responses (lazy: only those referenced are emitted)."""
        names = [status.name for status in HTTPStatus if status >= 400]
        for name in [*names, self.DEFAULT_ERROR_RESPONSE_NAME]:
            response: dict[str, Any] = {"description": "Problem details (RFC 9457) with a stable `code`",
                                        "schema": ProblemSchema}
            prepare_response(response, self.spec, PROBLEM_JSON)
            self.spec.components.response(name, response, lazy=True)


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """``body`` as JSON (orjson), ready to return from a view."""
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    return Response(data, status=status, headers=headers, content_type=JSON)


#: Header docs reused by several operations.
ETAG_HEADER = {"ETag": {"description": 'the version the body carries, as `"<version>"`',
                        "schema": {"type": "string"}}}
