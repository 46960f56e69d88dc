"""``python -m bench.profile``: where a gunicorn worker's time goes on the move path.

Starts redis-server and gunicorn (1 worker, the bench's settings, no rate
limits), plays scripted moves (or GETs views) with the HTTP benchmark's
clients, and samples the worker with py-spy (``pip install py-spy``) for
``--seconds``.  Prints the share of samples per layer (inclusive: a frame
anywhere in the stack) and the top functions by own time, from py-spy's
collapsed stacks (also written to .bench/profile-<scenario>.txt).
"""
from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import requests

from bench import http_bench
from devtools.servers import LODGE_APP, ROOT, start_redis, stop_process, worker_pids

#: Layers by a marker in the frame (function and file), first match wins per layer.
LAYERS = {
    "gunicorn/gevent (server)": ("gunicorn/", "gevent/"),
    "Flask + werkzeug": ("flask/app.py", "werkzeug/"),
    "flask-smorest + webargs + marshmallow": ("flask_smorest/", "webargs/", "marshmallow/"),
    "request hooks (metrics, CORS, limits, bodies)": ("service/ops/metrics.py", "flask_cors/", "flask_limiter/",
                                                      "service/http/bodies.py", "service/ops/limits.py"),
    "hot paths dispatcher": ("service/http/routes/hot.py",),
    "Lodge.play / view (all below)": ("play (service/domain/moves.py", "view (service/domain/matches.py"),
    "engine (rules, view, redaction)": ("engine/",),
    "redis-py (calls and parsing)": ("redis/",),
    "token (auth)": ("service/domain/auth.py",),
    "JSON (orjson)": ("orjson",),
    "prometheus_client": ("prometheus_client/",),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=["move", "view"], default="move")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--game", default="biberbande")
    parser.add_argument("--app", default=LODGE_APP)
    args = parser.parse_args()
    spy = shutil.which("py-spy") or str(Path(__file__).parents[1] / ".venv" / "bin" / "py-spy")
    work = Path(tempfile.mkdtemp(prefix="lodge-profile-"))
    redis, url = start_redis(work)
    server = None
    try:
        server, base = http_bench.start(args.app, url, "gevent", http_bench.NO_LIMITS)
        (worker,) = worker_pids(server)
        stop = threading.Event()
        seeds = iter(range(10_000, 10_000_000, 100_000))

        def load() -> None:
            session = requests.Session()
            client = http_bench.LodgeClient(base, session, args.game, 4, next(seeds))
            work_once = getattr(client, args.scenario)
            while not stop.is_set():
                work_once()

        threads = [threading.Thread(target=load) for _ in range(http_bench.CLIENTS)]
        for t in threads:
            t.start()
        time.sleep(1)
        out = work / "stacks.txt"
        subprocess.run([spy, "record", "--pid", str(worker), "--duration", str(int(args.seconds)),
                        "--rate", "500", "--format", "raw", "--output", str(out), "--nonblocking"],
                       check=True, capture_output=True)
        stop.set()
        for t in threads:
            t.join()
        report = summarise(out.read_text())
        print(report)
        target = ROOT / ".bench" / f"profile-{args.scenario}.txt"
        target.parent.mkdir(exist_ok=True)
        target.write_text(report + "\n")
    finally:
        if server is not None:
            stop_process(server, timeout=20)
        stop_process(redis)


def summarise(collapsed: str) -> str:
    """Per-layer inclusive shares and the top own-time functions (Markdown)."""
    total = 0
    layers: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    idle = 0
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        frames = stack.split(";")
        if any(f.startswith(("wait (", "select (", "poll (", "run (gevent/hub")) for f in frames[-2:]):
            idle += n
            continue
        total += n
        for layer, markers in LAYERS.items():
            if any(m in f for f in frames for m in markers):
                layers[layer] += n
        own[frames[-1]] += n
    lines = [f"busy samples: {total} (idle in the hub: {idle})", "", "| layer (inclusive) | share |", "|---|---|"]
    lines += [f"| {layer} | {100 * n / total:.1f} % |" for layer, n in layers.most_common()]
    lines += ["", "| function (own time) | share |", "|---|---|"]
    lines += [f"| `{name}` | {100 * n / total:.1f} % |" for name, n in own.most_common(25)]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
