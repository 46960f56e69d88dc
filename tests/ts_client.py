"""The TypeScript client under clients/typescript: npm ci when its
node_modules are missing or older than package-lock.json, then dist/
(``npm run build``: the esbuild bundles and tsc's declarations), as
``make ts-client`` does; ``npm pack`` for the package tarball."""
from __future__ import annotations

import fcntl
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ROOT / "clients" / "typescript"
BUNDLE = CLIENT / "dist" / "lodge-client.js"
NODE_TEST = CLIENT / "dist" / "test" / "play.test.mjs"
FOLLOW_TEST = CLIENT / "dist" / "test" / "follow.test.mjs"
DECLARATIONS = CLIENT / "dist" / "index.d.ts"


def missing() -> str | None:
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            return f"{tool} is missing (Node 20 is needed for the TypeScript client tests)"
    return None


def run(*args: str, timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=CLIENT, capture_output=True, text=True, timeout=timeout, env=env)


def ensure_built() -> None:
    """node_modules installed and dist/ built (raises with npm's output if
    not); one process at a time (pytest-xdist workers share the folder)."""
    with _locked():
        _build()


def pack(destination: Path) -> Path:
    """``npm pack`` (its ``prepack`` builds dist/ afresh) into ``destination``:
    the tarball's path."""
    with _locked():
        _build()
        done = run("npm", "pack", "--pack-destination", str(destination))
    if done.returncode:
        raise RuntimeError(f"npm pack failed:\n{done.stdout}\n{done.stderr}")
    return destination / done.stdout.strip().splitlines()[-1]


@contextmanager
def _locked() -> Iterator[None]:
    with open(CLIENT / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _build() -> None:
    stamp = CLIENT / "node_modules" / ".package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < (CLIENT / "package-lock.json").stat().st_mtime:
        done = run("npm", "ci", "--no-audit", "--no-fund")
        if done.returncode:
            raise RuntimeError(f"npm ci failed:\n{done.stdout}\n{done.stderr}")
    sources = [*(CLIENT / "src").glob("*.ts"), *(CLIENT / "test").glob("*.ts"), CLIENT / "build.mjs",
               CLIENT / "tsconfig.build.json"]
    outputs = (BUNDLE, NODE_TEST, FOLLOW_TEST, DECLARATIONS)
    if not all(p.exists() for p in outputs) or max(p.stat().st_mtime for p in sources) > min(
            p.stat().st_mtime for p in outputs):
        done = run("npm", "run", "build")
        if done.returncode:
            raise RuntimeError(f"npm run build failed:\n{done.stdout}\n{done.stderr}")
