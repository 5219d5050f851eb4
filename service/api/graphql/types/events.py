"""The GraphQL event types, generated from the engines' event models (``engine.Events``,
``service/games/events.py``; docs/events.md).

- ``interface Event { kind: String! }``: every ``events`` field is ``[Event!]!``, so ``kind``
  is selectable without fragments and a kind this schema lacks still answers.
- Per game and kind: ``<Prefix><Kind>Event implements Event { kind, data }`` with ``data`` an
  object type generated from the kind's data model (``<Prefix><Kind>Data``; no ``data`` field
  for a kind without any), members of the game's union ``<Prefix>Event``.
- ``UnknownEvent implements Event { kind, json: JSON! }``: an event no model describes (a
  game without event models, or data its model refuses -- logged, never an error). Its field
  is not called ``data`` so that one query selects it and the typed events without aliases.

GraphQL refuses a query selecting one name with two types in sibling fragments, so within one
game each data field name has one type across every kind: nullable if it is optional in any
kind, one enum of every value where kinds list different values (``GkEventReason``). A client
selects every event fragment of its game in one query without aliases.
"""

from __future__ import annotations

import logging
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin

import strawberry
from pydantic import BaseModel, ValidationError
from strawberry.annotation import StrawberryAnnotation
from strawberry.scalars import JSON

from service.games.base import Engine
from service.games.events import EventData, data_model, event_union_of, members
from service.matches.models import EventOut

from ..convert import Codec, Converter, Optional, UnsupportedType, _split_annotated, camel

log = logging.getLogger(__name__)


@strawberry.interface(
    description="Something that happened, as the caller may see it. Select the fields of a "
    "game's events with fragments on its event types (the union <Game>Event lists them); "
    "kinds are an open list (UnknownEvent)."
)
class Event:
    kind: str = strawberry.field(
        description="The event kind (lower_snake_case): an open list, see docs/events.md."
    )
    text: str = strawberry.field(
        description="The event in one or a few sentences, in the request's language, said "
        "from what the caller may see."
    )


@strawberry.type(
    description="An event of a kind this schema does not describe (added after the client "
    "was written, or of a game without typed events). Accept it; you may ignore it."
)
class UnknownEvent(Event):
    # Not `data`: a query selecting typed events' `data` and this one would need an alias.
    json: JSON = strawberry.field(
        description="The event's fields visible to the caller, as a JSON object."
    )


@dataclass(frozen=True)
class EventTypes:
    """The event types of one schema and their converter."""

    annotation: Any
    """``Event``, the interface of ``events`` fields."""
    convert: Callable[[EventOut], Any]
    """A service-layer event -> an instance of its GraphQL type."""
    types: list[Any]
    """Types to add to the schema: the implementations and the per-game unions (no field
    refers to them directly)."""


Decoder = Callable[[EventOut], Any]


def build_event_types(converter: Converter, engines: Sequence[Engine[Any]]) -> EventTypes:
    converter.claim("UnknownEvent", UnknownEvent)
    decoders: dict[str, dict[str, Decoder]] = {}
    extra: list[Any] = []
    for engine in sorted(engines, key=lambda e: e.id):
        union = event_union_of(engine)
        if union is None:
            continue
        name = union.__name__
        envelopes = members(union)
        datas = [data_model(envelope) for envelope in envelopes]
        fields = _game_fields(name, datas)
        gql_members: list[Any] = []
        table: dict[str, Decoder] = {}
        for envelope, data in zip(envelopes, datas, strict=True):
            gql, decode = _envelope(converter, name, envelope, data, fields)
            gql_members.append(gql)
            table[data.kind] = decode
        converter.claim(name, ("event union", name))
        extra.extend(gql_members)
        extra.append(
            StrawberryAnnotation(
                Annotated[
                    Union[tuple(gql_members)],  # noqa: UP007
                    strawberry.union(name, description=_text(union.__doc__)),
                ]
            ).resolve()
        )
        decoders[engine.id] = table

    def convert(event: EventOut) -> Any:
        games = [event.game] if event.game is not None else list(decoders)
        for game in games:
            decode = decoders.get(game, {}).get(event.kind)
            if decode is None:
                continue
            try:
                return decode(event)
            except ValidationError as error:
                if event.game is not None:
                    log.warning("%s event %r does not match its model: %s", game, event.kind,
                                error)
        return UnknownEvent(kind=event.kind, text=event.text, json=cast(JSON, event.data))

    extra.append(UnknownEvent)
    return EventTypes(annotation=Event, convert=convert, types=extra)


def _text(doc: str | None) -> str | None:
    return " ".join(doc.split()) if doc else None


def _game_fields(owner: str, datas: list[type[EventData]]) -> dict[str, Any]:
    """One annotation per data field name across the game's kinds (see the module doc)."""
    seen: dict[str, list[Any]] = {}
    for data in datas:
        for name, info in data.model_fields.items():
            seen.setdefault(name, []).append(info.annotation)
    return {name: _widest(owner, name, annotations) for name, annotations in seen.items()}


def _widest(owner: str, name: str, annotations: list[Any]) -> Any:
    nullable = False
    inners: list[Any] = []
    for annotation in annotations:
        inner, is_optional = _without_none(annotation)
        nullable = nullable or is_optional
        if inner not in inners:
            inners.append(inner)
    if len(inners) == 1:
        widest = inners[0]
    else:
        literals = [_split_annotated(inner)[0] for inner in inners]
        if not all(get_origin(lit) is Literal for lit in literals):
            raise UnsupportedType(
                f"{owner}: the data field {name!r} has different types in different kinds "
                f"({inners!r}); GraphQL could not merge them in one query"
            )
        values = list(dict.fromkeys(v for lit in literals for v in get_args(lit)))
        widest = Literal[tuple(values)]
    return Optional(widest) if nullable else widest


def _without_none(annotation: Any) -> tuple[Any, bool]:
    if get_origin(annotation) in (Union, types.UnionType):
        args = get_args(annotation)
        if type(None) in args:
            rest = [arg for arg in args if arg is not type(None)]
            return (rest[0] if len(rest) == 1 else Union[tuple(rest)]), True  # noqa: UP007
    return annotation, False


def _envelope(
    converter: Converter, owner: str, envelope: type[BaseModel], data: type[EventData],
    fields: dict[str, Any],
) -> tuple[Any, Decoder]:
    name = converter.claim(envelope.__name__, envelope)
    description = _text(data.__doc__)
    namespace: dict[str, Any] = {"__annotations__": {}, "__module__": __name__}
    data_type: Any = None
    codecs: dict[str, Codec] = {}
    if data.model_fields:
        data_name = converter.claim(data.__name__, data)
        data_ns: dict[str, Any] = {"__annotations__": {}, "__module__": __name__}
        for field, info in data.model_fields.items():
            codecs[field] = converter.output(fields[field], owner=owner, field=field)
            data_ns["__annotations__"][field] = codecs[field].annotation
            data_ns[field] = strawberry.field(name=camel(field), description=info.description)
        data_type = strawberry.type(
            type(data_name, (), data_ns), name=data_name,
            description=f"The fields of {name}, as the caller may see them.",
        )
        namespace["__annotations__"]["data"] = data_type
        namespace["data"] = strawberry.field(
            description="The event's fields as the caller may see them."
        )
    gql = strawberry.type(type(name, (Event,), namespace), name=name, description=description)

    def decode(event: EventOut) -> Any:
        value = data.model_validate(event.data)
        if data_type is None:
            return gql(kind=event.kind, text=event.text)
        converted = {key: codec.convert(getattr(value, key)) for key, codec in codecs.items()}
        return gql(kind=event.kind, text=event.text, data=data_type(**converted))

    return gql, decode


__all__ = ["Event", "EventTypes", "UnknownEvent", "build_event_types"]
