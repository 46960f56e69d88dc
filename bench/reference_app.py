"""The reference the HTTP benchmark compares Lodge against.

A bare Flask app doing what a naive move endpoint must do at the least: GET the
snapshot (about 4 KB) from Redis, then compare-and-set a new one with a Lua
script (two round trips), and nothing else — no rules, no validation.
"""
from __future__ import annotations

import os

import orjson
import redis
from flask import Flask, Response, request

SNAPSHOT_BYTES = 4096

# KEYS[1] snapshot key, KEYS[2] version key; ARGV[1] expected version, ARGV[2] new snapshot.
# Returns the new version, or -1 when the stored version is not the expected one.
CAS = """
local current = tonumber(redis.call('GET', KEYS[2]) or '0')
if current ~= tonumber(ARGV[1]) then return -1 end
redis.call('SET', KEYS[1], ARGV[2])
return redis.call('INCR', KEYS[2])
"""


def snapshot_key(match_id: str) -> str:
    return f"ref:{{{match_id}}}:snapshot"


def version_key(match_id: str) -> str:
    return f"ref:{{{match_id}}}:version"


def create_app() -> Flask:
    app = Flask(__name__)
    store = redis.Redis.from_url(os.environ["REDIS_URL"])
    cas = store.register_script(CAS)
    filler = b"x" * SNAPSHOT_BYTES

    @app.get("/healthz")
    def healthz():
        return {"status": "ok"}

    @app.put("/ref/<match_id>")
    def create(match_id: str):
        store.mset({snapshot_key(match_id): filler, version_key(match_id): 0})
        return {"version": 0}

    @app.get("/ref/<match_id>")
    def get_state(match_id: str):
        snapshot = store.get(snapshot_key(match_id))
        assert isinstance(snapshot, bytes), "the match was created"
        return Response(orjson.dumps({"state": snapshot.decode()}), mimetype="application/json")

    @app.post("/ref/<match_id>/moves")
    def move(match_id: str):
        body = orjson.loads(request.get_data())
        snapshot = store.get(snapshot_key(match_id))
        assert isinstance(snapshot, bytes), "the match was created"
        version = cas(keys=[snapshot_key(match_id), version_key(match_id)],
                      args=[body["version"], snapshot[::-1]])
        if version < 0:
            return Response(b'{"code":"version_conflict"}', 409, mimetype="application/json")
        return Response(orjson.dumps({"version": version}), mimetype="application/json")

    return app
