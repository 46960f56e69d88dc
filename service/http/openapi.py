"""Print the OpenAPI document: ``python -m service.http.openapi > openapi/openapi.json``.

Builds the app on an unconnected client, so no Redis is needed; the output
is stable (sorted keys, two-space indent, trailing newline) for drift checks.
"""
from __future__ import annotations

import json
import sys
from typing import Any

import redis

from service.http.smorest_compat import api_spec


def document() -> dict[str, Any]:
    from service.app import create_app

    app = create_app(redis.Redis(host="127.0.0.1", port=1))  # never contacted
    with app.app_context():
        return api_spec(app)


def main() -> None:
    sys.stdout.write(json.dumps(document(), indent=2, sort_keys=True, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
