"""Time banks (contract 1.2, "Webhook seats and time banks"): a deadline is
``per_move_ms`` plus what is left of the seat's bank, the time a decision
takes beyond ``per_move_ms`` comes out of the bank (exactly: what is left
is the deadline minus the time of the move), views show ``bank`` for every
seat, and a seat that lets its deadline pass has emptied its bank.  With the
real clock, moved forward instead of waited for (``later``), and the real
sweeper's looks; the banks are part of the record."""
from __future__ import annotations

from typing import Any

import pytest

from service.domain import clock
from service.http.context import EXTENSION
from service.ops import sweeper
from tests.http_helpers import Api, Match, assert_problem, strip_label
from tests.service.test_api_clock import later  # noqa: F401  # the fixture

PER_MOVE = 1_000


def create(api: Api, bank: int, per_move: int = PER_MOVE) -> Match:
    r = api.create_raw({"game": "biberbande", "players": 2, "seed": 3,
                        "clock": {"per_move_ms": per_move, "bank_ms": bank}})
    assert r.status == 201, r
    return Match(api, r.json, r)


def now_ms() -> int:
    """The service's clock (moved forward by ``later``)."""
    return clock.now_ms()


def test_charged_takes_the_overage_exactly() -> None:
    """What is left is the deadline minus the end of the decision, between
    0 and the bank it had; seats without a deadline keep theirs."""
    bank = {"0": 3_000, "1": 3_000}
    assert clock.charged({"0": 10_000}, bank, 6_500) == {"0": 3_000, "1": 3_000}   # within per_move
    assert clock.charged({"0": 10_000}, bank, 7_001) == {"0": 2_999, "1": 3_000}   # 1 ms over
    assert clock.charged({"0": 10_000}, bank, 9_999) == {"0": 1, "1": 3_000}
    assert clock.charged({"0": 10_000}, bank, 12_000) == {"0": 0, "1": 3_000}      # past the deadline
    assert clock.charged({"0": 10_000}, {}, 12_000) == {}                            # no bank


def test_bank_in_views_and_record(api: Api) -> None:
    """Every seat's bank beside the deadline, for every viewer; the deadline
    includes it; ``bank_ms`` in the record; no ``bank`` without one."""
    before = now_ms()
    m = create(api, 3_000)
    state = m.created["state"]
    assert state["bank"] == {"0": 3_000, "1": 3_000}
    assert before + PER_MOVE + 3_000 <= state["deadline"]["0"] <= now_ms() + PER_MOVE + 3_000
    for view in (m.spectator_view(), m.admin_view(), m.seat_view(0), m.seat_view(1)):
        assert (view["bank"], view["deadline"]) == (state["bank"], state["deadline"])
    assert api.record(m.id, m.admin).json["clock"] == {"per_move_ms": PER_MOVE, "bank_ms": 3_000}
    plain = api.create_raw({"game": "biberbande", "players": 2, "clock": {"per_move_ms": PER_MOVE}}).json
    assert "bank" not in plain["state"]
    assert api.record(plain["match_id"], plain["admin_token"]).json["clock"] == {"per_move_ms": PER_MOVE}


@pytest.mark.parametrize("clock_body", [
    {"per_move_ms": PER_MOVE, "bank_ms": -1}, {"per_move_ms": PER_MOVE, "bank_ms": 3_600_001},
    {"per_move_ms": PER_MOVE, "bank_ms": 1.5}, {"per_move_ms": PER_MOVE, "bank_ms": True},
    {"bank_ms": 1_000}, {"per_move_ms": PER_MOVE, "bank": 1_000}])
def test_bad_banks_are_refused(api: Api, clock_body: dict[str, Any]) -> None:
    r = api.create_raw({"game": "biberbande", "players": 2, "clock": clock_body})
    assert "clock" in assert_problem(r, 422, "invalid_options")["detail"]


def test_a_slow_decision_pays_exactly_its_overage(api: Api, later: Any) -> None:  # noqa: F811
    """Seat 0 thinks 1.5 s with 1 s per move: the bank keeps exactly its
    deadline minus the time of the move; its next decision's deadline is
    per_move_ms plus that; a fast decision costs nothing."""
    m = create(api, 3_000)
    deadline = m.created["state"]["deadline"]["0"]
    later(1_500)
    sent = now_ms()
    r = api.move(m.id, m.token(0), strip_label(m.legal(0)[0]), 0)
    answered = now_ms()
    assert r.status == 200, r
    state = r.json["state"]
    left = state["bank"]["0"]
    assert deadline - answered <= left <= deadline - sent
    assert left <= 3_000 - 400, "1.5 s against 1 s per move must cost the bank about 0.5 s"
    assert state["bank"]["1"] == 3_000
    assert state["to_act"] == [0], "seed 3: seat 0 decides again after drawing"
    assert sent + PER_MOVE + left <= state["deadline"]["0"] <= answered + PER_MOVE + left
    r = api.move(m.id, m.token(0), strip_label(m.legal(0)[0]), 1)
    assert r.status == 200, r
    assert r.json["state"]["bank"] == {"0": left, "1": 3_000}, "a decision within per_move_ms is free"


def test_a_seat_exhausts_its_bank(app: Any, api: Api, later: Any) -> None:  # noqa: F811
    """Nobody moves: the sweeper plays seat 0's fallback only once per_move_ms
    and the whole bank have passed; then its bank is 0 and its next
    deadline is per_move_ms alone."""
    m = create(api, 1_500)
    deadline = m.created["state"]["deadline"]["0"]
    sweep = sweeper.Sweeper(app.extensions[EXTENSION])
    later(deadline - 1_000 - now_ms())                       # past per_move_ms, within the bank
    assert sweep.sweep() == 0 and m.admin_view()["version"] == 0
    later(deadline - now_ms())                               # at the deadline
    assert sweep.sweep() == 1, "fired at the deadline"
    view = m.admin_view()
    assert view["version"] == 1
    assert m.events(m.admin, after=0)[0] == {"type": "timed_out", "seat": 0, "version": 1}
    assert api.record(m.id, m.admin).json["moves"][0]["by"] == "clock"
    assert view["bank"] == {"0": 0, "1": 1_500}
    assert view["to_act"] == [0], "seed 3: seat 0 decides again after the fallback's draw"
    assert deadline <= view["deadline"]["0"] - PER_MOVE <= now_ms(), "no bank left: per_move_ms alone"
