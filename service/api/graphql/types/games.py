"""The per-game GraphQL types, generated from the registered engines (``convert.py``).

For every engine: its ``View`` (an object type, a member of the ``MatchView`` union), its
``Action`` members (object types, members of the ``Move`` union), an ``@oneOf`` input with
one field per action (``<Prefix>ActionInput``) and its typed events (``events.py``).
``ActionInput`` is an ``@oneOf`` keyed by game id, so one ``act`` mutation takes any game's
move and the server can check that the move belongs to the match's game. Its ``Options``
model becomes an input (``Ny1901OptionsInput``), a field of ``MatchOptionsInput``, the
``@oneOf`` of ``createMatch`` keyed by game id the same way, and an object type, a member of
the ``MatchOptions`` union (a match's options, as created). ``Result`` (shared by all games)
is generated the same way.

Engines are taken sorted by id, so the SDL does not depend on registration order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Union

import strawberry

from service.games.base import Engine
from service.matches.outcome import MatchOutcome

from ..convert import Codec, Converter, MalformedInput, camel, pascal, union_members
from .events import EventTypes, build_event_types

NO_GAME = "none"


@dataclass(frozen=True)
class GameTypes:
    """The generated types and their converters, for one set of engines."""

    view: Codec
    """``MatchView``: converts an engine's View value."""
    move: Codec
    """``Move``: converts an engine's Action value."""
    action_input: Any
    """``ActionInput``: the ``@oneOf`` input of ``act``."""
    result: Codec
    """``Result``."""
    decode_action: Callable[[Any], tuple[str, dict[str, Any]]]
    """``ActionInput`` value -> ``(game id, wire JSON of the action)``."""
    events: EventTypes
    """``Event`` (an interface), the per-game event unions and their converter."""
    options_input: Any = None
    """``MatchOptionsInput``: the ``@oneOf`` of ``createMatch``'s typed options."""
    decode_options: Callable[[Any], tuple[str, dict[str, Any]]] = lambda v: (NO_GAME, {})
    """``MatchOptionsInput`` value -> ``(game id, wire JSON of the options)``."""
    options: Codec | None = None
    """``MatchOptions``: converts an engine's Options value (a match's options, as created);
    a placeholder union when no hosted game has options."""


def type_prefix(engine: Engine[Any], names: Sequence[str]) -> str:
    """The common prefix of an engine's type names (``Ny1901``, ``Gk``), cut at a word start.

    Falls back to the PascalCase game id when the names share no prefix.
    """
    prefix = names[0] if names else ""
    for name in names[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    # Cut back to a boundary where every name continues with a capital (a new word).
    while prefix and not all(len(n) > len(prefix) and n[len(prefix)].isupper() for n in names):
        prefix = prefix[:-1]
    return prefix or pascal(engine.id)


@strawberry.type(description="Placeholder: this build hosts no game.")
class NoGame:
    reason: str


def build_game_types(converter: Converter, engines: Sequence[Engine[Any]]) -> GameTypes:
    engines = sorted(engines, key=lambda e: e.id)
    views: list[type] = []
    moves: list[type] = []
    per_game_inputs: dict[str, tuple[str, Any, Codec]] = {}
    for engine in engines:
        union = union_members(engine.Action)
        if union is None:
            raise TypeError(f"{engine.id}: Action must be a discriminated union of models")
        members, discriminator = union
        views.append(engine.View)
        moves.extend(members)
        prefix = type_prefix(engine, [engine.View.__name__] + [m.__name__ for m in members])
        codec = converter.input_one_of(
            f"{prefix}ActionInput",
            members,
            discriminator,
            description=f"A move of {engine.title}: set exactly one field.",
        )
        per_game_inputs[engine.id] = (camel(engine.id), engine, codec)

    result = converter.output(MatchOutcome)
    if not engines:
        placeholder = Codec(
            Annotated[Union[NoGame], strawberry.union("MatchView")],  # noqa: UP007
            lambda v: NoGame(reason="no game"),
        )
        return GameTypes(
            view=placeholder,
            move=Codec(
                Annotated[Union[NoGame], strawberry.union("Move")],  # noqa: UP007
                lambda v: NoGame(reason="no game"),
            ),
            action_input=_no_game_input(),
            result=result,
            decode_action=lambda v: (NO_GAME, {}),
            events=build_event_types(converter, []),
            options_input=_no_options_input(),
            options=_no_options(),
        )
    view = converter.output_union(
        "MatchView", views, None,
        description="What one seat (or a spectator) sees: one member per game.",
    )
    move = converter.output_union(
        "Move", moves,
        description="A legal move; each member maps onto one field of its game's ActionInput.",
    )
    events = build_event_types(converter, engines)

    namespace: dict[str, Any] = {"__annotations__": {}, "__module__": __name__}
    decoders: dict[str, Callable[[Any], Any]] = {}
    for game_id, (key, engine, codec) in per_game_inputs.items():
        attribute = key + "_" if key in namespace else key
        namespace["__annotations__"][attribute] = strawberry.Maybe[  # type: ignore[misc]
            codec.annotation  # type: ignore[name-defined]
        ]
        namespace[attribute] = strawberry.field(
            name=key, default=None, description=f"A move of {engine.title} ({game_id})."
        )
        decoders[attribute] = _tagged(game_id, codec)
    converter.claim("ActionInput", "ActionInput")
    action_input = strawberry.input(
        type("ActionInput", (), namespace),
        name="ActionInput",
        one_of=True,
        description="A move: set exactly one field, named after the match's game.",
    )

    def decode_action(value: Any) -> tuple[str, dict[str, Any]]:
        _, decoded = Converter.decode_one_of(value, decoders)
        game_id, action = decoded
        return game_id, action

    options_input, decode_options = _options_input(converter, engines)
    with_options = [engine.Options for engine in engines if engine.Options.model_fields]
    options = converter.output_union(
        "MatchOptions", with_options, None,
        description="A match's options as it was created: one member per game.",
    ) if with_options else _no_options()
    return GameTypes(
        view=view, move=move, action_input=action_input, result=result,
        decode_action=decode_action, events=events,
        options_input=options_input, decode_options=decode_options, options=options,
    )


def _options_input(
    converter: Converter, engines: Sequence[Engine[Any]]
) -> tuple[Any, Callable[[Any], tuple[str, dict[str, Any]]]]:
    """``MatchOptionsInput @oneOf``: one field per game that has options, named after its id,
    holding the input generated from the engine's ``Options`` model (its defaults shown)."""
    namespace: dict[str, Any] = {"__annotations__": {}, "__module__": __name__}
    decoders: dict[str, Callable[[Any], Any]] = {}
    for engine in engines:
        if not engine.Options.model_fields:
            continue  # a game without options has nothing to type
        key = camel(engine.id)
        attribute = key + "_" if key in namespace else key
        codec = converter.input(engine.Options, owner=engine.Options.__name__)
        namespace["__annotations__"][attribute] = strawberry.Maybe[  # type: ignore[misc]
            codec.annotation  # type: ignore[name-defined]
        ]
        namespace[attribute] = strawberry.field(
            name=key, default=None, description=f"The options of {engine.title} ({engine.id})."
        )
        decoders[attribute] = _tagged(engine.id, codec)
    if not decoders:
        return _no_options_input(), lambda v: (NO_GAME, {})
    converter.claim("MatchOptionsInput", "MatchOptionsInput")
    options_input = strawberry.input(
        type("MatchOptionsInput", (), namespace),
        name="MatchOptionsInput",
        one_of=True,
        description="A new match's options: set exactly one field, named after the game "
        "(`{ny1901: {expert: true}}`); omitted fields take their defaults.",
    )

    def decode_options(value: Any) -> tuple[str, dict[str, Any]]:
        game_id, options = Converter.decode_one_of(value, decoders)[1]
        return game_id, options

    return options_input, decode_options


def _tagged(game_id: str, codec: Codec) -> Callable[[Any], tuple[str, Any]]:
    def convert(value: Any) -> tuple[str, Any]:
        return game_id, codec.convert(value)

    return convert


def _no_options() -> Codec:
    return Codec(
        Annotated[Union[NoGame], strawberry.union("MatchOptions")],  # noqa: UP007
        lambda v: NoGame(reason="no game has options"),
    )


def _no_options_input() -> Any:
    @strawberry.input(name="MatchOptionsInput", one_of=True,
                      description="No hosted game has options.")
    class MatchOptionsInput:
        none: strawberry.Maybe[bool] = None

    return MatchOptionsInput


def _no_game_input() -> Any:
    @strawberry.input(name="ActionInput", one_of=True, description="No game is hosted.")
    class ActionInput:
        none: strawberry.Maybe[bool] = None

    return ActionInput


__all__ = ["NO_GAME", "GameTypes", "MalformedInput", "build_game_types", "type_prefix"]
