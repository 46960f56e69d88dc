"""What /play tells a person, in headless Chromium (tests/browser.py): a stale version (409)
refreshes the board and says so, an illegal move (422) shows the engine's reason, a stream the
server cuts is resumed by the browser with ``Last-Event-ID`` (the page keeps following the
match), and a clock shows a countdown.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests import browser
from tests.live.test_play_games import moved_past, page_state, wait_for
from tests.live.test_play_spectator import create, random_move

pytestmark = [pytest.mark.live,
              pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")]


def open_as_seat(d: Any, base: str, created: dict[str, Any], seat: int = 0) -> None:
    match_id = created["match_id"]
    d.get(f"{base}/play")
    d.execute_script("localStorage.setItem(arguments[0], arguments[1])", f"lodge:match:{match_id}",
                     json.dumps({"token": created["seats"][seat]["token"]}))
    d.get(f"{base}/play#/match/{match_id}")
    wait_for(d, lambda drv: page_state(drv)["moves"] > 0)


def notice(d: Any) -> str:
    from selenium.webdriver.common.by import By

    return str(d.find_element(By.ID, "notice").text)


def test_stale_version_refreshes_the_board(driver: Any, live_server: str):
    from selenium.webdriver.common.by import By

    created = create(live_server, "thirteen-beavers", {})
    open_as_seat(driver, live_server, created)
    driver.execute_script("window.lodgePlay.current.stop()")  # the page no longer hears the stream
    match = f"{live_server}/v1/matches/{created['match_id']}"
    status, _ = browser.http_json("POST", f"{match}/moves?seat=0", {"move": {"type": "guess", "dir": "higher"}},
                                  token=created["admin_token"])  # the admin moves for seat 0 meanwhile
    assert status == 200
    _, now = browser.http_json("GET", match)
    driver.find_element(By.CSS_SELECTOR, "#moves button.move").click()
    wait_for(driver, lambda d: "moved on" in notice(d))
    wait_for(driver, lambda d: page_state(d)["version"] == now["version"])  # refreshed


def test_illegal_move_shows_the_engines_reason(driver: Any, live_server: str):
    created = create(live_server, "biberbande", {})
    open_as_seat(driver, live_server, created)
    driver.execute_script("window.lodgePlay.current.play({type: 'knock'})")  # not legal before drawing
    wait_for(driver, lambda d: notice(d).startswith("Not allowed: "))
    _, problem = browser.http_json("POST", f"{live_server}/v1/matches/{created['match_id']}/moves",
                                   {"move": {"type": "knock"}}, token=created["seats"][0]["token"])
    assert problem["code"] == "illegal_move" and notice(driver) == f"Not allowed: {problem['detail']}"
    wait_for(driver, lambda d: page_state(d)["moves"] > 0)  # the offered moves are still there (after any redraw)


def test_a_cut_stream_is_resumed(driver: Any, tmp_path: Path):
    """gunicorn with STREAM_MAX=1: the server ends every stream after a second (no ``end``);
    the browser reconnects by itself with Last-Event-ID and the page keeps following."""
    from tests.conftest import start_gunicorn, stop_process

    proc, base = start_gunicorn(tmp_path, None, workers=1, extra_env={"STREAM_MAX": "1"})
    try:
        created = create(base, "biberclan", {})
        driver.get(f"{base}/play#/watch/{created['match_id']}")
        wait_for(driver, lambda d: page_state(d)["version"] == 0)
        rng = random.Random(3)
        for _ in range(4):
            wait_for(driver, lambda d: d.execute_script("return window.lodgePlay.reconnects") > 0)
            version = random_move(base, created, rng)
            assert version is not None
            wait_for(driver, moved_past(version - 1))
            driver.execute_script("window.lodgePlay.reconnects = 0")
        log = driver.execute_script("return window.lodgePlay.current.log.map(e => e.version)")
        assert log == sorted(log) and log[-1] == page_state(driver)["version"]  # no gap, no repeat
    finally:
        stop_process(proc, timeout=20)


def test_clock_countdown(driver: Any, live_server: str):
    from selenium.webdriver.common.by import By

    status, created = browser.http_json("POST", f"{live_server}/v1/matches", {
        "game": "mein-lieber-biber", "players": ["ana", "bo"], "clock": {"per_move_ms": 60000}})
    assert status == 201 and created["state"]["deadline"], created
    open_as_seat(driver, live_server, created)
    first = wait_for(driver, lambda d: d.find_element(By.ID, "clock").text)
    assert first.startswith("ana: ") and first.endswith(" s left")
    seconds = int(first.split()[1])
    assert 50 <= seconds <= 60
    wait_for(driver, lambda d: int(d.find_element(By.ID, "clock").text.split()[1]) < seconds)


def test_resign_ends_a_two_seat_match(driver: Any, live_server: str):
    from selenium.webdriver.common.by import By

    created = create(live_server, "mein-lieber-biber", {})
    open_as_seat(driver, live_server, created)
    driver.execute_script("window.confirm = () => true")
    driver.find_element(By.CSS_SELECTOR, "#moves button.resign").click()
    winners = wait_for(driver, lambda d: d.find_elements(By.ID, "result")
                       and d.find_element(By.ID, "result").get_attribute("data-winners"))  # read again if redrawn
    assert winners == "1"
    assert not driver.find_elements(By.CSS_SELECTOR, "#moves button")  # nothing more to do


def test_moves_are_played_with_the_keyboard(driver: Any, live_server: str):
    """Tab reaches the offered moves (real buttons with their labels as names), Enter plays one."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    created = create(live_server, "thirteen-beavers", {})
    open_as_seat(driver, live_server, created)
    active = "const a = document.activeElement; return a && a.classList.contains('move') ? a.textContent : null"
    for _ in range(30):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        if driver.execute_script(active):
            break
    name = driver.execute_script(active)
    assert name in ("Guess higher", "Guess lower"), name
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait_for(driver, moved_past(0))
