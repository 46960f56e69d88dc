"""``make bench``: engine playouts for every game, then HTTP against the reference.

Prints a JSON report and writes it to .bench/results.json.
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from bench import engine_bench, http_bench, write_report
from devtools.servers import start_redis, stop_process
from engine import REGISTRY


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-http", action="store_true", help="engine benchmark only")
    parser.add_argument("--skip-engine", action="store_true", help="HTTP benchmark only")
    parser.add_argument("--worker-class", action="append", choices=["gevent", "gthread"],
                        help="gunicorn worker class of the HTTP benchmark (repeat to compare; default gevent)")
    args = parser.parse_args()
    report: dict = {}
    if not args.skip_engine:
        report["engine"] = engine_bench.run()
        print(json.dumps({"engine": report["engine"]}, indent=2), flush=True)
    if not args.skip_http:
        redis, url = start_redis(Path(tempfile.mkdtemp(prefix="lodge-bench-")))
        try:
            report["http"] = [http_bench.run(redis, url, game.id, worker_class=worker_class)
                              for game in REGISTRY for worker_class in args.worker_class or ["gevent"]]
        finally:
            stop_process(redis)
        print(json.dumps({"http": report["http"]}, indent=2), flush=True)
    write_report(report, "results.json")



if __name__ == "__main__":
    main()
