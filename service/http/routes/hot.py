"""The move path below Flask: GET match, GET legal-moves, POST moves and
POST simulate.

A bot's requests (a view, its legal moves, a move) and a planner's
simulations (many short calls, each one playout) are answered by a WSGI
dispatcher in front of the Flask app, without flask-smorest's and webargs'
generic machinery and Flask's request context.  It only takes a request
that is certainly well-formed, by the route's own schemas: its query,
headers and body checks are compiled from the schemas the Flask route loads
with (:mod:`service.http.precheck`), so there is one definition of a valid
request; on top of them:

* the path is one of the four, with a well-formed match id, and the
  method GET (view, legal moves) or POST (moves, simulate);
* POST: ``Content-Type: application/json``, a ``Content-Length`` within
  ``MAX_CONTENT_LENGTH``, no ``If-Match`` (the route reads it against the
  body's ``version``) and a body nested at most ``MAX_DEPTH`` deep.

Anything else goes to the Flask app unchanged (the body read is put back),
so every 400, 404, 405 and 413 is the documented route's own (smorest,
webargs, the body hooks); the OpenAPI document still comes from the smorest
definitions in :mod:`service.http.routes.matches` and
:mod:`service.http.routes.worlds`.  From there on both paths call
the same :class:`service.domain.matches.Lodge` (or its
:class:`~service.domain.moves.MovePipeline`, or
:class:`~service.domain.worlds.Planner`) method, so the checks, their order,
errors, redaction and idempotency are the same code; failures become the
same problems (:func:`service.http.errors.respond` with the app's handlers).
Every answer carries the headers the Flask path gives it (``ETag``,
``Cache-Control``, ``Vary``, the CORS headers from flask-cors' own options,
the ``X-RateLimit-*`` headers) and is counted and timed in the same metrics
under the same route template.

In the order of the Flask path's hooks: the request's store budget opens,
the per-client application limits count it (:class:`service.ops.limits.Gate`:
flask-limiter's counters; a request handed to Flask is counted there, never
twice), then the route runs.  The client address is ``REMOTE_ADDR``, set by
ProxyFix around the whole app when ``TRUSTED_PROXIES`` says so.
"""
from __future__ import annotations

import io
import re
import time
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any

import orjson

from service.domain.matches import Lodge
from service.domain.worlds import Planner
from service.http import precheck
from service.http.api import MAX_DEPTH, NO_STORE, PRIVATE
from service.http.cors import Headers
from service.http.errors import Handler, respond
from service.http.precheck import Unsure
from service.http.routes.matches import MoveQuerySchema, ViewQuerySchema
from service.http.routes.worlds import SimulateSchema, planner_of
from service.http.schemas import ConditionalHeaders, MoveHeaders, MoveRequestSchema, SeatQuerySchema
from service.ops import metrics
from service.ops.limits import Gate

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
StartResponse = Callable[..., Any]

_PATH = re.compile(r"/v1/matches/([a-z2-7]{16})(/moves|/legal-moves)?")
_SIMULATE_PATH = re.compile(r"/v1/games/([^/]{1,64})/simulate")
#: The simulate route's key among :data:`RULES` (the match routes' keys are their tails).
SIMULATE = "simulate"
#: The route templates the metrics label requests with (as Flask's url rules).
RULES = {None: "/v1/matches/<string:match_id>", "/moves": "/v1/matches/<string:match_id>/moves",
         "/legal-moves": "/v1/matches/<string:match_id>/legal-moves",
         SIMULATE: "/v1/games/<string:game>/simulate"}
#: Each route's query check, compiled from the schema its Flask route loads.
QUERY = {None: precheck.query(ViewQuerySchema()), "/moves": precheck.query(MoveQuerySchema()),
         "/legal-moves": precheck.query(SeatQuerySchema())}
_VIEW_HEADERS = precheck.headers(ConditionalHeaders())
_MOVE_HEADERS = precheck.headers(MoveHeaders())
_MOVE_BODY = precheck.body(MoveRequestSchema())
_SIMULATE_BODY = precheck.body(SimulateSchema())
JSON = "application/json"
#: What a request asks for once its checks passed: the answer, when called.
Answer = Callable[[], tuple[int, list[tuple[str, str]], bytes]]


def _body(environ: dict[str, Any], limit: int | None, check: precheck.Convert) -> dict[str, Any]:
    """The loaded body of a plain JSON request, by its route's compiled ``check``."""
    kind = environ.get("CONTENT_TYPE", "")
    if kind.partition(";")[0].strip().lower() != JSON or "HTTP_TRANSFER_ENCODING" in environ:
        raise Unsure
    length = environ.get("CONTENT_LENGTH", "")
    if not length.isdigit() or (limit is not None and int(length) > limit):
        raise Unsure
    data: bytes = environ["wsgi.input"].read(int(length))
    environ["wsgi.input"] = io.BytesIO(data)  # for Flask, should the checks below refuse it
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH:
        raise Unsure
    try:
        return check(orjson.loads(data))
    except orjson.JSONDecodeError:
        raise Unsure from None


def _etag(version: int) -> list[tuple[str, str]]:
    return [("ETag", f'"{version}"'), *PRIVATE.items()]


class HotPaths:
    """WSGI middleware: the three hot routes answered here (see the module
    docstring), everything else by ``flask_app``."""

    def __init__(self, flask_app: WsgiApp, lodge: Lodge, planner: Planner, handlers: dict[type[Exception], Handler],
                 max_body: int | None, cors: Headers, gate: Gate | None):
        self.flask_app, self.lodge, self.planner, self.handlers = flask_app, lodge, planner, handlers
        self.max_body, self.cors, self.gate = max_body, cors, gate
        self._requests: dict[tuple[str, str, int], Any] = {}
        self._latency: dict[tuple[str, str], Any] = {}

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"]
        if method not in ("GET", "POST"):
            return self.flask_app(environ, start_response)
        started = time.perf_counter()
        try:
            tail, answer = self._route(environ, method, environ.get("PATH_INFO", ""))
        except Unsure:
            return self.flask_app(environ, start_response)
        cors = self.cors(environ)
        limited: list[tuple[str, str]] = []
        with self.lodge.store.budget():
            try:
                if self.gate is not None:
                    limited = self.gate.check(environ.get("REMOTE_ADDR") or "unknown")
                status, headers, data = answer()
            except Exception as error:  # the problem Flask's handlers give
                response = respond(self.handlers, error)
                for name, value in [*cors, *limited]:
                    response.headers.add(name, value)
                self._observe(tail, method, response.status_code, started)
                return response(environ, start_response)
        start_response(_STATUS[status], [*headers, *cors, *limited])
        self._observe(tail, method, status, started)
        return [data]

    def _route(self, environ: dict[str, Any], method: str, path: str) -> tuple[str | None, Answer]:
        """The request's route (its key in :data:`RULES`) and answer to run,
        once every check that may hand it to Flask has passed (Unsure
        otherwise)."""
        simulate = _SIMULATE_PATH.fullmatch(path) if method == "POST" else None
        if simulate is not None:
            body = _body(environ, self.max_body, _SIMULATE_BODY)
            return SIMULATE, lambda: self._simulate(simulate.group(1), body)
        found = _PATH.fullmatch(path)
        if found is None:
            raise Unsure
        match_id, tail = found.groups()
        if (method == "POST") != (tail == "/moves"):
            raise Unsure
        return tail, self._checked(environ, match_id, tail, QUERY[tail](environ.get("QUERY_STRING", "")))

    def _checked(self, environ: dict[str, Any], match_id: str, tail: str | None,
                 query: dict[str, Any]) -> Answer:
        """The request's answer to run, once every check that may hand it to
        Flask has passed (Unsure otherwise)."""
        authorization = environ.get("HTTP_AUTHORIZATION")
        if tail == "/moves":
            headers = _MOVE_HEADERS(environ)
            if "if_match" in headers:
                raise Unsure
            body = _body(environ, self.max_body, _MOVE_BODY)
            return lambda: self._move(match_id, authorization, query, body, headers.get("idempotency_key"))
        if tail == "/legal-moves":
            return lambda: self._legal_moves(match_id, authorization, query)
        return lambda: self._view(match_id, authorization, query, _VIEW_HEADERS(environ).get("if_none_match"))

    def _move(self, match_id: str, authorization: str | None, query: dict[str, Any], body: dict[str, Any],
              key: str | None) -> tuple[int, list[tuple[str, str]], bytes]:
        status, data, new_version = self.lodge.moves.play(match_id, authorization, query.get("seat"), body["move"],
                                                          body.get("version"), key, query["legal"])
        return status, [*_etag(new_version), ("Content-Type", JSON), ("Content-Length", str(len(data)))], data

    def _simulate(self, game: str, body: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
        found = self.planner.simulate(
            game, body["world"], body["moves"], body.get("playout"), body.get("seed"), body.get("as_"))
        data = orjson.dumps(found)
        return 200, [*NO_STORE.items(), ("Content-Type", JSON), ("Content-Length", str(len(data)))], data

    def _legal_moves(self, match_id: str, authorization: str | None,
                     query: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
        body = orjson.dumps(self.lodge.legal_moves(match_id, authorization, query.get("seat")))
        return 200, [*NO_STORE.items(), ("Content-Type", JSON), ("Content-Length", str(len(body)))], body

    def _view(self, match_id: str, authorization: str | None, query: dict[str, Any],
              if_none_match: str | None) -> tuple[int, list[tuple[str, str]], bytes]:
        version, view = self.lodge.view(match_id, authorization, if_none_match, query["legal"])
        if view is None:
            return 304, _etag(version), b""
        body = orjson.dumps(view)
        return 200, [*_etag(version), ("Content-Type", JSON), ("Content-Length", str(len(body)))], body

    def _observe(self, tail: str | None, method: str, status: int, started: float) -> None:
        """The request in the metrics, as :func:`service.ops.metrics.instrument` counts it."""
        rule = RULES[tail]
        latency = self._latency.get((rule, method))
        if latency is None:
            latency = self._latency[(rule, method)] = metrics.LATENCY.labels(rule, method)
        counter = self._requests.get((rule, method, status))
        if counter is None:
            counter = self._requests[(rule, method, status)] = metrics.REQUESTS.labels(rule, method, str(status))
        latency.observe(time.perf_counter() - started)
        counter.inc()


#: Status lines as werkzeug writes them.
_STATUS = {s.value: f"{s.value} {s.phrase.upper()}" for s in HTTPStatus}


def install(flask_app: Any, lodge: Lodge, handlers: dict[type[Exception], Handler], cors: Headers,
            gate: Gate | None) -> None:
    """Put the dispatcher in front of ``flask_app.wsgi_app``; ``cors``: the
    CORS headers of an answer, ``gate``: the rate limits (None when off)."""
    flask_app.wsgi_app = HotPaths(flask_app.wsgi_app, lodge, planner_of(flask_app.extensions, lodge), handlers,
                                  flask_app.config.get("MAX_CONTENT_LENGTH"), cors, gate)
