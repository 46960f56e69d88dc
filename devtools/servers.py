"""Server processes for the tests and the benchmarks: a real redis-server and
gunicorn, each on a free loopback port, waited for until it answers, and
stopped by PID.  No pytest here: ``tests/conftest.py`` turns a
:class:`ServerError` into a test failure, ``bench/`` lets it end the run.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REDIS_SERVER = "/usr/bin/redis-server"
GUNICORN_CONF = ROOT / "deploy" / "gunicorn.conf.py"
LODGE_APP = "service.app:create_app()"


#: redis-server arguments: an append-only file fsynced on every write.
AOF_ALWAYS = ("--save", "", "--appendonly", "yes", "--appendfsync", "always")


class ServerError(RuntimeError):
    """A server could not be started."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """Stop one process we started, by its PID: SIGTERM, wait, SIGKILL."""
    if proc.poll() is not None:
        return
    try:
        os.kill(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=timeout)


def tail(path: Path, limit: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return ""


def start_redis(workdir: Path, port: int | None = None, attempts: int = 5,
                persistence: tuple[str, ...] = ("--save", "", "--appendonly", "no")) -> tuple[subprocess.Popen, str]:
    """Start redis-server on a free (or the given) loopback port and wait
    until it answers PING.  Returns (process, url); stop it with
    :func:`stop_process`.  ``persistence``: the arguments that set it (default
    none; :data:`AOF_ALWAYS` for a durable one)."""
    binary = REDIS_SERVER if os.path.exists(REDIS_SERVER) else shutil.which("redis-server")
    if not binary:
        raise ServerError(f"{REDIS_SERVER} not found: run `make test`, which installs redis-server "
                          "(or: apt-get install redis-server)")
    import redis

    log = workdir / "redis.log"
    last_error = ""
    for _attempt in range(attempts if port is None else 1):  # a freed port may be taken meanwhile
        use_port = port or free_port()
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                [binary, "--port", str(use_port), "--bind", "127.0.0.1", *persistence,
                 "--daemonize", "no", "--dir", str(workdir)],
                stdout=out, stderr=subprocess.STDOUT, cwd=workdir)
        url = f"redis://127.0.0.1:{use_port}/0"
        client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
        deadline = time.monotonic() + 15
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    if client.ping():
                        return proc, url
                except redis.RedisError as exc:
                    last_error = repr(exc)
                time.sleep(0.05)
        finally:
            client.close()
        stop_process(proc)
        last_error += "\n" + tail(log)
    raise ServerError(f"redis-server did not answer PING: {last_error}")


def start_gunicorn(workdir: Path, redis_url: str | None, workers: int = 2,
                   extra_env: dict[str, str] | None = None, app: str = LODGE_APP) -> tuple[subprocess.Popen, str]:
    """gunicorn with deploy/gunicorn.conf.py on a free port, waited for until
    /healthz answers; ``redis_url`` None runs it on the embedded store.
    Returns (process, base URL); stop it with :func:`stop_process`."""
    import requests

    port = free_port()
    env = dict(os.environ, HOST="127.0.0.1", PORT=str(port), WEB_CONCURRENCY=str(workers), PYTHONUNBUFFERED="1",
               **(extra_env or {}))
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    log = workdir / "gunicorn.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(GUNICORN_CONF), app],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if requests.get(base + "/healthz", timeout=1).status_code == 200:
                return proc, base
        except requests.RequestException:
            pass
        time.sleep(0.1)
    stop_process(proc, timeout=20)
    raise ServerError(f"gunicorn did not answer /healthz on {base}:\n{tail(log)}")


def worker_pids(master: subprocess.Popen) -> list[int]:
    """The PIDs of a gunicorn master's workers (its child processes)."""
    children: list[int] = []
    for task in Path(f"/proc/{master.pid}/task").iterdir():
        text = (task / "children").read_text().split()
        children.extend(int(pid) for pid in text)
    return children
