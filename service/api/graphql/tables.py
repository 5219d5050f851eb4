"""The lobby's tables in GraphQL: ``lobby`` and ``liveMatches`` (REST's ``GET /v1/lobby``
and ``GET /v1/matches?status=active&visibility=public``), on the same ``TableService``
(``service.tables.service``), hand-written: their entries' options are the engines' typed
``MatchOptions`` and their ``limit`` is published optional (REST's has a default). Built per
schema; the Query type inherits these fields (``queries.py``). The writes (``joinMatch``,
``leaveMatch``, ``startMatch``, ``cancelMatch``, ``rematch``) are generated from the table
(``fields.py``); ``TableResult``, their union, is made here (``acceptInvitation`` shares
it)."""

from typing import Any

import strawberry

from service.errors import ApiError
from service.tables import Rematch, TableService, models

from ..operations.tables import TABLE_RESULT
from .context import Context, Info
from .convert import Shape
from .results import PLAYER_FAILURES, TABLE_FAILURES, answer, result_union
from .types.match import MatchTypes
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
        TABLE_RESULT, types.state, TABLE_FAILURES,
        "A waiting match after the caller's write (as the caller sees it), or why not.",
    )


__all__ = ["build_table_result", "build_tables_query"]
