"""Prometheus metrics: requests, latency, moves and version conflicts.

Under gunicorn, ``PROMETHEUS_MULTIPROC_DIR`` (set by deploy/gunicorn.conf.py
before workers start) switches prometheus_client to multiprocess mode and
``/metrics`` aggregates every worker's files.
"""
from __future__ import annotations

import functools
import os
import time

from flask import Flask, Response, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

REQUESTS = Counter("lodge_http_requests_total", "HTTP requests by endpoint, method and status",
                   ["endpoint", "method", "status"])
LATENCY = Histogram("lodge_http_request_duration_seconds", "Request latency by endpoint",
                    ["endpoint", "method"],
                    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
MOVES = Counter("lodge_moves_applied_total", "Moves applied, by game", ["game"])
CONFLICTS = Counter("lodge_version_conflicts_total",
                    "Version conflicts: answered 409 (refused) or lost a compare-and-set and "
                    "recomputed (retried, moves sent without a version)", ["outcome"])
BOT_FALLBACKS = Counter("lodge_bot_fallbacks_total",
                        "Bot seat decisions in a worker process that gave no move, so the seat played its "
                        "fallback: none within the budget (timeout) or the process or bot failed (error)",
                        ["reason"])
MATCHES = Counter("lodge_matches_created_total", "Matches created, by game", ["game"])


@functools.cache
def moves_of(game: str) -> Counter:
    """:data:`MOVES` of ``game``, looked up once per process (every move counts)."""
    return MOVES.labels(game)


def exposition() -> Response:
    """The metrics in Prometheus text format (all workers in multiprocess mode)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    return Response(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


def instrument(app: Flask) -> None:
    """Count and time every request by its route template."""

    @app.before_request
    def _start() -> None:
        g.started = time.perf_counter()

    @app.after_request
    def _observe(response: Response) -> Response:
        started = g.pop("started", None)
        if started is not None:
            rule = request.url_rule.rule if request.url_rule is not None else "unmatched"
            LATENCY.labels(rule, request.method).observe(time.perf_counter() - started)
            REQUESTS.labels(rule, request.method, str(response.status_code)).inc()
        return response
