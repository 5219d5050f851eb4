"""The guest worker: claims guests that came due in the store schedule ``guests`` and judges
them (``service.players.expiry``: idle ones without an unfinished match or a history worth
keeping leave for good). ``skyline worker`` runs one next to the bot worker; ``skyline
serve`` on the embedded store runs one inside the server. Claims are leased: a worker
killed mid-way leaves the guest to any worker once the lease runs out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from service.errors import ApiError
from service.players.expiry import GUESTS, GuestExpiry
from service.store import StoreUnavailable

log = logging.getLogger("skyline.guests")

IDLE_SECONDS = 30.0
"""The longest wait between two looks at the schedule (expiry is a matter of days)."""
LEASE_SECONDS = 120.0
BATCH = 32


class GuestWorker:
    def __init__(self, expiry: GuestExpiry, *, idle_seconds: float = IDLE_SECONDS,
                 lease_seconds: float = LEASE_SECONDS) -> None:
        self.expiry = expiry
        self.idle_seconds = idle_seconds
        self.lease_ms = int(lease_seconds * 1000)
        self.expired = 0
        """Guests this worker expired (tests, metrics)."""
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        if self.expiry.ttl <= 0:
            return  # guests never expire
        while not self._stopping.is_set():
            try:
                claimed = await self.once()
            except (ApiError, StoreUnavailable) as error:
                log.warning("guest worker: the store is not answering (%s)", error)
                claimed = 0
            if claimed < BATCH:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), self.idle_seconds)

    async def once(self) -> int:
        """Judge the guests due now (at most ``BATCH``); how many were claimed."""
        now, claimed = await self.expiry.schedules.schedule_claim(GUESTS, BATCH,
                                                                 self.lease_ms)
        for player_id, lease in claimed:
            try:
                outcome = await self.expiry.judge(player_id, lease, now)
            except (ApiError, StoreUnavailable) as error:
                log.warning("guest %s: not judged (%s); the lease brings it back",
                            player_id, error)
                continue
            if outcome == "expired":
                self.expired += 1
        return len(claimed)
