"""Mein Lieber Biber: how often does the raft tip under random play? (spec D3)

A statistical script, not a test.  It plays whole matches with uniformly
random legal moves (every legal move of the seat to act equally likely) for
2..5 players, counts how each round ended (MLB-6.1) and prints the share of
rounds that ended by tipping with a 95 % Wilson interval, overall and per
player count.  Spec D3 says T = 2700 tips about 25 % of rounds.

Rounds of one match are counted as independent trials; the per-match
dependence is small (only sticks and the start seat carry over).

    .venv/bin/python -m bench.mlb_tipping [--matches 2000] [--threshold 2700] [--seed 1]
"""
from __future__ import annotations

import argparse
import random
from collections import Counter

from arena.results import wilson
from engine.core import FINISHED
from engine.mein_lieber_biber import MeinLieberBiber


def round_endings(game: MeinLieberBiber, players: int, seed: int, threshold: int,
                  rng: random.Random) -> list[str]:
    """Play one match with uniformly random legal moves; the reason each round ended."""
    names = [f"p{i}" for i in range(players)]
    state, _, _ = game.create(names, seed, {"tip_threshold": threshold})
    reasons = []
    while state["status"] != FINISHED:
        seat = game.to_act(state)[0]
        state, events = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
        reasons += [e["reason"] for e in events if e["type"] == "round_ended"]
    return reasons


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=2000, help="matches per player count")
    parser.add_argument("--threshold", type=int, default=2700, help="tip_threshold (MLB-2.4)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    game = MeinLieberBiber()
    total: Counter = Counter()
    print(f"tip_threshold {args.threshold}, {args.matches} matches per player count, "
          "uniformly random legal moves")
    for players in range(2, 6):
        rng = random.Random(f"mlb-tipping:{args.seed}:{players}")
        counts: Counter = Counter()
        for _match in range(args.matches):
            counts.update(round_endings(game, players, rng.getrandbits(53), args.threshold, rng))
        total += counts
        report(f"{players} players", counts)
    report("all", total)


def report(label: str, counts: Counter) -> None:
    rounds = sum(counts.values())
    tipped = counts["tipped"]
    low, high = wilson(tipped, rounds)
    reasons = ", ".join(f"{k} {v / rounds:.1%}" for k, v in counts.most_common())
    print(f"{label:>10}: tipped {tipped}/{rounds} rounds = {tipped / rounds:.1%} "
          f"(95% CI {low:.1%}–{high:.1%}); {reasons}")


if __name__ == "__main__":
    main()
