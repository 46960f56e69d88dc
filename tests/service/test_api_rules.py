"""Biberbande rules that are part of the public contract, checked over HTTP:
the seed-derived shuffles (BB-3.2, BB-3.6: "a change is a breaking change"),
the deal (BB-3.1, BB-3.3), later rounds, and the end of round.  Both stores."""
from __future__ import annotations

import random

from tests.http_helpers import CANONICAL, W1_MOVES, W1_OPTIONS, Api, strip_label


def seeded(seed: int, round_no: int, k: int, cards: list[str]) -> list[str]:
    out = list(cards)
    random.Random(f"biberbande:{seed}:{round_no}:{k}").shuffle(out)
    return out


def expected_deal(deck: list[str], n: int, starter: int) -> tuple[list[list[str]], list[str], list[str]]:
    """BB-3.3: displays, discard, draw pile (top first)."""
    displays = [[""] * 4 for _ in range(n)]
    for i in range(4 * n):
        displays[(starter + i) % n][i // n] = deck[i]
    return displays, [deck[4 * n]], deck[4 * n + 1:]


def test_seeded_deal_bb_3_2_bb_3_3(api: Api):
    for n, seed, first in ((3, 42, 0), (5, 2**53 - 1, 3), (2, 0, 1)):
        m = api.create(n, seed=seed, options={"first_seat": first})
        a = m.admin_view()
        displays, discard, pile = expected_deal(seeded(seed, 1, 0, CANONICAL), n, first)
        assert [p["display"] for p in a["players"]] == displays, (n, seed)
        assert a["board"]["discard"] == discard
        assert a["board"]["draw_pile"] == pile
        assert a["board"]["starter"] == first and a["to_act"] == [first]  # BB-3.1, BB-3.5


def test_second_round_bb_3_1_bb_6_4(api: Api):
    """After W1's round 1 (stacked deck), round 2 is dealt from the seed by the
    next seat (BB-3.1, BB-3.2); scores carry the round points (BB-6.3)."""
    m = api.create(["ana", "bo"], seed=11, options={"rounds": 2, "decks": [W1_OPTIONS["deck"]]})
    for seat, mv in W1_MOVES:
        r = m.play(seat, mv)
    a = m.admin_view()
    assert a["status"] == "active" and a["round"] == 2 and a["rounds"] == 2
    assert a["scores"] == [12, 16]
    assert a["board"]["starter"] == 1 and a["to_act"] == [1] and a["board"]["turn"] == 1
    assert a["board"]["knocker"] is None and a["board"]["drawn"] is None
    displays, discard, pile = expected_deal(seeded(11, 2, 0, CANONICAL), 2, 1)
    assert [p["display"] for p in a["players"]] == displays
    assert a["board"]["discard"] == discard and a["board"]["draw_pile"] == pile
    h = a["board"]["history"]
    assert len(h) == 1 and h[0]["points"] == [12, 16] and h[0]["reason"] == "knock"
    types = [e["type"] for e in r.json["events"]]
    # BB-6.1…6.4 then BB-3.5, all in the request of the last move
    for t in ("round_ended", "round_scored", "round_started", "dealt", "turn_started"):
        assert t in types, types
    assert types.index("round_scored") < types.index("round_started")
    assert "match_ended" not in types
    # BB-5.5: a new deal clears knowledge; each seat knows its new outer cards
    s1 = m.seat_view(1)
    assert s1["players"][1]["known"] == [displays[1][0], None, None, displays[1][3]]
    assert s1["players"][0]["known"] == [None] * 4


def test_reshuffle_bb_3_6(api: Api):
    """When a card must be drawn from an empty pile, the discard pile except its
    top is shuffled with random.Random("biberbande:<seed>:<r>:<k>")."""
    seed = 555
    m = api.create(2, seed=seed, options={"rounds": 1, "turn_limit": 60})
    reshuffles = 0
    for _ in range(400):
        a = m.admin_view()
        assert a["status"] == "active", "round ended before the draw pile ran out"
        seat = a["to_act"][0]
        if a["phase"] == "knock":
            move = {"type": "end_turn"}
        elif a["phase"] in ("action", "second_draw"):
            move = {"type": "draw"}
            assert move in [strip_label(x) for x in m.legal(seat)]
        else:  # drawn: discard whatever is held (specials unused)
            move = {"type": "discard_drawn"}
        r = api.move(m.id, m.token(seat), move, a["version"])
        assert r.status == 200, r
        before = a["board"]
        if move["type"] == "draw" and before["draw_count"] == 0:
            reshuffles += 1
            L = seeded(seed, 1, reshuffles, before["discard"][:-1])
            after = m.admin_view()["board"]
            assert after["drawn"]["card"] == L[0], "BB-3.6: L[0] is drawn first"
            assert after["draw_pile"] == L[1:]
            assert after["discard"] == before["discard"][-1:], "BB-3.6: the top card stays"
            ev = [e for e in r.json["events"] if e["type"] == "reshuffled"]
            assert len(ev) == 1 and ev[0]["count"] == reshuffles
            break
    assert reshuffles == 1


def test_turn_limit_round_end_bb_4_9(api: Api):
    """No knock: the round ends after turn T = turn_limit·n, reason turn_limit."""
    m = api.create(3, seed=9, options={"rounds": 1, "turn_limit": 2})
    last_turn_seen = 0
    while True:
        a = m.admin_view()
        if a["status"] == "finished":
            break
        last_turn_seen = a["board"]["turn"]
        seat = a["to_act"][0]
        legal = [strip_label(x) for x in m.legal(seat)]
        if a["phase"] == "knock":
            m.play(seat, {"type": "end_turn"})
        elif {"type": "discard_drawn"} in legal:
            m.play(seat, {"type": "discard_drawn"})
        elif {"type": "draw"} in legal:
            m.play(seat, {"type": "draw"})
        else:
            m.play(seat, legal[0])
    assert last_turn_seen == 6
    h = m.admin_view()["board"]["history"][0]
    assert h["reason"] == "turn_limit" and h["knocker"] is None


def test_final_result_bb_6_5(api: Api):
    """Ranking groups ascending totals, winners the first group; the final
    displays are public (BB-5.1, D20)."""
    m = api.create(4, seed=31, options={"rounds": 1, "turn_limit": 1})
    while m.admin_view()["status"] != "finished":
        a = m.admin_view()
        seat = a["to_act"][0]
        legal = [strip_label(x) for x in m.legal(seat)]
        m.play(seat, {"type": "end_turn"} if {"type": "end_turn"} in legal else legal[0])
    spec = m.spectator_view()
    res = spec["result"]
    scores = res["scores"]
    groups = sorted({s for s in scores})
    assert res["ranking"] == [[i for i in range(4) if scores[i] == g] for g in groups]
    assert res["winners"] == res["ranking"][0]
    hist = spec["board"]["history"][0]
    assert [p["display"] for p in spec["players"]] == hist["displays"]
    assert hist["points"] == [sum(int(c) for c in d) for d in hist["displays"]]  # BB-6.3
    assert all(c not in ("swap", "peek", "draw2") for d in hist["displays"] for c in d)  # BB-6.2


def test_decks_option_deals_later_rounds_bb_3_2(api: Api):
    """options.decks[r-1] is round r's order; rounds after the list are seeded."""
    from tests.http_helpers import stack

    second = stack("9 8 7 6 5 4 3 2 1 0".split())
    m = api.create(2, seed=11, options={"rounds": 3, "decks": [W1_OPTIONS["deck"], second]})
    for seat, mv in W1_MOVES:
        m.play(seat, mv)
    a = m.admin_view()
    assert a["round"] == 2 and a["board"]["starter"] == 1
    displays, discard, pile = expected_deal(second, 2, 1)
    assert [p["display"] for p in a["players"]] == displays
    assert a["board"]["discard"] == discard and a["board"]["draw_pile"] == pile


def test_recall_does_not_change_events_bb_5_7(api: Api):
    """BB-5.7: `recall` changes `known` in views, never the events."""
    logs = {}
    for recall in ("perfect", "none"):
        m = api.create(3, seed=77, options={"rounds": 1, "turn_limit": 3, "recall": recall})
        rng = random.Random(1)
        while m.admin_view()["status"] == "active":
            seat = m.admin_view()["to_act"][0]
            m.play(seat, rng.choice(m.legal(seat)))
        logs[recall] = [m.events(m.token(s)) for s in range(3)] + [m.events(None), m.events(m.admin)]
    assert logs["perfect"] == logs["none"]


def test_player_names_round_trip(api: Api):
    names = ["Ärger-Biber 🦫", "x" * 64, "  spaced  ", "ana"]
    m = api.create(names, seed=1)
    assert [s["name"] for s in m.created["seats"]] == names
    assert [p["name"] for p in m.spectator_view()["players"]] == names
    assert api.record(m.id, m.admin).json["players"] == names or \
        [p.get("name") for p in api.record(m.id, m.admin).json["players"]] == names
    r = api.create_raw({"game": "biberbande", "players": ["ana", "x" * 65], "seed": 1})
    assert r.status == 422 and r.json["code"] == "invalid_options", r
    r = api.create_raw({"game": "biberbande", "players": ["ana", ""], "seed": 1})
    assert r.status == 422 and r.json["code"] == "invalid_options", r
