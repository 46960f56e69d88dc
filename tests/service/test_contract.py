"""The committed contract (openapi/openapi.json) against the code.

(a) drift: the committed document equals the one generated from the code
    (``python -m service.http.openapi``) and the one the app serves, and it names
    every path and error code of api.md;
(b) schemathesis 4 fuzzes every operation of the committed document against
    the WSGI app in-process (embedded store): no 5xx, responses conform to the
    documented schemas and status codes.  Path ids and tokens are swapped for
    real matches most of the time, so the fuzzing reaches the game logic, not
    only the 404/401 paths.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import os
import random
from pathlib import Path

import fakeredis
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from service.app import create_app
from service.http import openapi
from service.ops.config import Settings
from tests import conftest
from tests.conftest import examples, flask_api, make_app
from tests.http_helpers import W1_OPTIONS

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "openapi" / "openapi.json"

CONTRACT_PATHS = [
    ("get", "/v1/games"), ("get", "/v1/games/{}"), ("post", "/v1/matches"), ("get", "/v1/matches/{}"),
    ("delete", "/v1/matches/{}"), ("get", "/v1/matches/{}/legal-moves"), ("post", "/v1/matches/{}/moves"),
    ("get", "/v1/matches/{}/events"), ("get", "/v1/matches/{}/record"), ("get", "/healthz"),
    ("get", "/readyz"), ("get", "/metrics"), ("get", "/v1/matches/{}/stream"),
    ("get", "/v1/matches/{}/seats"), ("post", "/v1/matches/{}/seats/{}"), ("get", "/v1/matches"),
    ("post", "/v1/ladders"), ("get", "/v1/ladders/{}"), ("post", "/v1/ladders/{}/entrants"),
]
ERROR_CODES = ["invalid_request", "unauthenticated", "forbidden", "match_not_found", "game_not_found",
               "version_conflict", "not_your_turn", "match_finished", "illegal_move", "invalid_options",
               "payload_too_large", "rate_limited", "store_unavailable", "seat_taken", "ladder_not_found"]


def _template(path: str) -> str:
    out, depth = [], 0
    for ch in path:
        if ch == "{":
            depth += 1
            out.append("{}")
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _committed() -> dict:
    assert COMMITTED.exists(), f"{COMMITTED} is not committed (generate it: python -m service.http.openapi)"
    return json.loads(COMMITTED.read_text())


# --------------------------------------------------------------------------
# (a) drift.
# --------------------------------------------------------------------------
def test_committed_openapi_equals_generated(capsys):
    """``python -m service.http.openapi`` prints the committed file, byte for byte."""
    openapi.main()
    printed = capsys.readouterr().out
    if printed != COMMITTED.read_text(encoding="utf-8"):
        generated, committed = json.loads(printed), _committed()
        diff = sorted(set(json.dumps(generated, sort_keys=True, indent=1).splitlines())
                      ^ set(json.dumps(committed, sort_keys=True, indent=1).splitlines()))
        pytest.fail("openapi/openapi.json drifted from the code; regenerate with "
                    "`python -m service.http.openapi > openapi/openapi.json`. Differing lines:\n"
                    + "\n".join(diff[:40]))


def test_served_openapi_equals_committed():
    api = flask_api(make_app(fakeredis.FakeRedis()))
    r = api.get("/openapi.json")
    assert r.status == 200, r
    assert r.json == _committed()


def test_committed_openapi_covers_the_contract():
    spec = _committed()
    have = {(m.lower(), _template(p)) for p, ops in spec["paths"].items() for m in ops
            if m.lower() in ("get", "post", "put", "delete", "patch")}
    missing = [op for op in CONTRACT_PATHS if op not in have]
    assert not missing, f"operations of api.md missing from openapi.json: {missing}"
    text = json.dumps(spec)
    absent = [c for c in ERROR_CODES if f'"{c}"' not in text and f"`{c}`" not in text]
    assert not absent, f"error codes of api.md not documented: {absent}"
    assert "application/problem+json" in text
    # every operation documents its responses; every error response is problem+json
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            if method.lower() not in ("get", "post", "delete"):
                continue
            assert op.get("responses"), (method, path)
            for status, resp in op["responses"].items():
                if "$ref" in resp:
                    ref = resp["$ref"].split("/")[-1]
                    resp = spec["components"]["responses"][ref]
                if status.startswith(("4", "5")) and resp.get("content"):
                    assert "application/problem+json" in resp["content"], (method, path, status)


# --------------------------------------------------------------------------
# (b) schemathesis.
# --------------------------------------------------------------------------
schema = schemathesis.openapi.from_path(COMMITTED)
if conftest.FAST:
    # the coverage phase's cases are built at collection, in every xdist worker; the whole suite keeps them
    schema.config.phases.coverage.enabled = False


def _unlimited_app(**env: str):
    """An app on the embedded store without rate limits (the fuzzing creates
    matches far faster than any client should)."""
    settings = dataclasses.replace(Settings.from_env({**os.environ, **env}), rate_limit_enabled=False)
    app = create_app(fakeredis.FakeRedis(), settings=settings)
    app.config["TESTING"] = True
    return app


class Context:
    """An in-process app on the embedded store and real matches to aim at."""

    def __init__(self):
        # streams of active matches end after 50 ms: the fuzzing is not about waiting
        self.app = _unlimited_app(STREAM_MAX="0.05", STREAM_KEEPALIVE="0.02")
        self.api = flask_api(self.app)
        self.rng = random.Random(20261129)
        self.counter = itertools.count()

    def fresh_match(self) -> dict:
        body = {"game": "biberbande", "players": self.rng.choice([2, 3, ["a", "b"]]), "seed": self.rng.randrange(1000)}
        if self.rng.random() < 0.5:
            body["options"] = W1_OPTIONS
            body["players"] = 2
        r = self.api.create_raw(body)
        assert r.status == 201, r
        created = r.json
        # sometimes advance it, so other phases are reachable
        for _ in range(self.rng.choice([0, 0, 1, 3])):
            view = self.api.view(created["match_id"], created["admin_token"]).json
            if view["status"] != "active":
                break
            seat = view["to_act"][0]
            moves = self.api.legal(created["match_id"], created["admin_token"], seat=seat).json["moves"]
            self.api.move(created["match_id"], created["admin_token"], self.rng.choice(moves), seat=seat)
        return created


@pytest.fixture(scope="module")
def ctx() -> Context:
    return Context()


def _aim(case, ctx: Context) -> None:
    """Most of the time, point a case at a real match with a real token."""
    n = next(ctx.counter)
    query = case.query if isinstance(case.query, dict) else {}
    wait = query.get("wait")
    if isinstance(wait, (int, float)) and not isinstance(wait, bool) and wait > 0.05:
        query["wait"] = 0.05  # keep long-polls short: the fuzzing is not about waiting
    params = case.path_parameters or {}
    if "ladder_id" in params and n % 4 != 3:  # a real ladder, mostly with its admin token
        ladder = ctx.api.post("/v1/ladders", {"game": "biberbande", "name": f"ladder {n}"}).json
        params["ladder_id"] = ladder["ladder_id"]
        if n % 5 != 4:
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {ladder['admin_token']}"}
        return
    if "match_id" not in params or n % 4 == 3:
        return
    if case.operation.path.endswith("/seats/{seat}") and n % 2 == 0:  # an open seat to claim
        created = ctx.api.create_raw({"game": "biberbande", "public": n % 4 == 0,
                                      "players": ["a", {"name": "b", "open": True}]}).json
        params["seat"] = 1
        if n % 3 != 0:
            case.body = {"invite": created["invite"]}
    else:
        created = ctx.fresh_match()
    params["match_id"] = created["match_id"]
    seats = created["seats"]
    tokens = [created["admin_token"]] + [s["token"] for s in seats if "token" in s]
    token = tokens[n % len(tokens)]
    if n % 5 != 4:
        case.headers = dict(case.headers or {})
        case.headers["Authorization"] = f"Bearer {token}"
    if case.operation.path.endswith("/moves") and case.method.upper() == "POST" and n % 3 == 0:
        view = ctx.api.view(created["match_id"], created["admin_token"]).json
        if view["to_act"]:
            seat = view["to_act"][0]
            moves = ctx.api.legal(created["match_id"], created["admin_token"], seat=seat).json["moves"]
            case.body = {"move": ctx.rng.choice(moves), "version": view["version"]}
            case.headers["Authorization"] = f"Bearer {seats[seat]['token']}"


# api.md "Errors": every error code and the status it goes with (plus the
# framework's route-level 404 and 405, which the table leaves to the implementer).
CODE_STATUS = {"invalid_request": 400, "unauthenticated": 401, "forbidden": 403, "match_not_found": 404,
               "game_not_found": 404, "version_conflict": 409, "not_your_turn": 409, "match_finished": 409,
               "seat_taken": 409,
               "illegal_move": 422, "invalid_options": 422, "payload_too_large": 413, "rate_limited": 429,
               "idempotency_key_reused": 422, "ladder_not_found": 404,
               "store_unavailable": 503}
ROUTE_ERRORS = {404, 405}


def problem_details_conformance(ctx, response, case):
    """Every 4xx/5xx is application/problem+json with code/title/status/detail,
    a code of api.md's table and the status that code goes with."""
    if response.status_code < 400:
        return None
    ctype = response.headers.get("content-type", response.headers.get("Content-Type", [""]))
    ctype = (ctype[0] if isinstance(ctype, list) else ctype).split(";")[0].strip()
    assert ctype == "application/problem+json", f"{response.status_code} with content-type {ctype!r}"
    body = json.loads(response.content)
    for key in ("code", "title", "status", "detail"):
        assert key in body, f"problem lacks {key!r}: {body}"
    assert body["status"] == response.status_code, body
    if body["code"] in CODE_STATUS:
        assert CODE_STATUS[body["code"]] == response.status_code, f"code {body['code']} with {response.status_code}"
    else:
        assert response.status_code in ROUTE_ERRORS, f"code {body['code']!r} is not in api.md's table: {body}"
    return None


CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance, content_type_conformance,
          response_headers_conformance, problem_details_conformance]


#: Examples per operation (13 operations; about 3 minutes on one core, measured 2026-12-01; one under ``--fast``).
EXAMPLES = examples(200)


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_schemathesis(case, ctx: Context):
    _aim(case, ctx)
    case.call_and_validate(app=ctx.app, checks=CHECKS)


# --------------------------------------------------------------------------
# (c) hostile JSON text: what schemathesis cannot generate (it sends valid
# JSON of Python values): integers past the 4,300-digit conversion limit,
# lone surrogates, control characters, NaN/Infinity, numbers beyond a double,
# deep nesting, very long strings, in every field of both bodies.
# --------------------------------------------------------------------------
def _text(value) -> str:
    return json.dumps(value)


HOSTILE = st.one_of(
    st.integers(4301, 6000).map(lambda n: "9" * n), st.integers(4301, 6000).map(lambda n: "-" + "1" * n),
    st.integers(20, 4300).map(lambda n: "7" * n),
    st.sampled_from(['"\\ud800"', '"a\\udfff"', '"\\udbff\\u0041"', '{"\\udc00": 1}', '["\\ud83d"]']),
    st.characters(max_codepoint=0x1F).map(_text), st.text(st.characters(max_codepoint=0x9F), max_size=20).map(_text),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-1e999", "1.5", "-0", "1E+2"]),
    st.integers(100, 3000).map(lambda d: "[" * d + "]" * d),
    st.integers(100, 3000).map(lambda d: '{"a":' * d + "1" + "}" * d),
    st.integers(1000, 70000).map(lambda n: _text("x" * n)),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                 lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                 max_leaves=6).map(_text),
)

CREATE_TEMPLATES = ['{"game":@,"players":2}', '{"game":"biberbande","players":@}',
                    '{"game":"biberbande","players":[@,"b"]}', '{"game":"biberbande","players":2,"seed":@}',
                    '{"game":"biberbande","players":2,"options":@}',
                    '{"game":"biberbande","players":2,"options":{"rounds":@}}',
                    '{"game":"biberbande","players":2,"options":{@:1}}', '@']
MOVE_TEMPLATES = ['{"move":@}', '{"move":{"type":@}}', '{"move":{"type":"draw"},"version":@}',
                  '{"move":{"type":"take_discard","slot":@},"version":0}', '{"move":{"type":"draw","x":@}}',
                  '{"move":{"type":"draw"},"version":0,"extra":@}', '@']


@pytest.fixture(scope="module")
def hostile_target():
    api = flask_api(_unlimited_app())
    return api, api.create(2, seed=9)


@given(where=st.sampled_from(["create", "move"]), index=st.integers(0, 7), value=HOSTILE)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_hostile_json_never_fails_the_server(hostile_target, where, index, value):
    api, match = hostile_target
    headers = {"Content-Type": "application/json"}
    if where == "create":
        path, template = "/v1/matches", CREATE_TEMPLATES[index % len(CREATE_TEMPLATES)]
    else:
        path, template = f"/v1/matches/{match.id}/moves", MOVE_TEMPLATES[index % len(MOVE_TEMPLATES)]
        headers["Authorization"] = f"Bearer {match.token(0)}"
    r = api.request("POST", path, data=template.replace("@", value).encode(), headers=headers)
    assert r.status < 500, r
    if r.status >= 400:
        assert r.content_type == "application/problem+json", r
        assert CODE_STATUS.get(r.json["code"]) == r.status, r
        assert r.json["detail"], r


def _explicit_case(path: str, method: str, **kw):
    return schema[path][method].Case(**kw)


def test_every_catalogue_entry_conforms():
    """Deterministic complement of the fuzzing: the catalogue and every entry
    of it (each registered game) validate against the documented schemas."""
    app = make_app(fakeredis.FakeRedis())
    case = _explicit_case("/v1/games", "GET")
    r = case.call(app=app)
    case.validate_response(r, checks=CHECKS)
    body = r.json()
    games = body if isinstance(body, list) else body["games"]
    assert games
    failures = []
    for g in games:
        c = _explicit_case("/v1/games/{game}", "GET", path_parameters={"game": g["id"]})
        try:
            c.validate_response(c.call(app=app), checks=CHECKS)
        except Exception as exc:  # collect all games' failures into one report
            failures.append(f"{g['id']}: {str(exc)[:600]}")
    assert not failures, "\n".join(failures)


def test_documented_examples_of_a_whole_w1_match_conform():
    """Every response of a scripted W1 match (create, views of every role,
    legal moves, each move, events, record, delete) validates against the
    documented schemas, status codes, content types and headers."""
    from tests.http_helpers import W1_MOVES

    app = make_app(fakeredis.FakeRedis())
    c = _explicit_case("/v1/matches", "POST", body={"game": "biberbande", "players": ["a", "b"], "seed": 3,
                                                     "options": W1_OPTIONS}, media_type="application/json")
    r = c.call(app=app)
    c.validate_response(r, checks=CHECKS)
    created = r.json()
    mid, admin = created["match_id"], created["admin_token"]
    tokens = [s["token"] for s in created["seats"]]

    def check(path, method, token=None, **kw):
        kw.setdefault("path_parameters", {"match_id": mid})
        if token:
            kw["headers"] = {**kw.get("headers", {}), "Authorization": f"Bearer {token}"}
        case = _explicit_case(path, method, **kw)
        resp = case.call(app=app)
        case.validate_response(resp, checks=CHECKS)
        return resp

    for version, (seat, move) in enumerate(W1_MOVES):
        for token in (None, admin, *tokens):
            check("/v1/matches/{match_id}", "GET", token)
            check("/v1/matches/{match_id}/events", "GET", token, query={"after": version - 1})
        check("/v1/matches/{match_id}/legal-moves", "GET", tokens[seat])
        check("/v1/matches/{match_id}/legal-moves", "GET", admin, query={"seat": 1 - seat})
        check("/v1/matches/{match_id}/record", "GET", admin)
        check("/v1/matches/{match_id}/record", "GET", tokens[0])  # 403 before the end
        check("/v1/matches/{match_id}/moves", "POST", tokens[1 - seat], body={"move": move, "version": version},
              media_type="application/json")  # 409 not your turn
        resp = check("/v1/matches/{match_id}/moves", "POST", tokens[seat], body={"move": move, "version": version},
                     media_type="application/json")
        assert resp.status_code == 200, resp.text
    check("/v1/matches/{match_id}/record", "GET")
    check("/v1/matches/{match_id}/moves", "POST", tokens[0], body={"move": {"type": "draw"}},
          media_type="application/json")  # 409 finished
    check("/v1/matches/{match_id}", "GET", headers={"If-None-Match": '"6"'})  # 304
    assert check("/v1/matches/{match_id}", "DELETE", admin).status_code == 204
    assert check("/v1/matches/{match_id}", "GET").status_code == 404


EXPECTED_STATUSES = {
    ("get", "/v1/games/{}"): {"200", "404"},
    ("post", "/v1/matches"): {"201", "400", "404", "413", "422", "503"},
    ("get", "/v1/matches/{}"): {"200", "304", "404", "503"},
    ("delete", "/v1/matches/{}"): {"204", "401", "403", "404", "503"},
    ("get", "/v1/matches/{}/legal-moves"): {"200", "401", "403", "404", "503"},
    ("post", "/v1/matches/{}/moves"): {"200", "400", "401", "403", "404", "409", "413", "422", "503"},
    ("get", "/v1/matches/{}/events"): {"200", "400", "404", "503"},
    ("get", "/v1/matches/{}/record"): {"200", "401", "403", "404", "503"},
    ("get", "/readyz"): {"200", "503"},
}


def test_committed_openapi_documents_contract_statuses():
    """Every status api.md gives an operation is documented for it."""
    spec = _committed()
    ops = {(m.lower(), _template(p)): op for p, item in spec["paths"].items() for m, op in item.items()}
    missing = {}
    for key, statuses in EXPECTED_STATUSES.items():
        documented = set(ops[key]["responses"])
        if not statuses <= documented:
            missing[key] = sorted(statuses - documented)
    assert not missing, f"statuses of api.md not documented: {missing}"
