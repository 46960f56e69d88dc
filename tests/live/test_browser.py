"""Real browser tests: headless Chromium (Debian's packages, driven by
selenium) with every non-loopback host unresolvable.

* A page from a second loopback origin plays through the generated
  TypeScript client bundled for the browser: create, ETag, 304, legal moves,
  a long-poll answered by a move posted with Idempotency-Key and If-Match, a
  409 problem read from the body, delete.  It works only if the CORS headers
  are right (contract 1.1: preflights, exposed ETag/Location, errors).
* With ``CORS_ORIGINS`` naming another origin the same page is refused.
* ``/docs`` and ``/docs/`` render Swagger UI's operation list from the
  installed assets only; a screenshot goes to test-artifacts/.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests import browser, ts_client

pytestmark = [pytest.mark.live,
              pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or ""),
              pytest.mark.skipif(ts_client.missing() is not None, reason=ts_client.missing() or "")]

PAGES = Path(__file__).resolve().parents[1] / "pages"
#: explicit waits: the page's whole script, the docs' first render
WAIT = 60


@pytest.fixture(scope="module")
def driver() -> Any:
    with browser.chromium() as d:
        yield d


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The second origin: the page and the client bundle on a static server."""
    try:
        ts_client.ensure_built()
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    folder = tmp_path_factory.mktemp("origin")
    shutil.copy(PAGES / "play.html", folder / "index.html")
    shutil.copy(ts_client.BUNDLE, folder / "lodge-client.js")
    with browser.static_server(folder) as base:
        yield base


def _run_page(driver: Any, origin: str, api: str) -> dict[str, Any]:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(f"{origin}/index.html?api={api}")
    out = WebDriverWait(driver, WAIT).until(
        lambda d: (el := d.find_element(By.ID, "out")).get_attribute("data-done") == "1" and el)
    return json.loads(out.text)


def test_page_on_another_origin_plays_through_the_ts_client(driver: Any, origin: str, live_server: str):
    assert origin != live_server
    out = _run_page(driver, origin, live_server)
    assert "error" not in out, out
    assert out["created"] == 201 and out["location"].startswith("/v1/matches/")  # Location exposed
    assert out["createdEtag"] == 0 and out["viewEtag"] == 0                      # ETag exposed
    assert out["notModified"] == 304
    assert out["played"] == 200 and out["playedEtag"] == 1
    assert out["polled"] == 200 and out["polledVersion"] == 1 and out["polledTypes"]
    assert (out["staleStatus"], out["staleCode"]) == (409, "version_conflict")  # problem body readable
    assert out["deleted"] == 204
    assert not [u for u in browser.requested_urls(driver) if not u.startswith("http://127.0.0.1:")]


def test_page_from_an_origin_not_allowed_is_refused(driver: Any, origin: str, tmp_path: Path):
    from tests.conftest import start_gunicorn, stop_process

    proc, api = start_gunicorn(tmp_path, None, workers=1, extra_env={"CORS_ORIGINS": "http://127.0.0.1:9"})
    try:
        out = _run_page(driver, origin, api)
    finally:
        stop_process(proc, timeout=20)
    assert "Failed to fetch" in out.get("error", ""), out


@pytest.mark.parametrize("path", ["/docs", "/docs/"])
def test_docs_render_offline(driver: Any, live_server: str, path: str):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.requested_urls(driver)  # drop the log so far
    driver.get_log("browser")
    driver.get(live_server + path)
    WebDriverWait(driver, WAIT).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".opblock")) >= 10)
    summaries = [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")]
    assert "/v1/matches/{match_id}/moves" in summaries and "/v1/games" in summaries
    assert driver.find_elements(By.CSS_SELECTOR, ".opblock-tag")  # the tag sections
    resources = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert any("/docs/assets/swagger-ui-bundle.js" in r for r in resources), resources
    foreign = [u for u in [*resources, *browser.requested_urls(driver)]
               if not u.startswith(live_server) and not u.startswith("data:")]
    assert not foreign, f"the docs asked another host: {foreign}"
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors  # e.g. no missing favicon
    browser.ARTIFACTS.mkdir(exist_ok=True)
    name = "docs.png" if path == "/docs" else "docs-slash.png"
    assert driver.save_screenshot(str(browser.ARTIFACTS / name))


def test_favicon_is_served(live_server: str):
    """/favicon.ico (asked for by pages without an icon link, /docs) and the icon /play links."""
    import urllib.request

    for path in ("/favicon.ico", "/play/favicon.svg"):
        with urllib.request.urlopen(live_server + path, timeout=10) as response:
            assert response.headers["Content-Type"].startswith("image/svg+xml")
            assert response.read().startswith(b"<svg")
