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
from collections.abc import Callable
from functools import wraps
from http import HTTPStatus
from typing import Any

import flask_smorest
import marshmallow as ma
import orjson
from flask import Response, request
from webargs.flaskparser import is_json_request

from service.errors import CODES, PROBLEM_JSON
from service.schemas import ProblemSchema
from service.smorest_compat import ApiBase, ParserBase, copy_apidoc, prepare_response

JSON = "application/json"


class Parser(ParserBase):
    """webargs' Flask parser with 400 for invalid input, including JSON
    nested too deeply for the decoder (a RecursionError would be a 500).

    Bodies are decoded with orjson (several times faster on the move path);
    what orjson refuses (integers beyond 64 bits, very deep nesting, bad
    JSON) goes to the standard decoder, so such bodies are judged exactly as
    before."""

    DEFAULT_VALIDATION_STATUS = 400

    def load_json_body(self, req: Any) -> Any:
        if is_json_request(req):
            try:
                return orjson.loads(req.get_data(cache=True))
            except orjson.JSONDecodeError:
                pass
        try:
            return super().load_json_body(req)
        except RecursionError:
            raise json.JSONDecodeError("JSON nested too deeply", "<nested>", 0) from None


View = Callable[..., Any]


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = Parser()

    def lazy_arguments(self, schema: Any, *, location: str) -> Callable[[View], View]:
        """``arguments`` for a query string or headers, minus the parser's cost
        when the request carries none of the schema's fields (the usual case
        on the move path): the view then gets the schema's defaults.  Any of
        its fields present → the full webargs parse, with its errors."""
        names = [field.data_key or name for name, field in schema.fields.items()]
        defaults = schema.load({})
        parser = self.ARGUMENTS_PARSER

        def decorator(func: View) -> View:
            documented = self.arguments(schema, location=location)(func)

            @wraps(func)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                source = request.args if location == "query" else request.headers
                if any(name in source for name in names):
                    parsed = parser.parse(schema, request, location=location)
                else:
                    parsed = dict(defaults)
                return func(*args, parsed, **kwargs)

            copy_apidoc(wrapper, documented)
            return wrapper

        return decorator

    def body_arguments(self, schema: Any) -> Callable[[View], View]:
        """``arguments`` for a JSON body, with a fast path for valid bodies:
        orjson and the schema's own ``load``.  Anything the fast path does not
        accept goes through the full webargs parse, so errors are exactly the
        parser's."""
        parser = self.ARGUMENTS_PARSER

        def decorator(func: View) -> View:
            documented = self.arguments(schema)(func)

            @wraps(func)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                try:
                    if not is_json_request(request):
                        raise ValueError("not JSON")
                    parsed = schema.load(orjson.loads(request.get_data(cache=True)))
                except (ValueError, ma.ValidationError):  # orjson's error is a ValueError
                    parsed = parser.parse(schema, request, location="json")
                return func(*args, parsed, **kwargs)

            copy_apidoc(wrapper, documented)
            return wrapper

        return decorator

    def problems(self, *codes: str) -> Callable[[View], View]:
        """Document the error responses an operation may give, by code."""
        by_status: dict[int, list[str]] = {}
        for code in codes:
            by_status.setdefault(CODES[code][0], []).append(code)

        def decorator(func: View) -> View:
            documented = func
            for status, group in sorted(by_status.items(), reverse=True):
                documented = self.alt_response(
                    status, schema=ProblemSchema, content_type=PROBLEM_JSON,
                    description="Problem details; `code`: " + ", ".join(f"`{c}`" for c in group))(documented)
            # Keep the documentation, drop alt_response's runtime wrappers:
            # they only call the view, and cost a coroutine check each.
            copy_apidoc(func, documented)
            return func

        return decorator


class Api(ApiBase):
    ERROR_SCHEMA = ProblemSchema

    def register_error_handlers(self) -> None:
        """Left to :func:`service.errors.register` (one error shape)."""

    def register_responses(self) -> None:
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
