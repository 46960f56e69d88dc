"""ISMCTS against the heuristic bot, in process, in duplicate: every deal is
played twice by two seats with the bots' seats swapped, so the luck of the
deal cancels.  The heuristic bot gets exactly what it gets over HTTP (its
seat's view and legal moves), ISMCTS its seat's information state.

``python -m lodge_openspiel.duel GAME --cpu-seconds 200`` plays deals until
the CPU budget is spent and prints the deals, ISMCTS's mean score per match
(win 1, tie 0, loss −1, :func:`lodge_openspiel.games.returns_of`) with a 95 %
confidence interval (:func:`interval`), its wins, ties and losses, and its
decision times.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence

from arena.results import wilson
from bots import derive_seed, make_bot
from engine import REGISTRY
from engine.core import FINISHED, Game

from . import bot, games


def play(engine: Game, deal: int, ismcts_seat: int, times: list[float]) -> float:
    """One two-seat match of ``deal``: ISMCTS's return (its decision CPU times go to ``times``)."""
    state, events, _ = engine.create(["seat 0", "seat 1"], derive_seed("lodge-duel", deal, bits=53), None)
    heuristic = make_bot("heuristic", engine.id, 1 - ismcts_seat, derive_seed("lodge-duel-bot", deal))
    while engine.status(state) != FINISHED:
        seat = engine.to_act(state)[0]
        if seat == ismcts_seat:
            started = time.process_time()
            move = bot.decide(engine, state, seat, events, derive_seed("lodge-duel-ismcts", deal, len(events)))
            times.append(time.process_time() - started)
        else:
            move = heuristic.choose(bot.seat_view(engine, state, seat), engine.legal_moves(state, seat))
        state, new = engine.play(state, seat, {k: v for k, v in move.items() if k != "label"})
        events = [*events, *new]
    result = engine.result(state)
    assert result is not None
    return games.returns_of(result["ranking"], 2)[ismcts_seat]


def interval(matches: Sequence[float]) -> tuple[float, float, float]:
    """Mean score per match and its 95 % interval: the Wilson interval of
    the score share (a win 1, a tie ½: the arena's win-rate interval,
    :func:`arena.results.wilson`) mapped back to −1 … 1.  Unlike a normal
    interval it stays honest for a handful of matches or a clean sweep."""
    share = sum((score + 1) / 2 for score in matches)
    low, high = wilson(share, len(matches))
    return statistics.fmean(matches), 2 * low - 1, 2 * high - 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", choices=REGISTRY.ids())
    parser.add_argument("--cpu-seconds", type=float, default=200.0, help="stop starting deals after this")
    parser.add_argument("--first-deal", type=int, default=0)
    args = parser.parse_args(argv)
    engine = REGISTRY.get(args.game)
    assert engine is not None
    started = time.process_time()
    times: list[float] = []
    matches: list[float] = []
    while time.process_time() - started < args.cpu_seconds:
        deal = args.first_deal + len(matches) // 2
        pair = [play(engine, deal, seat, times) for seat in (0, 1)]
        matches += pair
        print(f"deal {deal}: ISMCTS scored {pair[0]:+.0f} as seat 0, {pair[1]:+.0f} as seat 1 "
              f"({time.process_time() - started:.0f} CPU-s so far)", flush=True)
    mean, low, high = interval(matches)
    wins, ties = sum(r > 0 for r in matches), sum(r == 0 for r in matches)
    times.sort()
    print(f"{args.game}: {len(matches) // 2} deals, {len(matches)} matches; ISMCTS won {wins}, tied {ties}, "
          f"lost {len(matches) - wins - ties}; mean score {mean:+.3f} (95% CI {low:+.3f} … {high:+.3f}); "
          f"decisions {len(times)}, median {statistics.median(times):.3f} s, "
          f"p99 {times[min(len(times) - 1, int(0.99 * len(times)))]:.3f} s, max {times[-1]:.3f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
