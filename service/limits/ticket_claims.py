"""Stream and feed tickets are single-use (issue 31, item 12: a ticket was reusable within
its minute, so one leaked from a URL -- a proxy log, a browser's history -- opened streams
until it expired).

The first stream a ticket opens claims it: an atomic count of the ticket's digest (never
the ticket itself) with an expiry a little past the ticket's own lifetime, in the counting
storage every replica shares (the store's Redis; this process's memory on the embedded
store, which is one process). A ticket counted before is refused (401 ``ticket_invalid``).
When that storage fails the stream is refused too (503 ``store_unavailable``): a ticket is
a credential, and a check that cannot be made does not pass.
"""

from __future__ import annotations

import hashlib

from service.errors import ApiError
from service.store.counting import close_counting, counting_storage

KEY_PREFIX = "tickets:"
MAX_CONNECTIONS = 4
"""Redis connections the ticket claims of one process use at most (per node on a cluster)."""
SLACK_SECONDS = 5
"""Kept this much longer than the ticket lives (clocks of replicas differ a little)."""


class TicketClaims:
    def __init__(self, uri: str, *, key_prefix: str = "") -> None:
        self.storage = counting_storage(uri, key_prefix=f"{key_prefix}{KEY_PREFIX}",
                                        what="tickets", max_connections=MAX_CONNECTIONS)

    async def claim(self, ticket: str, lifetime: int) -> None:
        """Claim ``ticket`` (accepted for ``lifetime`` seconds): 401 ``ticket_invalid`` when
        it was claimed before."""
        digest = hashlib.sha256(ticket.encode("utf-8", "surrogatepass")).hexdigest()[:40]
        try:
            uses = await self.storage.incr(digest, lifetime + SLACK_SECONDS)
        except Exception:
            raise ApiError.of("store_unavailable", "The store is not answering; retry shortly.",
                              retryAfter=1) from None
        if uses > 1:
            raise ApiError.of(
                "ticket_invalid",
                "The stream ticket was used already: fetch a new one for each connection.",
            )

    async def aclose(self) -> None:
        """Close the storage's connections (Redis)."""
        await close_counting(self.storage, "ticket claims")
