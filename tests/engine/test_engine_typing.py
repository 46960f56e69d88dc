"""Typed moves and events: mypy checks their keys, registration checks the
moves' and the events' ``TypedDict`` against the declaration
(docs/adding-a-game.md, "Typed moves and events").
"""
from __future__ import annotations

import dataclasses
import re
import textwrap
from pathlib import Path
from typing import Literal, NotRequired, TypedDict

import pytest
from mypy import api

from engine import REGISTRY, biberbande
from engine.core import CORE_EVENTS, Registry
from engine.declaration import DeclarationError, EventKind, EventType, MoveType
from tests.toy_game.engine import HighCard

ROOT = Path(__file__).resolve().parents[2]
#: mypy's incremental cache for the snippet's imports (the engine), apart from
#: ``make lint``'s (other flags); mypy rechecks whatever changed since
MYPY_CACHE = ROOT / ".mypy_cache" / "test_engine_typing"


def test_every_event_type_is_typed_as_declared() -> None:
    """Each game names every event type it declares by an ``EventKind``
    whose ``TypedDict`` has exactly the declared fields; the core's too."""
    for game in REGISTRY:
        for event in (*game.declaration.events, *CORE_EVENTS):
            assert event.typed is not None, (game.id, event.type)
            assert event.typed_mismatch() is None, (game.id, event.type)


def test_every_move_type_is_typed_as_declared() -> None:
    """Each game, the plugin toy game too, links every move type it declares
    to a ``TypedDict`` with exactly the declared parameters."""
    for game in (*REGISTRY, HighCard()):
        for move in game.declaration.moves:
            assert move.typed is not None, (game.id, move.type)
            assert move.typed_mismatch() is None, (game.id, move.type)


def _with_move(move: MoveType) -> biberbande.Biberbande:
    """Biberbande declaring ``move`` in place of its own of that type."""
    moves = tuple(move if m.type == move.type else m for m in biberbande.DECLARATION.moves)
    declaration = dataclasses.replace(biberbande.DECLARATION, moves=moves)
    return type("Mistyped", (biberbande.Biberbande,), {"id": "mistyped", "declaration": declaration})()


def _declared(kind: str) -> MoveType:
    move = biberbande.DECLARATION.move(kind)
    assert move is not None
    return move


def _retyped(kind: str, typed: type) -> biberbande.Biberbande:
    """Biberbande with its move type ``kind`` linked to ``typed``."""
    return _with_move(dataclasses.replace(_declared(kind), typed=typed))


class UseSwap(TypedDict):
    """Biberbande's ``use_swap`` lacking ``target_slot``, with an undeclared key."""

    type: Literal["use_swap"]
    slot: int
    target_seat: int
    target: int


class UsePeek(TypedDict):
    """Biberbande's ``use_peek`` with its ``slot`` optional."""

    type: Literal["use_peek"]
    slot: NotRequired[int]


class Knock(TypedDict):
    """A ``TypedDict`` of another move type."""

    type: Literal["end_turn"]


def test_registration_refuses_a_typed_move_with_other_parameters() -> None:
    """A move's ``TypedDict`` whose keys differ from the declared parameters
    fails registration, naming the game, the move type and the keys."""
    with pytest.raises(DeclarationError, match=r"game 'mistyped' .*move 'use_swap'.s TypedDict UseSwap has "
                                               r"parameters \['slot', 'target', 'target_seat'\], the declaration "
                                               r"\['slot', 'target_seat', 'target_slot'\] \(missing \['target_slot'\]; "
                                               r"undeclared \['target'\]\)"):
        Registry().register(_retyped("use_swap", UseSwap))


def test_registration_refuses_a_typed_move_with_other_optional_parameters() -> None:
    """A ``NotRequired`` key the declaration does not make optional fails
    registration (postponed annotations hide it from ``__optional_keys__``);
    a declared optional parameter that is ``NotRequired`` passes."""
    with pytest.raises(DeclarationError, match=r"move 'use_peek'.s TypedDict UsePeek makes \['slot'\] optional, "
                                               r"the declaration \[\]"):
        Registry().register(_retyped("use_peek", UsePeek))
    declared = dataclasses.replace(_declared("use_peek"), typed=UsePeek, optional=("slot",))
    assert declared.typed_mismatch() is None


def test_registration_refuses_the_typed_dict_of_another_move_type() -> None:
    with pytest.raises(DeclarationError, match=r"move 'knock'.s TypedDict Knock has no key 'type' of a Literal "
                                               r"naming 'knock'"):
        Registry().register(_retyped("knock", Knock))


def test_an_emitted_event_has_a_plain_type() -> None:
    """The ``type`` an event carries is a plain ``str`` (its JSON is the same)."""
    state, events, _ = REGISTRY.games["biberbande"].create(["a", "b"], 1, {"rounds": 1})
    assert events and all(type(e["type"]) is str for e in events)


def _with_event(event: EventType) -> biberbande.Biberbande:
    """Biberbande declaring ``event`` in place of its own of that type."""
    events = tuple(event if e.type == event.type else e for e in biberbande.DECLARATION.events)
    declaration = dataclasses.replace(biberbande.DECLARATION, events=events)
    return type("Mistyped", (biberbande.Biberbande,), {"id": "mistyped", "declaration": declaration})()


def test_registration_refuses_a_typed_event_with_other_fields() -> None:
    """An event's ``TypedDict`` that lacks a declared field fails registration."""
    class Drew(TypedDict):
        card: str

    game = _with_event(dataclasses.replace(next(e for e in biberbande.DECLARATION.events if e.type == "drew"),
                                           type=EventKind("drew", Drew)))
    with pytest.raises(DeclarationError, match=r"event 'drew'.s TypedDict has fields \['card'\], "
                                               r"the declaration \['card', 'stage'\]"):
        Registry().register(game)


MISTAKES = textwrap.dedent('''
    from engine import biberbande as bb
    from engine.core import Draft


    def listed() -> list[bb.BiberbandeMove]:
        return [{"type": "use_peek", "slots": 1}]


    def handler(draft: Draft[bb.BiberbandeState], seat: int, move: bb.UseSwap) -> None:
        draft.state["display"][move["target_set"]] = ""
        draft.emit(bb.EVENT_USED_PEEK, seat, slott=move["slot"], card="3")
        draft.emit(bb.EVENT_DREW, seat, card="3")
        draft.emit(bb.EVENT_KNOCKED, seat, turn="2")
''')


def test_mypy_refuses_misspelt_moves_and_events(tmp_path: Path) -> None:
    """A listed move with a misspelt key, a handler reading one, and an
    emit with a misspelt, missing or mistyped field are mypy errors."""
    source = tmp_path / "mistakes.py"
    source.write_text(MISTAKES)
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(MYPY_CACHE),
                                "--follow-imports=silent", "--show-error-codes", str(source)])
    assert status == 1, out + err
    lines = sorted(int(n) for n in re.findall(r"mistakes\.py:(\d+): error", out))
    assert lines == [7, 11, 12, 13, 14], out
