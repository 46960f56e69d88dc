"""Lodge's games inside OpenSpiel and PettingZoo, and the ISMCTS bot
(``lodge_openspiel``; the ``openspiel`` extra, part of ``make install``).

OpenSpiel's own conformance test for games (``pyspiel.random_sim_test``:
random playouts with its consistency checks of players, legal actions,
chance, returns, strings and tensors) and PettingZoo's ``api_test`` run on
every game; the observers and the resampler are checked against the
engine's own views and worlds.
"""
from __future__ import annotations

import random

import pytest

from engine import REGISTRY
from engine.core import seat_viewer
from lodge_openspiel import available
from tests.conftest import examples, match_options

pytestmark = pytest.mark.skipif(not available(), reason="the openspiel extra is not installed "
                                                       "(pip install -e '.[openspiel]')")

if available():
    import numpy as np
    import pyspiel
    from pettingzoo.test import api_test

    from lodge_openspiel import bot, duel, env, games

GAMES = REGISTRY.ids()


def dealt(game_id: str, players: int = 2, moves: int = 12, seed: int = 3) -> pyspiel.State:
    """An OpenSpiel state of ``game_id`` after the deal and up to ``moves``
    random moves: the last one before the end (a short game ends sooner)."""
    rng = random.Random(seed)
    state = games.load(game_id, players).new_initial_state()
    state.apply_action(seed)
    for _ in range(moves):
        after = state.clone()
        after.apply_action(rng.choice(state.legal_actions()))
        if after.is_terminal():
            break
        state = after
    return state


@pytest.fixture
def sized(monkeypatch: pytest.MonkeyPatch, game_id: str) -> None:
    """The OpenSpiel game of ``game_id`` plays matches of :func:`match_options`
    (its default options; under ``--fast`` its ``short`` preset): the game
    takes no options of its own, so its engine's ``create`` is given them."""
    engine = REGISTRY.games[game_id]
    create = engine.create
    monkeypatch.setattr(engine, "create",
                        lambda names, seed, options: create(names, seed, match_options(game_id, options)))


@pytest.mark.parametrize("game_id", GAMES)
@pytest.mark.usefixtures("sized")
def test_openspiel_random_simulation(game_id):
    """OpenSpiel's conformance checks for a game, on random playouts."""
    game = games.load(game_id)
    pyspiel.random_sim_test(game, num_sims=examples(2), serialize=False, verbose=False)
    assert game.get_type().short_name == games.short_name(game_id)


@pytest.mark.parametrize("game_id", GAMES)
def test_legal_actions_are_the_listed_moves_ids(game_id):
    state = dealt(game_id)
    engine = REGISTRY.games[game_id]
    seat = state.current_player()
    listed = engine.legal_moves(state.state, seat)
    assert state.legal_actions() == sorted(engine.action_id(m) for m in listed)
    assert [engine.move_of_action(state.state, seat, engine.action_id(m)) for m in listed] == listed


@pytest.mark.parametrize("game_id", GAMES)
def test_observers_show_only_the_seat_view(game_id):
    """A seat's information state and observation are its engine view (and
    redacted history): the same in every world sampled for it, and different
    from the other seat's."""
    state = dealt(game_id)
    seat = state.current_player()
    other = 1 - seat
    engine = REGISTRY.games[game_id]
    info = state.information_state_string(seat)
    assert '"view":' in info and state.observation_string(seat) != state.observation_string(other)
    for seed in range(4):
        world = state.resample_from_infostate(seat, random.Random(seed).random)
        assert world.information_state_string(seat) == info
        assert world.observation_string(seat) == state.observation_string(seat)
        np.testing.assert_array_equal(world.information_state_tensor(seat), state.information_state_tensor(seat))
        assert engine.view(world.state, seat_viewer(seat)) == engine.view(state.state, seat_viewer(seat))
        assert world.legal_actions() == state.legal_actions()


def test_worlds_vary_what_the_seat_does_not_see():
    """Resampling deals the opponent's hidden cards anew (not the true ones every time)."""
    state = dealt("biberbande")
    seat = state.current_player()
    engine = REGISTRY.games["biberbande"]
    hidden = {str(engine.view(state.resample_from_infostate(seat, random.Random(s).random).state,
                              seat_viewer(1 - seat))["players"]) for s in range(8)}
    assert len(hidden) > 1


def test_returns_follow_the_ranking():
    assert games.returns_of([[1], [0]], 2) == [-1.0, 1.0]
    assert games.returns_of([[0, 1]], 2) == [0.0, 0.0]
    assert games.returns_of([[2], [0, 1], [3]], 4) == [0.0, 0.0, 1.0, -1.0]
    assert sum(games.returns_of([[0], [1], [2]], 3)) == 0


@pytest.mark.parametrize("game_id", GAMES)
def test_pettingzoo_api(game_id):
    """PettingZoo's API test on the Shimmy environment, with action masks."""
    aec = env.env(game_id)
    api_test(aec, num_cycles=30)
    aec.reset(seed=1)
    agent = aec.agent_selection
    mask = aec.infos[agent]["action_mask"]
    state = aec.game_state
    assert list(np.flatnonzero(mask)) == state.legal_actions(int(agent.split("_")[1]))


@pytest.mark.parametrize("game_id", GAMES)
def test_ismcts_decides_a_legal_move_reproducibly(game_id):
    engine = REGISTRY.games[game_id]
    state, events, _ = engine.create(["a", "b"], 11, None)
    seat = engine.to_act(state)[0]
    move = bot.decide(engine, state, seat, events, seed=5, simulations=8)
    assert move in engine.legal_moves(state, seat)
    assert bot.decide(engine, state, seat, events, seed=5, simulations=8) == move



@pytest.mark.parametrize("game_id", GAMES)
def test_ismcts_runs_its_simulation_budget_and_no_more(game_id, monkeypatch):
    """The budget is a count of simulations, so a decision's cost is bounded
    by construction: each simulation evaluates at most one new node."""
    engine = REGISTRY.games[game_id]
    state, events, _ = engine.create(["a", "b"], 11, None)
    while len(engine.legal_moves(state, engine.to_act(state)[0])) == 1:  # a real choice, so a search
        seat = engine.to_act(state)[0]
        state, new = engine.play(state, seat, engine.legal_moves(state, seat)[0])
        events = [*events, *new]
    playouts = []

    class Counted(bot.HeuristicPlayout):
        def evaluate(self, state):
            playouts.append(state)
            return super().evaluate(state)

    monkeypatch.setattr(bot, "HeuristicPlayout", Counted)
    monkeypatch.setitem(bot.SIMULATIONS, game_id, 6)
    bot.decide(engine, state, engine.to_act(state)[0], events, seed=2)
    assert 1 <= len(playouts) <= 6


@pytest.mark.parametrize("game_id", GAMES)
def test_heuristic_playout_values_lie_in_range_and_a_finished_match_is_exact(game_id):
    """A playout (to its round's end or horizon) is worth the squashed score
    lead, zero-sum for two seats; a finished match its exact returns."""
    engine = REGISTRY.games[game_id]
    state = dealt(game_id, moves=4)
    playout = bot.HeuristicPlayout(engine, 2, seed=1)
    values = playout.evaluate(state)
    assert values.shape == (2,) and np.all(np.abs(values) <= 1)
    assert values[0] == pytest.approx(-values[1])
    finished = state.state
    while engine.status(finished) != "finished":
        seat = engine.to_act(finished)[0]
        finished, _ = engine.apply(finished, seat, playout.choose(finished, seat))
    result = engine.result(finished)
    assert result is not None
    assert list(playout.value(finished)) == games.returns_of(result["ranking"], 2)


def test_a_lead_is_worth_more_the_fewer_rounds_remain():
    """Biberbande: the lower score leads (BB-6.5), and the same lead counts
    for more in the last round than in the first."""
    engine = REGISTRY.games["biberbande"]
    state, _, _ = engine.create(["a", "b"], 11, None)
    playout = bot.HeuristicPlayout(engine, 2, seed=1)
    early = {**state, "scores": [3, 13]}
    late = {**early, "round": state["rounds"]}
    assert 0 < playout.value(early)[0] < playout.value(late)[0] < 1


def test_duel_interval_is_the_wilson_interval_of_the_score_share():
    """A clean sweep of four matches is a margin whose lower bound is above
    zero, yet far from certain; even splits centre on zero."""
    mean, low, high = duel.interval([1, 1, 1, 1])
    assert mean == 1 and 0 < low < 0.1 and high == 1
    mean, low, high = duel.interval([1, -1, 0, 0])
    assert mean == 0 and low == pytest.approx(-high) and -1 < low < -0.5
