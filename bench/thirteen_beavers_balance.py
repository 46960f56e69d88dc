"""``make bench-balance``: how often the winner of a 13 Beavers race takes the avenue.

"The winner takes the avenue" means: the seat that reached Paradise
(TB-6.1) had its beaver moved by an exact avenue answer (a ``moved`` event
with cause ``avenue``, TB-4.8) at least once in the match.  Matches that end
by ``max_turns`` (TB-6.2) have no such winner and are counted apart.

Plays ``--matches`` two-or-more-seat matches on ``--board`` with every seat
played by ``--bot`` (``heuristic``: the built-in bot, given the seat's view
and legal moves as over HTTP; ``ismcts``: OpenSpiel's ISMCTS from
:mod:`lodge_openspiel.bot`, given the seat's information state), seats
rotated by ``first_seat``, and prints the winner's avenue share with a 95 %
Wilson score interval, next to how often the avenue was tried at all.

``python -m bench.thirteen_beavers_balance --board standard --bot heuristic --matches 400``
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bots import derive_seed, make_bot
from engine import REGISTRY
from engine.core import FINISHED, Event, Game, Move, State, seat_viewer
from engine.thirteen_beavers import BOARDS, GAME_ID, MOVE_AVENUE, REASON_AVENUE

BOTS = ("heuristic", "ismcts")
#: the normal quantile of a two-sided 95 % interval
Z95 = 1.959964


@dataclass
class Race:
    """What one finished match tells about the avenue."""

    winner: int | None        # the seat that reached Paradise; None after max_turns
    avenue_taken: set[int]    # seats whose beaver moved by an exact avenue answer
    avenue_tried: int         # avenue answers given by all seats
    turns: int


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = p + z * z / (2 * trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return (centre - half) / (1 + z * z / trials), (centre + half) / (1 + z * z / trials)


Decider = Callable[[State, Sequence[Event]], Move]


def _decider(kind: str, engine: Game, seat: int, match_seed: int, simulations: int | None) -> Decider:
    """A function (state, events) → move for ``seat`` played by ``kind``."""
    if kind == "ismcts":
        from lodge_openspiel import bot as ismcts

        def search(state: State, events: Sequence[Event]) -> Move:
            seed = derive_seed("lodge-balance-ismcts", match_seed, seat, len(events))
            return ismcts.decide(engine, state, seat, events, seed, simulations)
        return search
    heuristic = make_bot("heuristic", engine.id, seat, derive_seed("lodge-balance-bot", match_seed, seat))

    def choose(state: State, events: Sequence[Event]) -> Move:
        view = {"viewer": seat_viewer(seat).to_json(), **engine.view(state, seat_viewer(seat))}
        move = heuristic.choose(view, engine.legal_moves(state, seat))
        return {k: v for k, v in move.items() if k != "label"}
    return choose


def play(engine: Game, board: str, kind: str, seats: int, match: int, simulations: int | None) -> Race:
    """Match number ``match`` (its seed and first seat follow from it) to the end."""
    seed = derive_seed("lodge-balance", board, match, bits=53)
    state, events, _ = engine.create([f"seat {i}" for i in range(seats)], seed,
                                     {"board": board, "first_seat": match % seats})
    deciders = [_decider(kind, engine, seat, seed, simulations) for seat in range(seats)]
    while engine.status(state) != FINISHED:
        seat = engine.to_act(state)[0]
        state, new = engine.play(state, seat, deciders[seat](state, events))
        events = [*events, *new]
    taken = {e["seat"] for e in events if e["type"] == "moved" and e["cause"] == REASON_AVENUE}
    tried = sum(1 for e in events if e["type"] == "answered" and e["move"] == MOVE_AVENUE)
    result = engine.result(state)
    assert result is not None
    winner = result["winners"][0] if result["reason"] == "paradise" else None
    return Race(winner, taken, tried, state["turn"])


def report(board: str, kind: str, races: Sequence[Race], cpu: float) -> str:
    """One paragraph: the winner's avenue share with its interval, and context."""
    won = [r for r in races if r.winner is not None]
    share = sum(r.winner in r.avenue_taken for r in won)
    low, high = wilson(share, len(won))
    anyone = sum(bool(r.avenue_taken) for r in races)
    tried = sum(r.avenue_tried for r in races)
    turns = sum(r.turns for r in races) / max(1, len(races))
    return (f"{GAME_ID} board {board}, {kind} bots: {len(races)} matches ({len(races) - len(won)} ended by "
            f"max_turns); the winner took the avenue in {share}/{len(won)} = {share / max(1, len(won)):.1%} "
            f"(95% Wilson CI {low:.1%} … {high:.1%}); some beaver took it in {anyone} matches; "
            f"avenue answers {tried} ({tried / max(1, len(races)):.2f} per match); "
            f"{turns:.1f} turns per match; {cpu:.0f} CPU-s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--board", choices=tuple(BOARDS), default="standard")
    parser.add_argument("--bot", choices=BOTS, default="heuristic", help="the bot playing every seat")
    parser.add_argument("--matches", type=int, default=400)
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--first-match", type=int, default=0, help="match numbers start here (to split a run)")
    parser.add_argument("--simulations", type=int, default=None,
                        help="ISMCTS simulations per decision (default: lodge_openspiel.bot's budget)")
    parser.add_argument("--progress", type=int, default=0, help="print the running figures every N matches")
    args = parser.parse_args(argv)
    engine = REGISTRY.get(GAME_ID)
    assert engine is not None
    started = time.process_time()
    races: list[Race] = []
    for match in range(args.first_match, args.first_match + args.matches):
        races.append(play(engine, args.board, args.bot, args.seats, match, args.simulations))
        if args.progress and len(races) % args.progress == 0:
            print(report(args.board, args.bot, races, time.process_time() - started), flush=True)
    print(report(args.board, args.bot, races, time.process_time() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
