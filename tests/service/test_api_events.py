"""GET /v1/matches/{id}/events: after, redaction per viewer (BB-5.7), long-poll
`wait`.  Both stores."""
from __future__ import annotations

import time

import pytest

from tests.conftest import flask_api
from tests.http_helpers import W1_MOVES, Api, Match, assert_problem, events_of, long_poll_across, stack

PEEK_DECK = stack("3 7 0 9 5 2 8 4 1 peek".split())  # s0 [3,0,5,8], s1 [7,9,2,4]; s0 draws peek


def _flat(x):
    if isinstance(x, list):
        for y in x:
            yield from _flat(y)
    else:
        yield x


def test_setup_events_version_zero(api: Api, w1: Match):
    evs = w1.events()
    types = [e["type"] for e in evs]
    assert types[:3] == ["round_started", "dealt", "turn_started"], types  # BB-3.5
    assert all(e["version"] == 0 for e in evs)
    rs = evs[0]
    assert (rs["round"], rs["starter"], rs["seat"]) == (1, 0, None)
    assert evs[2]["seat"] == 0 and evs[2]["turn"] == 1
    assert evs[1]["discard"] == ["1"] or evs[1]["discard"] == "1"


def test_after_filters_by_version(api: Api, w1: Match):
    for seat, mv in W1_MOVES[:3]:
        w1.play(seat, mv)
    all_evs = w1.events(w1.admin)
    assert [e["version"] for e in all_evs] == sorted(e["version"] for e in all_evs)
    assert {e["version"] for e in all_evs} == {0, 1, 2, 3}
    assert w1.events(w1.admin, after=-1) == all_evs
    after1 = w1.events(w1.admin, after=1)
    assert after1 == [e for e in all_evs if e["version"] > 1]
    assert w1.events(w1.admin, after=3) == []
    assert w1.events(w1.admin, after=100) == []


def test_events_response_version(api: Api, w1: Match):
    """If the events response is an object, its version is the current one."""
    w1.play(0, {"type": "draw"})
    r = api.events(w1.id, after=0)
    assert r.status == 200, r
    if isinstance(r.json, dict) and "version" in r.json:
        assert r.json["version"] == 1


def test_move_events_equal_events_endpoint(api: Api, w1: Match):
    r = api.move(w1.id, w1.token(0), {"type": "take_discard", "slot": 3}, 0)
    assert r.status == 200
    assert r.json["events"] == w1.events(w1.token(0), after=0)


def test_dealt_redaction(api: Api, w1: Match):
    """BB-5.7: dealt.displays shows each seat its own slots 0 and 3, admin all,
    spectator none."""
    def dealt(token):
        return next(e for e in w1.events(token) if e["type"] == "dealt")

    adm = dealt(w1.admin)["displays"]
    assert adm == [["3", "0", "5", "8"], ["7", "9", "2", "4"]]
    s0 = dealt(w1.token(0))["displays"]
    assert s0[0] == ["3", None, None, "8"] and list(_flat(s0[1])) == [None] * 4
    s1 = dealt(w1.token(1))["displays"]
    assert s1[1] == ["7", None, None, "4"] and list(_flat(s1[0])) == [None] * 4
    spec = dealt(None)["displays"]
    assert all(v is None for v in _flat(spec)), spec


def test_drew_card_redaction(api: Api, w1: Match):
    """BB-5.7: drew.card only to the actor and admin; a seat never sees another
    seat's drawn card."""
    w1.play(0, {"type": "take_discard", "slot": 3})
    w1.play(1, {"type": "draw"})

    def drew(token):
        return [e for e in w1.events(token, after=1) if e["type"] == "drew"]

    assert [e["card"] for e in drew(w1.admin)] == ["6"]
    assert [e["card"] for e in drew(w1.token(1))] == ["6"]
    assert [e["card"] for e in drew(w1.token(0))] == [None]
    assert [e["card"] for e in drew(None)] == [None]
    for token in (w1.admin, w1.token(0), w1.token(1), None):
        e = drew(token)[0]
        assert (e["seat"], e["stage"], e["version"]) == (1, "action", 2)


def test_swapped_drawn_redaction(api: Api, w1: Match):
    """BB-5.7: swapped_drawn.card only to actor/admin; `discarded` is public."""
    for seat, mv in W1_MOVES[:3]:
        w1.play(seat, mv)

    def sw(token):
        return next(e for e in w1.events(token, after=2) if e["type"] == "swapped_drawn")

    assert sw(w1.admin)["card"] == "6" and sw(w1.token(1))["card"] == "6"
    assert sw(w1.token(0))["card"] is None and sw(None)["card"] is None
    for token in (w1.admin, w1.token(0), None):
        assert sw(token)["discarded"] == "9" and sw(token)["slot"] == 1


def test_used_peek_redaction(api: Api):
    """BB-5.5 / BB-5.7: use_peek: the peeker learns the card, nobody else."""
    m = api.create(2, seed=1, options={"rounds": 1, "deck": PEEK_DECK})
    m.play(0, {"type": "draw"})
    assert m.seat_view(0)["board"]["drawn"]["card"] == "peek"
    assert m.seat_view(1)["board"]["drawn"]["card"] is None
    m.play(0, {"type": "use_peek", "slot": 1})
    assert m.seat_view(0)["players"][0]["known"] == ["3", "0", None, "8"]
    assert m.seat_view(1)["players"][0]["known"] == [None] * 4

    def peek(token):
        return next(e for e in m.events(token) if e["type"] == "used_peek")

    assert peek(m.admin)["card"] == "0" and peek(m.token(0))["card"] == "0"
    assert peek(m.token(1))["card"] is None and peek(None)["card"] is None
    assert m.admin_view()["board"]["discard"] == ["1", "peek"]  # BB-4.3 special discarded first


def test_round_end_reveals_public(api: Api, w1: Match):
    """BB-6.1 / BB-5.7: round_ended reveals every display to everyone."""
    for seat, mv in W1_MOVES:
        w1.play(seat, mv)
    for token in (None, w1.token(0), w1.token(1)):
        ended = next(e for e in w1.events(token) if e["type"] == "round_ended")
        assert ended["displays"] == [["6", "0", "5", "1"], ["7", "3", "2", "4"]]
        assert ended["reason"] == "knock" and ended["knocker"] == 1
        me = next(e for e in w1.events(token) if e["type"] == "match_ended")
        assert me["result"]["winners"] == [0]


def test_events_unknown_match_404(api: Api):
    assert_problem(api.events("no-such-match"), 404, "match_not_found")


@pytest.mark.parametrize("params", [{"after": "x"}, {"wait": "soon"}, {"wait": -1}],
                         ids=["after-text", "wait-text", "wait-negative"])
def test_events_bad_query_400(api: Api, w1: Match, params):
    r = api.get(f"/v1/matches/{w1.id}/events", params=params)
    assert_problem(r, 400, "invalid_request")


def test_events_wait_returns_empty_after_timeout(api: Api, w1: Match):
    t0 = time.monotonic()
    r = api.events(w1.id, w1.token(0), after=0, wait=0.05)
    elapsed = time.monotonic() - t0
    assert r.status == 200, r
    assert events_of(r.json) == []
    assert 0.05 <= elapsed < 5, elapsed


def test_events_wait_returns_at_once_when_events_exist(api: Api, w1: Match):
    t0 = time.monotonic()
    r = api.events(w1.id, None, after=-1, wait=10)
    assert r.status == 200 and events_of(r.json), r
    assert time.monotonic() - t0 < 2


def test_events_long_poll_wakes_on_move(app, api: Api, w1: Match):
    """A waiting reader returns early when a move lands from another thread,
    with that move's events, redacted for the reader."""
    def move() -> None:
        r = api.move(w1.id, w1.token(0), {"type": "draw"}, 0)  # seat 0 draws D[9] = "6"
        assert r.status == 200, r

    polled, elapsed = long_poll_across(flask_api(app), w1.id, w1.token(1), 0, move,
                                       lambda: app.extensions["lodge"].notifier.watched() == 1)
    assert polled.status == 200, polled
    evs = events_of(polled.json)
    assert evs and all(e["version"] == 1 for e in evs)
    drew = next(e for e in evs if e["type"] == "drew")
    assert drew["seat"] == 0 and drew["card"] is None  # seat 1 must not see seat 0's card
    assert elapsed < 10, elapsed
