"""arena.client against a live gunicorn + redis-server: every error code of
the contract (api.md, Errors) surfaces as its exception class carrying the
problem+json ``code``; retries on 503 and on a refused connection; moves are
idempotent; long-poll; record; delete; and the 1.1 parts: ``legal=True``
(one request per move), player objects, clocks, seats and claims, resign."""
from __future__ import annotations

import threading
import time
from typing import TypeVar

import pytest

from arena import client as c
from arena.client import LodgeClient
from engine import REGISTRY
from tests.conftest import closed_port, start_gunicorn, start_redis, stop_process

pytestmark = pytest.mark.live


@pytest.fixture
def lodge(live_server: str):
    with LodgeClient(live_server) as client:
        yield client


@pytest.fixture
def match(lodge: LodgeClient) -> c.CreatedMatch:
    return lodge.create("biberbande", ["ana", "bo"], seed=7)


#: the error class a call is expected to raise
E = TypeVar("E", bound=c.LodgeError)


def expect(cls: type[E], status: int, code: str, call, *args, **kw) -> E:
    with pytest.raises(cls) as info:
        call(*args, **kw)
    error = info.value
    assert isinstance(error, c.LodgeError)
    assert (error.status, error.code, error.problem["code"]) == (status, code, code), error.problem
    assert error.detail and code in str(error)
    return error


def test_catalogue_and_create(lodge: LodgeClient, match: c.CreatedMatch):
    assert {g["id"] for g in lodge.games()} == set(REGISTRY.ids())
    assert lodge.game("biberclan")["min_players"] == 2
    assert (match.game, match.version, match.seed, len(match.seats)) == ("biberbande", 0, 7, 2)
    assert [s.name for s in match.seats] == ["ana", "bo"] and match.token(1) == match.seats[1].token
    assert match.state["viewer"]["role"] == "spectator"
    assert lodge.healthy()


def test_invalid_request_carries_field_errors(lodge: LodgeClient, match: c.CreatedMatch):
    error = expect(c.InvalidRequest, 400, "invalid_request", lodge.move, match.match_id, match.token(0),
                   {"no": "type"})
    assert error.errors


def test_unauthenticated_and_forbidden(lodge: LodgeClient, match: c.CreatedMatch):
    expect(c.Unauthenticated, 401, "unauthenticated", lodge.legal_moves, match.match_id, f"{match.match_id}.nope")
    expect(c.Forbidden, 403, "forbidden", lodge.legal_moves, match.match_id, match.token(0), seat=1)
    expect(c.Forbidden, 403, "forbidden", lodge.delete, match.match_id, match.token(0))


def test_not_found(lodge: LodgeClient):
    expect(c.MatchNotFound, 404, "match_not_found", lodge.view, "nosuchmatch")
    expect(c.GameNotFound, 404, "game_not_found", lodge.game, "chess")
    expect(c.GameNotFound, 404, "game_not_found", lodge.create, "chess", 2)
    assert issubclass(c.MatchNotFound, c.NotFound) and issubclass(c.GameNotFound, c.NotFound)


def test_conflicts(lodge: LodgeClient, match: c.CreatedMatch):
    error = expect(c.VersionConflict, 409, "version_conflict", lodge.move, match.match_id, match.token(0),
                   {"type": "draw"}, version=5)
    assert error.current_version == 0
    expect(c.NotYourTurn, 409, "not_your_turn", lodge.move, match.match_id, match.token(1), {"type": "draw"})
    assert lodge.view(match.match_id)["version"] == 0  # nothing changed


def test_illegal_move_and_invalid_options(lodge: LodgeClient, match: c.CreatedMatch):
    error = expect(c.IllegalMove, 422, "illegal_move", lodge.move, match.match_id, match.token(0), {"type": "fly"})
    assert "fly" in error.detail
    expect(c.InvalidOptions, 422, "invalid_options", lodge.create, "biberbande", 2, options={"nope": 1})
    expect(c.InvalidOptions, 422, "invalid_options", lodge.create, "biberbande", 1)


def test_payload_too_large(lodge: LodgeClient):
    expect(c.PayloadTooLarge, 413, "payload_too_large", lodge.create, "biberbande", ["x" * 70_000, "y"])


def test_match_finished_record_and_delete(lodge: LodgeClient):
    m = lodge.create("biberbande", 2, seed=3, options={"rounds": 1})
    version = 0
    while True:
        view = lodge.view(m.match_id)
        if view["status"] == "finished":
            break
        seat = view["to_act"][0]
        legal = lodge.legal_moves(m.match_id, m.token(seat))
        assert legal.seat == seat and legal.version == version
        result = lodge.move(m.match_id, m.token(seat), legal.moves[-1], version=legal.version)
        assert result.version == version + 1 and result.state["viewer"] == {"role": "seat", "seat": seat}
        version = result.version
    expect(c.MatchFinished, 409, "match_finished", lodge.move, m.match_id, m.token(0), {"type": "draw"})
    record = lodge.record(m.match_id)  # anyone, once finished
    assert len(record["moves"]) == version and record["result"] == view["result"]
    assert lodge.events(m.match_id).version == version
    lodge.delete(m.match_id, m.admin_token)
    expect(c.MatchNotFound, 404, "match_not_found", lodge.view, m.match_id)


def test_same_idempotency_key_applies_once(lodge: LodgeClient, match: c.CreatedMatch):
    first = lodge.move(match.match_id, match.token(0), {"type": "draw"}, idempotency_key="k1")
    again = lodge.move(match.match_id, match.token(0), {"type": "draw"}, idempotency_key="k1")
    assert first == again and first.version == 1
    assert len(lodge.record(match.match_id, match.admin_token)["moves"]) == 1


def test_events_long_poll_wakes_on_a_move(live_server: str, lodge: LodgeClient, match: c.CreatedMatch):
    def later() -> None:
        time.sleep(0.3)
        with LodgeClient(live_server) as other:
            other.move(match.match_id, match.token(0), {"type": "draw"})

    mover = threading.Thread(target=later)
    mover.start()
    started = time.monotonic()
    page = lodge.events(match.match_id, match.token(1), after=0, wait=20)
    mover.join()
    assert page.version == 1 and page.events and time.monotonic() - started < 15
    assert all(e["version"] == 1 for e in page.events)


def test_unreachable_after_retries():
    with LodgeClient(f"http://127.0.0.1:{closed_port()}", retries=2, backoff=0.01) as lodge:
        with pytest.raises(c.Unreachable):
            lodge.games()
        assert not lodge.healthy()


def test_store_unavailable_is_retried_until_redis_is_back(tmp_path):
    """503 store_unavailable with Retry-After: without retries it surfaces as
    StoreUnavailable; with retries the call succeeds once redis is back."""
    redis_proc, url = start_redis(tmp_path)
    server = None
    try:
        server, base = start_gunicorn(tmp_path, url, workers=1, extra_env={"REDIS_TIMEOUT": "1"})
        with LodgeClient(base) as lodge:
            m = lodge.create("biberbande", 2, seed=1)
            stop_process(redis_proc)
        with LodgeClient(base, retries=0) as impatient:
            error = expect(c.StoreUnavailable, 503, "store_unavailable", impatient.view, m.match_id)
            assert error.retry_after is not None and error.retry_after >= 0

        port = int(url.rsplit(":", 1)[1].split("/")[0])

        def restart() -> None:
            nonlocal redis_proc
            time.sleep(1.0)
            redis_proc, _ = start_redis(tmp_path, port=port)

        restarter = threading.Thread(target=restart)
        restarter.start()
        with LodgeClient(base, retries=30, max_wait=0.5) as patient:
            again = patient.create("biberbande", 2, seed=2)  # fails with 503 until redis is back
        restarter.join()
        assert again.version == 0
    finally:
        if server is not None:
            stop_process(server, timeout=20)
        stop_process(redis_proc)


# --- 1.1: one request per move, seats, clocks, resigning --------------------
def test_legal_true_carries_the_callers_moves(lodge: LodgeClient, match: c.CreatedMatch):
    """?legal=true: a seat gets its own moves while it is to act, the admin
    every seat to act, a spectator none; a move's answer the next ones."""
    mine = lodge.view(match.match_id, match.token(0), legal=True)
    first = lodge.legal_moves(match.match_id, match.token(0))
    assert c.legal_of(mine) == {0: first.moves} and mine["version"] == first.version == 0
    assert c.legal_of(lodge.view(match.match_id, match.admin_token, legal=True)) == {0: first.moves}
    assert c.legal_of(lodge.view(match.match_id, match.token(1), legal=True)) == {}
    assert c.legal_of(lodge.view(match.match_id, legal=True)) == {}
    assert "legal_moves" not in lodge.view(match.match_id, match.token(0))

    answer = lodge.move(match.match_id, match.token(0), {"type": "draw"}, version=0, legal=True)
    assert answer.legal_moves == {0: lodge.legal_moves(match.match_id, match.token(0)).moves}
    while answer.state["to_act"] == [0]:  # the admin plays seat 0 until the turn passes
        answer = lodge.move(match.match_id, match.admin_token, answer.legal_moves[0][0], seat=0,
                            version=answer.version, legal=True)
    assert answer.state["to_act"] == [1]  # the admin gets the next seat's moves at once
    assert answer.legal_moves == {1: lodge.legal_moves(match.match_id, match.token(1)).moves}
    assert lodge.move(match.match_id, match.token(1), answer.legal_moves[1][0]).legal_moves == {}  # not asked


def test_player_objects_clock_and_the_seats(lodge: LodgeClient):
    m = lodge.create("biberclan", ["ana", {"name": "Bobo", "bot": "random"}, {"name": "cy", "open": True}],
                     seed=4, per_move_ms=60_000)
    assert [(s.name, s.token is not None, s.bot, s.open) for s in m.seats] == [
        ("ana", True, None, False), ("Bobo", False, "random", False), ("cy", False, None, True)]
    assert m.invite and m.token(0)
    with pytest.raises(ValueError, match="no token"):
        m.token(1)
    assert [(s["seat"], s["kind"]) for s in lodge.seats(m.match_id)] == [(0, "token"), (1, "bot"), (2, "open")]
    assert lodge.record(m.match_id, m.admin_token)["clock"] == {"per_move_ms": 60_000}

    claimed = lodge.claim(m.match_id, 2, m.invite)
    assert (claimed.seat, claimed.name) == (2, "cy") and claimed.token
    assert lodge.seats(m.match_id)[2]["kind"] == "claimed"
    expect(c.SeatTaken, 409, "seat_taken", lodge.claim, m.match_id, 2, m.invite)
    expect(c.Forbidden, 403, "forbidden", lodge.claim, m.match_id, 1, "wrong")


def test_resign_ends_a_two_seat_match(lodge: LodgeClient, match: c.CreatedMatch):
    answer = lodge.resign(match.match_id, match.token(1), legal=True)  # not its turn: allowed
    assert answer.state["status"] == "finished" and answer.state["result"]["winners"] == [0]
    assert answer.legal_moves == {}
    assert any(e["type"] == "resigned" and e["seat"] == 1 for e in answer.events)


def test_a_reused_idempotency_key_with_another_move(lodge: LodgeClient, match: c.CreatedMatch):
    lodge.move(match.match_id, match.token(0), {"type": "draw"}, idempotency_key="k2")
    expect(c.IdempotencyKeyReused, 422, "idempotency_key_reused", lodge.move, match.match_id, match.token(0),
           {"type": "discard_drawn"}, idempotency_key="k2")
