"""Catalogue and match creation (api.md "Create", biberbande.md §2), both stores."""
from __future__ import annotations

import copy
from urllib.parse import urlsplit

import pytest

from engine import REGISTRY
from tests.http_helpers import CANONICAL, W1_DECK, W1_OPTIONS, Api, assert_problem, comparable, stack

SEED_MAX = 2**53 - 1


# --------------------------------------------------------------------------
# Catalogue.
# --------------------------------------------------------------------------
def _entry_ok(entry: dict) -> None:
    for key in ("id", "title", "min_players", "max_players", "options"):
        assert key in entry, entry
    assert isinstance(entry["options"], list)
    for opt in entry["options"]:
        assert "name" in opt and "type" in opt and "default" in opt, opt


def test_catalogue_lists_biberbande(api: Api):
    r = api.get("/v1/games")
    assert r.status == 200, r
    assert r.content_type == "application/json"
    body = r.json
    games = body if isinstance(body, list) else body.get("games")
    assert isinstance(games, list), body
    by_id = {g["id"]: g for g in games}
    assert "biberbande" in by_id
    for g in games:
        _entry_ok(g)
    assert set(by_id) == set(REGISTRY.ids())


def test_catalogue_entry_biberbande_options(api: Api):
    """BB-2: options with types, defaults and limits."""
    r = api.get("/v1/games/biberbande")
    assert r.status == 200, r
    g = r.json
    _entry_ok(g)
    assert g["id"] == "biberbande"
    assert (g["min_players"], g["max_players"]) == (2, 6)
    opts = {o["name"]: o for o in g["options"]}
    assert set(opts) == {"deck", "decks", "first_seat", "rounds", "recall", "turn_limit"}
    assert opts["recall"]["default"] == "perfect"
    assert set(opts["recall"].get("choices", [])) == {"perfect", "none"}
    assert opts["turn_limit"]["default"] == 30
    assert opts["turn_limit"].get("minimum") == 1 and opts["turn_limit"].get("maximum") == 200
    assert opts["rounds"].get("minimum") == 1 and opts["rounds"].get("maximum") == 20
    assert opts["deck"]["default"] is None


def test_catalogue_unknown_game_404(api: Api):
    assert_problem(api.get("/v1/games/no-such-game"), 404, "game_not_found")


# --------------------------------------------------------------------------
# Create.
# --------------------------------------------------------------------------
def test_create_201_body_and_location(api: Api):
    r = api.create_raw({"game": "biberbande", "players": ["ana", "bo", "cy"], "seed": 42,
                        "options": {"rounds": 3}})
    assert r.status == 201, r
    assert r.content_type == "application/json"
    b = r.json
    mid = b["match_id"]
    assert isinstance(mid, str) and mid
    location = r.header("location")
    assert location is not None
    assert location.endswith(f"/v1/matches/{mid}"), r.headers
    assert r.header("etag") == '"0"', "the 201 carries state (api.md: responses carrying state send ETag)"
    assert b["game"] == "biberbande"
    assert b["version"] == 0
    assert b["seed"] == 42
    assert [s["seat"] for s in b["seats"]] == [0, 1, 2]
    assert [s["name"] for s in b["seats"]] == ["ana", "bo", "cy"]
    tokens = [s["token"] for s in b["seats"]] + [b["admin_token"]]
    assert all(isinstance(t, str) and len(t) >= 16 for t in tokens), tokens
    assert len(set(tokens)) == 4, "every seat and the admin need distinct tokens"
    # the state is the spectator view (api.md "View")
    st = b["state"]
    assert st["viewer"] == {"role": "spectator", "seat": None}
    assert st["match_id"] == mid and st["game"] == "biberbande" and st["version"] == 0
    assert st["status"] == "active" and st["result"] is None
    assert st["round"] == 1 and st["rounds"] == 3
    assert st["to_act"] == [0]
    assert st["scores"] == [0, 0, 0]
    assert [p["name"] for p in st["players"]] == ["ana", "bo", "cy"]
    for p in st["players"]:  # BB-5.1, BB-5.6: spectators see no display card and know nothing
        assert p["display"] == [None] * 4
        assert p["known"] == [None] * 4
    assert st["board"]["draw_pile"] is None  # BB-5.3
    assert st["board"]["draw_count"] == 66 - 4 * 3 - 1
    # Location works
    location = r.header("location")
    assert location is not None
    view = api.get(urlsplit(location).path)
    assert view.status == 200, view
    assert view.json["match_id"] == mid


def test_create_players_as_count(api: Api):
    r = api.create_raw({"game": "biberbande", "players": 4, "seed": 1})
    assert r.status == 201, r
    b = r.json
    assert [s["seat"] for s in b["seats"]] == [0, 1, 2, 3]
    assert all(isinstance(s["name"], str) for s in b["seats"])
    assert b["state"]["rounds"] == 4  # BB-2: rounds default n
    assert len(b["state"]["players"]) == 4


def test_create_default_rounds_two_players_is_four(api: Api):
    """BB-2: rounds default n, but 4 when n = 2."""
    r = api.create_raw({"game": "biberbande", "players": 2, "seed": 1})
    assert r.status == 201, r
    assert r.json["state"]["rounds"] == 4


def test_create_server_chosen_seed_is_recorded(api: Api):
    """BB-2.1: seed absent → server picks one, echoes and records it."""
    r = api.create_raw({"game": "biberbande", "players": 2})
    assert r.status == 201, r
    b = r.json
    seed = b["seed"]
    assert isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed <= SEED_MAX
    rec = api.record(b["match_id"], b["admin_token"])
    assert rec.status == 200, rec
    assert rec.json["seed"] == seed
    # and the recorded seed reproduces the deal
    again = api.create_raw({"game": "biberbande", "players": 2, "seed": seed})
    assert again.status == 201
    a1 = api.view(b["match_id"], b["admin_token"]).json
    a2 = api.view(again.json["match_id"], again.json["admin_token"]).json
    assert comparable(a1) == comparable(a2)


def test_create_is_reproducible_from_seed(api: Api):
    """api.md: same game, players, seed, options → identical states (BB-3.2)."""
    body = {"game": "biberbande", "players": ["a", "b", "c"], "seed": 123456789, "options": {"rounds": 2}}
    m1, m2 = api.create_raw(body).json, api.create_raw(body).json
    v1 = api.view(m1["match_id"], m1["admin_token"]).json
    v2 = api.view(m2["match_id"], m2["admin_token"]).json
    assert comparable(v1) == comparable(v2)
    other = api.create_raw(dict(body, seed=987654321)).json
    v3 = api.view(other["match_id"], other["admin_token"]).json
    assert comparable(v3)["players"] != comparable(v1)["players"] or \
        comparable(v3)["board"] != comparable(v1)["board"]


def test_create_seed_bounds_accepted(api: Api):
    for seed in (0, SEED_MAX):
        r = api.create_raw({"game": "biberbande", "players": 2, "seed": seed})
        assert r.status == 201, r
        assert r.json["seed"] == seed


def test_create_deck_deals_as_w1(api: Api):
    """BB-3.3 with W1: seat 0 [3,0,5,8], seat 1 [7,9,2,4], discard [1], draw count 57."""
    m = api.create(["ana", "bo"], seed=5, options=W1_OPTIONS)
    a = m.admin_view()
    assert a["players"][0]["display"] == ["3", "0", "5", "8"]
    assert a["players"][1]["display"] == ["7", "9", "2", "4"]
    assert a["board"]["discard"] == ["1"]
    assert a["board"]["draw_count"] == 57
    assert a["board"]["draw_pile"] == W1_DECK[9:]  # admin: top first (BB-7.2)
    assert a["phase"] == "action" and a["to_act"] == [0]


def test_create_first_seat_option(api: Api):
    """BB-3.1/BB-3.3: first_seat starts round 1 and receives D[0]."""
    m = api.create(3, seed=5, options={"first_seat": 2, "deck": W1_DECK, "rounds": 1})
    a = m.admin_view()
    assert a["to_act"] == [2]
    assert a["board"]["starter"] == 2
    assert a["players"][2]["display"][0] == W1_DECK[0]
    assert a["players"][0]["display"][0] == W1_DECK[1]


def test_create_decks_option(api: Api):
    """BB-3.2: decks[r-1] is round r's order."""
    m = api.create(2, seed=5, options={"rounds": 2, "decks": [W1_DECK]})
    a = m.admin_view()
    assert a["players"][0]["display"] == ["3", "0", "5", "8"]


BAD_OPTIONS = [
    pytest.param({"nope": 1}, id="unknown-option"),
    pytest.param({"rounds": 0}, id="rounds-0"),
    pytest.param({"rounds": 21}, id="rounds-21"),
    pytest.param({"rounds": True}, id="rounds-bool"),
    pytest.param({"rounds": "2"}, id="rounds-string"),
    pytest.param({"rounds": 1.5}, id="rounds-float"),
    pytest.param({"turn_limit": 0}, id="turn_limit-0"),
    pytest.param({"turn_limit": 201}, id="turn_limit-201"),
    pytest.param({"first_seat": 2}, id="first_seat-n"),
    pytest.param({"first_seat": -1}, id="first_seat-neg"),
    pytest.param({"recall": "maybe"}, id="recall-bad"),
    pytest.param({"deck": W1_DECK[:-1]}, id="deck-short"),
    pytest.param({"deck": W1_DECK + ["1"]}, id="deck-long"),
    pytest.param({"deck": ["1"] + W1_DECK[1:]}, id="deck-wrong-multiset"),
    pytest.param({"deck": W1_DECK[:-1] + ["joker"]}, id="deck-unknown-card"),
    pytest.param({"deck": [1] * 66}, id="deck-ints"),
    pytest.param({"deck": "3 7 0"}, id="deck-string"),
    pytest.param({"deck": W1_DECK, "decks": [W1_DECK]}, id="deck-and-decks"),
    pytest.param({"rounds": 1, "decks": [W1_DECK, W1_DECK]}, id="decks-more-than-rounds"),
    pytest.param({"decks": []}, id="decks-empty"),
    pytest.param({"decks": [W1_DECK[:-1]]}, id="decks-bad-deck"),
]


@pytest.mark.parametrize("options", BAD_OPTIONS)
def test_create_invalid_options_422(api: Api, options):
    """BB-2.2: unknown option, wrong type, out of range, invalid deck → 422."""
    r = api.create_raw({"game": "biberbande", "players": 2, "seed": 1, "options": options})
    body = assert_problem(r, 422, "invalid_options")
    assert body["detail"], r


@pytest.mark.parametrize("players", [1, 7, 0, -3, ["solo"], [f"p{i}" for i in range(7)], []],
                         ids=["count-1", "count-7", "count-0", "count-neg", "one-name", "seven-names", "empty"])
def test_create_bad_players_422(api: Api, players):
    """BB-2.2: players outside 2…6 → 422 invalid_options."""
    r = api.create_raw({"game": "biberbande", "players": players, "seed": 1})
    assert_problem(r, 422, "invalid_options")


@pytest.mark.parametrize("seed", [-1, 2**53, 2**63 - 1, 2**64], ids=["neg", "2^53", "2^63-1", "2^64"])
def test_create_bad_seed_422(api: Api, seed):
    """BB-2.1 and api.md 1.2: seed is 0…2^53−1, so that every JSON client reads it exactly."""
    assert_problem(api.create_raw({"game": "biberbande", "players": 2, "seed": seed}), 422, "invalid_options")


@pytest.mark.parametrize("seed", ["42", 1.5, True], ids=["string", "float", "bool"])
def test_create_seed_wrong_type_rejected(api: Api, seed):
    """A non-integer seed is refused: 422 invalid_options (or 400 if the
    schema catches it first) — never accepted, never 500."""
    r = api.create_raw({"game": "biberbande", "players": 2, "seed": seed})
    assert r.status in (400, 422), r
    assert_problem(r, r.status, "invalid_options" if r.status == 422 else "invalid_request")


def test_create_options_not_object_rejected(api: Api):
    r = api.create_raw({"game": "biberbande", "players": 2, "options": [1, 2]})
    assert r.status in (400, 422), r
    assert_problem(r, r.status, "invalid_options" if r.status == 422 else "invalid_request")


def test_create_unknown_game(api: Api):
    """Unknown game id → 404 game_not_found (api.md errors: unknown id)."""
    assert_problem(api.create_raw({"game": "no-such-game", "players": 2}), 404, "game_not_found")


@pytest.mark.parametrize("data", [b"not json", b"{\"game\": ", b"[1, 2]", b"\"biberbande\"", b"42", b"null"],
                         ids=["garbage", "truncated", "array", "string", "number", "null"])
def test_create_body_not_json_object_400(api: Api, data):
    r = api.request("POST", "/v1/matches", data=data)
    assert_problem(r, 400, "invalid_request")


def test_create_missing_game_400(api: Api):
    r = api.create_raw({"players": 2})
    body = assert_problem(r, 400, "invalid_request")
    assert "errors" in body, "schema failures list field errors in `errors` (api.md)"


def test_create_payload_too_large_413(api: Api):
    big = {"game": "biberbande", "players": ["x" * 70_000, "y"], "seed": 1}
    assert_problem(api.create_raw(big), 413, "payload_too_large")
    # just over the 64 KiB limit, padding inside an otherwise valid body
    body = b'{"game": "biberbande", "players": 2, "pad": "' + b"a" * (64 * 1024) + b'"}'
    assert_problem(api.request("POST", "/v1/matches", data=body), 413, "payload_too_large")


def test_create_just_under_limit_is_not_413(api: Api):
    """A body under 64 KiB is read normally (here: refused for its content, not its size)."""
    body = {"game": "biberbande", "players": 2, "seed": 1, "options": {"deck": ["x" * 60_000]}}
    r = api.create_raw(body)
    assert r.status != 413, r
    assert r.status in (400, 422), r


def test_create_options_are_not_mutated_by_defaults(api: Api):
    """The record echoes the options the match runs with (defaults filled or not),
    and a match recreated from the record is identical."""
    opts = copy.deepcopy(W1_OPTIONS)
    m = api.create(["a", "b"], seed=99, options=opts)
    rec = api.record(m.id, m.admin).json
    assert rec["game"] == "biberbande"
    assert rec["seed"] == 99
    assert rec["options"]["deck"] == W1_DECK
    assert rec["moves"] == []
    assert rec["result"] is None
    again = api.create(rec["players"], seed=rec["seed"], options=rec["options"])
    assert comparable(again.admin_view()) == comparable(m.admin_view())


def test_canonical_deck_is_valid_option(api: Api):
    """BB-1.3: the canonical order itself is a valid deck."""
    r = api.create_raw({"game": "biberbande", "players": 2, "seed": 1, "options": {"deck": CANONICAL}})
    assert r.status == 201, r
    m = r.json
    a = api.view(m["match_id"], m["admin_token"]).json
    # BB-3.3: D[0..7] round-robin from seat 0; D[8] discard
    assert a["players"][0]["display"] == [CANONICAL[0], CANONICAL[2], CANONICAL[4], CANONICAL[6]]
    assert a["board"]["discard"] == [CANONICAL[8]]
    assert stack([]) == CANONICAL


@pytest.mark.parametrize("depth", [1000, 20000])
def test_create_deeply_nested_json_is_400_not_500(api: Api, depth):
    """A small body (well under 64 KiB) nested deeply is still just a bad
    request: api.md "A 500 is always a bug"."""
    data = b"[" * depth + b"]" * depth
    assert len(data) < 64 * 1024
    r = api.request("POST", "/v1/matches", data=data)
    assert r.status != 500, r
    assert_problem(r, 400, "invalid_request")


def test_create_deeply_nested_options_not_500(api: Api):
    data = b'{"game": "biberbande", "players": 2, "options": {"deck": ' + b"[" * 3000 + b"]" * 3000 + b"}}"
    r = api.request("POST", "/v1/matches", data=data)
    assert r.status in (400, 422), r


def _padded(total: int) -> bytes:
    head, tail = b'{"game": "biberbande", "players": 2, "seed": 1, "pad": "', b'"}'
    body = head + b"a" * (total - len(head) - len(tail)) + tail
    assert len(body) == total
    return body


def test_size_limit_boundary_64kib(api: Api):
    """api.md: 413 for a body *over* 64 KiB; exactly 64 KiB is read (and here
    refused for its unknown field, not for its size)."""
    at = api.request("POST", "/v1/matches", data=_padded(64 * 1024))
    assert at.status != 413, at
    assert at.status == 400, at
    assert_problem(api.request("POST", "/v1/matches", data=_padded(64 * 1024 + 1)), 413, "payload_too_large")
