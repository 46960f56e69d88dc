"""The declaration vocabulary: what a game says about itself once.

A game declares (:class:`Declaration`) its move types with their parameters
(:class:`MoveType`), its event types with **every field and that field's
visibility** (:class:`EventType`, :class:`Field`), the fields of its view's
``players`` entries and ``board``, named option presets for tests, its
heuristic bot and its ``/play`` board module.  Everything else is derived
from it: the engine refuses an event that differs from its declaration when
it is emitted (:class:`engine.core.UndeclaredEvent`) and redacts events field
by field from it; the service builds the OpenAPI components, the catalogue's
``moves`` and ``schemas`` and the docs tables from it.

Schemas are OpenAPI 3.0 schema objects built with the helpers below; a
hidden value is ``null`` (or a list of ``null``), so a field that can hide a
value is ``nullable``.  Nothing here imports the service or the bots: the bot
and the board are named by strings.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    NotRequired,
    ParamSpec,
    Required,
    TypedDict,
    get_args,
    get_origin,
    get_type_hints,
)

if TYPE_CHECKING:
    from engine.core import Viewer

Schema = dict[str, Any]

# --------------------------------------------------------------------------
# Schema helpers (OpenAPI 3.0 schema objects).
# --------------------------------------------------------------------------
INT: Schema = {"type": "integer"}
#: the key marking a schema whose values are seats, 0 … the game's
#: ``max_players`` − 1 (how the action space enumerates a seat parameter,
#: :mod:`engine.actions`); an OpenAPI extension, ignored by validators
SEAT_MARK = "x-seat"
SEAT: Schema = {"type": "integer", "minimum": 0, "description": "a seat, 0-based", SEAT_MARK: True}
STR: Schema = {"type": "string"}
BOOL: Schema = {"type": "boolean"}
HIDDEN = "null when the viewer may not see it"


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


def obj(fields: Mapping[str, Schema], optional: tuple[str, ...] = (), **extra: Any) -> Schema:
    """A closed object: every field required except ``optional``."""
    required = [name for name in fields if name not in optional]
    out: Schema = {"type": "object", "properties": dict(fields), "additionalProperties": False, **extra}
    if required:
        out["required"] = required
    return out


def described(schema: Schema, text: str) -> Schema:
    return {**schema, "description": text}


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


#: ``match_ended``'s ``result`` (the document's shared ``Result`` component)
RESULT: Schema = ref("Result")


# --------------------------------------------------------------------------
# Field visibility: what a viewer other than the admin sees of one field.
# --------------------------------------------------------------------------
def hide(value: Any) -> Any:
    """A hidden value: ``None``, or a list of ``None`` of the same length
    (layout and counts stay visible, values do not)."""
    return [None] * len(value) if isinstance(value, list) else None


#: A redaction function: the value of one field of ``event`` for ``viewer``
#: (read from the event's declared fields; it returns a value, never an event).
Redaction = Callable[[Mapping[str, Any], "Viewer"], Any]


@dataclass(frozen=True)
class Public:
    """Everyone sees the field."""

    words = "public"


@dataclass(frozen=True)
class Private:
    """Only the seat named by the event's ``owner`` field (and the admin) sees
    the field; everyone else gets it hidden (:func:`hide`)."""

    owner: str = "seat"

    @property
    def words(self) -> str:
        return "only its seat" if self.owner == "seat" else f"only the seat in `{self.owner}`"

    def value(self, event: Mapping[str, Any], name: str, viewer: Viewer) -> Any:
        value = event[name]
        return value if viewer.sees_private(event[self.owner]) else hide(value)


@dataclass(frozen=True)
class Redacted:
    """A game rule decides: ``fn(event, viewer)`` returns the field's value
    for a viewer other than the admin (its docstring says the rule)."""

    fn: Redaction

    @property
    def words(self) -> str:
        doc = (self.fn.__doc__ or "").strip().split("\n\n", 1)[0]
        return "redacted: " + " ".join(doc.split()) if doc else "redacted by a game rule"

    def value(self, event: Mapping[str, Any], name: str, viewer: Viewer) -> Any:
        return self.fn(event, viewer)


PUBLIC = Public()
Visibility = Public | Private | Redacted


@dataclass(frozen=True)
class Field:
    """One field of an event: its schema and who sees it."""

    schema: Schema
    visibility: Visibility = PUBLIC


def public(schema: Schema) -> Field:
    return Field(schema, PUBLIC)


def private(schema: Schema, owner: str = "seat") -> Field:
    """Only the seat in ``owner`` (and the admin) sees it; others get
    :func:`hide` of it, so ``schema`` must admit ``null`` (``nullable(…,
    HIDDEN)``), or for a list, lists of ``null``."""
    return Field(schema, Private(owner))


def redacted(schema: Schema, fn: Redaction) -> Field:
    return Field(schema, Redacted(fn))


class DeclarationError(TypeError):
    """A game's declaration lacks a piece or contradicts its engine: raised
    when the game is registered (at import), never skipped."""


# --------------------------------------------------------------------------
# A TypedDict against the names it declares (moves' parameters, events' fields).
# --------------------------------------------------------------------------
def _typed_keys(typed: Any) -> tuple[set[str], set[str]]:
    """The required and the optional keys of the ``TypedDict`` ``typed``:
    ``total=False`` keys optional, and so are ``NotRequired`` ones even where
    postponed annotations hide them from ``__optional_keys__``."""
    required, optional = set(typed.__required_keys__), set(typed.__optional_keys__)
    for name, hint in get_type_hints(typed, include_extras=True).items():
        if get_origin(hint) is NotRequired:
            required.discard(name)
            optional.add(name)
        elif get_origin(hint) is Required:
            optional.discard(name)
            required.add(name)
    return required, optional


def _keys_mismatch(typed: Any, names: Mapping[str, Any], optional: tuple[str, ...], word: str,
                   besides: tuple[str, ...] = ()) -> str | None:
    """How the keys of the ``TypedDict`` ``typed`` (but ``besides``) differ
    from the declared ``names`` of which ``optional`` may be left out (both
    named ``word``), or ``None``."""
    required, may_lack = _typed_keys(typed)
    keys = (required | may_lack) - set(besides)
    if keys != set(names):
        missing, extra = sorted(set(names) - keys), sorted(keys - set(names))
        diff = [f"missing {missing}"] if missing else []
        diff += [f"undeclared {extra}"] if extra else []
        return f"has {word} {sorted(keys)}, the declaration {sorted(names)} ({'; '.join(diff)})"
    if may_lack != set(optional):
        return f"makes {sorted(may_lack)} optional, the declaration {sorted(optional)}"
    return None


# --------------------------------------------------------------------------
# Move and event types.
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class MoveType:
    """A move type: its parameters (besides ``type`` and ``label``), which of
    them may be left out, and a sentence for the docs.

    ``domains``: for a parameter whose schema does not enumerate its values
    (no ``enum``, no ``minimum`` and ``maximum``, not a seat, not a boolean),
    every value it can take, in the order that numbers them (the action
    space, :mod:`engine.actions`); a parameter whose schema enumerates its
    values has no entry.

    ``typed``: the ``TypedDict`` (class) of the move as listed, e.g.
    ``MoveType(MOVE_TAKE, {"count": …}, typed=Take)`` with ``class
    Take(TypedDict): type: Literal["take"]; count: int``: its ``type`` a
    ``Literal`` naming this type, its other keys the parameters, the optional
    ones ``NotRequired`` (:meth:`typed_mismatch`, checked at registration);
    ``None``: not typed."""

    type: str
    params: Mapping[str, Schema] = field(default_factory=dict)
    optional: tuple[str, ...] = ()
    doc: str = ""
    domains: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    typed: Any = field(default=None, compare=False)

    def typed_mismatch(self) -> str | None:
        """How the ``TypedDict`` of a typed move type differs from the
        declared parameters, or ``None``; an untyped one does not."""
        if self.typed is None:
            return None
        if self.type not in get_args(get_type_hints(self.typed).get("type")):
            return f"has no key 'type' of a Literal naming {self.type!r}"
        return _keys_mismatch(self.typed, self.params, self.optional, "parameters", besides=("type",))


#: The fields of one event type, as keyword parameters (:class:`EventKind`)
FieldsP = ParamSpec("FieldsP")


class NoFields(TypedDict):
    """The fields of an event that has none besides ``type`` and ``seat``."""


class EventKind(str, Generic[FieldsP]):
    """The name of an event type (a ``str``: the events' ``type``) typed with
    its fields: ``fields`` is a ``TypedDict`` of them (besides ``type`` and
    ``seat``), so that mypy checks every ``Draft.emit`` of it: a misspelt,
    missing, extra or mistyped field is an error.  E.g.
    ``EVENT_DREW = EventKind("drew", Drew)`` with ``class Drew(TypedDict):
    card: str``.  An :class:`EventType` named by it keeps the plain name and
    checks the ``TypedDict`` against its fields (:meth:`EventType.typed_mismatch`)."""

    fields: Callable[FieldsP, object]

    def __new__(cls, name: str, fields: Callable[FieldsP, object]) -> EventKind[FieldsP]:
        kind = super().__new__(cls, name)
        kind.fields = fields
        return kind

    def __reduce__(self) -> tuple[Any, ...]:
        """Copied and pickled as a new kind of the same name and fields."""
        return EventKind, (str(self), self.fields)


#: the fields every event has besides its own: ``type`` and the acting ``seat``
ENVELOPE = ("type", "seat")
#: the field the service stamps on a stored event (the version its move
#: produced): an event handed back for redaction may carry it, never an
#: emitted one
STAMP = "version"


@dataclass(frozen=True)
class EventType:
    """An event type: every field besides ``type`` and ``seat`` with its
    schema and visibility; ``optional`` fields may be absent (only a merged
    type has them, :func:`merge`)."""

    type: str
    fields: Mapping[str, Field] = field(default_factory=dict)
    doc: str = ""
    optional: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # an EventKind leaves its TypedDict here; ``type`` is the plain name (JSON, schemas)
        object.__setattr__(self, "typed", self.type.fields if isinstance(self.type, EventKind) else None)
        object.__setattr__(self, "type", str(self.type))
        names = frozenset((*ENVELOPE, *self.fields))
        required = names - frozenset(self.optional)
        hidden = {name: f.visibility for name, f in self.fields.items() if f.visibility is not PUBLIC}
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "stamped", names | {STAMP})
        object.__setattr__(self, "required", required)
        object.__setattr__(self, "hidden", hidden)
        for name, f in self.fields.items():
            if isinstance(f.visibility, Private) and f.visibility.owner not in names:
                raise TypeError(f"event {self.type!r}: owner field {f.visibility.owner!r} is not declared")
            if isinstance(f.visibility, Private) and not _admits_hidden(f.schema):
                raise TypeError(f"event {self.type!r}: private field {name!r} must admit null (nullable)")

    names: frozenset[str] = field(init=False, repr=False, compare=False)
    stamped: frozenset[str] = field(init=False, repr=False, compare=False)
    required: frozenset[str] = field(init=False, repr=False, compare=False)
    hidden: Mapping[str, Private | Redacted] = field(init=False, repr=False, compare=False)
    #: the ``TypedDict`` (class) of the fields when the type is named by an
    #: :class:`EventKind`, else ``None``
    typed: Any = field(init=False, repr=False, compare=False)

    def typed_mismatch(self) -> str | None:
        """How the ``TypedDict`` of a typed event type differs from the
        declared fields (the optional ones ``NotRequired`` or ``total=False``), or
        ``None``; a type named by a plain ``str`` is not typed."""
        if self.typed is None:
            return None
        return _keys_mismatch(self.typed, self.fields, self.optional, "fields")

    def mismatch(self, event: Mapping[str, Any], stamped: bool = False) -> str | None:
        """Why ``event`` differs from this declaration, or ``None``; a
        ``stamped`` event (a stored one) may also carry :data:`STAMP`."""
        keys = event.keys()
        allowed = self.stamped if stamped else self.names
        if keys == allowed or keys == self.names or self.required <= keys <= allowed:
            return None
        extra, missing = sorted(keys - allowed), sorted(self.required - keys)
        return (f"event {self.type!r} " + (f"carries undeclared fields {extra}" if extra else "")
                + (" and " if extra and missing else "") + (f"lacks declared fields {missing}" if missing else ""))

    def redact(self, event: Mapping[str, Any], viewer: Viewer) -> dict[str, Any]:
        """``event`` as ``viewer`` may see it (a new dict): its keys are its
        declared fields (and :data:`STAMP`) only (the caller checked them,
        :meth:`mismatch`), and
        every field that is not public is replaced by its visibility's value;
        the admin sees every declared field."""
        out = dict(event)
        if not viewer.is_admin:
            for name, visibility in self.hidden.items():
                if name in out:
                    out[name] = visibility.value(event, name, viewer)
        return out


def _admits_hidden(schema: Schema) -> bool:
    """``schema`` admits :func:`hide` of its values (null, or a list of nulls)."""
    if schema.get("type") == "array":
        return bool(schema["items"].get("nullable"))
    return bool(schema.get("nullable"))


def merge(own: EventType, other: EventType) -> EventType:
    """One event type taking either shape (e.g. a game's ``match_ended`` and
    the core's ``match_ended`` of a resignation): every field of both (``other``'s
    first; a field both have in different schemas takes either, enums joined),
    required only where both require it."""
    fields = dict(other.fields)
    for name, f in own.fields.items():
        theirs = fields.get(name)
        if theirs is not None and theirs.visibility != f.visibility:
            raise TypeError(f"event {own.type!r}: field {name!r} is declared with two visibilities")
        fields[name] = f if theirs is None else Field(_either(f.schema, theirs.schema), f.visibility)
    both = own.required & other.required
    optional = tuple(name for name in fields if name not in both)
    doc = " / ".join(filter(None, (own.doc, other.doc)))
    return EventType(own.type, fields, doc, optional)


def _either(own: Schema, theirs: Schema) -> Schema:
    if own == theirs:
        return own
    if "enum" in own and "enum" in theirs:
        return {**own, "enum": [*own["enum"], *(v for v in theirs["enum"] if v not in own["enum"])]}
    return {"anyOf": [own, theirs]}


# --------------------------------------------------------------------------
# The declaration of one game.
# --------------------------------------------------------------------------
#: presets every game declares (named option sets the generic tests use):
#: ``short`` a quick match (compaction, schemas), ``variant`` a second option
#: set exercising other rules (golden digests), ``play`` a short match for the
#: ``/play`` smoke test
REQUIRED_PRESETS = ("short", "variant", "play")
#: the ``/play`` board of a game that declares none: it draws any game's view
#: (players' fields, board fields, cards) and labels moves by their fields
GENERIC_BOARD = "generic.js"


@dataclass(frozen=True)
class Declaration:
    """Everything a game declares besides its rules (module docstring).

    ``bot``: the module (dotted path) holding the game's ``HeuristicBot``;
    ``docs``: the game's rules page (path from the repository root) that holds
    the generated tables; ``board``: the ``/play`` board module, a file name
    under ``service/web/js/boards/``, by default :data:`GENERIC_BOARD` (drawn
    from any game's view and legal moves: a plugin game needs no board of its
    own); ``player``/``board_view``:
    the fields of a view's ``players`` entries (besides ``seat`` and ``name``)
    and of its ``board``; ``view_recall``: keys a seat's view may carry beside
    a hidden value (the value that seat remembers, ``recall: "perfect"``), each
    mapped to the key of the value it stands for in the same object;
    ``view_admin_only``: keys only the admin's view has (absent, not nulled,
    for everyone else)."""

    moves: tuple[MoveType, ...]
    events: tuple[EventType, ...]
    player: Mapping[str, Schema]
    board_view: Mapping[str, Schema]
    presets: Mapping[str, Mapping[str, Any]]
    bot: str
    docs: str
    board: str = GENERIC_BOARD
    view_recall: Mapping[str, str] = field(default_factory=dict)
    view_admin_only: tuple[str, ...] = ()

    @property
    def view_optional(self) -> tuple[str, ...]:
        """The view's keys only some viewers get."""
        return (*self.view_recall, *self.view_admin_only)

    def move(self, kind: str) -> MoveType | None:
        return next((m for m in self.moves if m.type == kind), None)
