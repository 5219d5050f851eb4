"""``stream_seat``: who opens an event stream (``match_stream.py``) -- its seat token, or a
short-lived stream ticket (``createStreamTicket``, ``service.api.operations.matches``).

A browser's ``EventSource`` cannot send ``Authorization``: it opens
``/v1/matches/{id}/events?ticket=skt_...`` instead (``service.identity.stream_tickets``). The ticket
is a credential on the event stream only: anywhere else ``ticket`` is an unknown query
parameter, ignored like any other. Access logs never show it (``service.api.logs``).
"""

from __future__ import annotations

from starlette.requests import Request

from service.errors import ApiError
from service.i18n import T
from service.identity.callers import Credential
from service.limits.ticket_claims import TicketClaims

from .http import service_of, token_of

TICKET_PARAM = "ticket"


async def stream_seat(request: Request) -> tuple[Credential, int | None]:
    """Who opens the event stream: ``(token, None)`` for ``Authorization: Bearer``,
    ``(None, seat)`` for a valid ``?ticket=``, ``(None, None)`` for a spectator.

    400 ``malformed`` for both credentials at once (or two tickets), 401 ``unauthorized``
    for a bad ``Authorization`` header, 401 ``ticket_invalid`` for a bad ticket, 404 when
    the match does not exist."""
    tickets = request.query_params.getlist(TICKET_PARAM)
    if not tickets:
        return await token_of(request), None
    if "authorization" in request.headers:
        raise ApiError.of("malformed", "Send the seat token or a stream ticket, not both.")
    if len(tickets) > 1:
        raise ApiError.of("malformed", T("Give {name} once.", name=TICKET_PARAM))
    match_id = request.path_params["match_id"]
    seat = await service_of(request).seat_of_ticket(match_id, tickets[0])
    await claim_ticket(request, tickets[0])  # single-use (limits.ticket_claims)
    return None, seat


async def claim_ticket(request: Request, ticket: str) -> None:
    """Claim a verified stream or feed ticket for this stream: 401 ``ticket_invalid`` when
    a stream claimed it before."""
    claims: TicketClaims | None = getattr(request.app.state, "ticket_claims", None)
    settings = getattr(request.app.state, "settings", None)
    lifetime = max(int(getattr(settings, "stream_ticket_seconds", 60)),
                   int(getattr(settings, "queue_ticket_seconds", 60)))  # feed tickets' too
    if claims is not None:
        await claims.claim(ticket, lifetime)
