"""Every game's schemas in openapi/openapi.json against its engine: random
legal matches of every game (engine.REGISTRY), every listed move, every
view (spectator, admin, each seat) and every event validated with jsonschema,
so a drift between an engine and service/game_schemas fails here."""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import pytest

from engine import REGISTRY
from service.app import create_app
from service.game_schemas import move_list, prefix, schema_names
from tests.playout import play_out, viewers

DOCUMENT = Path(__file__).resolve().parent.parent / "openapi" / "openapi.json"
#: per game: (players, options) of the random matches
SETUPS: dict[str, list[tuple[int, dict[str, Any]]]] = {
    "biberbande": [(2, {"rounds": 2}), (3, {"recall": "none", "rounds": 1}), (6, {"rounds": 1, "turn_limit": 3}),
                   (4, {"rounds": 1})],
    "biberclan": [(2, {"rounds": 2}), (3, {"with_biberbande": True, "rounds": 1}),
                  (6, {"rounds": 1, "max_turns": 12}), (4, {"rounds": 1, "recall": "none"})],
    "mein-lieber-biber": [(2, {"rounds": 2}), (3, {"rounds": 1, "tip_threshold": 500}), (5, {"rounds": 1})],
    "thirteen-beavers": [(2, {}), (3, {"board": "short"}), (6, {"board": "short"}), (4, {"max_turns": 40})],
}


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


@pytest.fixture(scope="module")
def components() -> dict[str, Any]:
    return _json_schema(json.loads(DOCUMENT.read_text())["components"]["schemas"])


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
    engine = REGISTRY.get(game)
    names = schema_names(game)
    move_v, view_v, event_v = (_validator(components, names[k]) for k in ("move", "view", "event"))
    seen_moves: set[str] = set()
    seen_events: set[str] = set()
    for k, (n, options) in enumerate(SETUPS[game] * 4):
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
    listed = {m["type"] for m in move_list(game)}
    assert seen_moves <= listed
    assert len(seen_moves) >= len(listed) - 1, f"random play listed only {sorted(seen_moves)} of {sorted(listed)}"
    assert seen_events, "no event seen"


def test_catalogue_lists_each_games_moves_and_schemas():
    import fakeredis

    client = create_app(fakeredis.FakeRedis()).test_client()
    for engine in REGISTRY:
        entry = client.get(f"/v1/games/{engine.id}").get_json()
        assert [m["type"] for m in entry["moves"]] == [m["type"] for m in move_list(engine.id)]
        assert entry["schemas"]["move"] == f"{prefix(engine.id)}Move"


def test_document_references_the_game_schemas(components: dict[str, Any]):
    doc = json.loads(DOCUMENT.read_text())
    text = json.dumps(doc["paths"]) + json.dumps(doc["components"]["schemas"]["View"])
    for engine in REGISTRY:
        names = schema_names(engine.id)
        assert {names["move"], names["view"], names["event"]} <= set(components)
        assert f"#/components/schemas/{names['view']}" in text
