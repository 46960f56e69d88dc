"""Beaver High Card under random play (tests/data/toy-high-card.md): the
rules' invariants after every move, for every player count and hand size."""
from __future__ import annotations

import random
from typing import Any

import pytest

from tests.toy_game.engine import CANONICAL, HighCard

GAME = HighCard()


def check(state: Any) -> None:
    """HC-1.1: every card once; HC-3.3: hands ascending; HC-4.2: a seat has
    played this trick or holds one card more than one that has; HC-6.1: the
    round's points are its revealed tricks."""
    cards = [c for hand in state["hands"] for c in hand] + [c for c in state["table"] if c is not None]
    cards += state["draw"] + [c for trick in state["tricks"] for c in trick]
    assert sorted(cards, key=int) == list(CANONICAL)
    assert all(hand == sorted(hand, key=int) for hand in state["hands"])
    sizes = {len(hand) + (card is not None) for hand, card in zip(state["hands"], state["table"])}
    assert state["status"] == "finished" or sizes == {state["hand"] - len(state["tricks"])}
    assert sum(state["won"]) == len(state["tricks"])


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("hand", [1, 4])
def test_random_play_keeps_the_invariants(n: int, hand: int) -> None:
    rng = random.Random(n * 10 + hand)
    for seed in range(5):
        state, _, _ = GAME.create([f"p{i}" for i in range(n)], seed, {"hand": hand, "rounds": 2})
        moves = 0
        while state["status"] == "active":
            check(state)
            (seat,) = GAME.to_act(state)
            state, _ = GAME.play(state, seat, rng.choice(GAME.legal_moves(state, seat)))
            moves += 1
        assert moves == 2 * n * hand, "HC-4.1, HC-6.2: a card a seat a trick, rounds of `hand` tricks"
        result = GAME.result(state)
        assert sum(state["scores"]) == 2 * hand and result is not None and result["winners"]
