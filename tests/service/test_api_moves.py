"""POST /v1/matches/{id}/moves: every error code, the contract's check order
(match exists, token, finished, version, seat to act, legality), idempotency,
and "every listed legal move is accepted when posted back" (api.md, BB-4.11).
Both stores."""
from __future__ import annotations

from typing import Any

import pytest

from tests.http_helpers import (
    W1_MOVES,
    W1_OPTIONS,
    W2_OPTIONS,
    Api,
    Match,
    assert_problem,
    current_version_in,
    race,
    strip_label,
)


def _snapshot(m: Match) -> tuple:
    """Everything a refused move must leave unchanged."""
    rec = m.api.record(m.id, m.admin)
    assert rec.status == 200, rec
    return m.admin_view(), rec.json["moves"], m.events(m.admin)


def _finish_w1(m: Match) -> None:
    for seat, mv in W1_MOVES:
        m.play(seat, mv)
    assert m.admin_view()["status"] == "finished"


# --------------------------------------------------------------------------
# Happy path.
# --------------------------------------------------------------------------
def test_move_response_shape(api: Api, w1: Match):
    r = api.move(w1.id, w1.token(0), {"type": "take_discard", "slot": 3}, 0)
    assert r.status == 200, r
    assert r.content_type == "application/json"
    b = r.json
    assert b["version"] == 1
    assert isinstance(b["events"], list) and b["events"]
    assert all(e["version"] == 1 for e in b["events"]), b["events"]
    assert all("type" in e and "seat" in e for e in b["events"])
    took = next(e for e in b["events"] if e["type"] == "took_discard")
    assert (took["seat"], took["slot"], took["card"], took["discarded"]) == (0, 3, "1", "8")  # BB-8.2
    assert b["state"]["version"] == 1 and b["state"]["viewer"] == {"role": "seat", "seat": 0}


def test_move_without_version_is_applied(api: Api, w1: Match):
    r = api.move(w1.id, w1.token(0), {"type": "draw"})
    assert r.status == 200, r
    assert r.json["version"] == 1


def test_label_is_ignored(api: Api, w1: Match):
    """api.md Legal moves: a `label` on a posted move is ignored."""
    r = api.move(w1.id, w1.token(0), {"type": "take_discard", "slot": 2, "label": "anything at all"}, 0)
    assert r.status == 200, r
    assert w1.admin_view()["players"][0]["display"][2] == "1"


def test_if_match_header_current_accepted(api: Api, w1: Match):
    r = api.move(w1.id, w1.token(0), {"type": "draw"}, headers={"If-Match": '"0"'})
    assert r.status == 200, r
    assert r.json["version"] == 1


# --------------------------------------------------------------------------
# Errors, one by one.
# --------------------------------------------------------------------------
def test_404_unknown_match(api: Api, w1: Match):
    assert_problem(api.move("no-such-match", w1.token(0), {"type": "draw"}, 0), 404, "match_not_found")
    # check order: existence before the token
    assert_problem(api.move("no-such-match", None, {"type": "draw"}, 0), 404, "match_not_found")
    assert_problem(api.move("no-such-match", "garbage", {"type": "draw"}, 0), 404, "match_not_found")


def test_401_no_or_unknown_token(api: Api, w1: Match):
    before = _snapshot(w1)
    assert_problem(api.move(w1.id, None, {"type": "draw"}, 0), 401, "unauthenticated")
    assert_problem(api.move(w1.id, "not-a-real-token", {"type": "draw"}, 0), 401, "unauthenticated")
    r = api.move(w1.id, None, {"type": "draw"}, headers={"Authorization": "Basic Zm9vOmJhcg=="})
    assert_problem(r, 401, "unauthenticated")
    assert _snapshot(w1) == before


def test_403_token_of_another_match(api: Api, w1: Match):
    other = api.create(2, seed=1)
    before = _snapshot(w1)
    assert_problem(api.move(w1.id, other.token(0), {"type": "draw"}, 0), 403, "forbidden")
    assert_problem(api.move(w1.id, other.admin, {"type": "draw"}, 0, seat=0), 403, "forbidden")
    assert _snapshot(w1) == before


def test_403_seat_token_acting_for_another_seat(api: Api, w1: Match):
    before = _snapshot(w1)
    assert_problem(api.move(w1.id, w1.token(1), {"type": "draw"}, 0, seat=0), 403, "forbidden")
    assert _snapshot(w1) == before


def test_409_match_finished(api: Api, w1: Match):
    _finish_w1(w1)
    final = w1.admin_view()
    for seat in (0, 1):
        body = assert_problem(api.move(w1.id, w1.token(seat), {"type": "draw"}, 6), 409, "match_finished")
        assert body["detail"]
    assert_problem(api.move(w1.id, w1.admin, {"type": "draw"}, 6, seat=0), 409, "match_finished")
    assert w1.admin_view() == final


def test_409_version_conflict_reports_current_and_changes_nothing(api: Api, w1: Match):
    w1.play(0, {"type": "take_discard", "slot": 3})
    before = _snapshot(w1)
    for stale in (0, 2, 99, -1):
        r = api.move(w1.id, w1.token(1), {"type": "draw"}, stale)
        body = assert_problem(r, 409, "version_conflict")
        assert current_version_in(body) == 1, f"409 body must say the current version: {body}"
    assert _snapshot(w1) == before


def test_409_version_conflict_via_if_match(api: Api, w1: Match):
    w1.play(0, {"type": "take_discard", "slot": 3})
    before = _snapshot(w1)
    r = api.move(w1.id, w1.token(1), {"type": "draw"}, headers={"If-Match": '"0"'})
    body = assert_problem(r, 409, "version_conflict")
    assert current_version_in(body) == 1, body
    assert _snapshot(w1) == before
    r = api.move(w1.id, w1.token(1), {"type": "draw"}, headers={"If-Match": '"1"'})
    assert r.status == 200, r


def test_409_not_your_turn(api: Api, w1: Match):
    before = _snapshot(w1)
    body = assert_problem(api.move(w1.id, w1.token(1), {"type": "draw"}, 0), 409, "not_your_turn")
    assert body["detail"]
    assert_problem(api.move(w1.id, w1.token(1), {"type": "draw"}), 409, "not_your_turn")
    assert_problem(api.move(w1.id, w1.admin, {"type": "draw"}, 0, seat=1), 409, "not_your_turn")
    assert _snapshot(w1) == before


ILLEGAL_AT_START = [
    pytest.param({"type": "swap_drawn", "slot": 1}, id="wrong-phase"),
    pytest.param({"type": "take_discard", "slot": 4}, id="slot-out-of-range"),
    pytest.param({"type": "take_discard", "slot": -1}, id="slot-negative"),
    pytest.param({"type": "take_discard", "slot": "1"}, id="slot-string"),
    pytest.param({"type": "take_discard", "slot": 1.0}, id="slot-float"),
    pytest.param({"type": "take_discard", "slot": True}, id="slot-bool"),
    pytest.param({"type": "take_discard"}, id="slot-missing"),
    pytest.param({"type": "draw", "extra": 1}, id="extra-key"),
    pytest.param({"type": "fly_to_the_moon"}, id="unknown-type"),
    pytest.param({"type": "knock"}, id="knock-too-early"),
    pytest.param({"type": ""}, id="empty-type"),
]


@pytest.mark.parametrize("move", ILLEGAL_AT_START)
def test_422_illegal_move(api: Api, w1: Match, move):
    """BB-4.11: not equal to a listed legal move → 422, detail in words, nothing changes."""
    before = _snapshot(w1)
    body = assert_problem(api.move(w1.id, w1.token(0), move, 0), 422, "illegal_move")
    assert isinstance(body["detail"], str) and len(body["detail"]) > 10, body
    assert _snapshot(w1) == before


def test_422_illegal_detail_is_useful(api: Api, w1: Match):
    body = assert_problem(api.move(w1.id, w1.token(0), {"type": "swap_drawn", "slot": 1}, 0), 422, "illegal_move")
    # the detail names the refused move type or what is possible instead
    assert "swap_drawn" in body["detail"] or "draw" in body["detail"], body


def test_422_take_discard_when_top_is_special(api: Api):
    """BB-4.1 / D5: Action B only with a number on top of the discard."""
    m = api.create(3, seed=8, options=W2_OPTIONS)
    seq: list[tuple[int, dict[str, Any]]] = [(0, {"type": "draw"}), (0, {"type": "use_draw2"}),
                                             (0, {"type": "discard_drawn"}), (0, {"type": "draw"}),
                                             (0, {"type": "swap_drawn", "slot": 3})]
    for seat, mv in seq:
        m.play(seat, mv)
    body = assert_problem(m.api.move(m.id, m.token(1), {"type": "take_discard", "slot": 0}), 422, "illegal_move")
    assert body["detail"]


def test_422_use_swap_on_own_display(api: Api, w1: Match):
    """BB-4.2 / D9: own-display swaps are not allowed."""
    for seat, mv in W1_MOVES[:5]:
        w1.play(seat, mv)
    mv = {"type": "use_swap", "slot": 0, "target_seat": 0, "target_slot": 1}
    assert_problem(api.move(w1.id, w1.token(0), mv, 5), 422, "illegal_move")


BAD_BODIES = [
    pytest.param([{"type": "draw"}], id="array"),
    pytest.param("draw", id="string"),
    pytest.param(None, id="null"),
    pytest.param({}, id="no-move"),
    pytest.param({"move": "draw"}, id="move-string"),
    pytest.param({"move": ["draw"]}, id="move-array"),
    pytest.param({"move": None}, id="move-null"),
    pytest.param({"move": {}}, id="move-no-type"),
    pytest.param({"move": {"slot": 1}}, id="move-no-type-2"),
    pytest.param({"move": {"type": 3}}, id="type-int"),
    pytest.param({"move": {"type": None}}, id="type-null"),
    pytest.param({"move": {"type": ["draw"]}}, id="type-array"),
    pytest.param({"move": {"type": "draw"}, "version": "zero"}, id="version-string"),
]


@pytest.mark.parametrize("body", BAD_BODIES)
def test_400_invalid_request(api: Api, w1: Match, body):
    before = _snapshot(w1)
    r = api.move(w1.id, w1.token(0), None, body=body)
    assert_problem(r, 400, "invalid_request")
    assert _snapshot(w1) == before


@pytest.mark.parametrize(("body", "shown"), [
    ({"type": "take_discard", "slot": 3}, 'post the move inside "move": {"move": {"type": "take_discard", "slot": 3}}'),
    ({"type": "draw", "version": 0}, '{"move": {"type": "draw"}, "version": 0}'),
    ({"move": "draw"}, 'must be an object; post {"move": {"type": "draw"}}'),
    ({}, 'post {"move": <one of the seat\'s legal moves>}'),
    ({"moves": [{"type": "draw"}]}, 'post {"move": <one of the seat\'s legal moves>}'),
])
def test_400_a_move_without_its_wrapper_shows_the_body_expected(api: Api, w1: Match, body, shown):
    """A newcomer's bare move: the detail (and the field error) show the
    body it belongs in, the client's own move wrapped when there is one."""
    r = api.move(w1.id, w1.token(0), None, body=body)
    problem = assert_problem(r, 400, "invalid_request")
    assert shown in problem["detail"] and problem["detail"].startswith("move: "), problem
    assert problem["errors"] == {"move": [problem["detail"].removeprefix("move: ")]}, problem
    assert ('"version": <n>' in problem["detail"]) == ("version" not in body), problem
    assert w1.admin_view()["version"] == 0


def test_400_a_long_bare_move_is_clipped_in_the_detail(api: Api, w1: Match):
    problem = assert_problem(api.move(w1.id, w1.token(0), None, body={"type": "draw", "note": "x" * 5000}),
                             400, "invalid_request")
    assert '{"move": {"type": "draw", "note": "xxx' in problem["detail"] and len(problem["detail"]) < 300


@pytest.mark.parametrize("data", [b"not json", b"{\"move\": {\"type\": \"draw\"}", b""],
                         ids=["garbage", "truncated", "empty"])
def test_400_body_not_json(api: Api, w1: Match, data):
    r = api.request("POST", f"/v1/matches/{w1.id}/moves", data=data, token=w1.token(0))
    assert_problem(r, 400, "invalid_request")


def test_413_move_too_large(api: Api, w1: Match):
    body = {"move": {"type": "draw", "pad": "x" * (65 * 1024)}, "version": 0}
    assert_problem(api.move(w1.id, w1.token(0), None, body=body), 413, "payload_too_large")
    assert w1.admin_view()["version"] == 0


# --------------------------------------------------------------------------
# Check order: match exists, token, finished, version, seat to act, legality.
# --------------------------------------------------------------------------
def test_order_token_before_finished(api: Api, w1: Match):
    _finish_w1(w1)
    assert_problem(api.move(w1.id, None, {"type": "draw"}, 6), 401, "unauthenticated")
    other = api.create(2, seed=2)
    assert_problem(api.move(w1.id, other.token(0), {"type": "draw"}, 6), 403, "forbidden")


def test_order_finished_before_version(api: Api, w1: Match):
    _finish_w1(w1)
    assert_problem(api.move(w1.id, w1.token(0), {"type": "draw"}, 2), 409, "match_finished")
    assert_problem(api.move(w1.id, w1.token(0), {"type": "nonsense"}, 0), 409, "match_finished")


def test_order_version_before_turn_and_legality(api: Api, w1: Match):
    # seat 1 is not to act and the move is illegal, but the version is stale first
    body = assert_problem(api.move(w1.id, w1.token(1), {"type": "nonsense"}, 5), 409, "version_conflict")
    assert current_version_in(body) == 0
    body = assert_problem(api.move(w1.id, w1.token(0), {"type": "nonsense"}, 5), 409, "version_conflict")
    assert current_version_in(body) == 0


def test_order_turn_before_legality(api: Api, w1: Match):
    assert_problem(api.move(w1.id, w1.token(1), {"type": "nonsense"}, 0), 409, "not_your_turn")
    assert_problem(api.move(w1.id, w1.token(1), {"type": "take_discard", "slot": 9}), 409, "not_your_turn")


# --------------------------------------------------------------------------
# Every listed legal move is accepted when posted back unchanged.
# --------------------------------------------------------------------------
W2_MOVES: list[tuple[int, dict[str, Any]]] = [
    (0, {"type": "draw"}), (0, {"type": "use_draw2"}), (0, {"type": "discard_drawn"}),
    (0, {"type": "draw"}), (0, {"type": "swap_drawn", "slot": 3}), (1, {"type": "draw"}),
    (1, {"type": "swap_drawn", "slot": 2}), (2, {"type": "draw"}), (2, {"type": "discard_drawn"})]

PREFIXES = [("w1", k) for k in (0, 1, 2, 3, 4, 5)] + [("w2", k) for k in (1, 2, 3, 5, 9)]


@pytest.mark.parametrize("example,k", PREFIXES, ids=[f"{e}-{k}" for e, k in PREFIXES])
def test_every_listed_legal_move_is_accepted(api: Api, example, k):
    """api.md: any element of legal-moves POSTed back unchanged is accepted."""
    n, options, moves = (2, W1_OPTIONS, W1_MOVES) if example == "w1" else (3, W2_OPTIONS, W2_MOVES)

    def fresh() -> Match:
        m = api.create(n, seed=4, options=options)
        for version, (seat, mv) in enumerate(moves[:k]):
            r = api.move(m.id, m.token(seat), mv, version)
            assert r.status == 200, (mv, r)
        return m

    probe = fresh()
    view = probe.admin_view()
    seat = view["to_act"][0]
    legal = probe.legal(seat)
    assert legal, view
    assert api.legal(probe.id, probe.admin, seat=seat).json["moves"] == legal
    for i, mv in enumerate(legal):
        m = probe if i == 0 else fresh()
        r = api.move(m.id, m.token(seat), mv, k)  # exactly as listed, label included
        assert r.status == 200, (mv, r)
        assert r.json["version"] == k + 1


# --------------------------------------------------------------------------
# Idempotency-Key.
# --------------------------------------------------------------------------
def test_idempotency_same_key_same_response_applied_once(api: Api, w1: Match):
    hdr = {"Idempotency-Key": "retry-1"}
    r1 = api.move(w1.id, w1.token(0), {"type": "draw"}, headers=hdr)
    assert r1.status == 200, r1
    r2 = api.move(w1.id, w1.token(0), {"type": "draw"}, headers=hdr)
    assert r2.status == 200, r2
    assert r2.json == r1.json
    assert w1.admin_view()["version"] == 1
    rec = api.record(w1.id, w1.admin).json
    assert len(rec["moves"]) == 1


def test_idempotency_with_version_applied_once(api: Api, w1: Match):
    hdr = {"Idempotency-Key": "k-with-version"}
    r1 = api.move(w1.id, w1.token(0), {"type": "take_discard", "slot": 0}, 0, headers=hdr)
    r2 = api.move(w1.id, w1.token(0), {"type": "take_discard", "slot": 0}, 0, headers=hdr)
    assert r1.status == r2.status == 200, (r1, r2)
    assert r1.json == r2.json
    assert w1.admin_view()["version"] == 1


def test_idempotency_replay_after_later_moves(api: Api, w1: Match):
    hdr = {"Idempotency-Key": "first-move"}
    r1 = api.move(w1.id, w1.token(0), {"type": "take_discard", "slot": 3}, 0, headers=hdr)
    assert r1.status == 200
    w1.play(1, {"type": "draw"})
    r2 = api.move(w1.id, w1.token(0), {"type": "take_discard", "slot": 3}, 0, headers=hdr)
    assert (r2.status, r2.json) == (200, r1.json)
    assert w1.admin_view()["version"] == 2
    assert len(api.record(w1.id, w1.admin).json["moves"]) == 2


def test_idempotency_different_keys_are_different_requests(api: Api, w1: Match):
    r1 = api.move(w1.id, w1.token(0), {"type": "draw"}, 0, headers={"Idempotency-Key": "a"})
    assert r1.status == 200
    r2 = api.move(w1.id, w1.token(0), {"type": "draw"}, 0, headers={"Idempotency-Key": "b"})
    assert_problem(r2, 409, "version_conflict")


def test_idempotency_key_is_per_match(api: Api, w1: Match):
    other = api.create(["x", "y"], seed=11, options=W1_OPTIONS)
    hdr = {"Idempotency-Key": "shared"}
    assert api.move(w1.id, w1.token(0), {"type": "draw"}, headers=hdr).status == 200
    r = api.move(other.id, other.token(0), {"type": "take_discard", "slot": 1}, headers=hdr)
    assert r.status == 200, r
    assert other.admin_view()["players"][0]["display"][1] == "1"


def test_idempotency_many_retries_apply_once(api: Api, w1: Match):
    """A refused request applies nothing; the same key must never make a later
    retry apply a move twice."""
    hdr = {"Idempotency-Key": "k"}
    for _ in range(3):
        r = api.move(w1.id, w1.token(0), {"type": "take_discard", "slot": 0}, headers=hdr)
        assert r.status == 200, r
    assert w1.admin_view()["version"] == 1
    assert len(api.record(w1.id, w1.admin).json["moves"]) == 1


def test_400_deeply_nested_move_not_500(api: Api, w1: Match):
    """api.md: a 500 is always a bug; a nested body under the size limit is a 400."""
    data = b'{"move": {"type": "draw", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}}"
    r = api.request("POST", f"/v1/matches/{w1.id}/moves", data=data, token=w1.token(0))
    assert r.status != 500, r
    assert r.status in (400, 422), r
    assert w1.admin_view()["version"] == 0


def test_if_none_match_list_and_weak(api: Api, w1: Match):
    """RFC 9110: If-None-Match may list several tags or weak ones; any match → 304."""
    assert api.view(w1.id, headers={"If-None-Match": '"7", "0"'}).status == 304
    assert api.view(w1.id, headers={"If-None-Match": 'W/"0"'}).status == 304
    assert api.view(w1.id, headers={"If-None-Match": '"1"'}).status == 200


def test_idempotency_same_key_different_move_is_422(api: Api, w1: Match):
    """api.md 1.1: the same key with a different request (another move,
    version or seat) is 422 idempotency_key_reused and changes nothing."""
    hdr = {"Idempotency-Key": "same-key"}
    r1 = api.move(w1.id, w1.token(0), {"type": "take_discard", "slot": 0}, 0, headers=hdr)
    assert r1.status == 200
    r2 = api.move(w1.id, w1.token(0), {"type": "take_discard", "slot": 1}, 0, headers=hdr)
    assert_problem(r2, 422, "idempotency_key_reused")
    a = w1.admin_view()
    assert a["version"] == 1 and a["players"][0]["display"][:2] == ["1", "0"]
    r3 = api.move(w1.id, w1.token(0), {"type": "take_discard", "slot": 0}, 0, headers=hdr)
    assert (r3.status, r3.json) == (200, r1.json)


def test_idempotency_key_never_leaks_another_seats_response(api: Api, w1: Match):
    """api.md: nothing hidden may appear in a response: seat 1 reusing seat 0's
    Idempotency-Key must not receive seat 0's view (its drawn card)."""
    hdr = {"Idempotency-Key": "shared-by-two-seats"}
    r0 = api.move(w1.id, w1.token(0), {"type": "draw"}, 0, headers=hdr)
    assert r0.status == 200 and r0.json["state"]["board"]["drawn"]["card"] == "6"
    r1 = api.move(w1.id, w1.token(1), {"type": "draw"}, 0, headers=hdr)
    assert r1.status != 200 or r1.json["state"]["viewer"] == {"role": "seat", "seat": 1}, r1
    if r1.status == 200:
        assert r1.json["state"]["board"]["drawn"]["card"] is None
        assert all(e.get("card") is None for e in r1.json["events"] if e["type"] == "drew")
    assert w1.admin_view()["version"] == 1


def test_legal_moves_empty_on_finished_match(api: Api, w1: Match):
    _finish_w1(w1)
    for seat in (0, 1):
        r = api.legal(w1.id, w1.token(seat))
        assert r.status == 200 and r.json["moves"] == [] and r.json["version"] == 6, r


# --------------------------------------------------------------------------
# Racing threads in-process (both stores): one compare-and-set wins.
# --------------------------------------------------------------------------
def test_racing_threads_one_winner(app, api: Api):
    from tests.conftest import flask_api

    for attempt in range(4):
        m = api.create(["a", "b"], seed=attempt, options=W1_OPTIONS)
        legal = m.legal(0)
        moves = (legal * 2)[:8]
        clients = [flask_api(app) for _ in moves]
        results = race(clients, m.id, m.token(0), moves, 0, timeout=30)
        assert [r.status for r in results].count(200) == 1, [(r.status, r.body[:80]) for r in results]
        for r in results:
            if r.status != 200:
                assert_problem(r, 409, "version_conflict")
        rec = api.record(m.id, m.admin).json
        assert len(rec["moves"]) == 1 and m.admin_view()["version"] == 1


# --------------------------------------------------------------------------
# Two app instances on one store (two gunicorn workers, in-process): the
# per-worker caches never make a worker decide on a stale state.
# --------------------------------------------------------------------------
def test_two_workers_never_decide_on_stale_state(store):
    from tests.conftest import flask_api, make_app

    a, b = flask_api(make_app(store)), flask_api(make_app(store))
    created = a.create(["x", "y"], seed=11, options=W1_OPTIONS).created
    ma, mb = Match(a, created), Match(b, created)
    assert mb.admin_view()["version"] == 0  # b caches version 0
    assert mb.legal(0)  # and its legal moves
    # a moves on; b must notice, with and without an explicit version
    assert a.move(ma.id, ma.token(0), {"type": "take_discard", "slot": 3}, 0).status == 200
    assert_problem(b.move(mb.id, mb.token(0), {"type": "draw"}), 409, "not_your_turn")
    assert_problem(b.move(mb.id, mb.token(0), {"type": "draw"}, 0), 409, "version_conflict")
    assert [strip_label(x) for x in mb.legal(1)] == [{"type": "draw"}, *[{"type": "take_discard", "slot": j}
                                                                        for j in range(4)]]
    r = b.move(mb.id, mb.token(1), {"type": "draw"}, 1)
    assert r.status == 200 and r.json["version"] == 2, r
    # a's cache is now behind: a move without version is decided on the stored state
    r = a.move(ma.id, ma.token(1), {"type": "swap_drawn", "slot": 1})
    assert r.status == 200 and r.json["version"] == 3, r
    assert ma.admin_view() == mb.admin_view()
    assert ma.admin_view()["players"][1]["display"] == ["7", "6", "2", "4"]
    # idempotent replay seen from the other worker
    hdr = {"Idempotency-Key": "cross-worker"}
    r1 = a.move(ma.id, ma.token(1), {"type": "knock"}, headers=hdr)
    r2 = b.move(mb.id, mb.token(1), {"type": "knock"}, headers=hdr)
    assert r1.status == r2.status == 200 and r1.json == r2.json
    assert mb.admin_view()["version"] == 4
    # delete on one worker: the other answers 404 everywhere
    assert a.delete_match(ma.id, ma.admin).status == 204
    assert_problem(b.view(mb.id), 404, "match_not_found")
    assert_problem(b.move(mb.id, mb.token(0), {"type": "draw"}), 404, "match_not_found")
    assert_problem(b.legal(mb.id, mb.token(0)), 404, "match_not_found")
    assert_problem(b.events(mb.id), 404, "match_not_found")
    assert_problem(b.record(mb.id, mb.admin), 404, "match_not_found")
