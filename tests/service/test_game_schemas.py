"""Every game's schemas in the OpenAPI document against its engine: random
legal matches of every game (engine.REGISTRY), every listed move, every
view (spectator, admin, each seat) and every event validated with jsonschema,
so a drift between an engine and its declaration (from which the schemas are
derived, service/http/openapi_games.py) fails here.  The document is the one the
app builds (openapi/openapi.json is checked against it by the drift test), so
a game registered by a plugin is checked too."""
from __future__ import annotations

import json
import random
from typing import Any

import jsonschema
import jsonschema_rs
import pytest

from engine import REGISTRY
from service.app import create_app
from service.http.openapi_games import prefix, schema_names
from tests.conftest import examples
from tests.playout import play_out, viewers


#: per game: (players, options) of the random matches: each preset of the
#: declaration with the fewest and the most players
def setups(game: Any) -> list[tuple[int, dict[str, Any]]]:
    presets = [dict(p) for p in game.declaration.presets.values()]
    return [(n, p) for p in presets for n in sorted({game.min_players, min(4, game.max_players), game.max_players})]


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema -> JSON Schema: ``nullable`` becomes a null type,
    ``discriminator`` (documentation for code generators) is dropped."""
    if isinstance(node, list):
        return [_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if k not in ("nullable", "discriminator", "example")}
    if node.get("nullable"):
        if "type" in out:
            out["type"] = [out["type"], "null"]
        elif "$ref" in out or "oneOf" in out:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def _document() -> dict[str, Any]:
    from service.http.openapi import document

    return document()


@pytest.fixture(scope="module")
def components() -> dict[str, Any]:
    return _json_schema(_document()["components"]["schemas"])


class _Validator:
    """jsonschema_rs (schemathesis' validator) for speed; the jsonschema
    package names the failing part when an instance does not match."""

    def __init__(self, components: dict[str, Any], name: str):
        self.schema = {"$ref": f"#/components/schemas/{name}", "components": {"schemas": components}}
        self.fast = jsonschema_rs.Draft7Validator(self.schema)

    def is_valid(self, instance: Any) -> bool:
        return self.fast.is_valid(instance)

    def best_error(self, instance: Any) -> Any:
        return jsonschema.exceptions.best_match(jsonschema.Draft7Validator(self.schema).iter_errors(instance))


def _validator(components: dict[str, Any], name: str) -> _Validator:
    return _Validator(components, name)


def _check(validator: _Validator, instance: Any, what: str) -> None:
    if not validator.is_valid(instance):
        error = validator.best_error(instance)
        where = (list(error.absolute_path), error.message) if error is not None else ("?", "jsonschema_rs refused it")
        raise AssertionError(f"{what} does not match its schema at {where[0]}: {where[1]}\n"
                             f"{json.dumps(instance)[:1500]}")


@pytest.mark.parametrize("game", [g.id for g in REGISTRY])
def test_random_matches_match_the_game_schemas(game: str, components: dict[str, Any]):
    engine = REGISTRY.games[game]
    names = schema_names(game)
    move_v, view_v, event_v = (_validator(components, names[k]) for k in ("move", "view", "event"))
    seen_moves: set[str] = set()
    seen_events: set[str] = set()
    for k, (n, options) in enumerate(setups(engine) * examples(2)):
        seed = 1000 + k

        def check(step: Any, n: int = n) -> None:
            state = step.after
            for viewer in viewers(n):
                view = {"match_id": "m", "game": game, "version": 0, "viewer": viewer.to_json(),
                        **engine.view(state, viewer)}
                _check(view_v, view, f"{game} view for {viewer}")
                for event in engine.redact_events(step.events, viewer):
                    seen_events.add(event["type"])
                    _check(event_v, {**event, "version": 1}, f"{game} event {event['type']} for {viewer}")
            for seat in engine.to_act(state):
                for move in engine.legal_moves(state, seat):
                    seen_moves.add(move["type"])
                    _check(move_v, move, f"{game} legal move")

        play_out(engine, n, seed, options, rng=random.Random(seed), check=check)
    listed = {m.type for m in engine.declaration.moves}
    assert seen_moves <= listed
    assert len(seen_moves) >= len(listed) - 1, f"random play listed only {sorted(seen_moves)} of {sorted(listed)}"
    assert seen_events, "no event seen"


def test_catalogue_lists_each_games_moves_and_schemas():
    import fakeredis

    client = create_app(fakeredis.FakeRedis()).test_client()
    for engine in REGISTRY:
        entry = client.get(f"/v1/games/{engine.id}").get_json()
        assert [m["type"] for m in entry["moves"]] == [m.type for m in engine.declaration.moves]
        assert entry["schemas"]["move"] == f"{prefix(engine.id)}Move"
        assert entry["board"] == engine.declaration.board


def test_document_references_the_game_schemas(components: dict[str, Any]):
    doc = _document()
    text = json.dumps(doc["paths"]) + json.dumps(doc["components"]["schemas"]["View"])
    for engine in REGISTRY:
        names = schema_names(engine.id)
        assert {names["move"], names["view"], names["event"]} <= set(components)
        assert f"#/components/schemas/{names['view']}" in text
