"""Beaver High Card, a toy game for the "Adding a game" recipe
(docs/adding-a-game.md), kept in the tests and never shipped: its engine
(:mod:`.engine`), its heuristic bot (:mod:`.bot`), its docs page
(``tests/data/toy-high-card.md``), no board of its own (``/play`` draws it
with the generic board), and its knowledge model and worlds spec for the
generic tests (:mod:`.knowledge`), registered here beside the game as a
plugin's would be.  ``tests/live/test_toy_game.py`` registers it with one line,
``LODGE_EXTRA_GAMES=tests.toy_game:HighCard``, and runs every generic suite
on it.
"""
from tests.toy_game import knowledge as knowledge
from tests.toy_game.engine import HighCard

__all__ = ["HighCard", "knowledge"]
