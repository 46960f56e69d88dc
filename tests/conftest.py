"""Shared fixtures: a real redis-server, both stores, the Flask app and a live
gunicorn server.

* ``redis_server`` (session) starts ``/usr/bin/redis-server`` on a free
  loopback port and stops it by PID.  Under pytest-xdist every worker starts its
  own server.
* ``store`` is parametrised over ``embedded`` (a fresh ``fakeredis.FakeRedis``)
  and ``redis`` (the real server, flushed per test), so every API test runs
  against both; the modules of the API's core (:data:`CLUSTER_MODULES`) also
  run on ``cluster``: redis-py's ``RedisCluster`` on a 3-master Redis Cluster
  (``redis_cluster``, session, started by ``devtools.servers.Cluster``).
* ``app`` / ``client`` / ``api``: ``service.app.create_app(redis_client=store)``
  and its Flask test client, wrapped by :class:`tests.http_helpers.Api`.
* ``live_server`` (session): gunicorn with ``deploy/gunicorn.conf.py``
  (2 workers) against database 1 of the real redis; yields its base URL.
  ``start_redis`` / ``start_gunicorn`` / ``stop_process`` let a test run its
  own short-lived instances (store outages, the embedded-store deployment).

Everything started here is stopped by PID, never by name.

Per-client limits are off in every app and server the tests start (one test
process is one client playing thousands of moves a second): the limits' own
tests (``test_rate_limits.py``, ``test_faults.py``) switch them on explicitly.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from devtools import servers
from devtools.servers import free_port, stop_process
from engine import REGISTRY
from tests.http_helpers import W1_OPTIONS, Api, Match, Resp

os.environ.setdefault("RATE_LIMIT_ENABLED", "false")
os.environ.setdefault("MAX_WAITS_PER_CLIENT", "0")
os.environ.setdefault("MAX_CONNECTIONS_PER_CLIENT", "0")


# --------------------------------------------------------------------------
# Processes (devtools/servers.py); a server that cannot start fails the test.
# --------------------------------------------------------------------------
def closed_port() -> int:
    """A loopback port nobody listens on (bound then released)."""
    return free_port()


#: set by ``--fast`` (make test-fast): starting a process then fails the test, which should be marked ``process``
FAST = False
#: ``--fast``: the most examples (hypothesis, schemathesis, random playouts) a randomised test runs
FAST_EXAMPLES = 1


def examples(full: int) -> int:
    """A randomised test's example count: ``full`` (the size written in the
    test) in the whole suite, at most :data:`FAST_EXAMPLES` under ``--fast``.
    Evaluated when the test module is imported, which is after ``--fast`` is read."""
    return min(full, FAST_EXAMPLES) if FAST else full


def match_options(game_id: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A whole-match test's options: ``options`` (the size written in the
    test) in the whole suite; under ``--fast`` the game's ``short`` preset
    over them (13 Beavers' short board, one round of the others).  For tests
    whose point is not the match's length; one whose point is (e.g. a long
    round that reshuffles) writes its options directly."""
    sized = dict(options or {})
    if FAST:
        sized.update(REGISTRY.games[game_id].declaration.presets["short"])
    return sized


def _refuse_when_fast(what: str) -> None:
    if FAST:
        pytest.fail(f"--fast runs no {what}: mark this test @pytest.mark.process", pytrace=False)


def start_redis(workdir: Path, port: int | None = None) -> tuple[subprocess.Popen, str]:
    _refuse_when_fast("redis-server")
    try:
        return servers.start_redis(workdir, port)
    except servers.ServerError as exc:
        pytest.fail(str(exc), pytrace=False)


def start_gunicorn(workdir: Path, redis_url: str | None, workers: int = 2,
                   extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    _refuse_when_fast("gunicorn")
    try:
        return servers.start_gunicorn(workdir, redis_url, workers, extra_env)
    except servers.ServerError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on a free loopback port (one per xdist worker);
    yields its URL and stops it by PID at the end of the session."""
    _refuse_when_fast("redis-server")
    proc, url = start_redis(tmp_path_factory.mktemp("redis"))
    try:
        yield url
    finally:
        stop_process(proc)


# --------------------------------------------------------------------------
# Stores, app, client.
# --------------------------------------------------------------------------
@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[servers.Cluster]:
    """A 3-master Redis Cluster on free loopback ports (one per xdist worker)."""
    _refuse_when_fast("Redis Cluster")
    try:
        cluster = servers.Cluster(tmp_path_factory.mktemp("cluster"))
    except servers.ServerError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


#: API test modules that run on the Redis Cluster too: create, views, moves
#: (racing, idempotent retries, idempotency_key_reused), events, record,
#: delete, every game, compaction and lost keys of a match; ladders (their own slots).
CLUSTER_MODULES = {"test_api_all_games", "test_api_clock", "test_api_moves", "test_api_events", "test_api_record",
                   "test_api_views", "test_compaction", "test_store_faults", "test_api_ladders"}


#: fixtures that start a process (Redis, a cluster, gunicorn, Chromium): ``--fast`` leaves their tests out.
PROCESS_FIXTURES = {"redis_server", "redis_cluster", "live_server", "live_api", "driver"}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fast", action="store_true",
                     help="only what needs no server, browser or Redis process (make test-fast): the store is "
                          "the embedded one, and tests marked live or process or using a process fixture "
                          "are deselected")


def pytest_configure(config: pytest.Config) -> None:
    global FAST
    FAST = config.getoption("fast")
    if FAST:
        # for a @given test that sets no max_examples of its own (one that does uses examples())
        settings.register_profile("fast", max_examples=FAST_EXAMPLES)
        settings.load_profile("fast")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store" in metafunc.fixturenames:
        modes = ["embedded", "redis"]
        if metafunc.module.__name__.rsplit(".", 1)[-1] in CLUSTER_MODULES:
            modes.append("cluster")
        if metafunc.config.getoption("fast"):
            modes = ["embedded"]
        metafunc.parametrize("store", modes, indirect=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--fast``: deselect every test that needs a process of its own."""
    if not config.getoption("fast"):
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        needs_process = (item.get_closest_marker("live") or item.get_closest_marker("process")
                         or PROCESS_FIXTURES & set(getattr(item, "fixturenames", ())))
        (drop if needs_process else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _cluster_client_class() -> Any:
    import redis

    class ClusterClient(redis.RedisCluster):
        """``keys()`` over every primary (redis-py asks one node), as tests
        that list a match's keys expect."""

        def keys(self, pattern: Any = "*", **kwargs: Any) -> Any:
            return super().keys(pattern, target_nodes=self.PRIMARIES, **kwargs)

    return ClusterClient


@pytest.fixture
def store(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The service's Redis client: fakeredis (embedded), the real server, or
    the cluster (see :func:`pytest_generate_tests`)."""
    if request.param == "cluster":
        cluster = request.getfixturevalue("redis_cluster")
        ClusterClient = _cluster_client_class()  # noqa: N806  # a class
        cluster_client = ClusterClient.from_url(cluster.url)
        cluster_client.flushall()
        yield cluster_client
        cluster_client.close()
    elif request.param == "embedded":
        import fakeredis

        client = fakeredis.FakeRedis()
        yield client
        client.close()
    else:
        import redis

        url = request.getfixturevalue("redis_server")
        server_client = redis.Redis.from_url(url)
        server_client.flushdb()
        yield server_client
        server_client.close()


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    """Headless Chromium at a desktop size, one per module (the front end's
    browser tests; tests/live/test_browser.py has its own)."""
    from tests import browser

    with browser.chromium(width=1280, height=1400) as d:
        yield d


@pytest.fixture
def embedded_store() -> Iterator[Any]:
    import fakeredis

    client = fakeredis.FakeRedis()
    yield client
    client.close()


def make_app(redis_client: Any):
    from service.app import create_app

    app = create_app(redis_client=redis_client)
    app.config["TESTING"] = True
    return app


def flask_api(app) -> Api:
    client = app.test_client()

    def send(method: str, path: str, headers: dict[str, str], body: bytes | None, params: dict[str, Any]) -> Resp:
        r = client.open(path, method=method, headers=headers, data=body, query_string=params or None)
        try:
            data = r.get_data()
        finally:
            r.close()
        return Resp(r.status_code, {k.lower(): v for k, v in r.headers.items()}, data, method, path)

    return Api(send)


@pytest.fixture
def app(store: Any):
    return make_app(store)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def api(app) -> Api:
    return flask_api(app)


@pytest.fixture
def embedded_api(embedded_store: Any) -> Api:
    """An API on the embedded store only (for long random playouts)."""
    return flask_api(make_app(embedded_store))


@pytest.fixture
def down_api() -> Api:
    """An API whose redis client points at a closed port (store down)."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # no client-side retries: redis-py 8 retries with backoff by default (~3 s per call)
    client = redis.Redis(host="127.0.0.1", port=closed_port(), socket_connect_timeout=0.3, socket_timeout=0.3,
                         retry=Retry(NoBackoff(), 0))
    return flask_api(make_app(client))


# --------------------------------------------------------------------------
# Live server.
# --------------------------------------------------------------------------
def requests_api(base_url: str):
    import requests

    session = requests.Session()

    def send(method: str, path: str, headers: dict[str, str], body: bytes | None, params: dict[str, Any]) -> Resp:
        r = session.request(method, base_url + path, headers=headers, data=body, params=params or None,
                            timeout=90)
        return Resp(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.content, method, path)

    return Api(send)


@pytest.fixture(scope="session")
def live_server(redis_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """gunicorn (deploy/gunicorn.conf.py, 2 workers) against the real redis;
    yields its base URL and stops it by PID."""
    # database 1: the API tests flush database 0 of the same server between tests
    live_url = redis_server.rsplit("/", 1)[0] + "/1"
    proc, base = start_gunicorn(tmp_path_factory.mktemp("gunicorn"), live_url)
    try:
        yield base
    finally:
        stop_process(proc, timeout=20)


@pytest.fixture
def live_api(live_server: str) -> Api:
    return requests_api(live_server)


# --------------------------------------------------------------------------
# Matches.
# --------------------------------------------------------------------------
@pytest.fixture
def w1(api: Api) -> Match:
    """Worked example W1 (biberbande.md §11): 2 players, 1 round, stacked deck."""
    return api.create(["ana", "bo"], seed=11, options=W1_OPTIONS)
