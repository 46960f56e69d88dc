"""Golden digests of every engine's behaviour: the bytes of seeded random matches.

For every game, 2 and 4 seats and two option sets, seeded random matches are
played to their end (``random.Random(seed)`` choosing among the legal moves;
some moves posted with a ``label``, some matches with a resignation or a
clock fallback).  Beside each move the test posts variants the engine must
judge: the move with ``1``/``0`` for ``true``/``false`` (and back), with an
extra key, with a wrong value, of an unknown type, and by a seat not to act.
It hashes (sha256 over orjson bytes, keys in engine order) every state, every
event list, every seat's legal-move list (order matters), every error class
and detail, and for every viewer (each seat, the admin, a spectator) the
view and the redacted events.  One digest per match is compared with
``tests/data/engine_golden.json``.  Beside the digests: a move never changes
the state it is applied to, and ``Game.copy_state`` (the working copy of a
move) shares no list or dict with the state it copies.

The digests pin behaviour, not rules: a speed-up must leave them unchanged.
A deliberate change of behaviour regenerates them (review the diff of the
rules tests first)::

    LODGE_GOLDEN_WRITE=1 .venv/bin/pytest -q -p no:cacheprovider tests/engine/test_engine_golden.py
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from engine import REGISTRY
from engine.core import BY_CLOCK, FINISHED, Game, GameError, Move, State, validate_options
from tests.conftest import examples
from tests.playout import viewers

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "engine_golden.json"
WRITE = os.environ.get("LODGE_GOLDEN_WRITE") == "1"

#: (option set name, seeds) played per game and seat count; ``--fast`` plays
#: the first of each (:func:`tests.conftest.examples`): seed 3 resigns (see
#: :func:`record_match`), seed 0 plays to the end with clock fallbacks
OPTION_SETS = (("default", (3, *(seed for seed in range(20) if seed != 3))), ("other", tuple(range(6))))
SEATS = (2, 4)
MAX_MOVES = 3000


def case_ids() -> list[tuple[str, int, str]]:
    return [(game.id, n, name) for game in REGISTRY for n in SEATS for name, _ in OPTION_SETS]


class Digest:
    """A running sha256 over the orjson bytes of everything recorded."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()

    def add(self, tag: str, value: Any) -> None:
        self.hash.update(orjson.dumps([tag, value]))
        self.hash.update(b"\n")

    def hexdigest(self) -> str:
        return self.hash.hexdigest()


def flip_json_type(value: Any) -> Any:
    """``true``→``1``, ``false``→``0``, ``0``/``1``→``false``/``true``; else unchanged."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return value


def variants(move: Move) -> list[Move]:
    """Posted moves that differ from a listed one in a way the check must see."""
    out: list[Move] = [{**move, "extra": 1}, {"type": "golden_nope"}]
    for key, value in move.items():
        if key == "type":
            continue
        flipped = flip_json_type(value)
        if flipped is not value:
            out.append({**move, key: flipped})
        out.append({**move, key: "zz" if not isinstance(value, str) else value + "zz"})
    return out


def record_play(digest: Digest, game: Game, state: State, seat: int, move: Move,
                by: str | None = None) -> tuple[State, list[dict[str, Any]]] | None:
    """Post ``move``; record the new state and events or the error."""
    try:
        new_state, events = game.play(state, seat, move, by)
    except GameError as error:
        digest.add("error", [type(error).__name__, error.code, error.detail])
        return None
    digest.add("state", new_state)
    digest.add("events", events)
    return new_state, events


def record_views(digest: Digest, game: Game, state: State, events: list[dict[str, Any]], n: int) -> None:
    """Every viewer's view of ``state`` and redaction of ``events``."""
    for viewer in viewers(n):
        digest.add("view", [viewer.to_json(), game.view(state, viewer)])
        digest.add("redacted", game.redact_events(events, viewer))


def record_match(game: Game, n: int, seed: int, options: dict[str, Any]) -> str:
    """Play one seeded match to its end, recording everything; its digest."""
    rng = random.Random(seed)
    digest = Digest()
    state, events, resolved = game.create([f"p{i}" for i in range(n)], seed, options)
    digest.add("created", [state, events, resolved])
    record_views(digest, game, state, events, n)
    step = 0
    while game.status(state) != FINISHED:
        assert step < MAX_MOVES, "match did not end within the move bound"
        step += 1
        to_act = game.to_act(state)
        digest.add("to_act", to_act)
        for s in range(n):
            digest.add("legal", game.legal_moves(state, s))
        if step == 7 and seed % 5 == 3:
            resigner = rng.randrange(n)
            played = record_play(digest, game, state, resigner, {"type": "resign", "label": "bye"})
            assert played is not None
            state, events = played
            record_views(digest, game, state, events, n)
            continue
        seat = rng.choice(to_act)
        idle = [s for s in range(n) if s not in to_act]
        if step % 13 == 0:
            move, by = game.fallback(state, seat), BY_CLOCK
        else:
            move, by = rng.choice(game.legal_moves(state, seat)), None
        if step % 3 == 0:
            for wrong in variants(move):
                record_play(digest, game, state, seat, wrong)
            if idle:
                record_play(digest, game, state, idle[0], move)
        posted = {**move, "label": f"m{step}"} if step % 4 == 0 else move
        before = orjson.dumps(state)
        played = record_play(digest, game, state, seat, posted, by)
        assert played is not None, f"a listed move was refused: {move}"
        assert orjson.dumps(state) == before, "a move changed the state it was applied to"
        state, events = played
        record_views(digest, game, state, events, n)
    record_play(digest, game, state, 0, {"type": "golden_nope"})
    digest.add("moves", step)
    return digest.hexdigest()


def case_digests(game_id: str, n: int, option_set: str) -> dict[str, str]:
    game = REGISTRY.get(game_id)
    assert game is not None
    options = {} if option_set == "default" else dict(REGISTRY.games[game_id].declaration.presets["variant"])
    seeds = dict(OPTION_SETS)[option_set]
    seeds = seeds[:examples(len(seeds))]
    return {f"{game_id}/{n}/{option_set}/{seed}": record_match(game, n, seed, options) for seed in seeds}


def write_golden(digests: dict[str, str]) -> None:
    """Merge ``digests`` into the golden file (locked: xdist workers write too)."""
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(GOLDEN.parent, os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stored = orjson.loads(GOLDEN.read_bytes()) if GOLDEN.exists() else {}
        stored.update(digests)
        GOLDEN.write_bytes(orjson.dumps(dict(sorted(stored.items())), option=orjson.OPT_INDENT_2) + b"\n")
    finally:
        os.close(lock)


@pytest.mark.parametrize(("game_id", "n", "option_set"), case_ids())
def test_engine_matches_golden_digests(game_id: str, n: int, option_set: str) -> None:
    digests = case_digests(game_id, n, option_set)
    if WRITE:
        write_golden(digests)
        return
    assert GOLDEN.exists(), "no golden digests: generate them with LODGE_GOLDEN_WRITE=1"
    stored = orjson.loads(GOLDEN.read_bytes())
    expected = {key: stored.get(key) for key in digests}
    changed = sorted(key for key in digests if digests[key] != expected[key])
    assert not changed, f"engine behaviour changed in {len(changed)} matches, first: {changed[:5]}"



def containers(value: Any) -> list[Any]:
    """Every dict and list inside ``value`` (itself included)."""
    if isinstance(value, dict):
        return [value, *(c for v in value.values() for c in containers(v))]
    if isinstance(value, list):
        return [value, *(c for v in value for c in containers(v))]
    return []


@pytest.mark.parametrize("game_id", REGISTRY.ids())
def test_copy_state_is_equal_and_shares_no_list_or_dict(game_id: str) -> None:
    """The working copy of a move (``Game.copy_state``) has the same bytes
    and shares nothing with the state it copies, at every state of a match
    (one with a stacked ``deck``)."""
    game = REGISTRY.get(game_id)
    assert game is not None
    rng = random.Random(7)
    stacked = {"deck": list(reversed(game.canonical_deck(validate_options(game, 4, {}))))}
    for seed, options in enumerate(({}, {}, stacked)):
        state, _, _ = game.create([f"p{i}" for i in range(4)], seed, options)
        while game.status(state) != FINISHED:
            copy = game.copy_state(state)
            assert orjson.dumps(copy) == orjson.dumps(state)
            originals = {id(c) for c in containers(state)}
            assert not [c for c in containers(copy) if id(c) in originals]
            seat = rng.choice(game.to_act(state))
            state, _ = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
