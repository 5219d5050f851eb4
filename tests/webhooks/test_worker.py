"""The worker's waits: between claims it waits until the schedule's next due time, and a
retry it settles itself wakes it, so a retry due soon is not held up by the idle wait."""

from __future__ import annotations

import asyncio
from typing import Any

from service.store import MatchStore
from service.webhooks import WebhookSettings

from .conftest import FAST, Receiver, Stack, until

IDLE = 60.0
"""An idle wait far beyond the test's patience (``until``: 20 s): only a wake-up (or the
next due time) can bring the second attempt in time."""


async def test_a_retry_due_soon_is_attempted_without_waiting_the_idle_interval(
        store: MatchStore, receiver: Receiver) -> None:
    # A tiny backoff, no jitter; a lease far beyond the test too, so that the claimed
    # message's lease is not what ends the worker's wait.
    settings = WebhookSettings(**{**FAST.__dict__, "backoff_first": 0.2, "backoff_max": 0.2,
                                  "jitter": 0.0, "lease_seconds": IDLE})
    stack = Stack(store, settings)
    try:
        def plan(path: str, count: int, body: dict[str, Any]) -> tuple[str, float]:
            return ("fail", 0.0) if count == 0 else ("ok", 0.0)

        receiver.plan = plan
        app = await stack.app()
        webhook = await stack.endpoint(app, receiver, "/soon")
        stack.start_worker(idle_seconds=IDLE)
        pinged = (await stack.hooks.ping(app, webhook)).event_id
        await until(lambda: receiver.ids("/soon") == {pinged}, "the retry, well within the "
                    "idle interval")
        assert receiver.requests["/soon"] == 2 and receiver.bad == []

        # The log is written after the receiver answers: wait for the second entry.
        async with asyncio.timeout(20):
            while len((page := await stack.hooks.deliveries(app, webhook, None, 10)).items) < 2:
                await asyncio.sleep(0.02)
        delivered, retried = page.items
        assert (retried.attempt, retried.outcome, delivered.attempt, delivered.outcome) == (
            1, "retrying", 2, "delivered")
        # Not early either: the second attempt was made once the retry was due (both times
        # are the store's clock).
        assert retried.next_retry_at is not None and delivered.at is not None
        assert delivered.at >= retried.next_retry_at
    finally:
        await stack.close()
