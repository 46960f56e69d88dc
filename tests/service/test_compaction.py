"""Compaction of finished matches (issue 11): every endpoint answers exactly
as before the match was compacted, on both stores, for every game.

A match is played to its end over HTTP (moves from a seeded random playout,
each with an ``Idempotency-Key``) with compaction switched off; every
response a client can get from the finished match is captured; the match is
compacted; the same requests must give the same statuses and bytes, from the
same app (warm caches) and from a new one (cold caches).
"""
from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest

from engine import REGISTRY
from service.domain.matches import Lodge
from service.domain.moves import MovePipeline
from service.http.context import EXTENSION
from service.store.keys import Keys
from tests import conftest
from tests.conftest import flask_api, make_app
from tests.http_helpers import Api, Match, assert_problem
from tests.playout import play_out

GAMES = [g.id for g in REGISTRY]


@pytest.fixture(autouse=True)
def _no_rate_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests send hundreds of requests a second from one client: they
    measure the store, not the rate limits (whose counters share the Redis)."""
    monkeypatch.setenv("RATE_LIMIT_ENABLED", "false")
#: Each game's ``short`` preset keeps the test quick; bench/memory.py measures the defaults.
OPTIONS: dict[str, dict[str, Any]] = {g.id: dict(g.declaration.presets["short"]) for g in REGISTRY}
#: seats of the played matches (``--fast``: fewer viewers to capture)
SEATS = 2 if conftest.FAST else 4


def play_to_end(api: Api, game: str, seed: int) -> tuple[Match, list[tuple[int, Mapping[str, Any], Any]]]:
    """Create a match of :data:`SEATS` seats and play a seeded random playout
    into it, each move with the key ``k<i>``; returns the match and (seat,
    move, response)."""
    engine = REGISTRY.get(game)
    assert engine is not None
    out = play_out(engine, SEATS, seed, OPTIONS[game])
    m = api.create(SEATS, game=game, seed=seed, options=OPTIONS[game])
    played = []
    for i, (seat, move) in enumerate(out.moves):
        r = api.move(m.id, m.token(seat), move, i, headers={"Idempotency-Key": f"k{i}"})
        assert r.status == 200, (i, move, r)
        played.append((seat, move, r))
    return m, played


def capture(api: Api, m: Match, played: list[tuple[int, Mapping[str, Any], Any]]) -> list[tuple[str, int, bytes]]:
    """Every kind of response of the finished match, as (request, status, body)."""
    final = len(played)
    tokens: list[tuple[str, str | None]] = [("spectator", None), ("admin", m.admin),
                                            *((f"seat{s}", m.token(s)) for s in range(m.n))]
    out: list[tuple[str, int, bytes]] = []

    def keep(name: str, r: Any) -> None:
        out.append((name, r.status, r.body))

    afters = sorted({-5, -1, 0, 1, 2, final // 2, final - 2, final - 1, final, final + 3})
    for who, token in tokens:
        keep(f"view {who}", api.view(m.id, token))
        keep(f"view 304 {who}", api.view(m.id, token, headers={"If-None-Match": f'"{final}"'}))
        keep(f"record {who}", api.record(m.id, token))
        for after in afters:
            keep(f"events {who} after {after}", api.events(m.id, token, after=after))
        keep(f"events {who} all", api.events(m.id, token))
        keep(f"long-poll {who}", api.events(m.id, token, after=final - 1, wait=0.2))
    for s in range(m.n):
        keep(f"legal seat{s}", api.legal(m.id, m.token(s)))
        keep(f"legal admin {s}", api.legal(m.id, m.admin, seat=s))
    seat, move, _ = played[-1]
    keep("move after the end", api.move(m.id, m.token(seat), move, final))
    keep("move after the end, no version", api.move(m.id, m.token(seat), move))
    for i in (0, final // 2, final - 1):
        seat, move, first = played[i]
        r = api.move(m.id, m.token(seat), move, i, headers={"Idempotency-Key": f"k{i}"})
        assert (r.status, r.body) == (200, first.body), f"retry of move {i} differs from its first answer"
        keep(f"retry k{i}", r)
        keep(f"retry k{i} without version", api.move(m.id, m.token(seat), move, headers={"Idempotency-Key": f"k{i}"}))
        keep(f"reused k{i}", api.move(m.id, m.token(seat), move, i + 1, headers={"Idempotency-Key": f"k{i}"}))
    return out


def match_keys(client: Any, match_id: str) -> set[str]:
    return {k.decode() for k in client.scan_iter(match=f"lodge:{{{match_id}}}:*")}


@pytest.mark.parametrize("game", GAMES)
def test_compacted_match_answers_exactly_as_before(store, game: str, monkeypatch: pytest.MonkeyPatch):
    app = make_app(store)
    api = flask_api(app)
    with monkeypatch.context() as patch:
        patch.setattr(MovePipeline, "_compact", lambda *args: None)
        m, played = play_to_end(api, game, seed=5)
    k = Keys(m.id)
    assert {k.moves, k.events, k.evidx} <= match_keys(store, m.id)
    before = capture(api, m, played)
    assert any(name == "reused k0" and status == 422 for name, status, _ in before)

    lodge: Lodge = app.extensions[EXTENSION]
    final = lodge.load(m.id)[1]
    assert lodge.store.compact(m.id, final.version, final.state)
    assert not lodge.store.compact(m.id, final.version, final.state)  # once only
    assert match_keys(store, m.id) == {k.meta, k.snap, k.idems, *(k.idem(f"seat{s}:k{i}")
                                                              for i, (s, _, _) in enumerate(played))}
    for label, other in (("warm", api), ("cold", flask_api(make_app(store)))):
        after = capture(other, m, played)
        assert [b[:2] for b in before] == [a[:2] for a in after], label
        for (name, _, body), (_, _, body_after) in zip(before, after):
            assert body == body_after, f"{label}: {name} differs after compaction"

    r = api.delete_match(m.id, m.admin)
    assert r.status == 204, r
    assert match_keys(store, m.id) == set()
    assert_problem(api.view(m.id), 404, "match_not_found")


def test_finishing_move_compacts_with_finished_ttl(store):
    """The move that ends a match compacts it at once; meta and snap then
    live FINISHED_TTL (here from the environment's default, 7 days)."""
    api = flask_api(make_app(store))
    m, played = play_to_end(api, "biberbande", seed=9)
    k = Keys(m.id)
    assert {k.meta, k.snap} <= match_keys(store, m.id)
    assert not match_keys(store, m.id) & {k.moves, k.events, k.evidx}
    assert store.hexists(k.snap, "z") and not store.hexists(k.snap, "s")
    for key in (k.meta, k.snap):
        assert 7 * 24 * 3600 - 60 < store.ttl(key) <= 7 * 24 * 3600
    seat, move, first = played[-1]
    r = api.move(m.id, m.token(seat), move, len(played) - 1, headers={"Idempotency-Key": f"k{len(played) - 1}"})
    assert (r.status, r.body) == (200, first.body)
    rec = api.record(m.id).json
    assert len(rec["moves"]) == len(played) and rec["result"] is not None


def test_waiter_sees_the_finishing_events(store):
    """A long-poll across the finishing move gets its events although the
    match is compacted right after it is stored."""
    import threading

    api = flask_api(make_app(store))
    engine = REGISTRY.get("biberbande")
    assert engine is not None
    out = play_out(engine, 4, 3, OPTIONS["biberbande"])
    m = api.create(4, game="biberbande", seed=3, options=OPTIONS["biberbande"])
    *head, (seat, move) = out.moves
    for i, (s, mv) in enumerate(head):
        assert api.move(m.id, m.token(s), mv, i).status == 200
    got: list[Any] = []
    waiter = threading.Thread(target=lambda: got.append(api.events(m.id, m.admin, after=len(head), wait=5)))
    waiter.start()
    r = api.move(m.id, m.token(seat), move, len(head))
    waiter.join(10)
    assert r.status == 200 and got and got[0].status == 200, got
    assert got[0].json["events"] == api.events(m.id, m.admin, after=len(head)).json["events"] != []
    assert [e["version"] for e in got[0].json["events"]] == [len(head) + 1] * len(got[0].json["events"])


def test_idempotency_record_is_small(store):
    """An idempotency record takes at most 0.5 KB (MEMORY USAGE on Redis),
    even with the longest key the API accepts."""
    api = flask_api(make_app(store))
    m = api.create(4, game="thirteen-beavers", seed=4)
    legal = api.legal(m.id, m.token(0)).json["moves"]
    key = "x" * 255
    r = api.move(m.id, m.token(0), random.Random(1).choice(legal), 0, headers={"Idempotency-Key": key})
    assert r.status == 200, r
    record = Keys(m.id).idem(f"seat0:{key}")
    assert store.exists(record)
    if hasattr(store, "memory_usage") and type(store).__module__.startswith("redis"):
        assert store.memory_usage(record, samples=0) <= 512
    assert len(store.get(record)) <= 40


@pytest.mark.parametrize("game", GAMES)
def test_finished_match_at_most_16_kb(redis_server: str, game: str):
    """Issue 11: a finished 4-player match (default options) takes at most
    16 KB in Redis (MEMORY USAGE over its keys; idempotency records apart)."""
    import redis

    client = redis.Redis.from_url(redis_server)
    engine = REGISTRY.get(game)
    assert engine is not None
    api = flask_api(make_app(client))
    out = play_out(engine, 4, 2)
    m = api.create(4, game=game, seed=2)
    for i, (seat, move) in enumerate(out.moves):
        assert api.move(m.id, m.token(seat), move, i, headers={"Idempotency-Key": f"k{i}"}).status == 200
    sizes = {k: client.memory_usage(k, samples=0) for k in client.scan_iter(match=f"lodge:{{{m.id}}}:*")}
    assert None not in sizes.values(), sizes  # every key listed still exists
    own = sum(v or 0 for k, v in sizes.items() if b":idem" not in k)
    assert own <= 16 * 1024, (game, len(out.moves), sizes)
    assert max(v or 0 for k, v in sizes.items() if b":idem:" in k) <= 512
    client.close()
