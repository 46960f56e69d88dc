"""Every game of the catalogue through the generic contract only (api.md):
a random bot plays whole matches with min and max players (under ``--fast``
the fewest only); after every move
the version advanced by one, the seats to act have legal moves and the others
none, and every non-admin view is the admin view with some values replaced
by null ("A card the viewer may not see is null in its place; layout, counts
and positions stay visible") — never a value the admin does not see.  The
record replays into an identical final state.  Embedded store."""
from __future__ import annotations

import random
from typing import Any

import pytest

from engine import REGISTRY
from tests import conftest
from tests.conftest import match_options
from tests.http_helpers import Api, Match, comparable, replay_record, strip_label

GAMES = REGISTRY.ids()
PER_VIEWER_KEYS = {"viewer", "known"}  # differ by design (BB-5.6 and the other games' recall)


def redacted_from(view: Any, admin: Any, path: str = "") -> None:
    """``view`` equals ``admin`` except for values replaced by null."""
    if view is None:
        return
    if isinstance(admin, dict) and isinstance(view, dict):
        # a key only the admin gets (e.g. BC-7.2 `draw_pile` "admin only") may be absent
        extra = set(view) - set(admin) - PER_VIEWER_KEYS
        assert not extra, f"{path}: keys the admin view lacks: {sorted(extra)}"
        for k in view:
            if k in PER_VIEWER_KEYS:
                continue
            redacted_from(view[k], admin[k], f"{path}.{k}")
    elif isinstance(admin, list) and isinstance(view, list):
        assert len(view) == len(admin), f"{path}: length {len(view)} vs admin {len(admin)} (layout must stay)"
        for i, (v, a) in enumerate(zip(view, admin)):
            redacted_from(v, a, f"{path}[{i}]")
    else:
        assert view == admin, f"{path}: viewer sees {view!r} where the admin sees {admin!r}"


def _catalogue(api: Api) -> dict[str, dict]:
    body = api.get("/v1/games").json
    games = body if isinstance(body, list) else body["games"]
    return {g["id"]: g for g in games}


def _short_options(entry: dict) -> dict[str, Any]:
    """Options of a whole match of catalogue ``entry``: its fewest rounds
    (under ``--fast`` the game's ``short`` preset: :func:`match_options`)."""
    opts = {o["name"]: o for o in entry["options"]}
    out: dict[str, Any] = {}
    if "rounds" in opts:
        out["rounds"] = opts["rounds"].get("minimum") or 1
    return match_options(entry["id"], out)


def test_every_game_accepts_deck_option(api: Api):
    """api.md Create: every game accepts options.deck; games with several rounds
    also accept options.decks."""
    cat = _catalogue(api)
    for gid, entry in cat.items():
        names = {o["name"] for o in entry["options"]}
        assert "deck" in names, gid
        if "rounds" in names:
            assert "decks" in names, gid
        assert 2 <= entry["min_players"] <= entry["max_players"], gid


@pytest.mark.parametrize("game", GAMES)
def test_game_plays_through_contract(embedded_api: Api, game):
    api = embedded_api
    cat = _catalogue(api)
    assert game in cat, f"{game} is registered but not in the catalogue"
    entry = cat[game]
    rng = random.Random(game)
    counts = sorted({entry["min_players"], entry["max_players"]})
    for n in counts[:1] if conftest.FAST else counts:
        m = api.create(n, game=game, seed=rng.getrandbits(53), options=_short_options(entry))
        final = _play(api, m, rng, n)
        res = final["result"]
        assert res is not None and res["winners"] == res["ranking"][0], res
        assert sorted(s for g in res["ranking"] for s in g) == list(range(n))
        # events: the same log for everyone, values hidden from a viewer nulled
        admin_events = m.events(m.admin)
        for who, token in [("spectator", None)] + [(f"seat{s}", m.token(s)) for s in range(n)]:
            evs = m.events(token)
            assert len(evs) == len(admin_events), who
            redacted_from(evs, admin_events, f"{who}.events")
        rec = api.record(m.id)  # finished: anyone
        assert rec.status == 200, rec
        rec = rec.json
        assert len(rec["moves"]) == final["version"]
        assert comparable(replay_record(api, rec).admin_view()) == comparable(final)


def _play(api: Api, m: Match, rng: random.Random, n: int, max_moves: int = 4000) -> dict[str, Any]:
    prev = None
    for step in range(max_moves):
        admin = m.admin_view()
        if prev is not None:
            assert admin["version"] == prev + 1
        prev = admin["version"]
        check_views = step % 3 == 0 or admin["status"] == "finished"
        if check_views:
            redacted_from(comparable(m.spectator_view()), comparable(admin))
            for s in range(n):
                redacted_from(comparable(m.seat_view(s)), comparable(admin), f"seat{s}")
        if admin["status"] == "finished":
            assert admin["to_act"] == []
            return admin
        assert admin["to_act"], admin
        if check_views:
            for s in range(n):
                if s not in admin["to_act"]:
                    assert m.legal(s) == [], f"seat {s} is not to act but has legal moves"
        seat = rng.choice(admin["to_act"])
        legal = m.legal(seat)
        assert legal, f"seat {seat} is to act without a legal move"
        move = rng.choice(legal)
        r = api.move(m.id, m.token(seat), move, admin["version"])
        assert r.status == 200, (strip_label(move), r)
    raise AssertionError(f"{m.created['game']} did not finish in {max_moves} random moves")
