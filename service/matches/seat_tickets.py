"""Stream tickets for a match's seats (``service.identity.stream_tickets``): issued for a seat's
token, checked when an event stream opens with one."""

from __future__ import annotations

from datetime import UTC, datetime

from service.errors import ApiError
from service.identity import checked, stream_tickets
from service.identity.callers import Credential

from .models import StreamTicket
from .storage import StoredMatches
from .views import minted_by_app, seat_of

DEFAULT_TICKET_SECONDS = 60
"""How long a new stream ticket is accepted (``--stream-ticket-seconds``)."""


class StreamTickets:
    def __init__(self, storage: StoredMatches, lifetime: int = DEFAULT_TICKET_SECONDS) -> None:
        self.storage = storage
        self.lifetime = lifetime

    async def issue_stream_ticket(self, match_id: str, token: Credential) -> StreamTicket:
        """A ticket for the seat ``token`` holds: 401 ``unauthorized`` without a token, or
        with one that is no seat of the match (a spectator needs no ticket)."""
        if token is None:
            raise ApiError.of(
                "unauthorized",
                "A stream ticket is for a seat: send the seat's token. Spectators need no "
                "ticket: open the event stream without one.",
            )
        _, record = await self.storage.load(match_id)
        seat = seat_of(record, token, required=True)
        assert seat is not None
        key = record.tokens[seat]
        assert key is not None  # seat_of matched it
        issued = stream_tickets.issue(key, match_id, seat, self.storage.clock(), self.lifetime)
        return StreamTicket(
            ticket=issued.ticket, expires_at=datetime.fromtimestamp(issued.expires, UTC)
        )

    async def seat_of_ticket(self, match_id: str, ticket: str) -> int:
        """The seat ``ticket`` was issued to for ``match_id``; 401 ``ticket_invalid`` when
        it is expired, tampered with, for another match, or its seat's token is gone."""
        _, record = await self.storage.load(match_id)
        try:
            seat = stream_tickets.verify(
                ticket, match_id, record.tokens, self.storage.clock(), self.lifetime
            )
            checked.note(ticket_seat_key(match_id, seat), own=minted_by_app(record))
            return seat
        except stream_tickets.TicketRefused as refused:
            if refused.reason == "expired":
                raise ApiError.of(
                    "ticket_invalid",
                    "The stream ticket has expired: fetch a new one for each connection.",
                ) from None
            raise ApiError.of(
                "ticket_invalid",
                "The stream ticket is not valid for this match: fetch a new one with the "
                "seat's token.",
            ) from None


def ticket_seat_key(match_id: str, seat: int) -> str:
    """What a verified stream ticket is noted as (``service.identity.checked``): its seat."""
    return f"seat:{match_id}:{seat}"
