"""OpenSpiel's ISMCTS bot (``open_spiel.python.algorithms.ismcts``) deciding
for one seat of a Lodge match.

The search starts from the seat's information state: every simulation draws
a world for the seat from the engine's determinization
(``Game.sample_world``, :meth:`lodge_openspiel.games.LodgeState.world`),
walks OpenSpiel's tree of the seat's observations and, at a new node, plays
the world out with the game's heuristic bot in every seat
(:class:`HeuristicPlayout`, an OpenSpiel ``Evaluator``): a heuristic playout
is a far better estimate of a position than a random one.  The same
heuristic gives the node's prior, which PUCT selection follows until the
playouts say otherwise.  The search reads nothing the seat may not see.

The budget is a number of simulations per game (:data:`SIMULATIONS`), chosen
so that a decision takes at most about one CPU-second on the reference
machine (docs/ai.md has the measured times); a count, not a clock, keeps a
decision a pure function of its seed.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from open_spiel.python.algorithms import ismcts, mcts

from bots import make_bot
from bots.base import Bot
from engine.core import FINISHED, Event, Game, Move, State, seat_viewer

from . import games

#: simulations per decision with two seats, by game (measured: docs/ai.md); with
#: n seats a playout is longer, so a decision runs 2/n of these
SIMULATIONS = {"biberbande": 350, "biberclan": 125, "mein-lieber-biber": 110, "thirteen-beavers": 200}
#: PUCT's exploration constant (returns lie in −1 … 1)
UCT_C = 2.0
#: the prior's weight on the heuristic bot's move; the rest is spread evenly
HEURISTIC_PRIOR = 0.5
#: a playout stops at the end of the round it started in, or after this many
#: moves (13 Beavers is one long round), and is then valued by the scores
HORIZON = {"thirteen-beavers": 24}
MAX_HORIZON = 400
#: spread (standard deviation) of the score difference two heuristic seats
#: make in one round (13 Beavers: in a horizon), measured; it scales a score
#: lead into a value (:meth:`HeuristicPlayout.value`)
SPREAD = {"biberbande": 8.0, "biberclan": 11.0, "mein-lieber-biber": 2.4, "thirteen-beavers": 10.0}
#: games whose lowest score wins
LOWEST_WINS = {"biberbande"}


def seat_view(engine: Game, state: State, seat: int) -> dict[str, Any]:
    """What ``GET /v1/matches/{id}`` shows seat ``seat``, as a bot gets it."""
    viewer = seat_viewer(seat)
    return {"viewer": viewer.to_json(), **engine.view(state, viewer)}


class HeuristicPlayout(mcts.Evaluator):
    """OpenSpiel evaluator: a position's value is the returns of one playout
    in which every seat plays the game's heuristic bot (seeded, so a decision
    replays exactly); its prior puts :data:`HEURISTIC_PRIOR` on the
    heuristic's own move.  A playout runs on the engine directly (its states
    are pure values), not through OpenSpiel's state objects."""

    def __init__(self, engine: Game, players: int, seed: int):
        self.engine = engine
        self.bots: list[Bot] = [make_bot("heuristic", engine.id, seat, seed + seat) for seat in range(players)]

    def choose(self, state: State, seat: int) -> Move:
        return self.bots[seat].choose(seat_view(self.engine, state, seat), self.engine.legal_moves(state, seat))

    def evaluate(self, state: games.LodgeState) -> np.ndarray:
        engine, at = self.engine, state.state
        assert at is not None
        round_no, horizon = engine.round_of(at), HORIZON.get(engine.id, MAX_HORIZON)
        for _ in range(horizon):
            if engine.status(at) == FINISHED or engine.round_of(at) != round_no:
                break
            seat = engine.to_act(at)[0]
            at, _ = engine.apply(at, seat, self.choose(at, seat))
        return self.value(at)

    def value(self, state: State) -> np.ndarray:
        """Exact returns of a finished match; otherwise each seat's lead over
        the others' mean score, in units of the spread the remaining rounds
        may still bring, squashed into −1 … 1."""
        engine = self.engine
        result = engine.result(state)
        if result is not None:
            return np.array(games.returns_of(result["ranking"], len(self.bots)))
        scores = np.array(engine.scores_of(state), dtype=float)
        if engine.id in LOWEST_WINS:
            scores = -scores
        lead = scores - (scores.sum() - scores) / (len(scores) - 1)
        left = max(1, engine.rounds_of(state) - engine.round_of(state) + 1)
        return np.tanh(lead / (SPREAD.get(engine.id, 10.0) * left ** 0.5))

    def prior(self, state: games.LodgeState) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        assert state.state is not None
        best = self.engine.action_id(self.choose(state.state, state.current_player()))
        rest = (1 - HEURISTIC_PRIOR) / len(legal)
        return [(action, rest + (HEURISTIC_PRIOR if action == best else 0.0)) for action in legal]


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
    bot = ismcts.ISMCTSBot(game, HeuristicPlayout(engine, players, seed), UCT_C,
                           simulations or max(1, SIMULATIONS.get(engine.id, 20) * 2 // players),
                           random_state=rng, use_observation_string=True,
                           child_selection_policy=ismcts.ChildSelectionPolicy.PUCT)
    bot.set_resampler(lambda at, player: at.world(player, int(rng.randint(2**53 - 1))))
    move = engine.move_of_action(state, seat, int(bot.step(root)))  # OpenSpiel answers a NumPy integer
    if move is None:
        raise RuntimeError("ISMCTS chose an action that is not legal")
    return move
