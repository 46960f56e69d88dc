"""Every use of flask-smorest, webargs and Flask internals, in one place.

Lodge relies on a few things these libraries do not promise:

* flask-smorest keeps an operation's documentation in the view function's
  ``_apidoc`` attribute (:func:`copy_apidoc`);
* ``Api._app`` is the app an ``Api`` was initialised with (:func:`url_rule`);
* ``app.extensions["flask-smorest"]["apis"][""]["ext_obj"]`` is the ``Api``
  (:func:`api_spec`);
* ``Api.init_app`` calls ``_register_error_handlers`` and
  ``_register_responses``, which :class:`ApiBase` turns into overridable
  hooks;
* ``app.extensions["flask-smorest"]["blp_name_to_api"]`` maps a blueprint's
  name to its ``Api`` (flask-smorest's ``current_api``), which
  ``Api.register_blueprint`` fills in besides documenting the blueprint
  (:meth:`ApiBase.register_routes` does the first half alone);
* webargs' ``FlaskParser._raw_load_json`` decodes a JSON body
  (:class:`ParserBase`);
* Flask wraps every view and hook in ``ensure_sync`` (:class:`SyncFlask`);
* Werkzeug's ``Rule.compile`` makes the URL builders with
  ``Rule._compile_builder`` and calls them as ``_build``/``_build_unknown``
  (:class:`LazyBuildRule`);
* ``flask_smorest.utils.prepare_response`` fills a response's content.

tests/service/test_smorest_compat.py checks each of them, so an upgrade that breaks
one fails there rather than somewhere in the API.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flask_smorest
from flask import Flask
from flask_smorest.utils import prepare_response
from webargs.flaskparser import FlaskParser
from werkzeug.routing import Rule

__all__ = ["ApiBase", "LazyBuildRule", "ParserBase", "SyncFlask", "api_spec", "copy_apidoc", "prepare_response",
           "url_rule"]


def copy_apidoc(target: Callable[..., Any], documented: Callable[..., Any]) -> None:
    """Give ``target`` the operation documentation flask-smorest's decorators
    attached to ``documented`` (so a hand-written wrapper is documented the
    same)."""
    target._apidoc = documented._apidoc  # type: ignore[attr-defined]


def url_rule(api: flask_smorest.Api, endpoint: str) -> Rule:
    """The URL rule of an endpoint of the app ``api`` was initialised with."""
    app: Flask = api._app
    return next(r for r in app.url_map.iter_rules() if r.endpoint == endpoint)


def api_spec(app: Flask) -> dict[str, Any]:
    """The OpenAPI document of the app's (only, unprefixed) ``Api``."""
    api = app.extensions["flask-smorest"]["apis"][""]["ext_obj"]
    spec: dict[str, Any] = api.spec.to_dict()
    return spec


class ApiBase(flask_smorest.Api):
    """``flask_smorest.Api`` with its private setup steps as public hooks."""

    def _register_error_handlers(self) -> None:
        self.register_error_handlers()

    def _register_responses(self) -> None:
        self.register_responses()

    def register_error_handlers(self) -> None:
        """flask-smorest's error handlers (override to install others)."""
        super()._register_error_handlers()

    def register_responses(self) -> None:
        """flask-smorest's named error responses (override to name others)."""
        super()._register_responses()

    def register_routes(self, blp: flask_smorest.Blueprint) -> None:
        """``register_blueprint`` without documenting the blueprint: its
        routes, and the entry by which flask-smorest finds this ``Api`` while
        the blueprint handles a request."""
        self._app.extensions["flask-smorest"]["blp_name_to_api"][blp.name] = self
        self._app.register_blueprint(blp)


class ParserBase(FlaskParser):
    """webargs' Flask parser with the JSON body decoding as a public hook."""

    def _raw_load_json(self, req: Any) -> Any:
        return self.load_json_body(req)

    def load_json_body(self, req: Any) -> Any:
        """The decoded JSON body (override to decode differently)."""
        return super()._raw_load_json(req)


class LazyBuildRule(Rule):
    """A URL rule that compiles its URL builders when it first builds a URL,
    not when the app is made.  Werkzeug compiles two Python functions per
    rule at registration, about two thirds of the CPU of making an app once
    its OpenAPI document is cached, and Lodge builds URLs (``url_for``) for
    two routes only.  Matching requests to rules is untouched."""

    def _compile_builder(self, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        compile_now = super()._compile_builder
        slot = "_build_unknown" if append_unknown else "_build"

        def build(rule: Rule, **values: Any) -> tuple[str, str]:
            builder = compile_now(append_unknown).__get__(rule, None)
            setattr(rule, slot, builder)
            return builder(**values)
        return build


class SyncFlask(Flask):
    """Flask without the per-call coroutine check: for apps without async
    views or hooks (the check runs for every view wrapper and hook of every
    request), and with URL builders compiled on first use
    (:class:`LazyBuildRule`)."""

    url_rule_class = LazyBuildRule

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        return func
