"""Heuristic bot for Biberbande (rule ids ``BB-x.y`` from ``docs/games/biberbande.md``).

Every decision compares expected card values.  A slot whose value the seat knows
(``players[i].known``, BB-5.6) counts at that value; any other card, and a known
special (replaced by a number at round end, BB-6.2), counts at the mean of the
number cards the seat has not seen.  The unseen cards are the deck (BB-1.1) minus
the public discard pile (BB-5.3), every known display card and the own held card:
exactly the draw pile plus the hidden display cards, so no memory is needed.
"""
from __future__ import annotations

from collections import Counter

from .base import Bot, Move, View

#: BB-1.1: the 66-card deck.
DECK = Counter({**{str(v): 4 for v in range(9)}, "9": 9, "swap": 9, "peek": 7, "draw2": 5})
#: What drawing a special is worth (in points saved) when weighing a draw (BB-4.1).
SPECIAL_WORTH = 1.0


class Estimate:
    """Expected values of every display slot, from one seat's view."""

    def __init__(self, view: View, seat: int):
        players = view["players"]
        seen = Counter(view["board"]["discard"])
        seen.update(card for p in players for card in p["known"] if card is not None)
        drawn = view["board"]["drawn"]
        if drawn and drawn["seat"] == seat and drawn["card"] is not None:
            seen[drawn["card"]] += 1
        self.unseen = DECK - seen
        numbers = {card: k for card, k in self.unseen.items() if card.isdigit()}
        count = sum(numbers.values())
        self.mean = sum(int(c) * k for c, k in numbers.items()) / count if count else 5.0
        self.slots = [[self.value(card) for card in p["known"]] for p in players]
        self.seat = seat

    def value(self, card: str | None) -> float:
        """A known number is its digit; anything else is an unseen number (BB-6.2)."""
        return float(card) if card is not None and card.isdigit() else self.mean

    def mine(self) -> list[float]:
        return self.slots[self.seat]

    def worst(self) -> int:
        """The own slot with the highest expected value (first on ties)."""
        mine = self.mine()
        return mine.index(max(mine))

    def draw_gain(self) -> float:
        """Expected points saved by Action A: a number below the worst slot replaces it;
        a special is worth SPECIAL_WORTH (BB-4.1, BB-4.2)."""
        worst = max(self.mine())
        total = sum(self.unseen.values())
        gain = sum(k * (max(0.0, worst - int(c)) if c.isdigit() else SPECIAL_WORTH)
                   for c, k in self.unseen.items())
        return gain / total if total else 0.0


def find(moves: list[Move], **fields: object) -> Move | None:
    """The listed move with these fields, or None."""
    return next((m for m in moves if all(m.get(k) == v for k, v in fields.items())), None)


def listed(moves: list[Move], **fields: object) -> Move:
    """The listed move with these fields, else the first listed move (so the
    bot always answers a listed move)."""
    return find(moves, **fields) or moves[0]


class HeuristicBot(Bot):
    """Keeps low cards, peeks at unknown ones, swaps its worst card for an opponent's
    lowest, and knocks when its expected total is low."""

    #: Knock when the expected own total is at most this (BB-4.7) ...
    knock_at = 8.0
    #: ... or at least this much below every opponent's expected total.
    knock_lead = 9.0

    def choose(self, view: View | None, moves: list[Move]) -> Move:
        view = self.seen(view)
        est = Estimate(view, self.seat)
        phase = view["phase"]
        if phase == "action":
            return self._action(est, view, moves)
        if phase == "drawn":
            return self._held(est, view, moves)
        if phase == "second_draw":
            return moves[0]  # BB-4.4: the second draw is a free option (draw comes first)
        return self._knock(est, view, moves)

    def _action(self, est: Estimate, view: View, moves: list[Move]) -> Move:
        """BB-4.1: take a face-up number if it saves more than drawing is expected to."""
        top = view["board"]["discard"][-1]
        worst = est.worst()
        take = find(moves, type="take_discard", slot=worst)
        if take and est.mine()[worst] - int(top) > est.draw_gain():
            return take
        return find(moves, type="draw") or moves[0]

    def _held(self, est: Estimate, view: View, moves: list[Move]) -> Move:
        """BB-4.2: place a number below the worst slot; use a special when it helps."""
        card = view["board"]["drawn"]["card"]
        discard = listed(moves, type="discard_drawn")
        if card == "draw2":
            return listed(moves, type="use_draw2")
        if card == "peek":
            unknown = [j for j, c in enumerate(view["players"][self.seat]["known"]) if c is None]
            return listed(moves, type="use_peek", slot=unknown[0]) if unknown else discard
        if card == "swap":
            return self._swap(est, view, moves) or discard
        worst = est.worst()
        if int(card) < est.mine()[worst]:
            return listed(moves, type="swap_drawn", slot=worst)
        return discard

    def _swap(self, est: Estimate, view: View, moves: list[Move]) -> Move | None:
        """BB-4.3 ``use_swap``: give the worst own card for the lowest opposing card;
        on equal gain prefer the opponent with the lowest total score (BB-6.5)."""
        worst = est.worst()
        scores = view["scores"]

        def gain(m: Move) -> float:
            return est.mine()[worst] - est.slots[m["target_seat"]][m["target_slot"]]

        options = [m for m in moves if m["type"] == "use_swap" and m["slot"] == worst]
        best = max(options, key=lambda m: (gain(m), -scores[m["target_seat"]]))
        return best if gain(best) > 0 else None

    def _knock(self, est: Estimate, view: View, moves: list[Move]) -> Move:
        """BB-4.7: knock when the own expected total is low, absolutely or relatively."""
        total = sum(est.mine())
        others = min(sum(row) for s, row in enumerate(est.slots) if s != self.seat)
        if total <= self.knock_at or total + self.knock_lead <= others:
            return listed(moves, type="knock")
        return listed(moves, type="end_turn")
