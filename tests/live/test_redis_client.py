"""The store's Redis client: the pool's no-wait readiness check (service.store.redis_client.Parser)."""
from __future__ import annotations

import select
import subprocess
import sys
import textwrap

import pytest
import redis

from service.ops.config import Settings
from service.store.redis_client import Parser, build


def _client(url: str) -> redis.Redis:
    client = build(Settings.from_env({"REDIS_URL": url}))
    assert isinstance(client, redis.Redis)
    return client


def test_single_and_sentinel_clients_use_the_parser(redis_server: str):
    single = _client(redis_server)
    assert single.connection_pool.connection_kwargs["parser_class"] is Parser
    sentinel = build(Settings.from_env({"REDIS_MODE": "sentinel", "REDIS_SENTINELS": "127.0.0.1:1"}))
    assert sentinel.connection_pool.connection_kwargs["parser_class"] is Parser


def test_a_quiet_connection_is_not_readable_and_a_pending_reply_is(redis_server: str):
    client = _client(redis_server)
    client.ping()
    conn = client.connection_pool.get_connection()
    try:
        assert isinstance(conn._parser, Parser)
        assert conn.can_read() is False
        conn.send_command("PING")
        assert conn.can_read(timeout=1) is True  # the reply arrived
        assert conn.can_read() is True  # and is still unread
        assert conn.read_response() == b"PONG"
        assert conn.can_read() is False
    finally:
        client.connection_pool.release(conn)


def test_a_connection_the_server_closed_is_not_quiet(redis_server: str):
    """A socket at EOF reads as ready, so the no-wait check must not call it
    quiet: redis-py's check then reports the close and the client replaces
    the connection."""
    client = _client(redis_server)
    client.ping()
    conn = client.connection_pool.get_connection()
    try:
        conn.send_command("CLIENT", "ID")
        own_id = conn.read_response()
        redis.Redis.from_url(redis_server).client_kill_filter(_id=own_id)
        assert select.select([conn._sock], [], [], 5)[0], "the server's close did not arrive"
        with pytest.raises(redis.exceptions.ConnectionError, match="closed"):
            conn.can_read()  # as redis-py's own check: the pool then reconnects
    finally:
        client.connection_pool.release(conn)
    assert client.ping() is True
    assert client.client_id() != own_id


GREEN = textwrap.dedent("""
    from gevent import monkey; monkey.patch_all()
    import sys, greenlet, redis
    from service.store.redis_client import Parser
    url = sys.argv[1]
    for name, options in (("default", {}), ("lodge", {"parser_class": Parser})):
        client = redis.Redis.from_url(url, **options)
        client.ping()
        conn = client.connection_pool.get_connection()
        switches = []
        greenlet.settrace(lambda event, args: switches.append(event))
        for _ in range(20):
            assert conn.can_read() is False
        greenlet.settrace(None)
        print(name, len(switches))
""")


def test_under_gevent_the_check_never_goes_through_the_hub(redis_server: str):
    """Under gevent redis-py's own check switches to the hub and back on
    every command; the parser's answers without leaving the greenlet."""
    out = subprocess.run([sys.executable, "-c", GREEN, redis_server], capture_output=True, text=True, timeout=60,
                         check=True).stdout.split()
    switches = dict(zip(out[::2], map(int, out[1::2])))
    assert switches["default"] >= 20, switches  # the control: gevent's cooperative poll
    assert switches["lodge"] == 0, switches
