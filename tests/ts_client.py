"""The TypeScript client under clients/typescript: npm ci when its
node_modules are missing or older than package-lock.json, then the esbuild
bundles (``npm run build``), as ``make ts-client`` does."""
from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ROOT / "clients" / "typescript"
BUNDLE = CLIENT / "dist" / "lodge-client.js"
NODE_TEST = CLIENT / "dist" / "test" / "play.test.mjs"


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
    with open(CLIENT / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _build()


def _build() -> None:
    stamp = CLIENT / "node_modules" / ".package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < (CLIENT / "package-lock.json").stat().st_mtime:
        done = run("npm", "ci", "--no-audit", "--no-fund")
        if done.returncode:
            raise RuntimeError(f"npm ci failed:\n{done.stdout}\n{done.stderr}")
    sources = [*(CLIENT / "src").glob("*.ts"), *(CLIENT / "test").glob("*.ts"), CLIENT / "build.mjs"]
    if not (BUNDLE.exists() and NODE_TEST.exists()) or max(p.stat().st_mtime for p in sources) > min(
            BUNDLE.stat().st_mtime, NODE_TEST.stat().st_mtime):
        done = run("npm", "run", "build")
        if done.returncode:
            raise RuntimeError(f"npm run build failed:\n{done.stdout}\n{done.stderr}")
