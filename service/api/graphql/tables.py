"""The lobby's tables in GraphQL: matches that wait for players, as REST's
``/v1/matches/{id}/join|leave|start|cancel``, ``GET /v1/lobby`` and ``GET /v1/matches?
status=active&visibility=public``, on the same ``TableService`` (``service.tables.service``):
``lobby`` and ``liveMatches`` (queries), ``joinMatch``, ``leaveMatch``, ``startMatch`` and
``cancelMatch`` (mutations, answering the match as the caller sees it), and ``rematch``
(REST's ``POST /v1/matches/{id}/rematch``, on the same ``Rematch``). Built per schema:
the entries' options and the states are the engines' types; the entries are generated from
``service.tables.models``. The Query and Mutation types
inherit these fields (``queries.py``, ``mutations.py``)."""

from typing import Any

import strawberry
from pydantic import ValidationError

from service.errors import ApiError
from service.tables import Rematch, TableService, models

from ..rate_limits import charge, limits_of
from .context import Context, Info
from .convert import Shape
from .results import PLAYER_FAILURES, TABLE_FAILURES, answer, result_union
from .types.match import BotKind, MatchTypes
from .types.wire import LABELS


def _tables(ctx: Context) -> TableService:
    tables: TableService | None = getattr(ctx.request.app.state, "table_service", None)
    if tables is None:
        raise ApiError.of("unauthorized", "The lobby is not served here.")
    return tables


def _rematch(ctx: Context) -> Rematch:
    rematch: Rematch | None = getattr(ctx.request.app.state, "rematch", None)
    if rematch is None:
        raise ApiError.of("unauthorized", "The lobby is not served here.")
    return rematch


def _filters(game: str | None, players: int | None, cursor: str | None,
             limit: int | None) -> dict[str, Any]:
    """The list filters, checked as REST checks its query parameters."""
    if game is not None and not (0 < len(game) <= 64 and game.isascii()):
        raise ApiError.of("malformed", "game must be a game id.")
    if players is not None and not 1 <= players <= 16:
        raise ApiError.of("malformed", "players must be 1 to 16.")
    return {"game": game, "players": players, "cursor": cursor, "limit": limit}


def build_tables_query(types: MatchTypes) -> type:
    """``lobby`` and ``liveMatches``; their entries' ``options`` are the typed
    ``MatchOptions``, as ``MatchState.options``."""
    converter = types.converter
    reshaped = {"options": types.typed_options, "labels": LABELS}
    notes = {
        "options": "The game's options it was created with, every default filled in; null: "
        "every default.",
        "labels": "The app-defined labels given at creation, sorted by key.",
        "created_at": "RFC 3339, UTC.",
    }
    converter.shape(models.LobbyEntry, Shape(ids=("match_id",), fields=reshaped, notes=notes))
    converter.shape(models.LiveEntry, Shape(ids=("match_id",), fields=reshaped, notes=notes))
    converter.shape(models.LobbyPage, Shape(
        description="A page of the lobby: waiting public matches."))
    converter.shape(models.LivePage, Shape(description="A page of the live public matches."))
    lobby_page = converter.output(models.LobbyPage)
    live_page = converter.output(models.LivePage)
    LobbyPage, LivePage = lobby_page.annotation, live_page.annotation

    def from_lobby(page: models.LobbyPage) -> Any:
        return lobby_page.convert(
            page.model_copy(update={"items": [types.typed(item) for item in page.items]}))

    def from_live(page: models.LivePage) -> Any:
        return live_page.convert(
            page.model_copy(update={"items": [types.typed(item) for item in page.items]}))

    lobby_result = result_union("LobbyResult", LobbyPage, PLAYER_FAILURES,
                                "A page of the lobby, or why not.")
    live_result = result_union("LiveMatchesResult", LivePage, PLAYER_FAILURES,
                               "A page of the live public matches, or why not.")

    @strawberry.type
    class TablesQuery:
        @strawberry.field(
            description="The lobby: the app's public matches that wait for players, newest "
            "created first (follow `nextCursor`, as `cursor`, until it is null), filtered by "
            f"`game` and `players` (seats); `limit` 1 to {models.LIST_MAX} (default "
            f"{models.LIST_DEFAULT}). Needs a player credential or the app's key (REST: GET "
            "/v1/lobby)."
        )
        async def lobby(
            self, info: Info, game: str | None = None, players: int | None = None,
            cursor: str | None = None, limit: int | None = None,
        ) -> lobby_result:  # type: ignore[valid-type]
            ctx = info.context

            async def read() -> Any:
                filters = _filters(game, players, cursor, limit)
                return await _tables(ctx).lobby(ctx.credentials(), **filters)

            return await answer(PLAYER_FAILURES, read, from_lobby, ctx.lang)

        @strawberry.field(
            description="The app's public matches being played (to spectate), newest created "
            "first, filtered and paged as `lobby` (REST: GET "
            "/v1/matches?status=active&visibility=public)."
        )
        async def live_matches(
            self, info: Info, game: str | None = None, players: int | None = None,
            cursor: str | None = None, limit: int | None = None,
        ) -> live_result:  # type: ignore[valid-type]
            ctx = info.context

            async def read() -> Any:
                filters = _filters(game, players, cursor, limit)
                return await _tables(ctx).live(ctx.credentials(), **filters)

            return await answer(PLAYER_FAILURES, read, from_live, ctx.lang)

    return TablesQuery


def build_table_result(types: MatchTypes) -> Any:
    """``TableResult``: the union of the writes to a waiting match (built once per schema,
    shared with ``acceptInvitation``, ``service.invitations``)."""
    return result_union(
        "TableResult", types.state, TABLE_FAILURES,
        "A waiting match after the caller's write (as the caller sees it), or why not.",
    )


def build_tables_mutation(types: MatchTypes, table_result: Any) -> type:
    """``joinMatch``, ``leaveMatch``, ``startMatch``, ``cancelMatch`` and ``rematch``: each
    answers the match as the caller sees it after the write (``MatchState``), or a failure;
    a refused one writes nothing. ``table_result``: ``build_table_result(types)``."""

    @strawberry.type
    class TablesMutation:
        @strawberry.mutation(
            description="Take an open seat of a waiting match (`seat`; omitted: the lowest "
            "open one) as the calling player (a player token or an app's JWT). The last open "
            "seat taken starts the match (`status: active`). Refusals: Conflict "
            "(`seat_taken`, `already_seated`, `match_started`, `match_cancelled`); a private "
            "match is NotFound to outsiders. REST: POST /v1/matches/{id}/join."
        )
        async def join_match(
            self, info: Info, match_id: strawberry.ID, seat: int | None = None,
            invite: str | None = None,
        ) -> table_result:
            ctx = info.context

            async def join() -> Any:
                try:
                    request = models.JoinRequest.model_validate({"seat": seat,
                                                                 "invite": invite})
                except ValidationError as error:
                    first = error.errors(include_url=False, include_input=False)[0]
                    where = ".".join(str(p) for p in first["loc"]) or "input"
                    raise ApiError.of("malformed", f"{where}: {first['msg']}") from None
                caller = ctx.credentials()
                await charge(limits_of(ctx.request.app), ctx.request.scope, "act")
                return await _tables(ctx).join(caller, str(match_id), request)

            return await answer(TABLE_FAILURES, join, types.from_state, ctx.lang)

        @strawberry.mutation(
            description="Leave a waiting match: the caller's seat is open again; its creator "
            "leaving cancels it (`cancelReason: creator_left`). REST: POST "
            "/v1/matches/{id}/leave."
        )
        async def leave_match(
            self, info: Info, match_id: strawberry.ID,
        ) -> table_result:
            ctx = info.context

            async def leave() -> Any:
                caller = ctx.credentials()
                await charge(limits_of(ctx.request.app), ctx.request.scope, "act")
                return await _tables(ctx).leave(caller, str(match_id))

            return await answer(TABLE_FAILURES, leave, types.from_state, ctx.lang)

        @strawberry.mutation(
            description="Start a waiting match now (its creator, or the app's key for a "
            "match an app created): a bot of `bot` takes every open seat (default `greedy`; "
            "`random` where the game has no other). REST: POST /v1/matches/{id}/start."
        )
        async def start_match(
            self, info: Info, match_id: strawberry.ID, bot: BotKind | None = None,
        ) -> table_result:
            ctx = info.context

            async def start() -> Any:
                caller = ctx.credentials()
                await charge(limits_of(ctx.request.app), ctx.request.scope, "act")
                request = models.StartRequest(bot=None if bot is None else bot.value)
                return await _tables(ctx).start(caller, str(match_id), request)

            return await answer(TABLE_FAILURES, start, types.from_state, ctx.lang)

        @strawberry.mutation(
            description="Cancel a waiting match (its creator, or the app's key for a match an "
            "app created): `status: cancelled`, `cancelReason: creator`. REST: POST "
            "/v1/matches/{id}/cancel."
        )
        async def cancel_match(
            self, info: Info, match_id: strawberry.ID,
        ) -> table_result:
            ctx = info.context

            async def cancel() -> Any:
                caller = ctx.credentials()
                await charge(limits_of(ctx.request.app), ctx.request.scope, "act")
                return await _tables(ctx).cancel(caller, str(match_id))

            return await answer(TABLE_FAILURES, cancel, types.from_state, ctx.lang)

        @strawberry.mutation(
            description="The rematch of a finished match (a player of it, or its app's key): "
            "a waiting match with the same game, options, visibility, name and labels, the "
            "seat order rotated (the former seat 1 moves first), bots re-seated, the caller "
            "seated and every other human seat kept for its former player "
            "(`RematchOfferedEvent` in its feed; it takes the seat with joinMatch). Linked "
            "both ways (`rematchOf`, `rematch`); a second call, by anyone, answers the same "
            "rematch. Before the end: Conflict `match_not_finished`. REST: POST "
            "/v1/matches/{id}/rematch."
        )
        async def rematch(
            self, info: Info, match_id: strawberry.ID,
        ) -> table_result:
            ctx = info.context

            async def again() -> Any:
                caller = ctx.credentials()
                await charge(limits_of(ctx.request.app), ctx.request.scope, "act")
                return await _rematch(ctx).rematch(caller, str(match_id))

            return await answer(TABLE_FAILURES, again, types.from_state, ctx.lang)

    return TablesMutation


__all__ = ["build_table_result", "build_tables_mutation", "build_tables_query"]
