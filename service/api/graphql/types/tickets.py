"""``StreamTicket``: a seat's short-lived credential for the REST event stream."""

from __future__ import annotations

import strawberry

from service.matches import models


@strawberry.type(
    name="StreamTicket",
    description="Open the REST event stream (`GET /v1/matches/{id}/events?ticket=...`) as "
    "the seat, without an Authorization header (a browser's EventSource cannot send one). "
    "Accepted on the event stream only, for this match, until `expiresAt`, and only while "
    "the seat's token works. Fetch one per connection.",
)
class StreamTicketType:
    ticket: str
    expires_at: str = strawberry.field(
        description="RFC 3339, UTC (`2026-12-01T10:00:00Z`): refused from this moment on."
    )

    @classmethod
    def from_model(cls, ticket: models.StreamTicket) -> StreamTicketType:
        wire = ticket.to_json()
        return cls(ticket=ticket.ticket, expires_at=str(wire["expiresAt"]))
