"""Errors a careless client understands: JSON bodies whatever their
Content-Type, a clear sentence for bodies that are not JSON, echoed input
cut to 80 characters in ``detail``, player names with control characters
or given twice refused (422 ``invalid_options``)."""
from __future__ import annotations

from typing import Any

import orjson
import pytest

from service.http.errors import MAX_DETAIL, MAX_ECHO
from tests.http_helpers import Api, assert_problem

BODY = b'{"game": "biberbande", "players": ["ana", "bo"], "seed": 42}'
CARELESS_TYPES = ["text/plain", "text/plain;charset=UTF-8", None, "application/x-www-form-urlencoded",
                  "multipart/form-data; boundary=x"]


def _post(api: Api, path: str, body: bytes, content_type: str | None, **headers: str) -> Any:
    if content_type is not None:
        headers["Content-Type"] = content_type
    return api._send("POST", path, headers, body, {})  # exactly these headers


@pytest.mark.parametrize("content_type", CARELESS_TYPES)
def test_json_body_is_read_whatever_its_content_type(api: Api, content_type: str | None):
    r = _post(api, "/v1/matches", BODY, content_type)
    assert r.status == 201, r
    m = r.json
    move = api.legal(m["match_id"], m["seats"][0]["token"]).json["moves"][0]
    played = _post(api, f"/v1/matches/{m['match_id']}/moves", orjson.dumps({"move": move, "version": 0}),
                   content_type, Authorization=f"Bearer {m['seats'][0]['token']}")
    assert played.status == 200, played


@pytest.mark.parametrize("content_type", CARELESS_TYPES)
def test_body_that_is_not_json_says_what_to_send(api: Api, content_type: str | None):
    r = _post(api, "/v1/matches", b"game=biberbande&players=2", content_type)
    p = assert_problem(r, 400, "invalid_request")
    assert "JSON object with Content-Type: application/json" in p["detail"]
    assert (content_type or "no Content-Type").split(";")[0] in p["detail"]


def test_empty_body_says_what_to_send(api: Api):
    p = assert_problem(_post(api, "/v1/matches", b"", None), 400, "invalid_request")
    assert p["detail"] == ("the request has no body (no Content-Type); "
                           "send a JSON object with Content-Type: application/json")


def test_bad_json_with_json_content_type_is_unchanged(api: Api):
    p = assert_problem(_post(api, "/v1/matches", b"{", "application/json"), 400, "invalid_request")
    assert "JSON" in p["detail"]


def _short(detail: str) -> None:
    assert len(detail) <= MAX_DETAIL + 1, len(detail)
    assert "…" in detail


def test_long_move_type_is_cut_in_detail(api: Api, w1):
    r = api.move(w1.id, w1.token(0), {"type": "x" * 20_000}, version=0)
    p = assert_problem(r, 422, "illegal_move")
    _short(p["detail"])
    assert "'" + "x" * MAX_ECHO + "…'" in p["detail"] and "x" * (MAX_ECHO + 1) not in p["detail"]
    assert len(r.body) < 1000


def test_long_game_id_is_cut_in_detail(api: Api):
    p = assert_problem(api.post("/v1/matches", {"game": "g" * 60_000, "players": 2}), 404, "game_not_found")
    _short(p["detail"])
    assert "known games: biberbande" in p["detail"]
    p = assert_problem(api.get("/v1/games/" + "g" * 60_000), 404, "game_not_found")
    _short(p["detail"])


def test_long_option_name_and_unknown_field_are_cut(api: Api):
    p = assert_problem(api.post("/v1/matches", {"game": "biberbande", "players": 2, "options": {"o" * 5000: 1}}),
                       422, "invalid_options")
    _short(p["detail"])
    r = api.post("/v1/matches", {"game": "biberbande", "players": 2, "q" * 5000: 1})
    p = assert_problem(r, 400, "invalid_request")
    _short(p["detail"])
    assert all(len(k) <= MAX_ECHO + 1 for k in p["errors"])


@pytest.mark.parametrize("bad", ["a\x00b", "tab\there", "new\nline", "\x1b[31mred", "del\x7f"])
def test_player_names_with_control_characters_are_refused(api: Api, bad: str):
    p = assert_problem(api.post("/v1/matches", {"game": "biberbande", "players": [bad, "bo"]}),
                       422, "invalid_options")
    assert "control character" in p["detail"]


def test_duplicate_player_names_are_refused(api: Api):
    p = assert_problem(api.post("/v1/matches", {"game": "biberbande", "players": ["ana", "bo", "ana"]}),
                       422, "invalid_options")
    assert p["detail"] == "player names must differ; 'ana' is given twice"


def test_unicode_names_are_fine(api: Api):
    assert api.post("/v1/matches", {"game": "biberbande", "players": ["Zoë", "Bjørn 🦫"]}).status == 201
