"""Access to the app's :class:`~service.domain.matches.Lodge` from inside a request."""
from __future__ import annotations

from flask import current_app

from service.domain.matches import Lodge

EXTENSION = "lodge"


def lodge() -> Lodge:
    found: Lodge = current_app.extensions[EXTENSION]
    return found
