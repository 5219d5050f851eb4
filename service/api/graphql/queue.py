"""Quick match in GraphQL: the same operations as REST's ``/v1/queue`` on the same
``QueueService`` (``service.queue``): ``enqueue``, ``leaveQueue`` (mutations, built per set of games
for the typed ``gameOptions``) and ``queueTicket`` (a query that long-polls with ``wait``).
The Query and Mutation types inherit these fields (``queries.py``, ``mutations.py``); the
ticket's type is generated from ``service.queue.models.QueueTicket``."""

from typing import Annotated, Any

import strawberry
from pydantic import ValidationError

from service.errors import ApiError
from service.i18n import T
from service.queue import QueueService, models
from service.queue.models import WAIT_MAX_SECONDS

from ..rate_limits import charge, limits_of, queue_quota
from .context import Context, Info
from .convert import Shape
from .results import PLAYER_FAILURES, answer, result_union
from .types.games import GameTypes, MalformedInput
from .types.wire import WIRE

WIRE.shape(models.TicketStatus, Shape(
    name="TicketStatus", description="Where a quick-match ticket stands.", upper_case=True))
WIRE.shape(models.QueueTicket, Shape(ids=("ticket", "match_id")))
QUEUE_TICKET = WIRE.output(models.QueueTicket)
QueueTicket: Any = QUEUE_TICKET.annotation


ticket_result = result_union("QueueTicketResult", QueueTicket, PLAYER_FAILURES,
                             "The caller's quick-match ticket, or why not.")


def _queue(ctx: Context) -> QueueService:
    queue: QueueService | None = getattr(ctx.request.app.state, "queue_service", None)
    if queue is None:
        raise ApiError.of("unauthorized", "Quick match is not served here.")
    return queue


@strawberry.type
class QueueQuery:
    @strawberry.field(
        description="The caller's quick-match ticket; with `wait` (0 to 60 seconds), a "
        "waiting ticket's answer comes when it is matched or the wait ends. Each read keeps "
        "the ticket alive (REST: GET /v1/queue/{ticket}?wait=)."
    )
    async def queue_ticket(
        self, info: Info, ticket: strawberry.ID, wait: int = 0,
    ) -> ticket_result:  # type: ignore[valid-type]
        ctx = info.context

        async def poll() -> Any:
            if not 0 <= wait <= WAIT_MAX_SECONDS:
                raise ApiError.of("malformed", T("wait must be 0 to {most} seconds.",
                                                 most=WAIT_MAX_SECONDS))
            return await _queue(ctx).poll(ctx.credentials(), str(ticket), wait)

        return await answer(PLAYER_FAILURES, poll, QUEUE_TICKET.convert, ctx.lang)


def build_queue_mutation(games: GameTypes) -> type:
    """``enqueue`` and ``leaveQueue``; ``enqueue`` takes the game's options typed, as
    ``createMatch`` does (``gameOptions: MatchOptionsInput``)."""
    options_input = games.options_input

    @strawberry.type
    class QueueMutation:
        @strawberry.mutation(
            description="Quick match: queue the calling player for `game` with `players` "
            "seats and `gameOptions` (typed per game, as createMatch's; omitted: every "
            "default). Players are matched on the options after defaults. A match is created "
            "as soon as enough compatible players wait (each gets `match_started` in its "
            "feed). The player's ticket in that queue is answered when it holds one already. "
            "Only players queue (Forbidden for a seat token or an app key). Charged to the "
            "`create` budget (REST: POST /v1/queue)."
        )
        async def enqueue(
            self, info: Info, game: str, players: int,
            game_options: Annotated[
                options_input | None,  # type: ignore[valid-type]
                strawberry.argument(
                    description="The game's options, typed: one field, named after `game` "
                    "(`{ny1901: {expert: true}}`); omitted: every default."
                ),
            ] = None,
            fill_with_bots_after_seconds: int | None = None,
        ) -> ticket_result:  # type: ignore[valid-type]
            ctx = info.context

            async def queue() -> Any:
                fields: dict[str, Any] = {"game": game, "players": players}
                if game_options is not None:
                    try:
                        named, typed = games.decode_options(game_options)
                    except MalformedInput as error:
                        raise ApiError.of("malformed", f"gameOptions: {error}") from None
                    if named != game:
                        raise ApiError.of(
                            "malformed", f"gameOptions are for {named}, not for {game}."
                        )
                    fields["options"] = typed
                if fill_with_bots_after_seconds is not None:
                    fields["fillWithBotsAfterSeconds"] = fill_with_bots_after_seconds
                try:
                    request = models.EnqueueRequest.model_validate(fields)
                except ValidationError as error:
                    first = error.errors(include_url=False, include_input=False)[0]
                    where = ".".join(str(p) for p in first["loc"]) or "input"
                    raise ApiError.of("malformed", f"{where}: {first['msg']}") from None
                limits = limits_of(ctx.request.app)
                await charge(limits, ctx.request.scope, "create")
                quota = await queue_quota(limits, ctx.credentials(), ctx.request.scope)
                ticket, _ = await _queue(ctx).enqueue(ctx.credentials(), request, quota=quota)
                return ticket

            return await answer(PLAYER_FAILURES, queue, QUEUE_TICKET.convert, ctx.lang)

        @strawberry.mutation(
            description="Leave the queue: the ticket is `LEFT` (one already matched stays "
            "`MATCHED`). REST: DELETE /v1/queue/{ticket}."
        )
        async def leave_queue(
            self, info: Info, ticket: strawberry.ID,
        ) -> ticket_result:  # type: ignore[valid-type]
            ctx = info.context
            return await answer(
                PLAYER_FAILURES, lambda: _queue(ctx).leave(ctx.credentials(), str(ticket)),
                QUEUE_TICKET.convert, ctx.lang,
            )

    return QueueMutation


__all__ = ["QueueQuery", "build_queue_mutation"]
