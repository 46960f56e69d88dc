"""The Makefile a newcomer meets: ``make help`` lists every target from its
``##`` comment, and every .PHONY name is a real target (no phantoms)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = (ROOT / "Makefile").read_text()


def _targets() -> set[str]:
    return set(re.findall(r"^([a-zA-Z][a-zA-Z0-9_-]*):(?!=)", MAKEFILE, re.MULTILINE))


def test_every_phony_target_exists():
    declared = re.search(r"^\.PHONY:(.*)$", MAKEFILE, re.MULTILINE)
    assert declared, "the Makefile declares its .PHONY targets"
    phony = set(declared.group(1).split())
    assert phony <= _targets(), f"phantom targets: {sorted(phony - _targets())}"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is missing")
def test_make_help_lists_the_documented_targets():
    done = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    listed = dict(re.findall(r"^\s+make (\S+)\s+(.+)$", done.stdout, re.MULTILINE))
    documented = set(re.findall(r"^## .*\n([a-zA-Z][a-zA-Z0-9_-]*):", MAKEFILE, re.MULTILINE))
    assert set(listed) == documented
    assert {"help", "run", "test", "test-fast", "openapi", "ts-client", "browser", "clean"} <= set(listed)
    assert all(text.strip() for text in listed.values())
    plain = subprocess.run(["make", "-s"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert plain.stdout == done.stdout  # `make` alone shows the help
