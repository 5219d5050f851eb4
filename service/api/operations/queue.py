"""Quick match (``service.queue``): the calling player queued (``enqueue``), its ticket read
and long-polled (``getQueueTicket``), the queue left (``leaveQueue``)."""

from __future__ import annotations

from starlette.requests import Request

from service.errors import ApiError
from service.i18n import T
from service.queue.models import WAIT_MAX_SECONDS, EnqueueRequest, QueueTicket

from ..rate_limits import limits_of, queue_quota
from ..rest.http import ascii_int
from . import codes
from .base import (
    NO_STORE,
    PLAYER_SECURITY,
    UNCHARGED,
    Answered,
    Context,
    Operation,
    Param,
    Reply,
    mutation,
    query,
)

TICKET = Param("ticket", "path", {"type": "string", "minLength": 1, "maxLength": 64},
               "The ticket (`enqueue`'s answer).")


def wait_param(request: Request, name: str) -> int:
    """Seconds to long-poll: 0 to ``WAIT_MAX_SECONDS``, given at most once (0 absent)."""
    values = request.query_params.getlist(name)
    if not values:
        return 0
    number = ascii_int(values[0], 2) if len(values) == 1 else None
    if number is None or number > WAIT_MAX_SECONDS:
        raise ApiError.of("malformed", T("wait must be 0 to {most} seconds, given once.",
                                         most=WAIT_MAX_SECONDS))
    return number


async def enqueue(context: Context) -> Answered:
    """The caller's ticket: 201 new, 200 the one it already holds in that queue."""
    request = context.request
    quota = await queue_quota(limits_of(request.app), context.caller, request.scope)
    ticket, created = await context.state.queue_service.enqueue(context.caller, context.body,
                                                                quota=quota)
    return Answered(ticket, 201 if created else 200)


TYPED_OPTIONS = (
    "typed `gameOptions` per game (as createMatch), the `create` charge and the queue "
    "quota"
)
WAIT_CHECKED = (
    "checks `wait` itself (REST's parser reads it from the query string)"
)


OPERATIONS = (
    Operation(
        id="enqueue", method="POST", path="/v1/queue", tag="lobby",
        summary="Quick match: queue the calling player.",
        description="Puts the player in the queue of its app for `game`, `players` seats, "
        "the current rules version and `options` after defaults; as soon as enough "
        "compatible players wait, one match is created with them (each gets `match_started` "
        "in its feed). 201 with a new ticket; 200 with the ticket the player already holds "
        "in that queue (one per player per queue). Only players queue (a seat token or an "
        "app key: 403 `forbidden`). Charged to the `create` budget. See docs/lobby.md.",
        codes=(*codes.BODY, *codes.CREDENTIALS, "forbidden", "unknown_game",
               "bad_player_count", "bad_options", "quota_exceeded"),
        budget="create", security=PLAYER_SECURITY,
        graphql=mutation(hand_written=TYPED_OPTIONS), body=EnqueueRequest,
        status=201, reply=Reply(QueueTicket, "Queued (possibly matched at once)."),
        more={"200": Reply(QueueTicket, "The ticket the player already holds.").document()},
        call=enqueue, headers=NO_STORE,
    ),
    Operation(
        id="getQueueTicket", method="GET", path="/v1/queue/{ticket}", tag="lobby",
        summary="A quick-match ticket; long-polls while it waits.",
        description="With `wait` (seconds, 0 to 60), a waiting ticket's answer comes when it "
        "is matched or the wait ends, whichever is first. Each poll keeps the ticket alive: "
        "one not polled for `pollWithinSeconds` expires. Another player's ticket: 404 "
        "`ticket_not_found`.",
        codes=(*codes.CREDENTIALS, "malformed", "forbidden", "ticket_not_found"),
        budget="read", security=PLAYER_SECURITY,
        graphql=query("queueTicket", hand_written=WAIT_CHECKED),
        params=(TICKET, Param("wait", "query", {"type": "integer", "minimum": 0,
                                                "maximum": WAIT_MAX_SECONDS, "default": 0},
                              "Seconds to wait for a match (ASCII digits).",
                              parse=wait_param)),
        reply=Reply(QueueTicket, "The ticket."),
        call=lambda c: c.state.queue_service.poll(c.caller, c.path["ticket"], c.query["wait"]),
        headers=NO_STORE,
    ),
    Operation(
        id="leaveQueue", method="DELETE", path="/v1/queue/{ticket}", tag="lobby",
        summary="Leave the queue.",
        description="The ticket is `left`; a ticket already matched stays `matched` (the "
        "answer says so).",
        codes=(*codes.CREDENTIALS, "forbidden", "ticket_not_found"), budget="act",
        security=PLAYER_SECURITY, graphql=mutation(hand_written=UNCHARGED), params=(TICKET,),
        reply=Reply(QueueTicket, "The ticket after."),
        call=lambda c: c.state.queue_service.leave(c.caller, c.path["ticket"]),
        headers=NO_STORE,
    ),
)
