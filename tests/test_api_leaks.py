"""Hidden-information checks over HTTP (api.md "View", biberbande.md §5).

Whole random Biberbande matches are played through the API (embedded store);
after every move each seat's and the spectator's view, events and legal moves
are compared with the admin's: nobody sees a hidden display card, another
seat's held card, the draw pile, or another seat's legal moves; with
``recall: "perfect"`` a seat's ``known`` is exactly what BB-5.5 says it has
seen — checked against an independent knowledge model driven by the admin's
events."""
from __future__ import annotations

import random
from typing import Any

import pytest

from tests.http_helpers import Api, Match, strip_label

SECRET_CARD_EVENTS = ("drew", "swapped_drawn", "used_peek")  # BB-5.7


class Knowledge:
    """BB-5.5: which seats know which display position, from the admin events."""

    def __init__(self, n: int):
        self.n = n
        self.k: list[list[set[int]]] = []
        self.reset()

    def reset(self) -> None:
        self.k = [[set() for _ in range(4)] for _ in range(self.n)]

    def apply(self, e: dict[str, Any]) -> None:
        t = e["type"]
        if t == "round_started":
            self.reset()
        elif t == "dealt":
            for s in range(self.n):  # BB-3.4
                self.k[s][0] = {s}
                self.k[s][3] = {s}
        elif t == "took_discard":
            self.k[e["seat"]][e["slot"]] = set(range(self.n))
        elif t == "swapped_drawn":
            self.k[e["seat"]][e["slot"]] = {e["seat"]}
        elif t == "used_peek":
            self.k[e["seat"]][e["slot"]].add(e["seat"])
        elif t == "used_swap":
            a, b = (e["seat"], e["slot"]), (e["target_seat"], e["target_slot"])
            self.k[a[0]][a[1]], self.k[b[0]][b[1]] = self.k[b[0]][b[1]], self.k[a[0]][a[1]]
        elif t == "replaced":
            # the special leaves, a number nobody has seen arrives (revealed anyway)
            self.k[e["seat"]][e["slot"]] = set()


def _check_event(e: dict[str, Any], viewer: int | None, admin_e: dict[str, Any], n: int) -> None:
    """One event as ``viewer`` (seat or None = spectator) got it, vs the admin's."""
    assert e["type"] == admin_e["type"] and e["version"] == admin_e["version"], (e, admin_e)
    if e["type"] in SECRET_CARD_EVENTS:
        if viewer == e["seat"]:
            assert e["card"] == admin_e["card"], (viewer, e, admin_e)
        else:
            assert e["card"] is None, f"seat {viewer} sees seat {e['seat']}'s card: {e}"
    elif e["type"] == "dealt":
        for s, row in enumerate(e["displays"] or [[None] * 4] * n):
            row = row or [None] * 4
            for j, card in enumerate(row):
                if viewer == s and j in (0, 3):
                    assert card == admin_e["displays"][s][j], (viewer, e)
                else:
                    assert card is None, f"dealt leaks seat {s} slot {j} to viewer {viewer}: {e}"
    else:
        assert e == admin_e, f"public event differs for viewer {viewer}: {e} vs {admin_e}"


# BB-8: the fields every event type carries (besides type, seat, version).
EVENT_FIELDS = {
    "round_started": {"round", "starter"}, "dealt": {"displays", "discard"}, "turn_started": {"turn"},
    "reshuffled": {"count"}, "drew": {"card", "stage"}, "took_discard": {"slot", "card", "discarded"},
    "swapped_drawn": {"slot", "card", "discarded"}, "discarded_drawn": {"card"},
    "used_swap": {"slot", "target_seat", "target_slot"}, "used_peek": {"slot", "card"}, "used_draw2": set(),
    "skipped_draw": set(), "knocked": {"turn"}, "ended_turn": set(),
    "round_ended": {"reason", "knocker", "displays"},
    "replaced": {"slot", "special", "discarded", "card"}, "round_scored": {"round", "points", "scores"},
    "match_ended": {"result"},
}


def check_admin_invariants(view: dict[str, Any], prev: dict[str, Any] | None, n: int) -> None:
    """BB-10 invariants and the turn bookkeeping of BB-4, on the admin view."""
    from collections import Counter

    from tests.http_helpers import CANONICAL

    b = view["board"]
    cards = [c for p in view["players"] for c in p["display"]] + list(b["draw_pile"]) + list(b["discard"])
    if b["drawn"] is not None:
        cards.append(b["drawn"]["card"])
    assert Counter(cards) == Counter(CANONICAL), "BB-10.1 the 66 cards are conserved"
    assert b["draw_count"] == len(b["draw_pile"])
    assert len(b["discard"]) >= 1, "BB-10.2 discard pile never empty"
    assert (b["drawn"] is not None) == (view["phase"] == "drawn"), "BB-10.2 held card only in phase drawn"
    if prev is not None:
        assert all(a >= p for a, p in zip(view["scores"], prev["scores"])), "BB-10.2 scores never decrease"
        assert view["version"] == prev["version"] + 1
    if view["status"] == "finished":
        assert view["to_act"] == [] and view["phase"] == "finished"
        return
    assert view["to_act"] == [b["current_seat"]]
    assert b["current_seat"] == (b["starter"] + b["turn"] - 1) % n, "BB-4 turn t belongs to s_r + t - 1"
    assert b["max_turn"] == b["turn_limit"] * n, "BB-4.9 T = turn_limit * n"
    assert b["turn"] <= b["max_turn"] + n - 1, "BB-4.9 a round has at most T + n - 1 turns"
    if b["knocker"] is not None:
        assert b["last_turn"] == b["knock_turn"] + n - 1
        assert b["turn"] <= b["last_turn"]
        assert view["phase"] != "knock", "BB-4.8 no knock phase after a knock"
        assert b["current_seat"] != b["knocker"] or b["turn"] == b["knock_turn"], "BB-4.8 knocker gets no turn"
    else:
        assert b["knock_turn"] is None and b["last_turn"] is None
    if view["phase"] == "knock":
        assert b["turn"] >= n and b["knocker"] is None, "BB-4.5 knock only from turn n, once per round"


def check_event_fields(e: dict[str, Any]) -> None:
    assert e["type"] in EVENT_FIELDS, f"event type not in BB-8: {e}"
    missing = (EVENT_FIELDS[e["type"]] | {"seat", "version"}) - set(e)
    assert not missing, f"event {e['type']} lacks {missing} (BB-8): {e}"


class LeakChecker:
    def __init__(self, match: Match):
        self.m = match
        self.api = match.api
        self.n = match.n
        self.know = Knowledge(self.n)
        self.seen_version = -1
        self.checked = 0
        self.prev_admin: dict[str, Any] | None = None

    def check(self, move_response: dict[str, Any] | None = None, actor: int | None = None) -> None:
        m, api, n = self.m, self.api, self.n
        admin = m.admin_view()
        admin_events = m.events(m.admin, after=self.seen_version)
        for e in admin_events:
            check_event_fields(e)
            self.know.apply(e)
        check_admin_invariants(admin, self.prev_admin, n)
        self.prev_admin = admin
        finished = admin["status"] == "finished"
        viewers: list[int | None] = [None, *range(n)]
        for viewer in viewers:
            token = None if viewer is None else m.token(viewer)
            view = api.view(m.id, token).json
            self._check_view(view, admin, viewer, finished)
            evs = m.events(token, after=self.seen_version)
            assert len(evs) == len(admin_events), (viewer, evs, admin_events)
            for e, ae in zip(evs, admin_events):
                _check_event(e, viewer, ae, n)
            if viewer is not None:
                r = api.legal(m.id, token)
                assert r.status == 200, r
                moves = r.json["moves"]
                if viewer in admin["to_act"]:
                    adm_moves = api.legal(m.id, m.admin, seat=viewer).json["moves"]
                    assert moves == adm_moves
                else:
                    assert moves == [], f"seat {viewer} not to act but gets moves {moves}"
                for other in range(n):
                    if other != viewer:
                        assert api.legal(m.id, token, seat=other).status == 403
        if move_response is not None:
            self._check_view(move_response["state"], admin, actor, finished)
            for e, ae in zip(move_response["events"], [e for e in admin_events
                                                        if e["version"] == move_response["version"]]):
                _check_event(e, actor, ae, n)
        self.seen_version = admin["version"]
        self.checked += 1

    def _check_view(self, view: dict, admin: dict, viewer: int | None, finished: bool) -> None:
        n = self.n
        assert view["version"] == admin["version"]
        for key in ("status", "round", "rounds", "phase", "to_act", "scores", "result"):
            assert view[key] == admin[key], (key, viewer)
        b, ab = view["board"], admin["board"]
        assert b["draw_pile"] is None, f"draw pile order leaked to {viewer}"
        for key in ("discard", "draw_count", "turn", "current_seat", "knocker", "knock_turn", "last_turn",
                    "starter", "history"):
            assert b[key] == ab[key], (key, viewer)
        if ab["drawn"] is None:
            assert b["drawn"] is None
        else:
            assert b["drawn"]["seat"] == ab["drawn"]["seat"] and b["drawn"]["stage"] == ab["drawn"]["stage"]
            if viewer == ab["drawn"]["seat"]:
                assert b["drawn"]["card"] == ab["drawn"]["card"]
            else:
                assert b["drawn"]["card"] is None, f"held card of seat {ab['drawn']['seat']} leaked to {viewer}"
        for s in range(n):
            p, ap = view["players"][s], admin["players"][s]
            if finished:
                assert p["display"] == ap["display"]  # BB-5.1: shown to everyone at the end
                continue
            assert p["display"] == [None] * 4, f"display of seat {s} leaked to viewer {viewer}: {p}"
            for j in range(4):
                if viewer is not None and viewer in self.know.k[s][j]:
                    assert p["known"][j] == ap["display"][j], \
                        f"seat {viewer} should know seat {s} slot {j} = {ap['display'][j]} (BB-5.5/5.6)"
                else:
                    assert p["known"][j] is None, \
                        f"seat {viewer} knows seat {s} slot {j} without having seen it: {p['known']}"


def _play_checked(api: Api, n: int, seed: int, options: dict[str, Any], rng_seed: int,
                  knock_p: float = 0.3, draw_p: float = 0.0) -> LeakChecker:
    m = api.create(n, seed=seed, options=options)
    checker = LeakChecker(m)
    checker.check()
    rng = random.Random(rng_seed)
    for _ in range(3000):
        admin = m.admin_view()
        if admin["status"] == "finished":
            break
        seat = rng.choice(admin["to_act"])
        moves = m.legal(seat)
        if any(mv["type"] == "knock" for mv in moves):
            want = "knock" if rng.random() < knock_p else "end_turn"
            move = next(mv for mv in moves if mv["type"] == want)
        elif {"type": "draw"} in [strip_label(mv) for mv in moves] and rng.random() < draw_p:
            move = next(mv for mv in moves if strip_label(mv) == {"type": "draw"})
        else:
            move = rng.choice(moves)
        r = api.move(m.id, m.token(seat), move, admin["version"])
        assert r.status == 200, (move, r)
        checker.check(r.json, seat)
    else:
        raise AssertionError("match did not finish")
    assert m.admin_view()["status"] == "finished"
    return checker


@pytest.mark.parametrize("n,seed,options,rng_seed", [
    (2, 101, {"rounds": 2, "turn_limit": 4}, 1),
    (3, 202, {"rounds": 2, "turn_limit": 3, "first_seat": 2}, 2),
    (4, 303, {"rounds": 1, "turn_limit": 3}, 3),
], ids=["2p", "3p", "4p"])
def test_random_match_never_leaks(embedded_api: Api, n, seed, options, rng_seed):
    checker = _play_checked(embedded_api, n, seed, options, rng_seed)
    assert checker.checked > 10


def test_long_round_with_reshuffle_never_leaks(embedded_api: Api):
    """A round long enough to empty the draw pile (BB-3.6 reshuffle, BB-4.9
    turn limit): still no leak, and the reshuffled pile order stays hidden."""
    checker = _play_checked(embedded_api, 2, 4242, {"rounds": 1, "turn_limit": 40}, 9, knock_p=0.0,
                            draw_p=0.9)
    m = checker.m
    types = [e["type"] for e in m.events(m.admin)]
    assert "reshuffled" in types, "the draw pile never ran out: make the round longer"
    ended = next(e for e in m.events(m.admin) if e["type"] == "round_ended")
    assert ended["reason"] == "turn_limit"
    assert m.admin_view()["board"]["history"][0]["reason"] == "turn_limit"


def test_recall_none_never_shows_known(embedded_api: Api):
    """BB-5.6: recall "none" → every `known` is null for every viewer, all match long."""
    api = embedded_api
    m = api.create(3, seed=9, options={"rounds": 1, "turn_limit": 3, "recall": "none"})
    rng = random.Random(4)
    steps = 0
    while m.admin_view()["status"] != "finished":
        v = m.admin_view()
        seat = v["to_act"][0]
        m.play(seat, rng.choice(m.legal(seat)))
        steps += 1
        for s in range(3):
            for p in m.seat_view(s)["players"]:
                assert p["known"] == [None] * 4, (s, p)
    assert steps > 3


def test_hidden_values_absent_from_error_bodies(embedded_api: Api):
    """api.md: nothing hidden may appear in errors: an illegal move of the seat
    holding a card does not echo the held card to anyone, and a wrong seat's
    refusal says nothing about the holder's options."""
    from tests.http_helpers import W1_OPTIONS

    api = embedded_api
    m = api.create(2, seed=1, options=W1_OPTIONS)
    m.play(0, {"type": "take_discard", "slot": 3})
    m.play(1, {"type": "draw"})  # seat 1 holds "6"
    r = api.move(m.id, m.token(0), {"type": "swap_drawn", "slot": 0}, 2)
    assert r.status == 409 and r.json["code"] == "not_your_turn", r
    text = r.body.decode() + " ".join(r.headers.values())
    assert '"6"' not in text and "discard_drawn" not in text, r  # holder's card / options not revealed
    r = api.legal(m.id, m.token(0), seat=1)
    assert r.status == 403 and "discard_drawn" not in r.body.decode(), r
    moves = [strip_label(x) for x in m.legal(1)]
    assert {"type": "swap_drawn", "slot": 0} in moves
