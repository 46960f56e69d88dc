"""Determinization (contract "Worlds and simulation"): ``Game.sample_world``.

Independent checks, per game, of what a world for seat k must be:

* **agreement** — at random playout positions, k's view of every world equals
  its real view (recall forced to ``"perfect"``, so every card k has seen is
  compared where it really is), the world holds the game's exact card
  multisets and public partial facts, and the engine plays it to the end with
  random legal moves; sampling is pure and repeatable;
* **no leak** — over many sample seeds, one hidden slot per world gets its
  true card about as often as a uniform deal among the candidates predicts
  (a z bound that a uniform sampler passes with overwhelming probability);
  the same statistic rejects samplers that leak (the true state; a true pile
  order kept), so the check can fail;
* **same knowledge, same worlds** — two matches whose stacked decks differ
  only in cards k has not seen, and whose seeds differ, give identical worlds
  (their future shuffles included, which come from the world's own seed)
  wherever k's views agree.

The expected hit probabilities are this file's own reading of the rules'
hidden information (docs/games/*.md, section 5), not the engines' code.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from engine import REGISTRY
from engine.core import FINISHED, Game, Move, State, seat_viewer

Hit = tuple[bool, float]
Policy = Callable[[State, list[Move], random.Random], Move]
Sampler = Callable[[State, int, int], State]


# ---------------------------------------------------------------------------
# Shared helpers.
# ---------------------------------------------------------------------------
def perfect(state: State) -> State:
    """The state with ``recall: "perfect"`` where the game stores the option."""
    return {**state, "recall": "perfect"} if "recall" in state else state


def seat_view(game: Game, state: State, seat: int) -> dict[str, Any]:
    return game.view(perfect(state), seat_viewer(seat))


def positions(game: Game, n: int, seed: int, count: int, options: dict[str, Any],
              policy: Policy) -> list[State]:
    """``count`` active states spread over one playout by ``policy``."""
    rng = random.Random(seed)
    state, _, _ = game.create([f"p{i}" for i in range(n)], seed, options)
    states = []
    while game.status(state) != FINISHED:
        states.append(state)
        seat = rng.choice(game.to_act(state))
        state, _ = game.play(state, seat, policy(state, game.legal_moves(state, seat), rng))
    stride = max(1, len(states) // count)
    return states[::stride][:count]


def random_move(state: State, legal: list[Move], rng: random.Random) -> Move:
    return rng.choice(legal)


def play_to_end(game: Game, state: State, rng: random.Random) -> State:
    """Random legal moves until the match ends (the engine must accept them)."""
    for _ in range(200_000):
        if game.status(state) == FINISHED:
            return state
        seat = rng.choice(game.to_act(state))
        legal = game.legal_moves(state, seat)
        assert legal, "a world's seat to act must have a legal move"
        state, _ = game.play(state, seat, rng.choice(legal))
    raise AssertionError("a world did not finish")


def z_score(hits: list[Hit]) -> float:
    """(observed − expected) / sd for independent Bernoulli trials."""
    expected = sum(p for _, p in hits)
    variance = sum(p * (1 - p) for _, p in hits)
    return (sum(hit for hit, _ in hits) - expected) / math.sqrt(variance)


def share(counts: Counter[Any], item: Any) -> float:
    return counts[item] / sum(counts.values())


# ---------------------------------------------------------------------------
# Per game: exact card multisets, public facts, hidden slots and their
# uniform hit probabilities, deck variants that k cannot tell apart.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class WorldSpec:
    game_id: str
    #: asserts the world's card multisets and public partial facts
    check: Callable[[State, State, int], None]
    #: the hidden slots of ``state`` for ``seat``: slot key → (true card getter
    #: of a state, uniform probability that a world's slot holds the true card)
    slots: Callable[[State, int], list[tuple[Callable[[State], Any], float]]]
    #: whether ``slots`` gives exact uniform probabilities here (no public
    #: fact skews them)
    plain: Callable[[State, int], bool]
    #: two creation options that differ only in cards nobody sees early
    variants: Callable[[int], tuple[dict[str, Any], dict[str, Any]]]
    #: the options of the playouts positions are taken from
    playouts: tuple[dict[str, Any], ...] = ({},)
    #: how those playouts choose among the legal moves
    policy: Policy = random_move


# --- Mein Lieber Biber (MLB-5, MLB-10.1) -----------------------------------
def mlb_check(world: State, real: State, seat: int) -> None:
    from engine.mein_lieber_biber import PHASE_EXCHANGE, PHASE_PLAY, can_play
    cards = [c for h in world["hands"] for c in h] + [c for p in world["piles"] for c in p] \
        + [c for d in world["discards"] for c in d]
    assert sorted(cards) == list(range(48)), "MLB-10.1: every card exactly once"
    assert all(h == sorted(h) for h in world["hands"]), "MLB-1.2: hands sorted"
    if world["phase"] in (PHASE_PLAY, PHASE_EXCHANGE):  # MLB-4.0
        assert can_play(world["pos"], world["hands"][world["turn"]]) == (world["phase"] == PHASE_PLAY)
    assert world["decks"] is None, "MLB-2.1a: a world carries no stacked decks"


def mlb_unseen(state: State, seat: int) -> int:
    return 48 - len(state["hands"][seat]) - sum(map(len, state["discards"]))


def mlb_slots(state: State, seat: int) -> list[tuple[Callable[[State], Any], float]]:
    """A card in another hand is in that (sorted) hand with chance |hand|/m;
    a pile position holds its true card with chance 1/m (m unseen cards)."""
    m = mlb_unseen(state, seat)
    slots: list[tuple[Callable[[State], Any], float]] = []
    for o, hand in enumerate(state["hands"]):
        if o != seat:
            slots += [((lambda w, o=o, c=c: c in w["hands"][o]), len(hand) / m) for c in hand]
    for p, pile in enumerate(state["piles"]):
        slots += [((lambda w, p=p, i=i, c=c: w["piles"][p][i] == c), 1 / m) for i, c in enumerate(pile)]
    return slots


def mlb_plain(state: State, seat: int) -> bool:
    """No phase fact (MLB-4.0) constrains another seat's hand."""
    return state["turn"] == seat or state["phase"] not in ("play", "exchange")


def swap_last(items: list[str]) -> list[str]:
    """``items`` with its last two exchanged."""
    return items[:-2] + [items[-1], items[-2]]


def mlb_variants(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The bottom cards of the two piles (MLB-3.3) exchanged."""
    from engine.mein_lieber_biber import CARDS
    deck = list(CARDS)
    random.Random(n).shuffle(deck)
    return {"deck": deck}, {"deck": swap_last(deck)}


# --- 13 Beavers (TB-5, TB-10) -------------------------------------------------
TB_DECK = [str(v) for v in range(1, 14) for _ in range(4)]
TB_FISH = ["turbo"] * 3 + ["vision"] * 3 + ["stinky"] * 2
TB_WOLVES = ["awake"] * 4 + ["asleep"]


def tb_check(world: State, real: State, seat: int) -> None:
    assert Counter([world["face_up"], *world["discard"], *world["draw"]]) == Counter(TB_DECK)  # TB-10.1
    held = [f for fish in world["fish"] for f in fish]
    assert Counter(world["pond"] + held + world["used_fish"]) == Counter(TB_FISH)  # TB-10.2
    assert "stinky" not in held, "TB-4.12, TB-5.3: a caught stinky is spent at once"
    assert Counter(world["cave"] + world["wolf_out"]) == Counter(TB_WOLVES)
    assert (not world["cave"]) == ("asleep" in world["wolf_out"])  # TB-10.2


def tb_slots(state: State, seat: int) -> list[tuple[Callable[[State], Any], float]]:
    """Draw and cave positions: the true value's share of the pile.  Fish
    nobody has shown: stinky only in the pond (uniform position); a plain
    fish slot holds a given kind with that kind's share of the plain fish."""
    slots: list[tuple[Callable[[State], Any], float]] = []
    for key in ("draw", "cave"):
        counts = Counter(state[key])
        slots += [((lambda w, key=key, i=i, c=c: w[key][i] == c), share(counts, c))
                  for i, c in enumerate(state[key])]
    hidden = state["pond"] + [f for o, fish in enumerate(state["fish"]) if o != seat for f in fish]
    plain = Counter(f for f in hidden if f != "stinky")
    stinky = share(Counter(state["pond"]), "stinky") if state["pond"] else 0.0
    for i, f in enumerate(state["pond"]):
        p = stinky if f == "stinky" else (1 - stinky) * share(plain, f)
        slots.append(((lambda w, i=i, f=f: w["pond"][i] == f), p))
    for o, fish in enumerate(state["fish"]):
        if o != seat:
            slots += [((lambda w, o=o, i=i, f=f: w["fish"][o][i] == f), share(plain, f))
                      for i, f in enumerate(fish)]
    return slots


def tb_fisher(state: State, legal: list[Move], rng: random.Random) -> Move:
    """Sensible play that dams on the fish space (TB-4.12 a), so hands hold
    fish: guess towards the likelier side (TB-4.5), dam now and then."""
    from engine.thirteen_beavers import BOARDS, FISH_POND
    on_fish = BOARDS[state["board"]].kinds[state["beaver"][state["active"]]] == FISH_POND
    dam = {"type": "dam"}
    if dam in legal and (on_fish or rng.random() < 0.3):
        return dam
    guess = {"type": "guess", "dir": "higher" if int(state["face_up"]) <= 7 else "lower"}
    return guess if rng.random() < 0.9 else rng.choice(legal)


def tb_variants(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The last two cards of the deck, the last two fish of the pond and the
    last two tokens of the cave exchanged (each pair different)."""
    deck = list(TB_DECK)
    random.Random(n).shuffle(deck)
    deck = _fix_multiset(deck)
    fish = ["stinky", "turbo", "vision", "turbo", "vision", "stinky", "turbo", "vision"]
    wolves = ["awake", "awake", "awake", "asleep", "awake"]
    return ({"deck": deck, "fish": fish, "wolves": wolves},
            {"deck": swap_last(deck), "fish": swap_last(fish), "wolves": swap_last(wolves)})


def _fix_multiset(deck: list[str]) -> list[str]:
    """``deck`` with its last two cards made different, still a permutation."""
    if deck[-1] != deck[-2]:
        return deck
    j = next(i for i, v in enumerate(deck) if v != deck[-1])
    deck[j], deck[-1] = deck[-1], deck[j]
    return deck


SPECS = {spec.game_id: spec for spec in (
    WorldSpec("mein-lieber-biber", mlb_check, mlb_slots, mlb_plain, mlb_variants),
    WorldSpec("thirteen-beavers", tb_check, tb_slots, lambda state, seat: True, tb_variants,
              playouts=({}, {"board": "short"}), policy=tb_fisher),
)}
GAME_IDS = sorted(SPECS)


def game_of(game_id: str) -> Game:
    game = REGISTRY.get(game_id)
    assert game is not None
    return game


def sample_positions(game: Game) -> Iterator[tuple[State, int]]:
    """(state, players) at positions of random playouts, 2 and the most players."""
    for options in SPECS[game.id].playouts:
        for n in sorted({game.min_players, game.max_players}):
            for seed in range(2):
                for state in positions(game, n, 1000 * n + seed, 10, options, SPECS[game.id].policy):
                    yield state, n


# ---------------------------------------------------------------------------
# (a) Agreement and validity.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_world_view_equals_real_view_and_plays_to_the_end(game_id: str) -> None:
    game, spec = game_of(game_id), SPECS[game_id]
    rng = random.Random(7)
    checked = 0
    for state, n in sample_positions(game):
        frozen = orjson.dumps(state)
        for seat in range(n):
            for sample_seed in (0, 1, 2**53 - 1):
                world = game.sample_world(state, seat, sample_seed)
                assert seat_view(game, world, seat) == seat_view(game, state, seat)
                spec.check(world, state, seat)
                assert world == game.sample_world(state, seat, sample_seed), "sampling is repeatable"
                checked += 1
        assert orjson.dumps(state) == frozen, "sampling must not mutate the state"
        play_to_end(game, game.sample_world(state, rng.randrange(n), rng.randrange(2**53)), rng)
    assert checked >= 100


# ---------------------------------------------------------------------------
# (b) The true hidden cards are not over- (or under-) represented.
# ---------------------------------------------------------------------------
def hit_trials(game: Game, spec: WorldSpec, sampler: Sampler, seeds: int = 12) -> list[Hit]:
    """Per position and seat, ``seeds`` worlds, each with a sample seed of its
    own and one hidden slot (taken in turn): did the world put the true card
    there, and how likely is that for a uniform deal?  Given the positions,
    the trials are independent Bernoulli trials."""
    trials: list[Hit] = []
    for state, n in sample_positions(game):
        for seat in range(n):
            slots = spec.slots(state, seat)
            if not slots or not spec.plain(state, seat):
                continue
            for _ in range(seeds):
                holds_true, p = slots[(len(trials) * 7919) % len(slots)]
                trials.append((bool(holds_true(sampler(state, seat, len(trials)))), p))
    return trials


#: a uniform sampler exceeds this only with probability far below 10⁻⁶
Z_BOUND = 5.0


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_true_hidden_cards_are_not_over_represented(game_id: str) -> None:
    game, spec = game_of(game_id), SPECS[game_id]
    trials = hit_trials(game, spec, game.sample_world)
    assert len(trials) >= 500
    assert abs(z_score(trials)) < Z_BOUND


def partial_leak(game: Game) -> Sampler:
    """A sampler that deals uniformly but keeps one true hidden list (the
    first that has ≥ 2 cards: a pile or the draw order)."""
    def sampler(state: State, seat: int, seed: int) -> State:
        world = game.sample_world(state, seat, seed)
        for key in ("piles", "draw"):
            if key in state:
                world[key] = state[key]
        return world
    return sampler


@pytest.mark.parametrize("game_id", GAME_IDS)
@pytest.mark.parametrize("leak", ["true state", "true pile order"])
def test_the_statistic_rejects_a_leaking_sampler(game_id: str, leak: str) -> None:
    game, spec = game_of(game_id), SPECS[game_id]
    sampler: Sampler = (lambda state, seat, seed: state) if leak == "true state" else partial_leak(game)
    assert z_score(hit_trials(game, spec, sampler)) > Z_BOUND


# ---------------------------------------------------------------------------
# (c), (d) Same knowledge, same worlds; the future from the world's own seed.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_same_knowledge_gives_same_worlds_whatever_the_hidden_cards_and_seed(game_id: str) -> None:
    game, spec = game_of(game_id), SPECS[game_id]
    compared = 0
    for n in sorted({game.min_players, game.max_players}):
        options_a, options_b = spec.variants(n)
        names = [f"p{i}" for i in range(n)]
        a, _, _ = game.create(names, 11, options_a)
        b, _, _ = game.create(names, 12345, options_b)
        assert a != b
        rng = random.Random(n)
        for _ in range(60):
            if game.status(a) == FINISHED:
                break
            for seat in range(n):
                if seat_view(game, a, seat) != seat_view(game, b, seat):
                    continue
                for sample_seed in (0, 99):
                    world_a = game.sample_world(a, seat, sample_seed)
                    world_b = game.sample_world(b, seat, sample_seed)
                    assert world_a == world_b
                    assert world_a["seed"] not in (11, 12345), "a world has its own seed"
                    if compared == 0:  # the same moves give the same future
                        finals = [play_to_end(game, w, random.Random(sample_seed)) for w in (world_a, world_b)]
                        assert finals[0] == finals[1]
                    compared += 1
            mover = rng.choice(game.to_act(a))
            move = rng.choice(game.legal_moves(a, mover))
            if move not in game.legal_moves(b, mover):
                break
            a, _ = game.play(a, mover, move)
            b, _ = game.play(b, mover, move)
    assert compared >= 20, "too few positions where both matches look the same to a seat"
