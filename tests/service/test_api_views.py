"""Views per role, ETag / If-None-Match, legal moves, and the worked example W1
played through the API (biberbande.md §5, §7, §11), both stores."""
from __future__ import annotations

from typing import Any

import pytest

from tests.http_helpers import W1_DECK, W2_OPTIONS, Api, Match, assert_problem, strip_label


# --------------------------------------------------------------------------
# Views per role.
# --------------------------------------------------------------------------
def test_view_roles(api: Api, w1: Match):
    spec = api.view(w1.id)
    seat0 = api.view(w1.id, w1.token(0))
    seat1 = api.view(w1.id, w1.token(1))
    admin = api.view(w1.id, w1.admin)
    for r in (spec, seat0, seat1, admin):
        assert r.status == 200, r
        assert r.content_type == "application/json"
        assert r.json["match_id"] == w1.id and r.json["version"] == 0 and r.json["game"] == "biberbande"
    assert spec.json["viewer"] == {"role": "spectator", "seat": None}
    assert seat0.json["viewer"] == {"role": "seat", "seat": 0}
    assert seat1.json["viewer"] == {"role": "seat", "seat": 1}
    assert admin.json["viewer"] == {"role": "admin", "seat": None}


def test_view_hidden_cards_per_role_w1(api: Api, w1: Match):
    """BB-5.1 displays null except admin; BB-3.4/BB-5.6 each seat knows its
    own slots 0 and 3; admin and spectators know nothing; BB-5.3 draw pile."""
    spec, s0, s1, adm = (w1.spectator_view(), w1.seat_view(0), w1.seat_view(1), w1.admin_view())
    for v in (spec, s0, s1):
        for p in v["players"]:
            assert p["display"] == [None] * 4, v["viewer"]
        assert v["board"]["draw_pile"] is None
        assert v["board"]["draw_count"] == 57
    assert adm["players"][0]["display"] == ["3", "0", "5", "8"]
    assert adm["players"][1]["display"] == ["7", "9", "2", "4"]
    assert adm["board"]["draw_count"] == 57 and len(adm["board"]["draw_pile"]) == 57
    assert s0["players"][0]["known"] == ["3", None, None, "8"]
    assert s0["players"][1]["known"] == [None] * 4
    assert s1["players"][1]["known"] == ["7", None, None, "4"]
    assert s1["players"][0]["known"] == [None] * 4
    for v in (spec, adm):
        for p in v["players"]:
            assert p["known"] == [None] * 4
    for v in (spec, s0, s1, adm):
        assert v["board"]["discard"] == ["1"]  # BB-5.3: discard public


def test_view_recall_none(api: Api):
    """BB-5.6: recall "none" → known all null for seats too."""
    m = api.create(2, seed=3, options={"rounds": 1, "recall": "none", "deck": W1_DECK})
    for seat in (0, 1):
        for p in m.seat_view(seat)["players"]:
            assert p["known"] == [None] * 4


def test_view_shape(api: Api, w1: Match):
    """api.md "View" and BB-7.1 / BB-7.2 field names."""
    v = w1.seat_view(0)
    for key in ("match_id", "game", "version", "status", "viewer", "round", "rounds", "phase", "to_act",
                "players", "board", "scores", "result"):
        assert key in v, key
    assert (v["round"], v["rounds"], v["phase"], v["to_act"], v["scores"]) == (1, 1, "action", [0], [0, 0])
    for p in v["players"]:
        assert {"seat", "name", "display", "known"} <= set(p)
    board = v["board"]
    for key in ("starter", "turn", "current_seat", "turn_limit", "max_turn", "knocker", "knock_turn",
                "last_turn", "draw_count", "draw_pile", "discard", "drawn", "history"):
        assert key in board, key
    assert (board["starter"], board["turn"], board["current_seat"], board["turn_limit"], board["max_turn"]) == \
        (0, 1, 0, 30, 60)
    assert board["knocker"] is None and board["drawn"] is None and board["history"] == []


def test_view_unknown_match_404(api: Api):
    assert_problem(api.view("does-not-exist"), 404, "match_not_found")


# --------------------------------------------------------------------------
# ETag / If-None-Match.
# --------------------------------------------------------------------------
def test_etag_and_if_none_match(api: Api, w1: Match):
    r = api.view(w1.id, w1.token(0))
    assert r.header("etag") == '"0"', r.headers
    r304 = api.view(w1.id, w1.token(0), headers={"If-None-Match": '"0"'})
    assert r304.status == 304, r304
    assert r304.body == b""
    w1.play(0, {"type": "take_discard", "slot": 3})
    r = api.view(w1.id, w1.token(0), headers={"If-None-Match": '"0"'})
    assert r.status == 200, r
    assert r.header("etag") == '"1"' and r.json["version"] == 1
    assert api.view(w1.id, headers={"If-None-Match": '"1"'}).status == 304
    assert api.view(w1.id, w1.admin, headers={"If-None-Match": '"1"'}).status == 304


def test_move_and_legal_responses_carry_state_etag(api: Api, w1: Match):
    """Every response carrying state carries its version (api.md Words)."""
    r = api.move(w1.id, w1.token(0), {"type": "draw"}, 0)
    assert r.status == 200, r
    assert r.json["version"] == 1 and r.json["state"]["version"] == 1
    assert r.header("etag") == '"1"', r.headers  # the move response carries state
    lm = api.legal(w1.id, w1.token(0))
    assert lm.json["version"] == 1


# --------------------------------------------------------------------------
# Legal moves.
# --------------------------------------------------------------------------
def test_legal_moves_seat_initial_w1(api: Api, w1: Match):
    """BB-4.1: `draw`, then `take_discard` j = 0…3 (top discard "1" is a number)."""
    r = api.legal(w1.id, w1.token(0))
    assert r.status == 200, r
    body = r.json
    assert body["version"] == 0 and body["seat"] == 0
    assert [strip_label(m) for m in body["moves"]] == \
        [{"type": "draw"}] + [{"type": "take_discard", "slot": j} for j in range(4)]
    for m in body["moves"]:
        assert set(m) <= {"type", "slot", "label", "id"} and "id" in m
        if "label" in m:
            assert isinstance(m["label"], str)


def test_legal_moves_empty_when_not_to_act(api: Api, w1: Match):
    r = api.legal(w1.id, w1.token(1))
    assert r.status == 200, r
    assert r.json == {"version": 0, "seat": 1, "moves": []} or (r.json["moves"] == [] and r.json["seat"] == 1)


def test_legal_moves_admin_for_seat(api: Api, w1: Match):
    r0 = api.legal(w1.id, w1.admin, seat=0)
    assert r0.status == 200 and r0.json["seat"] == 0, r0
    assert r0.json["moves"] == api.legal(w1.id, w1.token(0)).json["moves"]
    r1 = api.legal(w1.id, w1.admin, seat=1)
    assert r1.status == 200 and r1.json["moves"] == [], r1


def test_legal_moves_seat_token_for_own_seat_param(api: Api, w1: Match):
    r = api.legal(w1.id, w1.token(0), seat=0)
    assert r.status == 200 and r.json["seat"] == 0, r


def test_legal_moves_auth(api: Api, w1: Match):
    assert_problem(api.legal(w1.id), 401, "unauthenticated")
    assert_problem(api.legal(w1.id, "not-a-token"), 401, "unauthenticated")
    assert_problem(api.legal(w1.id, w1.token(1), seat=0), 403, "forbidden")
    assert_problem(api.legal(w1.id, w1.token(0), seat=1), 403, "forbidden")
    other = api.create(2, seed=1)
    assert_problem(api.legal(w1.id, other.token(0)), 403, "forbidden")
    assert_problem(api.legal(w1.id, other.admin, seat=0), 403, "forbidden")
    assert_problem(api.legal("nope", w1.token(0)), 404, "match_not_found")


def test_legal_moves_are_not_leaked_in_403(api: Api, w1: Match):
    """BB-5.4: seat 1 asking for seat 0's legal moves learns nothing."""
    w1.play(0, {"type": "take_discard", "slot": 3})
    w1.play(1, {"type": "draw"})  # seat 1 holds "6"
    r = api.legal(w1.id, w1.token(0), seat=1)
    body = assert_problem(r, 403, "forbidden")
    assert "swap_drawn" not in r.body.decode() and '"6"' not in r.body.decode(), body


# --------------------------------------------------------------------------
# W1 end to end (biberbande.md §11).
# --------------------------------------------------------------------------
def test_w1_worked_example(api: Api, w1: Match):
    # 1. s0 take_discard 3
    r = api.move(w1.id, w1.token(0), {"type": "take_discard", "slot": 3}, 0)
    assert r.status == 200, r
    assert r.json["version"] == 1
    assert r.json["state"]["viewer"] == {"role": "seat", "seat": 0}
    assert [e["type"] for e in r.json["events"]][:1] == ["took_discard"]
    a = w1.admin_view()
    assert a["players"][0]["display"] == ["3", "0", "5", "1"] and a["board"]["discard"] == ["8"]
    assert (a["to_act"], a["phase"], a["board"]["turn"]) == ([1], "action", 2)  # t1 < 2: no knock phase
    # BB-5.5: take_discard is known to all seats
    assert w1.seat_view(1)["players"][0]["known"] == [None, None, None, "1"]
    assert w1.seat_view(0)["players"][0]["known"] == ["3", None, None, "1"]

    # 2. s1 draw → "6"; seat 0's view equals BB-7.3
    r = api.move(w1.id, w1.token(1), {"type": "draw"}, 1)
    assert r.status == 200, r
    assert r.json["state"]["board"]["drawn"] == {"seat": 1, "card": "6", "stage": "action"}
    v0 = w1.seat_view(0)
    expected = {
        "phase": "drawn", "to_act": [1],
        "players": [{"seat": 0, "display": [None] * 4, "known": ["3", None, None, "1"]},
                    {"seat": 1, "display": [None] * 4, "known": [None] * 4}],
        "board": {"starter": 0, "turn": 2, "current_seat": 1, "turn_limit": 30, "max_turn": 60, "knocker": None,
                  "knock_turn": None, "last_turn": None, "draw_count": 56, "draw_pile": None, "discard": ["8"],
                  "drawn": {"seat": 1, "card": None, "stage": "action"}, "history": []},
    }
    got = {"phase": v0["phase"], "to_act": v0["to_act"],
           "players": [{k: p[k] for k in ("seat", "display", "known")} for p in v0["players"]],
           "board": v0["board"]}
    assert got == expected, "BB-7.3 seat 0's view of W1 after move 2"
    assert w1.spectator_view()["board"]["drawn"] == {"seat": 1, "card": None, "stage": "action"}
    assert [strip_label(m) for m in w1.legal(1)] == \
        [{"type": "swap_drawn", "slot": j} for j in range(4)] + [{"type": "discard_drawn"}]  # BB-4.2

    # 3. s1 swap_drawn 1 → phase knock
    r = api.move(w1.id, w1.token(1), {"type": "swap_drawn", "slot": 1}, 2)
    assert r.status == 200, r
    a = w1.admin_view()
    assert a["players"][1]["display"] == ["7", "6", "2", "4"] and a["board"]["discard"] == ["8", "9"]
    assert a["phase"] == "knock" and a["to_act"] == [1]
    assert [strip_label(m) for m in w1.legal(1)] == [{"type": "knock"}, {"type": "end_turn"}]  # BB-4.7
    assert w1.seat_view(1)["players"][1]["known"] == ["7", "6", None, "4"]  # BB-5.5 placer learns
    assert w1.seat_view(0)["players"][1]["known"] == [None] * 4

    # 4. s1 knock
    r = api.move(w1.id, w1.token(1), {"type": "knock"}, 3)
    assert r.status == 200, r
    b = w1.admin_view()["board"]
    assert (b["knocker"], b["knock_turn"], b["last_turn"], b["turn"], b["current_seat"]) == (1, 2, 3, 3, 0)

    # 5. s0 draw → swap; 6. use_swap
    r = api.move(w1.id, w1.token(0), {"type": "draw"}, 4)
    assert r.status == 200 and r.json["state"]["board"]["drawn"]["card"] == "swap", r
    legal = [strip_label(m) for m in w1.legal(0)]
    assert legal == [{"type": "use_swap", "slot": j, "target_seat": 1, "target_slot": u}
                     for j in range(4) for u in range(4)] + [{"type": "discard_drawn"}]
    r = api.move(w1.id, w1.token(0), {"type": "use_swap", "slot": 0, "target_seat": 1, "target_slot": 1}, 5)
    assert r.status == 200, r
    assert r.json["version"] == 6
    types = [e["type"] for e in r.json["events"]]
    assert "used_swap" in types and "round_ended" in types and "round_scored" in types and "match_ended" in types
    final = r.json["state"]
    assert final["status"] == "finished" and final["phase"] == "finished" and final["to_act"] == []
    assert final["scores"] == [12, 16]
    assert final["result"] == {"scores": [12, 16], "ranking": [[0], [1]], "winners": [0]}
    # BB-5.1: finished → final displays shown to everyone
    spec = w1.spectator_view()
    assert spec["players"][0]["display"] == ["6", "0", "5", "1"]
    assert spec["players"][1]["display"] == ["7", "3", "2", "4"]
    assert spec["board"]["discard"] == ["8", "9", "swap"]
    assert len(spec["board"]["history"]) == 1
    h = spec["board"]["history"][0]
    assert (h["round"], h["starter"], h["knocker"], h["reason"], h["points"]) == (1, 0, 1, "knock", [12, 16])


def test_w2_worked_example(api: Api):
    """W2: Draw Twice chain, turn limit 1, replacement of a special (BB-4.4, BB-6.2)."""
    m = api.create(3, seed=8, options=W2_OPTIONS)
    a = m.admin_view()
    assert [p["display"] for p in a["players"]] == [["2", "4", "6", "peek"], ["1", "1", "swap", "9"],
                                                     ["0", "3", "draw2", "7"]]
    seq: list[tuple[int, dict[str, Any]]] = [(0, {"type": "draw"}), (0, {"type": "use_draw2"}),
                                             (0, {"type": "discard_drawn"}), (0, {"type": "draw"}),
                                             (0, {"type": "swap_drawn", "slot": 3})]
    for seat, mv in seq:
        m.play(seat, mv)
    a = m.admin_view()
    assert a["players"][0]["display"] == ["2", "4", "6", "0"]
    assert a["board"]["discard"] == ["8", "draw2", "9", "peek"]
    assert a["to_act"] == [1]
    assert [strip_label(x) for x in m.legal(1)] == [{"type": "draw"}]  # top is peek: only draw
    m.play(1, {"type": "draw"})
    m.play(1, {"type": "swap_drawn", "slot": 2})
    a = m.admin_view()
    assert a["players"][1]["display"] == ["1", "1", "2", "9"] and a["board"]["discard"][-1] == "swap"
    m.play(2, {"type": "draw"})
    m.play(2, {"type": "discard_drawn"})
    assert m.admin_view()["phase"] == "knock"
    r = m.play(2, {"type": "end_turn"})
    final = r.json["state"]
    assert final["status"] == "finished"
    assert final["scores"] == [12, 13, 13]
    assert final["result"]["ranking"] == [[0], [1, 2]] and final["result"]["winners"] == [0]
    h = final["board"]["history"][0]
    assert h["reason"] == "turn_limit" and h["knocker"] is None
    assert h["displays"][2] == ["0", "3", "3", "7"]
    replaced = [e for e in r.json["events"] if e["type"] == "replaced"]
    assert replaced and replaced[0]["seat"] == 2 and replaced[0]["slot"] == 2 and replaced[0]["card"] == "3"
    assert replaced[0]["special"] == "draw2" and replaced[0]["discarded"] == ["swap"]


@pytest.mark.parametrize("seat", [0, 1])
def test_admin_acts_for_seat(api: Api, w1: Match, seat):
    """api.md: admin may act for any seat with ?seat=k."""
    if seat == 0:
        r = api.move(w1.id, w1.admin, {"type": "draw"}, 0, seat=0)
        assert r.status == 200, r
        assert r.json["state"]["viewer"]["role"] == "admin"
    else:
        assert_problem(api.move(w1.id, w1.admin, {"type": "draw"}, 0, seat=1), 409, "not_your_turn")
