"""What the benchmark needs beyond devtools/servers.py (which starts redis-server
and gunicorn on free loopback ports and stops them by PID): a server's CPU
time, read from /proc, so throughput can be quoted per server CPU-second."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(proc: subprocess.Popen) -> float:
    """User + system CPU of a process and all its live descendants."""
    total = 0.0
    for pid in _tree(proc.pid):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return total


def _tree(root: int) -> list[int]:
    """``root`` and every descendant, from the parent links in /proc."""
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
