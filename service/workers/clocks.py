"""The clock worker: claims matches whose deadline passed from the store schedule
``deadlines`` and fires them (``service.matches.timeouts``), several at once.

Each claim leases the match for ``lease_seconds``: a worker killed mid-way leaves it to any
worker once the lease runs out, and the timeout's compare-and-set makes a second firing of
the same deadline lose. ``skyline worker`` runs one next to the bot worker; ``skyline serve``
on the embedded store runs one inside the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from service.errors import ApiError
from service.matches.clocking import DEADLINES
from service.matches.timeouts import Fired, Timeouts
from service.store import StoreUnavailable

log = logging.getLogger("skyline.clocks")

IDLE_SECONDS = 0.25
"""The longest wait between two looks at the schedule: how late a deadline set by another
replica may be noticed (a deadline is seconds at least; one set here wakes the worker)."""
RETRY_PAUSE = 1.0
LEASE_SECONDS = 30.0


class ClockWorker:
    def __init__(self, timeouts: Timeouts, *, concurrency: int = 16,
                 idle_seconds: float = IDLE_SECONDS,
                 lease_seconds: float = LEASE_SECONDS) -> None:
        self.timeouts = timeouts
        self.concurrency = max(1, concurrency)
        self.idle_seconds = idle_seconds
        self.lease_ms = int(lease_seconds * 1000)
        self.fired: list[Fired] = []
        """The timeouts this worker stored, newest last (tests, metrics; the last 1,000)."""
        self.count = 0
        """How many timeouts this worker stored."""
        self._stopping = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        schedules = self.timeouts.storage.schedule()
        try:
            while not self._stopping.is_set():
                try:
                    free = self.concurrency - len(self._tasks)
                    if free <= 0:
                        await asyncio.wait(set(self._tasks),
                                           return_when=asyncio.FIRST_COMPLETED)
                        continue
                    now, claimed = await schedules.schedule_claim(DEADLINES, free,
                                                                  self.lease_ms)
                    for match_id, lease in claimed:
                        task = asyncio.create_task(self._one(match_id, lease, now))
                        self._tasks.add(task)
                        task.add_done_callback(self._tasks.discard)
                    if not claimed:
                        due = await schedules.schedule_next(DEADLINES)
                        wait = self.idle_seconds if due is None else min(
                            self.idle_seconds, max(0.005, (due - now) / 1000))
                        await self._pause(wait)
                except (ApiError, StoreUnavailable) as error:
                    log.warning("clock worker: the store is not answering (%s)", error)
                    await self._pause(RETRY_PAUSE)
        finally:
            for task in list(self._tasks):
                task.cancel()
            for task in list(self._tasks):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    async def _one(self, match_id: str, lease: int, now: int) -> None:
        try:
            fired = await self.timeouts.fire(match_id, lease, now)
        except (ApiError, StoreUnavailable) as error:
            log.warning("match %s: could not fire its deadline (%s); the lease brings it "
                        "back", match_id, error)
            return
        except Exception:
            log.exception("match %s: firing its deadline failed unexpectedly", match_id)
            return
        self.count += len(fired)
        self.fired.extend(fired)
        del self.fired[:-1000]
