"""Heuristic bot for BiberClan (rule ids ``BC-x.y`` from ``docs/games/biberclan.md``).

One-ply search: every legal move is applied to a small model of the castles
and the resulting position is scored; the best move wins (ties by ``rng``).

A castle's worth to its owner is its expected round score (BC-6.1: values
plus the bonus of the largest equal group), plus a little for each free slot
and for groups that may still grow, minus a share of the unprotected cards
(BC-4.1) that others may steal or clear.  A position's score is the bot's
match total plus its castle's worth minus that of its opponents, the leader
weighted most, so gifts, steals and specials go against the leader.  When
the round is about to end (the bot completes its castle, or plays in the
final lap, BC-4.11) the settled round scores count instead, with the
finisher's penalty (BC-6.2); a five of a kind (BC-6.4) outweighs everything.

Card values come from the view alone: face-up cards, ``known`` cards
(BC-5.5) and the held card; any other card counts at the mean of the numbers
the bot has not seen (the deck minus the discard, the known castle cards and
the held card).
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from .base import Bot, Move, View

SLOTS = ("b0", "b1", "b2", "t0", "t1")
INDEX = {name: i for i, name in enumerate(SLOTS)}
#: BC-1.4: top slot -> the bottom slots it rests on.
SUPPORTS = {3: (0, 1), 4: (1, 2)}
#: BC-1.2 / BC-1.3: the number cards of the base and the combination deck.
BASE_NUMBERS = Counter({"0": 7, "1": 6, "2": 6, "3": 6, "4": 5, "5": 5, "6": 5, "7": 4, "8": 4, "9": 4})
BIBERBANDE_NUMBERS = BASE_NUMBERS + Counter({str(d): 4 for d in range(10)})
BASE_SIZE = 66
#: BC-6.1: bonus of the largest equal group.
GROUP_BONUS = {3: 15, 4: 25}
#: BC-6.2: the finisher's penalty.
PENALTY = 10.0
#: BC-6.4: a five of a kind wins the match outright.
FIVE = 1000.0

#: What an empty slot is still worth to its owner while the round runs
#: (low: the round is a race, and empty slots score nothing).
FREE_SLOT = 2.0
#: An own card that may still be replaced (BC-4.4) is worth a share of the
#: way up to this value.
UPGRADE = 6.0
UPGRADE_SHARE = 0.3
#: Share of an unprotected card's value at risk of being stolen or cleared.
RISK = 0.12
#: Draws over which an unfinished group may still grow.
HORIZON = 2
#: What a seat with a free slot adds in its last turn (BC-4.11).
LAST_CARD = 3.0
#: Weight of the strongest opponent (the rest: of their mean) with 3+ seats.
LEADER_WEIGHT = 0.7


def protected(castle: list, i: int, by_owner: bool) -> bool:
    """BC-4.1: (a) covered by a top card, (b) castle full, (c) the only
    face-up card (against other seats only)."""
    if all(castle):
        return True
    if any(castle[top] and i in pair for top, pair in SUPPORTS.items()):
        return True
    if by_owner or not castle[i][1]:
        return False
    return sum(1 for c in castle if c and c[1]) == 1


def free_slots(castle: list) -> list[int]:
    """BC-1.4: empty slots; a top one only on two filled supports."""
    free = [i for i in range(3) if castle[i] is None]
    return free + [top for top, (a, b) in SUPPORTS.items() if castle[top] is None and castle[a] and castle[b]]


def put(castles: list, target: int, slot: int, cell) -> list:
    """A copy of ``castles`` with ``cell`` in ``target``'s ``slot``
    (the untouched castles are shared)."""
    out = list(castles)
    out[target] = list(out[target])
    out[target][slot] = cell
    return out


class Model:
    """The castles as one seat sees them: each slot ``None`` or
    ``(value, face_up)``, value ``None`` when unknown; plus the unseen numbers."""

    def __init__(self, view: View, seat: int):
        board, players = view["board"], view["players"]
        self.seat, self.n = seat, len(players)
        self.totals = view["scores"]
        #: per seat, per slot: ``(value or None, face_up)`` or None (empty)
        self.castles: list[list[Any]] = [[cell(p["castle"][s]) for s in SLOTS] for p in players]
        held = board["held"]
        self.held = held and (held["card"] or held.get("known"))
        size = (board["draw_count"] + len(board["discard"]) + len(board["box"])
                + sum(p["cards"] for p in players) + (held is not None))      # BC-10.1
        seen = Counter(board["discard"])                                   # D14
        seen.update(str(c[0]) for castle in self.castles for c in castle if c and c[0] is not None)
        if self.held and self.held.isdigit():
            seen[self.held] += 1
        self.unseen = (BASE_NUMBERS if size == BASE_SIZE else BIBERBANDE_NUMBERS) - seen
        self.unseen_count = sum(self.unseen.values()) or 1
        self.mean = sum(int(c) * k for c, k in self.unseen.items()) / self.unseen_count
        self.finisher = board["finisher"]
        self.final_turns = board["final_turns"]
        self.cache: dict[tuple[int, int | None], float] = {}

    # --- worth of one castle ------------------------------------------------
    def settled(self, castle: list) -> tuple[float, int, int]:
        """BC-6.1 estimate: (values + bonus, size and value of the largest
        known group); a five of a kind adds :data:`FIVE` (BC-6.4)."""
        known = [c[0] for c in castle if c and c[0] is not None]
        unknown = sum(1 for c in castle if c and c[0] is None)
        groups = Counter(known).most_common(1)
        value, size = groups[0] if groups else (0, 0)
        total = sum(known) + unknown * self.mean + GROUP_BONUS.get(size, 0) + (size == 5) * FIVE
        return total, size, value

    def worth(self, owner: int, castle: list, last_turns: int | None) -> float:
        """Expected round score of ``owner``'s castle; ``last_turns`` None
        while the round runs on, else the turns the owner has left (0 or 1)."""
        if castle is self.castles[owner] and (owner, last_turns) in self.cache:
            return self.cache[owner, last_turns]
        total, size, value = self.settled(castle)
        free = castle.count(None)
        if last_turns is not None:
            total += LAST_CARD * bool(free and last_turns)
        else:
            total += FREE_SLOT * free
            room = free
            for i, c in enumerate(castle):
                if c is None:
                    continue
                if not protected(castle, i, True):                       # BC-4.4 own replace
                    room += c[0] != value
                    if owner == self.seat and c[0] is not None:
                        total += UPGRADE_SHARE * max(0.0, UPGRADE - c[0])
                if not protected(castle, i, False):                      # steals, clears
                    total -= RISK * (self.mean if c[0] is None else c[0])
            if 2 <= size <= 4 and room:                                  # BC-6.1 groups may grow
                chance = 1 - (1 - self.unseen[str(value)] / self.unseen_count) ** HORIZON
                gain = GROUP_BONUS.get(size + 1, 0) - GROUP_BONUS.get(size, 0) + (size == 4) * FIVE / 10
                total += chance * (gain + value)
        if castle is self.castles[owner]:
            self.cache[owner, last_turns] = total
        return total

    # --- worth of the whole position -----------------------------------------
    def score(self, castles: list, finisher: int | None) -> float:
        """Own total and worth minus the opponents' (the leader weighted most).
        With a finisher the round ends after the final lap (BC-4.11): seats
        still to play it get one last card, the finisher may lose
        :data:`PENALTY` (BC-6.2)."""
        if finisher is None:
            worths = [self.worth(o, c, None) for o, c in enumerate(castles)]
        else:
            later = self.final_turns if self.finisher is not None else range(self.n)
            worths = [self.worth(o, c, int(o in later and o != self.seat)) for o, c in enumerate(castles)]
            best_other = max(w for o, w in enumerate(worths) if o != finisher)
            worths[finisher] -= PENALTY * min(1.0, max(0.0, 0.5 + (best_other - worths[finisher]) / 6))
        mine = self.totals[self.seat] + worths[self.seat]
        others = [self.totals[o] + worths[o] for o in range(self.n) if o != self.seat]
        return mine - LEADER_WEIGHT * max(others) - (1 - LEADER_WEIGHT) * sum(others) / len(others) \
            if len(others) > 1 else mine - others[0]

    def after_turn(self, castles: list) -> float:
        """Score once the bot's turn ends with ``castles``: a fifth own card
        makes it the finisher (BC-4.11)."""
        finisher = self.finisher
        if finisher is None and all(castles[self.seat]):
            finisher = self.seat
        return self.score(castles, finisher)


def cell(slot: dict | None) -> tuple[int | None, bool] | None:
    """A view slot (BC-7.1) as ``(value or None, face_up)``."""
    if slot is None:
        return None
    card = slot["card"] or slot.get("known")
    return (int(card) if card is not None else None, slot["face"] == "up")


class HeuristicBot(Bot):
    """Scores every legal move on the :class:`Model` and plays the best."""

    def choose(self, view: View | None, moves: list[Move]) -> Move:
        view = self.seen(view)
        model = Model(view, self.seat)
        scores = [self.evaluate(model, m) for m in moves]
        best = max(scores)
        return moves[self.rng.choice([k for k, s in enumerate(scores) if s >= best - 1e-9])]

    def evaluate(self, model: Model, move: Move) -> float:
        """The score of the position after ``move`` (BC-4.3 … BC-4.9)."""
        kind, castles, me = move["type"], model.castles, model.seat
        if kind == "swap":                                          # BC-4.8
            a, sa, b, sb = move["target_a"], INDEX[move["slot_a"]], move["target_b"], INDEX[move["slot_b"]]
            return model.score(put(put(castles, a, sa, castles[b][sb]), b, sb, castles[a][sa]), model.finisher)
        target, slot = move.get("target", me), INDEX[move["slot"]]
        if kind == "peek":                                          # BC-4.9: information only
            unknown = castles[target][slot][0] is None
            return unknown * (0.5 if target == me else 1 + model.totals[target] / 1000)
        if kind == "clear":                                         # BC-4.6
            return model.score(put(castles, target, slot, None), model.finisher)
        if kind == "flip":                                          # BC-4.7: the value becomes public
            value, up = castles[target][slot]
            reveal = 0.3 * (value is None and target != me)
            return model.score(put(castles, target, slot, (value, not up)), model.finisher) + reveal
        card = (int(model.held), move["face"] == "up")
        if kind in ("place", "stash") or target == me:              # BC-4.3, BC-4.5, own BC-4.4
            return model.after_turn(put(castles, target, slot, card)) + face_bias(card, target == me)
        stolen = castles[target][slot]                              # BC-4.4 steal, then BC-4.5
        value = model.mean if stolen[0] is None else stolen[0]
        given = put(castles, target, slot, card)
        return max(model.after_turn(put(given, me, free, (value, up))) + face_bias((value, up), True)
                   for free in free_slots(castles[me]) for up in (False, True)) + face_bias(card, False)


def face_bias(card: tuple[float | None, bool], own: bool) -> float:
    """A hair's preference for face-down own cards (their value stays
    private, BC-5.4) and face-up cards given away (they may end the owner's
    only-face-up protection, BC-4.1 (c))."""
    return 0.01 * (card[1] != own)
