"""The Bot interface every built-in bot keeps: ``choose(view, moves)`` takes
the view the harness passes, which is None only for bots without
``needs_view``."""
from __future__ import annotations

import pytest

from bots import bot_class
from engine import REGISTRY


@pytest.mark.parametrize("game", REGISTRY.ids())
def test_heuristic_bot_without_a_view_says_so(game):
    bot = bot_class("heuristic", game)(game, 0, 1)
    assert bot.needs_view
    with pytest.raises(ValueError, match="needs one"):
        bot.choose(None, [{"type": "pass"}])


def test_a_game_without_a_heuristic_bot_module_is_an_error():
    with pytest.raises(ValueError, match="no heuristic bot"):
        bot_class("heuristic", "no-such-game")


def test_random_bot_needs_no_view():
    bot = bot_class("random", "biberbande")("biberbande", 0, 1)
    assert not bot.needs_view
    assert bot.choose(None, [{"type": "draw"}]) == {"type": "draw"}
