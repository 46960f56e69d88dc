"""Through a real shared cache: Varnish (Debian's, its built-in VCL, which
keeps an answer without ``Cache-Control`` for ``default_ttl``) in front of
gunicorn with listed CORS origins.  What a spectator reads stays current,
no caller gets another's view or legal moves, and each origin gets its own
CORS headers (docs/api.md "Caching")."""
from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from devtools.servers import free_port, stop_process, tail
from tests.conftest import requests_api, start_gunicorn
from tests.http_helpers import W1_MOVES, W1_OPTIONS

pytestmark = pytest.mark.live

ORIGINS = ("https://a.example", "https://b.example")


def varnishd() -> str:
    path = shutil.which("varnishd") or ("/usr/sbin/varnishd" if Path("/usr/sbin/varnishd").exists() else None)
    assert path, "varnishd is missing: `make test` installs Debian's varnish"
    return path


@pytest.fixture(scope="module")
def cached(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(base URL through Varnish, base URL of gunicorn itself): one worker on
    the embedded store, Varnish keeping what it may for two minutes."""
    workdir = tmp_path_factory.mktemp("caching")
    server, backend = start_gunicorn(workdir, None, 1, {"CORS_ORIGINS": ",".join(ORIGINS),
                                                        "RATE_LIMIT_ENABLED": "false"})
    port, log = free_port(), workdir / "varnish.log"
    with open(log, "wb") as out:
        cache = subprocess.Popen(
            [varnishd(), "-F", "-j", "none", "-T", "none", "-n", str(workdir / "varnish"), "-s", "malloc,16m",
             "-a", f"127.0.0.1:{port}", "-b", backend.removeprefix("http://"), "-p", "default_ttl=120"],
            stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while not _answers(base):
            assert cache.poll() is None and time.monotonic() < deadline, f"varnish did not start:\n{tail(log)}"
            time.sleep(0.1)
        yield base, backend
    finally:
        stop_process(cache, timeout=10)
        stop_process(server, timeout=20)


def _answers(base: str) -> bool:
    try:
        return requests.get(base + "/healthz", timeout=1).status_code == 200
    except requests.RequestException:
        return False


def _get(base: str, path: str, token: str | None = None, origin: str | None = None) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if origin:
        headers["Origin"] = origin
    r = requests.get(base + path, headers=headers, timeout=10)
    assert r.status_code == 200, (path, r.status_code, r.text)
    return r


def test_a_spectator_reads_the_match_as_it_is_now(cached: tuple[str, str]):
    """A spectator's view and events (no token: a shared cache may keep
    them) follow the moves, asked again after each through the cache."""
    base, backend = cached
    m = requests_api(backend).create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    for version, (seat, move) in enumerate(W1_MOVES[:3], start=1):
        assert _get(base, f"/v1/matches/{m.id}").json()["version"] == version - 1
        assert _get(base, f"/v1/matches/{m.id}/events?after=-1").json()["version"] == version - 1
        assert m.play(seat, move).status == 200
    assert _get(base, f"/v1/matches/{m.id}").json()["version"] == 3
    assert _get(base, f"/v1/matches/{m.id}/events?after=-1").json()["version"] == 3


def test_no_caller_gets_another_callers_answer(cached: tuple[str, str]):
    """The same URLs asked by each seat, the admin and a spectator in turn
    through the cache: each answer is the caller's own."""
    base, backend = cached
    m = requests_api(backend).create(["ana", "bo"], seed=11, options=W1_OPTIONS)
    callers: list[tuple[str | None, dict[str, Any]]] = [
        (m.token(0), {"role": "seat", "seat": 0}), (m.token(1), {"role": "seat", "seat": 1}),
        (m.admin, {"role": "admin", "seat": None}), (None, {"role": "spectator", "seat": None})]
    for _ in range(2):
        for token, viewer in callers:
            assert _get(base, f"/v1/matches/{m.id}", token).json()["viewer"] == viewer
            if token in (m.token(0), m.token(1)):
                legal = _get(base, f"/v1/matches/{m.id}/legal-moves", token).json()
                assert legal["seat"] == viewer["seat"], legal


def test_each_origin_gets_its_own_cors_headers(cached: tuple[str, str]):
    """An answer kept for one origin (or for none) is not given to another:
    every answer says ``Vary: Origin``."""
    base, _backend = cached
    for path in ("/v1/games", "/v1/games/biberbande"):
        for origin in ("https://elsewhere.example", *ORIGINS, None):
            r = _get(base, path, origin=origin)
            if origin is not None:  # (without an Origin, flask-cors names the first listed one)
                assert r.headers.get("Access-Control-Allow-Origin") == (origin if origin in ORIGINS else None), (
                    path, origin, dict(r.headers))
        again = _get(base, path, origin=ORIGINS[0])
        assert len(again.headers["X-Varnish"].split()) == 2, "not kept: the cache is not caching"  # a hit
        assert again.headers["Access-Control-Allow-Origin"] == ORIGINS[0]
