"""Small HTTP helpers shared by the API tests (Flask test client) and the live
tests (requests against gunicorn).

Everything here is written against the HTTP contract (docs/api.md),
not against the service's internals: a test that uses these helpers would pass
against any implementation of the contract.
"""
from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

PROBLEM_JSON = "application/problem+json"

# --------------------------------------------------------------------------
# Biberbande cards (BB-1.1, BB-1.2) and worked examples (section 11).
# --------------------------------------------------------------------------
CANONICAL: list[str] = (
    [str(d) for d in range(9) for _ in range(4)]
    + ["9"] * 9 + ["swap"] * 9 + ["peek"] * 7 + ["draw2"] * 5
)
assert len(CANONICAL) == 66


def stack(prefix: Iterable[str]) -> list[str]:
    """``stack(P)`` of biberbande.md §11: P, then the remaining cards in
    canonical order (BB-1.2)."""
    prefix = list(prefix)
    rest = Counter(CANONICAL)
    rest.subtract(Counter(prefix))
    assert all(v >= 0 for v in rest.values()), "prefix is not a sub-multiset of the deck"
    tail: list[str] = []
    for card in CANONICAL:
        if rest[card] > 0:
            tail.append(card)
            rest[card] -= 1
    deck = prefix + tail
    assert len(deck) == 66
    return deck


W1_DECK = stack("3 7 0 9 5 2 8 4 1 6 swap".split())
W2_DECK = stack("2 1 0 4 1 3 6 swap draw2 peek 9 7 8 draw2 9 0 2 6 swap 3".split())
W1_OPTIONS = {"rounds": 1, "deck": W1_DECK}
W2_OPTIONS = {"rounds": 1, "turn_limit": 1, "deck": W2_DECK}

# (acting seat, move) of W1, in order.
W1_MOVES: list[tuple[int, dict[str, Any]]] = [
    (0, {"type": "take_discard", "slot": 3}),
    (1, {"type": "draw"}),
    (1, {"type": "swap_drawn", "slot": 1}),
    (1, {"type": "knock"}),
    (0, {"type": "draw"}),
    (0, {"type": "use_swap", "slot": 0, "target_seat": 1, "target_slot": 1}),
]

NUMBERS = {str(d) for d in range(10)}


# --------------------------------------------------------------------------
# A transport-neutral response and API wrapper.
# --------------------------------------------------------------------------
@dataclass
class Resp:
    status: int
    headers: dict[str, str]  # lower-cased names
    body: bytes
    method: str = ""
    path: str = ""

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def __repr__(self) -> str:  # shown by pytest on a failed assert
        text = self.body[:600].decode("utf-8", "replace")
        return f"<{self.method} {self.path} -> {self.status} {self.content_type} {text}>"


_MISSING = object()


class Api:
    """Contract-level client.  ``send(method, path, headers, body, params)``
    performs one request and returns a :class:`Resp`."""

    def __init__(self, send: Callable[..., Resp]):
        self._send = send

    # -- raw ---------------------------------------------------------------
    def request(self, method: str, path: str, *, json_body: Any = _MISSING, data: bytes | str | None = None,
                token: str | None = None, headers: dict[str, str] | None = None,
                params: dict[str, Any] | None = None, content_type: str | None = None) -> Resp:
        hdrs = dict(headers or {})
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        body: bytes | None = None
        if json_body is not _MISSING:
            body = json.dumps(json_body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        elif data is not None:
            body = data.encode() if isinstance(data, str) else data
            hdrs.setdefault("Content-Type", content_type or "application/json")
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        return self._send(method, path, hdrs, body, clean)

    def get(self, path: str, **kw: Any) -> Resp:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any = _MISSING, **kw: Any) -> Resp:
        return self.request("POST", path, json_body=body, **kw)

    def delete(self, path: str, **kw: Any) -> Resp:
        return self.request("DELETE", path, **kw)

    # -- contract operations ----------------------------------------------
    def create_raw(self, body: Any, **kw: Any) -> Resp:
        return self.post("/v1/matches", body, **kw)

    def create(self, players: Any = 2, *, game: str = "biberbande", seed: int | None = 7,
               options: dict[str, Any] | None = None) -> Match:
        body: dict[str, Any] = {"game": game, "players": players}
        if seed is not None:
            body["seed"] = seed
        if options is not None:
            body["options"] = options
        r = self.create_raw(body)
        assert r.status == 201, r
        return Match(self, r.json, r)

    def view(self, mid: str, token: str | None = None, **kw: Any) -> Resp:
        return self.get(f"/v1/matches/{mid}", token=token, **kw)

    def legal(self, mid: str, token: str | None = None, seat: int | None = None, **kw: Any) -> Resp:
        return self.get(f"/v1/matches/{mid}/legal-moves", token=token, params={"seat": seat}, **kw)

    def move(self, mid: str, token: str | None, move: Any, version: Any = _MISSING, *, seat: int | None = None,
             headers: dict[str, str] | None = None, body: Any = _MISSING) -> Resp:
        if body is _MISSING:
            body = {"move": move}
            if version is not _MISSING and version is not None:
                body["version"] = version
        return self.post(f"/v1/matches/{mid}/moves", body, token=token, params={"seat": seat}, headers=headers)

    def events(self, mid: str, token: str | None = None, after: int | None = None, wait: float | None = None,
               **kw: Any) -> Resp:
        return self.get(f"/v1/matches/{mid}/events", token=token, params={"after": after, "wait": wait}, **kw)

    def record(self, mid: str, token: str | None = None) -> Resp:
        return self.get(f"/v1/matches/{mid}/record", token=token)

    def delete_match(self, mid: str, token: str | None = None) -> Resp:
        return self.delete(f"/v1/matches/{mid}", token=token)


@dataclass
class Match:
    """A created match: ids and tokens from the 201 body."""

    api: Api
    created: dict[str, Any]
    response: Resp | None = None
    log: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.created["match_id"]

    @property
    def admin(self) -> str:
        return self.created["admin_token"]

    def token(self, seat: int) -> str:
        return self.created["seats"][seat]["token"]

    @property
    def n(self) -> int:
        return len(self.created["seats"])

    def admin_view(self) -> dict[str, Any]:
        r = self.api.view(self.id, self.admin)
        assert r.status == 200, r
        return r.json

    def seat_view(self, seat: int) -> dict[str, Any]:
        r = self.api.view(self.id, self.token(seat))
        assert r.status == 200, r
        return r.json

    def spectator_view(self) -> dict[str, Any]:
        r = self.api.view(self.id)
        assert r.status == 200, r
        return r.json

    def legal(self, seat: int) -> list[dict[str, Any]]:
        r = self.api.legal(self.id, self.token(seat))
        assert r.status == 200, r
        return r.json["moves"]

    def play(self, seat: int, move: dict[str, Any], *, with_version: bool = True, as_admin: bool = False) -> Resp:
        version = self.admin_view()["version"] if with_version else None
        if as_admin:
            r = self.api.move(self.id, self.admin, move, version, seat=seat)
        else:
            r = self.api.move(self.id, self.token(seat), move, version)
        assert r.status == 200, r
        self.log.append((seat, move))
        return r

    def events(self, token: str | None = None, after: int | None = None) -> list[dict[str, Any]]:
        r = self.api.events(self.id, token, after=after)
        assert r.status == 200, r
        return events_of(r.json)


def race(clients: list[Api], match_id: str, token: str, moves: list[dict[str, Any]],
         version: int, timeout: float = 60) -> list[Resp]:
    """POST ``moves[i]`` through ``clients[i]``, all released at once by a
    barrier, every one meant for ``version``: the responses, in order."""
    barrier = threading.Barrier(len(moves))
    results: list[Any] = [None] * len(moves)

    def post(i: int) -> None:
        barrier.wait()
        results[i] = clients[i].move(match_id, token, moves[i], version)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(moves))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    return results


def until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Return as soon as ``condition()`` holds (looked at every few
    milliseconds); fail naming ``what`` when it does not within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"still not {what} after {timeout} s"
        time.sleep(0.002)


def long_poll_across(waiter: Api, match_id: str, token: str | None, after: int,
                     act: Callable[[], None], waiting: Callable[[], bool],
                     wait: float = 20) -> tuple[Resp, float]:
    """Long-poll events through ``waiter`` in a thread, run ``act`` once
    ``waiting()`` says the poll waits; the poll's response and how long it
    waited (seconds)."""
    out: dict[str, Any] = {}

    def poll() -> None:
        started = time.monotonic()
        out["r"] = waiter.events(match_id, token, after=after, wait=wait)
        out["elapsed"] = time.monotonic() - started

    thread = threading.Thread(target=poll)
    thread.start()
    until(waiting, "waiting")
    act()
    thread.join(wait + 10)
    assert not thread.is_alive(), "the long-poll did not return"
    return out["r"], out["elapsed"]


def events_of(body: Any) -> list[dict[str, Any]]:
    """The event list of an events response (a list, or an object with
    ``events``)."""
    if isinstance(body, list):
        return body
    assert isinstance(body, dict) and isinstance(body.get("events"), list), body
    return body["events"]


def strip_label(move: dict[str, Any]) -> dict[str, Any]:
    """A listed move as the engine lists it: without its ``label`` and the
    ``id`` the service adds (api.md "Moves as numbers")."""
    return {k: v for k, v in move.items() if k not in ("label", "id")}


def assert_problem(r: Resp, status: int, code: str | None = None) -> dict[str, Any]:
    """An RFC 9457 error with the contract's stable ``code``."""
    assert r.status == status, r
    assert r.content_type == PROBLEM_JSON, r
    body = r.json
    assert isinstance(body, dict), r
    for key in ("code", "title", "status", "detail"):
        assert key in body, f"problem body lacks {key!r}: {r!r}"
    assert body["status"] == status, r
    assert isinstance(body["title"], str) and body["title"], r
    assert isinstance(body["detail"], str), r
    if code is not None:
        assert body["code"] == code, r
    return body


def current_version_in(body: dict[str, Any]) -> int | None:
    """The current version a 409 version_conflict reports (any top-level
    integer field whose name mentions 'version')."""
    for key in ("current_version", "version"):
        if isinstance(body.get(key), int) and not isinstance(body.get(key), bool):
            return body[key]
    for key, value in body.items():
        if "version" in key and isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def comparable(view: dict[str, Any]) -> dict[str, Any]:
    """A view without the per-match / per-request identity fields."""
    out = dict(view)
    out.pop("match_id", None)
    out.pop("viewer", None)
    return out


# --------------------------------------------------------------------------
# Random play through the contract only.
# --------------------------------------------------------------------------
def replay_record(api: Api, record: dict[str, Any]) -> Match:
    """Create a fresh match from a record and post its moves as admin."""
    fresh = api.create(record["players"], game=record["game"], seed=record["seed"], options=record["options"])
    for entry in record["moves"]:
        r = api.move(fresh.id, fresh.admin, entry["move"], entry["version"] - 1, seat=entry["seat"])
        assert r.status == 200, (entry, r)
    return fresh


def play_random(match: Match, rng: random.Random, *, max_moves: int = 5000,
                on_step: Callable[[Match, int, dict[str, Any], Resp], None] | None = None,
                knock_bias: float | None = None) -> dict[str, Any]:
    """A random bot: ask the seat to act for its legal moves (seat token),
    post one with the version; until the match is finished.  Returns the last
    admin view."""
    api = match.api
    for _ in range(max_moves):
        view = match.admin_view()
        if view["status"] == "finished":
            return view
        assert view["to_act"], view
        seat = rng.choice(view["to_act"])
        r = api.legal(match.id, match.token(seat))
        assert r.status == 200, r
        legal = r.json
        assert legal["version"] == view["version"] and legal["seat"] == seat, legal
        assert legal["moves"], f"seat {seat} is to act but has no legal move: {view}"
        moves = legal["moves"]
        if knock_bias is not None and any(m["type"] == "knock" for m in moves):
            want = "knock" if rng.random() < knock_bias else "end_turn"
            move = next(m for m in moves if m["type"] == want)
        else:
            move = rng.choice(moves)
        r = api.move(match.id, match.token(seat), move, view["version"])
        assert r.status == 200, (move, r)
        assert r.json["version"] == view["version"] + 1, r
        match.log.append((seat, strip_label(move)))
        if on_step:
            on_step(match, seat, move, r)
    raise AssertionError(f"match not finished after {max_moves} moves")
