"""Heuristic bot for Beaver High Card (rule ids ``HC-x.y`` from ``tests/data/toy-high-card.md``).

From the seat's view only: a card is unseen unless it is in the own hand or
was revealed in this round's tricks (HC-5.4).  The bot plays its highest card
when no unseen card beats it (the trick is won whatever the others lay down,
HC-4.3), else its lowest (a trick it may lose costs as little as possible).
"""
from __future__ import annotations

from bots.base import Bot, Move, View
from tests.toy_game.engine import CANONICAL


class HeuristicBot(Bot):
    """Sure winner high, anything else low."""

    def choose(self, view: View | None, moves: list[Move]) -> Move:
        seen = self.seen(view)
        hand = [card for card in seen["players"][self.seat]["hand"] if card is not None]
        shown = {card for trick in seen["board"]["tricks"] for card in trick["cards"]}
        unseen = [int(card) for card in CANONICAL if card not in shown and card not in hand]
        by_value = sorted(moves, key=lambda move: int(move["card"]))
        best = by_value[-1]
        return best if int(best["card"]) > max(unseen, default=0) else by_value[0]
