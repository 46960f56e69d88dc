"""GET /v1/matches/{id}/stream: the events pushed as SSE or NDJSON.

The view only parses and negotiates; :func:`service.domain.stream.follow` does the
rest.  The stream is documented here, its framing in the README.
"""
from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import Response, current_app, request
from flask.views import MethodView
from marshmallow import fields, validate

from service.domain.stream import FRAMINGS, NDJSON, QUERY_TOKEN, SSE, follow
from service.http.api import NO_STORE, Blueprint
from service.http.context import lodge
from service.http.routes.matches import OPTIONAL_TOKEN, legal_field

blp = Blueprint("stream", __name__, url_prefix="/v1/matches",
                description="Matches: the events pushed as they happen")

#: The app's stream settings (``app.config``), set by :func:`service.app.create_app`.
KEEPALIVE, MAX_SECONDS = "LODGE_STREAM_KEEPALIVE", "LODGE_STREAM_MAX"


class StreamQuerySchema(ma.Schema):
    after = fields.Integer(load_default=-1, validate=validate.Range(min=-1), metadata={
        "description": "send the versions above this one (-1: all, from the setup); `Last-Event-ID` replaces it"})
    state = fields.Boolean(load_default=False, metadata={
        "description": "add the caller's view as `state` to the message of the match's current version"})
    legal = legal_field("with `state=true`: add `legal_moves` beside each `state` (the caller's own legal moves "
                        "by seat, as on GET match with `?legal=true`)")
    token = fields.String(metadata={
        "description": "the bearer token, for clients that cannot send headers (EventSource); never logged"})


class StreamHeaders(ma.Schema):
    last_event_id = fields.Integer(data_key="Last-Event-ID", validate=validate.Range(min=-1), metadata={
        "description": "the last version received (a reconnecting EventSource sends it): replaces `after`"})


_STREAM_DOC = (
    "One message per version, in order and without gaps: `{\"version\": v, \"events\": [...]}` "
    "(and `state`, and with `legal=true` `legal_moves`). "
    "SSE: `id: <v>`, `event: events`, `data: <json>`; a comment line is the keep-alive; "
    "`event: end` with `{\"status\": \"finished\" | \"deleted\"}` before the server closes the stream. "
    "NDJSON (`Accept: application/x-ndjson`): one object per line, an empty line is the keep-alive, "
    "the stream just closes at the end.")


#: One Server-Sent Event (the schema of each event of a text/event-stream).
_SSE_EVENT = {"type": "object", "required": ["data"], "properties": {
    "event": {"type": "string", "enum": ["events", "end"]},
    "id": {"type": "string", "description": "the message's version (`events` only)"},
    "data": {"type": "string",
             "description": 'JSON: `{"version", "events"[, "state"[, "legal_moves"]]}`, or `{"status"}` (`end`)'}}}


@blp.route("/<string:match_id>/stream")
class Stream(MethodView):
    @blp.doc(security=OPTIONAL_TOKEN, responses={"200": {"description": _STREAM_DOC, "content": {
        SSE.media_type: {"schema": _SSE_EVENT},
        NDJSON.media_type: {"schema": {"type": "string", "description": "one JSON object per line"}}}}})
    @blp.lazy_arguments(StreamQuerySchema(), location="query")
    @blp.lazy_arguments(StreamHeaders(), location="headers")
    @blp.problems("invalid_request", "unauthenticated", "forbidden", "match_not_found", "store_unavailable")
    def get(self, query: dict[str, Any], headers: dict[str, Any], match_id: str) -> Response:
        """Follow a match: its events pushed as Server-Sent Events or NDJSON"""
        after = headers.get("last_event_id")
        if after is None:
            after = query["after"]
        authorization = request.headers.get("Authorization")
        token = request.environ.get(QUERY_TOKEN)
        if authorization is None and token is not None:
            authorization = f"Bearer {token}"
        framing = FRAMINGS[request.accept_mimetypes.best_match(list(FRAMINGS), default=SSE.media_type)]
        chunks = follow(lodge(), match_id, authorization, after, query["state"], framing,
                        keepalive=current_app.config[KEEPALIVE], max_seconds=current_app.config[MAX_SECONDS],
                        legal=query["legal"])
        return Response(chunks, content_type=framing.media_type,
                        headers={**NO_STORE, "X-Accel-Buffering": "no"})
