"""/play#/ladder/<id> in headless Chromium (tests/browser.py): a ladder's leaderboard, best
rating first with the server's ranks, read again while matches finish (no reload), and an
unknown ladder said in words."""
from __future__ import annotations

from typing import Any

import pytest

from tests import browser
from tests.http_helpers import W1_MOVES, W1_OPTIONS
from tests.live.test_play_games import wait_for

pytestmark = [pytest.mark.live,
              pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")]


def post(url: str, body: Any, token: str | None = None) -> Any:
    status, data = browser.http_json("POST", url, body, token=token)
    assert status in (200, 201), (status, data)
    return data


def w1_match(base: str, ladder: dict[str, Any], winner: dict[str, Any], loser: dict[str, Any]) -> None:
    """Worked example W1 as a ladder match (seat 0 wins), played with the entrants' tokens."""
    created = post(f"{base}/v1/matches", {"game": "biberbande", "seed": 7, "options": W1_OPTIONS,
                                          "players": [{"entrant": winner["entrant_id"]},
                                                      {"entrant": loser["entrant_id"]}],
                                          "ladder": {"id": ladder["ladder_id"], "token": ladder["admin_token"]}})
    for seat, move in W1_MOVES:
        post(f"{base}/v1/matches/{created['match_id']}/moves", {"move": move}, token=[winner, loser][seat]["token"])


def rows(d: Any) -> list[list[str]]:
    return d.execute_script("""
        return [...document.querySelectorAll('#leaderboard tbody tr')]
          .map(tr => [tr.dataset.rank, tr.querySelector('th').textContent]);""")


def test_leaderboard_page_follows_the_ladder(driver: Any, live_server: str):
    ladder = post(f"{live_server}/v1/ladders", {"game": "biberbande", "name": "browser weekly"})
    ana, bo, cy = (post(f"{live_server}/v1/ladders/{ladder['ladder_id']}/entrants", {"name": n},
                        token=ladder["admin_token"]) for n in ("ana", "bo", "cy"))
    w1_match(live_server, ladder, ana, bo)
    driver.get(f"{live_server}/play#/ladder/{ladder['ladder_id']}")
    wait_for(driver, lambda d: len(rows(d)) == 3)
    assert rows(driver) == [["1", "ana"], ["2", "cy"], ["3", "bo"]]
    summary = driver.execute_script("return document.getElementById('ladder-summary').dataset.matches")
    assert summary == "1"
    assert "browser weekly" in driver.execute_script("return document.querySelector('h1').textContent")
    _, board = browser.http_json("GET", f"{live_server}/v1/ladders/{ladder['ladder_id']}")
    shown = driver.execute_script("return document.querySelector('#leaderboard tbody td:nth-child(3)').textContent")
    assert shown == f"{board['entrants'][0]['rating']:.2f}"
    w1_match(live_server, ladder, cy, bo)  # the page reads the ladder again by itself
    wait_for(driver, lambda d: d.execute_script(
        "return document.getElementById('ladder-summary')?.dataset.matches") == "2")
    assert [name for _, name in rows(driver)][-1] == "bo"


def test_unknown_ladder_is_said_in_words(driver: Any, live_server: str):
    driver.get(f"{live_server}/play#/ladder/abcdefghijklmnop")
    wait_for(driver, lambda d: d.execute_script("return document.getElementById('ladder-error')?.dataset.code")
             == "ladder_not_found")
    assert "There is no ladder abcdefghijklmnop" in driver.execute_script(
        "return document.getElementById('ladder-error').textContent")
