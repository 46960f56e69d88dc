"""Determinization: the mechanics every game's ``deal_world`` shares.

A *world* for seat k is a complete state that agrees with everything k knows
(its view, the cards it has seen where they really are, every public count
and partial fact) with every other hidden card dealt uniformly at random
among the arrangements that fit (contract, "Worlds and simulation").  The
helpers here keep the two properties every game's sampler must have:

* randomness only from the *sample* seed (:func:`world_rng`), and the world's
  own future randomness (reshuffles, later deals) from a fresh seed drawn
  from it (:func:`fresh_seed`), never the match's: a world reveals neither
  the match seed nor any future shuffle;
* the hidden cards are taken in canonical order (:func:`unaccounted`), never
  in the true order, so two matches in which k knows the same give the same
  worlds for the same sample seed.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from engine.core import Viewer
    from engine.declaration import EventType

T = TypeVar("T", bound=Hashable)
E = TypeVar("E", bound=Mapping[str, Any])

#: a world's own seed lies in the contract's seed range 0 … 2^53−1
WORLD_SEED_BITS = 53


def world_rng(game_id: str, seed: int) -> random.Random:
    """The generator of one sample: seeded by the game and the sample seed only
    (``random.Random`` seeds a string through SHA-512, stable everywhere)."""
    return random.Random(f"{game_id}:world:{seed}")


def fresh_seed(rng: random.Random) -> int:
    """A new match seed for the world, drawn from the sample's generator."""
    return rng.getrandbits(WORLD_SEED_BITS)


def unaccounted(canonical: Sequence[T], accounted: Iterable[T]) -> list[T]:
    """The cards of ``canonical`` left after removing ``accounted`` (a
    multiset), in canonical order.  ``ValueError`` when ``accounted`` holds a
    card more often than the deck does (a corrupt state, never a real one)."""
    left = Counter(canonical)
    left.subtract(accounted)
    if any(count < 0 for count in left.values()):
        raise ValueError("the accounted cards are not part of the deck")
    return [card for card in dict.fromkeys(canonical) for _ in range(left[card])]


def since_last(events: Sequence[E], kinds: Collection[str]) -> Sequence[E]:
    """The events from the last one whose type is in ``kinds`` on (e.g. the
    current round's); ``ValueError`` when there is none."""
    for i in range(len(events) - 1, -1, -1):
        if events[i]["type"] in kinds:
            return events[i:]
    raise ValueError(f"the events hold no {' or '.join(sorted(kinds))} event")


def round_as_seen(events: Sequence[Mapping[str, Any]], declared: Mapping[str, EventType], viewer: Viewer,
                  round_started: str) -> Iterator[dict[str, Any]]:
    """The current round's events (from the last ``round_started`` on) of
    the game's own ``declared`` types, each as ``viewer`` saw it; the core's
    events (``resigned``, ``timed_out``) move no card and are left out."""
    for event in since_last(events, (round_started,)):
        rule = declared.get(event["type"])
        if rule is not None:
            yield rule.redact(event, viewer)


def deal(rng: random.Random, pool: Sequence[T], sizes: Sequence[int]) -> list[list[T]]:
    """``pool`` shuffled and cut into consecutive parts of ``sizes``: every
    arrangement of the pool's cards over the parts is equally likely."""
    if sum(sizes) != len(pool):
        raise ValueError(f"cannot deal {len(pool)} cards into parts of {list(sizes)}")
    cards = list(pool)
    rng.shuffle(cards)
    parts, start = [], 0
    for size in sizes:
        parts.append(cards[start:start + size])
        start += size
    return parts


def deal_confined(rng: random.Random, pool: Sequence[T], open_spots: Sequence[bool],
                  confined: Callable[[T], bool]) -> list[T]:
    """``pool`` dealt over spots, one card a spot, uniformly among the deals
    that put every ``confined`` card (e.g. a special, which never lies in a
    castle) on a spot whose ``open_spots`` entry is true: the confined cards
    take a uniform choice of the open spots, the others the rest."""
    if len(pool) != len(open_spots):
        raise ValueError(f"cannot deal {len(pool)} cards onto {len(open_spots)} spots")
    special = [card for card in pool if confined(card)]
    plain = [card for card in pool if not confined(card)]
    opened = [i for i, ok in enumerate(open_spots) if ok]
    if len(special) > len(opened):
        raise ValueError("more confined cards than spots that may take them")
    chosen = set(rng.sample(opened, len(special)))
    rng.shuffle(special)
    rng.shuffle(plain)
    fill, rest = iter(special), iter(plain)
    return [next(fill) if i in chosen else next(rest) for i in range(len(open_spots))]


def split_count(rng: random.Random, good: int, bad: int, size: int, allowed: Iterable[int]) -> int:
    """How many of ``size`` cards, dealt uniformly from ``good`` + ``bad``
    candidates, are good, conditioned on that number lying in ``allowed``:
    the hypergeometric weights C(good, i)·C(bad, size − i) renormalised.
    Dealing that many good and the rest bad cards uniformly then gives the
    uniform hand among those that satisfy the condition (e.g. MLB-4.0's
    "no card can move a beaver")."""
    counts = [i for i in allowed if 0 <= i <= size]
    weights = [math.comb(good, i) * math.comb(bad, size - i) for i in counts]
    if not any(weights):
        raise ValueError("no hand satisfies the public facts (a corrupt state)")
    return rng.choices(counts, weights=weights)[0]
