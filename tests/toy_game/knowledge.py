"""What the generic tests need to know of Beaver High Card, written from its
hidden-information rules (HC-5 in ``tests/data/toy-high-card.md``), not from
the engine: its knowledge model for the leak tests (:mod:`tests.knowledge`)
and its worlds spec (:mod:`tests.world_specs`), registered beside the game as
a plugin game's would be."""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from engine.core import State
from tests import knowledge, world_specs
from tests.knowledge import Seat
from tests.world_specs import Position, Slot

GAME_ID = "toy-high-card"
#: HC-1.1: sixteen distinct cards
DECK = [str(v) for v in range(1, 17)]


@knowledge.register
class HighCardKnowledge(knowledge.Model):
    """HC-5: a hand and a face-down card are their seat's (HC-5.1, HC-5.2),
    the undealt cards nobody's (HC-5.3), the revealed tricks public (HC-5.4)."""

    game_id = GAME_ID

    def event_rules(self) -> dict[str, dict[str, knowledge.FieldRule]]:
        pub, own = knowledge.public_rule(self.vocab), knowledge.actor_rule(self.vocab)
        return {**self.core_events(),
                "round_started": {"round": pub, "starter": pub}, "dealt": {"cards": own},
                "played": {"trick": pub, "card": own},
                "revealed": {"trick": pub, "cards": pub, "winner": pub},
                "round_scored": {"round": pub, "tricks": pub, "scores": pub}}

    def view_cards(self, admin: dict[str, Any], viewer: Seat) -> Counter[str]:
        seen = self.cards(admin["board"]["tricks"])
        if viewer is not None:
            player = admin["players"][viewer]
            seen += self.cards([player["hand"], player["table"]])
        return seen


# --- worlds (HC-5) ----------------------------------------------------------------
def _cards(world: State) -> list[str]:
    table = [card for card in world["table"] if card is not None]
    return [*(c for hand in world["hands"] for c in hand), *table, *world["draw"],
            *(c for trick in world["tricks"] for c in trick)]


def _check(world: State, position: Position, seat: int) -> None:
    """HC-1.1: every card once; HC-3.3: hands ascending; the counts as in the match."""
    assert sorted(_cards(world), key=int) == DECK, "HC-1.1: every card exactly once"
    assert all(hand == sorted(hand, key=int) for hand in world["hands"]), "HC-3.3"
    real = position.state
    assert [len(h) for h in world["hands"]] == [len(h) for h in real["hands"]]
    assert [c is None for c in world["table"]] == [c is None for c in real["table"]]
    assert world["decks"] == [], "a world carries no stacked decks"


def _in_hand(seat: int, card: str) -> Callable[[State], bool]:
    return lambda world: card in world["hands"][seat]


def _at(key: str, index: int, card: str) -> Callable[[State], bool]:
    return lambda world: bool(world[key][index] == card)


def _slots(state: State, seat: int) -> list[Slot]:
    """Every card ``seat`` has not seen is uniform over the unseen places:
    in another hand with that hand's share, on a face-down spot or at a
    draw pile position with 1/m (m unseen cards)."""
    others = [s for s in range(len(state["hands"])) if s != seat]
    faces = [s for s in others if state["table"][s] is not None]
    unseen = sum(len(state["hands"][s]) for s in others) + len(faces) + len(state["draw"])
    slots: list[Slot] = [(_in_hand(s, c), len(state["hands"][s]) / unseen) for s in others for c in state["hands"][s]]
    slots += [(_at("table", s, state["table"][s]), 1 / unseen) for s in faces]
    return slots + [(_at("draw", i, c), 1 / unseen) for i, c in enumerate(state["draw"])]


def _variants(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The last two cards of round 1's deck exchanged: both stay undealt (HC-3.2)."""
    deck = list(DECK)
    random.Random(n).shuffle(deck)
    return {"deck": deck}, {"deck": world_specs.swap_last(deck)}


world_specs.register(world_specs.WorldSpec(GAME_ID, _check, _slots, lambda position, seat: True, _variants,
                                           playouts=({}, {"hand": 4, "rounds": 1}), reshuffles=False))
