"""The WSGI application factory.

``gunicorn -c deploy/gunicorn.conf.py 'service.app:create_app()'`` serves it;
tests call ``create_app(redis_client=fakeredis.FakeRedis())``.
"""
from __future__ import annotations

from typing import Any

from apispec import APISpec
from flask import Flask, request
from werkzeug.exceptions import RequestEntityTooLarge

from bots import pool as bot_pool
from engine.core import Game
from service.domain.matches import Lodge
from service.domain.stream import hide_query_token
from service.domain.webhooks import Webhooks
from service.http import bodies, cors, docs_ui, errors, openapi_games, play
from service.http.api import Api
from service.http.context import EXTENSION
from service.http.routes import games, hot, ladders, matches, ops, seats, stream, worlds
from service.http.smorest_compat import SyncFlask, url_rule
from service.ops import limits, metrics
from service.ops.config import Settings
from service.ops.webhook_http import HostPolicy
from service.store.notify import Notifier
from service.store.redis_client import ReplicaWait
from service.store.redis_client import build as redis_client_for
from service.store.store import Store

API_DESCRIPTION = """\
Lodge runs turn-based card and board games for bots, front ends and
tournament harnesses.  Create a match, keep the tokens, and play by posting
moves taken from `legal-moves`.  Every error is `application/problem+json`
with a stable `code`.  Send `Authorization: Bearer <token>` (a seat token or
the admin token); without one you are a spectator where that is allowed.
"""


def create_app(redis_client: Any = None, *, settings: Settings | None = None,
               registry: Any = None) -> Flask:
    """Build the app.

    ``redis_client``: a redis-py compatible client to use (e.g.
    ``fakeredis.FakeRedis()``); by default the one ``REDIS_MODE`` asks for
    (:mod:`service.store.redis_client`; single mode without ``REDIS_URL``: an
    in-process fakeredis).  ``registry``: the games (by
    default ``engine.REGISTRY``).  Nothing here talks to Redis, so the app
    (and its OpenAPI document) can be built with the store down.
    """
    settings = settings or Settings.from_env()
    if registry is None:
        from engine import REGISTRY as registry
    if redis_client is None:
        redis_client = redis_client_for(settings)

    app = SyncFlask("lodge", static_folder=None)  # Lodge has no async views or hooks
    app.config.update(
        MAX_CONTENT_LENGTH=settings.max_body,
        API_TITLE="Lodge",
        API_VERSION="1.0.0",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        **docs_ui.CONFIG,
        API_SPEC_OPTIONS={
            "info": {"description": API_DESCRIPTION},
            "components": {"securitySchemes": {"bearer": {
                "type": "http", "scheme": "bearer",
                "description": "a seat token or the admin token of the match"}}},
        },
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]  # the DefaultJSONProvider
    app.config[stream.KEEPALIVE], app.config[stream.MAX_SECONDS] = settings.stream_keepalive, settings.stream_max
    write = ReplicaWait(redis_client, settings.wait_replicas, settings.wait_timeout_ms) \
        if settings.wait_replicas > 0 else None
    store = Store(redis_client, ttl=settings.match_ttl, cache_size=settings.cache_size, settings=settings,
                  write=write, primary_replicas=settings.wait_replicas if settings.redis_mode == "sentinel" else 0)
    notifier = Notifier(redis_client, store.versions, safety=settings.notify_safety)
    hooks = Webhooks(HostPolicy.parse(settings.webhook_hosts), settings.webhook_timeout_ms,
                     settings.webhook_concurrency)
    thinking = bot_pool.Thinking(bot_pool.shared(settings.bot_processes), settings.bot_timeout_ms)
    app.extensions[EXTENSION] = Lodge(store, registry, notifier, webhooks=hooks, thinking=thinking)
    app.wsgi_app = hide_query_token(app.wsgi_app)  # type: ignore[method-assign,assignment]
    openapi_games.check_boards(list(registry))
    _install_api(app, tuple(registry))
    docs_ui.install(app)
    play.install(app)
    cors_headers = cors.install(app, settings.cors_origins)
    errors.register(app, settings.retry_after)
    limiter = limits.install(app, redis_client, settings, store.budget)
    metrics.instrument(app)
    app.before_request(_limit_streamed_body)
    bodies.install(app)
    hot.install(app, app.extensions[EXTENSION], errors.handlers(settings.retry_after), cors_headers,
                limits.Gate(limiter, settings.rate_limit_default) if settings.rate_limit_enabled else None)
    limits.trust_proxies(app, settings)
    return app


#: The blueprints of the API, in the document's order.
BLUEPRINTS = (games.blp, matches.blp, seats.blp, stream.blp, ladders.blp, worlds.blp, ops.blp)

#: The finished OpenAPI document (an apispec ``APISpec``) per tuple of games,
#: built by the process's first app for those games (:func:`_install_api`).
_DOCUMENTS: dict[tuple[Game[Any, Any], ...], APISpec] = {}


def _install_api(app: Flask, games: tuple[Game[Any, Any], ...]) -> Api:
    """The app's flask-smorest ``Api``: every blueprint's routes, and the
    OpenAPI document served at ``/openapi.json`` and ``/docs``.

    Building the document is about two thirds of an app's CPU (flask-smorest
    deep-copies every operation's documentation, apispec converts the
    marshmallow schemas), yet it depends on nothing that differs between the
    apps of a process except the games: the blueprints, the
    ``API_*``/``OPENAPI_*`` configuration (fixed in :func:`create_app`) and
    the games (their declarations) make it, and no ``Settings`` value reaches
    it.  So the first app for a tuple of games (the same game objects in the
    same order) builds it, as ever at construction (a bad declaration still
    fails at start), and the later ones share that ``APISpec``
    (:class:`~service.http.api.Api` given a ``document``): they register the
    routes only.  Nothing adds to a document once it is cached, so sharing it
    cannot leak one app's change into another's.
    """
    api = Api(app, document=_DOCUMENTS.get(games))
    for blueprint in BLUEPRINTS:
        api.register_blueprint(blueprint)
    if not api.shared:
        _document_doc_routes(api)
        openapi_games.document(api.spec, list(games))
        matches.document_legal(api.spec)
        _DOCUMENTS[games] = api.spec
    return api


def _limit_streamed_body() -> None:
    """413 for a chunked body over ``MAX_CONTENT_LENGTH``.

    Werkzeug checks ``Content-Length`` itself, but a streamed body (no
    Content-Length) is only cut at the limit, which would then fail as
    truncated JSON (400).  Read it here, and if the limit was reached, look one
    byte further in the server's stream.
    """
    limit = request.max_content_length
    if request.content_length is not None or limit is None or request.method in ("GET", "HEAD"):
        return
    if len(request.get_data(cache=True)) >= limit and request.environ["wsgi.input"].read(1):
        raise RequestEntityTooLarge()


def _document_doc_routes(api: Api) -> None:
    """The document and the docs page are endpoints too."""
    api.spec.path(rule=url_rule(api, "api-docs.openapi_json"), operations={"get": {
        "tags": ["ops"], "summary": "This OpenAPI document",
        "responses": {"200": {"description": "OpenAPI 3 document",
                              "content": {"application/json": {"schema": {"type": "object"}}}}}}})
    api.spec.path(rule=url_rule(api, "api-docs.openapi_swagger_ui"), operations={"get": {
        "tags": ["ops"], "summary": "Browsable API documentation (Swagger UI)",
        "responses": {"200": {"description": "HTML page",
                              "content": {"text/html": {"schema": {"type": "string"}}}}}}})
