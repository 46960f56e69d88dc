"""Beaver High Card's own rules (tests/data/toy-high-card.md), on stacked
decks; each test names the rule ids it checks.  The game is a toy for the
"Adding a game" recipe and is used here directly, unregistered."""
from __future__ import annotations

from typing import Any

import pytest

from engine.core import ADMIN_VIEWER, SPECTATOR_VIEWER, IllegalMove, seat_viewer
from tests.toy_game.bot import HeuristicBot
from tests.toy_game.engine import CANONICAL, HighCard

GAME = HighCard()
#: round 1 of a two-seat match with hands of three: seat 0 is dealt 5, 9, 2
#: and seat 1 1, 16, 3 (HC-3.2: one at a time from seat 0), ten cards undealt
DECK = ["5", "1", "9", "16", "2", "3", "4", "6", "7", "8", "10", "11", "12", "13", "14", "15"]


def new(**options: Any) -> tuple[Any, list[dict[str, Any]]]:
    state, events, _ = GAME.create(["ana", "bo"], 7, {"deck": DECK, **options})
    return state, events


def play(state: Any, seat: int, card: str) -> tuple[Any, list[dict[str, Any]]]:
    return GAME.play(state, seat, {"type": "play", "card": card})


def test_deal_round_robin_from_the_starter_hands_ascending() -> None:
    """HC-3.1, HC-3.2, HC-3.3; HC-5.1: each seat's dealt cards reach it only."""
    state, events = new()
    assert state["hands"] == [["2", "5", "9"], ["1", "3", "16"]]
    assert state["draw"] == DECK[6:]
    assert [e["type"] for e in events] == ["round_started", "dealt", "dealt"]
    dealt = events[1]
    assert GAME.redact_event(dealt, seat_viewer(dealt["seat"]))["cards"] == ["2", "5", "9"]
    assert GAME.redact_event(dealt, seat_viewer(1))["cards"] == [None] * 3
    assert GAME.redact_event(dealt, SPECTATOR_VIEWER)["cards"] == [None] * 3


def test_second_round_starts_at_the_next_seat() -> None:
    """HC-3.1: s_r = (first_seat + r − 1) mod n; HC-3.2: ``decks[r−1]`` deals round r."""
    second = list(reversed(CANONICAL))
    state, _, _ = GAME.create(["ana", "bo"], 7, {"decks": [DECK, second], "hand": 1, "first_seat": 1})
    assert GAME.to_act(state) == [1]
    state, _ = play(state, 1, "5")
    state, events = play(state, 0, "1")
    assert state["round"] == 2 and GAME.to_act(state) == [0]
    assert state["hands"] == [["16"], ["15"]], "HC-3.2: round 2 from decks[1], dealt from seat 0"
    assert [e["type"] for e in events][-3:] == ["round_started", "dealt", "dealt"]


def test_a_card_played_face_down_is_its_seats_only() -> None:
    """HC-4.2, HC-5.2, HC-7.1: the played card leaves the hand face down."""
    state, _ = new()
    state, events = play(state, 0, "9")
    played = events[0]
    assert played == {"type": "played", "seat": 0, "trick": 1, "card": "9"}
    assert GAME.redact_event(played, seat_viewer(1))["card"] is None
    assert GAME.redact_event(played, SPECTATOR_VIEWER)["card"] is None
    assert GAME.view(state, seat_viewer(0))["players"][0]["table"] == "9"
    other = GAME.view(state, seat_viewer(1))["players"][0]
    assert other["table"] is None and other["played"] is True and other["hand"] == [None, None]
    assert GAME.to_act(state) == [1]


def test_the_highest_card_takes_the_trick_and_leads() -> None:
    """HC-4.3, HC-4.4, HC-5.4: all cards revealed, the highest wins, its seat leads next."""
    state, _ = new()
    state, _ = play(state, 0, "9")
    state, events = play(state, 1, "16")
    assert events[-1] == {"type": "revealed", "seat": None, "trick": 1, "cards": ["9", "16"], "winner": 1}
    view = GAME.view(state, SPECTATOR_VIEWER)
    assert view["board"]["tricks"] == [{"trick": 1, "leader": 0, "cards": ["9", "16"], "winner": 1}]
    assert view["board"]["leader"] == 1 and GAME.to_act(state) == [1]
    assert [p["won"] for p in view["players"]] == [0, 1] and [p["table"] for p in view["players"]] == [None, None]


def test_tricks_score_and_the_most_wins() -> None:
    """HC-4.1, HC-6.1, HC-6.2: one round of three tricks, a point a trick."""
    state, _ = new(rounds=1)
    for seat, card in [(0, "9"), (1, "1"), (0, "5"), (1, "3"), (0, "2"), (1, "16")]:
        state, events = play(state, seat, card)
    assert [e["type"] for e in events][-3:] == ["revealed", "round_scored", "match_ended"]
    assert events[-2]["tricks"] == [2, 1] and state["scores"] == [2, 1]
    assert state["status"] == "finished" and state["result"]["winners"] == [0]


def test_only_a_card_of_the_own_hand_is_legal() -> None:
    """HC-4.2: the refusal cites the rule and names no card (HC-5.1)."""
    state, _ = new()
    assert GAME.legal_moves(state, 0) == [{"type": "play", "card": c} for c in ("2", "5", "9")]
    with pytest.raises(IllegalMove) as refused:
        play(state, 0, "16")
    assert "HC-4.2" in refused.value.detail and "16" not in refused.value.detail


def test_the_draw_pile_is_the_admins_only() -> None:
    """HC-5.3, HC-7.2: the undealt cards' order to the admin, their count to all."""
    state, _ = new()
    assert GAME.view(state, ADMIN_VIEWER)["board"]["draw_pile"] == DECK[6:]
    for viewer in (SPECTATOR_VIEWER, seat_viewer(0)):
        board = GAME.view(state, viewer)["board"]
        assert board["draw_pile"] is None and board["draw_count"] == 10


def test_a_card_is_a_move_number() -> None:
    """HC-4.2: the action space numbers ``play`` by its declared cards, "1" … "16"."""
    assert GAME.actions == 16
    assert [GAME.action_id({"type": "play", "card": c}) for c in ("1", "9", "16")] == [0, 8, 15]


def test_the_heuristic_bot_plays_a_sure_winner_high_else_low() -> None:
    """HC-4.3: 16 beats every unseen card, so seat 1 plays it; seat 0's 9 could
    lose, so it plays its lowest card."""
    state, _ = new()
    ana, bo = HeuristicBot(GAME.id, 0, 1), HeuristicBot(GAME.id, 1, 1)
    assert ana.choose(GAME.view(state, seat_viewer(0)), [dict(m) for m in GAME.legal_moves(state, 0)])["card"] == "2"
    state, _ = play(state, 0, "2")
    assert bo.choose(GAME.view(state, seat_viewer(1)), [dict(m) for m in GAME.legal_moves(state, 1)])["card"] == "16"
