"""Faults and hostile clients against real processes (issue 11): gunicorn
(deploy/gunicorn.conf.py) on a real redis-server, each started here on free
ports and stopped by PID.  Assertions are about behaviour; timeouts are
generous bounds, not measurements.

* half-sent requests time out (READ_TIMEOUT) and do not starve /healthz;
* connections beyond MAX_CONNECTIONS_PER_CLIENT are 429 for that client
  only, and accepted again once it closes some;
* long-polls beyond MAX_WAITS_PER_CLIENT are 429 while /healthz answers;
* SIGTERM under load: in-flight requests complete, new connections are
  refused promptly, a request on an already kept-alive connection is
  answered at once and told to close, no acknowledged move is lost;
* Redis SIGKILL and restart from its append-only file (appendfsync always):
  every acknowledged move survives;
* a worker SIGKILLed mid-move: no half-applied move, retries settle.
"""
from __future__ import annotations

import http.client
import os
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest
import requests

from devtools import servers
from devtools.servers import AOF_ALWAYS, stop_process, worker_pids

pytestmark = pytest.mark.live


def _gunicorn(tmp: Path, redis_url: str | None, workers: int = 1, **env: str):
    """gunicorn as deployed: its default gevent workers (concurrency is
    ``WORKER_CONNECTIONS``; ``THREADS`` sizes only gthread workers)."""
    try:
        proc, base = servers.start_gunicorn(tmp, redis_url, workers, {"RATE_LIMIT_ENABLED": "false", **env})
    except servers.ServerError as exc:
        pytest.fail(str(exc), pytrace=False)
    if "Using worker: gevent" not in (tmp / "gunicorn.log").read_text():
        stop_process(proc, timeout=20)
        pytest.fail("gunicorn did not start its gevent workers", pytrace=False)
    return proc, base


def _redis(tmp: Path, port: int | None = None, persistence=AOF_ALWAYS):
    try:
        return servers.start_redis(tmp, port, persistence=persistence)
    except servers.ServerError as exc:
        pytest.fail(str(exc), pytrace=False)


def _create(base: str, seed: int) -> dict:
    r = requests.post(base + "/v1/matches", json={"game": "biberbande", "players": 2, "seed": seed}, timeout=30)
    assert r.status_code == 201, r.text
    return r.json()


def _play(base: str, match: dict, acked: list[tuple[str, int]], stop: threading.Event, key_prefix: str = "") -> None:
    """Play the match through the admin token, noting every acknowledged
    version; connection errors are retried with the same Idempotency-Key."""
    mid, admin = match["match_id"], match["admin_token"]
    auth = {"Authorization": f"Bearer {admin}"}
    while not stop.is_set():
        try:
            view = requests.get(f"{base}/v1/matches/{mid}", headers=auth, timeout=10).json()
            if view.get("status") != "active" or not view.get("to_act"):
                return
            seat = view["to_act"][0]
            moves = requests.get(f"{base}/v1/matches/{mid}/legal-moves", params={"seat": seat}, headers=auth,
                                 timeout=10).json()["moves"]
            key = f"{key_prefix}{mid}-{view['version']}"
            for _attempt in range(20):
                try:
                    r = requests.post(f"{base}/v1/matches/{mid}/moves", params={"seat": seat},
                                      json={"move": moves[0], "version": view["version"]},
                                      headers={**auth, "Idempotency-Key": key}, timeout=10)
                except requests.RequestException:
                    if stop.is_set():
                        return
                    time.sleep(0.2)
                    continue
                if r.status_code == 200:
                    acked.append((mid, r.json()["version"]))
                break
        except (requests.RequestException, ValueError, KeyError):
            if stop.is_set():
                return
            time.sleep(0.2)


def _assert_kept(base: str, matches: list[dict], acked: list[tuple[str, int]]) -> None:
    """Every acknowledged version is in the match's record, which replays."""
    for m in matches:
        r = requests.get(f"{base}/v1/matches/{m['match_id']}/record",
                         headers={"Authorization": f"Bearer {m['admin_token']}"}, timeout=30)
        assert r.status_code == 200, r.text
        logged = [entry["version"] for entry in r.json()["moves"]]
        assert logged == list(range(1, len(logged) + 1)), logged  # nothing half-applied, nothing twice
        top = max([v for mid, v in acked if mid == m["match_id"]], default=0)
        assert len(logged) >= top, f"acknowledged version {top} lost: the record ends at {len(logged)}"
        view = requests.get(f"{base}/v1/matches/{m['match_id']}",
                            headers={"Authorization": f"Bearer {m['admin_token']}"}, timeout=30).json()
        assert view["version"] == len(logged)


def _half_sent(base: str, n: int, source: str = "127.0.0.1") -> list[socket.socket]:
    host, port = base.removeprefix("http://").split(":")
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, int(port)), timeout=5, source_address=(source, 0))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # never finished
        socks.append(s)
    return socks


def test_half_sent_requests_time_out_and_do_not_starve_healthz(tmp_path):
    proc, base = _gunicorn(tmp_path, None, WORKER_CONNECTIONS="4", READ_TIMEOUT="1")
    socks = []
    try:
        socks = _half_sent(base, 24)  # six times the connections the worker takes at once
        r = requests.get(base + "/healthz", timeout=30)
        assert r.status_code == 200
        still_open = 0  # the server closes every stalled connection
        for s in socks:
            s.settimeout(15)
            try:
                s.recv(1024)
            except TimeoutError:
                still_open += 1
            except OSError:  # reset: closed too
                pass
        assert still_open == 0
    finally:
        for s in socks:
            s.close()
        stop_process(proc, timeout=20)


def _healthz_from(base: str, source: str) -> bytes:
    """The raw answer to ``GET /healthz`` on a new connection from ``source``."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10, source_address=(source, 0)) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_connections_beyond_the_cap_are_429_for_that_client_only(tmp_path):
    """gevent workers (the default): one client's connections are capped
    per worker; another client address is served all the while."""
    proc, base = _gunicorn(tmp_path, None, MAX_CONNECTIONS_PER_CLIENT="6", READ_TIMEOUT="30")
    socks = []
    try:
        socks = _half_sent(base, 6, source="127.0.0.2")
        refused = _healthz_from(base, "127.0.0.2")
        head, _, body = refused.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 429 ") and b"Retry-After: 1" in head, refused
        assert orjson.loads(body)["code"] == "rate_limited"
        assert _healthz_from(base, "127.0.0.1").startswith(b"HTTP/1.1 200 "), "another client was refused"
        socks.pop().close()
        time.sleep(0.5)  # the server sees the close
        assert _healthz_from(base, "127.0.0.2").startswith(b"HTTP/1.1 200 "), "a freed slot stayed taken"
    finally:
        for s in socks:
            s.close()
        stop_process(proc, timeout=20)


def test_long_polls_beyond_the_cap_are_429_while_healthz_answers(tmp_path):
    proc, base = _gunicorn(tmp_path, None, MAX_WAITS_PER_CLIENT="4")
    try:
        match = _create(base, 1)
        url = f"{base}/v1/matches/{match['match_id']}/events"
        with ThreadPoolExecutor(12) as pool:
            futures = [pool.submit(requests.get, url, params={"after": 0, "wait": 4}, timeout=60)
                       for _ in range(12)]
            time.sleep(1.0)
            assert requests.get(base + "/healthz", timeout=30).status_code == 200
            codes = sorted(f.result().status_code for f in futures)
        assert codes.count(200) == 4 and codes.count(429) == 8, codes
    finally:
        stop_process(proc, timeout=20)


def _refused_promptly(base: str) -> bool:
    """A new connection is refused at once, or answered within a second;
    not left in the listen backlog until the server exits."""
    host, port = base.removeprefix("http://").split(":")
    try:
        with socket.create_connection((host, int(port)), timeout=1) as s:
            s.settimeout(1)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            return s.recv(1024).startswith(b"HTTP/1.1 ")
    except ConnectionRefusedError:
        return True
    except OSError:  # timed out or reset after waiting
        return False


def _kept_alive(base: str) -> http.client.HTTPConnection:
    """A connection that has had one answer and is kept alive by the server."""
    host, port = base.split("//", 1)[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=3)
    conn.request("GET", "/healthz")
    first = conn.getresponse()
    first.read()
    assert first.status == 200 and first.getheader("Connection") != "close"
    return conn


def _start_players(base: str, matches: list[dict], acked: list[tuple[str, int]],
                   stop: threading.Event) -> list[threading.Thread]:
    """One thread per match playing random legal moves until ``stop``; each
    acknowledged move goes into ``acked``."""
    players = [threading.Thread(target=_play, args=(base, m, acked, stop)) for m in matches]
    for t in players:
        t.start()
    return players


def test_sigterm_under_load_finishes_in_flight_refuses_new_and_loses_nothing(tmp_path):
    rproc, rurl = _redis(tmp_path)
    proc, base = _gunicorn(tmp_path, rurl, workers=2)
    stop = threading.Event()
    acked: list[tuple[str, int]] = []
    try:
        matches = [_create(base, seed) for seed in range(4)]
        players = _start_players(base, matches, acked, stop)
        time.sleep(1.0)
        poll = ThreadPoolExecutor(1).submit(
            requests.get, f"{base}/v1/matches/{matches[0]['match_id']}/events",
            params={"after": 10_000, "wait": 4}, timeout=30)
        kept = _kept_alive(base)
        time.sleep(0.3)
        os.kill(proc.pid, signal.SIGTERM)
        time.sleep(0.3)
        assert _refused_promptly(base), "a connection after SIGTERM waited"
        kept.request("GET", "/healthz")
        answer = kept.getresponse()  # within the connection's timeout: not held until the worker exits
        assert (answer.status, answer.getheader("Connection")) == (200, "close")
        assert poll.result().status_code == 200  # the in-flight long-poll completed
        proc.wait(timeout=40)
        stop.set()
        for t in players:
            t.join(30)
        proc, base = _gunicorn(tmp_path, rurl, workers=1)
        _assert_kept(base, matches, acked)
    finally:
        stop.set()
        stop_process(proc, timeout=20)
        stop_process(rproc)


def test_acknowledged_moves_survive_a_redis_sigkill_with_aof(tmp_path):
    rproc, rurl = _redis(tmp_path)
    port = int(rurl.rsplit(":", 1)[1].split("/")[0])
    proc, base = _gunicorn(tmp_path, rurl, workers=2)
    stop = threading.Event()
    acked: list[tuple[str, int]] = []
    try:
        matches = [_create(base, seed) for seed in range(4)]
        players = _start_players(base, matches, acked, stop)
        time.sleep(1.5)
        os.kill(rproc.pid, signal.SIGKILL)
        rproc.wait(timeout=10)
        seen = list(acked)
        time.sleep(0.5)
        rproc, _ = _redis(tmp_path, port)
        time.sleep(1.5)
        stop.set()
        for t in players:
            t.join(30)
        assert seen, "no move was acknowledged before the kill"
        _assert_kept(base, matches, acked)
    finally:
        stop.set()
        stop_process(proc, timeout=20)
        stop_process(rproc)


def test_a_worker_killed_mid_move_leaves_no_half_applied_move(tmp_path):
    rproc, rurl = _redis(tmp_path, persistence=("--save", "", "--appendonly", "no"))
    proc, base = _gunicorn(tmp_path, rurl, workers=2)
    stop = threading.Event()
    acked: list[tuple[str, int]] = []
    try:
        matches = [_create(base, seed) for seed in range(6)]
        players = _start_players(base, matches, acked, stop)
        for _ in range(3):
            time.sleep(0.7)
            pids = worker_pids(proc)
            assert pids
            os.kill(pids[0], signal.SIGKILL)
        time.sleep(3)  # the master forks a replacement; the players retry
        stop.set()
        for t in players:
            t.join(30)
        assert acked
        _assert_kept(base, matches, acked)
    finally:
        stop.set()
        stop_process(proc, timeout=20)
        stop_process(rproc)
