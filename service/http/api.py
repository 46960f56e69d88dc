"""Thin flask-smorest subclasses and documentation helpers.

* Request validation failures are 400 ``invalid_request`` (webargs' default
  is 422, which the contract reserves for game-level refusals).
* Errors are documented as ``application/problem+json`` with
  :class:`~service.http.schemas.ProblemSchema`; the service's own handlers
  (:mod:`service.http.errors`) replace flask-smorest's.
* :func:`json_response` serialises with orjson and returns a ``Response``,
  which flask-smorest passes through without schema dumping.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from functools import wraps
from http import HTTPStatus
from typing import Any

import flask_smorest
import marshmallow as ma
import orjson
from apispec import APISpec
from flask import Flask, Response, request
from webargs.flaskparser import is_json_request

from service.http.errors import CODES, PROBLEM_JSON, ApiError
from service.http.schemas import ProblemSchema
from service.http.smorest_compat import ApiBase, ParserBase, copy_apidoc, prepare_response

JSON = "application/json"


class Parser(ParserBase):
    """webargs' Flask parser with 400 for invalid input, including JSON
    nested too deeply for the decoder (a RecursionError would be a 500).

    Bodies are decoded with orjson (several times faster on the move path);
    what orjson refuses (integers beyond 64 bits, very deep nesting, bad
    JSON, lone surrogates, non-finite numbers) goes to :func:`strict_json`,
    so such bodies are judged as before, and what no game could use is 400
    ``invalid_request`` with a sentence saying why."""

    DEFAULT_VALIDATION_STATUS = 400

    def _raw_load_json(self, req: Any) -> Any:
        if not is_json_request(req):
            return ma.missing
        data = req.get_data(cache=True)
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            value = strict_json(data)
        return check_depth(data, value)

    def load_json_body(self, req: Any) -> Any:
        try:
            return super().load_json_body(req)
        except RecursionError:
            raise json.JSONDecodeError("JSON nested too deeply", "<nested>", 0) from None


#: The deepest nesting a body may have (no request needs more than a few levels;
#: orjson cannot even write back what is nested 255 deep).
MAX_DEPTH = 64


def check_depth(data: bytes, value: Any) -> Any:
    """``value`` if it is nested at most ``MAX_DEPTH`` deep, else 400."""
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:  # cheap bound first
        return value
    level = [(value, 1)]
    while level:
        item, depth = level.pop()
        if depth > MAX_DEPTH and isinstance(item, (dict, list)):
            sentence = f"the body is nested more than {MAX_DEPTH} levels deep"
            raise ApiError("invalid_request", sentence, errors={"json": [sentence]})
        if isinstance(item, dict):
            level.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            level.extend((v, depth + 1) for v in item)
    return value


#: Python refuses to convert longer integer literals (``sys.get_int_max_str_digits``).
MAX_INT_DIGITS = 4300


class _Refused(ValueError):
    """A body that is JSON but holds a value no request can carry."""


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"an integer in the body has more than {MAX_INT_DIGITS} digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:20]} is too large for a double")
    return value


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number; send a finite number")


def strict_json(data: bytes) -> Any:
    """Decode a body orjson refused: the standard decoder (bad JSON and
    too deep nesting: ``JSONDecodeError``), refusing what no request can carry
    (400 ``invalid_request``): integers over 4,300 digits, ``NaN`` and
    ``Infinity``, numbers beyond a double, lone UTF-16 surrogates."""
    try:
        value = json.loads(data.decode("utf-8"), parse_int=_int, parse_float=_float, parse_constant=_constant)
    except RecursionError:
        raise json.JSONDecodeError("JSON nested too deeply", "<nested>", 0) from None
    except _Refused as refused:
        raise ApiError("invalid_request", str(refused), errors={"json": [str(refused)]}) from None
    if _has_surrogate(value):
        sentence = "a string in the body holds a lone UTF-16 surrogate (like \\ud800); send valid Unicode"
        raise ApiError("invalid_request", sentence, errors={"json": [sentence]})
    return value


def _has_surrogate(value: Any) -> bool:
    """Any string (or object key) in ``value`` with a lone surrogate (no recursion:
    the value may be nested ~1000 deep)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


_SURROGATE = re.compile("[\ud800-\udfff]")


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
                    data = request.get_data(cache=True)
                    parsed = schema.load(check_depth(data, orjson.loads(data)))
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
    """The service's ``Api``.

    Given a finished ``document`` (an apispec ``APISpec``: the one another
    app of the process built for the same games, see
    :func:`service.app._install_api`), it serves that document and adds
    nothing to it: no named error responses, and :meth:`register_blueprint`
    registers routes only.  Building the document is most of the cost of an
    app; sharing it makes later apps cheap.
    """

    ERROR_SCHEMA = ProblemSchema

    def __init__(self, app: Flask, *, document: APISpec | None = None) -> None:
        self.shared = document is not None  # read by the hooks init_app calls
        super().__init__(app)
        if document is not None:
            self.spec = document

    def register_blueprint(self, blp: flask_smorest.Blueprint) -> None:
        """Register ``blp``'s routes, and document them unless the document
        is shared (it has them already)."""
        if self.shared:
            self.register_routes(blp)
        else:
            super().register_blueprint(blp)

    def register_error_handlers(self) -> None:
        """Left to :func:`service.http.errors.register` (one error shape)."""

    def register_responses(self) -> None:
        """Named error responses (lazy: only those referenced are emitted);
        a shared document has them."""
        if self.shared:
            return
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


#: Cache headers of the answers that depend on the caller's token (docs/api.md
#: "Caching"; the same on the hot paths, :mod:`service.routes.hot`): kept by the
#: caller's own cache only, revalidated every time (the view and a move's
#: answer with their ``ETag``, the record) ...
PRIVATE = {"Cache-Control": "private, no-cache", "Vary": "Authorization"}
#: ... or never stored: answers about now (legal moves, events, the stream).
NO_STORE = {"Cache-Control": "no-store", "Vary": "Authorization"}

#: Header docs reused by several operations.
ETAG_HEADER = {"ETag": {"description": 'the version the body carries, as `"<version>"`',
                        "schema": {"type": "string"}}}
