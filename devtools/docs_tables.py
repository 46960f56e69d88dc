"""The generated tables of each game's docs page, from its declaration.

Every registered game's docs page (``Declaration.docs``) holds, between
:data:`BEGIN` and :data:`END`, its move types with their parameters, its
event types with every field, its schema in words and who sees it, and how
its moves are numbered (its action space, :mod:`engine.actions`).  Write them
with ``python -m devtools.docs_tables`` (``make docs-tables``; ``make openapi``
runs it too); ``--check`` only reports stale pages (``tests/docs/test_docs.py``
fails on them as well).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from engine import REGISTRY
from engine.actions import ABSENT, Block
from engine.core import Game
from engine.declaration import SEAT_MARK, Schema

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "<!-- BEGIN generated from the declaration: python -m devtools.docs_tables -->"
END = "<!-- END generated from the declaration -->"
#: an enum longer than this is shown by its first and last values
LONG_ENUM = 8


def words(schema: Schema) -> str:
    """A schema in a few words: ``0`` · ``1`` · ``2`` · ``3``, list of …, or null."""
    if "$ref" in schema:
        return f"`{schema['$ref'].rsplit('/', 1)[1]}`"
    if "anyOf" in schema:
        return " or ".join(words(s) for s in schema["anyOf"])
    nullable = schema.get("nullable", False)
    values = [v for v in schema.get("enum", []) if v is not None]
    if values:
        shown = values if len(values) <= LONG_ENUM else [*values[:3], "…", *values[-2:]]
        text = " · ".join(v if v == "…" else f"`{v}`" for v in shown)
    elif schema.get("type") == "array":
        text = f"list of {words(schema['items'])}"
    elif schema.get("type") == "object":
        text = "object {" + ", ".join(f"`{k}`" for k in schema.get("properties", {})) + "}"
    elif schema.get("type") == "integer" and "minimum" in schema:
        text = f"integer {schema['minimum']}…{schema['maximum']}" if "maximum" in schema else \
            ("seat" if schema.get(SEAT_MARK) else f"integer ≥ {schema['minimum']}")
    else:
        text = str(schema.get("type", "any"))
    return f"{text} or null" if nullable else text


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def tables(game: Game) -> str:
    """The generated section of ``game``'s docs page, markers included."""
    declaration = game.declaration
    lines: list[str] = [BEGIN, "", "### Declared moves and events", "",
                        f"Generated from the declaration in `{type(game).__module__.replace('.', '/')}.py`; "
                        "the OpenAPI components are derived from the same declaration.", "",
                        "| move | parameters | meaning |", "|---|---|---|"]
    for move in declaration.moves:
        params = "; ".join(f"`{name}`{' (optional)' if name in move.optional else ''}: {words(schema)}"
                           for name, schema in move.params.items()) or "—"
        lines.append(f"| `{move.type}` | {_cell(params)} | {_cell(move.doc)} |")
    lines += ["", "Every event also has `type`, `seat` (the acting seat, `null` for the table) and `version`; "
              "no event carries any other field (the engine refuses one at emission).", "",
              "| event | field | value | who sees it |", "|---|---|---|---|"]
    for kind, event in game.events.items():
        name = f"`{kind}`" + (f" ({_cell(event.doc)})" if event.doc else "")
        if not event.fields:
            lines.append(f"| {name} | — | | |")
        for i, (field_name, f) in enumerate(event.fields.items()):
            optional = " (optional)" if field_name in event.optional else ""
            lines.append(f"| {name if i == 0 else ''} | `{field_name}`{optional} | {_cell(words(f.schema))} "
                         f"| {_cell(f.visibility.words)} |")
    return "\n".join([*lines, "", *numbers(game), "", END])


def _value(value: Any) -> str:
    return "(absent)" if value is ABSENT else f"`{value if isinstance(value, str) else json.dumps(value)}`"


def _values(values: tuple[Any, ...]) -> str:
    """A domain in words: its values by index, a run of integers as ``a``…``b``."""
    ints = [v for v in values if type(v) is int]
    start = len(values) - len(ints)
    if len(ints) > 3 and ints == list(range(ints[0], ints[0] + len(ints))):
        return " · ".join([*map(_value, values[:start]), f"`{ints[0]}`…`{ints[-1]}`"])
    return " · ".join(map(_value, values))


def _formula(block: Block) -> str:
    """A move's id in its block: ``first + stride·i(param) + …``."""
    terms = [str(block.first)] if block.first or not block.params else []
    terms += [f"{p.stride}·i(`{p.name}`)" if p.stride > 1 else f"i(`{p.name}`)" for p in block.params]
    return " + ".join(terms)


def numbers(game: Game) -> list[str]:
    """The "Moves as numbers" section: how ids are assigned, block by block,
    and each parameter's values in index order."""
    space = game.action_space
    seats = any(schema.get(SEAT_MARK) for m in game.declaration.moves for schema in m.params.values())
    lines = ["### Moves as numbers", "",
             f"{game.title} has **{space.size} actions**: every listed move carries an `id` 0…{space.size - 1} "
             "(the catalogue's `actions`), a function of its type and parameters alone, the same in every match "
             "and at every player count" + (f" (a seat parameter counts seats 0…{game.max_players - 1} at every "
                                            "table size)" if seats else "") + ". "
             "Post `{\"id\": k}` to play the listed move with id k. Each move type takes a block of consecutive "
             "ids in the order below; within it, i(p) is the index (from 0) of the move's value of parameter p "
             "in the list of that parameter's values. Ids whose move is not legal now are not listed; "
             "`resign` has no id.", "",
             "| move | ids | id |", "|---|---|---|"]
    for block in space.blocks:
        last = block.first + block.size - 1
        ids = f"{block.first}" if block.size == 1 else f"{block.first}…{last}"
        lines.append(f"| `{block.move.type}` | {ids} | {_cell(_formula(block))} |")
    domains: dict[tuple[str, tuple[Any, ...]], list[str]] = {}
    for block in space.blocks:
        for p in block.params:
            domains.setdefault((p.name, p.values), []).append(block.move.type)
    if domains:
        names = [name for name, _ in domains]
        lines += ["", "| parameter | values, by index |", "|---|---|"]
        for (name, values), kinds in domains.items():
            where = f" in {', '.join(f'`{k}`' for k in kinds)}" if names.count(name) > 1 else ""
            lines.append(f"| `{name}`{where} | {_cell(_values(values))} |")
        widest = max(space.blocks, key=lambda b: (len(b.params), b.size))
        action = widest.first + widest.size // 2 + 1
        example = json.dumps(space.move_of(action), ensure_ascii=False)
        lines += ["", f"For example, `{example}` has id {action}."]
    return lines


def page(game: Game) -> Path:
    return ROOT / game.declaration.docs


def updated(text: str, section: str) -> str:
    """``text`` with its generated section replaced by ``section`` (appended
    when it has none)."""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        return head + section + rest.split(END, 1)[1]
    return text.rstrip("\n") + "\n\n" + section + "\n"


def stale(games: Any = REGISTRY) -> list[str]:
    """The docs pages whose generated section differs from the declaration."""
    return [str(page(g).relative_to(ROOT)) for g in games
            if updated(page(g).read_text(encoding="utf-8"), tables(g)) != page(g).read_text(encoding="utf-8")]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        pages = stale()
        for stale_page in pages:
            print(f"{stale_page}: generated tables are stale; run python -m devtools.docs_tables", file=sys.stderr)
        return 1 if pages else 0
    for game in REGISTRY:
        path = page(game)
        path.write_text(updated(path.read_text(encoding="utf-8"), tables(game)), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
