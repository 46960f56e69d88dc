"""The reference web front end at ``/play``: plain ES modules, HTML and CSS
from ``service/web/`` (no build step, no asset from another host).

The page is built on the public contract only (``/v1`` over ``fetch`` and
the SSE stream), exactly as any front end on another origin would be; Lodge
merely serves its files.  ``/play`` and ``/play/`` are the page; ``/play/<file>``
its assets; ``/favicon.ico`` the site's icon (an SVG, for ``/docs`` too).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, send_from_directory

#: the front end's files (index.html, css/, js/)
WEB = Path(__file__).resolve().parent.parent / "web"

blp = Blueprint("play", __name__)


@blp.route("/play")
@blp.route("/play/")
def page() -> Any:
    """The single page: lobby, match, spectator and replay (hash routes)."""
    return send_from_directory(str(WEB), "index.html", max_age=0)


@blp.route("/play/<path:filename>")
def asset(filename: str) -> Any:
    """One file of the front end (``send_from_directory`` refuses paths outside it)."""
    return send_from_directory(str(WEB), filename, max_age=0)


@blp.route("/favicon.ico")
def favicon() -> Any:
    """The icon browsers ask for on every page without a ``<link rel="icon">`` (``/docs``)."""
    return send_from_directory(str(WEB), "favicon.svg", mimetype="image/svg+xml", max_age=86400)


def install(app: Flask) -> None:
    app.register_blueprint(blp)
