"""Streams and long-polls under gunicorn (gevent workers) on a real Redis:
a move through one instance wakes a stream and a long-poll held by another,
a stream on one instance after a delete through another is 404,
the query-string token never reaches the access log, and SIGTERM ends open
streams at once while a long-poll still gets its answer."""
from __future__ import annotations

import os
import runpy
import signal
import threading
import time
from pathlib import Path
from typing import Any, cast

import pytest
import requests

from devtools.servers import GUNICORN_CONF, stop_process
from service.http.schemas import MAX_WAIT
from tests.conftest import requests_api, start_gunicorn
from tests.http_helpers import W1_MOVES, W1_OPTIONS
from tests.stream_helpers import messages, sse_frames

pytestmark = pytest.mark.live

#: The safety re-read is far away: whatever arrives fast came by notification.
ENV = {"NOTIFY_SAFETY": "120", "STREAM_KEEPALIVE": "0.5"}


@pytest.fixture
def stream_redis(redis_server: str) -> str:
    """Database 4 of the test redis (the API tests flush database 0)."""
    return redis_server.rsplit("/", 1)[0] + "/4"


def _stream(base: str, match_id: str, **params: Any) -> requests.Response:
    r = requests.get(f"{base}/v1/matches/{match_id}/stream", params=params, stream=True, timeout=30)
    assert r.status_code == 200, r.text
    return r


def test_move_on_one_instance_wakes_stream_and_long_poll_on_another(stream_redis: str, tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, base_a = start_gunicorn(tmp_path / "a", stream_redis, 2, ENV)
    b, base_b = start_gunicorn(tmp_path / "b", stream_redis, 2, ENV)
    try:
        m = requests_api(base_a).create(["ana", "bo"], seed=11, options=W1_OPTIONS)
        stream = _stream(base_b, m.id, after=0, token=m.token(1))
        frames = sse_frames(stream.iter_content(chunk_size=None))
        assert next(frames).kind == "keepalive"  # open and subscribed soon after
        polled: dict[str, Any] = {}

        def poll() -> None:
            r = requests.get(f"{base_b}/v1/matches/{m.id}/events", params={"after": 0, "wait": 30}, timeout=60)
            polled["at"], polled["r"] = time.monotonic(), r

        poller = threading.Thread(target=poll)
        poller.start()
        time.sleep(1.0)
        moved = time.monotonic()
        assert m.play(*W1_MOVES[0]).status == 200  # through instance A
        got = messages(frames, 1)[0]
        streamed = time.monotonic()
        poller.join(40)
        stream.close()
        assert got.data["version"] == 1 and got.id == "1"
        assert streamed - moved < 2.0, f"stream woken after {streamed - moved:.2f} s"
        assert polled["r"].status_code == 200 and polled["r"].json()["version"] == 1
        assert polled["at"] - moved < 2.0, f"long-poll woken after {polled['at'] - moved:.2f} s"
    finally:
        stop_process(a, timeout=20)
        stop_process(b, timeout=20)


def test_stream_after_a_delete_through_another_instance_is_404(stream_redis: str, tmp_path: Path):
    """Instance B (one worker) has the match cached; A deletes it: B's
    stream answers 404 like its view and /events (not 200 with ``end``)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, base_a = start_gunicorn(tmp_path / "a", stream_redis, 1, ENV)
    b, base_b = start_gunicorn(tmp_path / "b", stream_redis, 1, ENV)
    try:
        on_a, on_b = requests_api(base_a), requests_api(base_b)
        for _ in range(3):
            m = on_a.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
            assert on_b.view(m.id).status == 200 and on_b.events(m.id).status == 200  # B caches it
            assert on_a.delete_match(m.id, m.admin).status == 204
            for path in ("/stream", "/events", ""):
                r = requests.get(f"{base_b}/v1/matches/{m.id}{path}", timeout=10)
                assert r.status_code == 404 and r.json()["code"] == "match_not_found", (path, r.text)
    finally:
        stop_process(a, timeout=20)
        stop_process(b, timeout=20)


def test_query_token_never_in_the_access_log(stream_redis: str, tmp_path: Path):
    log = tmp_path / "access.log"
    proc, base = start_gunicorn(tmp_path, stream_redis, 1, {**ENV, "ACCESS_LOG": str(log)})
    try:
        m = requests_api(base).create(["ana", "bo"], seed=11, options=W1_OPTIONS)
        token = m.token(0)
        r = _stream(base, m.id, token=token, after=-1, state="true")
        first = messages(sse_frames(r.iter_content(chunk_size=None)), 1)[0]
        r.close()
        assert first.data["version"] == 0 and first.data["state"]["viewer"] == {"role": "seat", "seat": 0}
        bad = requests.get(f"{base}/v1/matches/{m.id}/stream", params={"token": token + "x"}, timeout=10)
        assert bad.status_code == 401
    finally:
        stop_process(proc, timeout=20)  # flushes and closes the log
    text = log.read_text()
    assert f"/v1/matches/{m.id}/stream?after=-1&state=true" in text, text
    assert token.split(".")[1] not in text and "token=" not in text, text
    assert token.split(".")[1] not in (tmp_path / "gunicorn.log").read_text()


def test_sigterm_ends_streams_now_and_lets_long_polls_finish(stream_redis: str, tmp_path: Path):
    conf = runpy.run_path(str(GUNICORN_CONF))
    assert conf["graceful_timeout"] > MAX_WAIT, "a wait=60 long-poll would be cut at shutdown"
    assert conf["worker_class"] == "gevent"
    proc, base = start_gunicorn(tmp_path, stream_redis, 1, ENV)
    try:
        m = requests_api(base).create(["ana", "bo"], seed=11, options=W1_OPTIONS)
        stream = _stream(base, m.id, after=0)
        frames = sse_frames(stream.iter_content(chunk_size=None))
        assert next(frames).kind == "keepalive"
        polled: dict[str, Any] = {}

        def poll() -> None:
            started = time.monotonic()
            r = requests.get(f"{base}/v1/matches/{m.id}/events", params={"after": 0, "wait": 4}, timeout=60)
            polled["r"], polled["took"] = r, time.monotonic() - started

        poller = threading.Thread(target=poll)
        poller.start()
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGTERM)
        stopped = time.monotonic()
        rest = messages(frames)  # the server ends the stream: the chunked body completes cleanly
        assert rest == [], rest  # no `end`: the match goes on, the client reconnects
        assert time.monotonic() - stopped < 3.0, "the stream was not closed at shutdown"
        poller.join(30)
        assert polled["r"].status_code == 200 and polled["r"].json()["events"] == []
        assert polled["took"] >= 3.5, "the long-poll was cut short"
        proc.wait(timeout=30)
    finally:
        stop_process(proc, timeout=20)


def test_notifier_on_a_redis_cluster(tmp_path: Path):
    """Sharded pub/sub on a (one-node) Redis Cluster: the subscription through
    redis-py's ClusterPubSub is confirmed, and a move stored by the APPLY
    script (its SPUBLISH) wakes the match's waiter, and only it; a move
    nobody waits on publishes nothing (on a cluster each SPUBLISH is also
    sent to the shard's replicas over the bus)."""
    import subprocess

    import redis
    from redis.cluster import RedisCluster

    from devtools.servers import REDIS_SERVER, free_port
    from service.store.notify import Notifier
    from service.store.store import Meta, Store

    port = free_port()
    while port > 55000:  # the cluster bus listens on port + 10000
        port = free_port()
    proc = subprocess.Popen([REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                             "--cluster-config-file", str(tmp_path / "nodes.conf"), "--save", "", "--appendonly",
                             "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        plain = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
        deadline = time.monotonic() + 20
        while True:
            try:
                plain.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "redis-server (cluster) did not start"
                time.sleep(0.1)
        while plain.cluster("info")["cluster_state"] != "ok":
            assert time.monotonic() < deadline, "the one-node cluster did not come up"
            time.sleep(0.1)
        client = RedisCluster(host="127.0.0.1", port=port)
        notifier = Notifier(client, lambda ids: [0 for _ in ids], safety=120)
        # Store is annotated with the single-node client; the service hands it any of them
        store = Store(cast(redis.Redis, client), ttl=60)
        assert store.create(Meta("abcdefghijklmnop", "biberbande", ["a", "b"], 1, {}, "x", ["y", "z"], 0.0),
                            {"s": 0}, [])
        assert store.apply("abcdefghijklmnop", 0, {"s": 1}, {"version": 1}, []).version == 1
        assert "cmdstat_spublish" not in plain.info("commandstats"), "a move nobody waits on was published"
        with notifier.watch("abcdefghijklmnop") as mine, notifier.watch("ponmlkjihgfedcba") as other:
            assert mine.wait(5) and other.wait(5), "subscriptions not confirmed"
            assert store.apply("abcdefghijklmnop", 1, {"s": 2}, {"version": 2}, []).version == 2
            assert mine.wait(5), "the move's SPUBLISH did not reach the waiter"
            assert not other.wait(0.3), "the other match's waiter was woken"
        client.close()
    finally:
        stop_process(proc)
