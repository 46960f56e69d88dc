"""The public view as text, for ``lodge-arena play``: what a spectator sees
after each move (events and state), game-independent."""
from __future__ import annotations

from typing import Any

import orjson

from .client import JSON

HIDDEN = "?"
LEGEND = "(? = hidden from spectators, or empty)"


def value(v: Any) -> str:
    """A compact rendering: hidden cards as ``?``, lists in brackets."""
    if v is None:
        return HIDDEN
    if isinstance(v, list):
        return "[" + " ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + " ".join(f"{k}={value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, str):
        return v
    return orjson.dumps(v).decode()


def fields(d: JSON, skip: tuple[str, ...] = ()) -> str:
    return "  ".join(f"{k}={value(v)}" for k, v in d.items() if k not in skip)


def event_line(event: JSON, names: list[str]) -> str:
    seat = event.get("seat")
    who = f"{names[seat]} (seat {seat})" if isinstance(seat, int) else "—"
    return f"  · {who}: {event['type']}  {fields(event, ('type', 'seat', 'version'))}".rstrip()


def view_lines(view: JSON) -> list[str]:
    names = [p["name"] for p in view["players"]]
    acting = ", ".join(f"{names[s]} (seat {s})" for s in view["to_act"]) or "nobody"
    lines = [f"── version {view['version']} · round {view.get('round')}/{view.get('rounds')} · "
             f"phase {view['phase']} · to act: {acting} · scores {value(view['scores'])}"]
    for p in view["players"]:
        lines.append(f"   {p['name']} (seat {p['seat']}): {fields(p, ('seat', 'name'))}")
    lines.append(f"   board: {fields(view['board'])}")
    if view.get("result"):
        result = view["result"]
        lines.append(f"   result: winners {', '.join(names[s] for s in result['winners'])} · "
                     f"scores {value(result['scores'])}")
    return lines
