"""Fast request checks generated from the routes' own marshmallow schemas.

The fast move path (:mod:`service.http.routes.hot`) must not run marshmallow
per request, yet it must never take a request its Flask route would refuse,
nor read one differently.  So its checks are compiled here, once, from the
very schemas the Flask routes load with (:mod:`service.http.schemas`): a
compiled check accepts a plain subset of what its schema accepts and returns
exactly what ``schema.load`` would; for anything else it raises
:class:`Unsure`, and the request goes to the Flask route, which answers it
(its 400s included).  A schema with a field type or hook the compiler does
not know fails at import, so a schema change can never leave the two paths
with two definitions of a valid request.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import marshmallow as ma
from marshmallow import fields

#: A compiled check: the raw value in, the loaded value out, or :class:`Unsure`.
Convert = Callable[[Any], Any]

#: A query integer the fast path reads itself (no sign, no spaces, no encoding).
_DIGITS = re.compile(r"[0-9]{1,9}")


class Unsure(Exception):
    """Not certainly valid: let the schema itself (the Flask route) decide."""


def query(schema: ma.Schema) -> Callable[[str], dict[str, Any]]:
    """A check of a raw query string against ``schema``: each parameter
    once, a declared one, with a plain value (nothing to percent-decode)."""
    convert = {field.data_key or name: (name, _query_value(field)) for name, field in _loadable(schema)}
    defaults = _defaults(schema)

    def check(text: str) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if text:
            for part in text.split("&"):
                key, eq, raw = part.partition("=")
                known = convert.get(key)
                if known is None or not eq or known[0] in found:
                    raise Unsure
                name, value = known
                found[name] = value(raw)
        return {**defaults, **found}
    return check


def headers(schema: ma.Schema) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A check of a WSGI environ's headers against ``schema`` (string fields)."""
    convert = [("HTTP_" + (field.data_key or name).upper().replace("-", "_"), name, _value(field, str))
               for name, field in _loadable(schema)]

    def check(environ: dict[str, Any]) -> dict[str, Any]:
        found = {}
        for key, name, value in convert:
            raw = environ.get(key)
            if raw is not None:
                found[name] = value(raw)
        return found
    return check


def body(schema: ma.Schema) -> Convert:
    """A check of a decoded JSON body against ``schema``: an object with
    only its fields, the required ones present, each of the exact JSON type
    (no coercion), then the fields' and the schema's validators."""
    convert = {field.data_key or name: (name, _json_value(field)) for name, field in _loadable(schema)}
    required = frozenset(key for key, (name, _) in convert.items() if schema.fields[name].required)
    validators = _schema_validators(schema)
    pre_loads = _pre_loads(schema)
    defaults = _defaults(schema)

    def check(data: Any) -> dict[str, Any]:
        for hook in pre_loads:
            data = _loaded(hook, data)
        if type(data) is not dict or not required <= data.keys():
            raise Unsure
        loaded = dict(defaults)
        for key, raw in data.items():
            known = convert.get(key)
            if known is None:
                raise Unsure
            loaded[known[0]] = known[1](raw)
        for validator in validators:
            _run(validator, loaded)
        return loaded
    return check


def _loadable(schema: ma.Schema) -> list[tuple[str, fields.Field]]:
    """The fields a request may carry (all of them: a dump-only field would
    be unknown on load, which the checks do not model)."""
    found = list(schema.fields.items())
    if any(field.dump_only for _, field in found):
        raise TypeError(f"{type(schema).__name__}: dump-only fields are not precompiled")
    return found


def _defaults(schema: ma.Schema) -> dict[str, Any]:
    defaults = {}
    for name, field in schema.fields.items():
        default = field.load_default
        if default is not ma.missing:
            defaults[name] = default() if callable(default) else default
    return defaults


def _schema_validators(schema: ma.Schema) -> list[Callable[..., Any]]:
    """The schema's ``@validates_schema`` methods; any load hook other than
    these and plain ``@pre_load`` (:func:`_pre_loads`) is not compiled
    (TypeError)."""
    hooks = type(schema).resolve_hooks()
    for tag, found in hooks.items():
        if found and tag not in ("validates_schema", "pre_load"):
            raise TypeError(f"{type(schema).__name__}: the {tag!r} hook is not precompiled")
    validators: list[Callable[..., Any]] = []
    for attr, many, options in hooks.get("validates_schema", []):
        if many or options.get("pass_original"):
            raise TypeError(f"{type(schema).__name__}.{attr}: only plain @validates_schema is precompiled")
        validators.append(functools.partial(getattr(schema, attr), partial=None, many=False, unknown=ma.RAISE))
    return validators


def _pre_loads(schema: ma.Schema) -> list[Callable[..., Any]]:
    """The schema's plain ``@pre_load`` methods, run first as ``load`` runs
    them (one object at a time, never ``pass_many``/``pass_original``)."""
    hooks: list[Callable[..., Any]] = []
    for attr, many, options in type(schema).resolve_hooks().get("pre_load", []):
        if many or options.get("pass_original"):
            raise TypeError(f"{type(schema).__name__}.{attr}: only plain @pre_load is precompiled")
        hooks.append(functools.partial(getattr(schema, attr), many=False, partial=None))
    return hooks


def _loaded(hook: Callable[..., Any], data: Any) -> Any:
    """``data`` through a ``@pre_load`` hook; a refusal is the route's to answer."""
    try:
        return hook(data)
    except ma.ValidationError:
        raise Unsure from None


def _query_value(field: fields.Field) -> Convert:
    """A query value: a boolean by marshmallow's own words for true and
    false, an integer as plain digits, a string as it is."""
    if isinstance(field, fields.Boolean):
        words = {**{w: True for w in field.truthy if isinstance(w, str)},
                 **{w: False for w in field.falsy if isinstance(w, str)}}

        def boolean(raw: str) -> bool:
            found = words.get(raw)
            if found is None:
                raise Unsure
            return found
        return _validated(field, boolean)
    if type(field) is fields.Integer and not field.strict:  # a strict one refuses every query string
        def integer(raw: str) -> int:
            if not _DIGITS.fullmatch(raw):
                raise Unsure
            return int(raw)
        return _validated(field, integer)
    return _value(field, str)


def _json_value(field: fields.Field) -> Convert:
    """A JSON value of exactly the field's type (``null`` where allowed); a
    list of nested objects item by item, each checked as :func:`body` checks
    an object against the nested schema."""
    if type(field) is fields.List and type(field.inner) is fields.Nested and not field.inner.many:
        return _validated(field, _list_of(body(field.inner.schema)))
    if isinstance(field, fields.Dict) and field.key_field is None and field.value_field is None:
        kind: type = dict
    elif type(field) is fields.Integer:
        kind = int
    elif type(field) is fields.Boolean:
        kind = bool
    elif type(field) is fields.String:
        kind = str
    else:
        raise TypeError(f"{type(field).__name__} fields are not precompiled")
    return _value(field, kind)


def _list_of(item: Convert) -> Convert:
    def items(raw: Any) -> list[Any]:
        if type(raw) is not list:
            raise Unsure
        return [item(each) for each in raw]
    return items


def _value(field: fields.Field, kind: type) -> Convert:
    if kind is str and type(field) is not fields.String:
        raise TypeError(f"{type(field).__name__} fields are not precompiled")

    def typed(raw: Any) -> Any:
        if type(raw) is not kind:
            raise Unsure
        return raw
    return _validated(field, typed)


def _validated(field: fields.Field, convert: Convert) -> Convert:
    """``convert``, then the field's own validators; ``None`` passes
    unvalidated where the field allows it (as marshmallow does)."""
    validators, allow_none = tuple(field.validators), field.allow_none
    if not validators and not allow_none:
        return convert

    def check(raw: Any) -> Any:
        if raw is None and allow_none:
            return None
        value = convert(raw)
        for validator in validators:
            _run(validator, value)
        return value
    return check


def _run(validator: Callable[..., Any], value: Any) -> None:
    try:
        result = validator(value)
    except ma.ValidationError:
        raise Unsure from None
    if result is False:
        raise Unsure
