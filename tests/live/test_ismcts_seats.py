"""Server bot seats of kind ``ismcts`` (opt-in, ``LODGE_ISMCTS_BOTS=1``) and
the arena entrant that names them."""
from __future__ import annotations

import random

import pytest

import bots
from arena import client as c
from arena.client import LodgeClient, legal_of
from arena.entrants import Entrant
from bots import pool as bot_pool
from lodge_openspiel import available
from tests.conftest import start_gunicorn, stop_process

needs_extra = pytest.mark.skipif(not available(), reason="the openspiel extra is not installed "
                                                         "(pip install -e '.[openspiel]')")


def test_arena_entrant_ismcts_is_a_server_seat():
    assert Entrant.parse("deep=ismcts").player() == {"name": "deep", "bot": "ismcts"}
    assert Entrant.parse("server:ismcts").server_bot == "ismcts"


@pytest.mark.live
def test_server_refuses_ismcts_seats_unless_enabled(live_server):
    with LodgeClient(live_server) as lodge, pytest.raises(c.LodgeError) as refused:
        lodge.create("biberbande", ["me", {"name": "deep", "bot": "ismcts"}], seed=1)
    assert refused.value.status == 422 and "ismcts" in str(refused.value)


@pytest.mark.live
@needs_extra
def test_server_plays_an_ismcts_seat_when_enabled(tmp_path):
    """With ``LODGE_ISMCTS_BOTS=1`` a seat may be ``ismcts``: the server plays
    it during the request (``by: "bot"``; the search in a bot process) from
    the stored history and the moves of the request."""
    # a generous budget: on a loaded machine a search in the (niced) bot process may take more than 10 s
    server, base = start_gunicorn(tmp_path, None, workers=1,
                                  extra_env={bots.ISMCTS_SETTING: "1", bot_pool.TIMEOUT_SETTING: "120000"})
    try:
        with LodgeClient(base) as lodge:
            match = lodge.create("biberbande", ["me", {"name": "deep", "bot": "ismcts"}], seed=4)
            rng, token = random.Random(2), match.seats[0].token
            assert token is not None
            for _ in range(12):
                view = lodge.view(match.match_id, token, legal=True)
                if view["status"] == "finished":
                    break
                if 0 not in legal_of(view):  # the bot's moves beyond the request's second go to the sweeper
                    lodge.events(match.match_id, match.admin_token, after=view["version"], wait=10)
                    continue
                move = rng.choice(legal_of(view)[0])
                lodge.move(match.match_id, token, {k: v for k, v in move.items() if k != "label"},
                           version=view["version"])
            record = lodge.record(match.match_id, match.admin_token)
    finally:
        stop_process(server)
    assert sum(m.get("by") == "bot" and m["seat"] == 1 for m in record["moves"]) >= 3
