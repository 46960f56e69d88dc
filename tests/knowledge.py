"""An independent knowledge model of every game's hidden information, written
from the rules (docs/games: BB-5, BC-5, MLB-5, TB-5), not from the engines.

For one match it says, for each viewer (a seat, or ``None`` for a
spectator), which card values that viewer may read:

* in a view: :meth:`Model.view_cards`, the multiset of card values at the
  places of the admin's view that the rules make public, the viewer's own
  places, and the places the viewer remembers (``recall: "perfect"``,
  tracked here from the admin's events: :meth:`Model.learn`);
* in an event: per declared event type and field, what the viewer may read
  of the admin's copy (:data:`EVENT_RULES`).

The judges compare *values*, not keys: every leaf of a viewer's output that
is a card value (a string of the game's vocabulary) is counted, under
whatever key and at whatever depth it sits, and the count must equal the
model's.  A card under a new key, in a new field or a new wrapper is one
card too many; a field an event type does not declare here fails at once.
A place the model does not name is hidden (fail closed), so a game or a key
the model does not know cannot pass by accident.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from engine.core import PERMUTATION, Game

JSON = Any
#: a viewer: a seat, or None for a spectator
Seat = int | None
#: what a viewer may read of one event field: (admin event, field value, viewer) -> cards
FieldRule = Callable[[dict[str, Any], Any, Seat], Counter[str]]
#: fields every event carries besides its own
ENVELOPE = frozenset({"type", "seat", "version"})


# --------------------------------------------------------------------------
# Walking outputs.
# --------------------------------------------------------------------------
def vocabulary(game: Game, options: Mapping[str, Any]) -> frozenset[str]:
    """The card values of a match (its deck and any token of a permutation
    option, e.g. 13 Beavers' fish and wolves), from the game's public methods."""
    tokens = {t for o in game.options if o.type == PERMUTATION for t in o.items or ()}
    return frozenset(game.canonical_deck(dict(options))) | tokens


def _everything(value: JSON) -> Iterable[Any]:
    """Every value anywhere in ``value`` (any key, any depth), itself included."""
    stack = [value]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def cards(value: JSON, vocab: frozenset[str]) -> Counter[str]:
    """Every card value anywhere in ``value`` (any key, any depth)."""
    if not isinstance(value, (dict, list)):  # a field's value, mostly
        return Counter([value] if isinstance(value, str) and value in vocab else ())
    found: list[str] = []
    stack = [value]
    while stack:  # _everything's walk, inlined: the judges read every viewer's output at every step
        item = stack.pop()
        if isinstance(item, str):
            if item in vocab:
                found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return Counter(found)


def quoted_cards(text: str, vocab: frozenset[str]) -> set[str]:
    """Card values a sentence quotes (``'7'`` or ``"7"``), e.g. in an error detail."""
    return {token for token in re.findall(r"['\"]([^'\"]{1,40})['\"]", text) if token in vocab}


def lists(value: JSON) -> Iterable[list[Any]]:
    """Every list anywhere in ``value``."""
    return (item for item in _everything(value) if isinstance(item, list))


def dicts(value: JSON) -> Iterable[dict[str, Any]]:
    """Every dict anywhere in ``value``."""
    return (item for item in _everything(value) if isinstance(item, dict))


# --------------------------------------------------------------------------
# Field rules (the rules' words: public, the actor's, a game rule).
# --------------------------------------------------------------------------
def public_rule(vocab: frozenset[str]) -> FieldRule:
    return lambda _event, value, _viewer: cards(value, vocab)


def actor_rule(vocab: frozenset[str], owner: str = "seat") -> FieldRule:
    return lambda event, value, viewer: cards(value, vocab) if viewer == event[owner] else Counter()


def _when(vocab: frozenset[str], public: Callable[[dict[str, Any]], bool]) -> FieldRule:
    """Public when ``public(event)``, else the actor's."""
    return lambda event, value, viewer: (cards(value, vocab) if public(event) or viewer == event["seat"]
                                         else Counter())


# --------------------------------------------------------------------------
# The model of one match.
# --------------------------------------------------------------------------
class Model:
    """What each viewer of one match may know.  Subclasses hold one game's rules."""

    game_id = ""

    def __init__(self, n: int, vocab: frozenset[str], options: Mapping[str, Any]):
        self.n, self.vocab = n, vocab
        self.recall = options.get("recall", "perfect") == "perfect"
        self.events = self.event_rules()

    def cards(self, value: JSON) -> Counter[str]:
        return cards(value, self.vocab)

    def event_rules(self) -> dict[str, dict[str, FieldRule]]:
        """Per event type, every field it may carry and what each viewer reads of it."""
        raise NotImplementedError

    def learn(self, event: dict[str, Any]) -> None:
        """Update who knows which hidden card from one admin event (recall)."""

    def view_cards(self, admin: dict[str, Any], viewer: Seat) -> Counter[str]:
        """The card values ``viewer``'s view may hold (the admin's view is the truth)."""
        raise NotImplementedError

    def core_events(self) -> dict[str, dict[str, FieldRule]]:
        """The events every game shares (engine/core.py), all public."""
        public = public_rule(self.vocab)
        return {"resigned": {}, "timed_out": {"reason": public},
                "match_ended": {"result": public, "reason": public, "winners": public}}


class Biberbande(Model):
    """BB-5: displays face down (each seat saw its slots 0 and 3 at the deal,
    BB-3.4), the held card its holder's, the draw pile nobody's; the rest
    public, every display at the end (BB-5.1)."""

    game_id = "biberbande"

    def __init__(self, n: int, vocab: frozenset[str], options: Mapping[str, Any]):
        super().__init__(n, vocab, options)
        self.knows: list[list[set[int]]] = []

    def event_rules(self) -> dict[str, dict[str, FieldRule]]:
        pub, own = public_rule(self.vocab), actor_rule(self.vocab)

        def dealt_displays(event: dict[str, Any], value: Any, viewer: Seat) -> Counter[str]:
            if viewer is None:
                return Counter()
            return self.cards([value[viewer][0], value[viewer][3]])  # BB-3.4, BB-5.7

        return {**self.core_events(),
                "round_started": {"round": pub, "starter": pub}, "dealt": {"displays": dealt_displays, "discard": pub},
                "turn_started": {"turn": pub}, "reshuffled": {"count": pub}, "drew": {"card": own, "stage": pub},
                "took_discard": {"slot": pub, "card": pub, "discarded": pub},
                "swapped_drawn": {"slot": pub, "card": own, "discarded": pub}, "discarded_drawn": {"card": pub},
                "used_swap": {"slot": pub, "target_seat": pub, "target_slot": pub},
                "used_peek": {"slot": pub, "card": own}, "used_draw2": {}, "skipped_draw": {},
                "knocked": {"turn": pub}, "ended_turn": {},
                "round_ended": {"reason": pub, "knocker": pub, "displays": pub},
                "replaced": {"slot": pub, "special": pub, "discarded": pub, "card": pub},
                "round_scored": {"round": pub, "points": pub, "scores": pub}}

    def learn(self, event: dict[str, Any]) -> None:
        """BB-5.5: who has seen which display slot (a swap carries what is
        known); the round's end shows every display and replacement to all
        (BB-8.3 events are public)."""
        kind, seat = event["type"], event["seat"]
        if kind == "dealt":
            self.knows = [[{s}, set(), set(), {s}] for s in range(self.n)]
        elif kind == "took_discard":
            self.knows[seat][event["slot"]] = set(range(self.n))
        elif kind == "swapped_drawn":
            self.knows[seat][event["slot"]] = {seat}
        elif kind == "used_peek":
            self.knows[seat][event["slot"]].add(seat)
        elif kind == "used_swap":
            a, b = self.knows[seat], self.knows[event["target_seat"]]
            a[event["slot"]], b[event["target_slot"]] = b[event["target_slot"]], a[event["slot"]]
        elif kind == "round_ended":
            self.knows = [[set(range(self.n)) for _ in range(4)] for _ in range(self.n)]

    def view_cards(self, admin: dict[str, Any], viewer: Seat) -> Counter[str]:
        board = admin["board"]
        seen = self.cards(board["discard"]) + self.cards(board["history"])
        drawn = board["drawn"]
        if drawn is not None and viewer == drawn["seat"]:
            seen[drawn["card"]] += 1
        for s, player in enumerate(admin["players"]):
            if admin["status"] == "finished":
                seen += self.cards(player["display"])
            if self.recall and viewer is not None:  # BB-5.6: `known`
                seen += self.cards([c for j, c in enumerate(player["display"]) if viewer in self.knows[s][j]])
        return seen


class BiberClan(Model):
    """BC-5: face-down castle cards and the draw pile hidden, a held number
    card its holder's (a removed one everyone's if it lay face up), every
    castle card public at the end (BC-5.7); ``known`` per BC-5.5."""

    game_id = "biberclan"

    def __init__(self, n: int, vocab: frozenset[str], options: Mapping[str, Any]):
        super().__init__(n, vocab, options)
        self.everyone = set(range(n))
        self.knows: dict[tuple[int, str], set[int]] = {}
        self.held: set[int] = set()
        #: the held card is shown to all (a special; a removed card that lay face up, BC-5.3)
        self.held_public = False

    def event_rules(self) -> dict[str, dict[str, FieldRule]]:
        pub, own = public_rule(self.vocab), actor_rule(self.vocab)

        def up(event: dict[str, Any]) -> bool:
            return bool(event["face"] == "up")

        return {**self.core_events(),
                "round_started": {"round": pub, "start_seat": pub},
                "drew": {"kind": pub, "card": _when(self.vocab, lambda e: e["kind"] != "number")},
                "special_void": {"card": pub}, "reshuffled": {"count": pub},
                "placed": {"target": pub, "slot": pub, "face": pub, "card": _when(self.vocab, up)},
                "replaced": {"target": pub, "slot": pub, "face": pub, "card": _when(self.vocab, up),
                             "removed": _when(self.vocab, lambda e: e["removed_face"] == "up"
                                              or e["target"] == e["seat"]),
                             "removed_face": pub},
                "stashed": {"slot": pub, "face": pub, "removed_face": pub,
                            "card": _when(self.vocab, lambda e: up(e) or e["removed_face"] == "up")},
                "cleared": {"target": pub, "slot": pub, "face": pub, "card": pub},
                "flipped": {"target": pub, "slot": pub, "face": pub, "card": pub},
                "swapped": {"target_a": pub, "slot_a": pub, "target_b": pub, "slot_b": pub},
                "peeked": {"target": pub, "slot": pub, "card": own},
                "castle_completed": {"final_turns": pub},
                "round_ended": {k: pub for k in ("round", "reason", "finisher", "castles", "values", "bonus",
                                                 "penalty", "scores", "five_of_a_kind", "totals")}}

    def learn(self, event: dict[str, Any]) -> None:
        """BC-5.5: a seat knows a card it drew, removed by ``replace`` or
        peeked at, and everyone one that lay face up; other moves are public."""
        kind, seat = event["type"], event["seat"]
        if kind == "round_started":
            self.knows, self.held = {}, set()
        elif kind == "drew":
            self.held_public = event["kind"] != "number"
            self.held = set(self.everyone) if self.held_public else {seat}
        elif kind in ("placed", "replaced"):
            place = (event["target"], event["slot"])
            removed = self.knows.get(place, set()) | {seat}
            self.knows[place] = self.held | (self.everyone if event["face"] == "up" else set())
            self.held_public = kind == "replaced" and event["removed_face"] == "up"
            self.held = removed | (self.everyone if self.held_public else set()) if kind == "replaced" else set()
        elif kind == "stashed":
            self.knows[(seat, event["slot"])] = self.held | (self.everyone if event["face"] == "up" else set())
            self.held = set()
        elif kind == "cleared":
            self.knows.pop((event["target"], event["slot"]), None)
        elif kind == "flipped" and event["face"] == "up":
            self.knows[(event["target"], event["slot"])] = set(self.everyone)
        elif kind == "swapped":
            a, b = (event["target_a"], event["slot_a"]), (event["target_b"], event["slot_b"])
            self.knows[a], self.knows[b] = self.knows.get(b, set()), self.knows.get(a, set())
        elif kind == "peeked":
            self.knows.setdefault((event["target"], event["slot"]), set()).add(seat)

    def view_cards(self, admin: dict[str, Any], viewer: Seat) -> Counter[str]:
        board, finished = admin["board"], admin["status"] == "finished"
        seen = self.cards(board["discard"]) + self.cards(board["box"]) + self.cards(board["last_round"])
        recalls = self.recall and viewer is not None and not finished  # BC-5.7: all shown, no `known`
        for k, player in enumerate(admin["players"]):
            for slot, cell in player["castle"].items():
                if cell is None:
                    continue
                public = cell["face"] == "up" or finished
                if public:
                    seen[cell["card"]] += 1
                if recalls and viewer in self.knows.get((k, slot), set()) and cell["face"] == "down":
                    seen[cell["card"]] += 1  # BC-5.5 `known`
        held = board["held"]
        if held is not None:
            if viewer == held["seat"] or self.held_public:
                seen[held["card"]] += 1
            elif recalls and viewer in self.held:
                seen[held["card"]] += 1  # `known` on another seat's held card
        return seen


class MeinLieberBiber(Model):
    """MLB-5: a hand is its seat's, the piles nobody's; discards, played and
    exchanged cards public; no ``known`` (MLB-5.5)."""

    game_id = "mein-lieber-biber"

    def event_rules(self) -> dict[str, dict[str, FieldRule]]:
        pub, own = public_rule(self.vocab), actor_rule(self.vocab)
        return {**self.core_events(),
                "round_started": {"round": pub, "start_seat": pub}, "dealt": {"cards": own},
                "drew": {"pile": pub, "card": own, "reason": pub},
                "played": {"card": pub, "beaver": pub, "from": pub, "to": pub, "joker": pub},
                "tipped": {"load": pub, "returned": pub},
                "rewarded": {"take": pub, "pile": pub, "card": own}, "passed": {},
                "exchanged": {"card": pub, "pile": pub, "drawn": own}, "discarded": {"card": pub},
                "round_ended": {"round": pub, "reason": pub, "by": pub, "sticks": pub, "supply": pub}}

    def view_cards(self, admin: dict[str, Any], viewer: Seat) -> Counter[str]:
        seen = self.cards(admin["board"]["last_play"])
        for s, player in enumerate(admin["players"]):
            seen += self.cards(player["discards"])
            if viewer == s:
                seen += self.cards(player["hand"])
        return seen


class ThirteenBeavers(Model):
    """TB-5: draw order, pond and cave hidden; held fish their holder's but
    stinky; face-up card, discard, used fish and revealed wolves public."""

    game_id = "thirteen-beavers"

    def event_rules(self) -> dict[str, dict[str, FieldRule]]:
        pub = public_rule(self.vocab)
        hidden: FieldRule = lambda _event, _value, _viewer: Counter()  # noqa: E731 - TB-5.2: draw order
        return {**self.core_events(),
                "match_started": {"first_seat": pub, "face_up": pub}, "turn_started": {"turn": pub},
                "turbo_used": {}, "vision_used": {},
                "answered": {k: pub for k in ("move", "dir", "value", "previous", "card", "outcome")},
                "moved": {"from": pub, "to": pub, "cause": pub}, "dam_placed": {"space": pub, "cause": pub},
                "wolf_revealed": {"token": pub}, "cave_opened": {"removed": pub},
                "fish_caught": {"fish": _when(self.vocab, lambda e: e["fish"] == "stinky")},
                "turn_ended": {"reason": pub}, "reshuffled": {"face_up": pub, "draw": hidden}}

    def view_cards(self, admin: dict[str, Any], viewer: Seat) -> Counter[str]:
        board = admin["board"]
        seen = self.cards([board["face_up"], board["discard"], board["used_fish"], board["wolf_out"]])
        for s, player in enumerate(admin["players"]):
            seen += self.cards([f for f in player["fish"] if f == "stinky" or viewer == s])
        return seen


MODELS: dict[str, type[Model]] = {}


def register(model: type[Model]) -> type[Model]:
    """Make ``model`` the knowledge model of the game ``model.game_id``: the
    four games' models below, a plugin game's beside it (``tests/toy_game/knowledge.py``)."""
    MODELS[model.game_id] = model
    return model


for _model in (Biberbande, BiberClan, MeinLieberBiber, ThirteenBeavers):
    register(_model)


def model_for(game: Game, n: int, options: Mapping[str, Any]) -> Model:
    """The knowledge model of a match; a registered game without one fails."""
    assert game.id in MODELS, (f"no knowledge model for game {game.id!r}: add one to tests/knowledge.py "
                               "(or register one beside a plugin game)")
    return MODELS[game.id](n, vocabulary(game, options), options)


# --------------------------------------------------------------------------
# Judges.
# --------------------------------------------------------------------------
def _diff(got: Counter[str], want: Counter[str]) -> str:
    return f"too many: {dict(got - want)}, missing: {dict(want - got)}"


def judge_view(model: Model, view: JSON, admin: dict[str, Any], viewer: Seat, where: str) -> None:
    """Every card value in ``view`` (anywhere) is one the model lets ``viewer`` read, and all of them."""
    got, want = model.cards(view), model.view_cards(admin, viewer)
    assert got == want, (f"{where}: viewer {viewer} reads other cards than the rules allow ({_diff(got, want)})"
                         f"\n{view}\nadmin: {admin}")


def judge_event(model: Model, event: dict[str, Any], admin: dict[str, Any], viewer: Seat, where: str) -> None:
    """One event as ``viewer`` got it, field by field, against the admin's copy."""
    kind = admin["type"]
    assert event["type"] == kind and event.get("version") == admin.get("version"), (where, event, admin)
    assert kind in model.events, f"{where}: event type {kind!r} is not in the knowledge model"
    rules = model.events[kind]
    unknown = set(event) - ENVELOPE - set(rules)
    assert not unknown, f"{where}: {kind} carries fields the knowledge model does not judge: {sorted(unknown)}"
    assert not model.cards(event.get("seat")), (where, event)
    for name, value in event.items():
        if name in ENVELOPE:
            continue
        got, want = model.cards(value), rules[name](admin, admin[name], viewer)
        assert got == want, f"{where}: viewer {viewer} reads {kind}.{name} = {value!r} ({_diff(got, want)})"


def judge_events(model: Model, events: list[dict[str, Any]], admin: list[dict[str, Any]], viewer: Seat,
                 where: str) -> None:
    assert len(events) == len(admin), f"{where}: {len(events)} events vs the admin's {len(admin)}"
    for event, admin_event in zip(events, admin):
        judge_event(model, event, admin_event, viewer, where)


def judge_cardless(model: Model, body: JSON, where: str) -> None:
    """An output that may show no card at all (lobby entry, seat table, a refusal)."""
    found = model.cards(body)
    assert not found, f"{where}: card values {dict(found)} in {body!r}"
