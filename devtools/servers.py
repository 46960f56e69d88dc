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
                   extra_env: dict[str, str] | None = None, app: str = LODGE_APP,
                   code: Path = ROOT, port: int | None = None) -> tuple[subprocess.Popen, str]:
    """gunicorn with deploy/gunicorn.conf.py on ``port`` (default: a free
    one), waited for until /healthz answers; ``redis_url`` None runs it on the
    embedded store; ``code``: the source tree it serves (another revision's,
    for a benchmark).  Returns (process, base URL); stop it with
    :func:`stop_process`."""
    import requests

    port = port or free_port()
    env = dict(os.environ, HOST="127.0.0.1", PORT=str(port), WEB_CONCURRENCY=str(workers), PYTHONUNBUFFERED="1",
               **(extra_env or {}))
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    log = workdir / "gunicorn.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(code / GUNICORN_CONF.relative_to(ROOT)),
                                 app], cwd=code, env=env, stdout=out, stderr=subprocess.STDOUT)
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


# --------------------------------------------------------------------------
# Redis Cluster and Sentinel (tests of REDIS_MODE=cluster|sentinel, bench/).
# --------------------------------------------------------------------------
REDIS_SENTINEL = "/usr/bin/redis-sentinel"
CLUSTER_SLOTS = 16384


def _binary(path: str, package: str) -> str:
    found = path if os.path.exists(path) else shutil.which(os.path.basename(path))
    if not found:
        raise ServerError(f"{path} not found: run `make test`, which installs it (or: apt-get install {package})")
    return found


def _spawn(args: list[str], workdir: Path, log_name: str) -> subprocess.Popen:
    with open(workdir / log_name, "ab") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=workdir)


def _wait_for(check, what: str, timeout: float = 20.0, procs: list[subprocess.Popen] | None = None):
    """Poll ``check()`` until it returns a true value (returned) or time is up."""
    import redis

    deadline, last = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        if procs and any(p.poll() is not None for p in procs):
            raise ServerError(f"{what}: a process exited early")
        try:
            value = check()
            if value:
                return value
        except redis.RedisError as exc:
            last = repr(exc)
        time.sleep(0.05)
    raise ServerError(f"{what}: timed out {last}")


class RedisGroup:
    """Redis processes started together (a cluster, or a primary, its
    replica and sentinels), each on a free loopback port, stopped by PID."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.procs: dict[int, subprocess.Popen] = {}  # port -> process
        self.args: dict[int, list[str]] = {}

    def start(self, port: int, args: list[str]) -> subprocess.Popen:
        """Start (or restart) the server of ``port`` with ``args``."""
        self.args[port] = args
        proc = _spawn(args, self.workdir, f"redis-{port}.log")
        self.procs[port] = proc
        return proc

    def kill(self, port: int) -> None:
        """SIGKILL the server of ``port`` (a crash: nothing is flushed)."""
        proc = self.procs[port]
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def pause(self, port: int, paused: bool = True) -> None:
        """SIGSTOP (or SIGCONT) the server of ``port``: a replica falling behind."""
        os.kill(self.procs[port].pid, signal.SIGSTOP if paused else signal.SIGCONT)

    def restart(self, port: int) -> None:
        self.start(port, self.args[port])

    def stop(self) -> None:
        for proc in self.procs.values():
            stop_process(proc)


def free_cluster_port() -> int:
    """A free port p ≤ 55535 with p + 10000 free too (the cluster bus port)."""
    import random

    for _ in range(200):
        port = random.randint(20000, 55535)
        try:
            with socket.socket() as s1, socket.socket() as s2:
                s1.bind(("127.0.0.1", port))
                s2.bind(("127.0.0.1", port + 10000))
        except OSError:
            continue
        return port
    raise ServerError("no free port pair for a cluster node")


def _node_args(binary: str, port: int, workdir: Path, *extra: str) -> list[str]:
    return [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--daemonize", "no", "--dir", str(workdir), *extra]


#: Cluster settings of the recommended topology (docs/store-availability.md):
#: the shards whose primary answers keep serving while another shard fails over.
CLUSTER_AVAILABILITY = ("--cluster-require-full-coverage", "no")


class Cluster(RedisGroup):
    """A Redis Cluster: ``masters`` primaries sharing the 16384 slots, each
    with ``replicas`` replicas (with 2, losing any one node keeps every
    shard writable with ``REDIS_WAIT_REPLICAS=1``).  ``url`` names the first
    primary, ``seeds`` every node (a cluster-mode ``REDIS_URL``).
    ``extra``: more redis-server arguments for every node."""

    def __init__(self, workdir: Path, masters: int = 3, replicas: int = 0, extra: tuple[str, ...] = ()):
        super().__init__(workdir)
        import redis

        binary = _binary(REDIS_SERVER, "redis-server")
        ports = [free_cluster_port() for _ in range(masters * (1 + replicas))]
        for port in ports:
            node_dir = workdir / f"node-{port}"
            node_dir.mkdir(parents=True, exist_ok=True)
            self.start(port, _node_args(binary, port, node_dir, "--cluster-enabled", "yes",
                                        "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "1500",
                                        *CLUSTER_AVAILABILITY, "--repl-diskless-sync-delay", "0", *extra))
        self.masters, self.replicas = ports[:masters], ports[masters:]
        self.url = f"redis://127.0.0.1:{ports[0]}/0"
        self.seeds = ",".join(f"redis://127.0.0.1:{port}/0" for port in ports)
        clients = {p: redis.Redis(port=p, socket_timeout=2, decode_responses=True) for p in ports}
        try:
            for port in ports:
                _wait_for(clients[port].ping, f"cluster node {port}", procs=list(self.procs.values()))
            per = CLUSTER_SLOTS // masters
            for i, port in enumerate(self.masters):
                last = CLUSTER_SLOTS - 1 if i == masters - 1 else (i + 1) * per - 1
                clients[port].execute_command("CLUSTER", "ADDSLOTSRANGE", i * per, last)
            for port in ports[1:]:
                clients[ports[0]].execute_command("CLUSTER", "MEET", "127.0.0.1", port)
            ids = {p: clients[p].execute_command("CLUSTER", "MYID") for p in self.masters}
            for k, port in enumerate(self.replicas):
                master_id = ids[self.masters[k % masters]]
                _wait_for(lambda c=clients[port], m=master_id: m in c.execute_command("CLUSTER", "NODES"),
                          f"replica {port} meets its primary")
                clients[port].execute_command("CLUSTER", "REPLICATE", master_id)
            for port in ports:
                _wait_for(lambda c=clients[port]: "cluster_state:ok" in c.execute_command("CLUSTER", "INFO"),
                          f"cluster state ok on {port}")
            for port in self.replicas:
                _wait_for(lambda c=clients[port]: c.info("replication").get("master_link_status") == "up",
                          f"replica {port} in sync")
            # every node must know every primary's slots before clients bootstrap from any of them
            for port in ports:
                _wait_for(lambda c=clients[port]: len(c.execute_command("CLUSTER", "SLOTS")) == masters,
                          f"slot map on {port}")
        except ServerError:
            self.stop()
            raise
        finally:
            for c in clients.values():
                c.close()


class SentinelGroup(RedisGroup):
    """A primary, ``replicas`` replicas (2: the recommended topology, see
    :class:`Cluster`) and ``sentinels`` sentinels watching it as ``master``
    (quorum 2, down after 1 s)."""

    def __init__(self, workdir: Path, replicas: int = 2, sentinels: int = 3, master: str = "lodge"):
        super().__init__(workdir)
        import redis

        binary = _binary(REDIS_SERVER, "redis-server")
        sentinel_binary = _binary(REDIS_SENTINEL, "redis-sentinel")
        self.master = master
        self.primary = free_port()
        self.replica_ports = [free_port() for _ in range(replicas)]
        self.sentinel_ports = [free_port() for _ in range(sentinels)]
        for port in [self.primary, *self.replica_ports]:
            node_dir = workdir / f"node-{port}"
            node_dir.mkdir(parents=True, exist_ok=True)
            extra = ["--repl-diskless-sync-delay", "0"]  # a restarted node is in sync at once
            if port != self.primary:
                extra += ["--replicaof", "127.0.0.1", str(self.primary)]
            self.start(port, _node_args(binary, port, node_dir, *extra))
        try:
            for port in [self.primary, *self.replica_ports]:
                c = redis.Redis(port=port, socket_timeout=2, decode_responses=True)
                _wait_for(c.ping, f"redis {port}", procs=list(self.procs.values()))
                c.close()
            primary = redis.Redis(port=self.primary, socket_timeout=2, decode_responses=True)
            _wait_for(lambda: [primary.info("replication").get(f"slave{i}", {}).get("state") for i in range(replicas)]
                      == ["online"] * replicas, "replicas in sync")
            primary.close()
            for port in self.sentinel_ports:
                conf = workdir / f"sentinel-{port}.conf"
                conf.write_text(
                    f"port {port}\nbind 127.0.0.1\ndaemonize no\ndir {workdir}\n"
                    f"sentinel monitor {master} 127.0.0.1 {self.primary} 2\n"
                    f"sentinel down-after-milliseconds {master} 1000\n"
                    f"sentinel failover-timeout {master} 4000\n"
                    f"sentinel parallel-syncs {master} 1\n")
                self.start(port, [sentinel_binary, str(conf)])
            for port in self.sentinel_ports:
                s = redis.Redis(port=port, socket_timeout=2, decode_responses=True)
                _wait_for(lambda s=s: (int(s.sentinel_master(master)["num-other-sentinels"]) == sentinels - 1
                                       and len(s.sentinel_slaves(master)) == replicas),
                          f"sentinel {port} sees the others and the replicas")
                s.close()
        except ServerError:
            self.stop()
            raise

    @property
    def sentinels(self) -> str:
        """``REDIS_SENTINELS``: ``host:port,...``."""
        return ",".join(f"127.0.0.1:{p}" for p in self.sentinel_ports)

    def current_primary(self, sentinel: int = 0) -> int:
        """The port the ``sentinel``-th sentinel names as primary now."""
        import redis

        s = redis.Redis(port=self.sentinel_ports[sentinel], socket_timeout=2, decode_responses=True)
        try:
            return int(s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.master)[1])
        finally:
            s.close()

    def agreed_primary(self) -> int | None:
        """The port every sentinel names as primary, None while they differ."""
        named = {self.current_primary(i) for i in range(len(self.sentinel_ports))}
        return named.pop() if len(named) == 1 else None
