"""The engine core's shared mechanics, on every registered game where it
applies: option validation, move matching, ranking, seeded shuffles, and
declared event visibility (a toy game, then every real game and the API:
an undeclared event is an error, never shown)."""
from __future__ import annotations

import random
from typing import Any, ClassVar, cast

import orjson
import pytest

from engine import REGISTRY
from engine.core import (
    ACTIVE,
    ADMIN_VIEWER,
    FINISHED,
    SPECTATOR_VIEWER,
    Draft,
    Game,
    Handler,
    InvalidOptions,
    Registry,
    UndeclaredEvent,
    Viewer,
    make_result,
    ranking,
    same_move,
    seat_viewer,
    seeded_shuffle,
)
from engine.declaration import (
    INT,
    STR,
    Declaration,
    DeclarationError,
    EventType,
    MoveType,
    Private,
    array,
    nullable,
    private,
    public,
    redacted,
)
from tests.http_helpers import Api

GAMES = list(REGISTRY)


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_null_is_the_default_only_for_options_whose_default_is_null(game):
    """BB-2.2 / BC-2.2 / MLB-2.0 / TB-2.1: a wrong type is 422; ``null`` stands
    for "default" only where the default is null (deck, decks, fish, wolves)."""
    names = ["a", "b"]
    for option in game.options:
        if option.default is None:
            game.create(names, 1, {option.name: None})
        else:
            with pytest.raises(InvalidOptions, match=option.name):
                game.create(names, 1, {option.name: None})


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_resolved_options_replay(game):
    """A record carries the resolved options; creating from them again gives
    the identical state (api.md: record replay)."""
    state, _, resolved = game.create(["a", "b", "c"][:max(2, game.min_players)], 99, {})
    again, _, resolved_again = game.create(["a", "b", "c"][:max(2, game.min_players)], 99, resolved)
    assert again == state and resolved_again == resolved


def test_same_move_compares_json_types_and_ignores_labels():
    """BB-4.11: same keys and values, integers as JSON integers; `label` ignored."""
    listed = {"type": "take_discard", "slot": 1}
    assert same_move({"type": "take_discard", "slot": 1, "label": "take it"}, listed)
    assert not same_move({"type": "take_discard", "slot": True}, listed)
    assert not same_move({"type": "take_discard", "slot": 1.0}, listed)
    assert not same_move({"type": "take_discard", "slot": 1, "extra": 0}, listed)
    assert not same_move({"type": "draw", "slot": 1}, listed)


def test_ranking_groups_ties_and_puts_a_first_group_ahead():
    """BB-6.5 (lowest wins, shared places) and BC-6.7 (five of a kind first)."""
    assert ranking([10, 4, 10, 7], lowest_wins=True) == [[1], [3], [0, 2]]
    assert ranking([10, 4, 10, 7], lowest_wins=False) == [[0, 2], [3], [1]]
    assert ranking([10, 4, 10, 7], lowest_wins=False, first_group=[1]) == [[1], [0, 2], [3]]
    assert make_result([3, 3], lowest_wins=True)["winners"] == [0, 1]


def test_seeded_shuffle_is_random_Random_of_the_key():
    """BB-3.2: the shuffle contract is ``random.Random(key).shuffle``, the same
    on every machine; the input is not changed."""
    cards = [str(i) for i in range(20)]
    expected = list(cards)
    random.Random("biberbande:42:1:0").shuffle(expected)
    assert seeded_shuffle(cards, "biberbande:42:1:0") == expected
    assert cards == [str(i) for i in range(20)]


# --------------------------------------------------------------------------
# Declared event visibility (engine/core.py "Events"): a toy game.
# --------------------------------------------------------------------------
def _mask_hand(event: Any, viewer: Viewer) -> list[None]:
    """The toy's redaction of ``counted.cards``: the count is public, the cards are not."""
    MASK_CALLS.append((dict(event), viewer))
    return [None] * len(event["cards"])


MASK_CALLS: list[tuple[dict[str, Any], Viewer]] = []
REACHED: list[str] = []


def emit(draft: Draft[Any], kind: str, seat: int | None, **fields: Any) -> None:
    """``draft.emit`` by a plain name: these small games test the runtime
    checks of emitted events (some emit wrong fields on purpose), which the
    typed :class:`engine.declaration.EventKind` would refuse to compile."""
    cast(Any, draft).emit(kind, seat, **fields)


def _take(draft: Draft, seat: int, move: dict[str, Any]) -> None:
    """Declared events only: seat takes the top card; the game ends."""
    card = draft.state["pile"].pop()
    draft.state["hands"][seat].append(card)
    emit(draft, "took", seat, card=card, cards=list(draft.state["hands"][seat]))
    emit(draft, "counted", seat, cards=list(draft.state["hands"][seat]))
    draft.state["status"] = FINISHED
    emit(draft, "ended", None, winner=seat)


def _leak(draft: Draft, seat: int, move: dict[str, Any]) -> None:
    """Emits an undeclared event showing the seat's hand."""
    draft.state["status"] = FINISHED
    emit(draft, "hand_shown", seat, cards=list(draft.state["hands"][seat]))
    REACHED.append("after hand_shown")


def _sneak(draft: Draft, seat: int, move: dict[str, Any]) -> None:
    """Appends an undeclared event without ``emit``."""
    draft.state["status"] = FINISHED
    draft.events.append({"type": "hand_shown", "seat": seat, "cards": list(draft.state["hands"][seat])})


class Toy(Game):
    """Two players, one move each way: declared and undeclared events."""

    id = "toy"
    title = "Toy"
    min_players = 2
    max_players = 2
    options = ()
    declaration = Declaration(
        moves=(MoveType("take"), MoveType("leak"), MoveType("sneak")),
        events=(EventType("started", {"names": public(array(STR))}),
                EventType("took", {"card": private(nullable(STR)), "cards": private(array(nullable(STR)))}),
                EventType("counted", {"cards": redacted(array(STR), _mask_hand)}),
                EventType("ended", {"winner": public(INT)}),
                EventType("handed", {"to": public(INT), "cards": private(array(nullable(STR)), owner="to")})),
        player={"hand": array(STR)}, board_view={"pile": INT}, presets={}, bot="", board="", docs="")
    handlers = {"take": _take, "leak": _leak, "sneak": _sneak}

    def canonical_deck(self, options: dict[str, Any]) -> list[str]:
        return []

    def setup(self, draft: Draft, names: list[str], seed: int, options: dict[str, Any]) -> None:
        draft.state.update({"status": ACTIVE, "phase": "play", "round": 1, "rounds": 1, "scores": [0, 0],
                           "names": names, "hands": [["a1", "a2"], ["b1"]], "pile": ["c1", "c2"]})
        emit(draft, "started", None, names=list(names))

    def to_act(self, state: dict[str, Any]) -> list[int]:
        return [0] if state["status"] == ACTIVE else []

    def seat_moves(self, state: dict[str, Any], seat: int) -> list[dict[str, Any]]:
        return [{"type": kind} for kind in self.handlers]

    def players_view(self, state: dict[str, Any], viewer: Viewer) -> list[dict[str, Any]]:
        return [{"seat": s, "hand": hand if viewer.sees_private(s) else [None] * len(hand)}
                for s, hand in enumerate(state["hands"])]

    def board_view(self, state: dict[str, Any], viewer: Viewer) -> dict[str, Any]:
        return {"pile": len(state["pile"])}


class SneakySetup(Toy):
    """Sets up with an undeclared event appended without ``emit``."""

    def setup(self, draft: Draft, names: list[str], seed: int, options: dict[str, Any]) -> None:
        super().setup(draft, names, seed, options)
        draft.events.append({"type": "hand_shown", "seat": 0, "cards": draft.state["hands"][0]})


TOY = Toy()
TOY_VIEWERS = [ADMIN_VIEWER, SPECTATOR_VIEWER, seat_viewer(0), seat_viewer(1)]


def _toy_state() -> dict[str, Any]:
    state, events, _ = TOY.create(["ana", "bo"], 1, {})
    assert events == [{"type": "started", "seat": None, "names": ["ana", "bo"]}]
    return state


def test_declared_events_pass_through_play():
    """Declared events come back from ``play`` as emitted, in order."""
    state, events = TOY.play(_toy_state(), 0, {"type": "take"})
    assert [e["type"] for e in events] == ["took", "counted", "ended"]
    assert events[0] == {"type": "took", "seat": 0, "card": "c2", "cards": ["a1", "a2", "c2"]}
    assert state["status"] == FINISHED


def test_emit_refuses_an_undeclared_event_when_it_is_emitted():
    """``Draft.emit`` raises :class:`UndeclaredEvent` at once: the event is not
    recorded and the handler does not run on past it."""
    draft = Draft(TOY, {"hands": [["a1"], []]})
    emit(draft, "started", None, names=[])
    with pytest.raises(UndeclaredEvent, match="hand_shown"):
        emit(draft, "hand_shown", 0, cards=["a1"])
    assert [e["type"] for e in draft.events] == ["started"]

    REACHED.clear()
    state = _toy_state()
    before = orjson.dumps(state)
    with pytest.raises(UndeclaredEvent, match="hand_shown"):
        TOY.play(state, 0, {"type": "leak"})
    assert REACHED == [], "the handler ran on past the undeclared emit"
    assert orjson.dumps(state) == before


def test_apply_play_and_create_refuse_an_event_appended_without_emit():
    """An undeclared event that bypassed ``emit`` is caught before the move
    (or the match) is handed back: ``apply``, ``play`` and ``create`` raise."""
    state = _toy_state()
    before = orjson.dumps(state)
    with pytest.raises(UndeclaredEvent, match="hand_shown"):
        TOY.apply(state, 0, {"type": "sneak"})
    with pytest.raises(UndeclaredEvent, match="hand_shown"):
        TOY.play(state, 0, {"type": "sneak"})
    assert orjson.dumps(state) == before
    with pytest.raises(UndeclaredEvent, match="hand_shown"):
        SneakySetup().create(["ana", "bo"], 1, {})
    with pytest.raises(UndeclaredEvent, match="hand_shown"):
        TOY.checked([{"type": "started", "seat": None, "names": []}, {"type": "hand_shown", "seat": 0}])


@pytest.mark.parametrize("viewer", TOY_VIEWERS, ids=lambda v: f"{v.role}{v.seat}")
def test_redact_event_refuses_an_undeclared_type_for_every_viewer(viewer):
    """Nobody, not even the admin, gets an event whose visibility is undeclared."""
    with pytest.raises(UndeclaredEvent, match="hand_shown"):
        TOY.redact_event({"type": "hand_shown", "seat": 0, "cards": ["a1"]}, viewer)
    with pytest.raises(UndeclaredEvent):
        TOY.redact_events([{"type": "started", "seat": None, "names": []}, {"type": "hand_shown", "seat": 1}], viewer)


def test_private_fields_only_for_the_owner_seat_and_the_admin():
    """``Private``: the owner seat and the admin see the fields; other seats
    and spectators get them hidden (a list becomes that many nulls); the
    other fields stay public."""
    took = {"type": "took", "seat": 0, "card": "c2", "cards": ["a1", "a2", "c2"]}
    hidden = {"type": "took", "seat": 0, "card": None, "cards": [None, None, None]}
    assert TOY.redact_event(took, ADMIN_VIEWER) == took
    assert TOY.redact_event(took, seat_viewer(0)) == took
    assert TOY.redact_event(took, seat_viewer(1)) == hidden
    assert TOY.redact_event(took, SPECTATOR_VIEWER) == hidden

    handed = {"type": "handed", "seat": 0, "to": 1, "cards": ["a1"]}
    assert TOY.redact_event(handed, seat_viewer(1)) == handed
    assert TOY.redact_event(handed, seat_viewer(0)) == {**handed, "cards": [None]}
    assert TOY.redact_event(handed, SPECTATOR_VIEWER) == {**handed, "cards": [None]}
    assert Private().value({"type": "x", "seat": None, "card": "c"}, "card", seat_viewer(0)) is None


def test_public_copies_and_redacted_calls_its_function():
    """A public event comes back as an equal copy; a redacted field is what
    its function makes of the event for that viewer (the admin sees all)."""
    started = {"type": "started", "seat": None, "names": ["ana", "bo"]}
    for viewer in TOY_VIEWERS:
        seen = TOY.redact_event(started, viewer)
        assert seen == started and seen is not started
    copy = TOY.redact_event(started, SPECTATOR_VIEWER)
    copy["extra"] = 1
    assert "extra" not in started

    MASK_CALLS.clear()
    counted = {"type": "counted", "seat": 0, "cards": ["a1", "c2"]}
    assert TOY.redact_event(counted, seat_viewer(1)) == {**counted, "cards": [None, None]}
    assert TOY.redact_event(counted, SPECTATOR_VIEWER) == {**counted, "cards": [None, None]}
    assert MASK_CALLS == [(counted, seat_viewer(1)), (counted, SPECTATOR_VIEWER)]
    assert TOY.redact_event(counted, ADMIN_VIEWER) == counted


@pytest.mark.parametrize("kind", ["started", "took", "counted", "ended", "handed"])
def test_no_redaction_mutates_its_event(kind: str):
    fields: dict[str, dict[str, Any]] = {
        "started": {"names": ["a"]}, "took": {"card": "c2", "cards": ["a1", "c2"]},
        "counted": {"cards": ["a1"]}, "ended": {"winner": 0}, "handed": {"to": 1, "cards": ["a1"]}}
    event = {"type": kind, "seat": 0, **fields[kind]}
    before = orjson.dumps(event)
    for viewer in TOY_VIEWERS:
        seen = TOY.redact_event(event, viewer)
        assert seen is not event
        seen["seat"] = 9
        assert orjson.dumps(event) == before


# --------------------------------------------------------------------------
# Every field declared: an event with a field its declaration does not list
# (or without a declared one) fails at emission and is never shown.
# --------------------------------------------------------------------------
def test_an_undeclared_field_raises_at_emission():
    """``took`` declares ``card`` private; carrying ``secret_next`` as well
    raises at ``emit``, so the event is never recorded."""
    draft = Draft(TOY, {})
    with pytest.raises(UndeclaredEvent, match="secret_next"):
        emit(draft, "took", 0, card="c2", cards=["c2"], secret_next="c1")
    with pytest.raises(UndeclaredEvent, match="cards"):
        emit(draft, "took", 0, card="c2")
    assert draft.events == []


@pytest.mark.parametrize("viewer", TOY_VIEWERS, ids=lambda v: f"{v.role}{v.seat}")
def test_an_event_with_an_undeclared_field_is_shown_to_nobody(viewer: Viewer):
    """Past ``emit`` (appended, or read back from a store), an event with an
    undeclared field is refused by ``checked`` and by redaction, for every
    viewer: an undeclared field can never be shown."""
    event = {"type": "took", "seat": 0, "card": "c2", "cards": ["c2"], "secret_next": "c1"}
    with pytest.raises(UndeclaredEvent, match="secret_next"):
        TOY.redact_event(event, viewer)
    with pytest.raises(UndeclaredEvent, match="secret_next"):
        TOY.checked([event])


def test_a_private_field_must_admit_its_hidden_value():
    """A private field is ``null`` (or a list of ``null``) for other viewers:
    a schema that does not admit it is refused when the type is declared."""
    with pytest.raises(TypeError, match="card"):
        EventType("took", {"card": private(STR)})
    with pytest.raises(TypeError, match="owner"):
        EventType("handed", {"cards": private(array(nullable(STR)), owner="to")})


def _smuggle(event: Any, viewer: Viewer) -> Any:
    """A redaction that tries to add a field: it can only return one value."""
    return {"cards": None, "secret_next": "c1"}


class Smuggler(Toy):
    declaration = Declaration(
        moves=Toy.declaration.moves,
        events=(EventType("counted", {"cards": redacted(array(STR), _smuggle)}),),
        player={}, board_view={}, presets={}, bot="", board="", docs="")


@pytest.mark.parametrize("viewer", TOY_VIEWERS, ids=lambda v: f"{v.role}{v.seat}")
def test_a_redaction_never_returns_an_undeclared_field(viewer: Viewer):
    """A redaction function returns the value of its field, never an event:
    whatever it returns, the redacted event has exactly the declared fields."""
    seen = Smuggler().redact_event({"type": "counted", "seat": 0, "cards": ["a1"]}, viewer)
    assert set(seen) == {"type", "seat", "cards"}


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_every_redacted_event_has_exactly_its_declared_fields(game: Game):
    """Every registered game, a random match: each event as each viewer gets
    it has the declared fields of its type and no other."""
    from tests.playout import play_out, viewers

    def check(step: Any) -> None:
        for event in step.events:
            declared = game.events[event["type"]]
            for viewer in viewers(2):
                seen = set(game.redact_event(event, viewer))
                assert declared.required <= seen <= declared.names, (game.id, event["type"], viewer)

    play_out(game, 2, 5, dict(game.declaration.presets["short"]), rng=random.Random(5), check=check)


# --------------------------------------------------------------------------
# One registry: a game lacking a piece of its declaration is refused when it
# is registered (at import), never skipped.
# --------------------------------------------------------------------------
PIECES = ("moves", "events", "player", "board_view", "presets", "bot", "board", "docs")


@pytest.mark.parametrize("piece", PIECES)
@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_a_game_lacking_a_declaration_piece_is_refused(game: Game, piece: str):
    import dataclasses

    empty = {"moves": (), "events": ()}.get(piece, {} if piece in ("player", "board_view", "presets") else "")
    # Any: the field to empty is chosen at run time, so its type is too
    lacking_piece: dict[str, Any] = {piece: empty}
    lacking = type(f"Lacking{piece}", (type(game),), {
        "id": f"lacking-{piece}", "declaration": dataclasses.replace(game.declaration, **lacking_piece)})
    with pytest.raises(DeclarationError, match=piece if piece != "presets" else "preset"):
        Registry().register(lacking())
    Registry().register(type("Complete", (type(game),), {"id": "complete"})())


def test_a_game_without_a_declaration_or_registered_twice_is_refused():
    class Bare(Game):
        id = "bare"
        handlers: ClassVar[dict[str, Handler]] = {}

    with pytest.raises(DeclarationError, match="no declaration"):
        Registry().register(Bare())
    registry = Registry()
    registry.register(GAMES[0])
    with pytest.raises(DeclarationError, match="twice"):
        registry.register(GAMES[0])


def test_a_broken_extra_game_fails_the_import(tmp_path: Any):
    """``LODGE_EXTRA_GAMES`` naming a game without a declaration: importing
    ``engine`` fails (the service would not start)."""
    import os
    import subprocess
    import sys

    (tmp_path / "broken_game.py").write_text(
        "from engine.biberbande import Biberbande\n"
        "class Broken(Biberbande):\n    id = 'broken'\n    handlers = {}\n")
    env = {**os.environ, "LODGE_EXTRA_GAMES": "broken_game:Broken",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    done = subprocess.run([sys.executable, "-c", "import engine"], env=env, capture_output=True, text=True)
    assert done.returncode != 0 and "DeclarationError" in done.stderr and "broken" in done.stderr


# --------------------------------------------------------------------------
# Declared events on the real games: an engine that starts leaking a hand
# fails the move instead of showing it.
# --------------------------------------------------------------------------
def _leaky_handlers(game: Game, how: str) -> dict[str, Handler]:
    """Every handler of ``game``, wrapped to also show the mover's whole
    player entry (hand, display, castle as the admin sees it) in an
    undeclared event ``hand_shown``: emitted, or appended past ``emit``."""

    def wrap(handler: Handler) -> Handler:
        def leaky(draft: Draft, seat: int, move: dict[str, Any]) -> None:
            handler(draft, seat, move)
            secret = game.view(draft.state, ADMIN_VIEWER)["players"][seat]
            if how == "emit":
                emit(draft, "hand_shown", seat, player=secret)
            else:
                draft.events.append({"type": "hand_shown", "seat": seat, "player": secret})
        return leaky

    return {kind: wrap(handler) for kind, handler in game.handlers.items()}


@pytest.mark.parametrize("how", ["emit", "append"])
@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_real_game_refuses_an_undeclared_event(monkeypatch: pytest.MonkeyPatch, game: Game, how: str):
    """Every registered game: a handler that starts emitting an undeclared
    event makes the move raise :class:`UndeclaredEvent`; the state is unchanged."""
    assert "hand_shown" not in game.events
    state, _, _ = game.create(["a", "b"], 3, {})
    seat = game.to_act(state)[0]
    move = game.legal_moves(state, seat)[0]
    monkeypatch.setattr(type(game), "handlers", _leaky_handlers(game, how))
    before = orjson.dumps(state)
    with pytest.raises(UndeclaredEvent, match="hand_shown"):
        game.play(state, seat, move)
    assert orjson.dumps(state) == before
    with pytest.raises(UndeclaredEvent):
        game.redact_event({"type": "hand_shown", "seat": seat, "player": {}}, ADMIN_VIEWER)


def test_leaking_move_over_http_is_500_and_writes_nothing(monkeypatch: pytest.MonkeyPatch, api: Api):
    """Mein Lieber Biber with a handler that shows the mover's hand in an
    undeclared event: the move answers 500 internal_error, the version stays,
    and the hand appears in no response to anyone else (nor in the error)."""
    game = REGISTRY.get("mein-lieber-biber")
    assert game is not None
    monkeypatch.setattr(type(game), "handlers", _leaky_handlers(game, "emit"))
    m = api.create(["ana", "bo"], game=game.id, seed=5)
    hand = m.admin_view()["players"][0]["hand"]
    assert len(hand) == 3 and all(hand)
    move = m.legal(0)[0]
    setup_events = m.events(m.admin)
    r = api.move(m.id, m.token(0), move, 0)
    assert r.status == 500 and r.json["code"] == "internal_error", r
    assert b"hand_shown" not in r.body and not any(card.encode() in r.body for card in hand), r
    assert m.admin_view()["version"] == 0
    assert m.events(m.admin) == setup_events
    assert api.record(m.id, m.admin).json["moves"] == []
    others = [api.view(m.id), api.view(m.id, m.token(1)), api.events(m.id), api.events(m.id, m.token(1)),
              api.legal(m.id, m.token(1)), api.move(m.id, m.token(1), move, 0)]
    for resp in others:
        assert b"hand_shown" not in resp.body, resp
        assert not any(f'"{card}"'.encode() in resp.body for card in hand), resp
    monkeypatch.undo()
    assert api.move(m.id, m.token(0), move, 0).status == 200, "the unpatched engine plays the same move"


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.id)
def test_secret_options_are_exactly_those_fixing_hidden_order(game: Game):
    """An option that fixes hidden order (a deck, the decks, a permutation of
    hidden tokens such as 13 Beavers' fish and wolves) is declared secret;
    no other option is."""
    from engine.core import DECK, DECKS, PERMUTATION

    assert {o.name for o in game.options if o.secret} == \
        {o.name for o in game.options if o.type in (DECK, DECKS, PERMUTATION)}
    assert any(o.secret for o in game.options)


def test_the_service_refuses_a_game_without_its_board_module():
    """A declared ``/play`` board module that does not exist stops the app
    from starting (``service.http.openapi_games.check_boards``)."""
    import dataclasses

    from service.http.openapi_games import check_boards

    game = GAMES[0]
    boardless = type("Boardless", (type(game),), {
        "id": "boardless", "declaration": dataclasses.replace(game.declaration, board="nowhere.js")})
    check_boards(GAMES)
    with pytest.raises(RuntimeError, match="nowhere.js"):
        check_boards([boardless()])
