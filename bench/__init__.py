"""Benchmarks of Lodge (``make bench``); not part of the tests."""

import json
from pathlib import Path

from devtools.servers import ROOT


def write_report(report: dict, name: str) -> Path:
    """Write a benchmark's JSON report to ``.bench/<name>`` and say where."""
    out = ROOT / ".bench" / name
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written to {out.relative_to(ROOT)}")
    return out
