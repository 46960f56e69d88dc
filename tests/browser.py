"""Headless Chromium for the browser tests: Debian's /usr/bin/chromium and
/usr/bin/chromedriver driven by selenium (no browser download: the driver
path is given, so Selenium Manager is never asked), and a tiny static HTTP
server on another loopback port, a second origin for pages that call Lodge.

Every non-loopback host resolves to nothing (``--host-resolver-rules``), so a
page that tries to reach another host fails visibly instead of waiting.
"""
from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
#: only loopback resolves; everything else is NOTFOUND
OFFLINE_RULES = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not Path(path).exists() and not shutil.which(Path(path).name):
            return f"{path} is missing: `make test` installs Debian's chromium and chromium-driver"
    return None


@contextmanager
def chromium(width: int = 1280, height: int = 1600) -> Iterator[Any]:
    """A headless Chromium session (selenium WebDriver), quit at the end."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--metrics-recording-only", "--disable-default-apps", f"--window-size={width},{height}",
                f"--host-resolver-rules={OFFLINE_RULES}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    service = Service(executable_path=shutil.which("chromedriver") or CHROMEDRIVER)
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def requested_urls(driver: Any) -> list[str]:
    """Every URL the browser asked for since the last call (CDP network log)."""
    import json

    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def static_server(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on a free loopback port (a second origin); yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="static-origin", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def http_json(method: str, url: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    """One JSON request to Lodge from the test itself (another client than the browser):
    (status, parsed body or None).  HTTP errors are returned, not raised."""
    import json
    import urllib.error
    import urllib.request

    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as err:
        raw = err.read()
        return err.code, json.loads(raw) if raw else None
