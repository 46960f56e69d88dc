"""GET /record (who may read it, its shape, replay) and DELETE.  Both stores."""
from __future__ import annotations

import random

from tests.http_helpers import W1_DECK, W1_MOVES, Api, Match, assert_problem, comparable, play_random, strip_label


def replay_record(api: Api, rec: dict) -> Match:
    """Create a fresh match from a record and post its moves as the admin."""
    fresh = api.create(rec["players"], game=rec["game"], seed=rec["seed"], options=rec["options"])
    for entry in rec["moves"]:
        r = api.move(fresh.id, fresh.admin, entry["move"], entry["version"] - 1, seat=entry["seat"])
        assert r.status == 200, (entry, r)
        assert r.json["version"] == entry["version"]
    return fresh


def test_record_admin_any_time(api: Api, w1: Match):
    r = api.record(w1.id, w1.admin)
    assert r.status == 200, r
    rec = r.json
    for key in ("game", "players", "seed", "options", "moves", "result"):
        assert key in rec, key
    assert rec["game"] == "biberbande" and rec["seed"] == 11 and rec["moves"] == [] and rec["result"] is None
    names = [p if isinstance(p, str) else p.get("name") for p in rec["players"]]
    assert names == ["ana", "bo"]
    w1.play(0, {"type": "take_discard", "slot": 3})
    w1.play(1, {"type": "draw"})
    rec = api.record(w1.id, w1.admin).json
    assert rec["moves"] == [{"version": 1, "seat": 0, "move": {"type": "take_discard", "slot": 3}},
                            {"version": 2, "seat": 1, "move": {"type": "draw"}}]


def test_record_forbidden_before_end(api: Api, w1: Match):
    """api.md: the record of an unfinished match reveals hidden cards (deck
    option, draws): admin only."""
    w1.play(0, {"type": "draw"})
    assert_problem(api.record(w1.id), 401, "unauthenticated")
    assert_problem(api.record(w1.id, "bogus-token"), 401, "unauthenticated")
    for seat in (0, 1):
        r = api.record(w1.id, w1.token(seat))
        body = assert_problem(r, 403, "forbidden")
        assert "moves" not in body and "options" not in body, body  # nothing of the record in the error
    other = api.create(2, seed=1)
    assert_problem(api.record(w1.id, other.admin), 403, "forbidden")


def test_record_everyone_after_end(api: Api, w1: Match):
    for seat, mv in W1_MOVES:
        w1.play(seat, mv)
    for token in (None, w1.token(0), w1.token(1), w1.admin):
        r = api.record(w1.id, token)
        assert r.status == 200, r
        rec = r.json
        assert [(e["version"], e["seat"], e["move"]) for e in rec["moves"]] == \
            [(i + 1, s, m) for i, (s, m) in enumerate(W1_MOVES)]
        assert rec["result"] == {"scores": [12, 16], "ranking": [[0], [1]], "winners": [0]}
        assert rec["options"]["deck"] == W1_DECK


def test_record_unknown_match_404(api: Api):
    assert_problem(api.record("no-such-match", "x"), 404, "match_not_found")


def test_record_replay_identical_final_state(api: Api):
    """api.md Create: same game, players, seed, options and moves give identical
    states; a record replayed into a fresh match reproduces the final view."""
    m = api.create(3, seed=2024, options={"rounds": 2, "turn_limit": 3})
    final = play_random(m, random.Random(5))
    rec = api.record(m.id).json  # finished: anyone
    assert len(rec["moves"]) == final["version"]
    assert [e["version"] for e in rec["moves"]] == list(range(1, final["version"] + 1))
    assert [(e["seat"], strip_label(e["move"])) for e in rec["moves"]] == m.log
    fresh = replay_record(api, rec)
    assert comparable(fresh.admin_view()) == comparable(final)
    assert api.record(fresh.id).json["result"] == rec["result"]


def test_record_replay_mid_match(api: Api):
    m = api.create(2, seed=77, options={"rounds": 1})
    rng = random.Random(1)
    for _ in range(7):
        v = m.admin_view()
        if not v["to_act"]:
            break
        seat = v["to_act"][0]
        mv = rng.choice(m.legal(seat))
        m.play(seat, mv)
    rec = api.record(m.id, m.admin).json
    fresh = replay_record(api, rec)
    assert comparable(fresh.admin_view()) == comparable(m.admin_view())
    assert fresh.events(fresh.admin) == m.events(m.admin)


# --------------------------------------------------------------------------
# DELETE.
# --------------------------------------------------------------------------
def test_delete(api: Api, w1: Match):
    assert_problem(api.delete_match(w1.id), 401, "unauthenticated")
    assert_problem(api.delete_match(w1.id, "bogus"), 401, "unauthenticated")
    assert_problem(api.delete_match(w1.id, w1.token(0)), 403, "forbidden")
    other = api.create(2, seed=1)
    assert_problem(api.delete_match(w1.id, other.admin), 403, "forbidden")
    assert w1.admin_view()["version"] == 0  # still there
    r = api.delete_match(w1.id, w1.admin)
    assert r.status == 204, r
    assert r.body == b""
    assert_problem(api.view(w1.id), 404, "match_not_found")
    assert_problem(api.view(w1.id, w1.admin), 404, "match_not_found")
    assert_problem(api.move(w1.id, w1.token(0), {"type": "draw"}), 404, "match_not_found")
    assert_problem(api.events(w1.id), 404, "match_not_found")
    assert_problem(api.legal(w1.id, w1.token(0)), 404, "match_not_found")
    assert_problem(api.record(w1.id, w1.admin), 404, "match_not_found")
    assert_problem(api.delete_match(w1.id, w1.admin), 404, "match_not_found")
    assert other.admin_view()["version"] == 0  # the other match is untouched


def test_delete_on_another_worker_is_404_on_every_read(store):
    """Two app instances on one store (two workers): after one deletes a
    match, every read on the other is 404 although its cache still holds the
    match; the stream too (it answered 200 with ``end`` ``deleted``)."""
    from tests.conftest import flask_api, make_app

    a, b = flask_api(make_app(store)), flask_api(make_app(store))
    m = a.create(2, seed=3)
    seen = Match(b, m.created)
    assert seen.admin_view()["version"] == 0 and seen.events(m.admin)  # b caches the match
    assert a.delete_match(m.id, m.admin).status == 204
    path = f"/v1/matches/{m.id}"
    for token in (None, m.admin, m.token(0)):
        assert_problem(b.get(path + "/stream", token=token), 404, "match_not_found")
        assert_problem(b.get(path + "/stream", token=token, headers={"Accept": "application/x-ndjson"}),
                       404, "match_not_found")
        assert_problem(b.view(m.id, token), 404, "match_not_found")
        assert_problem(b.events(m.id, token), 404, "match_not_found")
    assert_problem(b.legal(m.id, m.token(0)), 404, "match_not_found")
    assert_problem(b.record(m.id, m.admin), 404, "match_not_found")


def test_delete_removes_every_key(store, api: Api):
    """Storage: nothing of a deleted match stays in Redis (incl. idempotency records)."""
    m = api.create(2, seed=3)
    api.move(m.id, m.token(0), {"type": "draw"}, headers={"Idempotency-Key": "z"})
    assert any(m.id in k.decode() for k in store.keys("*"))
    assert api.delete_match(m.id, m.admin).status == 204
    left = [k for k in store.keys("*") if m.id in k.decode()]
    assert left == [], left


def test_keys_share_hash_tag_and_expire(store, api: Api):
    """Storage: keys of a match are lodge:{<id>}:… and carry a TTL (MATCH_TTL;
    idempotency records and their index IDEMPOTENCY_TTL)."""
    m = api.create(2, seed=3)
    api.move(m.id, m.token(0), {"type": "draw"}, headers={"Idempotency-Key": "z"})
    keys = [k.decode() for k in store.keys("*") if m.id in k.decode()]
    assert keys
    for k in keys:
        assert k.startswith(f"lodge:{{{m.id}}}:"), k
        ttl = 24 * 3600 if ":idem" in k else 7 * 24 * 3600  # IDEMPOTENCY_TTL 24 h, MATCH_TTL 7 days
        assert ttl - 60 < store.ttl(k) <= ttl, (k, store.ttl(k))


def test_tokens_stored_hashed(store, api: Api):
    """Storage: tokens are stored hashed — no raw token in any value."""
    m = api.create(3, seed=3)
    raw = [m.admin] + [m.token(s) for s in range(3)]
    for k in store.keys("*"):
        t = store.type(k).decode()
        if t == "string":
            values = [store.get(k)]
        elif t == "hash":
            values = list(store.hgetall(k).values())
        elif t == "list":
            values = store.lrange(k, 0, -1)
        elif t == "set":
            values = list(store.smembers(k))
        else:
            values = []
        blob = b"".join(v for v in values if v)
        for tok in raw:
            assert tok.encode() not in blob, f"raw token stored in {k!r}"


def test_match_ttl_expires_after_inactivity(store):
    """Storage: a match expires MATCH_TTL seconds after its last write; every
    write (a move) restarts the clock for every key of the match.  Time passes
    the way Redis sees it: the test shortens the keys' remaining time to live
    (the match aged) instead of waiting for it to run down."""
    import time

    from service.app import create_app
    from service.ops.config import Settings
    from tests.conftest import flask_api

    ttl_ms = 60_000
    app = create_app(redis_client=store, settings=Settings.from_env({"MATCH_TTL": str(ttl_ms // 1000)}))
    api = flask_api(app)
    m = api.create(2, seed=1)

    def ttls() -> dict[bytes, int]:
        """Every key of the match and its time to live in ms (-1: none)."""
        return {k: store.pttl(k) for k in store.keys("*") if m.id in k.decode()}

    def age(left_ms: int) -> None:
        for key in ttls():
            store.pexpire(key, left_ms)

    created = ttls()
    assert created and all(0 < t <= ttl_ms for t in created.values()), f"every key must expire: {created}"
    age(ttl_ms // 2)
    assert api.move(m.id, m.token(0), {"type": "draw"}, 0, headers={"Idempotency-Key": "k"}).status == 200
    moved = ttls()
    assert moved.keys() >= created.keys()
    assert all(ttl_ms // 2 < t <= ttl_ms for t in moved.values()), f"a move must restart every key's clock: {moved}"
    assert api.view(m.id).status == 200
    assert api.record(m.id, m.admin).json["moves"], "the move log must not expire before the match"
    assert len(m.events(m.admin)) > 3
    age(1)
    time.sleep(0.01)
    assert_problem(api.view(m.id), 404, "match_not_found")
    assert ttls() == {}


def test_replay_is_byte_identical(api: Api):
    """api.md Create: the same game, players, seed, options and moves give
    byte-identical states (here: the admin view's bytes, match id aside)."""
    m = api.create(["a", "b", "c"], seed=4711, options={"rounds": 1, "turn_limit": 3})
    play_random(m, random.Random(8))
    fresh = replay_record(api, api.record(m.id).json)
    for token_of in (lambda x: x.admin, lambda x: x.token(1), lambda x: None):
        b1 = api.view(m.id, token_of(m)).body
        b2 = api.view(fresh.id, token_of(fresh)).body.replace(fresh.id.encode(), m.id.encode())
        assert b1 == b2
