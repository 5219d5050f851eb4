"""Quick match: ``POST /v1/queue`` queues the calling player, ``GET /v1/queue/{ticket}``
reads (long-polls) its ticket, ``DELETE /v1/queue/{ticket}`` leaves (``service.lobby``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from service.errors import ApiError
from service.i18n import T
from service.lobby import QueueService
from service.lobby.models import WAIT_MAX_SECONDS, EnqueueRequest

from ..rate_limits import limits_of, queue_quota
from .http import ascii_int, read_body, token_of

NO_STORE = {"Cache-Control": "no-store"}


def queue_of(request: Request) -> QueueService:
    queue: QueueService = request.app.state.queue_service
    return queue


def _wait(request: Request) -> int:
    values = request.query_params.getlist("wait")
    if not values:
        return 0
    number = ascii_int(values[0], 2) if len(values) == 1 else None
    if number is None or number > WAIT_MAX_SECONDS:
        raise ApiError.of("malformed", T("wait must be 0 to {most} seconds, given once.",
                                         most=WAIT_MAX_SECONDS))
    return number


async def enqueue(request: Request) -> Response:
    caller = await token_of(request)
    body = await read_body(request, EnqueueRequest)
    quota = await queue_quota(limits_of(request.app), caller, request.scope)
    ticket, created = await queue_of(request).enqueue(caller, body, quota=quota)
    return JSONResponse(ticket.to_json(), status_code=201 if created else 200,
                        headers=NO_STORE)


async def queue_ticket(request: Request) -> Response:
    """``/v1/queue/{ticket}``: GET (long-poll) or DELETE (leave)."""
    caller = await token_of(request)
    ticket = request.path_params["ticket"]
    if request.method == "DELETE":
        answer = await queue_of(request).leave(caller, ticket)
    else:
        wait = _wait(request)
        answer = await queue_of(request).poll(caller, ticket, wait)
    return JSONResponse(answer.to_json(), headers=NO_STORE)
