"""Determinization (contract "Worlds and simulation"): ``Game.sample_world``.

Independent checks, per game, of what a world for seat k must be:

* **agreement** — at positions of playouts (with play that makes the games'
  rarer situations happen: reshuffles, fish in hands), k's view of every
  world equals its real view (recall forced to ``"perfect"``, so every card k
  has seen is compared where it really is), the world holds the game's exact
  card multisets and public partial facts (a reshuffled pile's cards, no
  special in a castle, the turn seat's hand fitting its phase …), and the
  engine plays it to the end with random legal moves; sampling is pure and
  repeatable, and before a reshuffle the event history changes nothing;
* **no leak** — over many sample seeds, one hidden slot per world gets its
  true card about as often as a uniform deal among the candidates predicts
  (a z bound that a uniform sampler passes with overwhelming probability);
  the same statistic rejects samplers that leak (the true state; a true pile
  order kept), so the check can fail;
* **same knowledge, same worlds** — two matches whose stacked decks differ
  only in cards k has not seen, and whose seeds differ, give identical worlds
  (their futures included: they come from the world's own seed) wherever
  k's views agree; and a world used as the match gives the real match's
  worlds, after reshuffles too;
* **refusals** — a finished match, and (past a reshuffle) a missing or
  mismatched history.

The expected hit probabilities are this file's own reading of the rules'
hidden information (docs/games/*.md, section 5), not the engines' code.  Each
game's reading is a :class:`tests.world_specs.WorldSpec`: the four games'
below, a plugin game's registered beside it (``tests/toy_game``).
"""
from __future__ import annotations

import functools
import math
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from engine import REGISTRY
from engine.core import FINISHED, Game, MatchFinished, Move, State, seat_viewer
from tests.conftest import examples
from tests.world_specs import SPECS, Position, Slot, WorldSpec, register, share, swap_last

Hit = tuple[bool, float]


Sampler = Callable[[Position, int, int], State]


# ---------------------------------------------------------------------------
# Shared helpers.
# ---------------------------------------------------------------------------
def perfect(state: State) -> State:
    """The state with ``recall: "perfect"`` where the game stores the option."""
    return {**state, "recall": "perfect"} if "recall" in state else state


def seat_view(game: Game, state: State, seat: int) -> dict[str, Any]:
    return game.view(perfect(state), seat_viewer(seat))


def positions(game: Game, n: int, seed: int, count: int, options: dict[str, Any],
              spec: WorldSpec) -> list[Position]:
    """``count`` active positions spread over one playout by ``spec.policy``."""
    rng = random.Random(seed)
    state, events, _ = game.create([f"p{i}" for i in range(n)], seed, options)
    found, pile = [], None
    while game.status(state) != FINISHED:
        found.append(Position(state, n, events, pile))
        seat = rng.choice(game.to_act(state))
        state, new = game.play(state, seat, spec.policy(state, game.legal_moves(state, seat), rng))
        events = events + new
        for event in new:
            if event["type"] == "round_started":
                pile = None
            elif event["type"] == "reshuffled" and spec.pile:
                pile = spec.pile(state)
    stride = max(1, len(found) // count)
    return found[::stride][:count]


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


# ---------------------------------------------------------------------------
# Per game: exact card multisets, public facts, hidden slots and their
# uniform hit probabilities, deck variants that k cannot tell apart.
# ---------------------------------------------------------------------------
# --- Mein Lieber Biber (MLB-5, MLB-10.1) -----------------------------------
def mlb_check(world: State, position: Position, seat: int) -> None:
    from engine.mein_lieber_biber import PHASE_EXCHANGE, PHASE_PLAY, can_play
    cards = [c for h in world["hands"] for c in h] + [c for p in world["piles"] for c in p] \
        + [c for d in world["discards"] for c in d]
    assert sorted(cards) == list(range(48)), "MLB-10.1: every card exactly once"
    assert all(h == sorted(h) for h in world["hands"]), "MLB-1.2: hands sorted"
    if world["phase"] in (PHASE_PLAY, PHASE_EXCHANGE):  # MLB-4.0
        assert can_play(world["pos"], world["hands"][world["turn"]]) == (world["phase"] == PHASE_PLAY)
    assert world["decks"] is None, "MLB-2.1a: a world carries no stacked decks"
    for o, free in mlb_free(position).items():  # cards held at an exchange since the last play
        if o != seat:
            assert sum(can_play(world["pos"], [c]) for c in world["hands"][o]) <= free


def mlb_free(position: Position) -> dict[int, int]:
    """Per seat that exchanged or discarded since the last play (MLB-4.5,
    MLB-4.6: it could move no beaver then, and only a play moves one), how
    many of its cards arrived since: the one drawn in the exchange and the
    top-ups (MLB-4.3).  Its other cards cannot move a beaver now."""
    free: dict[int, int] = {}
    for event in position.events:
        kind, actor = event["type"], event["seat"]
        if kind in ("played", "round_started"):
            free = {}
        elif kind in ("exchanged", "discarded"):
            free[actor] = 1 if kind == "exchanged" else 0
        elif kind == "drew" and actor in free:
            free[actor] += 1
    return free


def mlb_unseen(state: State, seat: int) -> int:
    return 48 - len(state["hands"][seat]) - sum(map(len, state["discards"]))


def mlb_slots(state: State, seat: int) -> list[Slot]:
    """A card in another hand is in that (sorted) hand with chance |hand|/m;
    a pile position holds its true card with chance 1/m (m unseen cards)."""
    m = mlb_unseen(state, seat)
    slots: list[Slot] = []
    for o, hand in enumerate(state["hands"]):
        if o != seat:
            slots += [((lambda w, o=o, c=c: c in w["hands"][o]), len(hand) / m) for c in hand]
    for p, pile in enumerate(state["piles"]):
        slots += [((lambda w, p=p, i=i, c=c: w["piles"][p][i] == c), 1 / m) for i, c in enumerate(pile)]
    return slots


def mlb_plain(position: Position, seat: int) -> bool:
    """No phase fact (MLB-4.0) constrains another seat's hand."""
    state = position.state
    mover_free = state["turn"] == seat or state["phase"] not in ("play", "exchange")
    return mover_free and not set(mlb_free(position)) - {seat}


def mlb_fill(prefix: list[str]) -> list[str]:
    """MLB-11's ``fill``: ``prefix``, then the other cards in canonical order."""
    from engine.mein_lieber_biber import CARDS
    return prefix + [c for c in CARDS if c not in prefix]


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


def tb_check(world: State, position: Position, seat: int) -> None:
    assert Counter([world["face_up"], *world["discard"], *world["draw"]]) == Counter(TB_DECK)  # TB-10.1
    held = [f for fish in world["fish"] for f in fish]
    assert Counter(world["pond"] + held + world["used_fish"]) == Counter(TB_FISH)  # TB-10.2
    assert "stinky" not in held, "TB-4.12, TB-5.3: a caught stinky is spent at once"
    assert Counter(world["cave"] + world["wolf_out"]) == Counter(TB_WOLVES)
    assert (not world["cave"]) == ("asleep" in world["wolf_out"])  # TB-10.2


def tb_slots(state: State, seat: int) -> list[Slot]:
    """Draw and cave positions: the true value's share of the pile.  Fish
    nobody has shown: stinky only in the pond (uniform position); a plain
    fish slot holds a given kind with that kind's share of the plain fish."""
    slots: list[Slot] = []
    for key in ("draw", "cave"):
        counts: Counter[str] = Counter(state[key])
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
    """The same deck (every card of it is shown before a reshuffle); the last
    two fish of the pond and the last two tokens of the cave exchanged."""
    deck = list(TB_DECK)
    random.Random(n).shuffle(deck)
    fish = ["stinky", "turbo", "vision", "turbo", "vision", "stinky", "turbo", "vision"]
    wolves = ["awake", "awake", "awake", "asleep", "awake"]
    return ({"deck": deck, "fish": fish, "wolves": wolves},
            {"deck": deck, "fish": swap_last(fish), "wolves": swap_last(wolves)})


def bb_cards(world: State) -> Counter[str]:
    return Counter("".join(world["display"]) + world["draw"] + world["discard"] + (world["held"] or ""))


def bb_check(world: State, position: Position, seat: int) -> None:
    from engine.biberbande import CANONICAL, CODEC
    assert bb_cards(world) == Counter(CODEC.encode(CANONICAL)), "BB-10.1"
    assert world["decks"] == [], "a world carries no stacked decks"
    if position.pile is not None:  # BB-3.6: the draw pile is part of the last reshuffled one
        assert not Counter[str](world["draw"]) - Counter(position.pile), "BB-3.6: drawn from the reshuffled pile"


def bb_hidden(state: State, seat: int) -> list[tuple[str, int, int]]:
    """The places of the cards ``seat`` does not know (BB-5.1–5.6)."""
    places = [("display", s, j) for s, masks in enumerate(state["known"])
              for j, mask in enumerate(masks) if not mask & (1 << seat)]
    if state["held"] is not None and state["turn"] is not None and _bb_current(state) != seat:
        places.append(("held", 0, 0))
    return places + [("draw", i, 0) for i in range(len(state["draw"]))]


def _bb_current(state: State) -> int:
    """BB-3.1, BB-4: the seat of turn t."""
    n = len(state["names"])
    return (state["first_seat"] + state["round"] - 1 + state["turn"] - 1) % n


def bb_card_at(state: State, place: tuple[str, int, int]) -> str:
    where, a, b = place
    return str(state["display"][a][b] if where == "display" else state["held"] if where == "held"
               else state["draw"][a])


def bb_slots(state: State, seat: int) -> list[Slot]:
    """Before a reshuffle all unknown cards are one pool: a place holds its
    true card with that card's share of the pool."""
    truth = {place: bb_card_at(state, place) for place in bb_hidden(state, seat)}
    counts = Counter(truth.values())
    return [((lambda w, place=place, c=c: bb_card_at(w, place) == c), share(counts, c))
            for place, c in truth.items()]


def bb_patient(state: State, legal: list[Move], rng: random.Random) -> Move:
    """Random play that never knocks (BB-4.7) and mostly draws (BB-4.1), so
    draw piles run out and reshuffle."""
    end, draw = {"type": "end_turn"}, {"type": "draw"}
    if end in legal:
        return end
    return draw if draw in legal and rng.random() < 0.8 else rng.choice(legal)


def bb_variants(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The inner cards (slot 1) of seats 0 and 1 exchanged (BB-3.3: deck[n]
    and deck[n + 1] with the default first seat): nobody has seen them."""
    from engine.biberbande import CANONICAL
    deck = list(CANONICAL)
    random.Random(n).shuffle(deck)
    j = next(i for i in range(n + 1, len(deck)) if deck[i] != deck[n])
    deck[n + 1], deck[j] = deck[j], deck[n + 1]
    other = list(deck)
    other[n], other[n + 1] = deck[n + 1], deck[n]
    return {"deck": deck}, {"deck": other}


# --- BiberClan (BC-4.10, BC-5, BC-10.1) -------------------------------------------
BC_NUMBERS = {str(d) for d in range(10)}


def bc_cards(world: State) -> Counter[str]:
    castles = [c["card"] for castle in world["castles"] for c in castle if c is not None]
    held = [world["held"]["card"]] if world["held"] else []
    return Counter(castles + held + world["draw"] + world["discard"] + world["box"])


def bc_check(world: State, position: Position, seat: int) -> None:
    from engine.biberclan import canonical
    assert bc_cards(world) == Counter(canonical(world["with_biberbande"])), "BC-10.1"
    in_castles = {c["card"] for castle in world["castles"] for c in castle if c is not None}
    assert in_castles <= BC_NUMBERS, "BC-10.1: no special in a castle"
    held = world["held"]
    if held is not None and held["kind"] != "special":
        assert held["card"] in BC_NUMBERS
    assert world["decks"] == [], "a world carries no stacked decks"
    if position.pile is not None:  # BC-4.10, D17: the draw pile is part of the last reshuffled one
        assert not Counter[str](world["draw"]) - Counter(position.pile), "drawn from the reshuffled pile"


def bc_hidden(state: State, seat: int) -> list[tuple[str, int, int]]:
    """The places of the cards ``seat`` neither sees nor knows (BC-5.1–5.5)."""
    me = 1 << seat
    places = [("castle", o, i) for o, castle in enumerate(state["castles"]) for i, c in enumerate(castle)
              if c is not None and c["face"] == "down" and not c["knowers"] & me]
    held = state["held"]
    if held is not None and not (held["public"] or state["seat"] == seat or held["knowers"] & me):
        places.append(("held", 0, 0))
    return places + [("draw", i, 0) for i in range(len(state["draw"]))]


def bc_card_at(state: State, place: tuple[str, int, int]) -> str:
    where, a, b = place
    card = state["castles"][a][b]["card"] if where == "castle" else state["held"]["card"] if where == "held" \
        else state["draw"][a]
    return str(card)


def bc_slots(state: State, seat: int) -> list[Slot]:
    """Before a reshuffle all unseen cards are one pool; specials lie only in
    the draw pile (BC-10.1): a castle or held place holds a number with its
    share of the unseen numbers; a draw place a given special with chance
    (its count)/(draw size), a number with the rest times its share."""
    truth = {place: bc_card_at(state, place) for place in bc_hidden(state, seat)}
    counts = Counter(truth.values())
    numbers = Counter({c: k for c, k in counts.items() if c in BC_NUMBERS})
    draw = len(state["draw"])
    specials = sum(counts.values()) - sum(numbers.values())

    def chance(place: tuple[str, int, int], card: str) -> float:
        if place[0] != "draw":
            return share(numbers, card)
        if card not in BC_NUMBERS:
            return counts[card] / draw
        return (1 - specials / draw) * share(numbers, card)
    return [((lambda w, place=place, c=c: bc_card_at(w, place) == c), chance(place, c))
            for place, c in truth.items()]


def bc_patient(state: State, legal: list[Move], rng: random.Random) -> Move:
    """Random play that mostly replaces its own cards (BC-4.4: to the
    discard) and never completes its castle, so draw piles reshuffle."""
    seat = state["seat"]
    own = [m for m in legal if m["type"] == "replace" and m["target"] == seat]
    if own and rng.random() < 0.9:
        return rng.choice(own)
    full = sum(c is not None for c in state["castles"][seat]) == 4
    safe = [m for m in legal if not (full and m["type"] in ("place", "stash") and m.get("target", seat) == seat)]
    return rng.choice(safe or legal)


def bc_variants(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The bottom two cards of the draw pile exchanged."""
    from engine.biberclan import canonical
    deck = canonical(False)
    random.Random(n).shuffle(deck)
    j = next(i for i in range(len(deck)) if deck[i] != deck[-1])
    deck[-2], deck[j] = deck[j], deck[-2]
    return {"deck": deck}, {"deck": swap_last(deck)}


for _spec in (
    WorldSpec("biberclan", bc_check, bc_slots, lambda position, seat: position.state["reshuffles"] == 0,
              bc_variants,
              playouts=({"rounds": 2}, {"with_biberbande": True, "recall": "none", "rounds": 1}),
              policy=bc_patient, pile=lambda state: [*state["draw"], state["held"]["card"]]),
    WorldSpec("biberbande", bb_check, bb_slots, lambda position, seat: position.state["reshuffles"] == 0,
              bb_variants,
              playouts=({"rounds": 2}, {"rounds": 1, "recall": "none"}), policy=bb_patient,
              pile=lambda state: list(state["draw"] + (state["held"] or ""))),
    WorldSpec("mein-lieber-biber", mlb_check, mlb_slots, mlb_plain, mlb_variants, reshuffles=False),
    WorldSpec("thirteen-beavers", tb_check, tb_slots, lambda position, seat: True, tb_variants,
              playouts=({}, {"board": "short"}), policy=tb_fisher),
):
    register(_spec)
#: every registered game (a plugin's too, with ``LODGE_EXTRA_GAMES``); a spec
#: registered for a game that is not (the toy's, imported by its own tests) is left out
GAME_IDS = sorted(REGISTRY.ids())


def game_of(game_id: str) -> Game:
    game = REGISTRY.get(game_id)
    assert game is not None
    return game


@functools.cache
def sample_positions(game: Game) -> tuple[Position, ...]:
    """Positions of the game's playouts, 2 and the most players (computed
    once; no test changes them)."""
    return tuple(position for options in SPECS[game.id].playouts
                 for n in sorted({game.min_players, game.max_players}) for seed in range(2)
                 for position in positions(game, n, 1000 * n + seed, 10, options, SPECS[game.id]))


# ---------------------------------------------------------------------------
# (a) Agreement and validity.
# ---------------------------------------------------------------------------
def test_every_registered_game_samples_worlds() -> None:
    """Each registered game has a worlds spec (registered beside its knowledge model)."""
    missing = [game_id for game_id in GAME_IDS if game_id not in SPECS]
    assert not missing, f"no worlds spec for {missing}: register one with tests.world_specs.register"


#: the sample seeds of each world checked; ``--fast`` takes the first (:func:`tests.conftest.examples`)
SAMPLE_SEEDS = (2**53 - 1, 0, 1)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_world_view_equals_real_view_and_plays_to_the_end(game_id: str) -> None:
    game, spec = game_of(game_id), SPECS[game_id]
    rng = random.Random(7)
    sample_seeds = SAMPLE_SEEDS[:examples(len(SAMPLE_SEEDS))]
    seats_checked = 0
    for position in sample_positions(game):
        state, n = position.state, position.n
        frozen = orjson.dumps(state)
        for seat in range(n):
            real_view = seat_view(game, state, seat)
            for sample_seed in sample_seeds:
                world = position.world(game, seat, sample_seed)
                assert seat_view(game, world, seat) == real_view
                spec.check(world, position, seat)
                assert world == position.world(game, seat, sample_seed), "sampling is repeatable"
                if state.get("reshuffles") == 0:  # the state alone says it all before a reshuffle
                    assert world == game.sample_world(state, seat, sample_seed)
            seats_checked += 1
        assert orjson.dumps(state) == frozen, "sampling must not mutate the state"
        play_to_end(game, position.world(game, rng.randrange(n), rng.randrange(2**53)), rng)
    assert seats_checked * len(SAMPLE_SEEDS) >= 100, "too few worlds checked"


# ---------------------------------------------------------------------------
# (b) The true hidden cards are not over- (or under-) represented.
# ---------------------------------------------------------------------------
def hit_trials(game: Game, spec: WorldSpec, sampler: Sampler, seeds: int = 12) -> list[Hit]:
    """Per position and seat, ``seeds`` worlds, each with a sample seed of its
    own and one hidden slot (taken in turn): did the world put the true card
    there, and how likely is that for a uniform deal?  Given the positions,
    the trials are independent Bernoulli trials."""
    trials: list[Hit] = []
    for position in sample_positions(game):
        for seat in range(position.n):
            slots = spec.slots(position.state, seat)
            if not slots or not spec.plain(position, seat):
                continue
            for _ in range(seeds):
                holds_true, p = slots[(len(trials) * 7919) % len(slots)]
                trials.append((bool(holds_true(sampler(position, seat, len(trials)))), p))
    return trials


#: a uniform sampler exceeds this only with probability far below 10⁻⁶
Z_BOUND = 5.0


#: (game, position's id, seat, seed) -> world, see :func:`sampled_world`
_SAMPLED: dict[tuple[str, int, int, int], State] = {}


def sampled_world(game: Game, position: Position, seat: int, seed: int) -> State:
    """``position.world(game, seat, seed)``, made once for the statistics tests
    (the uniform sampler and the one that leaks the pile order both deal it;
    the positions are :func:`sample_positions`', kept for the session, so an
    id names one).  Not to be changed: a sampler changes a copy."""
    key = (game.id, id(position), seat, seed)
    if key not in _SAMPLED:
        _SAMPLED[key] = position.world(game, seat, seed)
    return _SAMPLED[key]


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_true_hidden_cards_are_not_over_represented(game_id: str) -> None:
    game, spec = game_of(game_id), SPECS[game_id]
    trials = hit_trials(game, spec, lambda position, seat, seed: sampled_world(game, position, seat, seed))
    assert len(trials) >= 500
    assert abs(z_score(trials)) < Z_BOUND


def partial_leak(game: Game) -> Sampler:
    """A sampler that deals uniformly but keeps the true pile order."""
    def sampler(position: Position, seat: int, seed: int) -> State:
        world = dict(sampled_world(game, position, seat, seed))
        for key in ("piles", "draw"):
            if key in world:
                world[key] = position.state[key]
        return world
    return sampler


def true_state(position: Position, seat: int, seed: int) -> State:
    return position.state


@pytest.mark.parametrize("game_id", GAME_IDS)
@pytest.mark.parametrize("leak", ["true state", "true pile order"])
def test_the_statistic_rejects_a_leaking_sampler(game_id: str, leak: str) -> None:
    game, spec = game_of(game_id), SPECS[game_id]
    sampler = true_state if leak == "true state" else partial_leak(game)
    assert z_score(hit_trials(game, spec, sampler)) > Z_BOUND


# ---------------------------------------------------------------------------
# (c), (d) Same knowledge, same worlds; the future from the world's own seed.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_same_knowledge_gives_same_worlds_whatever_the_hidden_cards_and_seed(game_id: str) -> None:
    """Two matches with different seeds whose decks differ in cards nobody
    has seen, played with the same moves: wherever a seat's views agree,
    so do its worlds and their futures."""
    game, spec = game_of(game_id), SPECS[game_id]
    compared = 0
    for n in sorted({game.min_players, game.max_players}):
        options_a, options_b = spec.variants(n)
        names = [f"p{i}" for i in range(n)]
        a, events_a, _ = game.create(names, 11, {**spec.playouts[0], **options_a})
        b, events_b, _ = game.create(names, 12345, {**spec.playouts[0], **options_b})
        assert a != b
        rng = random.Random(n)
        for step in range(400):
            if game.status(a) == FINISHED:
                break
            for seat in range(n):
                if seat_view(game, a, seat) != seat_view(game, b, seat):
                    continue
                world_a = game.sample_world(a, seat, step, events_a)
                world_b = game.sample_world(b, seat, step, events_b)
                assert world_a == world_b
                assert world_a["seed"] not in (11, 12345), "a world has its own seed"
                if compared == 0:  # the same moves give the same future
                    finals = [play_to_end(game, w, random.Random(step)) for w in (world_a, world_b)]
                    assert finals[0] == finals[1]
                compared += 1
            mover = rng.choice(game.to_act(a))
            move = spec.policy(a, game.legal_moves(a, mover), rng)
            if move not in game.legal_moves(b, mover):
                break
            a, new_a = game.play(a, mover, move)
            b, new_b = game.play(b, mover, move)
            events_a, events_b = events_a + new_a, events_b + new_b
    assert compared >= 20, "too few positions where both matches look the same to a seat"


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_world_as_the_match_gives_the_same_worlds(game_id: str) -> None:
    """A world for seat k is a match in which k knows exactly what it knows
    in the real one (with other hidden cards and another seed), whatever the
    position, after reshuffles too: its worlds for k are the real match's."""
    game = game_of(game_id)
    reshuffled = 0
    for position in sample_positions(game):
        for seat in range(position.n):
            other = position.world(game, seat, 12345)
            twin = Position(other, position.n, position.events)
            assert seat_view(game, other, seat) == seat_view(game, position.state, seat)
            for sample_seed in (0, 7)[:examples(2)]:
                assert twin.world(game, seat, sample_seed) == position.world(game, seat, sample_seed)
            reshuffled += bool(position.state.get("reshuffles"))
    assert reshuffled or not SPECS[game_id].reshuffles, "no position after a reshuffle"


# ---------------------------------------------------------------------------
# Refusals: nothing to sample, or a history that does not fit.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_finished_match_has_no_world(game_id: str) -> None:
    game = game_of(game_id)
    names = [f"p{i}" for i in range(game.min_players)]
    state, events, _ = game.create(names, 3, {})
    state, new = game.play(state, 1, {"type": "resign"})
    with pytest.raises(MatchFinished):
        game.sample_world(state, 0, 0, events + new)


@pytest.mark.parametrize("game_id", ["biberbande", "biberclan"])
def test_after_a_reshuffle_the_round_history_is_required_and_checked(game_id: str) -> None:
    """Past a reshuffle the pools come from the events (BB-3.6, BC-4.10):
    none, or events that do not lead to the state, are refused rather than
    guessed at."""
    game = game_of(game_id)
    position = next(p for p in sample_positions(game) if p.state["reshuffles"])
    with pytest.raises(ValueError, match="no round_started event"):
        game.sample_world(position.state, 0, 0)
    last = max(i for i, e in enumerate(position.events) if e["type"] == "reshuffled")
    with pytest.raises(ValueError, match="do not lead to this state"):
        game.sample_world(position.state, 0, 0, position.events[:last])


# ---------------------------------------------------------------------------
# A public fact only the history shows: a forced exchange (MLB-4.5).
# ---------------------------------------------------------------------------
def test_cards_held_through_a_forced_exchange_cannot_move_a_beaver() -> None:
    """MLB-11 WE2: seat 1 has to exchange twice (nothing it holds can move a
    beaver) and then holds yellow-1, purple-1 (drawn in the first exchange)
    and yellow-4.  Nobody has played since, so in seat 0's worlds seat 1
    holds one card that can move a beaver and two that cannot, the two
    uniform among the unseen cards that cannot."""
    from engine.mein_lieber_biber import CARDS, can_play
    game = game_of("mein-lieber-biber")
    deck = mlb_fill(["red-1", "yellow-1", "orange-8", "green-1", "purple-8", "blue-1",
                     "purple-1", "orange-2", "yellow-4"])
    state, events, _ = game.create(["ana", "bo"], 1, {"deck": deck})
    moves: list[tuple[int, Move]] = [(0, {"type": "play", "card": "red-1", "beaver": "red"}),
                                     (0, {"type": "reward", "take": "stick"}), (0, {"type": "draw", "pile": 1}),
                                     (1, {"type": "exchange", "card": "green-1", "pile": 0}),
                                     (1, {"type": "exchange", "card": "blue-1", "pile": 0})]
    for seat, move in moves:
        state, new = game.play(state, seat, move)
        events = events + new
    assert state["phase"] == "play" and [CARDS[c] for c in state["hands"][1]] == ["yellow-1", "yellow-4", "purple-1"]
    with pytest.raises(ValueError, match="no played or round_started event"):
        game.sample_world(state, 0, 0)  # the facts come from the events
    stuck_unseen = [c for c in range(48) if not can_play(state["pos"], [c])
                    and c not in state["hands"][0] and c not in state["discards"][1]]
    seen_stuck: Counter[int] = Counter()
    worlds_drawn = 2000
    for sample_seed in range(worlds_drawn):
        hand = game.sample_world(state, 0, sample_seed, events)["hands"][1]
        movable = [c for c in hand if can_play(state["pos"], [c])]
        assert len(movable) == 1, "only the card drawn by the last exchange can move a beaver"
        seen_stuck.update(c for c in hand if c not in movable)
    assert set(seen_stuck) <= set(stuck_unseen)
    expected = 2 * worlds_drawn / len(stuck_unseen)
    assert all(abs(seen_stuck[c] - expected) < 6 * math.sqrt(expected) for c in stuck_unseen)
