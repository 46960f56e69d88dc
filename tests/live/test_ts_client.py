"""The generated TypeScript client (clients/typescript): it is what
openapi-typescript makes of the committed openapi/openapi.json, it
type-checks, in Node it plays a whole random match of every game against a
live server (gunicorn on a real Redis) and follows streams across cut
connections, and its ``npm pack`` tarball installs into a throw-away project
outside the repository, where the client README's snippets type-check under
``tsc --strict`` and run."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools import servers
from devtools.servers import ROOT, free_port, stop_process
from tests import browser, ts_client
from tests.conftest import requests_api, start_gunicorn

pytestmark = pytest.mark.skipif(ts_client.missing() is not None, reason=ts_client.missing() or "")


@pytest.fixture(scope="module")
def built() -> None:
    try:
        ts_client.ensure_built()
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)


def test_committed_schema_is_generated_from_the_committed_document(built: None, tmp_path):
    out = tmp_path / "schema.d.ts"
    done = ts_client.run("npx", "--no-install", "openapi-typescript", "../../openapi/openapi.json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    committed = (ts_client.CLIENT / "src" / "schema.d.ts").read_text()
    assert out.read_text() == committed, (
        "clients/typescript/src/schema.d.ts drifted from openapi/openapi.json: run `make ts-client-generate`")


def test_client_and_its_tests_type_check(built: None):
    done = ts_client.run("npx", "--no-install", "tsc", "--noEmit", "-p", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_browser_bundle_exposes_the_client(built: None):
    bundle = ts_client.BUNDLE.read_text()
    assert bundle.startswith('"use strict";\nvar Lodge') or "var Lodge" in bundle[:200]


@pytest.mark.live
def test_node_client_plays_a_whole_match_of_every_game(built: None, live_server: str):
    env = dict(os.environ, LODGE_URL=live_server)
    done = ts_client.run("node", "--test", "--test-reporter=spec", str(ts_client.NODE_TEST), timeout=600, env=env)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    for game in ("biberbande", "biberclan", "mein-lieber-biber", "thirteen-beavers"):
        assert f"a whole random match of {game}" in done.stdout


@pytest.fixture(scope="module")
def short_streams(redis_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """gunicorn on the real Redis that ends every stream after 1 s
    (``STREAM_MAX``), so a follower also meets the server's clean closes."""
    url = redis_server.rsplit("/", 1)[0] + "/7"
    proc, base = start_gunicorn(tmp_path_factory.mktemp("gunicorn-short-streams"), url, workers=1,
                                extra_env={"STREAM_MAX": "1"})
    try:
        yield base
    finally:
        stop_process(proc, timeout=20)


@pytest.mark.live
def test_node_client_follows_streams_across_dropped_connections(built: None, short_streams: str):
    env = dict(os.environ, LODGE_URL=short_streams)
    done = ts_client.run("node", "--test", "--test-reporter=spec", str(ts_client.FOLLOW_TEST), timeout=300, env=env)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "every version once, in order, across cut connections" in done.stdout


README_SNIPPETS = re.findall(r"```ts\n(.*?)```", (ts_client.CLIENT / "README.md").read_text(), re.DOTALL)
#: The throw-away project: ES modules, strict, Node's own module resolution,
#: no Node types (the client needs none), the installed declarations checked too.
CONSUMER_TSCONFIG = {"compilerOptions": {
    "strict": True, "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
    "lib": ["ES2022", "DOM"], "types": [], "skipLibCheck": False, "outDir": "out"}, "include": ["*.ts"]}


def test_package_declares_an_installable_es_module():
    package = json.loads((ts_client.CLIENT / "package.json").read_text())
    assert "private" not in package
    assert package["type"] == "module"
    assert package["exports"]["."] == {"types": "./dist/index.d.ts", "import": "./dist/lodge-client.mjs"}
    assert len(README_SNIPPETS) >= 2, "the client README's ts snippets are gone"


@pytest.mark.live
def test_packed_client_installs_type_checks_and_runs_outside_the_repository(
        built: None, short_streams: str, tmp_path: Path):
    """npm pack; a fresh project in a temporary directory installs the
    tarball (and TypeScript at the version the client pins), compiles every
    ``ts`` snippet of the client README with ``tsc --strict`` and runs each
    against a live server."""
    project = tmp_path / "consumer"
    project.mkdir()
    assert not project.resolve().is_relative_to(ROOT), "the consumer must live outside the repository"
    try:
        tarball = ts_client.pack(tmp_path)
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    with tarfile.open(tarball) as packed:
        names = set(packed.getnames())
    assert {"package/dist/index.d.ts", "package/dist/schema.d.ts", "package/dist/follow.d.ts",
            "package/dist/lodge-client.mjs", "package/dist/lodge-client.js", "package/README.md"} <= names, names
    assert not any("/test/" in name for name in names), names

    typescript = json.loads((ts_client.CLIENT / "package.json").read_text())["devDependencies"]["typescript"]
    (project / "package.json").write_text(json.dumps({"name": "consumer", "private": True, "type": "module"}))
    (project / "tsconfig.json").write_text(json.dumps(CONSUMER_TSCONFIG))
    for i, snippet in enumerate(README_SNIPPETS):
        (project / f"readme{i}.ts").write_text(snippet.replace("http://127.0.0.1:8000", short_streams))
    installed = _npm(project, "install", "--prefer-offline", "--no-audit", "--no-fund", str(tarball),
                     f"typescript@{typescript}")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    checked = _npm(project, "exec", "--no", "--", "tsc", "--strict", "-p", ".")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for i, snippet in enumerate(README_SNIPPETS):
        ran = subprocess.run(["node", f"out/readme{i}.js"], cwd=project, capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, f"README snippet {i} failed:\n{snippet}\n{ran.stdout}{ran.stderr}"
        if "follow(" in snippet:
            assert ran.stdout.splitlines()[-1] == "finished", ran.stdout[-2000:]


def _npm(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["npm", *args], cwd=project, capture_output=True, text=True, timeout=300)


#: In a page of another origin: create a match, follow it as seat 0 (EventSource,
#: the token as ?token=) while the admin plays it, pausing past STREAM_MAX now
#: and then so that the server ends the stream and EventSource reconnects.
FOLLOW_IN_A_PAGE = """
const [base, finish] = [arguments[0], arguments[arguments.length - 1]];
(async () => {
  const lodge = Lodge.createLodge(base);
  const created = await lodge.POST("/v1/matches", {
    body: { game: "biberbande", players: ["ana", "bo"], seed: 5, options: { rounds: 1 } } });
  const match = created.data;
  const versions = [];
  const following = lodge.follow(match.match_id, {
    token: match.seats[0].token, onMessage: (message) => versions.push(message.version) });
  const path = { match_id: match.match_id };
  const auth = Lodge.bearer(match.admin_token);
  let moves = 0;
  for (;;) {
    const view = (await lodge.GET("/v1/matches/{match_id}", { params: { path }, headers: auth })).data;
    if (view.status === "finished") break;
    const query = { seat: view.to_act[0] };
    const legal = (await lodge.GET("/v1/matches/{match_id}/legal-moves",
                                   { params: { path, query }, headers: auth })).data;
    await lodge.POST("/v1/matches/{match_id}/moves", {
      params: { path, query }, headers: auth, body: { move: legal.moves[0], version: legal.version } });
    moves += 1;
    if (moves % 3 === 0) await new Promise((resolve) => setTimeout(resolve, 1300));
  }
  finish({ versions, moves, end: await following.done });
})().catch((error) => finish({ error: String(error) }));
"""


@pytest.mark.live
@pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")
def test_browser_script_follows_a_match_on_eventsource(built: None, short_streams: str, tmp_path: Path):
    """The browser script (dist/lodge-client.js) in headless Chromium, on a
    page of another origin: follow uses EventSource, which reconnects by
    itself with Last-Event-ID when the server ends the stream; every version
    arrives once, in order, and the match ends "finished"."""
    shutil.copy(ts_client.BUNDLE, tmp_path / "lodge-client.js")
    (tmp_path / "index.html").write_text('<!doctype html><script src="lodge-client.js"></script>\n')
    with browser.static_server(tmp_path) as origin, browser.chromium() as driver:
        driver.get(origin + "/index.html")
        driver.set_script_timeout(90)
        outcome = driver.execute_async_script(FOLLOW_IN_A_PAGE, short_streams)
        streams = [url for url in browser.requested_urls(driver) if "/stream?" in url]
    assert "error" not in outcome, outcome
    assert outcome["end"] == "finished"
    assert outcome["versions"] == list(range(outcome["moves"] + 1))
    assert len(streams) >= 2, f"EventSource never reconnected: {streams}"
    assert all("token=" in url for url in streams)


#: Follows a match with the built ES module and prints one JSON line per
#: message, per dropped connection, and at the end.
FOLLOWER = """
import { createLodge } from %(module)s;
const [base, matchId, token] = process.argv.slice(2);
const print = (line) => console.log(JSON.stringify(line));
const following = createLodge(base).follow(matchId, {
  token, retryMs: 100,
  onMessage: (message) => print({ version: message.version }),
  onError: (error) => print({ drop: String(error) }),
});
print({ end: await following.done });
"""


@pytest.mark.live
def test_node_follow_survives_a_server_restart(built: None, redis_server: str, tmp_path: Path):
    """A follower (Node, NDJSON) on instance A; A stops (SIGTERM: its streams
    end) while the match moves on through instance B (same Redis); A comes
    back on the same port and the follower catches up: every version once,
    in order, then "finished"."""
    url = redis_server.rsplit("/", 1)[0] + "/7"
    port = free_port()
    for name in ("a", "b", "a2"):
        (tmp_path / name).mkdir()
    a, base_a = servers.start_gunicorn(tmp_path / "a", url, workers=1, port=port)
    b, base_b = start_gunicorn(tmp_path / "b", url, workers=1)
    script = tmp_path / "follower.mjs"
    script.write_text(FOLLOWER % {"module": json.dumps((ts_client.CLIENT / "dist" / "lodge-client.mjs").as_uri())})
    api = requests_api(base_b)
    match = api.create(2, seed=3, options={"rounds": 1})
    follower = subprocess.Popen(["node", str(script), base_a, match.id, match.token(0)], cwd=ts_client.CLIENT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[dict] = []
    out = follower.stdout
    assert out is not None
    reader = threading.Thread(target=lambda: lines.extend(json.loads(line) for line in out), daemon=True)
    reader.start()
    try:
        moves = _play(api, match, 3)
        _wait(lambda: {"version": moves} in lines, "the follower to see the first moves")
        stop_process(a, timeout=20)
        moves += _play(api, match, 4)
        a, _ = servers.start_gunicorn(tmp_path / "a2", url, workers=1, port=port)
        moves += _play(api, match, 10_000)
        assert follower.wait(timeout=60) == 0, follower.stderr.read() if follower.stderr else ""
        reader.join(timeout=10)
    finally:
        follower.kill()
        stop_process(a, timeout=20)
        stop_process(b, timeout=20)
    assert [line["version"] for line in lines if "version" in line] == list(range(moves + 1))
    assert any("drop" in line for line in lines), lines
    assert lines[-1] == {"end": "finished"}


def _play(api, match, count: int) -> int:
    """Up to ``count`` moves (the first legal one of the seat to act) by the admin; how many."""
    for played in range(count):
        view = api.view(match.id, match.admin).json
        if view["status"] == "finished":
            return played
        seat = view["to_act"][0]
        move = api.legal(match.id, match.admin, seat=seat).json["moves"][0]
        assert api.move(match.id, match.admin, move, view["version"], seat=seat).status == 200
    return count


def _wait(condition, what: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
