"""Spectator delay and referees (contract 1.2): until the match is finished,
a caller without a seat or admin token, and the referee, see version
max(0, current − delay) on every path (the view on the dispatcher and on
the Flask route, its ETag and 304, /events, long-polls, streams, the
referee's record), and nothing newer anywhere else (lobby, seats, errors,
headers); once finished, everything.  The referee reads every hidden card
(what the admin reads at that version) and may not act, delete or claim.

The held-back views are judged against a twin match without a delay (same
seed, same moves): the view at version v of the delayed match must be the
twin's view at v, for the spectator and (as the admin's) for the referee.
"""
from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import Client

from service.http.routes.hot import HotPaths
from tests.conftest import examples, flask_api
from tests.http_helpers import Api, Match, Resp, assert_problem, comparable, strip_label, until
from tests.service.test_api_stream import Stream, sapi, sapp  # noqa: F401  # the stream fixtures

GAMES = ["biberbande", "biberclan", "mein-lieber-biber", "thirteen-beavers"]


def create(api: Api, delay: int, *, game: str = "biberbande", seed: int = 5, referee: bool = True,
           players: Any = 2, **extra: Any) -> Match:
    body: dict[str, Any] = {"game": game, "players": players, "seed": seed, **extra}
    if delay is not None:
        body["spectators"] = {"delay": delay}
    if referee:
        body["referee"] = True
    r = api.create_raw(body)
    assert r.status == 201, r
    return Match(api, r.json, r)


def flask_only(app: Any) -> Api:
    """An API that skips the dispatcher (service/http/routes/hot.py): Flask's routes alone."""
    hot = app.wsgi_app
    assert isinstance(hot, HotPaths)
    client = Client(hot.flask_app)

    def send(method: str, path: str, headers: dict[str, str], body: bytes | None, params: dict[str, Any]) -> Resp:
        r = client.open(path, method=method, headers=headers, data=body, query_string=params or None)
        try:
            return Resp(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.get_data(), method, path)
        finally:
            r.close()

    return Api(send)


def play_twins(m: Match, twin: Match, moves: int, rng: random.Random) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Play ``moves`` random legal moves on both matches (as the admin);
    the twin's (spectator, admin) views at every version, version 0 first."""
    seen = [(twin.spectator_view(), twin.admin_view())]
    for _ in range(moves):
        view = twin.admin_view()
        if view["status"] == "finished":
            break
        seat = view["to_act"][0]
        r = twin.api.legal(twin.id, twin.admin, seat=seat)
        move = strip_label(rng.choice(r.json["moves"]))
        assert m.play(seat, move, as_admin=True).status == 200
        assert twin.play(seat, move, as_admin=True).status == 200
        seen.append((twin.spectator_view(), twin.admin_view()))
    assert m.admin_view()["version"] == len(seen) - 1, "no bot or automatic versions in between"
    return seen


def without_clock(view: dict[str, Any]) -> dict[str, Any]:
    out = comparable(view)
    out.pop("deadline", None)
    return out


def test_create_checks_and_the_referee_token(api: Api) -> None:
    m = create(api, 3)
    assert m.created["referee_token"].startswith(m.id + ".")
    assert "referee_token" not in create(api, 3, referee=False).created
    for bad in ({"delay": -1}, {"delay": 1001}, {"delay": 1.5}, {"delay": True}, {"lag": 1}, 3):
        r = api.create_raw({"game": "biberbande", "players": 2, "spectators": bad})
        assert "spectators" in assert_problem(r, 422, "invalid_options")["detail"]
    r = api.create_raw({"game": "biberbande", "players": 2, "referee": "yes"})
    assert "referee" in assert_problem(r, 422, "invalid_options")["detail"]


def test_the_referee_may_read_but_not_act(api: Api) -> None:
    """Role ``referee``, every hidden card (the admin's view at the delayed
    version); 403 on moves, legal moves, delete and claim."""
    m = create(api, 0, players=["ana", {"name": "bo", "open": True}])
    ref = m.created["referee_token"]
    view = api.view(m.id, ref).json
    assert view["viewer"] == {"role": "referee", "seat": None}
    assert without_clock(view) == without_clock(m.admin_view())
    assert api.events(m.id, ref).json["events"] == api.events(m.id, m.admin).json["events"]
    assert_problem(api.move(m.id, ref, {"type": "draw"}, 0, seat=0), 403, "forbidden")
    assert_problem(api.move(m.id, ref, {"type": "draw"}, 0), 403, "forbidden")
    assert_problem(api.legal(m.id, ref, seat=0), 403, "forbidden")
    assert_problem(api.delete_match(m.id, ref), 403, "forbidden")
    claim = api.post(f"/v1/matches/{m.id}/seats/1", {"invite": m.created["invite"]},
                     headers={"Authorization": f"Bearer {ref}"})
    assert_problem(claim, 403, "forbidden")
    assert api.get(f"/v1/matches/{m.id}/seats").json["seats"][1]["kind"] == "open"
    assert api.view(m.id, ref, params={"legal": "true"}).json["legal_moves"] == {}


def test_views_events_and_record_are_held_back(app: Any, api: Api) -> None:
    """Spectator and referee at version v see the twin's views at v − delay,
    on the dispatcher and on the Flask route; ETag and 304 name that
    version; /events stop there; the referee's record holds its moves and
    no result; seats and admin see the present."""
    delay = 3
    m, twin = create(api, delay), create(api, 0, referee=False)
    seen = play_twins(m, twin, 6, random.Random(1))
    ref = m.created["referee_token"]
    for path in (api, flask_only(app)):
        r = path.view(m.id)
        assert r.status == 200 and r.header("etag") == '"3"', r
        assert without_clock(r.json) == without_clock(seen[3][0])
        assert r.json["deadline"] == {}
        r = path.view(m.id, ref)
        assert r.header("etag") == '"3"' and r.json["viewer"]["role"] == "referee"
        assert without_clock(r.json) == without_clock(seen[3][1])
        assert path.view(m.id, headers={"If-None-Match": '"3"'}).status == 304
        assert path.view(m.id, headers={"If-None-Match": '"6"'}).status == 200
        assert path.view(m.id, m.admin).json["version"] == 6
        assert path.view(m.id, m.token(0)).json["version"] == 6
    page = api.events(m.id).json
    assert page["version"] == 3 and max(e["version"] for e in page["events"]) == 3
    assert api.events(m.id, ref).json["events"] == twin.api.events(twin.id, twin.admin).json["events"][
        :len(api.events(m.id, ref).json["events"])]
    assert max(e["version"] for e in api.events(m.id, ref).json["events"]) == 3
    record = api.record(m.id, ref).json
    assert [e["version"] for e in record["moves"]] == [1, 2, 3] and record["result"] is None
    assert_problem(api.record(m.id), 401, "unauthenticated")


def test_a_conflict_tells_no_spectator_the_version(api: Api) -> None:
    """Only token holders reach the version check: a spectator's move is
    401, the referee's 403, neither says the current version."""
    m = create(api, 5)
    twin = create(api, 0, referee=False)
    play_twins(m, twin, 3, random.Random(2))
    for token, status in ((None, 401), (m.created["referee_token"], 403)):
        r = api.move(m.id, token, {"type": "draw"}, 0)
        assert r.status == status and "current_version" not in r.json and "3" not in r.json["detail"], r


def test_long_poll_wakes_only_for_a_visible_version(app: Any, api: Api) -> None:
    """A spectator polling after the visible version is answered only once
    the match is ``delay`` versions past the next one."""
    m, twin = create(api, 2), create(api, 0, referee=False)
    rng = random.Random(3)
    play_twins(m, twin, 3, rng)                    # at 3: spectators see 1
    answer: list[Resp] = []
    poll = threading.Thread(target=lambda: answer.append(api.events(m.id, after=1, wait=20)))
    poll.start()
    until(lambda: app.extensions["lodge"].notifier.watched() == 1, "polling")
    play_twins_more(m, twin, rng)                  # at 4: spectators see 2
    poll.join(timeout=20)
    page = answer[0].json
    assert page["version"] == 2 and {e["version"] for e in page["events"]} == {2}
    r = api.events(m.id, after=2, wait=0.05)       # nothing more until the match is at 5
    assert r.json == {"version": 2, "events": []}


def play_twins_more(m: Match, twin: Match, rng: random.Random) -> None:
    view = twin.admin_view()
    seat = view["to_act"][0]
    move = strip_label(rng.choice(twin.api.legal(twin.id, twin.admin, seat=seat).json["moves"]))
    assert m.play(seat, move, as_admin=True).status == 200
    assert twin.play(seat, move, as_admin=True).status == 200


def test_a_spectator_stream_gets_v_once_the_match_is_at_v_plus_delay(sapp: Any, sapi: Api) -> None:  # noqa: F811
    m, twin = create(sapi, 2), create(sapi, 0, referee=False)
    rng = random.Random(4)
    seen = play_twins(m, twin, 3, rng)
    with Stream(sapp, m.id, state=True, ndjson=True) as s:
        first = s.take(2)
        assert [f.data["version"] for f in first] == [0, 1]
        assert without_clock(first[1].data["state"]) == without_clock(seen[1][0])
        play_twins_more(m, twin, rng)
        assert s.take(1)[0].data["version"] == 2
    with Stream(sapp, m.id, m.created["referee_token"], after=0) as s:
        assert [f.data["version"] for f in s.take(1)] == [1]


def test_everything_once_finished(api: Api) -> None:
    """A finished match shows every version to everyone."""
    m = create(api, 1000, game="mein-lieber-biber", options={"rounds": 1})
    m.play(0, {"type": "resign"})
    view = m.spectator_view()
    assert view["status"] == "finished" and view["version"] == m.admin_view()["version"]
    record = api.record(m.id, m.created["referee_token"]).json
    assert record["result"] is not None and len(record["moves"]) == view["version"]
    assert api.events(m.id).json["version"] == view["version"]


# --------------------------------------------------------------------------
# Leaks: over games and delays, every path of a spectator and the referee.
# --------------------------------------------------------------------------
def max_version_seen(api: Api, app: Any, m: Match, token: str | None) -> int:
    """The newest version any path shows ``token`` (None: a spectator), and
    checks that the lobby, seats and errors name none."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    versions: list[int] = []
    for path in (api, flask_only(app)):
        r = path.view(m.id, token)
        etag = r.header("etag")
        assert etag is not None
        versions += [r.json["version"], int(etag.strip('"'))]
        r = path.view(m.id, token, headers={"If-None-Match": etag})
        etag = r.header("etag")
        assert etag is not None
        versions.append(int(etag.strip('"')))
    page = api.events(m.id, token).json
    versions += [page["version"], *(e["version"] for e in page["events"])]
    page = api.events(m.id, token, after=page["version"], wait=0.05).json
    versions += [page["version"], *(e["version"] for e in page["events"])]
    with Stream(app, m.id, token, state=True, ndjson=True) as s:
        frames = s.take(page["version"] + 1)
    versions += [f.data["version"] for f in frames] + [f.data["state"]["version"] for f in frames if "state" in f.data]
    if token is not None:
        versions += [e["version"] for e in api.record(m.id, token).json["moves"]]
    for r in (api.get(f"/v1/matches/{m.id}/seats", headers=headers), api.get("/v1/matches", params={"limit": 100}),
              api.move(m.id, token, {"type": "draw"}, 0), api.legal(m.id, token, seat=0)):
        assert "version" not in r.body.decode() and "etag" not in r.headers, r
    return max(versions)


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(game=st.sampled_from(GAMES), delay=st.integers(0, 4), moves=st.integers(0, 8), seed=st.integers(0, 99))
def test_no_newer_version_leaks(sapp: Any, game: str, delay: int, moves: int, seed: int) -> None:  # noqa: F811
    api = flask_api(sapp)
    m = create(api, delay, game=game, seed=seed, players=["ana", "bo", {"name": "cy", "open": True}], public=True)
    rng = random.Random(seed)
    for _ in range(moves):
        view = m.admin_view()
        if view["status"] == "finished":
            break
        seat = view["to_act"][0]
        move = strip_label(rng.choice(api.legal(m.id, m.admin, seat=seat).json["moves"]))
        assert m.play(seat, move, as_admin=True).status == 200
    view = m.admin_view()
    current = view["version"]
    limit = current if view["status"] == "finished" else max(0, current - delay)
    assert max_version_seen(api, sapp, m, None) == limit
    assert max_version_seen(api, sapp, m, m.created["referee_token"]) == limit


@pytest.mark.live
def test_held_back_on_a_live_server(live_api: Api) -> None:
    """gunicorn's gevent workers (the dispatcher in front): the view, its
    ETag and 304, events and the referee's record held back alike."""
    m, twin = create(live_api, 2), create(live_api, 0, referee=False)
    seen = play_twins(m, twin, 3, random.Random(6))
    r = live_api.view(m.id)
    assert (r.header("etag"), without_clock(r.json)) == ('"1"', without_clock(seen[1][0]))
    assert live_api.view(m.id, headers={"If-None-Match": '"1"'}).status == 304
    assert live_api.events(m.id).json["version"] == 1
    record = live_api.record(m.id, m.created["referee_token"]).json
    assert [e["version"] for e in record["moves"]] == [1]
