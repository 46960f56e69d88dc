"""A heuristic player for Mein Lieber Biber (rules: spec ``mein-lieber-biber.md``).

Built only on the HTTP view and the legal-move list.  Each play is scored by a
one-move look-ahead on the public board: never tip the raft (MLB-4.2), take
colour matches and the dam (MLB-4.4c), and leave the next seat few rewards of
its own, estimated from the cards nobody has shown yet (MLB-5.3).  Otherwise it
tops up, draws and takes sticks; in the last round it ends the match as soon as
it leads (running its hand down, D7) and avoids ending it while behind.
"""
from __future__ import annotations

import math

from .base import Bot, Move, View

COLOURS = ("red", "orange", "yellow", "green", "blue", "purple")  # MLB-1.1
CARDS = tuple(f"{c}-{v}" for c in COLOURS for v in range(1, 9))  # MLB-1.2
LAST_RING, DAM = 30, 31  # MLB-1.4
#: Ring centres by position (MLB-1.5); the middle (0) and the dam (31) weigh nothing.
XY = [(0, 0)] + [(round(1000 * (0.1 + 0.03 * k) * math.cos(math.radians(36 * k))),
                  round(1000 * (0.1 + 0.03 * k) * math.sin(math.radians(36 * k))))
                 for k in range(1, LAST_RING + 1)] + [(0, 0)]


def parse(card: str) -> tuple[str, int]:
    """``"blue-3"`` -> ``("blue", 3)`` (MLB-1.2)."""
    colour, value = card.rsplit("-", 1)
    return colour, int(value)


class Board:
    """The public board of a view: positions, ring colours, load and threshold."""

    def __init__(self, view: View):
        board = view["board"]
        self.pos: dict[str, int] = dict(board["beavers"])
        self.rings: list[str] = board["rings"]
        self.load: tuple[int, int] = tuple(board["load"])
        self.limit = board["tip_threshold"] ** 2

    def landing(self, beaver: str, value: int) -> int | None:
        """Where ``beaver`` lands with ``value``, or None if it may not move (MLB-4.1)."""
        here = self.pos[beaver]
        if here > LAST_RING:
            return None
        to = min(here + value, DAM)
        if to != DAM and to in self.pos.values():
            return None
        return to

    def tips(self, beaver: str, to: int) -> bool:
        """Would moving ``beaver`` to ``to`` tip the raft (MLB-4.2, equality holds)."""
        (fx, fy), (tx, ty) = XY[self.pos[beaver]], XY[to]
        x, y = self.load[0] - fx + tx, self.load[1] - fy + ty
        return x * x + y * y > self.limit

    def rewards(self, beaver: str, to: int) -> bool:
        """The dam, or a ring of the beaver's own colour (MLB-4.4c, D13)."""
        return to == DAM or self.rings[to - 1] == beaver

    def targets(self, card: str) -> list[str]:
        """Beavers ``card`` may move: its own, or any on the raft as a joker (MLB-4.1, D15)."""
        colour, _ = parse(card)
        if self.pos[colour] <= LAST_RING:
            return [colour]
        return [b for b in COLOURS if self.pos[b] <= LAST_RING]

    def moved(self, beaver: str, to: int) -> Board:
        """A copy with ``beaver`` on ``to``."""
        other = object.__new__(Board)
        (fx, fy), (tx, ty) = XY[self.pos[beaver]], XY[to]
        other.pos = {**self.pos, beaver: to}
        other.rings, other.limit = self.rings, self.limit
        other.load = (self.load[0] - fx + tx, self.load[1] - fy + ty)
        return other

    def safe_reward_values(self) -> dict[str, set[int]]:
        """Per beaver on the raft, the card values that earn a reward without tipping."""
        out = {}
        for beaver in COLOURS:
            values = set()
            for value in range(1, 9):
                to = self.landing(beaver, value)
                if to is not None and self.rewards(beaver, to) and not self.tips(beaver, to):
                    values.add(value)
            if self.pos[beaver] <= LAST_RING:
                out[beaver] = values
        return out

    def reward_cards(self, cards: list[str]) -> int:
        """How many of ``cards`` could earn a safe reward on this board."""
        safe = self.safe_reward_values()
        joker = set().union(*safe.values()) if safe else set()
        count = 0
        for card in cards:
            colour, value = parse(card)
            if value in (safe[colour] if colour in safe else joker):
                count += 1
        return count


class HeuristicBot(Bot):
    """One-move look-ahead on the public board; see the module docstring."""

    tip_penalty = 6.0  # tipping: sticks handed back and a lost round (MLB-4.4b)
    threat_weight = 0.6  # a reward the next seat probably gets

    def choose(self, view: View | None, moves: list[Move]) -> Move:
        view = self.seen(view)
        phase = view["phase"]
        if phase == "reward":
            return self._reward(view, moves)
        if phase == "draw":
            return self._draw(view, moves)
        plays = [m for m in moves if m["type"] == "play"]
        top_ups = [m for m in moves if m["type"] == "draw"]
        if top_ups and not (plays and self._closing(view)):  # MLB-4.3: more choice
            return self._pile(top_ups, view)
        if plays:
            return self._play(view, plays)
        return self._lay_down(view, moves)

    # --- phases ---------------------------------------------------------------
    def _reward(self, view: View, moves: list[Move]) -> Move:
        """MLB-4.7: a stick is a point; but if it would end the match while not
        ahead (last round and empty hand, or the last stick: MLB-6.1, 6.3), a
        card keeps the game going."""
        me = view["players"][view["viewer"]["seat"]]
        ends_match = view["board"]["supply"] == 1 or (
            me["hand_count"] == 0 and view["round"] == view["rounds"])
        stick, *cards = moves  # MLB-4.9 order; a stick is always offered (D14)
        if ends_match and self._lead(view, 1) <= 0 and cards:
            return self._pile(cards, view)
        return stick

    def _draw(self, view: View, moves: list[Move]) -> Move:
        """MLB-4.8: drawing adds options, unless closing out the match (D7)."""
        *draws, pass_ = moves  # MLB-4.9 order: draw 0, draw 1, pass
        if not draws or self._closing(view):
            return pass_
        return self._pile(draws, view)

    def _pile(self, moves: list[Move], view: View) -> Move:
        """Of moves taking from a pile, the larger pile (MLB-4.3, 4.5): piles are hidden."""
        piles = view["board"]["piles"]
        return max(moves, key=lambda m: len(piles[m["pile"]]))

    def _play(self, view: View, plays: list[Move]) -> Move:
        """MLB-4.4: the best-scored play; ties broken by ``self.rng``."""
        board = Board(view)
        unseen = self._unseen(view)
        odds = min(1.0, self._next_hand(view) / max(1, len(unseen)))
        best, best_score = [], -math.inf
        for move in plays:
            score = self._score(view, board, move, unseen, odds)
            if score > best_score + 1e-9:
                best, best_score = [move], score
            elif score > best_score - 1e-9:
                best.append(move)
        return best[0] if len(best) == 1 else self.rng.choice(best)

    def _score(self, view: View, board: Board, move: Move, unseen: list[str], odds: float) -> float:
        """Reward (MLB-4.4c) minus tipping (MLB-4.2) minus the next seat's chances;
        in the last round a move ending the match decides by who leads (MLB-6.1, 6.3)."""
        beaver, (_, value) = move["beaver"], parse(move["card"])
        to = min(board.pos[beaver] + value, DAM)
        reward = board.rewards(beaver, to)
        final = view["round"] == view["rounds"]
        if board.tips(beaver, to):
            me = view["players"][view["viewer"]["seat"]]["sticks"]
            if final:
                return 100.0 if self._lead(view, -min(2, me)) > 0 else -100.0
            return -self.tip_penalty
        after = board.moved(beaver, to)
        hand = view["players"][view["viewer"]["seat"]]["hand"]
        if final and self._ends_round(view, after, reward, len(hand)):
            return 100.0 if self._lead(view, int(reward)) > 0 else -100.0 + reward
        threat = 1 - (1 - odds) ** after.reward_cards(unseen)
        return reward - self.threat_weight * threat

    def _ends_round(self, view: View, after: Board, reward: bool, hand_count: int) -> bool:
        """The play ends the round (MLB-6.1): the raft empties, or the last card
        goes and no card reward is taken (the one taken only when behind, see
        :meth:`_reward`)."""
        if all(p > LAST_RING for p in after.pos.values()):
            return True
        card_kept = reward and self._lead(view, 1) <= 0 and any(view["board"]["piles"])
        return hand_count == 1 and not card_kept

    def _lay_down(self, view: View, moves: list[Move]) -> Move:
        """MLB-4.5/4.6: give up the card least likely to earn a reward later."""
        board = Board(view)

        def keep(move: Move) -> int:
            colour, value = parse(move["card"])
            return sum(board.rewards(b, min(board.pos[b] + value, DAM))
                       for b in board.targets(move["card"]))

        worst = min(keep(m) for m in moves)
        candidates = [m for m in moves if keep(m) == worst]
        if candidates[0]["type"] == "exchange":
            return self._pile(candidates, view)
        return candidates[0]

    # --- public knowledge -----------------------------------------------------
    def _unseen(self, view: View) -> list[str]:
        """Cards neither in this hand nor on a discard pile (MLB-5.3)."""
        me = view["viewer"]["seat"]
        seen = set(view["players"][me]["hand"])
        for player in view["players"]:
            seen.update(player["discards"])
        return [c for c in CARDS if c not in seen]

    def _lead(self, view: View, gain: int = 0) -> int:
        """This seat's sticks plus ``gain`` minus the best other seat's (MLB-6.4)."""
        me = view["viewer"]["seat"]
        others = [p["sticks"] for p in view["players"] if p["seat"] != me]
        return view["players"][me]["sticks"] + gain - max(others)

    def _closing(self, view: View) -> bool:
        """Ahead in the last round: fewer cards end the match sooner (D7, MLB-6.1)."""
        return view["round"] == view["rounds"] and self._lead(view) > 0

    def _next_hand(self, view: View) -> int:
        """The next seat's hand size (MLB-4.0, MLB-5.1)."""
        players = view["players"]
        return players[(view["viewer"]["seat"] + 1) % len(players)]["hand_count"]
