"""Moves as numbers: a game's fixed action space, from its declared move types.

Every move a game can declare gets one integer id, 0 … ``size`` − 1 (contract
"Moves as numbers"), the same in every match and at every player count:

* each move type takes a block of consecutive ids, the types in the order
  the declaration lists them;
* within its block, a move's id is ``first + Σ stride(p) · index(p)`` over
  its parameters ``p`` in declared order: ``index(p)`` is the place of the
  move's value in the parameter's *domain*, and ``stride(p)`` the product of
  the domain sizes of the parameters after ``p`` (a mixed-radix number, the
  first parameter its most significant digit).

A parameter's domain comes from its schema (:func:`domain`): an ``enum``'s
values in their listed order, ``minimum`` … ``maximum`` of an integer, seats
``0`` … ``max_players − 1`` (:data:`engine.declaration.SEAT_MARK`), ``false``,
``true`` for a boolean, each preceded by :data:`ABSENT` when the parameter is
optional.  Where a schema does not enumerate its values, the move type lists
them in ``MoveType.domains``; a parameter with neither fails the game's
registration (:class:`engine.declaration.DeclarationError`).  The core
``resign`` move is outside the space (it is never listed).

Ids cost nothing until asked for: listing legal moves never computes them.
"""
from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from engine.declaration import SEAT_MARK, DeclarationError, MoveType, Schema


class _Absent:
    """The value of an optional parameter a move leaves out."""

    def __repr__(self) -> str:
        return "ABSENT"


#: an optional parameter left out of the move: the first value of its domain
ABSENT: Any = _Absent()
#: JSON values keyed by themselves (with their type: ``true`` is not ``1``)
_ATOMS = frozenset({str, int, bool, float, type(None)})


def _key(value: Any) -> Any:
    """A hashable key of a JSON value that tells ``true`` from ``1``."""
    if value is ABSENT:
        return ABSENT
    return (type(value), value) if type(value) in _ATOMS else orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def domain(schema: Schema, max_players: int) -> tuple[Any, ...] | None:
    """The values a parameter with ``schema`` takes, in numbering order
    (module docstring; ``null`` last when the schema is nullable and its
    enum does not name it), or ``None`` when the schema does not enumerate
    them."""
    if "enum" in schema:
        return tuple(schema["enum"])
    if schema.get(SEAT_MARK):
        values: tuple[Any, ...] = tuple(range(max_players))
    elif schema.get("type") == "boolean":
        values = (False, True)
    elif schema.get("type") == "integer" and "minimum" in schema and "maximum" in schema:
        values = tuple(range(schema["minimum"], schema["maximum"] + 1))
    else:
        return None
    return (*values, None) if schema.get("nullable") else values


@dataclass(frozen=True)
class Param:
    """One parameter of a move type: its domain and its stride."""

    name: str
    values: tuple[Any, ...]
    stride: int
    #: a value's key (:func:`_key`) → its place in ``values``
    index: Mapping[Any, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {_key(v): i for i, v in enumerate(self.values)})


@dataclass(frozen=True)
class Block:
    """The ids of one move type: ``first`` … ``first + size − 1``."""

    move: MoveType
    first: int
    size: int
    params: tuple[Param, ...]


def _params(move: MoveType, max_players: int) -> tuple[Param, ...]:
    """The parameters of ``move`` with their domains and strides;
    :class:`DeclarationError` for one whose domain is not known, or listed in
    ``domains`` although its schema enumerates it."""
    domains = []
    for name, schema in move.params.items():
        found, listed = domain(schema, max_players), move.domains.get(name)
        if found is None and listed is None:
            raise DeclarationError(f"move {move.type!r}: parameter {name!r} needs its values in the move "
                                   "type's domains: its schema does not enumerate them (enum, minimum and "
                                   "maximum, seat or boolean)")
        if found is not None and listed is not None:
            raise DeclarationError(f"move {move.type!r}: parameter {name!r} must not be listed in domains: "
                                   "its schema enumerates its values")
        values = tuple(found if found is not None else listed or ())
        domains.append((name, (ABSENT, *values) if name in move.optional else values))
    unknown = sorted(set(move.domains) - set(move.params))
    if unknown:
        raise DeclarationError(f"move {move.type!r}: domains for undeclared parameters {unknown}")
    params, stride = [], 1
    for name, values in reversed(domains):
        if not values:
            raise DeclarationError(f"move {move.type!r}: parameter {name!r} has no values")
        params.append(Param(name, values, stride))
        stride *= len(values)
    return tuple(reversed(params))


class ActionSpace:
    """The action space of a game's declared ``moves`` at ``max_players``
    (module docstring)."""

    def __init__(self, moves: Sequence[MoveType], max_players: int):
        blocks, first = [], 0
        for move in moves:
            params = _params(move, max_players)
            size = params[0].stride * len(params[0].values) if params else 1
            blocks.append(Block(move, first, size, params))
            first += size
        self.blocks: tuple[Block, ...] = tuple(blocks)
        self.size = first
        self._by_type = {b.move.type: b for b in blocks}
        self._firsts = [b.first for b in blocks]

    def id_of(self, move: Mapping[str, Any]) -> int:
        """The id of a fully specified ``move`` (``label`` ignored);
        ``ValueError`` for a move outside the space (an undeclared type or
        parameter, a value outside its domain, ``resign``)."""
        block = self._by_type.get(move.get("type"))  # type: ignore[arg-type]
        if block is None:
            raise ValueError(f"move type {move.get('type')!r} has no action ids")
        action, present = block.first, 1 + ("label" in move)
        for param in block.params:
            value = move.get(param.name, ABSENT)
            index = param.index.get(_key(value))
            if index is None:
                raise ValueError(f"{block.move.type!r}: {param.name} = {value!r} is outside its domain")
            action += index * param.stride
            present += value is not ABSENT
        if present != len(move):
            raise ValueError(f"{block.move.type!r} move {dict(move)!r} carries undeclared fields")
        return action

    def move_of(self, action: int) -> dict[str, Any] | None:
        """The move with id ``action`` (legal or not), ``None`` outside 0 … size − 1."""
        if not 0 <= action < self.size:
            return None
        block = self.blocks[bisect.bisect_right(self._firsts, action) - 1]
        move: dict[str, Any] = {"type": block.move.type}
        rest = action - block.first
        for param in block.params:
            index, rest = divmod(rest, param.stride)
            if param.values[index] is not ABSENT:
                move[param.name] = param.values[index]
        return move
