"""Players in GraphQL: the operations of REST's ``/v1/players``, ``/v1/me`` and
``/v1/apps/me`` that are not generated from the table (``fields.py``; ``me`` and
``appPlayer`` are), on the same ``PlayerService`` (``info.context.players``), each for the
reason its ``Operation`` gives (``hand_written``): the match lists' filters are GraphQL
enums of their own, a guest's creation charges the address's guest budget too and its union
lists fewer members than its codes, a renewed token's union lists ``Conflict`` last, and the
deletions were never charged to ``act``. The Query and Mutation types inherit these fields
(``queries.py``, ``mutations.py``)."""

from typing import Any

import strawberry
from pydantic import ValidationError

from service.errors import ApiError
from service.players import PlayerService
from service.players.models import MY_MATCHES_DEFAULT, CreatePlayerRequest

from ..rate_limits import charge_guest, limits_of
from .context import Context, Info
from .results import PLAYER_FAILURES, answer, result_union
from .types.failures import BadRequest, Conflict, Unavailable
from .types.players import MatchStatusFilter
from .types.wire import MY_MATCHES_PAGE, PLAYER_CREATED, PLAYER_DELETED, SEAT_TOKEN

my_matches_result = result_union(
    "MyMatchesResult", MY_MATCHES_PAGE.annotation, PLAYER_FAILURES,
    "A page of the player's matches.",
)
create_player_result = result_union(
    "CreatePlayerResult", PLAYER_CREATED.annotation, (BadRequest, Unavailable),
    "A new guest, or why not.",
)
deleted_result = result_union(
    "DeletePlayerResult", PLAYER_DELETED.annotation, PLAYER_FAILURES,
    "The player, gone, or why not.",
)
renew_result = result_union(
    "RenewSeatTokenResult", SEAT_TOKEN.annotation, (*PLAYER_FAILURES, Conflict),
    "The seat's new token, or why not (`Conflict`: the match has not started, or was "
    "cancelled).",
)


def _players(ctx: Context) -> PlayerService:
    if ctx.players is None:
        raise ApiError.of("unauthorized", "Players are not served here.")
    return ctx.players


def _filters(status: MatchStatusFilter | None, your_turn: bool | None, cursor: str | None,
             limit: int) -> dict[str, Any]:
    return {"status": status.value if status is not None else None, "mine": bool(your_turn),
            "cursor": cursor, "limit": limit}


@strawberry.type
class PlayerQuery:
    @strawberry.field(
        description="The calling player's matches, newest created first; follow `nextCursor` "
        "(as `cursor`) until it is null. `status` and `yourTurn` filter on each match's "
        "record: a filtered page may be short while more follow."
    )
    async def my_matches(
        self, info: Info, status: MatchStatusFilter | None = None,
        your_turn: bool | None = None, cursor: str | None = None,
        limit: int = MY_MATCHES_DEFAULT,
    ) -> my_matches_result:  # type: ignore[valid-type]
        ctx = info.context
        filters = _filters(status, your_turn, cursor, limit)
        return await answer(
            PLAYER_FAILURES,
            lambda: _players(ctx).my_matches(ctx.credentials(), **filters),
            MY_MATCHES_PAGE.convert, ctx.lang,
        )

    @strawberry.field(description="One of the app's players' matches (needs the app's key).")
    async def app_player_matches(
        self, info: Info, player: strawberry.ID, status: MatchStatusFilter | None = None,
        your_turn: bool | None = None, cursor: str | None = None,
        limit: int = MY_MATCHES_DEFAULT,
    ) -> my_matches_result:  # type: ignore[valid-type]
        ctx = info.context
        filters = _filters(status, your_turn, cursor, limit)
        return await answer(
            PLAYER_FAILURES,
            lambda: _players(ctx).app_matches(ctx.credentials(), str(player), **filters),
            MY_MATCHES_PAGE.convert, ctx.lang,
        )


@strawberry.type
class PlayerMutation:
    @strawberry.mutation(
        description="A guest player: its token (`skp_…`) is shown only once. `appId`: the "
        "app it plays in (omitted: the default app)."
    )
    async def create_player(
        self, info: Info, name: str, app_id: str | None = None
    ) -> create_player_result:  # type: ignore[valid-type]
        ctx = info.context

        async def create() -> Any:
            try:
                request = CreatePlayerRequest(name=name, app_id=app_id)
            except ValidationError as error:
                first = error.errors(include_url=False, include_input=False)[0]
                where = ".".join(str(p) for p in first["loc"]) or "input"
                raise ApiError.of("malformed", f"{where}: {first['msg']}") from None
            await charge_guest(limits_of(ctx.request.app), ctx.request.scope)
            return await _players(ctx).create_guest(request)

        return await answer((BadRequest, Unavailable), create, PLAYER_CREATED.convert,
                            ctx.lang)

    @strawberry.mutation(description="The calling guest leaves for good (see DELETE /v1/me).")
    async def delete_me(self, info: Info) -> deleted_result:  # type: ignore[valid-type]
        ctx = info.context
        return await answer(PLAYER_FAILURES,
                            lambda: _players(ctx).delete_me(ctx.credentials()),
                            PLAYER_DELETED.convert, ctx.lang)

    @strawberry.mutation(description="One of the app's users leaves for good (app key).")
    async def delete_app_player(
        self, info: Info, user: str
    ) -> deleted_result:  # type: ignore[valid-type]
        ctx = info.context
        return await answer(PLAYER_FAILURES,
                            lambda: _players(ctx).delete_app_player(ctx.credentials(), user),
                            PLAYER_DELETED.convert, ctx.lang)

    @strawberry.mutation(
        description="A new token for a seat bound to a player: the seat's player recovers its "
        "own, the match's app key rotates any; the previous token stops working."
    )
    async def renew_seat_token(
        self, info: Info, match_id: strawberry.ID, seat: int
    ) -> renew_result:  # type: ignore[valid-type]
        ctx = info.context
        return await answer(
            PLAYER_FAILURES,
            lambda: _players(ctx).renew_seat_token(ctx.credentials(), str(match_id), seat),
            SEAT_TOKEN.convert, ctx.lang,
        )
