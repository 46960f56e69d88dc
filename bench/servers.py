"""Processes the benchmark starts: a real redis-server and gunicorn apps.

Each is started on a free loopback port and stopped by PID; CPU time of a
server is read from /proc so throughput can be quoted per server CPU-second.
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

import requests

ROOT = Path(__file__).resolve().parent.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not come up within {timeout} s")


class Process:
    """A child process stopped by PID on exit."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None):
        self.proc = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def cpu_seconds(self) -> float:
        """User + system CPU of the process and all its live descendants."""
        total = 0.0
        for pid in _tree(self.proc.pid):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        return total

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def start_redis() -> tuple[Process, str]:
    binary = shutil.which("redis-server")
    if not binary:
        raise RuntimeError("redis-server is not installed (make bench installs it)")
    port = free_port()
    proc = Process([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no"])
    url = f"redis://127.0.0.1:{port}/0"

    def up() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), 0.2) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    _wait_until(up, 10, "redis-server")
    return proc, url


def start_gunicorn(app_spec: str, redis_url: str, workers: int = 1, threads: int = 4) -> tuple[Process, str]:
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "HOST": "127.0.0.1", "PORT": str(port),
           "WEB_CONCURRENCY": str(workers), "THREADS": str(threads), "LOG_LEVEL": "warning"}
    proc = Process([sys.executable, "-m", "gunicorn", "-c", str(ROOT / "deploy/gunicorn.conf.py"),
                    app_spec], env=env)
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return requests.get(base + "/healthz", timeout=0.5).status_code == 200
        except requests.RequestException:
            return False

    _wait_until(up, 20, app_spec)
    return proc, base
