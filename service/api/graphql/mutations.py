"""Mutation: create a match, and play a move.

``createMatch`` takes its options as a ``MatchOptionsInput`` keyed by game id
(``gameOptions``; the untyped ``options: JSON`` is deprecated), checked against ``game``.
``act`` takes an ``ActionInput`` keyed by game id. The service parses the action with the
match's engine; before that, the resolver makes sure the caller named the match's game, so a
move of one game can never be taken for a same-shaped move of another. The game of a match
never changes, so it is looked up once (through ``get_state``, which also authenticates) and
remembered in a small bounded cache.
"""

from typing import Annotated, Any

import strawberry
from pydantic import ValidationError
from strawberry.scalars import JSON

from service.errors import ApiError
from service.matches.models import CreateMatchRequest, ReclaimSeatResponse
from service.tables import TableService

from ..rate_limits import charge, creation_quota, limits_of
from .context import Info
from .convert import Codec, Shape
from .invitations import build_invitations_mutation
from .players import PlayerMutation
from .queue import build_queue_mutation
from .results import (
    ACT_FAILURES,
    CREATE_FAILURES,
    HAND_FAILURES,
    PLAYER_FAILURES,
    answer,
    result_union,
)
from .types.clocks import OnTimeoutInput, TimeControlInput, on_timeout_input, time_control_input
from .types.games import GameTypes, MalformedInput
from .types.match import (
    BotKind,
    BotSeatInput,
    LabelInput,
    MatchTypes,
    SeatInput,
    Visibility,
)
from .types.wire import MATCH_CREATED, STREAM_TICKET


def _validation_message(error: ValidationError) -> str:
    first = error.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(p) for p in first["loc"]) or "input"
    return f"{where}: {first['msg']}"


def _seat(seat: SeatInput) -> dict[str, Any]:
    if seat.player not in (None, strawberry.UNSET):
        return {"player": str(seat.player)}
    if seat.user not in (None, strawberry.UNSET):
        return {"user": str(seat.user)}
    if seat.open not in (None, strawberry.UNSET):
        return {"open": seat.open}  # false is refused by the request model
    assert isinstance(seat.bot, BotKind)
    return {"bot": seat.bot.value}


def build_mutation(types: MatchTypes, games: GameTypes, generated: dict[str, Any],
                   table_result: Any) -> type:
    """The Mutation type: the capability mixins' hand-written fields, the fields
    ``generated`` from the operation table (in its order), then those below."""
    create_result = result_union(
        "CreateMatchResult", MATCH_CREATED.annotation, CREATE_FAILURES, "A new match, or why not."
    )
    act_result = result_union(
        "ActResult", types.accepted, ACT_FAILURES, "The stored move, or why it was refused."
    )
    hand_result = result_union(
        "HandSeatResult", types.state, HAND_FAILURES,
        "The match after the hand-over (as a spectator sees it), or why not.",
    )
    resign_result = result_union(
        "ResignSeatResult", types.state, HAND_FAILURES,
        "The match after the resignation (as a spectator sees it), or why not.",
    )
    state_type = types.state

    types.converter.shape(ReclaimSeatResponse, Shape(
        name="SeatReclaimed", fields={"state": Codec(state_type, types.from_state)}))
    reclaimed = types.converter.output(ReclaimSeatResponse)
    reclaim_result = result_union(
        "ReclaimSeatResult", reclaimed.annotation, HAND_FAILURES,
        "The seat taken back, or why not.",
    )
    ticket_result = result_union(
        "CreateStreamTicketResult", STREAM_TICKET.annotation, PLAYER_FAILURES,
        "A stream ticket for the caller's seat, or why not.",
    )
    action_input = games.action_input
    options_input = games.options_input
    QueueMutation = build_queue_mutation(games)
    InvitationsMutation = build_invitations_mutation()

    @strawberry.type(description="Writes.")
    class Mutation(
        PlayerMutation, QueueMutation,  # type: ignore[valid-type,misc]
        InvitationsMutation,  # type: ignore[valid-type,misc]
    ):
        locals().update(generated)  # the class body's namespace: generated fields first

        @strawberry.mutation(
            description="Create a match. The answer holds one secret token per anonymous "
            "human seat, shown only once: keep them. With `seats` (instead of `players` and "
            "`bots`), the app's key seats its players and users, a player credential the "
            "player itself (`player: \"me\"`); those seats get no token (the player's "
            "credential acts for them). With an open seat (`{open: true}`) the match waits "
            "for players (`status: waiting`; joinMatch, docs/lobby.md); a `public` one is "
            "listed in the lobby."
        )
        async def create_match(
            self,
            info: Info,
            game: str,
            players: int | None = strawberry.UNSET,
            options: Annotated[
                JSON | None,
                strawberry.argument(
                    deprecation_reason="Untyped: use gameOptions, typed per game "
                    "(MatchOptionsInput)."
                ),
            ] = strawberry.UNSET,
            seed: Annotated[
                int | None,
                strawberry.argument(description="Seed of the match's randomness: it fixes "
                                    "every draw, so its creator knows every hand (`seedChosen`"
                                    "). BadRequest seed_not_allowed when players other than "
                                    "the creator are seated, unless the server allows it. "
                                    "Omitted: the server draws one and publishes "
                                    "`seedCommitment`, revealed at the end."),
            ] = strawberry.UNSET,
            bots: list[BotSeatInput] | None = strawberry.UNSET,
            seats: list[SeatInput] | None = strawberry.UNSET,
            game_options: Annotated[
                options_input | None,  # type: ignore[valid-type]
                strawberry.argument(
                    description="The game's options, typed: one field, named after `game` "
                    "(`{ny1901: {expert: true}}`); omitted: every default."
                ),
            ] = strawberry.UNSET,
            visibility: Annotated[
                Visibility | None,
                strawberry.argument(description="Who may find and read the match; omitted: "
                                    "`unlisted`."),
            ] = strawberry.UNSET,
            name: Annotated[
                str | None,
                strawberry.argument(description=CreateMatchRequest.model_fields["name"]
                                    .description),
            ] = strawberry.UNSET,
            labels: Annotated[
                list[LabelInput] | None,
                strawberry.argument(description="App-defined labels (at most 16, each key "
                                    "once; keys 1-32 characters, values at most 128), shown "
                                    "in lists and states; not game data."),
            ] = strawberry.UNSET,
            time_control: TimeControlInput | None = strawberry.UNSET,
            on_timeout: OnTimeoutInput | None = strawberry.UNSET,
        ) -> create_result:  # type: ignore[valid-type]
            fields: dict[str, Any] = {"game": game}
            clock_fields = {"timeControl": time_control_input(time_control),
                            "onTimeout": on_timeout_input(on_timeout)}
            fields.update({k: v for k, v in clock_fields.items() if v is not None})
            for key, value in (("options", options), ("seed", seed), ("players", players),
                               ("name", name)):
                if value is not strawberry.UNSET and value is not None:
                    fields[key] = value
            if visibility is not strawberry.UNSET and visibility is not None:
                fields["visibility"] = visibility.value

            async def create() -> Any:
                if game_options is not strawberry.UNSET and game_options is not None:
                    if "options" in fields:
                        raise ApiError.of("malformed", "Give gameOptions or options, not both.")
                    try:
                        named, typed = games.decode_options(game_options)
                    except MalformedInput as error:
                        raise ApiError.of("malformed", f"gameOptions: {error}") from None
                    if named != game:
                        raise ApiError.of(
                            "malformed", f"gameOptions are for {named}, not for {game}."
                        )
                    fields["options"] = typed
                if bots is not strawberry.UNSET and bots is not None:
                    numbers = [str(b.seat) for b in bots]
                    if len(set(numbers)) != len(numbers):
                        raise ApiError.of("bad_bots", "Name each bot seat once.")
                    fields["bots"] = {str(b.seat): b.kind.value for b in bots}
                if seats is not strawberry.UNSET and seats is not None:
                    fields["seats"] = [_seat(s) for s in seats]
                if labels is not strawberry.UNSET and labels is not None:
                    fields["labels"] = {label.key: label.value for label in labels}
                    if len(fields["labels"]) != len(labels):
                        raise ApiError.of("malformed", "labels: name each key once.")
                try:
                    request = CreateMatchRequest.model_validate(fields)
                except ValidationError as error:
                    raise ApiError.of("malformed", _validation_message(error)) from None
                ctx = info.context
                limits = limits_of(ctx.request.app)
                await charge(limits, ctx.request.scope, "create")
                players_service = ctx.players
                if players_service is None:
                    quota = creation_quota(limits, None, ctx.request.scope)
                    return await ctx.service.create_match(request, before_write=quota)
                caller = ctx.credentials()
                quota = creation_quota(limits, caller, ctx.request.scope)
                tables: TableService | None = getattr(ctx.request.app.state, "table_service",
                                                      None)
                if tables is None:
                    return await players_service.create_match(caller, request,
                                                              before_write=quota)
                # A public match is listed in the lobby (or the live list) first.
                return await tables.create_match(caller, request, before_write=quota)

            return await answer(CREATE_FAILURES, create, MATCH_CREATED.convert,
                                info.context.lang)

        @strawberry.mutation(
            description="Play one move for the caller's seat (needs its token). With "
            "`expectedVersion`, the move is stored only if the match is still at that version "
            "(else VersionConflict); without it, a lost race is re-validated on the fresh "
            "state. Retrying with the same `idempotencyKey` returns the first result."
        )
        async def act(
            self,
            info: Info,
            match_id: strawberry.ID,
            action: action_input,  # type: ignore[valid-type]
            expected_version: int | None = strawberry.UNSET,
            idempotency_key: str | None = strawberry.UNSET,
        ) -> act_result:  # type: ignore[valid-type]
            ctx = info.context
            expected = None if expected_version in (None, strawberry.UNSET) else expected_version
            key = None if idempotency_key in (None, strawberry.UNSET) else idempotency_key

            async def play() -> Any:
                token = ctx.credentials()
                if token is None:
                    raise ApiError.of("unauthorized", "Acting needs a seat token.")
                if expected is not None and expected < 0:
                    raise ApiError.of("malformed", "expectedVersion must be at least 0.")
                await charge(limits_of(ctx.request.app), ctx.request.scope, "act")
                game_id, wire_action = games.decode_action(action)
                # The service checks the match's game on the record it loads anyway: one
                # load + one CAS per act, as over REST.
                return await ctx.service.act(
                    str(match_id), token, wire_action, expected, key, game=game_id,
                    lang=ctx.lang,
                )

            return await answer(ACT_FAILURES, play, types.from_act, ctx.lang)

        @strawberry.mutation(
            description="The caller's player leaves: a bot of `kind` takes the seat over "
            "(the worker plays it) and the caller's token stops working."
        )
        async def hand_seat_to_bot(
            self, info: Info, match_id: strawberry.ID, kind: BotKind,
        ) -> hand_result:  # type: ignore[valid-type]
            ctx = info.context

            async def hand() -> Any:
                token = ctx.credentials()
                if token is None:
                    raise ApiError.of("unauthorized", "Handing a seat over needs its token.")
                return await ctx.service.hand_seat_to_bot(str(match_id), token, kind.value)

            return await answer(HAND_FAILURES, hand, types.from_state, ctx.lang)

        @strawberry.mutation(
            description="The caller's seat resigns (its token or its player's credential): "
            "it is out of the match, ranked last, and a random bot plays it on; with fewer "
            "than two seats still in, the match ends (`termination: resign`). Answers the "
            "match as a spectator sees it. Conflict seat_forfeited when it already left."
        )
        async def resign_seat(
            self, info: Info, match_id: strawberry.ID, seat: int,
        ) -> resign_result:  # type: ignore[valid-type]
            ctx = info.context

            async def resign() -> Any:
                return await ctx.service.resign(str(match_id), ctx.credentials(), seat)

            return await answer(HAND_FAILURES, resign, types.from_state, ctx.lang)

        @strawberry.mutation(
            description="Take back a seat a bot took over (a hand-over, a timeout under the "
            "bot policy): by its player's credential (the seat is bound to it again), its "
            "old seat token or the match's app key (a new token, shown once). The bot stops "
            "at once. Conflict seat_forfeited (a seat that resigned or timed out for good), "
            "seat_not_away; Forbidden not_your_seat."
        )
        async def reclaim_seat(
            self, info: Info, match_id: strawberry.ID, seat: int,
        ) -> reclaim_result:  # type: ignore[valid-type]
            ctx = info.context

            async def reclaim() -> Any:
                return await ctx.service.reclaim_seat(str(match_id), ctx.credentials(), seat)

            return await answer(HAND_FAILURES, reclaim, reclaimed.convert, ctx.lang)

        @strawberry.mutation(
            description="A short-lived ticket for the caller's seat (needs its token) to open "
            "the REST event stream with `?ticket=` where no Authorization header can be sent "
            "(a browser's EventSource). Spectators need none."
        )
        async def create_stream_ticket(
            self, info: Info, match_id: strawberry.ID,
        ) -> ticket_result:  # type: ignore[valid-type]
            ctx = info.context

            async def issue() -> Any:
                return await ctx.service.issue_stream_ticket(str(match_id), ctx.credentials())

            return await answer(PLAYER_FAILURES, issue, STREAM_TICKET.convert, ctx.lang)

    return Mutation
