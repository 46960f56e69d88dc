"""The ``lodge-arena`` console script: :func:`arena.cli.main`, or a clear
message when the arena's packages (the ``arena`` extra) are not installed,
e.g. after only ``make run``, which installs what serving needs."""
from __future__ import annotations

import sys

#: What the ``arena`` extra of pyproject.toml installs, by import name.
ARENA_PACKAGES = ("requests", "matplotlib", "tqdm")


def main() -> int:
    try:
        from arena.cli import main as run
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing not in ARENA_PACKAGES:
            raise
        sys.exit(f"lodge-arena needs the arena's packages ({missing} is missing): "
                 "run `make install`, or `.venv/bin/pip install -e '.[arena]'`")
    return run()
