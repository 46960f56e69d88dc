"""Per-game OpenAPI schemas: move objects, the view's ``players``/``board``
and event types, one module per game (data only), and the code that turns
them into components of the document.

Each game module defines ``MOVES`` (move type -> its fields), ``EVENTS``
(event type -> its fields besides ``type``, ``seat`` and ``version``),
``PLAYER`` and ``BOARD`` (the view's per-seat and board fields) and
``OPTIONAL`` (field names that only some viewers get, e.g. ``known``).
Values are OpenAPI 3.0 schema objects built with the helpers below; a hidden
card is ``null``, so fields that can hide a value are ``nullable``.
``tests/test_game_schemas.py`` plays random matches of every game and
validates every listed move, every view and every event against these, so a
drift between an engine and its schema fails.
"""
from __future__ import annotations

import importlib
from typing import Any

from engine.core import TIMED_OUT_REASONS

Schema = dict[str, Any]

INT: Schema = {"type": "integer"}
SEAT: Schema = {"type": "integer", "minimum": 0, "description": "a seat, 0-based"}
STR: Schema = {"type": "string"}
BOOL: Schema = {"type": "boolean"}


def enum(*values: Any) -> Schema:
    return {"type": "integer" if all(isinstance(v, int) for v in values) else "string", "enum": list(values)}


def nullable(schema: Schema, why: str = "") -> Schema:
    out = {**schema, "nullable": True}
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    if why:
        out["description"] = why
    return out


def array(items: Schema, **extra: Any) -> Schema:
    return {"type": "array", "items": items, **extra}


def obj(fields: dict[str, Schema], optional: tuple[str, ...] = (), **extra: Any) -> Schema:
    """A closed object: every field required except ``optional``."""
    required = [name for name in fields if name not in optional]
    out: Schema = {"type": "object", "properties": dict(fields), "additionalProperties": False, **extra}
    if required:
        out["required"] = required
    return out


def described(schema: Schema, text: str) -> Schema:
    return {**schema, "description": text}


HIDDEN = "null when the viewer may not see it"

#: module name of each game id
MODULES = {"biberbande": "biberbande", "biberclan": "biberclan", "mein-lieber-biber": "mein_lieber_biber",
           "thirteen-beavers": "thirteen_beavers"}


def module(game_id: str) -> Any:
    return importlib.import_module(f"service.game_schemas.{MODULES[game_id]}")


def prefix(game_id: str) -> str:
    """``mein-lieber-biber`` -> ``MeinLieberBiber``."""
    return "".join(part.capitalize() for part in game_id.split("-"))


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def move_list(game_id: str) -> list[dict[str, Any]]:
    """The catalogue's ``moves``: each move type with its field names."""
    return [{"type": kind, "fields": list(fields)} for kind, fields in module(game_id).MOVES.items()]


def schema_names(game_id: str) -> dict[str, str]:
    """The catalogue's ``schemas``: the component names of the game."""
    p = prefix(game_id)
    return {"move": f"{p}Move", "view": f"{p}View", "event": f"{p}Event"}


def _union(p: str, kind: str, variants: dict[str, Schema], prop: str) -> dict[str, Schema]:
    """``{p}{kind}`` as ``oneOf`` its variants with a discriminator on ``prop``."""
    names = {value: f"{p}{kind}{_camel(value)}" for value in variants}
    out = {name: variants[value] for value, name in names.items()}
    out[f"{p}{kind}"] = {"oneOf": [ref(n) for n in names.values()],
                         "discriminator": {"propertyName": prop,
                                           "mapping": {v: ref(n)["$ref"] for v, n in names.items()}}}
    return out


def _shared_events(own_end: Schema | None) -> dict[str, Schema]:
    """The events every game emits the same way (``engine.core.CORE_EVENTS``):
    ``resigned``, ``timed_out``, and ``match_ended`` when the last opponent
    resigned (besides the game's own ``match_ended``)."""
    def seat_event(kind: str, text: str) -> Schema:
        return obj({"type": enum(kind), "seat": SEAT, "version": INT}, description=text)
    resigned_end = obj({"type": enum("match_ended"), "seat": nullable(SEAT, "null"), "reason": enum("resigned"),
                        "result": ref("Result"), "version": INT},
                       description="1.1: the match ended because all seats but one resigned")
    timed_out = obj({"type": enum("timed_out"), "seat": SEAT, "version": INT,
                     "reason": described(enum(*TIMED_OUT_REASONS), "1.2, webhook seats only: no answer in time, "
                                         "another status or a body that is not a move, or an illegal move")},
                    optional=("reason",),
                    description="1.1: the seat's deadline passed (1.2: or its webhook failed); "
                                "its fallback move follows")
    return {"resigned": seat_event("resigned", "1.1: the seat resigned"),
            "timed_out": timed_out,
            "match_ended": _either(own_end, resigned_end) if own_end else resigned_end}


def _either(own: Schema, other: Schema) -> Schema:
    """One closed object taking either event shape: every field of both
    (a field both have in different shapes takes either: enums joined),
    required only where both require it (a discriminator mapping must name
    an object schema, not a ``oneOf``)."""
    properties = dict(other["properties"])
    for name, schema in own["properties"].items():
        theirs = properties.get(name)
        if theirs is None or theirs == schema:
            properties[name] = schema
        elif "enum" in schema and "enum" in theirs:
            extra = [value for value in theirs["enum"] if value not in schema["enum"]]
            properties[name] = {**schema, "enum": [*schema["enum"], *extra]}
        else:
            properties[name] = {"anyOf": [schema, theirs]}
    required = [name for name in own.get("required", []) if name in other.get("required", [])]
    out: Schema = {**own, "properties": properties,
                   "description": " / ".join(filter(None, (own.get("description"), other.get("description"))))}
    out.pop("required", None)
    if required:
        out["required"] = required
    return out


def components(game_id: str, view: Schema) -> dict[str, Schema]:
    """Every component of one game; ``view`` is the generic view schema
    (its ``players`` and ``board`` are replaced by the game's)."""
    mod = module(game_id)
    p = prefix(game_id)
    moves = {kind: obj({"type": enum(kind), **fields, "label": described(STR, "ignored when posted back")},
                       optional=("label", *getattr(mod, "OPTIONAL_MOVE_FIELDS", {}).get(kind, ())))
             for kind, fields in mod.MOVES.items()}
    events = {kind: obj({"type": enum(kind), "seat": nullable(SEAT, "the acting seat; null for the table"),
                         **fields, "version": described(INT, "the version the move that caused it produced")},
                        description=mod.EVENT_DOCS.get(kind, ""))
              for kind, fields in mod.EVENTS.items()}
    moves["resign"] = obj({"type": enum("resign"), "label": described(STR, "ignored")}, optional=("label",),
                          description="1.1: any seat, any time while active; never in legal-moves lists")
    events.update(_shared_events(events.get("match_ended")))
    out: dict[str, Schema] = {**_union(p, "Move", moves, "type"), **_union(p, "Event", events, "type")}
    out[f"{p}Player"] = obj({"seat": SEAT, "name": STR, **mod.PLAYER}, optional=mod.OPTIONAL)
    out[f"{p}Board"] = obj(mod.BOARD, optional=mod.OPTIONAL)
    props = dict(view["properties"])
    props["game"] = enum(game_id)
    props["players"] = array(ref(f"{p}Player"), description="per seat: seat, name and public game fields")
    props["board"] = ref(f"{p}Board")
    props["result"] = {"oneOf": [ref("Result")], "nullable": True, "description": "null until the match is finished"}
    out[f"{p}View"] = {**view, "properties": props, "description": f"The match as the caller may see it: {game_id}"}
    return out


def catalogue_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A catalogue entry with the game's ``moves`` and ``schemas`` added."""
    if entry["id"] not in MODULES:
        return entry
    return {**entry, "moves": move_list(entry["id"]), "schemas": schema_names(entry["id"])}


def document(spec: Any, game_ids: list[str]) -> None:
    """Add every game's components to ``spec`` (an apispec ``APISpec``) and
    point the generic schemas at them: ``View`` becomes ``oneOf`` the games'
    views (discriminator ``game``), moves and events ``anyOf`` the games'."""
    game_ids = [g for g in game_ids if g in MODULES]
    schemas = spec.components.schemas
    view = schemas["View"]
    for game_id in game_ids:
        for name, component in components(game_id, view).items():
            spec.components.schema(name, component=component)
    names = {g: schema_names(g) for g in game_ids}
    views = {g: ref(n["view"]) for g, n in names.items()}
    schemas["View"] = {"oneOf": list(views.values()), "description": view.get("description", ""),
                       "discriminator": {"propertyName": "game",
                                         "mapping": {g: r["$ref"] for g, r in views.items()}}}
    for holder in ("CreatedMatch", "MoveResult"):  # a plain $ref: code generators keep the union whole
        schemas[holder]["properties"]["state"] = ref("View")
    any_move = {"anyOf": [ref(n["move"]) for n in names.values()]}
    request_move = schemas["MoveRequest"]["properties"]["move"]
    schemas["MoveRequest"]["properties"]["move"] = {
        **any_move, "description": request_move.get("description", "") + "; per game: the `…Move` schemas"}
    schemas["LegalMoves"]["properties"]["moves"]["items"] = any_move
    schemas["LoggedMove"]["properties"]["move"] = any_move
    schemas["Event"] = {"anyOf": [ref(n["event"]) for n in names.values()],
                        "description": "an event as the caller may see it; per game: the `…Event` schemas"}
