"""The games' OpenAPI components and catalogue entries, derived from their
declarations (:mod:`engine.declaration`): nothing here is written per game.

Per game ``p`` (``mein-lieber-biber`` → ``MeinLieberBiber``): ``{p}Move``
(``oneOf`` one closed object per move type, discriminator ``type``),
``{p}Event`` (likewise per event type, ``resign``'s core events included),
``{p}Player``, ``{p}Board`` and ``{p}View``.  :func:`document` adds them to
the document and points the generic schemas at them; :func:`catalogue_entry`
adds the game's ``moves``, ``schemas`` and ``board`` to its catalogue entry.
"""
from __future__ import annotations

from typing import Any

from engine.core import MOVE_RESIGN, Game
from engine.declaration import INT, SEAT, STR, EventType, MoveType, Schema, array, described, enum, obj, ref
from service.http.play import WEB

#: where the ``/play`` board modules live (a game's ``declaration.board``)
BOARDS = WEB / "js" / "boards"

RESIGN = MoveType(MOVE_RESIGN, doc="1.1: any seat, any time while active; never in legal-moves lists")


def prefix(game_id: str) -> str:
    """``mein-lieber-biber`` -> ``MeinLieberBiber``."""
    return "".join(part.capitalize() for part in game_id.split("-"))


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def schema_names(game_id: str) -> dict[str, str]:
    """The catalogue's ``schemas``: the component names of the game."""
    p = prefix(game_id)
    return {"move": f"{p}Move", "view": f"{p}View", "event": f"{p}Event"}


def catalogue_entry(game: Game) -> dict[str, Any]:
    """A catalogue entry with the game's ``moves`` (each type with its field
    names), ``schemas`` and ``board`` (its ``/play`` board module) added."""
    moves = [{"type": m.type, "fields": list(m.params)} for m in game.declaration.moves]
    return {**game.catalogue(), "moves": moves, "schemas": schema_names(game.id), "board": game.declaration.board}


def check_boards(games: list[Game]) -> None:
    """Every game's board module exists (the service refuses to start without)."""
    for game in games:
        if not (BOARDS / game.declaration.board).is_file():
            raise RuntimeError(f"game {game.id!r}: no /play board module {game.declaration.board!r} in {BOARDS}")


#: a move's number (api.md "Moves as numbers"): on every listed move; posted
#: beside the fields, it must name the same move
MOVE_ID = described(INT, "the move's id, 0 … the game's `actions` − 1: on every listed move; posted with the "
                         "other fields, it must name the same move")
#: a move posted by its number alone (any game)
MOVE_BY_ID: Schema = obj({"id": described(INT, "the id of one of the seat's listed legal moves"),
                          "label": described(STR, "ignored")}, optional=("label",),
                         description="a move posted by its id alone: the listed legal move with that id")


def move_schema(move: MoveType) -> Schema:
    if move.type == MOVE_RESIGN:
        out = obj({"type": enum(move.type), "label": described(STR, "ignored")}, optional=("label",))
        return {**out, "description": move.doc}
    return obj({"type": enum(move.type), **move.params, "label": described(STR, "ignored when posted back"),
                "id": MOVE_ID}, optional=("label", "id", *move.optional))


def event_schema(event: EventType) -> Schema:
    fields = {name: f.schema for name, f in event.fields.items()}
    return obj({"type": enum(event.type), "seat": {**SEAT, "nullable": True,
                                                    "description": "the acting seat; null for the table"},
                **fields, "version": described(INT, "the version the move that caused it produced")},
               optional=event.optional, description=event.doc)


def _union(p: str, kind: str, variants: dict[str, Schema], prop: str) -> dict[str, Schema]:
    """``{p}{kind}`` as ``oneOf`` its variants with a discriminator on ``prop``."""
    names = {value: f"{p}{kind}{_camel(value)}" for value in variants}
    out = {name: variants[value] for value, name in names.items()}
    out[f"{p}{kind}"] = {"oneOf": [ref(n) for n in names.values()],
                         "discriminator": {"propertyName": prop,
                                           "mapping": {v: ref(n)["$ref"] for v, n in names.items()}}}
    return out


def components(game: Game, view: Schema) -> dict[str, Schema]:
    """Every component of one game; ``view`` is the generic view schema
    (its ``players`` and ``board`` are replaced by the game's)."""
    declaration = game.declaration
    p = prefix(game.id)
    moves = {m.type: move_schema(m) for m in (*declaration.moves, RESIGN)}
    events = {kind: event_schema(event) for kind, event in game.events.items()}
    out: dict[str, Schema] = {**_union(p, "Move", moves, "type"), **_union(p, "Event", events, "type")}
    out[f"{p}Player"] = obj({"seat": SEAT, "name": STR, **declaration.player}, optional=declaration.view_optional)
    out[f"{p}Board"] = obj(declaration.board_view, optional=declaration.view_optional)
    props = dict(view["properties"])
    props["game"] = enum(game.id)
    props["players"] = array(ref(f"{p}Player"), description="per seat: seat, name and public game fields")
    props["board"] = ref(f"{p}Board")
    props["result"] = {"oneOf": [ref("Result")], "nullable": True, "description": "null until the match is finished"}
    out[f"{p}View"] = {**view, "properties": props, "description": f"The match as the caller may see it: {game.id}"}
    return out


def document(spec: Any, games: list[Game]) -> None:
    """Add every game's components to ``spec`` (an apispec ``APISpec``) and
    point the generic schemas at them: ``View`` becomes ``oneOf`` the games'
    views (discriminator ``game``), moves and events ``anyOf`` the games'."""
    schemas = spec.components.schemas
    view = schemas["View"]
    for game in games:
        for name, component in components(game, view).items():
            spec.components.schema(name, component=component)
    names = {g.id: schema_names(g.id) for g in games}
    views = {g: ref(n["view"]) for g, n in names.items()}
    schemas["View"] = {"oneOf": list(views.values()), "description": view.get("description", ""),
                       "discriminator": {"propertyName": "game",
                                         "mapping": {g: r["$ref"] for g, r in views.items()}}}
    for holder in ("CreatedMatch", "MoveResult"):  # a plain $ref: code generators keep the union whole
        schemas[holder]["properties"]["state"] = ref("View")
    any_move = {"anyOf": [ref(n["move"]) for n in names.values()]}
    spec.components.schema("MoveById", component=MOVE_BY_ID)
    request_move = schemas["MoveRequest"]["properties"]["move"]
    schemas["MoveRequest"]["properties"]["move"] = {
        "anyOf": [*any_move["anyOf"], ref("MoveById")],
        "description": request_move.get("description", "") + "; per game: the `…Move` schemas"}
    schemas["LegalMoves"]["properties"]["moves"]["items"] = {
        "allOf": [any_move, {"type": "object", "properties": {"id": MOVE_ID}, "required": ["id"]}]}
    schemas["LoggedMove"]["properties"]["move"] = any_move
    schemas["Event"] = {"anyOf": [ref(n["event"]) for n in names.values()],
                        "description": "an event as the caller may see it; per game: the `…Event` schemas"}
