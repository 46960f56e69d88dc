"""Browsable docs that work offline: Swagger UI from the installed
``swagger-ui-bundle`` package, never from another host.

flask-smorest renders the page at ``/docs`` and points it at
``OPENAPI_SWAGGER_UI_URL``; this module serves that folder from the package's
files at ``/docs/assets/`` and answers ``/docs/`` too.
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, current_app, send_from_directory
from swagger_ui_bundle import swagger_ui_path

ASSETS_URL = "/docs/assets/"

#: flask-smorest settings for the page; ``validatorUrl: None`` stops Swagger UI
#: from sending the document to an online validator for its badge.
CONFIG: dict[str, Any] = {
    "OPENAPI_SWAGGER_UI_PATH": "docs",
    "OPENAPI_SWAGGER_UI_URL": ASSETS_URL,
    "OPENAPI_SWAGGER_UI_CONFIG": {"validatorUrl": None, "deepLinking": True},
}

blp = Blueprint("docs-ui", __name__)


@blp.route(ASSETS_URL + "<path:filename>")
def asset(filename: str) -> Any:
    """One file of the Swagger UI distribution."""
    return send_from_directory(str(swagger_ui_path), filename, max_age=3600)


@blp.route("/docs/")
def docs_slash() -> Any:
    """``/docs/`` is the same page as ``/docs`` (the assets are absolute URLs)."""
    return current_app.view_functions["api-docs.openapi_swagger_ui"]()


def install(app: Flask) -> None:
    app.register_blueprint(blp)
