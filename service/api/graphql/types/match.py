"""Object types of the match operations, generated from ``service/matches/models.py``.

``MatchState``, ``LegalMoves``, ``LogEntry`` and ``LogPage`` are generated per schema
(``build_match_types``) because their ``view``, ``moves``, ``action`` and ``events`` are the
types generated from the engines; the game-independent ones (``Game``, ``MatchCreated``, the
seats, the clock) once, in ``wire.py``. Every converter takes the service layer's pydantic
models, so GraphQL shows exactly what REST shows.

(No ``from __future__ import annotations`` here: the annotations refer to local variables.)
"""

from dataclasses import dataclass
from typing import Any

import strawberry

from service.games import get as get_engine
from service.matches import models

from ..convert import Codec, Converter, Optional, Shape
from .events import Event
from .games import GameTypes
from .wire import (
    BOT_KIND,
    GAME,
    LABELS,
    MATCH_CREATED,
    MATCH_STATUS,
    SEAT_HOLDER,
    SEAT_TOKEN,
    VISIBILITY,
    Label,
    labels_of,
)

SeatHolder: Any = SEAT_HOLDER.annotation
seat_holder = SEAT_HOLDER.convert
SeatToken: Any = SEAT_TOKEN.annotation
Visibility: Any = VISIBILITY.annotation
BotKind: Any = BOT_KIND.annotation
MatchStatus: Any = MATCH_STATUS.annotation
Game: Any = GAME.annotation
MatchCreated: Any = MATCH_CREATED.annotation
__all__ = ["Label", "labels_of"]


@strawberry.input(description="One app-defined label of a new match: keys 1-32 characters, "
                  "values at most 128, at most 16 labels, each key once.")
class LabelInput:
    """Hand-written: the request's labels are a JSON object (no model to generate from)."""

    key: str
    value: str


@strawberry.type(description="A seat played by a bot (the worker plays it).")
class BotSeat:
    """Hand-written: the wire's ``bots`` is a map (seat -> kind), which GraphQL cannot type."""

    seat: int
    kind: BotKind


@strawberry.input(
    one_of=True,
    description="One seat of a new match: a player of the caller's app (`me`: the caller), "
    "one of the app's users (by its user id), a bot, or an open seat (`open: true`: the "
    "match waits for a player to join it).",
)
class SeatInput:
    """Hand-written: ``createMatch``'s seat is an untagged union (``SeatRequest``: one key per
    member), which ``Converter.input_one_of`` (tag-keyed) does not make."""

    player: strawberry.ID | None = strawberry.UNSET
    user: str | None = strawberry.UNSET
    bot: BotKind | None = strawberry.UNSET
    open: bool | None = strawberry.field(
        default=strawberry.UNSET,
        description="Always true: a seat left open for a player to join (joinMatch).",
    )


@strawberry.input(description="A bot seat of a new match.")
class BotSeatInput:
    """Hand-written: an argument of ``createMatch`` (REST's ``bots`` is a map)."""

    seat: int
    kind: BotKind


@dataclass(frozen=True)
class MatchTypes:
    """The match object types of one schema and their converters."""

    state: Any
    legal_moves: Any
    accepted: Any
    log_page: Any
    from_state: Any
    from_legal_moves: Any
    from_act: Any
    from_log: Any
    options: Any
    """The ``MatchOptions`` union (the annotation)."""
    converter: Converter
    """The schema's converter (for the types built on these, e.g. the lobby's entries)."""
    typed_options: Any
    """A ``Codec`` for an ``options`` field: ``MatchOptions``, from the value ``typed`` gives."""
    typed: Any
    """A match (or a list entry) with its wire options as its engine's ``Options`` value."""

    def outputs(self) -> dict[type, Codec]:
        """The per-game answers by their wire model (for the generated fields)."""
        return {
            models.MatchState: Codec(self.state, self.from_state),
            models.LegalMoves: Codec(self.legal_moves, self.from_legal_moves),
            models.LogPage: Codec(self.log_page, self.from_log),
            models.ActResponse: Codec(self.accepted, self.from_act),
        }


def build_match_types(games: GameTypes, converter: Converter) -> MatchTypes:
    from .clocks import ON_TIMEOUT, TIME_CONTROL

    move_type = games.move.annotation
    assert games.options is not None
    options_type = Optional(games.options.annotation)

    def view_of(view: Any) -> Any:
        return None if view is None else games.view.convert(view)

    def move_of(action: Any) -> Any:
        return None if action is None else games.move.convert(action)

    def options_of(options: Any) -> Any:
        # ``typed`` has already turned the wire options into the engine's Options value.
        return None if options is None else games.options.convert(options)  # type: ignore[union-attr]

    typed_options = Codec(options_type, options_of)
    events = Codec(list[Event], lambda items: [games.events.convert(e) for e in items])
    converter.shape(models.MatchState, Shape(
        description="A match as the caller (a seat, or a spectator) sees it.",
        ids=("match_id", "rematch_of", "rematch"),
        fields={
            "bots": Codec(list[BotSeat], lambda bots: [
                BotSeat(seat=int(seat), kind=BotKind(kind)) for seat, kind in bots.items()
            ]),
            "view": Codec(Optional(games.view.annotation), view_of),
            "options": typed_options,
            # A seed may exceed GraphQL's 32-bit Int: published in decimal.
            "seed": Codec(Optional(str), lambda seed: None if seed is None else str(seed)),
            "labels": LABELS,
            "time_control": TIME_CONTROL,
            "on_timeout": ON_TIMEOUT,
        },
        notes={
            "bots": "Seats played by bots, and which bot.",
            "view": "What the caller may see: the View type of the match's game; null while "
            "the match waits for players and once it is cancelled.",
            "seed": "The match's seed in decimal (it may exceed GraphQL's 32-bit Int), "
            "revealed once the match is finished (null before): with the number of seats, "
            "`options` and `rulesVersion` it sets the match up again, and the log (every move "
            "is shown once the match is finished) replays it.",
            "labels": "The app-defined labels given at creation, sorted by key.",
        },
    ))
    converter.shape(models.LegalMoves, Shape(
        description="The caller's legal moves at one version.", ids=("match_id",),
        fields={"moves": Codec(list[move_type], lambda moves: [  # type: ignore[valid-type]
            games.move.convert(m) for m in moves
        ])},
        notes={"moves": "Every legal move; each maps onto one field of ActionInput."},
    ))
    converter.shape(models.LogEntryOut, Shape(
        name="LogEntry", description="One version of the match history, as the caller may "
        "see it.", fields={"action": Codec(Optional(move_type), move_of),
                                 "events": events},
    ))
    converter.shape(models.LogPage, Shape(
        description="Log entries after a version, up to `latestVersion`.",
        ids=("match_id",), order=("match_id", "entries", "latest_version", "next_after"),
    ))
    state = converter.output(models.MatchState)
    legal_moves = converter.output(models.LegalMoves)
    log_page = converter.output(models.LogPage)
    MatchState = state.annotation

    @strawberry.type(description="The move was stored as `version`.")
    class ActionAccepted:
        """Hand-written: ``state`` is converted only when selected (the whole view is most of
        an act's cost, and a bot that selects ``version`` alone should not pay for it)."""

        match_id: strawberry.ID
        version: int = strawberry.field(
            description=models.ActResponse.model_fields["version"].description
        )
        events: list[Event]
        answer: strawberry.Private[models.MatchState]

        @strawberry.field(description=models.ActResponse.model_fields["state"].description)
        def state(self) -> MatchState:  # type: ignore[valid-type]
            return from_state(self.answer)  # type: ignore[no-any-return]

    def typed(value: Any) -> Any:
        if value.options is None:
            return value
        return value.model_copy(update={"options": _typed_options(value)})

    def from_state(value: models.MatchState) -> Any:
        return state.convert(typed(value))

    def from_act(response: models.ActResponse) -> ActionAccepted:
        return ActionAccepted(
            match_id=strawberry.ID(response.match_id), version=response.version,
            events=events.convert(response.events), answer=response.state,
        )

    return MatchTypes(
        state=MatchState, legal_moves=legal_moves.annotation, accepted=ActionAccepted,
        log_page=log_page.annotation, from_state=from_state,
        from_legal_moves=legal_moves.convert, from_act=from_act, from_log=log_page.convert,
        options=options_type, converter=converter,
        typed_options=typed_options, typed=typed,
    )


def _typed_options(state: Any) -> Any:
    """A match's wire options as its engine's ``Options`` value."""
    engine: Any = get_engine(state.game)
    return engine.Options.model_validate(state.options)
