"""Object types of the match operations, mirroring ``service/api/models.py``.

They are built per schema (``build_match_types``) because ``MatchState.view``,
``LegalMoves.moves``, ``LogEntry.action`` and the events are the types generated from the
engines. The
``from_*`` converters take the service layer's pydantic models, so GraphQL shows exactly what
REST shows.

(No ``from __future__ import annotations`` here: the annotations refer to local variables.)
"""

from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, cast

import strawberry
from pydantic import TypeAdapter
from strawberry.scalars import JSON

from service.games import get as get_engine
from service.matches import models

from ..convert import Optional
from .events import Event
from .games import GameTypes
from .wire import BOT_KIND, SEAT_HOLDER, SEAT_TOKEN, VISIBILITY, Label, labels_of

SeatHolder: Any = SEAT_HOLDER.annotation
seat_holder = SEAT_HOLDER.convert
SeatToken: Any = SEAT_TOKEN.annotation
Visibility: Any = VISIBILITY.annotation
BotKind: Any = BOT_KIND.annotation
__all__ = ["Label", "labels_of"]


@strawberry.enum(
    description="`waiting`: open seats, no game yet; `active`: being played; `finished`; "
    "`cancelled`: it never started. More may be added: treat an unknown one as not playable."
)
class MatchStatus(Enum):
    waiting = "waiting"
    active = "active"
    finished = "finished"
    cancelled = "cancelled"


@strawberry.input(description="One app-defined label of a new match: keys 1-32 characters, "
                  "values at most 128, at most 16 labels, each key once.")
class LabelInput:
    key: str
    value: str


@strawberry.type(description="A seat played by a bot (the worker plays it).")
class BotSeat:
    seat: int
    kind: BotKind


@strawberry.input(
    one_of=True,
    description="One seat of a new match: a player of the caller's app (`me`: the caller), "
    "one of the app's users (by its user id), a bot, or an open seat (`open: true`: the "
    "match waits for a player to join it).",
)
class SeatInput:
    player: strawberry.ID | None = strawberry.UNSET
    user: str | None = strawberry.UNSET
    bot: BotKind | None = strawberry.UNSET
    open: bool | None = strawberry.field(
        default=strawberry.UNSET,
        description="Always true: a seat left open for a player to join (joinMatch).",
    )


@strawberry.input(description="A bot seat of a new match.")
class BotSeatInput:
    seat: int
    kind: BotKind


@strawberry.type(description="A game this build hosts.")
class Game:
    id: str
    title: str
    min_players: int
    max_players: int
    options_schema: JSON = strawberry.field(
        description="JSON Schema of the game's options (every option has a default)."
    )
    rules_versions: list[int] = strawberry.field(
        description="The rules versions this server plays, oldest first. A match keeps the "
        "version it was created under for its whole life."
    )
    current_rules_version: int = strawberry.field(
        description="The rules version new matches get."
    )
    catalogue_url: str | None = strawberry.field(
        description="The game's component catalogue over REST (also the `game` query) for "
        "the current rules version; add ?rulesVersion=N for a match's version. Null for a "
        "game without one."
    )

    @classmethod
    def from_model(cls, info: models.GameInfo) -> "Game":
        return cls(
            id=info.id, title=info.title, min_players=info.min_players,
            max_players=info.max_players, options_schema=cast(JSON, info.options_schema),
            rules_versions=list(info.rules_versions),
            current_rules_version=info.current_rules_version,
            catalogue_url=info.catalogue_url,
        )


@strawberry.type(description="A new match and one token per human seat.")
class MatchCreated:
    match_id: strawberry.ID
    game: str
    version: int
    seats: list[SeatToken]

    @classmethod
    def from_model(cls, created: models.CreateMatchResponse) -> "MatchCreated":
        return cls(
            match_id=strawberry.ID(created.match_id), game=created.game,
            version=created.version,
            seats=[SEAT_TOKEN.convert(s) for s in created.seats],
        )


def _rfc3339(value: Any) -> str | None:
    """A time as REST writes it."""
    return None if value is None else cast(str, TypeAdapter(datetime).dump_python(
        value, mode="json"))


@dataclass(frozen=True)
class MatchTypes:
    """The match object types of one schema and their converters."""

    state: Any
    legal_moves: Any
    accepted: Any
    log_entry: Any
    log_page: Any
    from_state: Any
    from_legal_moves: Any
    from_act: Any
    from_log: Any
    options: Any
    """The ``MatchOptions`` union (the annotation)."""
    match_options: Any
    """A match's (or a list entry's) wire options as a ``MatchOptions`` member, or None."""


def build_match_types(games: GameTypes) -> MatchTypes:
    from .clocks import MatchClock, OnTimeout, TimeControl, clock_of, on_timeout_of, time_control_of

    view_type = Optional(games.view.annotation)
    move_type = games.move.annotation
    result_type = Optional(games.result.annotation)
    assert games.options is not None
    options_type = Optional(games.options.annotation)
    optional_move = Optional(move_type)

    @strawberry.type(description="A match as the caller (a seat, or a spectator) sees it.")
    class MatchState:
        match_id: strawberry.ID
        game: str
        version: int
        rules_version: int = strawberry.field(
            description="The game's rules version this match is played under; fixed for "
            "the match's whole life."
        )
        status: MatchStatus
        seat: int | None = strawberry.field(
            description="The caller's seat; null for a spectator."
        )
        active_seats: list[int] = strawberry.field(description="Seats that may act now.")
        bots: list[BotSeat] = strawberry.field(
            description="Seats played by bots, and which bot."
        )
        view: view_type = strawberry.field(  # type: ignore[valid-type]
            description="What the caller may see: the View type of the match's game; null "
            "while the match waits for players and once it is cancelled."
        )
        result: result_type = strawberry.field(  # type: ignore[valid-type]
            description="Final scores once the match is finished."
        )
        players: list[SeatHolder] = strawberry.field(
            description="Who sits in each seat, in seat order: a player's display name or "
            "a bot."
        )
        options: options_type = strawberry.field(  # type: ignore[valid-type]
            description="The game's options the match was created with, every default filled "
            "in; null: created without options (every default)."
        )
        seed_chosen: bool = strawberry.field(
            description=models.MatchState.model_fields["seed_chosen"].description
        )
        seed_commitment: str | None = strawberry.field(
            description=models.MatchState.model_fields["seed_commitment"].description
        )
        seed: str | None = strawberry.field(
            description="The match's seed in decimal (it may exceed GraphQL's 32-bit Int), "
            "revealed once the match is finished (null before): with the number of seats, "
            "`options` and `rulesVersion` it sets the match up again, and the log (every "
            "move is shown once the match is finished) replays it."
        )
        seed_salt: str | None = strawberry.field(
            description=models.MatchState.model_fields["seed_salt"].description
        )
        visibility: Visibility = strawberry.field(
            description=models.MatchState.model_fields["visibility"].description
        )
        name: str | None = strawberry.field(
            description=models.MatchState.model_fields["name"].description
        )
        labels: list[Label] = strawberry.field(
            description="The app-defined labels given at creation, sorted by key."
        )
        open_seats: list[int] = strawberry.field(
            description=models.MatchState.model_fields["open_seats"].description
        )
        start_version: int = strawberry.field(
            description=models.MatchState.model_fields["start_version"].description
        )
        cancel_reason: str | None = strawberry.field(
            description=models.MatchState.model_fields["cancel_reason"].description
        )
        creator_seat: int | None = strawberry.field(
            description=models.MatchState.model_fields["creator_seat"].description
        )
        rematch_of: strawberry.ID | None = strawberry.field(
            description=models.MatchState.model_fields["rematch_of"].description
        )
        rematch: strawberry.ID | None = strawberry.field(
            description=models.MatchState.model_fields["rematch"].description
        )
        created_at: str | None = strawberry.field(
            description=models.MatchState.model_fields["created_at"].description
        )
        updated_at: str | None = strawberry.field(
            description=models.MatchState.model_fields["updated_at"].description
        )
        time_control: TimeControl | None = strawberry.field(
            description=models.MatchState.model_fields["time_control"].description
        )
        on_timeout: OnTimeout | None = strawberry.field(
            description=models.MatchState.model_fields["on_timeout"].description
        )
        clock: MatchClock | None = strawberry.field(
            description=models.MatchState.model_fields["clock"].description
        )

    @strawberry.type(description="The caller's legal moves at one version.")
    class LegalMoves:
        match_id: strawberry.ID
        version: int
        seat: int | None = strawberry.field(
            description="The caller's seat; null for a spectator (who has no moves)."
        )
        moves: list[move_type] = strawberry.field(  # type: ignore[valid-type]
            description="Every legal move; each maps onto one field of ActionInput."
        )
        texts: list[str] = strawberry.field(
            description="One sentence per move, in the order of `moves` and in the request's "
            "language: what to show the player. Send the move, not its text."
        )

    @strawberry.type(description="The move was stored as `version`.")
    class ActionAccepted:
        match_id: strawberry.ID
        version: int = strawberry.field(description="The version the caller's move created.")
        events: list[Event]
        answer: strawberry.Private[models.MatchState]

        @strawberry.field(
            description="The caller's view right after the move, before any bot moves it "
            "lets come (those follow as new versions)."
        )
        def state(self) -> MatchState:
            # Converted only when selected: the whole view is most of an act's cost, and
            # a bot that selects `version` alone should not pay for it.
            return from_state(self.answer)

    @strawberry.type(description="One version of the match history, as the caller may see it.")
    class LogEntry:
        version: int
        seat: int | None = strawberry.field(description="The seat that acted.")
        action: optional_move = strawberry.field(  # type: ignore[valid-type]
            description=models.LogEntryOut.model_fields["action"].description
        )
        events: list[Event]

    @strawberry.type(description="Log entries after a version, up to `latestVersion`.")
    class LogPage:
        match_id: strawberry.ID
        entries: list[LogEntry]
        latest_version: int
        next_after: int | None = strawberry.field(
            description=models.LogPage.model_fields["next_after"].description
        )
        players: list[SeatHolder] = strawberry.field(
            description=models.LogPage.model_fields["players"].description
        )

    def from_state(state: models.MatchState) -> MatchState:
        return MatchState(
            match_id=strawberry.ID(state.match_id), game=state.game, version=state.version,
            rules_version=state.rules_version, status=MatchStatus(state.status),
            seat=state.seat,
            active_seats=list(state.active_seats),
            bots=[BotSeat(seat=int(s), kind=BotKind(k)) for s, k in state.bots.items()],
            view=None if state.view is None else games.view.convert(state.view),
            result=None if state.result is None else games.result.convert(state.result),
            players=[seat_holder(h) for h in state.players],
            options=match_options(state), seed_chosen=state.seed_chosen,
            seed_commitment=state.seed_commitment,
            seed=None if state.seed is None else str(state.seed), seed_salt=state.seed_salt,
            visibility=Visibility(state.visibility), name=state.name,
            labels=labels_of(state.labels), open_seats=list(state.open_seats),
            start_version=state.start_version, cancel_reason=state.cancel_reason,
            creator_seat=state.creator_seat,
            rematch_of=None if state.rematch_of is None else strawberry.ID(state.rematch_of),
            rematch=None if state.rematch is None else strawberry.ID(state.rematch),
            created_at=_rfc3339(state.created_at), updated_at=_rfc3339(state.updated_at),
            time_control=time_control_of(state.time_control),
            on_timeout=on_timeout_of(state.on_timeout),
            clock=None if state.clock is None else clock_of(state.clock),
        )

    def match_options(state: Any) -> Any:
        """The typed options of a match (a ``MatchState``, or a lobby list's entry)."""
        if state.options is None:
            return None
        engine: Any = get_engine(state.game)
        assert games.options is not None
        return games.options.convert(engine.Options.model_validate(state.options))

    def from_legal_moves(moves: models.LegalMoves) -> LegalMoves:
        return LegalMoves(
            match_id=strawberry.ID(moves.match_id), version=moves.version, seat=moves.seat,
            moves=[games.move.convert(m) for m in moves.moves],
            texts=list(moves.texts),
        )

    def from_act(response: models.ActResponse) -> ActionAccepted:
        return ActionAccepted(
            match_id=strawberry.ID(response.match_id), version=response.version,
            events=[games.events.convert(e) for e in response.events],
            answer=response.state,
        )

    def from_log(page: models.LogPage) -> LogPage:
        return LogPage(
            match_id=strawberry.ID(page.match_id),
            entries=[
                LogEntry(
                    version=entry.version, seat=entry.seat,
                    action=None if entry.action is None else games.move.convert(entry.action),
                    events=[games.events.convert(e) for e in entry.events],
                )
                for entry in page.entries
            ],
            latest_version=page.latest_version,
            next_after=page.next_after,
            players=[seat_holder(h) for h in page.players],
        )

    return MatchTypes(
        state=MatchState, legal_moves=LegalMoves, accepted=ActionAccepted,
        log_entry=LogEntry, log_page=LogPage, from_state=from_state,
        from_legal_moves=from_legal_moves, from_act=from_act, from_log=from_log,
        options=options_type, match_options=match_options,
    )
