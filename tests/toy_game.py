"""A toy game for the "Adding a game" recipe (docs/adding-a-game.md), not
shipped: Biberbande's rules under another id, its own rule prefix (TOY-1) and
its own docs page (``tests/data/toy-biberbande.md``, decision D1), reusing
Biberbande's heuristic bot and ``/play`` board, and its own entry in the leak
tests' knowledge model (:mod:`tests.knowledge`), registered beside it as a
plugin game's would be.  ``tests/live/test_toy_game.py``
registers it with one line (``LODGE_EXTRA_GAMES=tests.toy_game:ToyBiberbande``)
and runs the generic suites on it.
"""
from __future__ import annotations

import dataclasses

from engine.biberbande import Biberbande
from tests import knowledge


class ToyBiberbande(Biberbande):
    """TOY-1: Biberbande under the id ``toy-biberbande`` (D1)."""

    id = "toy-biberbande"
    rule_prefix = "TOY"
    title = "Toy Biberbande"
    declaration = dataclasses.replace(Biberbande.declaration, docs="tests/data/toy-biberbande.md")


@knowledge.register
class ToyKnowledge(knowledge.Biberbande):
    """What each viewer of the toy game knows: Biberbande's hidden information (BB-5)."""

    game_id = ToyBiberbande.id
