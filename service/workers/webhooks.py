"""The webhook worker: claims due deliveries from the store schedule ``webhooks`` and makes
one attempt at each (``WebhookService.deliver``), many at once.

Each delivery is its own schedule member, claimed with a lease
(``WebhookSettings.lease_seconds``): a worker killed mid-attempt leaves it to any worker once
the lease runs out. Attempts run concurrently (``concurrency``), at most ``per_endpoint`` at
a time per endpoint (the others of that endpoint go back to the schedule for a moment), so a
slow or failing endpoint holds a few slots at most and never delays another endpoint, and a
retrying event never delays a later one. ``skyline worker`` runs one next to the bot
worker; ``skyline serve`` on the embedded store runs one inside the server.

Between claims the worker waits until the schedule's next due time (``Outbox.next_due``),
at most ``idle_seconds``, and is woken earlier by a message stored in its process
(``WebhookService.queued``) or when it puts a claimed message back in the schedule itself (a
retry, a hold-back): the wait is then worked out again from the next due time, so a retry
due in 200 ms is attempted about 200 ms later, not after the idle wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from service.errors import ApiError
from service.notify import WebhookService
from service.store import StoreUnavailable

log = logging.getLogger("skyline.webhooks")

IDLE_SECONDS = 1.0
"""The longest wait between two looks at the schedule (for what other processes schedule
without waking this one)."""
RETRY_PAUSE = 1.0
HOLD_BACK_MS = 500
"""How far a delivery of a busy endpoint is put back."""


class WebhookWorker:
    def __init__(self, service: WebhookService, *, concurrency: int = 32,
                 per_endpoint: int = 4, idle_seconds: float = IDLE_SECONDS) -> None:
        self.service = service
        self.concurrency = max(1, concurrency)
        self.per_endpoint = max(1, per_endpoint)
        self.idle_seconds = idle_seconds
        self.attempts = 0
        """Attempts this worker finished (tests, metrics)."""
        self._stopping = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._busy: dict[str, int] = {}
        self._settled = asyncio.Event()
        """Set when this worker put a claimed message back in the schedule (a retry, a
        hold-back): it may be due sooner than the wait in progress ends."""

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        try:
            while not self._stopping.is_set():
                try:
                    claimed = await self._claim_some()
                except (ApiError, StoreUnavailable) as error:
                    log.warning("webhook worker: the store is not answering (%s)", error)
                    await self._pause(RETRY_PAUSE)
                    continue
                if not claimed:
                    await self._pause(await self._idle())
        finally:
            for task in list(self._tasks):
                task.cancel()
            for task in list(self._tasks):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _pause(self, seconds: float) -> None:
        """Wait ``seconds``, or less: until stopped, a message is stored here, or this
        worker settled a retry (one settled since the last wait: no wait)."""
        queued = self.service.queued
        waits = [asyncio.ensure_future(self._stopping.wait()),
                 asyncio.ensure_future(queued.wait()),
                 asyncio.ensure_future(self._settled.wait())]
        try:
            await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
        queued.clear()
        self._settled.clear()

    async def _idle(self) -> float:
        """Seconds until the next delivery is due (at most ``idle_seconds``)."""
        outbox = self.service.outbox
        due = await outbox.next_due()
        if due is None:
            return self.idle_seconds
        now = await outbox.now_ms()
        return min(self.idle_seconds, max(0.01, (due - now) / 1000))

    async def _claim_some(self) -> int:
        free = self.concurrency - len(self._tasks)
        if free <= 0:
            await asyncio.wait(set(self._tasks), return_when=asyncio.FIRST_COMPLETED)
            return 1
        lease = int(self.service.settings.lease_seconds * 1000)
        _, claimed = await self.service.outbox.claim(free, lease)
        for msg_id, claimed_ms in claimed:
            task = asyncio.create_task(self._one(msg_id, claimed_ms))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return len(claimed)

    async def _one(self, msg_id: str, claimed_ms: int) -> None:
        outbox = self.service.outbox
        endpoint = None
        try:
            loaded = await outbox.load(msg_id)
            endpoint = loaded[1].endpoint if loaded is not None else None
            if endpoint is not None and self._busy.get(endpoint, 0) >= self.per_endpoint:
                now = await outbox.now_ms()
                await outbox.settle(msg_id, claimed_ms, now + HOLD_BACK_MS)
                self._settled.set()
                endpoint = None
                return
            if endpoint is not None:
                self._busy[endpoint] = self._busy.get(endpoint, 0) + 1
            if await self.service.deliver(msg_id, claimed_ms) == "retrying":
                self._settled.set()
            self.attempts += 1
        except (ApiError, StoreUnavailable) as error:
            # The lease brings it back.
            log.warning("webhook %s: the store failed mid-delivery (%s)", msg_id, error)
        except Exception:
            log.exception("webhook %s: delivery failed unexpectedly", msg_id)
        finally:
            if endpoint is not None:
                left = self._busy.get(endpoint, 1) - 1
                if left:
                    self._busy[endpoint] = left
                else:
                    self._busy.pop(endpoint, None)
