"""Every Lodge game as an OpenSpiel Python game (``pyspiel.register_game``).

One OpenSpiel game is one whole Lodge match (all its rounds) with the game's
default options and ``players`` seats.  The mapping (docs/ai.md):

* **Chance.**  A Lodge match's randomness is its seed.  The first node is an
  explicit chance node with :data:`DEALS` equally likely outcomes; outcome
  ``d`` creates the match with seed ``seed·DEALS + d`` (``seed`` a game
  parameter), and everything after is a deterministic function of that seed
  and the moves, hidden from every player.  So the chance mode is
  ``EXPLICIT_STOCHASTIC`` with one chance node, which OpenSpiel's random
  simulation test samples like any deal (a sampled-stochastic game would
  need a seeded RNG inside the state and is not what the engines are).
* **Players and actions.**  The player to move is the first seat of the
  engine's ``to_act``; its legal actions are the ids (``Game.action_id``) of
  the moves the engine lists, applied through ``Game.move_of_action`` and
  ``Game.play``.  ``resign`` is no action.
* **Returns** (zero-sum, terminal only): from the result's ``ranking``, a
  seat gets (seats ranked below it − seats ranked above it) / (n − 1), so
  the sole winner of a two-seat match gets 1, the loser −1, a tie 0.
* **Information.**  Observations are built only from what a viewer may see:
  the engine's redacted view for the seat (``Game.view``) and, with perfect
  recall, the seat's redacted events (``Game.redact_events``).  A public
  observer uses the spectator's view, an all-players one the admin's.
  Tensors hash those JSON facts into fixed-size counts (feature hashing):
  generic, so every game has them, and nothing enters them that the viewer
  does not see.
* **Resampling.**  ``resample_from_infostate`` is the engine's
  determinization (``Game.sample_world``); the sampled state keeps the seat's
  redacted history as the common past of everyone in that world.
"""
from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import orjson
import pyspiel

from engine import REGISTRY
from engine.core import ADMIN_VIEWER, FINISHED, SEED_MAX, SPECTATOR_VIEWER, Event, Game, State, Viewer, seat_viewer

#: outcomes of the deal's chance node (engine seed = ``seed``·DEALS + outcome)
DEALS = 1 << 16
#: the deal's chance outcomes, all equally likely
DEAL_OUTCOMES = tuple((deal, 1.0 / DEALS) for deal in range(DEALS))
#: upper bound on a match's moves with default options (the games' turn limits)
MAX_GAME_LENGTH = 20_000
#: feature-hashing buckets of the view and of the history
VIEW_BUCKETS = HISTORY_BUCKETS = 1024


def short_name(game_id: str) -> str:
    """OpenSpiel's name of Lodge game ``game_id``: ``lodge_<id>``, dashes as underscores."""
    return "lodge_" + game_id.replace("-", "_")


def game_type(engine: Game) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=short_name(engine.id),
        long_name=f"Lodge {engine.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=engine.max_players,
        min_num_players=engine.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={"players": engine.min_players, "seed": 0})


class LodgeGame(pyspiel.Game):
    """One Lodge game; parameters ``players`` and ``seed`` (0 … (2^53−1) / DEALS)."""

    engine: Game

    def __init__(self, params: dict[str, Any] | None = None):
        params = {**type(self).defaults(), **(params or {})}
        players, seed = int(params["players"]), int(params["seed"])
        if not self.engine.min_players <= players <= self.engine.max_players:
            raise ValueError(f"{self.engine.id} takes {self.engine.min_players}…{self.engine.max_players} players")
        if not 0 <= seed * DEALS + DEALS - 1 <= SEED_MAX:
            raise ValueError(f"seed must lie in 0…{(SEED_MAX + 1) // DEALS - 1}")
        info = pyspiel.GameInfo(num_distinct_actions=self.engine.actions, max_chance_outcomes=DEALS,
                                num_players=players, min_utility=-1.0, max_utility=1.0, utility_sum=0.0,
                                max_game_length=MAX_GAME_LENGTH)
        super().__init__(game_type(self.engine), info, params)
        self.players, self.seed = players, seed

    @classmethod
    def defaults(cls) -> dict[str, int]:
        return {"players": cls.engine.min_players, "seed": 0}

    def new_initial_state(self) -> LodgeState:
        return LodgeState(self)

    def state_of(self, state: State, events: Sequence[Event]) -> LodgeState:
        """An OpenSpiel state at an engine state reached by ``events`` (the
        match's log), e.g. a live match a bot decides in."""
        return LodgeState(self, state, list(events))

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> LodgeObserver:
        return LodgeObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class _Held:
    """What a :class:`LodgeState` holds.  OpenSpiel clones a Python state by
    deep-copying its attributes, which copied the whole event log and engine
    state at every clone of a search or playout.  Engine states and events
    are never changed in place (a move makes new ones: engines are pure), so
    a clone shares them and copies only the index of :meth:`LodgeState.seen`'s
    memos (:meth:`LodgeState.seen`, :meth:`LodgeState.history_counts`),
    whose entries it then replaces on its own."""

    __slots__ = ("state", "events", "prior", "redacted", "counted")

    def __init__(self, state: State | None, events: list[Event], prior: tuple[Event, ...],
                 redacted: dict[Viewer, tuple[int, tuple[Event, ...]]],
                 counted: dict[Viewer, tuple[int, np.ndarray]]):
        self.state, self.events, self.prior = state, events, prior
        #: viewer → (events redacted, the history it saw)
        self.redacted = redacted
        #: viewer → (events counted, :func:`hashed`'s counts of the history it saw); never changed in place
        self.counted = counted

    def __deepcopy__(self, memo: dict[int, Any]) -> _Held:
        return _Held(self.state, self.events, self.prior, dict(self.redacted), dict(self.counted))


class LodgeState(pyspiel.State):
    """A match in progress: the engine state (None before the deal), the
    events since it was created, and, in a sampled world, the history the
    sampling seat saw before (already redacted for it)."""

    def __init__(self, game: LodgeGame, state: State | None = None, events: list[Event] | None = None,
                 prior: tuple[Event, ...] = ()):
        super().__init__(game)
        self.game_id = game.engine.id
        self.players, self.seed = game.players, game.seed
        self.held = _Held(state, events or [], prior, {}, {})

    @property
    def state(self) -> State | None:
        return self.held.state

    @property
    def events(self) -> list[Event]:
        return self.held.events

    @property
    def prior(self) -> tuple[Event, ...]:
        return self.held.prior

    # --- OpenSpiel's State API ------------------------------------------
    def current_player(self) -> int:
        if self.state is None:
            return int(pyspiel.PlayerId.CHANCE)
        if self.engine.status(self.state) == FINISHED:
            return int(pyspiel.PlayerId.TERMINAL)
        return self.engine.to_act(self.state)[0]

    @property
    def engine(self) -> Game:
        engine = REGISTRY.get(self.game_id)
        assert engine is not None
        return engine

    def _legal_actions(self, player: int) -> list[int]:
        assert self.state is not None
        return sorted(self.engine.action_id(move) for move in self.engine.legal_moves(self.state, player))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return list(DEAL_OUTCOMES)

    def _apply_action(self, action: int) -> None:
        if self.state is None:
            names = [f"seat {k}" for k in range(self.players)]
            self.held.state, self.held.events, _ = self.engine.create(names, self.seed * DEALS + action, None)
            return
        seat = self.current_player()
        move = self.engine.move_of_action(self.state, seat, int(action))
        if move is None:
            raise ValueError(f"action {action} is not legal for seat {seat}")
        self.held.state, events = self.engine.play(self.state, seat, move)
        self.held.events = [*self.events, *events]

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE or self.state is None:
            return f"deal {action}"
        move = self.engine.move_of_action(self.state, player, action)
        if move is None:
            return f"action {action}"
        return str(move.get("label") or orjson.dumps(move).decode())

    def is_terminal(self) -> bool:
        return self.state is not None and self.engine.status(self.state) == FINISHED

    def returns(self) -> list[float]:
        result = self.engine.result(self.state) if self.is_terminal() and self.state else None
        if result is None:
            return [0.0] * self.players
        return returns_of(result["ranking"], self.players)

    def resample_from_infostate(self, player: int, sampler: Callable[[], float]) -> LodgeState:
        """A world for ``player`` (``Game.sample_world``), seeded from ``sampler``."""
        return self.world(player, int(sampler() * (SEED_MAX + 1)))

    def __str__(self) -> str:
        if self.state is None:
            return "before the deal"
        return orjson.dumps(self.engine.view(self.state, ADMIN_VIEWER)).decode()

    # --- Lodge's side ---------------------------------------------------
    def world(self, seat: int, seed: int) -> LodgeState:
        """The engine's world for ``seat`` from sample seed ``seed``; its past
        is what ``seat`` saw, for every player of that world."""
        assert self.state is not None
        world = self.engine.sample_world(self.state, seat, seed, [*self.prior, *self.events])
        return LodgeState(self.get_game(), world, [], self.seen(seat_viewer(seat)))

    def seen(self, viewer: Viewer) -> tuple[Event, ...]:
        """The history as ``viewer`` saw it (redacted once per event and viewer)."""
        count, shown = self.held.redacted.get(viewer, (0, self.prior))
        if count < len(self.events):
            shown = (*shown, *self.engine.redact_events(self.events[count:], viewer))
            self.held.redacted[viewer] = (len(self.events), shown)
        return shown

    def history_counts(self, viewer: Viewer) -> np.ndarray:
        """:func:`hashed`'s counts of the history ``viewer`` saw, counted
        once per event and viewer (read only)."""
        shown = self.seen(viewer)
        done, counts = self.held.counted.get(viewer, (0, np.zeros(HISTORY_BUCKETS, np.float32)))
        if done < len(shown):
            counts = counts.copy()
            for index in range(done, len(shown)):
                hashed(shown[index], counts, f".{index}")
            self.held.counted[viewer] = (len(shown), counts)
        return counts

    def view(self, viewer: Viewer) -> dict[str, Any]:
        return self.engine.view(self.state, viewer) if self.state is not None else {}


def returns_of(ranking: Sequence[Sequence[int]], n: int) -> list[float]:
    """Per seat: (seats ranked below − seats ranked above) / (n − 1)."""
    out = [0.0] * n
    above = 0
    for group in ranking:
        below = n - above - len(group)
        for seat in group:
            out[seat] = (below - above) / (n - 1)
        above += len(group)
    return out


class LodgeObserver:
    """OpenSpiel's PyObserver for a Lodge game: what one viewer may see.

    Private information ``SINGLE_PLAYER`` is the seat's view, ``NONE`` the
    spectator's, ``ALL_PLAYERS`` the admin's; ``perfect_recall`` adds the
    viewer's redacted events.  Tensors: the player one-hot, then counts of
    hashed ``path=value`` facts of the view (and of the history)."""

    def __init__(self, iig_obs_type: Any, params: Any):
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        if not iig_obs_type.public_info:
            raise ValueError("Lodge observers always include the public information")
        self.private = iig_obs_type.private_info
        self.recall = iig_obs_type.perfect_recall
        pieces = [("player", 8), ("view", VIEW_BUCKETS)] + ([("history", HISTORY_BUCKETS)] if self.recall else [])
        self.tensor = np.zeros(sum(size for _, size in pieces), np.float32)
        self.dict: dict[str, np.ndarray] = {}
        start = 0
        for name, size in pieces:
            self.dict[name] = self.tensor[start:start + size]
            start += size

    def viewer(self, player: int) -> Viewer:
        if self.private == pyspiel.PrivateInfoType.SINGLE_PLAYER:
            return seat_viewer(player)
        return ADMIN_VIEWER if self.private == pyspiel.PrivateInfoType.ALL_PLAYERS else SPECTATOR_VIEWER

    def facts(self, state: LodgeState, player: int) -> tuple[dict[str, Any], tuple[Event, ...]]:
        viewer = self.viewer(player)
        return state.view(viewer), state.seen(viewer) if self.recall else ()

    def set_from(self, state: LodgeState, player: int) -> None:
        self.tensor.fill(0)
        self.dict["player"][player] = 1
        viewer = self.viewer(player)
        hashed(state.view(viewer), self.dict["view"])
        if self.recall:
            self.dict["history"][:] = state.history_counts(viewer)

    def string_from(self, state: LodgeState, player: int) -> str:
        view, history = self.facts(state, player)
        body: dict[str, Any] = {"player": player, "view": view}
        if self.recall:
            body["history"] = history
        return orjson.dumps(body).decode()


def leaves(value: Any, path: str = "") -> Iterator[str]:
    """``path=value`` for every leaf of a JSON value (list indices in the path)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}.{index}")
    else:
        yield f"{path}={orjson.dumps(value).decode()}"


def hashed(value: Any, out: np.ndarray, path: str = "") -> None:
    """Add one count per leaf of ``value`` (at ``path``) in bucket crc32(leaf) mod len(out)."""
    for leaf in leaves(value, path):
        out[zlib.crc32(leaf.encode()) % len(out)] += 1


def register_all() -> dict[str, type[LodgeGame]]:
    """Register every game of the registry with OpenSpiel (once); OpenSpiel name → class."""
    classes = {}
    for engine in REGISTRY:
        name = short_name(engine.id)
        cls = type(f"Lodge_{name}", (LodgeGame,), {"engine": engine})
        if name not in pyspiel.registered_names():
            pyspiel.register_game(game_type(engine), cls)
        classes[name] = cls
    return classes


GAMES = register_all()


def load(game_id: str, players: int | None = None, seed: int = 0) -> LodgeGame:
    """OpenSpiel's game for Lodge game ``game_id``."""
    engine = REGISTRY.get(game_id)
    if engine is None:
        raise ValueError(f"no Lodge game {game_id!r}")
    params = {"players": players or engine.min_players, "seed": seed}
    game: LodgeGame = pyspiel.load_game(short_name(game_id), params)
    return game
