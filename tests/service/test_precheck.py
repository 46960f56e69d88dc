"""The fast path's checks compiled from the routes' schemas (service/http/precheck.py).

A compiled check may hand any request to the schema (``Unsure``), but what
it accepts the schema must accept too, with the same loaded value; and a
schema the compiler cannot model fails when it is compiled, not by letting
the two paths disagree.
"""
from __future__ import annotations

from typing import Any

import marshmallow as ma
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import fields

from service.http import precheck
from service.http.routes.matches import MoveQuerySchema, ViewQuerySchema
from service.http.routes.worlds import SimulateSchema
from service.http.schemas import ConditionalHeaders, MoveHeaders, MoveRequestSchema, SeatQuerySchema
from tests.conftest import examples

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                 max_size=3), max_leaves=8)
BODIES = st.one_of(
    JSON,
    st.fixed_dictionaries({"move": st.dictionaries(st.sampled_from(["type", "card", "label"]), JSON, max_size=3)},
                          optional={"version": st.none() | st.integers() | st.booleans() | st.text(max_size=3),
                                    "other": JSON}))
QUERY_PARTS = st.lists(st.tuples(st.sampled_from(["legal", "seat", "after", "LEGAL", ""]),
                                 st.sampled_from(["", "=", "=true", "=false", "=1", "=0", "=yes", "=2", "=-1",
                                                  "=%31", "=+1", "= 1", "=007", "=1.0", "=on", "=x"])),
                       max_size=3)


def _loaded_or_refused(schema: ma.Schema, data: Any) -> Any:
    try:
        return schema.load(data)
    except ma.ValidationError:
        return "refused"


@settings(max_examples=examples(400), deadline=None)
@given(BODIES)
def test_the_move_body_check_accepts_only_what_the_schema_loads_alike(data: Any) -> None:
    schema = MoveRequestSchema()
    check = precheck.body(schema)
    try:
        fast = check(data)
    except precheck.Unsure:
        return
    assert fast == _loaded_or_refused(schema, data)


POSTED = st.fixed_dictionaries({}, optional={"seat": st.integers(-1, 3) | st.booleans() | st.none(),
                                             "move": st.dictionaries(st.sampled_from(["type", "id"]), JSON, max_size=2),
                                             "other": JSON})
SIMULATE_BODIES = st.one_of(
    JSON,
    st.fixed_dictionaries({}, optional={
        "world": st.text(max_size=5) | st.integers(), "moves": st.lists(POSTED | JSON, max_size=3) | JSON,
        "playout": st.sampled_from(["random", "greedy", None, 1]), "seed": st.none() | st.integers() | st.booleans(),
        "as": st.none() | st.integers(-1, 3) | st.booleans() | st.text(max_size=2), "as_": st.integers(0, 2),
        "other": JSON}))


@settings(max_examples=examples(400), deadline=None)
@given(SIMULATE_BODIES)
def test_the_simulate_body_check_accepts_only_what_the_schema_loads_alike(data: Any) -> None:
    """Lists of nested objects (``moves``) are checked item by item as the
    schema loads them; ``as`` is read under its data key."""
    schema = SimulateSchema()
    try:
        fast = precheck.body(schema)(data)
    except precheck.Unsure:
        return
    assert fast == _loaded_or_refused(schema, data)


def test_a_plain_simulate_body_takes_the_fast_path() -> None:
    body = {"world": "w1.x.y", "moves": [{"seat": 1, "move": {"id": 3}}], "playout": "random", "seed": 7, "as": 0}
    assert precheck.body(SimulateSchema())(body) == {
        "world": "w1.x.y", "moves": [{"seat": 1, "move": {"id": 3}}], "playout": "random", "seed": 7, "as_": 0}
    assert precheck.body(SimulateSchema())({"world": "w"}) == {"world": "w", "moves": []}


@pytest.mark.parametrize("schema", [ViewQuerySchema(), MoveQuerySchema(), SeatQuerySchema()],
                         ids=lambda s: type(s).__name__)
@settings(max_examples=examples(200), deadline=None)
@given(parts=QUERY_PARTS)
def test_a_query_check_accepts_only_what_the_schema_loads_alike(schema: ma.Schema,
                                                                 parts: list[tuple[str, str]]) -> None:
    text = "&".join(name + value for name, value in parts)
    try:
        fast = precheck.query(schema)(text)
    except precheck.Unsure:
        return
    # what the check took is plain: each name once with an undecoded value, as webargs reads it
    raw = dict(part.partition("=")[::2] for part in text.split("&")) if text else {}
    assert fast == _loaded_or_refused(schema, raw)


def test_plain_requests_take_the_fast_path() -> None:
    """The checks are not so careful that the fast path is never taken."""
    assert precheck.body(MoveRequestSchema())({"move": {"type": "draw"}, "version": 3}) == {
        "move": {"type": "draw"}, "version": 3}
    assert precheck.query(MoveQuerySchema())("seat=1&legal=true") == {"seat": 1, "legal": True}
    assert precheck.query(ViewQuerySchema())("") == {"legal": False}
    assert precheck.headers(MoveHeaders())({"HTTP_IDEMPOTENCY_KEY": "k-1"}) == {"idempotency_key": "k-1"}
    assert precheck.headers(ConditionalHeaders())({"HTTP_IF_NONE_MATCH": '"3"'}) == {"if_none_match": '"3"'}


@pytest.mark.parametrize("refused", [
    {"move": {}},                               # the schema's own validator: a string 'type'
    {"move": {"type": 1}},
    {"move": {"type": "draw"}, "version": True},
    {"move": {"type": "draw"}, "version": 1.0},
    {"version": 1},
    {"move": {"type": "draw"}, "seat": 0},
    [{"move": {"type": "draw"}}],
])
def test_the_move_body_check_hands_on_what_the_schema_refuses(refused: Any) -> None:
    with pytest.raises(precheck.Unsure):
        precheck.body(MoveRequestSchema())(refused)
    assert _loaded_or_refused(MoveRequestSchema(), refused) == "refused"


def test_an_idempotency_key_is_checked_by_the_schemas_pattern() -> None:
    with pytest.raises(precheck.Unsure):
        precheck.headers(MoveHeaders())({"HTTP_IDEMPOTENCY_KEY": "has space"})


class _FloatBody(ma.Schema):
    x = fields.Float()


class _PostLoad(ma.Schema):
    x = fields.Integer()

    @ma.post_load
    def _twice(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {"x": data["x"] * 2}


class _StrictQuery(ma.Schema):
    x = fields.Integer(strict=True)


@pytest.mark.parametrize(("compile_", "schema"), [(precheck.body, _FloatBody()), (precheck.body, _PostLoad()),
                                                  (precheck.query, _StrictQuery())])
def test_a_schema_the_compiler_cannot_model_fails_when_compiled(compile_: Any, schema: ma.Schema) -> None:
    with pytest.raises(TypeError):
        compile_(schema)
