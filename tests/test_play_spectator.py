"""/play as a spectator and as a replay viewer in headless Chromium (tests/browser.py).

* A spectator page follows a match that another client plays over HTTP: every move shows up
  through the stream (EventSource) without a reload, and nothing hidden appears on the page.
* A finished match's record is replayed (into a scratch match through the API, spectator view
  per step): stepped to the end it shows the record's result; stepping back hides it again.
"""
from __future__ import annotations

import random
from typing import Any

import pytest

from tests import browser
from tests.test_play_games import moved_past, page_state, wait_for

pytestmark = [pytest.mark.live,
              pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")]


def create(base: str, game: str, options: dict[str, Any]) -> dict[str, Any]:
    status, created = browser.http_json("POST", f"{base}/v1/matches", {
        "game": game, "players": ["ana", "bo"], "seed": 7, "options": options})
    assert status == 201
    return created


def random_move(base: str, created: dict[str, Any], rng: random.Random) -> int | None:
    """One random legal move by the seat to act (over HTTP); the new version, or None if finished."""
    match = f"{base}/v1/matches/{created['match_id']}"
    _, view = browser.http_json("GET", match)
    if view["status"] != "active":
        return None
    token = created["seats"][view["to_act"][0]]["token"]
    _, legal = browser.http_json("GET", f"{match}/legal-moves", token=token)
    status, body = browser.http_json("POST", f"{match}/moves", {"move": rng.choice(legal["moves"])}, token=token)
    assert status == 200
    return int(body["version"])


def test_spectator_follows_a_match_without_reload(driver: Any, live_server: str):
    from selenium.webdriver.common.by import By

    created = create(live_server, "biberbande", {"rounds": 3})
    driver.get(f"{live_server}/play#/watch/{created['match_id']}")
    wait_for(driver, lambda d: page_state(d)["version"] == 0)
    wait_for(driver, lambda d: d.find_element(By.ID, "conn").get_attribute("data-state") == "live")
    loaded = driver.execute_script("return window.lodgePlay.loadedAt")
    rng = random.Random(1)
    for _ in range(12):
        version = random_move(live_server, created, rng)
        assert version is not None
        wait_for(driver, moved_past(version - 1))
        assert page_state(driver)["version"] == version
        assert page_state(driver)["moves"] == 0  # a spectator gets no controls
        # the page shows face up exactly what the spectator view shows (BB-5.6), remembers nothing
        _, view = browser.http_json("GET", f"{live_server}/v1/matches/{created['match_id']}")
        faces = driver.execute_script(
            "return [...document.querySelectorAll('.seat-panel .card')].map(c => c.dataset.card ?? null)")
        assert faces == [v for p in view["players"] for v in p["display"]]
        assert not driver.find_elements(By.CSS_SELECTOR, ".card.known")
    assert driver.execute_script("return window.lodgePlay.loadedAt") == loaded
    assert "Spectating" in driver.find_element(By.ID, "moves").text


def test_replay_stepped_to_the_end_shows_the_records_result(driver: Any, live_server: str):
    from selenium.webdriver.common.by import By

    created = create(live_server, "thirteen-beavers", {"board": "short", "max_turns": 40})
    rng = random.Random(2)
    while random_move(live_server, created, rng) is not None:
        pass
    _, record = browser.http_json("GET", f"{live_server}/v1/matches/{created['match_id']}/record")
    moves = len(record["moves"])
    driver.get(f"{live_server}/play#/replay/{created['match_id']}")
    def step(d: Any) -> int:  # read in one script: the page redraws the stepper after every step
        return int(d.execute_script("const el = document.getElementById('step'); return el ? el.dataset.step : -1"))

    wait_for(driver, lambda d: step(d) == 0)
    assert int(driver.find_element(By.ID, "step").get_attribute("data-moves")) == moves
    driver.find_element(By.CSS_SELECTOR, "button[aria-label='Forward one move']").click()
    wait_for(driver, lambda d: step(d) == 1)
    assert page_state(driver)["version"] >= 1
    driver.find_element(By.CSS_SELECTOR, "button[aria-label='End']").click()
    wait_for(driver, lambda d: step(d) == moves, timeout=120)
    result = driver.find_element(By.ID, "result")
    assert result.get_attribute("data-winners") == ",".join(map(str, record["result"]["winners"]))
    browser.ARTIFACTS.mkdir(exist_ok=True)
    assert driver.save_screenshot(str(browser.ARTIFACTS / "play-replay-end.png"))
    driver.find_element(By.CSS_SELECTOR, "button[aria-label='Back one move']").click()
    wait_for(driver, lambda d: step(d) == moves - 1)
    assert not driver.find_elements(By.ID, "result")
    assert page_state(driver)["status"] == "active"
