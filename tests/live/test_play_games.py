"""The front end at /play in headless Chromium (tests/browser.py: Debian's chromium, every
non-loopback host unresolvable): for each game a whole match played by clicking the offered
moves until the result shows, and the page's layout on a phone-sized screen.

* Against server bots (issue 15's bot seats): the match is created from the lobby form, a
  human seat against a heuristic bot; the page is the only client.
* Against another client: the page plays seat 0 and the test plays seat 1 over HTTP, so the
  page also follows moves it did not make through the stream, without a reload.

A screenshot of each board at mid-match goes to test-artifacts/ (git-ignored); the README's
pictures in docs/img/ are copies of them.
"""
from __future__ import annotations

import json
import random
from typing import Any

import pytest

from engine import REGISTRY
from tests import browser

pytestmark = [pytest.mark.live,
              pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")]

WAIT = 30
#: short matches: each game's ``play`` preset (few rounds, few turns)
SHORT: dict[str, dict[str, Any]] = {g.id: dict(g.declaration.presets["play"]) for g in REGISTRY}
GAMES = list(SHORT)
MID = 5  # the mid-match screenshot is taken after this many of the page's moves


def page_state(d: Any) -> dict[str, Any]:
    """What the page shows: version, status, whether a result is shown, the enabled moves."""
    return d.execute_script("""
        const st = document.getElementById('status');
        return {version: st ? Number(st.dataset.version) : -1, status: st ? st.dataset.status : null,
                result: !!document.getElementById('result'),
                moves: [...document.querySelectorAll('#moves button.move')].filter(b => !b.disabled).length};""")


def shown(d: Any) -> dict[str, Any] | bool:
    """The page's state once it shows a match, else False (for ``wait_for``)."""
    state = page_state(d)
    return state if state["version"] >= 0 else False


def click_a_move(d: Any, rng: random.Random) -> bool:
    """Click one of the offered moves (seeded choice); False if the page redrew them meanwhile."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    try:
        buttons = [b for b in d.find_elements(By.CSS_SELECTOR, "#moves button.move") if b.is_enabled()]
        assert buttons and all(b.text.strip() for b in buttons)  # every control has an accessible name
        rng.choice(buttons).click()
    except StaleElementReferenceException:
        return False
    return True


def changed_from(state: dict[str, Any]) -> Any:
    """A ``wait_for`` predicate: the page shows something else than ``state``."""
    return lambda d: page_state(d) != state


def moved_past(version: int) -> Any:
    """A ``wait_for`` predicate: the page shows a version after ``version``, or the result."""
    return lambda d: (state := page_state(d))["version"] > version or state["result"]


def wait_page(d: Any, predicate: Any, failure: str) -> Any:
    """``wait_for``, failing with what the page's notice says (the server's problem, if any)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By

    try:
        return wait_for(d, predicate)
    except TimeoutException:
        pytest.fail(f"{failure}; the page says: {d.find_element(By.ID, 'notice').text!r}", pytrace=False)


def wait_for(d: Any, predicate: Any, timeout: float = WAIT) -> Any:
    """``predicate``'s first true value; an element the page redrew between
    finding and reading it (the clock, every second) is looked up again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(d, timeout, poll_frequency=0.05,
                         ignored_exceptions=(StaleElementReferenceException,)).until(lambda drv: predicate(drv))


def play_to_the_end(d: Any, base: str, match_id: str, game: str, other: str | None = None) -> dict[str, Any]:
    """Click offered moves (seeded choice) until the result shows; with ``other`` (seat 1's
    token) the test plays seat 1 over HTTP whenever the page waits for it."""
    from selenium.webdriver.common.by import By

    rng = random.Random(f"play:{game}")
    clicks = 0
    # app.js sets lodgePlay once its imports (the boards: a top-level await) are in, which may be
    # after the load event that ``get`` waits for
    loaded = wait_for(d, lambda drv: drv.execute_script("return window.lodgePlay && window.lodgePlay.loadedAt"))
    for _ in range(2000):
        state = wait_for(d, shown)
        if state["result"]:
            break
        if state["moves"]:
            if game == "mein-lieber-biber":  # a play says where the beaver lands (MLB-4.4 a)
                labels = d.execute_script(
                    "return [...document.querySelectorAll('#moves button.move')].map(b => b.textContent)")
                assert all(" → " in text for text in labels if text.startswith("Play ")), labels
            if not click_a_move(d, rng):
                continue
            clicks += 1
            wait_page(d, moved_past(state["version"]), f"the page's move was not applied: {state}")
            if clicks <= MID and page_state(d)["status"] == "active":  # kept: the board at the MID-th move
                browser.ARTIFACTS.mkdir(exist_ok=True)
                assert d.save_screenshot(str(browser.ARTIFACTS / f"play-{game}-mid.png"))
            continue
        if other is None:  # server bots: their moves come with the page's own
            wait_page(d, changed_from(state), f"the page waits for the bots: {state}")
            continue
        _, view = browser.http_json("GET", f"{base}/v1/matches/{match_id}", token=other)
        if view["status"] == "active" and 1 in view["to_act"]:
            _, legal = browser.http_json("GET", f"{base}/v1/matches/{match_id}/legal-moves", token=other)
            status, _ = browser.http_json("POST", f"{base}/v1/matches/{match_id}/moves",
                                          {"move": rng.choice(legal["moves"]), "version": view["version"]}, token=other)
            assert status == 200
            # the page follows the other client's move through the stream
            wait_for(d, moved_past(view["version"]))
        else:
            wait_for(d, changed_from(state))  # the page is catching up with the match
    else:
        pytest.fail("the match did not end")
    assert d.execute_script("return window.lodgePlay.loadedAt") == loaded  # no reload
    assert clicks > 0
    _, final = browser.http_json("GET", f"{base}/v1/matches/{match_id}")
    assert final["status"] == "finished"
    winners = ",".join(map(str, final["result"]["winners"]))
    assert wait_for(d, lambda drv: drv.find_element(By.ID, "result").get_attribute("data-winners")) == winners
    assert not [u for u in browser.requested_urls(d) if not u.startswith(base) and not u.startswith("data:")]
    return final


def fill_lobby(d: Any, base: str, game: str, kind: str, seed: str = "42", create: bool = True) -> None:
    """The lobby form: the game, one opponent of ``kind``, the short options, ``seed`` ("" for
    none: the server picks one); Create unless ``create`` is false."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    d.get(f"{base}/play")
    wait_for(d, lambda drv: drv.find_elements(By.CSS_SELECTOR, "#options [data-option]"))
    Select(d.find_element(By.ID, "game")).select_by_value(game)
    wait_for(d, lambda drv: drv.find_element(By.ID, "options").text.startswith(
        next(o.text for o in Select(drv.find_element(By.ID, "game")).options if o.get_attribute("value") == game)))
    Select(d.find_element(By.CSS_SELECTOR, "#opponents .kind")).select_by_value(kind)
    for name, value in SHORT[game].items():
        field = d.find_element(By.ID, f"opt-{name}")
        if field.tag_name == "select":
            Select(field).select_by_value(str(value))
        else:
            field.clear()
            field.send_keys(str(value))
    d.find_element(By.ID, "seed").send_keys(seed)
    if create:
        d.find_element(By.ID, "create").click()


@pytest.mark.parametrize("game", GAMES)
def test_whole_match_against_a_server_bot(driver: Any, live_server: str, game: str):
    browser.requested_urls(driver)
    fill_lobby(driver, live_server, game, "heuristic")
    wait_for(driver, lambda drv: "#/match/" in drv.current_url)
    match_id = driver.current_url.rsplit("/", 1)[1]
    final = play_to_the_end(driver, live_server, match_id, game)
    assert final["players"][1]["name"] == "Biber 1"


@pytest.mark.parametrize("game", GAMES)
def test_whole_match_against_another_client(driver: Any, live_server: str, game: str):
    status, created = browser.http_json("POST", f"{live_server}/v1/matches", {
        "game": game, "players": ["ana", "bo"], "seed": 42, "options": SHORT[game]})
    assert status == 201
    match_id = created["match_id"]
    driver.get(f"{live_server}/play")
    driver.execute_script("localStorage.setItem(arguments[0], arguments[1])", f"lodge:match:{match_id}",
                          json.dumps({"token": created["seats"][0]["token"], "game": game}))
    browser.requested_urls(driver)
    driver.get(f"{live_server}/play#/match/{match_id}")
    play_to_the_end(driver, live_server, match_id, game, other=created["seats"][1]["token"])


def test_phone_sized_screen(live_server: str):
    """A 390×844 window: the lobby and a board fit the width (no horizontal scrolling)."""
    from selenium.webdriver.common.by import By

    status, created = browser.http_json("POST", f"{live_server}/v1/matches", {
        "game": "biberclan", "players": ["ana", "bo", "cy"], "seed": 42})
    assert status == 201
    with browser.chromium(width=390, height=844) as d:
        d.get(f"{live_server}/play")
        wait_for(d, lambda drv: drv.find_elements(By.CSS_SELECTOR, "#options [data-option]"))
        assert d.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
        d.get(f"{live_server}/play#/watch/{created['match_id']}")
        wait_for(d, lambda drv: drv.find_elements(By.CSS_SELECTOR, ".castle"))
        assert d.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
        # on a phone the board comes before the move buttons
        assert d.execute_script("""return document.querySelector('.board').getBoundingClientRect().bottom
                                   <= document.getElementById('moves').getBoundingClientRect().top""")
        browser.ARTIFACTS.mkdir(exist_ok=True)
        assert d.save_screenshot(str(browser.ARTIFACTS / "play-phone.png"))


def test_create_clicked_twice_creates_one_match(driver: Any, live_server: str):
    """A double click on "Create match" posts one create: the button is off while it runs."""
    fill_lobby(driver, live_server, "biberbande", "heuristic", create=False)
    driver.execute_script("""
        window.creates = 0;
        const original = window.fetch;
        window.fetch = (url, init) => {
          if (String(url).endsWith('/v1/matches') && init && init.method === 'POST') window.creates += 1;
          return original(url, init);
        };
        const button = document.getElementById('create');
        button.click(); button.click();
        document.getElementById('new-match').requestSubmit();""")
    wait_for(driver, lambda d: "#/match/" in d.current_url)
    assert driver.execute_script("return window.creates") == 1


def test_event_log_after_reload_is_the_seats_own(driver: Any, live_server: str):
    """After a reload the event log reads /events with the seat's token: the card seat 0 drew
    shows in its log, where a spectator's events hold null."""
    from selenium.webdriver.common.by import By

    status, created = browser.http_json("POST", f"{live_server}/v1/matches", {
        "game": "biberbande", "players": ["ana", "bo"], "seed": 42})
    assert status == 201
    match = f"{live_server}/v1/matches/{created['match_id']}"
    token = created["seats"][0]["token"]
    assert browser.http_json("POST", f"{match}/moves", {"move": {"type": "draw"}}, token=token)[0] == 200
    _, own = browser.http_json("GET", f"{match}/events?after=0", token=token)
    _, public = browser.http_json("GET", f"{match}/events?after=0")
    drew = next(e for e in own["events"] if e["type"] == "drew")
    assert drew["card"] is not None and next(e for e in public["events"] if e["type"] == "drew")["card"] is None
    driver.get(f"{live_server}/play")
    driver.execute_script("localStorage.setItem(arguments[0], arguments[1])", f"lodge:match:{created['match_id']}",
                          json.dumps({"token": token, "game": "biberbande"}))
    driver.get(f"{live_server}/play#/match/{created['match_id']}")
    driver.refresh()  # a reload: the log is read again from /events
    wait_for(driver, lambda d: "Events (" in d.find_element(By.CSS_SELECTOR, ".log summary").text
             and not d.find_element(By.CSS_SELECTOR, ".log summary").text.startswith("Events (0"))
    driver.find_element(By.CSS_SELECTOR, ".log summary").click()
    log = driver.find_element(By.CSS_SELECTOR, ".log ol").text
    assert f"card={drew['card']}" in log, log
