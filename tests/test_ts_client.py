"""The generated TypeScript client (clients/typescript): it is what
openapi-typescript makes of the committed openapi/openapi.json, it
type-checks, and in Node it plays a whole random match of every game against
a live server (gunicorn on a real Redis)."""
from __future__ import annotations

import os

import pytest

from tests import ts_client

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
