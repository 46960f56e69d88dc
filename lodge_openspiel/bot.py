"""OpenSpiel's ISMCTS bot (``open_spiel.python.algorithms.ismcts``) deciding
for one seat of a Lodge match.

The search starts from the seat's information state: every simulation draws
a world for the seat from the engine's determinization
(``Game.sample_world``, :meth:`lodge_openspiel.games.LodgeState.world`) and
plays it out with uniformly random moves (OpenSpiel's random rollout
evaluator); the tree's nodes are information states, so the search reads
nothing the seat may not see.  The budget is a number of simulations per game
(:data:`SIMULATIONS`), chosen so that a decision takes at most about one
CPU-second on the reference machine (docs/ai.md has the measured times).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from open_spiel.python.algorithms import ismcts, mcts

from engine.core import Event, Game, Move, State

from . import games

#: simulations per decision with two seats, by game (measured: docs/ai.md); with
#: n seats a playout is longer, so a decision runs 2/n of these
SIMULATIONS = {"biberbande": 260, "biberclan": 80, "mein-lieber-biber": 55, "thirteen-beavers": 36}
#: UCT's exploration constant (returns lie in −1 … 1)
UCT_C = 1.5


def decide(engine: Game, state: State, seat: int, events: Sequence[Event], seed: int,
           simulations: int | None = None) -> Move:
    """ISMCTS's move for ``seat`` (to act) in ``state``, reached by the
    match's ``events``; deterministic in ``seed``."""
    players = len(engine.scores_of(state))
    game = games.load(engine.id, players=players)
    root = game.state_of(state, events)
    if root.current_player() != seat:
        raise ValueError(f"seat {seat} is not to act")
    rng = np.random.RandomState(seed % 2**32)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), UCT_C,
                           simulations or max(1, SIMULATIONS.get(engine.id, 20) * 2 // players), random_state=rng)
    bot.set_resampler(lambda at, player: at.world(player, int(rng.randint(2**53 - 1))))
    move = engine.move_of_action(state, seat, int(bot.step(root)))  # OpenSpiel answers a NumPy integer
    if move is None:
        raise RuntimeError("ISMCTS chose an action that is not legal")
    return move
