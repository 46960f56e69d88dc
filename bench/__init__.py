"""Benchmarks of Lodge (``make bench``); not part of the tests.

Each benchmark drives its servers from this one loopback client, far faster
and with far more connections than any one real client: the per-client
limits (rate limits, long-polls, connections) are off in the servers they
start, unless the environment sets them.
"""

import json
import os
from pathlib import Path

from devtools.servers import ROOT

for _limit, _off in (("RATE_LIMIT_ENABLED", "false"), ("MAX_WAITS_PER_CLIENT", "0"),
                     ("MAX_CONNECTIONS_PER_CLIENT", "0")):
    os.environ.setdefault(_limit, _off)


def write_report(report: dict, name: str) -> Path:
    """Write a benchmark's JSON report to ``.bench/<name>`` and say where."""
    out = ROOT / ".bench" / name
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written to {out.relative_to(ROOT)}")
    return out
