"""The flask-smorest, webargs and Flask internals Lodge relies on
(service/http/smorest_compat.py) still exist and behave as used.  A failure here
after an upgrade names the internal that moved; fix smorest_compat.py."""
from __future__ import annotations

from typing import Any

import flask_smorest
import marshmallow as ma
import pytest
from flask import Flask, url_for
from flask.views import MethodView
from flask_smorest.utils import prepare_response
from webargs.flaskparser import FlaskParser
from werkzeug.routing import Rule

from service.http import smorest_compat


class _Query(ma.Schema):
    n = ma.fields.Integer()


def _app(api_class: type[flask_smorest.Api] = flask_smorest.Api,
         **config: Any) -> tuple[Flask, flask_smorest.Api]:
    app = Flask("compat")
    app.config.update(API_TITLE="t", API_VERSION="1", OPENAPI_VERSION="3.0.3", **config)
    return app, api_class(app)


def test_decorators_keep_the_documentation_in_apidoc():
    """``_apidoc``: what ``arguments``/``alt_response`` record on the view,
    and what registering the blueprint documents from."""
    blp = flask_smorest.Blueprint("b", __name__)

    def view(query: dict[str, Any]) -> str:
        return "ok"

    documented = blp.arguments(_Query, location="query")(blp.alt_response(418, description="teapot")(view))
    assert isinstance(documented._apidoc, dict)
    assert documented._apidoc.get("arguments") and documented._apidoc.get("response")

    def bare(query: dict[str, Any]) -> str:
        return "ok"

    smorest_compat.copy_apidoc(bare, documented)

    @blp.route("/x")
    class X(MethodView):
        get = bare

    app, api = _app()
    api.register_blueprint(blp)
    spec = smorest_compat.api_spec(app)
    operation = spec["paths"]["/x"]["get"]
    assert [p["name"] for p in operation["parameters"]] == ["n"]
    assert "418" in operation["responses"]


def test_api_app_and_url_rule():
    """``Api._app`` is the initialised app; ``url_rule`` finds the docs route."""
    app, api = _app(OPENAPI_URL_PREFIX="/", OPENAPI_JSON_PATH="openapi.json")
    assert api._app is app
    assert smorest_compat.url_rule(api, "api-docs.openapi_json").rule == "/openapi.json"


def test_extension_entry_holds_the_api():
    """``app.extensions["flask-smorest"]["apis"][""]["ext_obj"]`` is the Api."""
    app, api = _app()
    assert app.extensions["flask-smorest"]["apis"][""]["ext_obj"] is api
    assert smorest_compat.api_spec(app) == api.spec.to_dict()


def test_init_app_calls_the_private_setup_steps(monkeypatch):
    """``Api.init_app`` calls ``_register_error_handlers`` and
    ``_register_responses``; ApiBase turns them into public hooks."""
    assert callable(flask_smorest.Api._register_error_handlers)
    assert callable(flask_smorest.Api._register_responses)
    calls: list[str] = []

    class Hooked(smorest_compat.ApiBase):
        def register_error_handlers(self) -> None:
            calls.append("errors")

        def register_responses(self) -> None:
            calls.append("responses")

    app, _ = _app(Hooked)
    assert sorted(calls) == ["errors", "responses"]
    assert not app.error_handler_spec.get(None), "the overridden error handlers were installed anyway"

    ran: list[str] = []  # the default hooks run flask-smorest's own steps
    monkeypatch.setattr(flask_smorest.Api, "_register_responses", lambda self: ran.append("responses"))
    plain_app, _ = _app(smorest_compat.ApiBase)
    assert plain_app.error_handler_spec.get(None)
    assert ran == ["responses"]


def test_register_routes_is_register_blueprint_minus_the_documentation():
    """``Api.register_blueprint`` registers the routes and maps the blueprint's
    name to the Api in ``blp_name_to_api`` (how ``current_api`` finds it);
    ``register_routes`` does both, and documents nothing."""
    seen: list[Any] = []
    blp = flask_smorest.Blueprint("b", __name__)

    @blp.route("/x")
    def view() -> str:
        seen.append(flask_smorest.current_api._get_current_object())
        return "ok"

    documented_app, documented = _app(smorest_compat.ApiBase)
    documented.register_blueprint(blp)
    routed_app, routed = _app(smorest_compat.ApiBase)
    routed.register_routes(blp)
    for app, api in ((documented_app, documented), (routed_app, routed)):
        assert app.extensions["flask-smorest"]["blp_name_to_api"] == {"b": api}
        assert app.test_client().get("/x").data == b"ok"
    assert seen == [documented, routed]
    assert "/x" in smorest_compat.api_spec(documented_app)["paths"]
    assert not smorest_compat.api_spec(routed_app)["paths"]


def test_parser_decodes_json_bodies_with_raw_load_json():
    """webargs' ``FlaskParser._raw_load_json`` decodes the JSON body;
    ParserBase routes it through ``load_json_body``."""
    assert callable(FlaskParser._raw_load_json)

    class Upper(smorest_compat.ParserBase):
        def load_json_body(self, req: Any) -> Any:
            return {k.upper(): v for k, v in super().load_json_body(req).items()}

    schema = ma.Schema.from_dict({"N": ma.fields.Integer()})()
    app = Flask("compat")
    with app.test_request_context("/", method="POST", json={"n": 3}):
        from flask import request

        assert Upper().parse(schema, request, location="json") == {"N": 3}
        assert smorest_compat.ParserBase().parse(ma.Schema.from_dict({"n": ma.fields.Integer()})(), request,
                                                 location="json") == {"n": 3}


def test_flask_wraps_views_in_ensure_sync():
    """Flask calls ``ensure_sync`` for every view; SyncFlask skips the
    coroutine check and still serves."""
    assert callable(Flask.ensure_sync)
    seen: list[Any] = []

    class Counting(Flask):
        def ensure_sync(self, func: Any) -> Any:
            seen.append(func)
            return super().ensure_sync(func)

    app = Counting("compat")
    app.add_url_rule("/", "root", lambda: "ok")
    assert app.test_client().get("/").data == b"ok"
    assert seen, "Flask no longer calls ensure_sync: drop SyncFlask"

    sync = smorest_compat.SyncFlask("compat")
    sync.add_url_rule("/", "root", lambda: "ok")
    assert sync.ensure_sync(test_flask_wraps_views_in_ensure_sync) is test_flask_wraps_views_in_ensure_sync
    assert sync.test_client().get("/").data == b"ok"


def test_rules_compile_their_url_builders_on_first_use(monkeypatch):
    """Werkzeug's ``Rule.compile`` gets the builders from ``_compile_builder``
    and builds through ``_build``/``_build_unknown``: a LazyBuildRule
    compiles none at registration, one when a URL is first built, keeps it,
    and builds what a plain Rule builds."""
    compiled: list[bool] = []
    compile_builder = Rule._compile_builder

    def counted(rule: Rule, append_unknown: bool = True) -> Any:
        compiled.append(append_unknown)
        return compile_builder(rule, append_unknown)
    monkeypatch.setattr(Rule, "_compile_builder", counted)
    apps = Flask("compat"), smorest_compat.SyncFlask("compat")
    for app in apps:
        compiled.clear()
        app.add_url_rule("/m/<match_id>/seat/<int:n>", "seat", lambda match_id, n: "ok")
    assert compiled == [], "the lazy rule compiled a builder at registration"
    assert isinstance(next(apps[1].url_map.iter_rules("seat")), smorest_compat.LazyBuildRule)
    for values in ({"match_id": "a b", "n": 3}, {"match_id": "x", "n": 0, "extra": "y/z"}):
        plain, lazy = (_url_for(app, values) for app in apps)
        assert plain == lazy
    assert compiled == [True], "the lazy rule compiled its builder again"
    assert apps[1].test_client().get("/m/a/seat/2").data == b"ok"


def _url_for(app: Flask, values: dict[str, Any]) -> str:
    with app.test_request_context():
        return url_for("seat", **values)


def test_prepare_response_fills_the_content():
    """``prepare_response(response, spec, content_type)`` moves the schema
    under ``content`` for OpenAPI 3."""
    _, api = _app()
    response: dict[str, Any] = {"description": "d", "schema": _Query}
    prepare_response(response, api.spec, "application/problem+json")
    assert "schema" in response["content"]["application/problem+json"]
    assert smorest_compat.prepare_response is prepare_response


@pytest.mark.parametrize("name", smorest_compat.__all__)
def test_every_export_exists(name):
    assert getattr(smorest_compat, name) is not None
