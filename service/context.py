"""Access to the app's :class:`~service.core.Lodge` from inside a request."""
from __future__ import annotations

from flask import current_app

from service.core import Lodge

EXTENSION = "lodge"


def lodge() -> Lodge:
    return current_app.extensions[EXTENSION]
