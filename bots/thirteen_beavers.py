"""A heuristic player for 13 Beavers (rules: ``docs/games/thirteen-beavers.md``).

Card counting: the draw pile is exactly the 52-card deck minus the face-up
card and the discard (TB-1.1, TB-7.1, TB-10.1), so the next card's odds are
known exactly and every answer is valued with them.

Planning: what an answer leads to is looked up in a :class:`_Plan`, a dynamic
programme over (beaver, dam, face-up card) that follows the river's rules
(lava, rapids, avenue, wolf, fishing) with fresh-deck odds.  It values a
position by the chance to win the race from it when, between two own turns,
the race is lost with chance ``threat`` (an opponent reaches Paradise, TB-6.1).
The threat is each opponent's chance to reach Paradise in one turn from its
dam (at least 10 %), so the bot plays steady while nobody is close and
sprints when someone is.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from .base import Bot, Move, View

RANKS = range(1, 14)
FRESH = 51          # cards left after a known face-up card in a fresh deck
PASSES = 2          # sweeps over the river (a miss or a stinky fish goes back)
SETTLE = 4          # fixed-point steps for a dam's own value (wrong → back to it)

#: Threat levels the plans are built for.  Even a far opponent is treated as a
#: 10 % threat: a little risk-seeking (e.g. trying the avenue) wins more races
#: than minimising the expected number of turns.
THREATS = (0.1, 0.2, 0.35, 0.5, 0.7, 1.0)

#: Worth of holding a fish, in own turns (what it saves later, roughly).
VISION_WORTH = 1.5
TURBO_WORTH = 0.2
FISH_WORTH = 0.35   # a caught turbo or vision (TB-4.12a)


class _River:
    """The board as the view lists it (TB-1.4 – TB-1.6, TB-7.1)."""

    def __init__(self, spaces: list[dict]):
        self.kinds = tuple(s["kind"] for s in spaces)
        self.paradise = len(spaces) - 1
        self.avenue, self.fish, self.rapids, self.wolf = (
            self.kinds.index(k) if k in self.kinds else None for k in ("avenue", "fish", "rapids", "wolf"))
        self.exit = spaces[self.avenue]["next"][1] if self.avenue is not None else None

    def lava(self, space: int) -> bool:
        return self.kinds[space] == "lava"

    def water(self, space: int) -> int:
        """TB-1.6: where a backward move to ``space`` ends (lava continues back)."""
        space = max(space, 0)
        while self.lava(space):
            space -= 1
        return space


class _Plan:
    """Chances to win for one river, pond, cave and threat.

    ``wins[x]``: at the start of an own turn with beaver and dam on ``x``.
    ``rows[d][b][c - 1]``: after an answer, beaver on ``b``, dam on ``d``,
    face-up card ``c``, playing on optimally.  ``stinky`` is the chance that
    the next pond fish is stinky (``None``: empty pond); ``awake`` the awake
    tokens left in a closed cave (``None``: open), with ``opened`` the plan
    for the open cave; ``keep`` = 1 − threat, the chance the race goes on
    until the next own turn.
    """

    def __init__(self, river: _River, stinky: float | None, awake: int | None, keep: float,
                 opened: _Plan | None):
        self.river, self.stinky, self.awake, self.keep, self.opened = river, stinky, awake, keep, opened
        top = river.paradise
        self.wins = [keep ** (0.8 * (top - x)) for x in range(top + 1)]
        self.rows: list[list] = [[] for _ in range(top + 1)]
        self._turbo_rows: dict[int, list] = {}
        for _ in range(PASSES):
            for dam in reversed(range(top)):
                if not river.lava(dam):
                    self._settle(dam)

    def _settle(self, dam: int) -> None:
        """Solve ``wins[dam]``: a wrong answer returns to this very dam (TB-4.6)."""
        if self.awake is not None and dam >= self._wolf():
            opened = self._opened()
            self.rows[dam] = opened.rows[dam]
            stall = self.awake / 2 if dam == self.river.wolf else 0   # awake reveals at turn start (TB-4.1)
            self.wins[dam] = opened.wins[dam] * self.keep ** stall
            return
        for _ in range(SETTLE):
            self.rows[dam], first = self._sweep(dam, 1)
            self.wins[dam] = sum(first) / len(first)

    def _wolf(self) -> int:
        """The wolf space (there is one whenever the cave is closed)."""
        assert self.river.wolf is not None
        return self.river.wolf

    def exit_space(self) -> int:
        """Where the avenue leads (called only for a river with an avenue)."""
        assert self.river.exit is not None
        return self.river.exit

    def _opened(self) -> _Plan:
        """The plan for the open cave (there is one whenever it is closed)."""
        assert self.opened is not None
        return self.opened

    def turbo_rows(self, dam: int) -> list:
        """``rows[dam]`` for a turn with turbo on (TB-4.4: 2 spaces per right guess)."""
        if dam not in self._turbo_rows:
            self._turbo_rows[dam] = self._sweep(dam, 2)[0]
        return self._turbo_rows[dam]

    # --- what single events are worth -------------------------------------
    def end(self, space: int, dam: int) -> float:
        """Turn ends with the dam on ``space`` (TB-4.12: fishing if newly there)."""
        river, keep = self.river, self.keep
        if space != river.fish or space == dam or self.stinky is None:
            return keep * self.wins[space]
        stink = keep * self.wins[river.water(space - 2)]
        return self.stinky * stink + (1 - self.stinky) * min(1.0, keep ** (1 - FISH_WORTH) * self.wins[space])

    def forward(self, space: int, steps: int) -> int:
        """TB-4.9: stop at Paradise or on entering the closed wolf space."""
        for _ in range(steps):
            space += 1
            if space == self.river.paradise or (self.awake is not None and space == self.river.wolf):
                break
        return space

    def land(self, rows: list, space: int, card: int) -> float:
        """Value on arriving at ``space`` with ``card`` face up (TB-4.9, TB-4.10, TB-6.1)."""
        if space == self.river.paradise:
            return 1.0
        if self.awake is not None and space == self.river.wolf:
            opened, p_awake = self._opened(), self.awake / (self.awake + 1)
            asleep = opened.rows[space][space][card - 1]
            awake = self.keep ** (1 + (self.awake - 1) / 2) * opened.wins[space]
            return p_awake * awake + (1 - p_awake) * asleep
        return rows[space][card - 1]

    # --- the dynamic programme --------------------------------------------
    def _sweep(self, dam: int, step: int) -> tuple[list, list]:
        """Rows for beaver ``paradise-1 … dam`` (answered), and the turn's first
        decision on ``dam`` (no dam move yet, D5), from the back of the river."""
        river = self.river
        rows: list[Any] = [None] * (river.paradise + 1)
        wrong, home = self.end(dam, dam), self.end(0, dam)                 # TB-4.6, TB-4.8
        first: list = []
        for b in reversed(range(dam, river.paradise)):
            ahead = [self.land(rows, self.forward(b, step), c) for c in RANKS]
            equal = self.end(river.water(b - 1), dam) if river.lava(b) else self.end(b, dam)
            stop = None if river.lava(b) else self.end(b, dam)
            extra = self._special(rows, b, dam, home)
            rows[b] = [_best(ahead, equal, wrong, extra, f, stop) for f in RANKS]
            if b == dam:
                first = [_best(ahead, equal, wrong, extra, f, None) for f in RANKS]
        return rows, first

    def _special(self, rows: list, b: int, dam: int, home: float) -> tuple[Any, ...] | None:
        """Rapids (TB-4.7) or avenue (TB-4.8) outcomes on ``b``, else ``None``."""
        river = self.river
        if b == river.rapids:
            ahead = [self.land(rows, self.forward(b, 3), c) for c in RANKS]
            return "rapids", ahead, self.end(b, dam), self.end(river.water(min(dam, b - 3)), dam)
        if b == river.avenue:
            return "avenue", [self.land(rows, self.exit_space(), v) for v in RANKS], home
        return None


def _best(ahead: list, equal: float, wrong: float, extra: tuple[Any, ...] | None, f: int,
          stop: float | None) -> float:
    """Best chance from face-up ``f`` with fresh-deck odds (TB-4.5)."""
    best = max(_two_ways(ahead, equal, wrong, f))
    if stop is not None:
        best = max(best, stop)
    if extra is None:
        return best
    if extra[0] == "rapids":
        _, rapids_ahead, rapids_equal, rapids_wrong = extra
        return max(best, *_two_ways(rapids_ahead, rapids_equal, rapids_wrong, f))
    _, exits, home = extra
    hit = max(v for i, v in enumerate(exits) if i != f - 1)
    return max(best, (4 * hit + (FRESH - 4) * home) / FRESH)


def _two_ways(ahead: list, equal: float, wrong: float, f: int) -> tuple[float, float]:
    """Lower and higher from face-up ``f`` (TB-4.5: equal is neither)."""
    low, high = sum(ahead[:f - 1]), sum(ahead[f:])
    return ((4 * low + 3 * equal + 4 * (13 - f) * wrong) / FRESH,
            (4 * high + 3 * equal + 4 * (f - 1) * wrong) / FRESH)


_PLANS: dict[tuple, _Plan] = {}


def _plan(river: _River, stinky: float | None, awake: int | None, threat: float) -> _Plan:
    """The cached plan for a river, pond, cave and threat."""
    key = (river.kinds, river.exit, stinky, awake, threat)
    if key not in _PLANS:
        opened = None if awake is None else _plan(river, stinky, None, threat)
        _PLANS[key] = _Plan(river, stinky, awake, 1 - threat, opened)
    return _PLANS[key]


class HeuristicBot(Bot):
    """Counts cards and plays the move with the best chance to win the race.

    Not :attr:`~bots.base.Bot.inline`: a process's first decisions build the
    plans (up to about half a CPU-second each, ``make bench-bots``)."""

    inline = False

    def __init__(self, game: str, seat: int, seed: int):
        super().__init__(game, seat, seed)
        self._river: _River | None = None

    def choose(self, view: View | None, moves: list[Move]) -> Move:
        view = self.seen(view)
        board = view["board"]
        if self._river is None:
            self._river = _River(board["spaces"])
        turn = _Turn(self._river, view, self.seat)
        values = [turn.value(m) for m in moves]
        most = max(values)
        return self.rng.choice([m for m, v in zip(moves, values) if v >= most - 1e-12])


class _Turn:
    """One decision: the true odds of the next card and the plan to value moves."""

    def __init__(self, river: _River, view: View, seat: int):
        board, me = view["board"], view["players"][seat]
        self.river = river
        self.beaver, self.dam = me["beaver"], me["dam"]
        self.face = int(board["face_up"])
        seen = Counter(int(c) for c in board["discard"])
        seen[self.face] += 1
        self.left = [4 - seen[c] for c in RANKS]                      # TB-10.1
        self.total = sum(self.left)
        self.turbo = board["active"]["turbo"]
        pond, stinky_out = len(board["pond"]), board["used_fish"].count("stinky")
        self.stinky = (2 - stinky_out) / pond if pond else None       # stinky is never held
        self.awake = None if board["cave_open"] else 4 - board["wolf_out"].count("awake")
        others = [p["dam"] for p in view["players"] if p["seat"] != seat]
        self.plan = _plan(river, self.stinky, self.awake, self._threat(others))

    def _threat(self, dams: list[int]) -> float:
        """Chance an opponent reaches Paradise before our next turn, each
        sprinting from its dam (a plan that values only this turn), as the
        nearest level of ``THREATS``."""
        sprint = _plan(self.river, self.stinky, self.awake, 1.0)
        safe = 1.0
        for dam in dams:
            safe *= 1 - sprint.wins[dam]
        return min(THREATS, key=lambda t: abs(t - (1 - safe)))

    def value(self, move: Move) -> float:
        """Chance to win after ``move``."""
        kind = move["type"]
        if kind == "dam":
            return self.plan.end(self.beaver, self.dam)               # TB-4.12
        if kind == "use_turbo":                                       # TB-4.4
            return self._best_answer(turbo=True) * self.plan.keep ** TURBO_WORTH
        if kind == "avenue":
            return self._avenue(int(move["value"]))
        return self._answer(kind, move["dir"], bool(move.get("vision")), self.turbo)

    def _best_answer(self, turbo: bool) -> float:
        """The best first answer of a turn with or without turbo (TB-4.2)."""
        kinds = ["guess"] + (["rapids"] if self.beaver == self.river.rapids else [])
        return max(self._answer(k, d, False, turbo) for k in kinds for d in ("higher", "lower"))

    def _answer(self, kind: str, direction: str, vision: bool, turbo: bool) -> float:
        """A guess (TB-4.6) or rapids answer (TB-4.7) with the true odds."""
        plan, river, b, d = self.plan, self.river, self.beaver, self.dam
        rows = plan.turbo_rows(d) if turbo else plan.rows[d]
        if kind == "rapids":
            to = plan.forward(b, 3)
            equal, wrong = plan.end(b, d), plan.end(river.water(min(d, b - 3)), d)
        else:
            to = plan.forward(b, 2 if turbo else 1)
            equal = plan.end(river.water(b - 1), d) if river.lava(b) else plan.end(b, d)
            wrong = plan.end(d, d)
        saved = plan.keep ** VISION_WORTH                              # TB-4.6: vision spent
        total = 0.0
        for c, n in zip(RANKS, self.left):
            if not n:
                continue
            if c == self.face:
                total += n * equal
                continue
            ahead = plan.land(rows, to, c)
            right = (c > self.face) == (direction == "higher")
            total += n * (ahead if right else (ahead * saved if vision else wrong))
        return total / self.total

    def _avenue(self, value: int) -> float:
        """TB-4.8: exact → the exit, else beaver and dam back to Start."""
        plan, hit = self.plan, self.left[value - 1] / self.total
        rows = plan.turbo_rows(self.dam) if self.turbo else plan.rows[self.dam]
        return hit * plan.land(rows, plan.exit_space(), value) + (1 - hit) * plan.end(0, self.dam)
