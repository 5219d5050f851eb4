"""The webhook worker: takes turns among the endpoints' lanes of due deliveries (the store
schedule ``whlanes``, ``service/webhooks/outbox.py``) and makes one attempt at each claimed
delivery (``WebhookService.deliver``), many at once.

Isolation (issue 31: eight endpoints of one app answering a byte every 5 s held all 32 slots,
and another app's ping waited over a minute):

- **Turns.** Each round claims the lanes that waited longest (one per endpoint with a
  delivery due) and takes a few deliveries of each; a lane served goes behind every lane
  that was waiting before it. An app's backlog, however long, is one lane per endpoint in
  that line, so another app's delivery waits at most a turn, never behind the backlog.
- **Caps.** At most ``per_endpoint`` attempts at a time to one endpoint and ``per_app`` to
  all of one app's endpoints (of ``concurrency`` in all). A lane whose endpoint or app is at
  its cap is put back ``HOLD_BACK_MS`` later (only the lane: its deliveries keep their
  place), and brought forward as soon as one of its attempts here ends.
- **Deadlines.** Every attempt ends within the connect and read timeouts together
  (``WebhookSettings.attempt_seconds``), however slowly the receiver answers, so a slot held
  by a slow endpoint comes back.

Each delivery is claimed with a lease (``WebhookSettings.lease_seconds``): a worker killed
mid-attempt leaves it to any worker once the lease runs out; a retrying event never delays a
later one. ``skyline worker`` runs one next to the bot worker; ``skyline serve`` on the
embedded store runs one inside the server.

Between claims the worker waits until the next lane is due (``Outbox.next_due``), at most
``idle_seconds``, and is woken earlier by a message stored in its process
(``WebhookService.queued``) or when it puts a claimed delivery or lane back in the schedule
itself (a retry, a hold-back): the wait is then worked out again from the next due time, so
a retry due in 200 ms is attempted about 200 ms later, not after the idle wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter

from service.errors import ApiError
from service.store import StoreUnavailable
from service.webhooks import WebhookService
from service.webhooks.outbox import lane_of

log = logging.getLogger("skyline.webhooks")

IDLE_SECONDS = 1.0
"""The longest wait between two looks at the schedule (for what other processes schedule
without waking this one)."""
RETRY_PAUSE = 1.0
HOLD_BACK_MS = 500
"""How far the lane of an endpoint (or app) at its cap is put back."""
PEAKS_KEPT = 10_000
"""Endpoints whose peaks a long-running worker remembers (then it starts again)."""
LEGACY_BATCH = 100
"""Deliveries an older build scheduled, moved to their lanes per look (``adopt_legacy``)."""


class WebhookWorker:
    def __init__(self, service: WebhookService, *, concurrency: int = 32,
                 per_endpoint: int = 4, per_app: int = 8,
                 idle_seconds: float = IDLE_SECONDS) -> None:
        self.service = service
        self.concurrency = max(1, concurrency)
        self.per_endpoint = max(1, per_endpoint)
        self.per_app = max(1, per_app)
        self.idle_seconds = idle_seconds
        self.attempts = 0
        """Attempts this worker finished (tests, metrics)."""
        self.peak_per_app: Counter[str] = Counter()
        """The most attempts this worker made at once to each app (tests, benchmarks)."""
        self.peak_per_endpoint: Counter[str] = Counter()
        self._stopping = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._busy_endpoints: Counter[str] = Counter()
        self._busy_apps: Counter[str] = Counter()
        self._held: set[str] = set()
        """Lanes this worker put back because their endpoint or app was at its cap."""
        self._settled = asyncio.Event()
        """Set when this worker put a claimed delivery or lane back in the schedule (a
        retry, a hold-back): it may be due sooner than the wait in progress ends."""
        self._legacy_checked = False

    def stop(self) -> None:
        self._stopping.set()

    def busy(self, app_id: str) -> int:
        """Attempts to ``app_id``'s endpoints under way here now."""
        return self._busy_apps[app_id]

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
                    await self._adopt_legacy()
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
        """Seconds until the next lane is due (at most ``idle_seconds``)."""
        outbox = self.service.outbox
        due = await outbox.next_due()
        if due is None:
            return self.idle_seconds
        now = await outbox.now_ms()
        return min(self.idle_seconds, max(0.01, (due - now) / 1000))

    async def _adopt_legacy(self) -> None:
        """Deliveries an older build scheduled (a rolling upgrade) join their lanes: looked
        for when the worker is idle, until none is left."""
        if self._legacy_checked:
            return
        lease = int(self.service.settings.lease_seconds * 1000)
        if await self.service.outbox.adopt_legacy(LEGACY_BATCH, lease) < LEGACY_BATCH:
            self._legacy_checked = True

    def _room(self, app: str, endpoint: str) -> int:
        return min(self.per_endpoint - self._busy_endpoints[endpoint],
                   self.per_app - self._busy_apps[app])

    async def _claim_some(self) -> int:
        """One round of turns: how many lanes were claimed (0: none was due)."""
        free = self.concurrency - len(self._tasks)
        if free <= 0:
            await asyncio.wait(set(self._tasks), return_when=asyncio.FIRST_COMPLETED)
            return 1
        outbox = self.service.outbox
        lease = int(self.service.settings.lease_seconds * 1000)
        now, lanes = await outbox.claim_lanes(free, lease)
        for member, lane_claim in lanes:
            app, endpoint = lane_of(member)
            room = self._room(app, endpoint)
            if room <= 0:  # at its cap: the lane waits, its deliveries keep their place
                self._held.add(member)
                await outbox.settle_lane(member, lane_claim, now + HOLD_BACK_MS)
                self._settled.set()
                continue
            if free > 0:
                _, taken = await outbox.claim(endpoint, min(room, free), lease)
                for msg_id, claimed_ms in taken:
                    self._start(app, endpoint, msg_id, claimed_ms)
                free -= len(taken)
            # Its next turn comes after every lane that was due when it was claimed.
            await outbox.settle_lane(member, lane_claim, now + 1)
        return len(lanes)

    def _start(self, app: str, endpoint: str, msg_id: str, claimed_ms: int) -> None:
        if len(self.peak_per_endpoint) > PEAKS_KEPT:  # endpoints come and go
            self.peak_per_endpoint.clear()
            self.peak_per_app.clear()
        self._busy_endpoints[endpoint] += 1
        self._busy_apps[app] += 1
        self.peak_per_endpoint[endpoint] = max(self.peak_per_endpoint[endpoint],
                                               self._busy_endpoints[endpoint])
        self.peak_per_app[app] = max(self.peak_per_app[app], self._busy_apps[app])
        task = asyncio.create_task(self._one(app, endpoint, msg_id, claimed_ms))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _one(self, app: str, endpoint: str, msg_id: str, claimed_ms: int) -> None:
        try:
            if await self.service.deliver(endpoint, msg_id, claimed_ms) == "retrying":
                self._settled.set()
            self.attempts += 1
        except (ApiError, StoreUnavailable) as error:
            # The lease brings it back.
            log.warning("webhook %s: the store failed mid-delivery (%s)", msg_id, error)
        except Exception:
            log.exception("webhook %s: delivery failed unexpectedly", msg_id)
        finally:
            self._busy_endpoints[endpoint] -= 1
            self._busy_apps[app] -= 1
            if not self._busy_endpoints[endpoint]:
                del self._busy_endpoints[endpoint]
            if not self._busy_apps[app]:
                del self._busy_apps[app]
            await self._wake_held(app)

    async def _wake_held(self, app: str) -> None:
        """Lanes of ``app`` this worker held back come due now that a slot of the app is
        free (their own endpoint's too, if it is one of them)."""
        woken = [m for m in self._held if lane_of(m)[0] == app
                 and self._room(app, lane_of(m)[1]) > 0]
        if not woken:
            return
        outbox = self.service.outbox
        try:
            now = await outbox.now_ms()
            for member in woken:
                self._held.discard(member)
                await outbox.wake_lane(member, now)
        except (ApiError, StoreUnavailable) as error:
            log.warning("webhook worker: could not wake held lanes (%s)", error)
            return
        self._settled.set()

