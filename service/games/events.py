"""Typed events: the parts every game's ``events.py`` shares (docs/events.md).

An engine reports ``base.Event(kind, public, private)``; a seat sees ``{"kind": kind,
"data": public + private[seat]}`` (``Event.for_seat``; a spectator: ``public`` only). Each game
describes every kind it emits in ``service/games/<game>/events.py`` -- data, not rules:

- one ``EventData`` model per kind (its ``kind`` class variable): the ``data`` as a seat may
  see it, every field typed and described; a field only some seats see, or only some events
  of the kind carry, is declared with ``sometimes(...)`` (absent otherwise, never null);
- ``event_union(...)`` wraps each in an envelope ``<Prefix><Kind>Event {kind, data}`` (the wire
  shape of ``act`` answers and log entries) and returns the game's union, discriminated by
  ``kind``: a ``RootModel`` named ``<Prefix>Event``, the engine's ``Events`` attribute.

The OpenAPI document and the GraphQL types are generated from these models;
``tests/test_event_models.py`` holds every event the engines emit to them (strictly, extra
fields forbidden) and every model to some emitted event. Event lists stay open: clients must
accept kinds they were not generated with, so the documents add ``UnknownEvent`` (any kind,
untyped data) as the last alternative, and published object schemas do not forbid fields added
later (``additionalProperties`` is left out).
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, RootModel, create_model
from pydantic.config import JsonDict, JsonValue


def _open_object(schema: dict[str, Any]) -> None:
    # The models forbid unknown fields (the engines are held to them exactly), but a client
    # must accept fields added later: the published schema does not promise there are none.
    schema.pop("additionalProperties", None)


def _absent_unless_set(schema: dict[str, Any]) -> None:
    # A `sometimes` field is absent, never null, when it does not apply: publish it as an
    # optional property of its own type (no `default: null`, no null alternative).
    schema.pop("default", None)
    alternatives = schema.get("anyOf")
    if isinstance(alternatives, list):
        rest = [a for a in alternatives if a != {"type": "null"}]
        if len(rest) == 1:
            del schema["anyOf"]
            schema.update(rest[0])


def _no_default(schema: dict[str, Any]) -> None:
    # ``text`` defaults to "" for the engines' tests (they validate {kind, data}); answers
    # always carry it, so the published schema has no default (it is required).
    schema.pop("default", None)


EVENT_CONFIG = ConfigDict(extra="forbid", frozen=True, json_schema_extra=_open_object)


class EventPart(BaseModel):
    """A value nested in an event's data (a card, the items a seat gained)."""

    model_config = EVENT_CONFIG


class EventData(EventPart):
    """The data of one event kind, as a seat (or a spectator) may see it."""

    kind: ClassVar[str] = ""


TEXT_DESCRIPTION = (
    "The event in one or a few sentences, in the response's language (Content-Language), "
    "said from what the caller may see: the same facts as data, never more."
)


class EventEnvelope(BaseModel):
    """Base of the generated envelopes ``{kind, data, text}``. ``text`` is the service's
    sentence (``service.texts``; engines report data only): required in answers."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_extra=_open_object,
        json_schema_serialization_defaults_required=True,
    )


def sometimes(description: str) -> Any:
    """A field that only some seats see, or only some events of the kind carry: absent
    otherwise (never null). Declare it ``T | None`` (None: absent)."""
    return Field(default=None, description=description, json_schema_extra=_absent_unless_set)


class UnknownEvent(BaseModel):
    """An event of a kind this document does not describe: a kind added after the client was
    generated, or a game without event models. Clients must accept such events (and may
    ignore them)."""

    model_config = ConfigDict(frozen=True)
    kind: str = Field(description="The event kind (lower_snake_case).")
    data: dict[str, Any] = Field(description="The event's fields as the caller may see them.")
    text: str = Field(description=TEXT_DESCRIPTION)


def _pascal(kind: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in kind.split("_"))


def event_union(
    prefix: str, title: str, module: str, data_models: Sequence[type[EventData]]
) -> type[RootModel[Any]]:
    """The envelopes of ``data_models`` (``<prefix><Kind>Event``) and their union, a root
    model named ``<prefix>Event`` discriminated by ``kind``."""
    envelopes: list[type[BaseModel]] = []
    seen: set[str] = set()
    for data in data_models:
        kind = data.kind
        if not kind or kind in seen:
            raise ValueError(f"{data.__name__}: a missing or repeated event kind {kind!r}")
        seen.add(kind)
        tag: Any = Literal[kind]
        envelopes.append(
            create_model(
                f"{prefix}{_pascal(kind)}Event",
                __base__=EventEnvelope,
                __module__=module,
                __doc__=data.__doc__,
                kind=(tag, Field(description=f"The event kind: {kind}.")),
                data=(data, Field(description="The event's fields as the caller may see them.")),
                text=(str, Field(default="", description=TEXT_DESCRIPTION,
                                 json_schema_extra=_no_default)),
            )
        )
    kinds = sorted(seen)
    root: Any = Annotated[Union[tuple(envelopes)], Field(discriminator="kind")]  # noqa: UP007

    def body(namespace: dict[str, Any]) -> None:
        namespace["__module__"] = module
        namespace["__doc__"] = (
            f"An event of {title}, by kind: {', '.join(kinds)}. The list is open: accept "
            "kinds not listed here (see UnknownEvent)."
        )
        listed: list[JsonValue] = list(kinds)
        extra: JsonDict = {"x-event-kinds": listed}
        namespace["model_config"] = ConfigDict(frozen=True, json_schema_extra=extra)

    union: type[RootModel[Any]] = types.new_class(f"{prefix}Event", (RootModel[root],), {}, body)
    return union


def members(union: type[RootModel[Any]]) -> tuple[type[BaseModel], ...]:
    """The envelope models of a game's event union, in declaration order."""
    found: tuple[type[BaseModel], ...] = get_args(union.model_fields["root"].annotation)
    return found


def data_model(envelope: type[BaseModel]) -> type[EventData]:
    """The data model of an envelope."""
    model = envelope.model_fields["data"].annotation
    assert isinstance(model, type) and issubclass(model, EventData)
    return model


def kinds(union: type[RootModel[Any]]) -> list[str]:
    """The kinds a game's event union describes, sorted."""
    return sorted(data_model(envelope).kind for envelope in members(union))


def any_event(name: str, engines: Sequence[object]) -> type[RootModel[Any]]:
    """A root model ``name`` for one event of any of ``engines``: each game's union (sorted
    by game id), then ``UnknownEvent``. An ``anyOf``, not a ``oneOf``: a known event also
    matches ``UnknownEvent``, and a client that tries the alternatives in order (as
    openapi-python-client does) gets the typed one first and never fails on a new kind."""
    ordered = sorted(engines, key=lambda engine: str(getattr(engine, "id", "")))
    unions = [u for u in map(event_union_of, ordered) if u is not None]
    listed = {str(getattr(e, "id", "")): kinds(u) for e in ordered if (u := event_union_of(e))}
    root: Any = Union[(*unions, UnknownEvent)]

    def body(namespace: dict[str, Any]) -> None:
        namespace["__module__"] = __name__
        namespace["__doc__"] = (
            "Something that happened, as the caller may see it: {kind, data}, typed per game "
            "(the union of the match's game, discriminated by kind). Kinds are an open list: "
            "an event of a kind not described here parses as UnknownEvent. Known kinds per "
            "game: x-event-kinds. See docs/events.md."
        )
        per_game: JsonDict = {game: list[JsonValue](k) for game, k in listed.items()}
        extra: JsonDict = {"x-event-kinds": per_game}
        namespace["model_config"] = ConfigDict(frozen=True, json_schema_extra=extra)

    model: type[RootModel[Any]] = types.new_class(name, (RootModel[root],), {}, body)
    return model


def event_union_of(engine: object) -> type[RootModel[Any]] | None:
    """An engine's event union (its optional ``Events`` attribute); None: its events are
    untyped (every one an ``UnknownEvent``)."""
    union = getattr(engine, "Events", None)
    if isinstance(union, type) and issubclass(union, RootModel):
        return union
    return None
