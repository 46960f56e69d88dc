"""Gunicorn settings for Lodge: ``gunicorn -c deploy/gunicorn.conf.py 'service.app:create_app()'``.

Environment: ``HOST``/``PORT`` (default 127.0.0.1:8000), ``WEB_CONCURRENCY``
(workers, default 4), ``WORKER_CLASS`` (default ``gevent``; ``gthread`` is the
alternative), ``WORKER_CONNECTIONS`` (open connections per gevent worker,
default 10000), ``THREADS`` (per gthread worker, default 64: there a stream or
long-poll holds a thread each), ``REDIS_URL`` (unset: an embedded store, see
below), ``PROMETHEUS_MULTIPROC_DIR`` (default: a fresh temporary directory),
``READ_TIMEOUT`` (seconds one read of a request may wait, default 10; 0: none),
``MAX_CONNECTIONS_PER_CLIENT`` (per gevent worker, default 256; ``service/ops/connections.py``),
``REDIS_MODE`` and the other store settings (``service/ops/config.py``).

Serving model: gevent workers (gunicorn monkey-patches each worker before it
loads the app).  A request that waits (a stream, a long-poll) is a greenlet
asleep on an event, woken by :mod:`service.store.notify`: an idle one costs memory,
no thread and no CPU.

Slow clients: gunicorn reads the rest of a request with no time limit once
its first bytes arrive, so a client that sends half a request would hold its
connection (under gthread: a thread) for good.  Every read of a request from
the socket is bounded by ``READ_TIMEOUT`` here (:func:`_bound_reads`, in
gunicorn's socket reader, which every synchronous worker class, gevent's
included, reads through); a stalled request is closed.  Put a reverse proxy in
front all the same (README "Reliability").

Shutdown (SIGTERM): the master stops the shared listening socket at once
(``shutdown``), so a connection arriving during the graceful stop is refused
instead of waiting in the backlog (a gevent worker's accept then fails with
EINVAL: it stops accepting quietly, :func:`_quiet_listener_shutdown`, instead
of logging an error with a traceback); each worker ends its open streams at once
(clients reconnect with ``Last-Event-ID``) and lets other requests finish
within ``graceful_timeout``, which covers the longest long-poll (``wait=60``).
Since the socket closes at SIGTERM, a balancer must stop routing to the
instance first: Kubernetes gets a ``preStop`` pause before the signal, and a
termination grace period above that pause plus ``graceful_timeout``
(deploy/k8s/deployment.yaml); compose a ``stop_grace_period`` above it.

Metrics: the workers of one instance write their files into
``<PROMETHEUS_MULTIPROC_DIR>/<host>-<master pid>/``, so several instances may
share one directory: each ``/metrics`` sums only its own workers, and an
instance starting removes only the subdirectories of its host whose master is
gone (a previous run), never a live instance's files.

Embedded store: without ``REDIS_URL`` the master starts one fakeredis
``TcpFakeServer`` (Lua enabled through lupa) on a free loopback port before
forking and exports its URL, so every worker shares one store.  It lives in
the master's memory: for trying Lodge out, not durable.
"""
from __future__ import annotations

import errno
import logging
import os
import resource
import shutil
import socket
import tempfile
import threading
import time

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "4"))
worker_class = os.environ.get("WORKER_CLASS", "gevent")
worker_connections = int(os.environ.get("WORKER_CONNECTIONS", "10000"))
threads = int(os.environ.get("THREADS", "64"))
timeout = 30
graceful_timeout = 70  # > the longest long-poll (schemas.MAX_WAIT = 60 s)
keepalive = 5
# Request size limits, explicit (gunicorn's defaults): a request line over
# 4094 bytes is 414, more than 100 header fields or one over 8190 bytes is 431.
# gunicorn answers those itself, before the app; ``on_starting`` makes those
# answers problem+json (service/http/server_errors.py).  The body limit (64 KiB,
# 413) is the app's.
limit_request_line = 4094
limit_request_fields = 100
limit_request_field_size = 8190
accesslog = os.environ.get("ACCESS_LOG") or None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
# The app is built in each worker, after the master set up the environment.
preload_app = False
# No runtime control socket: it defaults to one path per user, so a second
# server (tests, benchmarks, a tournament) would fight over it.
control_socket_disable = True

read_timeout = float(os.environ.get("READ_TIMEOUT", "10"))

_embedded = None
_metrics_dir_owned: str | None = None


def on_starting(server) -> None:
    """In the master, before any worker: metrics directory, embedded store."""
    global _embedded, _metrics_dir_owned
    from service.http import server_errors

    server_errors.install()  # gunicorn's own 400/414/431 as problem+json, inherited by the workers
    metrics_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not metrics_dir:
        metrics_dir = _metrics_dir_owned = tempfile.mkdtemp(prefix="lodge-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    else:  # shared by several instances: a subdirectory of our own
        os.makedirs(metrics_dir, exist_ok=True)
        _remove_dead_instances(metrics_dir)
        _metrics_dir_owned = os.path.join(metrics_dir, f"{socket.gethostname()}-{os.getpid()}")
        os.makedirs(_metrics_dir_owned, exist_ok=True)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = _metrics_dir_owned
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:  # one descriptor per open stream: allow as many as the system lets us
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if not os.environ.get("REDIS_URL") and os.environ.get("REDIS_MODE", "single") in ("", "single"):
        from fakeredis import TcpFakeServer

        _embedded = TcpFakeServer(("127.0.0.1", 0))
        _embedded.daemon_threads = True
        threading.Thread(target=_embedded.serve_forever, name="embedded-redis", daemon=True).start()
        host, port = _embedded.server_address[:2]
        os.environ["REDIS_URL"] = f"redis://{host}:{port}/0"
        server.log.warning("REDIS_URL unset: embedded in-memory store at %s (not durable)",
                           os.environ["REDIS_URL"])


def when_ready(server) -> None:
    """In the master: refuse new connections as soon as SIGTERM arrives."""
    stop = server.handle_term

    def handle_term() -> None:
        for listener in server.LISTENERS:
            try:
                listener.sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # not a listening socket any more
                pass
        stop()

    server.handle_term = handle_term


def post_worker_init(worker) -> None:
    """Bound request reads and connections per client; end this worker's
    streams as soon as it is told to stop (SIGTERM sets ``worker.alive``
    false; under gevent this thread is a greenlet); run the worker's clock
    sweeper until then."""
    from service.http import server_errors
    from service.ops import connections
    from service.ops.config import Settings

    if read_timeout > 0:
        _bound_reads(read_timeout)
    if worker_class == "gevent":
        _quiet_listener_shutdown()
    _app_logs(worker)
    connections.install(worker, Settings.from_env(), server_errors.any_origin())

    def close_streams_on_exit() -> None:
        while worker.alive:
            time.sleep(0.5)
        from service.store import notify

        notify.close_all()

    threading.Thread(target=close_streams_on_exit, name="lodge-shutdown", daemon=True).start()
    from service.http.context import EXTENSION
    from service.ops import sweeper  # clocks and the moves the server owes (service/ops/sweeper.py)

    if EXTENSION in getattr(worker.wsgi, "extensions", {}):  # not bench/reference_app.py, run under this file too
        sweeper.start(worker.wsgi, lambda: worker.alive)


def _bound_reads(seconds: float) -> None:
    """Each socket read of a request waits at most ``seconds`` (then the
    connection is closed): gunicorn's own reads never time out."""
    from gunicorn.http import unreader

    recv = unreader.SocketUnreader.chunk

    def chunk(self, size_hint=None):
        self.sock.settimeout(seconds)
        return recv(self, size_hint)

    unreader.SocketUnreader.chunk = chunk


def _app_logs(worker) -> None:
    """The app's log lines (``service.*``: a store outage and its end, a
    bug's traceback) go through gunicorn's error log, with its time, worker
    pid and level, at ``LOG_LEVEL``."""
    app_log = logging.getLogger("service")
    for handler in worker.log.error_log.handlers:
        app_log.addHandler(handler)
    app_log.setLevel(worker.log.error_log.level)
    app_log.propagate = False


def _quiet_listener_shutdown() -> None:
    """A gevent worker whose accept fails with EINVAL (the master shut the
    shared listening socket down: a graceful stop begins, ``when_ready``)
    closes its server quietly; gevent would log it as a fatal error with a
    traceback.  Other accept errors keep gevent's handling."""
    from gevent.server import StreamServer

    accept = StreamServer.do_read

    def do_read(self):
        try:
            return accept(self)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
            self.close()
            return None

    StreamServer.do_read = do_read


def _remove_dead_instances(metrics_dir: str) -> None:
    """Drop ``<host>-<pid>`` subdirectories of this host whose master is gone."""
    prefix = socket.gethostname() + "-"
    for name in os.listdir(metrics_dir):
        pid = name[len(prefix):]
        if name.startswith(prefix) and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(metrics_dir, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def child_exit(server, worker) -> None:
    """Let prometheus_client drop the dead worker's live gauges."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server) -> None:
    if _embedded is not None:
        _embedded.shutdown()
        _embedded.server_close()
    if _metrics_dir_owned:
        shutil.rmtree(_metrics_dir_owned, ignore_errors=True)
