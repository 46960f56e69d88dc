"""Live tests: gunicorn (deploy/gunicorn.conf.py, 2 workers) against a real
redis-server, driven over real HTTP with only the contract."""
from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest

from engine import REGISTRY
from engine.core import Game
from tests.conftest import requests_api
from tests.http_helpers import (
    W1_OPTIONS,
    Api,
    Match,
    assert_problem,
    comparable,
    events_of,
    long_poll_across,
    play_random,
    race,
    replay_record,
    strip_label,
)

pytestmark = pytest.mark.live


def _check_finished(api: Api, m: Match, final: dict) -> None:
    assert final["status"] == "finished" and final["phase"] == "finished" and final["to_act"] == []
    res = final["result"]
    assert res["scores"] == final["scores"]
    history = final["board"]["history"]
    assert len(history) == final["rounds"]
    totals = [sum(h["points"][s] for h in history) for s in range(m.n)]
    assert totals == final["scores"], "BB-6.3 scores are the sum of the round points"
    for h in history:
        assert all(0 <= p <= 36 for p in h["points"])  # BB-10.2
    best = min(final["scores"])
    assert res["winners"] == [s for s in range(m.n) if final["scores"][s] == best]  # BB-6.5
    assert [s for g in res["ranking"] for s in g] == sorted(range(m.n), key=lambda s: (final["scores"][s], s))
    # anyone may read the record of a finished match
    rec = api.record(m.id)
    assert rec.status == 200, rec
    assert len(rec.json["moves"]) == final["version"]
    assert_problem(api.move(m.id, m.token(0), {"type": "draw"}), 409, "match_finished")


@pytest.mark.parametrize("n,options,knock_bias", [
    (2, {}, None), (4, {"rounds": 2}, None), (6, {"rounds": 1, "turn_limit": 5}, None),
    (2, {"rounds": 2, "turn_limit": 25}, 0.01), (4, {"rounds": 1, "turn_limit": 12}, 0.02),
], ids=["2p-defaults", "4p", "6p", "2p-long", "4p-long"])
def test_live_bot_plays_whole_match(live_api: Api, n, options, knock_bias):
    """A random bot using only the contract plays whole matches; with knocks
    rare the rounds run long (reshuffles BB-3.6, turn limit BB-4.9)."""
    m = live_api.create(n, seed=random.Random(n).getrandbits(53), options=options or None)
    final = play_random(m, random.Random(1000 + n), knock_bias=knock_bias)
    _check_finished(live_api, m, final)
    if knock_bias is not None:
        assert final["version"] > 80, final["version"]
        reasons = [h["reason"] for h in final["board"]["history"]]
        assert set(reasons) <= {"knock", "turn_limit"}, reasons


#: Options of a live match by (game, players) where a short match should
#: also reach a variant; any other registered game and player count plays
#: with the fewest rounds the game allows.
LIVE_VARIANTS: dict[tuple[str, int], dict[str, Any]] = {
    ("biberclan", 6): {"rounds": 1, "with_biberbande": True},  # the 120-card deck (BC-1.3)
    ("mein-lieber-biber", 2): {"rounds": 2},                     # a second round's deal
    ("thirteen-beavers", 2): {"board": "short"},                 # the short board reaches Paradise
    ("thirteen-beavers", 6): {"max_turns": 150},                 # the turn limit can end it
}


def _live_options(game: Game, n: int) -> dict[str, Any]:
    if (game.id, n) in LIVE_VARIANTS:
        return LIVE_VARIANTS[game.id, n]
    rounds = next((o for o in game.options if o.name == "rounds"), None)
    return {"rounds": rounds.minimum or 1} if rounds else {}


LIVE_GAMES = [(g.id, n, _live_options(g, n)) for g in REGISTRY for n in sorted({g.min_players, g.max_players})]


@pytest.mark.parametrize("game,n,options", LIVE_GAMES)
def test_live_bot_plays_every_game(live_api: Api, game, n, options):
    """Every registered game over HTTP on a real Redis with only the
    contract, fewest and most players: a random bot plays whole matches; the result
    places every seat once, anyone reads the finished match's record, and the
    record replays into the identical final state."""
    m = live_api.create(n, game=game, seed=random.Random(game).getrandbits(53), options=options)
    final = play_random(m, random.Random(n))
    result = final["result"]
    assert final["status"] == "finished" and final["to_act"] == []
    assert result["winners"] == result["ranking"][0]
    assert sorted(s for group in result["ranking"] for s in group) == list(range(n))
    record = live_api.record(m.id)
    assert record.status == 200, record
    assert len(record.json["moves"]) == final["version"]
    assert comparable(replay_record(live_api, record.json).admin_view()) == comparable(final)
    assert_problem(live_api.move(m.id, m.token(0), {"type": "pass"}), 409, "match_finished")


def test_live_racing_clients_one_wins(live_server: str, live_api: Api):
    """Storage: one atomic compare-and-set per move: N clients posting different
    legal moves on the same version → exactly one 200, the rest 409
    version_conflict; version +1; one log entry."""
    for attempt in range(5):
        m = live_api.create(["a", "b"], seed=attempt, options=W1_OPTIONS)
        legal = m.legal(0)
        assert len(legal) == 5
        moves = (legal * 2)[:8]
        clients = [requests_api(live_server) for _ in moves]
        for c in clients:  # warm the connections so the race is on the move, not on connect
            assert c.get("/healthz").status == 200
        results = race(clients, m.id, m.token(0), moves, 0)
        statuses = sorted(r.status for r in results)
        assert statuses.count(200) == 1, [(r.status, r.body[:100]) for r in results]
        for r in results:
            if r.status != 200:
                body = assert_problem(r, 409, "version_conflict")
        winner = next(r for r in results if r.status == 200)
        assert winner.json["version"] == 1
        assert m.admin_view()["version"] == 1
        rec = live_api.record(m.id, m.admin).json
        assert len(rec["moves"]) == 1 and rec["moves"][0]["version"] == 1
        won_move = moves[results.index(winner)]
        assert rec["moves"][0]["move"] == strip_label(won_move)
        assert body  # the losers' problem bodies were checked


def test_live_racing_without_version_never_loses_updates(live_server: str, live_api: Api):
    """Moves without a version from racing clients: each accepted move is
    applied to the state it was checked against (no lost update): the log has
    exactly as many entries as 200s, versions 1..k, and replays to the same state."""
    m = live_api.create(["a", "b"], seed=3, options=W1_OPTIONS)
    clients = [requests_api(live_server) for _ in range(6)]
    barrier = threading.Barrier(6)
    results: list = [None] * 6

    def post(i: int) -> None:
        barrier.wait()
        results[i] = clients[i].move(m.id, m.token(0), {"type": "draw"})

    threads = [threading.Thread(target=post, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    ok = [r for r in results if r.status == 200]
    assert len(ok) == 1, [(r.status, r.body[:120]) for r in results]  # after one draw seat 0 must resolve it
    for r in results:
        if r.status != 200:
            assert r.status == 409 and r.json["code"] in ("version_conflict", "not_your_turn") or \
                (r.status == 422 and r.json["code"] == "illegal_move"), r
    assert m.admin_view()["version"] == 1
    assert len(live_api.record(m.id, m.admin).json["moves"]) == 1


def test_live_idempotent_retries(live_server: str, live_api: Api):
    m = live_api.create(["a", "b"], seed=3, options=W1_OPTIONS)
    clients = [requests_api(live_server) for _ in range(6)]
    barrier = threading.Barrier(6)
    results: list = [None] * 6
    hdr = {"Idempotency-Key": "live-retry-1"}

    def post(i: int) -> None:
        barrier.wait()
        results[i] = clients[i].move(m.id, m.token(0), {"type": "take_discard", "slot": 2}, headers=hdr)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(r.status == 200 for r in results), [(r.status, r.body[:120]) for r in results]
    assert all(r.json == results[0].json for r in results)
    assert m.admin_view()["version"] == 1
    # a later sequential retry still gets the first response
    again = live_api.move(m.id, m.token(0), {"type": "take_discard", "slot": 2}, headers=hdr)
    assert (again.status, again.json) == (200, results[0].json)
    assert len(live_api.record(m.id, m.admin).json["moves"]) == 1


def test_live_long_poll(live_server: str, live_api: Api):
    m = live_api.create(["a", "b"], seed=3, options=W1_OPTIONS)
    waiter = requests_api(live_server)

    def move() -> None:
        assert live_api.move(m.id, m.token(0), {"type": "draw"}, 0).status == 200

    started = time.monotonic()  # the server's waiters cannot be seen from here: give the poll half a second
    polled, elapsed = long_poll_across(waiter, m.id, m.token(1), 0, move, lambda: time.monotonic() - started > 0.5)
    assert polled.status == 200, polled
    evs = events_of(polled.json)
    assert evs and {e["version"] for e in evs} == {1}
    assert next(e for e in evs if e["type"] == "drew")["card"] is None  # BB-5.7 for seat 1
    assert elapsed < 10, elapsed
    # nothing new: returns empty after the wait
    t0 = time.monotonic()
    r = waiter.events(m.id, None, after=1, wait=1)
    assert r.status == 200 and events_of(r.json) == []
    assert 0.8 <= time.monotonic() - t0 < 6


def test_live_record_replay_identical(live_api: Api):
    m = live_api.create(3, seed=31337, options={"rounds": 2, "turn_limit": 4})
    final = play_random(m, random.Random(7))
    rec = live_api.record(m.id).json
    fresh = live_api.create(rec["players"], game=rec["game"], seed=rec["seed"], options=rec["options"])
    for e in rec["moves"]:
        r = live_api.move(fresh.id, fresh.admin, e["move"], e["version"] - 1, seat=e["seat"])
        assert r.status == 200, (e, r)
    assert comparable(fresh.admin_view()) == comparable(final)
    assert fresh.events(fresh.admin) == m.events(m.admin)


def test_live_ops(live_api: Api):
    assert live_api.get("/healthz").status == 200
    assert live_api.get("/readyz").status == 200
    r = live_api.get("/metrics")
    assert r.status == 200 and b"# TYPE" in r.body
    assert live_api.get("/openapi.json").json["openapi"].startswith("3.")
    assert_problem(live_api.view("no-such-match"), 404, "match_not_found")


def test_live_chunked_body_over_limit_is_413(live_server: str):
    """api.md: a body over 64 KiB is 413 payload_too_large — also when the
    client streams it (Transfer-Encoding: chunked, no Content-Length)."""
    import requests

    def body():
        yield b'{"game": "biberbande", "players": 2, "pad": "'
        for _ in range(80):
            yield b"a" * 1024
        yield b'"}'

    r = requests.post(live_server + "/v1/matches", data=body(), headers={"Content-Type": "application/json"},
                      timeout=30)
    assert r.status_code == 413, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["code"] == "payload_too_large"


def test_live_chunked_small_body_is_read(live_server: str):
    import requests

    def body():
        yield b'{"game": "biberbande", '
        yield b'"players": 2, "seed": 5}'

    r = requests.post(live_server + "/v1/matches", data=body(), headers={"Content-Type": "application/json"},
                      timeout=30)
    assert r.status_code == 201, (r.status_code, r.text[:300])


def test_live_read_your_writes_across_workers(live_server: str, live_api: Api):
    """Per-worker caches never serve a stale view: after a 200, a GET on any
    new connection (either worker) shows the new version; after DELETE every
    worker answers 404."""
    import requests

    m = live_api.create(["a", "b"], seed=8, options={"rounds": 1})
    rng = random.Random(3)
    for _ in range(15):
        v = m.admin_view()
        if v["status"] == "finished":
            break
        seat = v["to_act"][0]
        r = live_api.move(m.id, m.token(seat), rng.choice(m.legal(seat)), v["version"])
        assert r.status == 200, r
        for _ in range(4):  # fresh connections spread over the workers
            got = requests.get(f"{live_server}/v1/matches/{m.id}",
                               headers={"Authorization": f"Bearer {m.admin}", "Connection": "close"}, timeout=10)
            assert got.json()["version"] == r.json["version"]
            lm = requests.get(f"{live_server}/v1/matches/{m.id}/legal-moves", params={"seat": seat},
                              headers={"Authorization": f"Bearer {m.admin}", "Connection": "close"}, timeout=10)
            assert lm.json()["version"] == r.json["version"]
    assert live_api.delete_match(m.id, m.admin).status == 204
    for _ in range(6):
        h = {"Authorization": f"Bearer {m.token(0)}", "Connection": "close"}
        assert requests.get(f"{live_server}/v1/matches/{m.id}", headers=h, timeout=10).status_code == 404
        assert requests.post(f"{live_server}/v1/matches/{m.id}/moves", json={"move": {"type": "draw"}}, headers=h,
                             timeout=10).status_code == 404


def test_live_store_down_503(tmp_path):
    """A gunicorn deployment whose redis-server dies: 503 store_unavailable with
    Retry-After on create, view and move (never a 500), /readyz 503, /healthz
    200; when redis is back, the service recovers without a restart."""
    from tests.conftest import start_gunicorn, start_redis, stop_process

    rproc, url = start_redis(tmp_path)
    g, base = None, ""
    try:
        g, base = start_gunicorn(tmp_path, url, workers=1, extra_env={"REDIS_TIMEOUT": "2"})
        api = requests_api(base)
        m = api.create(2, seed=1)
        stop_process(rproc)
        for r in (api.create_raw({"game": "biberbande", "players": 2}), api.view(m.id, m.token(0)),
                  api.move(m.id, m.token(0), {"type": "draw"}, 0), api.events(m.id, after=0, wait=1)):
            assert r.status == 503, r
            assert_problem(r, 503, "store_unavailable")
            assert r.header("retry-after") and r.header("retry-after").isdigit(), r.headers
        assert api.get("/readyz").status == 503
        assert api.get("/healthz").status == 200
        port_r = int(url.rsplit(":", 1)[1].split("/")[0])
        rproc, url = start_redis(tmp_path, port=port_r)
        deadline = time.monotonic() + 10
        while api.get("/readyz").status != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert api.get("/readyz").status == 200
        m2 = api.create(2, seed=2)
        assert api.move(m2.id, m2.token(0), {"type": "draw"}, 0).status == 200
    finally:
        if g is not None:
            stop_process(g, timeout=20)
        stop_process(rproc)


def test_live_embedded_store_deployment(tmp_path):
    """`make run` without REDIS_URL: gunicorn's master serves one embedded store
    to all workers.  Racing clients still get exactly one 200 (the
    compare-and-set is atomic there too), matches are visible from every
    worker, and a whole match plays out."""
    import requests

    from tests.conftest import start_gunicorn, stop_process

    g, base = start_gunicorn(tmp_path, None, workers=2)
    try:
        api = requests_api(base)
        for attempt in range(4):
            m = api.create(["a", "b"], seed=attempt, options=W1_OPTIONS)
            moves = (m.legal(0) * 2)[:8]
            clients = [requests_api(base) for _ in moves]
            for c in clients:
                c.get("/healthz")
            results = race(clients, m.id, m.token(0), moves, 0)
            assert [r.status for r in results].count(200) == 1, [(r.status, r.body[:80]) for r in results]
            assert len(api.record(m.id, m.admin).json["moves"]) == 1
            for _ in range(4):  # every worker sees the match
                got = requests.get(f"{base}/v1/matches/{m.id}", headers={"Connection": "close"}, timeout=10)
                assert got.status_code == 200 and got.json()["version"] == 1
        m = api.create(3, seed=99, options={"rounds": 1})
        final = play_random(m, random.Random(2))
        assert final["status"] == "finished"
    finally:
        stop_process(g, timeout=20)


def test_live_413_keeps_http_framing(live_server: str):
    """A 200 KiB body is refused with 413 payload_too_large over a real socket,
    and the connection stays coherent (RFC 9112 §9.6): either the server says
    `Connection: close`, or the connection really is reusable — a client that
    believes a `keep-alive` must not have its next request dropped."""
    import socket
    from urllib.parse import urlsplit

    host, port = urlsplit(live_server).hostname, urlsplit(live_server).port
    body = b'{"game": "biberbande", "players": 2, "pad": "' + b"a" * (200 * 1024) + b'"}'
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(b"POST /v1/matches HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body))
        try:
            sock.sendall(body)
        except OSError:
            pass  # the server may stop reading early; the response still matters
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(4096)
            assert chunk, f"connection closed without a response: {head!r}"
            head += chunk
        status_line, _, rest = head.partition(b"\r\n")
        assert b" 413 " in status_line, head[:300]
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (ln.partition(b":") for ln in rest.split(b"\r\n\r\n")[0].split(b"\r\n"))}
        assert headers.get(b"content-type", b"").startswith(b"application/problem+json")
        if headers.get(b"connection", b"").lower() == b"close":
            return
        # keep-alive announced: the next request on this connection must be answered
        length = int(headers[b"content-length"])
        data = head.split(b"\r\n\r\n", 1)[1]
        while len(data) < length:
            data += sock.recv(4096)
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            answer = sock.recv(4096)
        except OSError as exc:
            answer = repr(exc).encode()
        assert answer.startswith(b"HTTP/1.1 200"), \
            f"413 said keep-alive but the next request on the connection got {answer[:80]!r}"


def test_live_many_long_polls_wake_together(redis_server: str, tmp_path):
    """Twenty clients long-poll a match on the standard deployment (2 workers ×
    64 threads by deploy/gunicorn.conf.py's default): one
    move wakes all of them early, and the move is not held up by the waiters.
    Three rounds on a freshly started server (where the accept race most often
    hands every connection to one worker)."""
    from tests.conftest import start_gunicorn, stop_process

    g, base = start_gunicorn(tmp_path, redis_server.rsplit("/", 1)[0] + "/2", workers=2)
    try:
        api = requests_api(base)
        for rnd in range(3):
            m = api.create(["a", "b"], seed=3, options=W1_OPTIONS)
            n = 20
            waiters = [requests_api(base) for _ in range(n)]
            results: list = [None] * n

            def poll(i: int) -> None:
                t0 = time.monotonic()
                r = waiters[i].events(m.id, m.token(i % 2), after=0, wait=5)  # noqa: B023 (joined this round)
                results[i] = (r, time.monotonic() - t0)  # noqa: B023

            threads = [threading.Thread(target=poll, args=(i,)) for i in range(n)]
            for t in threads:
                t.start()
            time.sleep(0.8)
            t0 = time.monotonic()
            r = api.move(m.id, m.token(0), {"type": "draw"}, 0)
            move_time = time.monotonic() - t0
            assert r.status == 200, r
            for t in threads:
                t.join(30)
            assert move_time < 2, f"round {rnd}: the move waited {move_time:.1f}s behind {n} long-polls"
            for i, (resp, elapsed) in enumerate(results):
                assert resp.status == 200, resp
                evs = events_of(resp.json)
                assert evs and evs[0]["version"] == 1, (rnd, i, evs)
                drew = next(e for e in evs if e["type"] == "drew")
                assert drew["card"] == ("6" if i % 2 == 0 else None)  # BB-5.7 per waiter
                assert elapsed < 3, f"round {rnd}: waiter {i} returned after {elapsed:.1f}s"
    finally:
        stop_process(g, timeout=20)
