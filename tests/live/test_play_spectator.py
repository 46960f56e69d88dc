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
from tests.live.test_play_games import moved_past, page_state, wait_for

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


def step(d: Any) -> int:
    """The replay's step (read in one script: the page redraws the stepper after every step)."""
    return int(d.execute_script("const el = document.getElementById('step'); return el ? el.dataset.step : -1"))


def replay_to_the_end(d: Any, base: str, match_id: str) -> dict[str, Any]:
    """Open the match's replay, press End, and check that the page shows the record's result
    with nothing to complain about; returns the record."""
    from selenium.webdriver.common.by import By

    _, record = browser.http_json("GET", f"{base}/v1/matches/{match_id}/record")
    d.get(f"{base}/play#/replay/{match_id}")
    wait_for(d, lambda drv: step(drv) == 0)
    # the stepper's icons are SVG (stock Chromium has no glyph for ⏮ and ⏭)
    assert d.execute_script("""return [...document.querySelectorAll('.stepper button')].every(b =>
        b.querySelector('svg') && b.querySelector('svg').getBoundingClientRect().width > 0 && !b.textContent.trim())""")
    d.find_element(By.CSS_SELECTOR, "button[aria-label='End']").click()
    wait_for(d, lambda drv: step(drv) == len(record["moves"])
             or not drv.find_element(By.ID, "notice").get_attribute("hidden"), timeout=120)
    assert step(d) == len(record["moves"]), d.find_element(By.ID, "notice").text
    result = d.find_element(By.ID, "result")
    assert result.get_attribute("data-winners") == ",".join(map(str, record["result"]["winners"]))
    assert d.execute_script("return document.getElementById('ending').innerText")  # the result in words
    return record


def play_out(base: str, match_id: str, tokens: dict[int, str], rng: random.Random,
             resign: tuple[int, int] | None = None) -> None:
    """Random legal moves over HTTP by the seats in ``tokens`` (others are bots) until the match
    ends; with ``resign`` = (version, seat), that seat resigns once the match reaches that version."""
    match = f"{base}/v1/matches/{match_id}"
    for _ in range(3000):
        _, view = browser.http_json("GET", match)
        if view["status"] != "active":
            return
        if resign and view["version"] >= resign[0]:
            resignation = {"move": {"type": "resign"}}
            status, _ = browser.http_json("POST", f"{match}/moves", resignation, token=tokens[resign[1]])
            assert status == 200
            resign = None
            continue
        seat = view["to_act"][0]
        _, legal = browser.http_json("GET", f"{match}/legal-moves", token=tokens[seat])
        move = {"move": rng.choice(legal["moves"]), "version": view["version"]}
        status, _ = browser.http_json("POST", f"{match}/moves", move, token=tokens[seat])
        assert status == 200
    raise AssertionError("the match did not end")


def test_replay_of_a_lobby_match_created_without_a_seed(driver: Any, live_server: str):
    """The server picks the seed (api.md 1.2: 0 … 2^53−1, exact in JavaScript); the page's own
    match against a bot, played by clicking, replays to its result."""
    from tests.live.test_play_games import fill_lobby, play_to_the_end

    fill_lobby(driver, live_server, "biberbande", "heuristic", seed="")
    wait_for(driver, lambda d: "#/match/" in d.current_url)
    match_id = driver.current_url.rsplit("/", 1)[1]
    play_to_the_end(driver, live_server, match_id, "biberbande")
    record = replay_to_the_end(driver, live_server, match_id)
    assert 0 <= record["seed"] <= 2**53 - 1
    assert any(m.get("by") == "bot" for m in record["moves"])


def test_replay_of_a_resigned_match_with_a_bot_and_a_seat_claimed_later(driver: Any, live_server: str):
    """Seat 1 a server bot, seat 2 open and claimed after creation, seat 2 resigns mid-match: the
    server plays its moves from then on (`"by": "resigned"`), which the replay does not post again.
    A fixed seed: with some deals the match ends before seat 2 is to move again."""
    status, created = browser.http_json("POST", f"{live_server}/v1/matches", {
        "game": "biberbande", "players": ["ana", {"name": "robo", "bot": "heuristic"}, {"name": "cy", "open": True}],
        "seed": 1, "options": {"rounds": 1, "turn_limit": 6}})
    assert status == 201
    match_id = created["match_id"]
    status, claimed = browser.http_json("POST", f"{live_server}/v1/matches/{match_id}/seats/2",
                                        {"invite": created["invite"]})
    assert status == 201
    tokens = {0: created["seats"][0]["token"], 2: claimed["token"]}
    play_out(live_server, match_id, tokens, random.Random(3), resign=(4, 2))
    record = replay_to_the_end(driver, live_server, match_id)
    by = {m.get("by") for m in record["moves"]}
    assert {"resigned", "bot"} <= by


def test_replay_of_a_match_ended_by_the_clock(driver: Any, live_server: str):
    """Nobody moves: the clock plays every fallback move (`"by": "clock"`) until the match ends;
    the replay posts them like any move and reaches the result."""
    import time

    status, created = browser.http_json("POST", f"{live_server}/v1/matches", {
        "game": "biberbande", "players": ["ana", "bo"], "options": {"rounds": 1, "turn_limit": 1},
        "clock": {"per_move_ms": 1000}})
    assert status == 201
    match = f"{live_server}/v1/matches/{created['match_id']}"
    deadline = time.monotonic() + 90
    while browser.http_json("GET", match)[1]["status"] == "active":
        assert time.monotonic() < deadline, "the clock did not end the match"
        time.sleep(0.5)
    record = replay_to_the_end(driver, live_server, created["match_id"])
    assert record["moves"] and all(m.get("by") == "clock" for m in record["moves"])


def test_replay_stepped_to_the_end_shows_the_records_result(driver: Any, live_server: str):
    from selenium.webdriver.common.by import By

    created = create(live_server, "thirteen-beavers", {"board": "short", "max_turns": 40})
    rng = random.Random(2)
    while random_move(live_server, created, rng) is not None:
        pass
    _, record = browser.http_json("GET", f"{live_server}/v1/matches/{created['match_id']}/record")
    moves = len(record["moves"])
    driver.get(f"{live_server}/play#/replay/{created['match_id']}")
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


ENDS: dict[str, dict[str, Any]] = {"biberbande": {"rounds": 1, "turn_limit": 4},
                                  "biberclan": {"rounds": 1, "max_turns": 16},
                                  "mein-lieber-biber": {"rounds": 1},
                                  "thirteen-beavers": {"board": "short", "max_turns": 40}}


@pytest.mark.parametrize("game", list(ENDS))
def test_end_screen_shows_every_revealed_card_and_explains_the_result(driver: Any, live_server: str, game: str):
    """A finished match seen by a spectator: every card value the finished view holds is face up
    on the page (no card back where the view has the value), and the result is explained in words
    with each player's name and final score."""
    from selenium.webdriver.common.by import By

    created = create(live_server, game, ENDS[game])
    play_out(live_server, created["match_id"], dict(enumerate(s["token"] for s in created["seats"])), random.Random(4))
    _, view = browser.http_json("GET", f"{live_server}/v1/matches/{created['match_id']}")
    driver.get(f"{live_server}/play#/watch/{created['match_id']}")
    ending = wait_for(driver, lambda d: d.execute_script(
        "const e = document.getElementById('ending'); return e && e.innerText"))
    for p in view["players"]:
        assert p["name"] in ending and str(view["scores"][p["seat"]]) in ending, ending
    assert "[" not in ending and "{" not in ending  # words, not JSON
    faces = driver.execute_script(
        "return [...document.querySelectorAll('.seat-panel .card')].map(c => c.dataset.card ?? null)")
    if game == "biberclan":
        held = [c.get("card") for p in view["players"] for c in p["castle"].values() if c is not None]
        assert all(v is not None for v in held) and sorted(f for f in faces if f is not None) == sorted(held)
        r = view["board"]["last_round"]
        assert all(f"= {v}" in ending for v in r["values"])
    elif game == "biberbande":
        assert faces == [v for p in view["players"] for v in p["display"]]
    elif game == "mein-lieber-biber":  # the rings' path is drawn
        assert driver.find_elements(By.CSS_SELECTOR, ".spiral polyline.path")
    assert not driver.find_elements(By.CSS_SELECTOR, ".seat-panel .card.back") or game == "mein-lieber-biber"
    browser.ARTIFACTS.mkdir(exist_ok=True)
    assert driver.save_screenshot(str(browser.ARTIFACTS / f"play-{game}-end.png"))


def test_spectator_sees_the_balanced_river(driver: Any, live_server: str):
    """TB-1.7, TB-7.1: the 13 Beavers board draws the river from ``board.spaces``, so the
    ``balanced`` layout shows as its view lists it: the avenue on 4 branching to 21, the
    wolf on 24."""
    created = create(live_server, "thirteen-beavers", {"board": "balanced"})
    driver.get(f"{live_server}/play#/watch/{created['match_id']}")
    wait_for(driver, lambda d: page_state(d)["version"] == 0)
    drawn = driver.execute_script(
        "return [...document.querySelectorAll('.river .space')].map(s => "
        "[Number(s.dataset.space), s.classList[1], s.getAttribute('aria-label')])")
    _, view = browser.http_json("GET", f"{live_server}/v1/matches/{created['match_id']}")
    assert [[i, kind] for i, kind, _ in drawn] == [[sp["id"], sp["kind"]] for sp in view["board"]["spaces"]]
    assert len(drawn) == 31 and drawn[4][1] == "avenue" and "(or → 21)" in drawn[4][2]
    assert (drawn[21][1], drawn[24][1]) == ("water", "wolf")
