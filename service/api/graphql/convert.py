"""Strawberry types generated from the engines' own wire types.

The pydantic models and frozen dataclasses of an engine (``View``, ``Action``, ``Result`` and
whatever they nest) are the single source of truth; this module turns them into GraphQL types
so that the schema follows the engines without a hand-written copy:

- a model or dataclass becomes an object type (output) or an input type (input), named after
  the class (``Ny1901Build``; inputs get an ``Input`` suffix);
- a discriminated union (``Annotated[A | B, Field(discriminator="type")]``) becomes a GraphQL
  union (output) or an ``@oneOf`` input with one field per member, named after the member's tag
  (``{buildTower: {...}}``); a member with no field but its tag takes ``Boolean`` (``true``);
- ``Literal`` strings become an enum named ``<Owner><Field>`` when every value is a GraphQL
  name, a ``String`` otherwise; a single-valued ``Literal`` (a tag) is a ``String`` in outputs
  and is implied in inputs; Python enums become GraphQL enums with the same member names;
- ``int``/``str``/``bool``/``float``, optionals, lists, sets and homogeneous tuples map as
  expected; a named alias (``TypeAliasType``) is its value. Anything else (dicts, untagged
  unions, ``Any``) is refused with the path of the offending field: the contract in
  ``service/games/base.py`` rules them out.

Every generated type comes with a converter: outputs turn an engine value (or its JSON form)
into instances of the generated Strawberry classes; inputs turn the Strawberry input back into
the wire JSON the service layer parses with the engine's own pydantic adapter.

Generation is deterministic: the same classes give the same types, fields in declaration order.

The service layer's wire models (``MatchState``, ``PlayerOut``, ``Webhook``...) are published the
same way, with a ``Shape`` where GraphQL keeps the names it published before its types were
generated (``PlayerOut`` is ``Player``), an ``ID`` where the model has a ``str``, or a shape the
wire has not (labels as a list: GraphQL has no maps). Descriptions are the models' own (class
docstrings, ``Field(description=...)``); a ``Shape`` may only add one where the model has none.
A ``datetime`` is a ``String`` in RFC 3339, as REST writes it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import keyword
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import strawberry
from pydantic import BaseModel, TypeAdapter
from pydantic.fields import FieldInfo
from strawberry.types.maybe import Maybe, Some
from typing_extensions import TypeAliasType

__all__ = [
    "Codec",
    "Converter",
    "MalformedInput",
    "Shape",
    "UnsupportedType",
    "camel",
    "pascal",
    "rfc3339",
    "union_members",
]

_GRAPHQL_NAME = re.compile(r"^[_A-Za-z][_0-9A-Za-z]*$")
_RESERVED_ENUM_VALUES = {"true", "false", "null"}
_SCALARS: dict[type, type] = {int: int, str: str, bool: bool, float: float}


class UnsupportedType(TypeError):
    """A wire type that has no faithful GraphQL shape (see the module docstring)."""


class MalformedInput(ValueError):
    """A GraphQL input that cannot be turned into wire JSON (rendered as ``BadRequest``)."""


@dataclass(frozen=True, slots=True)
class Codec:
    """A GraphQL annotation and the function that converts values to (or from) it."""

    annotation: Any
    convert: Callable[[Any], Any]


@dataclass(frozen=True)
class Shape:
    """How one wire class (or ``Literal``) is published where GraphQL differs from it.

    Only what a model cannot say: the GraphQL name a schema published before its types were
    generated, which ``str`` fields are ``ID``s, fields whose GraphQL shape the wire type has
    not (``fields``: their own codec), fields GraphQL leaves out, and descriptions where the
    model has none (a model's own description always wins; ``notes`` may not shadow one).
    """

    name: str | None = None
    """The GraphQL type name of the output (default: the class name)."""
    input_name: str | None = None
    """The GraphQL type name of the input (default: the class name and ``Input``)."""
    description: str | None = None
    """The type's description when the class has no docstring (an enum's, for a Literal)."""
    ids: tuple[str, ...] = ()
    """Fields (Python names) published as ``ID``."""
    fields: Mapping[str, Codec] = dc_field(default_factory=dict)
    """Fields published with their own codec (its ``convert`` takes the wire value)."""
    omit: tuple[str, ...] = ()
    """Fields GraphQL does not publish."""
    notes: Mapping[str, str] = dc_field(default_factory=dict)
    """Field descriptions (Python names) for fields the model leaves undescribed, or that
    ``fields`` reshapes or ``renamed`` renames (the wire's description may not fit)."""
    renamed: Mapping[str, str] = dc_field(default_factory=dict)
    """Fields (Python names) published under another name (a Python name, camelCased)."""
    order: tuple[str, ...] = ()
    """Fields (Python names) published first, in this order (the order GraphQL published
    before the model's own order differed); the rest follow in declaration order."""
    interface: bool = False
    """Published as an interface (the common fields of a family of types)."""
    implements: tuple[type, ...] = ()
    """Wire classes whose interfaces (``interface=True``) this type implements."""
    upper_case: bool = False
    """A Literal's enum members in UPPER_CASE (``playing`` is ``PLAYING``)."""


_NO_SHAPE = Shape()


def camel(name: str) -> str:
    """``build_tower`` / ``build-tower`` -> ``buildTower`` (a GraphQL field name)."""
    parts = [part for part in re.split(r"[^0-9A-Za-z]+", name) if part]
    if not parts:
        raise UnsupportedType(f"no GraphQL name can be made from {name!r}")
    head, *tail = parts
    out = head[:1].lower() + head[1:] + "".join(p[:1].upper() + p[1:] for p in tail)
    return out if _GRAPHQL_NAME.match(out) else "_" + out


def pascal(name: str) -> str:
    """``active_seats`` -> ``ActiveSeats`` (a fragment of a GraphQL type name)."""
    out = camel(name)
    return out[:1].upper() + out[1:]


def _attribute(name: str) -> str:
    """A Python attribute name for a GraphQL name (``pass`` -> ``pass_``)."""
    return name + "_" if keyword.iskeyword(name) else name


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    """The Python attribute of the engine's class."""
    wire: str
    """The key in the wire JSON (the alias, when the class declares one)."""
    annotation: Any
    required: bool
    default: Any
    description: str | None


def _split_annotated(annotation: Any) -> tuple[Any, list[Any]]:
    """The type under ``Annotated`` metadata and named aliases (``TypeAliasType``: one schema
    in OpenAPI, its value here), and the metadata."""
    metadata: list[Any] = []
    while True:
        if isinstance(annotation, TypeAliasType):
            annotation = annotation.__value__
        elif get_origin(annotation) is Annotated:
            annotation, *extra = get_args(annotation)
            metadata.extend(extra)
        else:
            return annotation, metadata


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and (
        issubclass(tp, BaseModel) or dataclasses.is_dataclass(tp)
    )


def _description(cls: type) -> str | None:
    doc = cls.__dict__.get("__doc__")
    if not doc or (dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}(")):
        return None  # the signature dataclasses write when there is no docstring
    return " ".join(doc.split())


def _fields(cls: type) -> list[_Field]:
    """The fields of a pydantic model or a dataclass, in declaration order."""
    if issubclass(cls, BaseModel):
        if not cls.__pydantic_complete__:
            # Forward references (a field typed with a model defined further down the module)
            # are resolved when pydantic completes the class, which it otherwise does lazily.
            cls.model_rebuild()
        out = []
        for name, info in cls.model_fields.items():
            annotation = info.rebuild_annotation()
            alias = info.validation_alias if isinstance(info.validation_alias, str) else None
            out.append(
                _Field(
                    name=name,
                    wire=alias or info.alias or name,
                    annotation=annotation,
                    required=info.is_required(),
                    default=None if info.is_required() else info.get_default(),
                    description=info.description,
                )
            )
        return out
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for field in dataclasses.fields(typing.cast(Any, cls)):
        annotation = hints[field.name]
        _, metadata = _split_annotated(annotation)
        found = next((m for m in metadata if isinstance(m, FieldInfo)), None)
        field_info = found if isinstance(found, FieldInfo) else None
        if isinstance(field.default, FieldInfo):
            field_info = field.default
        required = (
            field.default is dataclasses.MISSING
            and field.default_factory is dataclasses.MISSING
            and (field_info is None or field_info.is_required())
        )
        default = None
        if field.default is not dataclasses.MISSING and not isinstance(field.default, FieldInfo):
            default = field.default
        elif field_info is not None and not field_info.is_required():
            default = field_info.get_default()
        alias = field_info.alias if field_info is not None else None
        out.append(
            _Field(
                name=field.name,
                wire=alias or field.name,
                annotation=annotation,
                required=required,
                default=default,
                description=field_info.description if field_info is not None else None,
            )
        )
    return out


def union_members(annotation: Any) -> tuple[list[type], str] | None:
    """``(members, discriminator)`` when ``annotation`` is a union of tagged models."""
    inner, metadata = _split_annotated(annotation)
    if get_origin(inner) not in (Union, types.UnionType):
        return None
    members = [arg for arg in get_args(inner) if arg is not type(None)]
    if not all(_is_model(member) for member in members):
        return None
    discriminator = "type"
    for item in metadata:
        if isinstance(item, FieldInfo) and isinstance(item.discriminator, str):
            discriminator = item.discriminator
    return members, discriminator


def _tag(member: type, discriminator: str) -> str:
    for field in _fields(member):
        if field.name == discriminator or field.wire == discriminator:
            inner, _ = _split_annotated(field.annotation)
            values = get_args(inner) if get_origin(inner) is Literal else ()
            if len(values) == 1 and isinstance(values[0], str):
                return values[0]
    raise UnsupportedType(
        f"{member.__name__}: union members need a single-valued Literal {discriminator!r} tag"
    )


def _identity(value: Any) -> Any:
    return value


def _enum_value(value: Any) -> Any:
    # A member when the client sent it; the raw wire value for a default from the engine.
    return value.value if isinstance(value, enum.Enum) else value


class Converter:
    """Builds (and caches) Strawberry types for wire types; one instance per schema.

    A GraphQL name maps to exactly one Python class: two engine classes with the same name,
    or a name clashing with ``reserved`` ones, are refused rather than silently merged.
    """

    def __init__(
        self,
        reserved: Iterable[str] = (),
        shapes: Mapping[Any, Shape] | None = None,
        *,
        base: Converter | None = None,
    ) -> None:
        """``shapes``: by class, or by ``Literal[...]`` type for its enum. ``base``: a converter
        whose types this one reuses (the schema's game-independent types, made once)."""
        self._names: dict[str, object] = dict(base._names) if base else {}
        for name in reserved:
            self._names.setdefault(name, "reserved")
        self._outputs: dict[type, Codec] = dict(base._outputs) if base else {}
        self._inputs: dict[type, Codec] = dict(base._inputs) if base else {}
        self._enums: dict[object, type[enum.Enum]] = dict(base._enums) if base else {}
        self._adapters: dict[type, TypeAdapter[Any]] = {}
        self._building: set[tuple[str, type]] = set()
        self._shapes: dict[object, Shape] = dict(base._shapes) if base else {}
        for key, shape in (shapes or {}).items():
            self.shape(key, shape)

    def shape(self, key: Any, shape: Shape) -> None:
        """Publish ``key`` (a class, or a ``Literal[...]``) as ``shape`` says; before its first
        use."""
        if get_origin(key) is Literal:
            key = ("literal", get_args(key))
        if key in self._outputs or key in self._inputs or key in self._enums:
            raise UnsupportedType(f"{key!r} is already published: shape it before its first use")
        self._shapes[key] = shape

    def names(self) -> list[str]:
        """Every GraphQL type name this converter made or reserved."""
        return list(self._names)

    # -- names ---------------------------------------------------------------------------

    def claim(self, name: str, owner: object) -> str:
        """Reserve a GraphQL type name for ``owner``; refuse a clash."""
        if not _GRAPHQL_NAME.match(name) or name.startswith("__"):
            raise UnsupportedType(f"{name!r} is not a GraphQL type name")
        known = self._names.setdefault(name, owner)
        if known is not owner:
            raise UnsupportedType(
                f"two types would be named {name!r} in the GraphQL schema: "
                f"{known!r} and {owner!r} (prefix the engine's type names)"
            )
        return name

    # -- outputs -------------------------------------------------------------------------

    def output(self, annotation: Any, *, owner: str = "", field: str = "") -> Codec:
        """The GraphQL output annotation for ``annotation`` and its value converter."""
        union = union_members(annotation)
        inner, _ = _split_annotated(annotation)
        if union is not None and type(None) not in get_args(inner):
            return self.output_union(f"{owner}{pascal(field)}", union[0], union[1])
        if get_origin(inner) in (Union, types.UnionType):
            args = get_args(inner)
            if type(None) in args and len(args) >= 2:
                rest = [arg for arg in args if arg is not type(None)]
                base = rest[0] if len(rest) == 1 else Union[tuple(rest)]  # noqa: UP007
                codec = self.output(base, owner=owner, field=field)
                return Codec(Optional(codec.annotation), _or_none(codec.convert))
            raise UnsupportedType(f"{owner}.{field}: untagged union {inner!r}")
        return self._common(inner, owner, field, self.output)

    def output_union(
        self,
        name: str,
        members: list[type],
        discriminator: str | None = "type",
        *,
        description: str | None = None,
    ) -> Codec:
        """A GraphQL union of the object types of ``members``.

        Values are matched by class; JSON values (dicts) by their ``discriminator`` tag.
        """
        codecs = [self.output(member) for member in members]
        by_class = {member: codec for member, codec in zip(members, codecs, strict=True)}
        by_tag: dict[Any, tuple[type, Codec]] = {}
        if discriminator is not None:
            by_tag = {
                _tag(member, discriminator): (member, codec)
                for member, codec in zip(members, codecs, strict=True)
            }
        key = ("union", name)
        self.claim(name, key)
        annotation = Annotated[  # type: ignore[valid-type]
            Union[tuple(codec.annotation for codec in codecs)],  # noqa: UP007
            strawberry.union(name, description=description),
        ]

        def convert(value: Any) -> Any:
            codec = by_class.get(type(value))
            if codec is None and isinstance(value, dict) and discriminator is not None:
                tagged = by_tag.get(value.get(discriminator))
                codec = tagged[1] if tagged is not None else None
            if codec is None:
                raise TypeError(f"{type(value).__name__} is not a member of {name}")
            return codec.convert(value)

        return Codec(annotation, convert)

    def _object(self, cls: type) -> Codec:
        codec = self._outputs.get(cls)
        if codec is not None:
            return codec
        shape = self._shapes.get(cls, _NO_SHAPE)
        name = self.claim(shape.name or cls.__name__, cls)
        if ("out", cls) in self._building:
            raise UnsupportedType(f"{name} refers to itself; recursive types are not supported")
        self._building.add(("out", cls))
        fields = [field for field in _fields(cls) if field.name not in shape.omit]
        if shape.order:
            rank = {name: index for index, name in enumerate(shape.order)}
            fields.sort(key=lambda f: rank.get(f.name, len(rank)))
        codecs: dict[str, Codec] = {}
        namespace: dict[str, Any] = {"__annotations__": {}, "__module__": __name__}
        for field in fields:
            codecs[field.name] = self._field_codec(shape, field, name, output=True)
            namespace["__annotations__"][field.name] = codecs[field.name].annotation
            namespace[field.name] = strawberry.field(
                name=camel(shape.renamed.get(field.name, field.name)),
                description=_field_description(shape, field, name),
            )
        if not fields:
            raise UnsupportedType(f"{name} has no field; GraphQL object types need one")
        bases = tuple(self.output(base).annotation for base in shape.implements)
        make: Any = strawberry.interface if shape.interface else strawberry.type
        gql = make(type(name, bases, namespace), name=name,
                   description=_description(cls) or shape.description)
        adapter = self._adapter(cls)

        def convert(value: Any) -> Any:
            if not isinstance(value, cls):
                value = adapter.validate_python(value)
            return gql(**{key: c.convert(getattr(value, key)) for key, c in codecs.items()})

        codec = self._outputs[cls] = Codec(gql, convert)
        self._building.discard(("out", cls))
        return codec

    # -- inputs --------------------------------------------------------------------------

    def input(self, annotation: Any, *, owner: str = "", field: str = "") -> Codec:
        """The GraphQL input annotation for ``annotation`` and its converter to wire JSON."""
        union = union_members(annotation)
        inner, _ = _split_annotated(annotation)
        if union is not None and type(None) not in get_args(inner):
            return self.input_one_of(f"{owner}{pascal(field)}Input", union[0], union[1])
        if get_origin(inner) in (Union, types.UnionType):
            args = get_args(inner)
            if type(None) in args and len(args) >= 2:
                rest = [arg for arg in args if arg is not type(None)]
                base = rest[0] if len(rest) == 1 else Union[tuple(rest)]  # noqa: UP007
                codec = self.input(base, owner=owner, field=field)
                return Codec(Optional(codec.annotation), _or_none(codec.convert))
            raise UnsupportedType(f"{owner}.{field}: untagged union {inner!r}")
        return self._common(inner, owner, field, self.input)

    def input_one_of(
        self,
        name: str,
        members: list[type],
        discriminator: str = "type",
        *,
        description: str | None = None,
    ) -> Codec:
        """An ``@oneOf`` input with one field per member, keyed by the member's tag."""
        self.claim(name, ("one_of", name))
        namespace: dict[str, Any] = {"__annotations__": {}, "__module__": __name__}
        decoders: dict[str, Callable[[Any], Any]] = {}
        for member in members:
            tag = _tag(member, discriminator)
            key = camel(tag)
            attribute = _attribute(key)
            if attribute in decoders:
                raise UnsupportedType(f"{name}: two members are called {key!r}")
            payload = [
                f for f in _fields(member) if f.name != discriminator and f.wire != discriminator
            ]
            if payload:
                codec = self._input_object(member, discriminator)
                namespace["__annotations__"][attribute] = Maybe[codec.annotation]  # type: ignore[misc,name-defined]
                decoders[attribute] = codec.convert
            else:
                namespace["__annotations__"][attribute] = Maybe[bool]  # type: ignore[misc]
                decoders[attribute] = _flag_decoder(discriminator, tag, key)
            namespace[attribute] = strawberry.field(
                name=key, default=None, description=_description(member)
            )
        gql = strawberry.input(type(name, (), namespace), name=name, one_of=True,
                               description=description)

        def convert(value: Any) -> Any:
            return self.decode_one_of(value, decoders)[1]

        return Codec(gql, convert)

    @staticmethod
    def decode_one_of(value: Any, decoders: dict[str, Callable[[Any], Any]]) -> tuple[str, Any]:
        """The attribute that is set in a ``@oneOf`` input and its decoded value."""
        chosen = [
            (attribute, getattr(value, attribute))
            for attribute in decoders
            if getattr(value, attribute, None) is not None
        ]
        if len(chosen) != 1:
            raise MalformedInput("exactly one field of a @oneOf input must be set")
        attribute, item = chosen[0]
        if isinstance(item, Some):
            item = item.value
        if item is None:
            raise MalformedInput("the field of a @oneOf input must not be null")
        return attribute, decoders[attribute](item)

    def _input_object(self, cls: type, discriminator: str | None = None) -> Codec:
        codec = self._inputs.get(cls)
        if codec is not None:
            return codec
        shape = self._shapes.get(cls, _NO_SHAPE)
        name = self.claim(shape.input_name or f"{cls.__name__}Input", ("input", cls))
        if ("in", cls) in self._building:
            raise UnsupportedType(f"{name} refers to itself; recursive types are not supported")
        self._building.add(("in", cls))
        namespace: dict[str, Any] = {"__annotations__": {}, "__module__": __name__}
        constants: dict[str, Any] = {}
        decoders: list[tuple[_Field, Codec, bool]] = []
        for field in _fields(cls):
            if field.name in shape.omit:
                continue
            inner, _ = _split_annotated(field.annotation)
            values = get_args(inner) if get_origin(inner) is Literal else ()
            if len(values) == 1:
                constants[field.wire] = values[0]  # a tag: implied by the type
                continue
            codec = self._field_codec(shape, field, cls.__name__, output=False)
            nullable = _is_optional(field.annotation)
            annotation = codec.annotation
            default: Any = strawberry.UNSET
            if not field.required:
                if not nullable and type(field.default) in (int, str, bool, float):
                    default = field.default  # shown in the SDL, never null
                else:
                    annotation = Optional(annotation) if not nullable else annotation
            namespace["__annotations__"][field.name] = annotation
            namespace[field.name] = strawberry.field(
                name=camel(field.name), description=_field_description(shape, field, name),
                default=default,
            )
            decoders.append((field, codec, nullable))
        if not decoders:
            raise UnsupportedType(f"{name} has no field; GraphQL input types need one")
        gql = strawberry.input(type(name, (), namespace), name=name,
                               description=_description(cls) or shape.description)

        def convert(value: Any) -> dict[str, Any]:
            out = dict(constants)
            for field, field_codec, nullable in decoders:
                item = getattr(value, field.name, strawberry.UNSET)
                if item is strawberry.UNSET or (item is None and not nullable):
                    if field.required and nullable:
                        out[field.wire] = None
                    continue  # absent: the engine's default applies (or it reports "missing")
                out[field.wire] = field_codec.convert(item)
            return out

        codec = self._inputs[cls] = Codec(gql, convert)
        self._building.discard(("in", cls))
        return codec

    # -- shared ----------------------------------------------------------------------------

    def _field_codec(self, shape: Shape, field: _Field, owner: str, *, output: bool) -> Codec:
        own = shape.fields.get(field.name)
        if own is not None:
            return own
        if field.name in shape.ids:
            inner, _ = _split_annotated(field.annotation)
            if _is_optional(field.annotation):
                return Codec(Optional(strawberry.ID), _or_none(strawberry.ID))
            if inner is not str:
                raise UnsupportedType(f"{owner}.{field.name}: only a str can be an ID")
            return Codec(strawberry.ID, strawberry.ID)
        recurse = self.output if output else self.input
        return recurse(field.annotation, owner=owner, field=field.name)

    def _common(
        self, inner: Any, owner: str, field: str, recurse: Callable[..., Codec]
    ) -> Codec:
        output = recurse == self.output
        if inner in _SCALARS:
            return Codec(_SCALARS[inner], _identity)
        if inner is dt.datetime:
            return Codec(str, rfc3339 if output else _identity)
        if get_origin(inner) is Literal:
            return self._literal(get_args(inner), owner, field, output)
        if isinstance(inner, type) and issubclass(inner, enum.Enum):
            return self._enum(inner, output)
        origin = get_origin(inner)
        if origin in (list, set, frozenset, tuple) or inner in (list, set, frozenset, tuple):
            args = get_args(inner)
            if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
                args = args[:1]
            if len(set(args)) != 1:
                raise UnsupportedType(f"{owner}.{field}: {inner!r} is not a homogeneous list")
            item = recurse(args[0], owner=owner, field=field)
            return Codec(list[item.annotation], _each(item.convert))  # type: ignore[name-defined]
        if _is_model(inner):
            return self._object(inner) if output else self._input_object(inner)
        raise UnsupportedType(f"{owner}.{field}: {inner!r} has no GraphQL shape")

    def _literal(self, values: tuple[Any, ...], owner: str, field: str, output: bool) -> Codec:
        kinds = {type(value) for value in values}
        if len(kinds) != 1 or next(iter(kinds)) not in (str, int, bool):
            raise UnsupportedType(f"{owner}.{field}: mixed Literal {values!r}")
        kind = next(iter(kinds))
        if kind is not str or len(values) == 1 or not all(
            _GRAPHQL_NAME.match(v) and v not in _RESERVED_ENUM_VALUES for v in values
        ):
            return Codec(kind, _identity)  # a tag, or values GraphQL cannot name
        # One enum per set of values: a Literal alias used by several fields (a tile id in
        # both Build and Rebuild) is one GraphQL enum, named after its first use.
        key = ("literal", values)
        gql_enum = self._enums.get(key)
        if gql_enum is None:
            shape = self._shapes.get(key, _NO_SHAPE)
            name = self.claim(shape.name or f"{owner}{pascal(field)}", key)
            try:
                members = {(v.upper() if shape.upper_case else v): v for v in values}
                python_enum = enum.Enum(name, members)  # type: ignore[misc]
            except (ValueError, TypeError):  # a name Python reserves for enums (``mro``...)
                return Codec(str, _identity)
            gql_enum = self._enums[key] = strawberry.enum(
                python_enum, name=name, description=shape.description
            )
        found = gql_enum
        if output:
            return Codec(gql_enum, lambda v: found(v))
        return Codec(gql_enum, _enum_value)

    def _enum(self, cls: type[enum.Enum], output: bool) -> Codec:
        gql_enum = self._enums.get(cls)
        if gql_enum is None:
            name = self.claim(cls.__name__, cls)
            copy = enum.Enum(name, {m.name: m.value for m in cls})  # type: ignore[misc]
            gql_enum = self._enums[cls] = strawberry.enum(copy, name=name)
        members = gql_enum

        def to_gql(value: Any) -> Any:
            return members[value.name] if isinstance(value, cls) else members(value)

        if output:
            return Codec(gql_enum, to_gql)
        return Codec(gql_enum, _enum_value)

    def _adapter(self, cls: type) -> TypeAdapter[Any]:
        adapter = self._adapters.get(cls)
        if adapter is None:
            adapter = self._adapters[cls] = TypeAdapter(cls)
        return adapter


_DATETIME: TypeAdapter[dt.datetime] = TypeAdapter(dt.datetime)


def rfc3339(value: Any) -> Any:
    """A time as REST writes it (RFC 3339; ``Z`` for UTC); a string is already one."""
    return value if isinstance(value, str) else _DATETIME.dump_python(value, mode="json")


def _field_description(shape: Shape, field: _Field, owner: str) -> str | None:
    note = shape.notes.get(field.name)
    reshaped = field.name in shape.fields or field.name in shape.renamed
    if note is not None and field.description is not None and not reshaped:
        # Only a field GraphQL reshapes (its own codec) or renames may say something else
        # than its model: the wire's description may not fit the GraphQL field.
        raise UnsupportedType(
            f"{owner}.{field.name}: the model describes it; a Shape note may not shadow that"
        )
    return field.description if note is None else note


def Optional(annotation: Any) -> Any:
    """``annotation | None`` for a runtime annotation (classes, ``list[...]``, unions)."""
    return Union[annotation, None]  # noqa: UP007


def _is_optional(annotation: Any) -> bool:
    inner, _ = _split_annotated(annotation)
    return get_origin(inner) in (Union, types.UnionType) and type(None) in get_args(inner)


def _or_none(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def convert_optional(value: Any) -> Any:
        return None if value is None else convert(value)

    return convert_optional


def _each(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def convert_list(value: Any) -> list[Any]:
        return [convert(item) for item in value]

    return convert_list


def _flag_decoder(discriminator: str, tag: str, key: str) -> Callable[[Any], Any]:
    def convert(value: Any) -> dict[str, Any]:
        if value is not True:
            raise MalformedInput(f"{key}: set it to true to choose this action")
        return {discriminator: tag}

    return convert
