"""The engine core's shared mechanics, on every registered game where it
applies: option validation, move matching, ranking, seeded shuffles."""
from __future__ import annotations

import random

import pytest

from engine import REGISTRY
from engine.core import InvalidOptions, make_result, ranking, same_move, seeded_shuffle

GAMES = list(REGISTRY)


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_null_is_the_default_only_for_options_whose_default_is_null(game):
    """BB-2.2 / BC-2.2 / MLB-2.0 / TB-2.1: a wrong type is 422; ``null`` stands
    for "default" only where the default is null (deck, decks, fish, wolves)."""
    names = ["a", "b"]
    for option in game.options:
        if option.default is None:
            game.create(names, 1, {option.name: None})
        else:
            with pytest.raises(InvalidOptions, match=option.name):
                game.create(names, 1, {option.name: None})


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_resolved_options_replay(game):
    """A record carries the resolved options; creating from them again gives
    the identical state (api.md: record replay)."""
    state, _, resolved = game.create(["a", "b", "c"][:max(2, game.min_players)], 99, {})
    again, _, resolved_again = game.create(["a", "b", "c"][:max(2, game.min_players)], 99, resolved)
    assert again == state and resolved_again == resolved


def test_same_move_compares_json_types_and_ignores_labels():
    """BB-4.11: same keys and values, integers as JSON integers; `label` ignored."""
    listed = {"type": "take_discard", "slot": 1}
    assert same_move({"type": "take_discard", "slot": 1, "label": "take it"}, listed)
    assert not same_move({"type": "take_discard", "slot": True}, listed)
    assert not same_move({"type": "take_discard", "slot": 1.0}, listed)
    assert not same_move({"type": "take_discard", "slot": 1, "extra": 0}, listed)
    assert not same_move({"type": "draw", "slot": 1}, listed)


def test_ranking_groups_ties_and_puts_a_first_group_ahead():
    """BB-6.5 (lowest wins, shared places) and BC-6.7 (five of a kind first)."""
    assert ranking([10, 4, 10, 7], lowest_wins=True) == [[1], [3], [0, 2]]
    assert ranking([10, 4, 10, 7], lowest_wins=False) == [[0, 2], [3], [1]]
    assert ranking([10, 4, 10, 7], lowest_wins=False, first_group=[1]) == [[1], [0, 2], [3]]
    assert make_result([3, 3], lowest_wins=True)["winners"] == [0, 1]


def test_seeded_shuffle_is_random_Random_of_the_key():
    """BB-3.2: the shuffle contract is ``random.Random(key).shuffle``, the same
    on every machine; the input is not changed."""
    cards = [str(i) for i in range(20)]
    expected = list(cards)
    random.Random("biberbande:42:1:0").shuffle(expected)
    assert seeded_shuffle(cards, "biberbande:42:1:0") == expected
    assert cards == [str(i) for i in range(20)]
