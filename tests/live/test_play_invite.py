"""An invite link from the /play lobby claimed from a second browser context (contract 1.1:
open seats, the match's invite, ``POST /v1/matches/{id}/seats/{k}``), in headless Chromium.

The first browser creates "me + a friend" from the lobby and reads the invite link; a second,
separate browser (its own profile, so its own storage) opens it, claims the seat and plays
it; the first browser sees the friend's move arrive on its board without a reload.
"""
from __future__ import annotations

from typing import Any

import pytest

from tests import browser
from tests.live.test_play_games import fill_lobby, moved_past, page_state, wait_for

pytestmark = [pytest.mark.live,
              pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")]


def test_invite_link_claimed_from_a_second_browser(live_server: str):
    from selenium.webdriver.common.by import By

    with browser.chromium() as host, browser.chromium() as friend:
        fill_lobby(host, live_server, "thirteen-beavers", "open")
        field = wait_for(host, lambda d: d.find_elements(By.CSS_SELECTOR, "input.invite"))[0]
        link = field.get_attribute("value")
        assert link.startswith(f"{live_server}/play#/join/") and field.get_attribute("aria-label")
        host.find_element(By.ID, "go-match").click()
        wait_for(host, lambda d: page_state(d)["version"] >= 0)
        match_id = host.current_url.rsplit("/", 1)[1]
        _, seats = browser.http_json("GET", f"{live_server}/v1/matches/{match_id}/seats")
        assert [s["kind"] for s in seats["seats"]] == ["token", "open"]

        friend.get(link)
        wait_for(friend, lambda d: "#/match/" in d.current_url and page_state(d)["version"] >= 0)
        assert "You play Biber 1 (seat 1)" in friend.find_element(By.CSS_SELECTOR, ".who").text
        _, seats = browser.http_json("GET", f"{live_server}/v1/matches/{match_id}/seats")
        assert [s["kind"] for s in seats["seats"]] == ["token", "claimed"]

        # the host plays until it is the friend's turn, the friend moves, the host sees it live
        loaded = host.execute_script("return window.lodgePlay.loadedAt")
        for _ in range(50):
            if page_state(friend)["moves"]:
                break
            if page_state(host)["moves"]:
                before = page_state(host)["version"]
                host.find_element(By.CSS_SELECTOR, "#moves button.move").click()
                wait_for(host, moved_past(before))
            wait_for(friend, moved_past(page_state(host)["version"] - 1))  # the friend's page caught up
        before = page_state(host)["version"]
        friend.find_element(By.CSS_SELECTOR, "#moves button.move").click()
        wait_for(host, moved_past(before))
        assert host.execute_script("return window.lodgePlay.loadedAt") == loaded

        # the same link again: the seat is taken, and the page says so
        friend.get(f"{live_server}/play")
        friend.get(link)
        wait_for(friend, lambda d: "already taken" in d.find_element(By.ID, "notice").text)
        # a clear page with a way on, not "Claiming seat 1…"
        assert "already taken" in wait_for(friend, lambda d: d.find_elements(By.ID, "bad-invite"))[0].text
        assert friend.find_element(By.ID, "my-seat").get_attribute("href").endswith(f"#/match/{match_id}")
        friend.find_element(By.ID, "spectate").click()
        wait_for(friend, lambda d: "You are watching as a spectator" in d.find_element(By.CSS_SELECTOR, ".who").text)


def test_lost_invite_link_is_shown_again_and_a_wrong_one_explained(driver: Any, live_server: str):
    """The host's page keeps the match's invite: after a reload its match page shows each seat that
    is still open with its link (the same as the lobby gave), until the seat is claimed.  A link
    with a wrong invite gets a page that says so and offers to spectate."""
    from selenium.webdriver.common.by import By

    fill_lobby(driver, live_server, "biberbande", "open")
    link = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "input.invite"))[0].get_attribute("value")
    driver.find_element(By.ID, "go-match").click()
    wait_for(driver, lambda d: page_state(d)["version"] >= 0)
    driver.refresh()
    again = wait_for(driver, lambda d: d.execute_script(
        "return [...document.querySelectorAll('#invites input.invite')].map(i => i.value)"))
    assert again == [link]

    with browser.chromium() as stranger:
        stranger.get(link.rsplit("/", 1)[0] + "/not-the-invite")
        page = wait_for(stranger, lambda d: d.find_elements(By.ID, "bad-invite"))[0]
        assert "does not open seat 1" in page.text and not stranger.find_elements(By.ID, "my-seat")
        stranger.find_element(By.ID, "spectate").click()
        wait_for(stranger, lambda d: "You are watching as a spectator" in d.find_element(By.CSS_SELECTOR, ".who").text)
        stranger.get(link)  # the right link claims the seat
        wait_for(stranger, lambda d: "#/match/" in d.current_url
                 and "You play" in d.find_element(By.CSS_SELECTOR, ".who").text)
    driver.refresh()
    wait_for(driver, lambda d: page_state(d)["version"] >= 0)
    assert not driver.find_elements(By.ID, "invites")


def test_public_match_joined_from_the_lobby(live_server: str):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    status, created = browser.http_json("POST", f"{live_server}/v1/matches", {
        "game": "biberclan", "players": ["ana", {"name": "guest", "open": True}], "public": True})
    assert status == 201
    match_id = created["match_id"]
    with browser.chromium() as guest:
        guest.get(f"{live_server}/play")
        wait_for(guest, lambda d: d.find_elements(By.CSS_SELECTOR, "#options [data-option]"))
        Select(guest.find_element(By.ID, "game")).select_by_value("biberclan")
        entry = f"#public-list li[data-match='{match_id}'] button"
        wait_for(guest, lambda d: d.find_elements(By.CSS_SELECTOR, entry))
        button = guest.find_element(By.CSS_SELECTOR, entry)
        assert button.text == "Join as guest"
        button.click()
        wait_for(guest, lambda d: "#/match/" in d.current_url and page_state(d)["version"] >= 0)
        assert "You play guest (seat 1)" in guest.find_element(By.CSS_SELECTOR, ".who").text
    _, seats = browser.http_json("GET", f"{live_server}/v1/matches/{match_id}/seats")
    assert [s["kind"] for s in seats["seats"]] == ["token", "claimed"]
