"""Conformance of every registered game to the engine contract (engine/core.py),
in the spirit of OpenSpiel's random-simulation test.

Parametrised from ``engine.REGISTRY`` only: a game added to the registry is
checked here without touching this file.  For every game, every player count
and a few hypothesis-drawn seeds and options (drawn from the game's own
catalogue), a match is played to its end with random legal moves, and at
every step:

* determinism: the same seed and moves give byte-identical snapshots and
  events (orjson), and applying the move to a JSON round trip of the state
  gives the same bytes;
* purity: ``play`` leaves the state it was given unchanged;
* snapshot round trip: ``orjson.loads(orjson.dumps(state))`` gives the same
  views and legal moves; snapshots stay ≤ 4096 bytes;
* every non-admin view is the admin view with hidden values nulled (same
  keys and shape; a value is the admin's or null), except the per-game
  entries of the two small tables below;
* every emitted event type is declared in ``game.events``; each viewer's copy
  of an event has the admin's keys and differs only by nulls; redaction never
  mutates the event;
* the independent knowledge model (tests/knowledge.py) judges every viewer's
  view and events by value, wherever a card sits (so a key the admin has too
  cannot carry another seat's hidden card);
* the seats in ``to_act`` have legal moves, the others none; every listed
  move (a sample per step, sent as JSON with a label) is accepted by ``play``;
  once finished nobody acts and ``play`` refuses;
* random play finishes within :data:`MOVE_BOUND` moves.

Under ``--fast`` each case plays one example, with the game's ``short``
preset over the drawn options (:func:`tests.conftest.match_options`).

The catalogue entry of each game is checked for well-formed options; every
option that fixes hidden order is secret, and hidden from non-admins.
"""
from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from engine import REGISTRY
from engine.core import (
    ADMIN_VIEWER,
    BOOL,
    DECK,
    DECKS,
    FINISHED,
    HIDDEN_OPTION,
    INT,
    OPTION_TYPES,
    PERMUTATION,
    SEED_MAX,
    STRING,
    Game,
    MatchFinished,
    Viewer,
    same_move,
    seeded_shuffle,
    validate_options,
)
from tests.conftest import examples, match_options
from tests.knowledge import Model, dicts, judge_events, judge_view, model_for
from tests.playout import viewers

GAMES = list(REGISTRY)
CASES = [(game, n) for game in GAMES for n in range(game.min_players, game.max_players + 1)]
#: no shrinking: each example is a whole match, and shrinking one costs minutes;
#: a failure names the options it drew and the seed (rerun with that seed)
CONFORMANCE = settings(max_examples=examples(3), deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
SNAPSHOT_LIMIT = 4096
MOVE_BOUND = 50_000
#: listed moves per step played besides the chosen one (all of them would be slow)
EXTRA_MOVES_PER_STEP = 2
#: small int options are drawn from minimum…minimum + INT_SPAN (or left to the default)
INT_SPAN = 10

#: Keys a seat's view may carry beside a hidden value: the value that seat
#: remembers having seen (``recall: "perfect"``).  They are the only values a
#: non-admin view may hold that the admin view does not; each maps to the key
#: of the hidden value it stands for in the same object.  A recall value must
#: sit where that value is hidden to the viewer (a finished match shows every
#: card; what a seat recalls stays) and equal the admin's.
RECALL_KEYS: dict[str, Mapping[str, str]] = {g.id: g.declaration.view_recall for g in REGISTRY}

#: Keys of the admin view that other viewers do not get at all (rather than
#: nulled), by game (each game's declaration).
ADMIN_ONLY_KEYS: dict[str, frozenset[str]] = {g.id: frozenset(g.declaration.view_admin_only) for g in REGISTRY}


# --------------------------------------------------------------------------
# Views and events: the admin's with hidden values nulled.
# --------------------------------------------------------------------------
def same_json(a: Any, b: Any) -> bool:
    return orjson.dumps(a) == orjson.dumps(b)


@dataclass(frozen=True)
class ViewOf:
    """Whose view of which game is compared (the tables above apply to views
    only; an event must keep exactly the admin's keys)."""

    game_id: str
    viewer: Viewer
    recall: str
    finished: bool


def assert_nulled(value: Any, admin: Any, path: str, view_of: ViewOf | None = None) -> None:
    """``value`` is ``admin`` with some values replaced by null: same keys
    (but for the tables above, in a view), same list lengths, every leaf the
    admin's (same JSON type) or null.  A part equal to the admin's byte for
    byte passes at once (the admin's own recall entries are checked apart:
    :func:`assert_admin_recalls_nothing`)."""
    if value is None:
        return
    if isinstance(admin, dict) and isinstance(value, dict):
        if same_json(value, admin):
            return
        recall_keys = RECALL_KEYS.get(view_of.game_id, {}) if view_of else {}
        admin_only = ADMIN_ONLY_KEYS.get(view_of.game_id, frozenset()) if view_of else frozenset()
        extra = set(value) - set(admin) - set(recall_keys)
        assert not extra, f"{path}: keys the admin does not have: {sorted(extra)}"
        missing = set(admin) - set(value) - admin_only
        assert not missing, f"{path}: keys of the admin's missing: {sorted(missing)}"
        for key, item in value.items():
            if view_of and key in recall_keys:
                assert_recall(value, admin, key, recall_keys[key], f"{path}.{key}", view_of)
            else:
                assert_nulled(item, admin[key], f"{path}.{key}", view_of)
    elif isinstance(admin, list) and isinstance(value, list):
        assert len(value) == len(admin), f"{path}: length {len(value)}, the admin's {len(admin)}"
        if same_json(value, admin):
            return
        for i, (item, admin_item) in enumerate(zip(value, admin)):
            assert_nulled(item, admin_item, f"{path}[{i}]", view_of)
    else:
        assert (type(value) is type(admin) and value == admin) or same_json(value, admin), \
            f"{path}: the viewer sees {value!r} where the admin sees {admin!r}"


def assert_admin_recalls_nothing(game_id: str, admin: Any) -> None:
    """The admin's view holds no recall value (a recall key it has is null)."""
    recall_keys = RECALL_KEYS.get(game_id, {})
    if not recall_keys:
        return
    for item in dicts(admin):
        for key in recall_keys:
            if key in item:
                recalled = item[key] if isinstance(item[key], list) else [item[key]]
                assert all(v is None for v in recalled), f"the admin recalls {item[key]!r}"


def assert_recall(value: dict[str, Any], admin: dict[str, Any], key: str, hidden_key: str, path: str,
                  view_of: ViewOf) -> None:
    """A recall entry (``known``) is held by a seat only, stands beside a card
    hidden to it (until the finished match shows every card), and is exactly
    the admin's value of that card."""
    remembered, shown, actual = value[key], value.get(hidden_key), admin.get(hidden_key)
    if isinstance(remembered, list):
        assert isinstance(shown, list) and isinstance(actual, list) and len(remembered) == len(shown), path
    else:
        remembered, shown, actual = [remembered], [shown], [actual]
    if key in admin:
        admin_recall = admin[key] if isinstance(admin[key], list) else [admin[key]]
        assert all(v is None for v in admin_recall), f"{path}: the admin recalls {admin[key]!r}"
    viewer = view_of.viewer
    for i, card in enumerate(remembered):
        if card is None:
            continue
        assert viewer.seat is not None and not viewer.is_admin, f"{path}: {viewer} recalls {card!r}"
        assert view_of.recall != "none", f"{path}: recall 'none' but the view recalls {card!r}"
        assert same_json(card, actual[i]), f"{path}[{i}]: recalls {card!r}, the card is {actual[i]!r}"
        assert shown[i] is None or view_of.finished, f"{path}[{i}]: recalls {card!r} beside a card it sees"


@dataclass(frozen=True)
class Outputs:
    """What the viewers get of one step (the state's views, the step's
    events), made once and judged by every check below."""

    admin: dict[str, Any]
    #: per non-admin viewer: its view and its copy of the events
    seen: list[tuple[Viewer, dict[str, Any], list[dict[str, Any]]]]


def outputs(game: Game, state: dict[str, Any], events: list[dict[str, Any]], n: int) -> Outputs:
    return Outputs(game.view(state, ADMIN_VIEWER),
                   [(viewer, game.view(state, viewer), game.redact_events(events, viewer))
                    for viewer in viewers(n) if not viewer.is_admin])


def check_views(game: Game, out: Outputs, recall: str, finished: bool) -> None:
    orjson.dumps(out.admin)
    assert_admin_recalls_nothing(game.id, out.admin)
    for viewer, view, _ in out.seen:
        assert_nulled(view, out.admin, f"{viewer.role}{viewer.seat}.view", ViewOf(game.id, viewer, recall, finished))


def check_events(game: Game, events: list[dict[str, Any]], out: Outputs) -> None:
    for event in events:
        assert event["type"] in game.events, f"{game.id} emitted undeclared {event['type']!r}"
        assert same_json(game.redact_event(event, ADMIN_VIEWER), event), "the admin sees every event whole"
    for viewer, _, seen_events in out.seen:
        assert len(seen_events) == len(events), f"{viewer}: {len(seen_events)} events of {len(events)}"
        for seen, event in zip(seen_events, events):
            assert seen is not event
            assert_nulled(seen, event, f"{viewer.role}{viewer.seat}.{event['type']}")


def check_knowledge(game: Game, model: Model, events: list[dict[str, Any]], out: Outputs) -> None:
    """What each non-admin viewer reads of the step's events and of the view,
    judged by the knowledge model after it learnt the events."""
    for event in events:
        model.learn(event)
    for viewer, view, seen_events in out.seen:
        where = f"{game.id} {viewer.role}{viewer.seat}"
        judge_events(model, seen_events, events, viewer.seat, where)
        judge_view(model, view, out.admin, viewer.seat, where)


# --------------------------------------------------------------------------
# Moves.
# --------------------------------------------------------------------------
def check_to_act(game: Game, state: dict[str, Any], n: int) -> None:
    to_act = game.to_act(state)
    if game.status(state) == FINISHED:
        assert to_act == [], f"finished, yet to act: {to_act}"
        assert all(game.legal_moves(state, s) == [] for s in range(n)), "a seat has moves after the end"
        with pytest.raises(MatchFinished):
            game.play(state, 0, {"type": next(iter(game.handlers))})
        result = game.result(state)
        assert result is not None and result["winners"] == result["ranking"][0], result
        assert sorted(s for group in result["ranking"] for s in group) == list(range(n)), result
        return
    assert to_act and set(to_act) <= set(range(n)), f"active with to_act {to_act}"
    for seat in range(n):
        legal = game.legal_moves(state, seat)
        if seat not in to_act:
            assert legal == [], f"seat {seat} is not to act but has moves {legal[:3]}"
            continue
        assert legal, f"seat {seat} is to act without a legal move"
        assert same_json(orjson.loads(orjson.dumps(legal)), legal)
        for i, move in enumerate(legal):
            assert move["type"] in game.handlers, f"listed move type {move['type']!r} has no handler"
            assert not any(same_move(move, other) for other in legal[i + 1:]), f"{move} is listed twice"


def check_listed_moves_play(game: Game, state: dict[str, Any], rng: random.Random) -> None:
    """Listed moves, posted as JSON with a label, are accepted."""
    for seat in game.to_act(state):
        legal = game.legal_moves(state, seat)
        for move in rng.sample(legal, min(EXTRA_MOVES_PER_STEP, len(legal))):
            posted = {**orjson.loads(orjson.dumps(move)), "label": "from the list"}
            _, events = game.play(state, seat, posted)
            assert all(e["type"] in game.events for e in events)


# --------------------------------------------------------------------------
# Options drawn from the catalogue.
# --------------------------------------------------------------------------
def draw_options(game: Game, n: int, data: st.DataObject) -> dict[str, Any]:
    """Options as a client could send them: each left out or drawn from its
    declared type and limits (small ints; decks as seeded permutations)."""
    options: dict[str, Any] = {}
    for opt in game.options:
        if opt.type in (DECK, DECKS, PERMUTATION) or not data.draw(st.booleans(), label=f"set {opt.name}"):
            continue
        if opt.type == INT:
            low = opt.minimum if opt.minimum is not None else 0
            high = opt.maximum_for(n)
            high = low + INT_SPAN if high is None else min(high, low + INT_SPAN)
            options[opt.name] = data.draw(st.integers(low, high), label=opt.name)
        elif opt.type == BOOL:
            options[opt.name] = data.draw(st.booleans(), label=opt.name)
        elif opt.type == STRING:
            options[opt.name] = data.draw(st.sampled_from(opt.choices or (opt.default,)), label=opt.name)
    resolved = validate_options(game, n, options)
    for opt in game.options:
        if opt.type not in (DECK, PERMUTATION) or not data.draw(st.booleans(), label=f"set {opt.name}"):
            continue
        items = game.canonical_deck(resolved) if opt.type == DECK else list(opt.items or ())
        options[opt.name] = seeded_shuffle(items, f"conformance:{opt.name}:{data.draw(st.integers(0, 99))}")
    return options


# --------------------------------------------------------------------------
# The tests.
# --------------------------------------------------------------------------
@pytest.mark.parametrize("game,n", CASES, ids=[f"{g.id}-{n}p" for g, n in CASES])
@CONFORMANCE
@given(seed=st.integers(0, SEED_MAX), data=st.data())
def test_random_play_conforms(game: Game, n: int, seed: int, data: st.DataObject):
    options = match_options(game.id, draw_options(game, n, data))
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(n)]
    state, events, resolved = game.create(names, seed, options)
    recall = resolved.get("recall", "perfect")
    model = model_for(game, n, resolved)
    assert same_json(game.create(names, seed, resolved)[:2], (state, events)), "creation is not deterministic"
    log: list[tuple[bytes, bytes]] = []
    moves: list[tuple[int, dict[str, Any]]] = []
    for _ in range(MOVE_BOUND + 1):
        snapshot = orjson.dumps(state)
        log.append((snapshot, orjson.dumps(events)))
        assert len(snapshot) <= SNAPSHOT_LIMIT, f"snapshot of {len(snapshot)} bytes"
        loaded = orjson.loads(snapshot)
        out = outputs(game, state, events, n)
        check_events(game, events, out)
        assert orjson.dumps(events) == log[-1][1], "redacting an event changed it"
        check_views(game, out, recall, game.status(state) == FINISHED)
        check_knowledge(game, model, events, out)
        assert same_json(game.view(loaded, ADMIN_VIEWER), out.admin), "round trip changes the admin view"
        for viewer, view, _ in out.seen:
            assert same_json(game.view(loaded, viewer), view), "round trip changes a view"
        assert all(same_json(game.legal_moves(loaded, s), game.legal_moves(state, s)) for s in range(n))
        check_to_act(game, state, n)
        if game.status(state) == FINISHED:
            break
        check_listed_moves_play(game, state, rng)
        seat = rng.choice(game.to_act(state))
        move = rng.choice(game.legal_moves(state, seat))
        new_state, events = game.play(state, seat, move)
        assert orjson.dumps(state) == snapshot, "play changed the state it was given"
        assert same_json(game.play(loaded, seat, move), (new_state, events)), "play is not deterministic"
        moves.append((seat, move))
        state = new_state
    else:
        raise AssertionError(f"{game.id} did not finish within {MOVE_BOUND} random moves")

    # the same seed and moves replay to the same bytes, step by step
    state, events, _ = game.create(names, seed, resolved)
    replayed = [(orjson.dumps(state), orjson.dumps(events))]
    for seat, move in moves:
        state, events = game.play(state, seat, move)
        replayed.append((orjson.dumps(state), orjson.dumps(events)))
    assert replayed == log


def test_registry_ids_are_the_games_ids():
    assert GAMES, "the registry is empty"
    assert REGISTRY.ids() == [game.id for game in GAMES]
    assert all(REGISTRY.get(game.id) is game for game in GAMES)
    assert len(set(REGISTRY.ids())) == len(GAMES)


_JSON_TYPES = {INT: int, BOOL: bool, STRING: str}


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_catalogue_entry_is_well_formed(game: Game):
    """api.md "Games": id, title, player limits, every option with its type,
    default and limits; the defaults create a match."""
    entry = game.catalogue()
    assert same_json(orjson.loads(orjson.dumps(entry)), entry)
    assert entry["id"] == game.id and isinstance(entry["title"], str) and entry["title"]
    assert isinstance(entry["summary"], str)
    assert 1 <= entry["min_players"] <= entry["max_players"]
    names = [o["name"] for o in entry["options"]]
    assert len(names) == len(set(names)), f"options named twice: {names}"
    assert "deck" in names, "every game accepts options.deck (api.md Create)"
    if "rounds" in names:
        assert "decks" in names, "a game with rounds accepts options.decks"
    for opt, declared in zip(entry["options"], game.options):
        where = f"{game.id}.{opt['name']}"
        assert opt["type"] in OPTION_TYPES, where
        assert isinstance(opt["description"], str) and opt["description"], where
        default = opt["default"]
        if default is None:
            assert callable(declared.default) == bool(opt.get("default_doc")), \
                f"{where}: a default that depends on the player count is described in default_doc"
        else:
            want = _JSON_TYPES.get(opt["type"])
            assert want is not None and type(default) is want, f"{where}: default {default!r}"
            if "minimum" in opt:
                assert default >= opt["minimum"], where
            if opt.get("maximum") is not None:
                assert default <= opt["maximum"], where
            if "choices" in opt:
                assert default in opt["choices"], where
        for n in range(game.min_players, game.max_players + 1):
            value = declared.default_for(n)
            assert value is None or type(value) is _JSON_TYPES[opt["type"]], f"{where} for {n} players"
    for n in range(game.min_players, game.max_players + 1):
        _, _, resolved = game.create([f"p{i}" for i in range(n)], 1, {})
        assert list(resolved) == names


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_order_options_are_secret(game: Game):
    """Issue 23: an option that fixes hidden order (a deck, a permutation) is
    secret, and ``public_options`` (all a non-admin reads before the end)
    shows a given one as ``"hidden"``, one left out as null, the others as given."""
    for opt in game.options:
        assert opt.secret == (opt.type in (DECK, DECKS, PERMUTATION)), f"{game.id}.{opt.name}"
    n = game.min_players
    resolved = validate_options(game, n, {})
    shown = game.public_options(resolved)
    assert shown == resolved, "nothing given, nothing hidden"
    for opt in game.options:
        if opt.type in (DECK, PERMUTATION):
            items = game.canonical_deck(resolved) if opt.type == DECK else list(opt.items or ())
            given_options = {**resolved, opt.name: items}
            assert game.public_options(given_options) == {**resolved, opt.name: HIDDEN_OPTION}, opt.name
