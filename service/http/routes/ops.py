"""Operations: liveness, readiness, metrics."""
from __future__ import annotations

from flask import Response
from flask.views import MethodView

from service.http.api import Blueprint, json_response
from service.http.context import lodge
from service.http.schemas import StatusSchema
from service.ops import metrics

blp = Blueprint("ops", __name__, description="Liveness, readiness and metrics")


@blp.route("/healthz")
class Health(MethodView):
    @blp.response(200, StatusSchema, description="The process serves requests")
    def get(self) -> Response:
        """Liveness (never touches the store)"""
        return json_response({"status": "ok"})


@blp.route("/readyz")
class Ready(MethodView):
    @blp.response(200, StatusSchema, description="The store answers")
    @blp.problems("store_unavailable")
    def get(self) -> Response:
        """Readiness: the store answers PING"""
        store = lodge().store
        store.ping()  # a Redis failure becomes 503 store_unavailable
        policy = store.eviction_policy()
        if policy is not None and policy != "noeviction":
            return json_response({"status": "ok", "warning": (
                f"Redis runs with maxmemory-policy {policy}: it may evict keys of live matches, "
                "which then answer 503; run it with noeviction")})
        return json_response({"status": "ok"})


@blp.route("/metrics")
class Metrics(MethodView):
    @blp.response(200, content_type="text/plain", description="Prometheus text exposition format")
    def get(self) -> Response:
        """Prometheus metrics"""
        return metrics.exposition()
